"""Bolt & Blade options (issue 9): what a combatant may do now, each with its command.

Property tests over many states of AI fights (the demo and an armoury arena
with cover, difficult ground, smoke, heavy weapons, flamers, krak and frag
grenades, knives in reach): every listed command is accepted by ``decide``,
unlisted ones sampled next to them are refused, the hit chances are exact
(brute force over the d20 faces, and through the engine's own rolls), a move
by destination walks the listed path and meets the listed threats.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from fractions import Fraction
from itertools import product
from typing import Any

import msgspec
import pytest

from firelane.engine.wording import combatant_names, with_names
from firelane.engine.core import SEQUENCER, Rejected
from firelane.engine.dice import FixedDice, SeededDice
from firelane.engine.seats import ENGINE_SEAT
from firelane.engine.simulate import next_ai_command, run_headless, window_answers
from firelane.engine.state import copy_state
from firelane.engine.systems.bolt_and_blade import SYSTEM, BoltAndBladeState, demo_setup
from firelane.engine.systems.bolt_and_blade import options as bb_options
from firelane.engine.systems.bolt_and_blade.combat import plan_attack, plan_hit_chance
from firelane.engine.systems.bolt_and_blade.rules import d20_mode
from firelane.events import codec
from firelane.engine.systems.bolt_and_blade.area_schemas import BBThrow, BBZoneCreated
from firelane.engine.systems.bolt_and_blade.schemas import BBAttack, BBMove, BBOverwatch
from firelane.events.options_schemas import CombatantOptions, SeatOptions
from firelane.events.schemas import (
    AttackResolved,
    ClaimReaction,
    CommandRejected,
    CoverFeature,
    Moved,
    PassReaction,
    ReactionWindowOpened,
    StartEncounter,
)

from .helpers import act, arena, fighter, knife_only, sheet, start

UNION = codec.command_union(SYSTEM.command_types)


def command_of(body: dict[str, Any], command_id: str = "opt") -> Any:
    return msgspec.convert({**body, "command_id": command_id}, UNION)


def decided(state: BoltAndBladeState, body: dict[str, Any], seed: bytes = b"d" * 32) -> list[Any]:
    """decide the command (raises Rejected if it is refused)."""
    return SYSTEM.decide(state, command_of(body), SeededDice(seed, state.branch_version))


def refused(state: BoltAndBladeState, body: dict[str, Any]) -> str:
    with pytest.raises(Rejected) as caught:
        decided(state, body)
    return caught.value.reason


def listed(options: CombatantOptions) -> list[dict[str, Any]]:
    bodies = [m.command for m in options.moves] + [a.command for a in options.attacks]
    bodies += [c.command for a in options.actions for c in a.choices]
    if options.end_turn is not None:
        bodies.append(options.end_turn)
    if options.window is not None:
        bodies.append(options.window.pass_command)
        bodies += [c.command for r in options.window.reactions for c in r.choices]
    return bodies


# ---------------------------------------------------------------- states to test in


def armoury() -> Any:
    """Red and blue with every kind of wargear the data has, on a map with walls,
    directional, heavy and tall cover, and difficult ground; a knife fighter
    starts within reach of an enemy."""
    walls = [(11, y) for y in (3, 4, 5)] + [(12, 12), (13, 12)]
    cover = [
        CoverFeature(x=6, y=6, level="heavy", facing=[(1, 0)]),
        CoverFeature(x=6, y=9, level="light", facing=[(1, 0), (1, 1)]),
        CoverFeature(x=16, y=7, level="heavy_tall", facing=[(-1, 0)]),
        CoverFeature(x=15, y=10, level="light", facing=[]),
        CoverFeature(x=9, y=12, level="heavy", facing=[(0, -1)]),
    ]
    red = [
        fighter("sgt", "red", (3, 6), **sheet(weapons=["bolt pistol", "chainsword", "frag grenade", "smoke grenade"], ready_weapon="bolt pistol")),
        fighter("gunner", "red", (4, 9), **sheet(weapons=["heavy stubber", "laspistol", "combat knife"], ready_weapon="heavy stubber")),
        fighter("trooper", "red", (5, 3), **sheet(weapons=["lasgun", "combat knife", "krak grenade"])),
        fighter("blade", "red", (13, 8), **knife_only()),
    ]
    blue = [
        fighter("burner", "blue", (14, 8), **sheet(weapons=["flamer", "autogun", "cultist blade"], ready_weapon="flamer")),
        fighter("champion", "blue", (19, 6), **sheet(weapons=["plasma gun", "chainsword", "krak grenade"], ready_weapon="plasma gun")),
        fighter("cultist", "blue", (18, 11), **sheet(weapons=["autogun", "cultist blade", "frag grenade"], ready_weapon="autogun")),
    ]
    return arena([*red, *blue], walls=walls, cover=cover, difficult=[(9, 7), (9, 8), (10, 8)], width=24, height=16,
                 aim_after_minor_move_in_cover=True)


def fight_states(setup: Any, seed: bytes, every: int = 2, limit: int = 400) -> Iterator[BoltAndBladeState]:
    for index, (_command, _events, state) in enumerate(run_headless(SYSTEM, setup, seed, max_commands=limit)):
        if state.ended:
            return
        if index % every == 0:
            yield copy_state(state)  # type: ignore[misc]


def play_on(state: BoltAndBladeState, seed: bytes, commands: int) -> Iterator[BoltAndBladeState]:
    """AI play from ``state`` (as the pure loop plays), yielding each state."""
    queued: list[Any] = []
    for _ in range(commands):
        if state.ended:
            return
        if not queued:
            queued = window_answers(SYSTEM, state, set())
        command = queued.pop(0) if queued else next_ai_command(SYSTEM, state, set())
        if command is None:
            return
        for event in SYSTEM.decide_or_reject(state, command, SeededDice(seed, state.version)):
            SYSTEM.evolve(state, event)
        yield copy_state(state)  # type: ignore[misc]


def smoky_states() -> Iterator[BoltAndBladeState]:
    """The armoury with a smoke cloud in the middle of the field (BB-CMB-26), then AI play."""
    order = ["sgt", "burner", "gunner", "champion", "trooper", "cultist", "blade"]
    state = SYSTEM.initial_state()
    begin = StartEncounter(command_id="start", actor=SEQUENCER, setup=armoury(), seed_commitment="x")
    for event in SYSTEM.decide(state, begin, FixedDice([20 - 2 * order.index(cid) for cid in sorted(order)])):
        SYSTEM.evolve(state, event)
    SYSTEM.evolve(state, BBZoneCreated(zone="smoke-x", kind="smoke", squares=[(x, y) for x in (9, 10) for y in (8, 9, 10)],
                                       rounds_left=3, creator="sgt", blocks_sight=True))
    yield copy_state(state)  # type: ignore[misc]
    yield from play_on(state, b"s" * 32, 60)


STATE_SOURCES = {
    "demo": lambda: [s for n in (1, 2) for s in fight_states(demo_setup(), bytes([n]) * 32, every=3)],
    "armoury": lambda: [s for n in (3, 4) for s in fight_states(armoury(), bytes([n]) * 32, every=2)],
    "smoke": lambda: list(smoky_states())[::2],
}


_LISTED: dict[int, SeatOptions] = {}


@pytest.fixture(scope="module")
def states() -> dict[str, list[BoltAndBladeState]]:
    found = {name: make() for name, make in STATE_SOURCES.items()}
    for batch in found.values():
        for state in batch:
            _LISTED[id(state)] = SYSTEM.options(state, ENGINE_SEAT)
    return found


def seat_options(state: BoltAndBladeState) -> SeatOptions:
    """The engine seat's options in ``state`` (worked out once for the fixture's states)."""
    known = _LISTED.get(id(state))
    return known if known is not None else SYSTEM.options(state, ENGINE_SEAT)


# ---------------------------------------------------------------- every listed command is accepted


@pytest.mark.parametrize("source", list(STATE_SOURCES))
def test_every_listed_command_is_accepted_by_decide(states: dict[str, list[BoltAndBladeState]], source: str) -> None:
    """Issue 9: every command the options list is accepted by ``decide`` in the
    state they were listed for: every window answer, every attack, and a sample
    of 40 of the rest (moves of every mode, each action's choices) per state."""
    chooser = random.Random(9)
    checked, kinds = 0, set()
    for state in states[source]:
        for combatant in seat_options(state).combatants:
            bodies = listed(combatant)
            must = [b for b in bodies if b["type"] in ("ClaimReaction", "PassReaction", "BBAttack")]
            rest = [b for b in bodies if b not in must]
            for body in must + chooser.sample(rest, min(len(rest), 40)):
                try:
                    decided(state, body)
                except Rejected as rejection:
                    raise AssertionError(f"{source} v{state.version}: listed but refused: {body} — {rejection.reason}") from None
                checked += 1
                kinds.add(body["type"] if body["type"] != "ClaimReaction" else body["reaction"])
    assert checked > 200
    expected = {"BBMove", "BBAttack", "EndTurn", "PassReaction", "reactive_fire"}
    assert expected <= kinds, kinds


def test_the_listed_options_cover_every_kind_of_action_and_answer(states: dict[str, list[BoltAndBladeState]]) -> None:
    """Issue 9: across the fights every action and reaction the system has is offered at least once."""
    actions, reactions, modes = set(), set(), set()
    for source in STATE_SOURCES:
        for state in states[source]:
            for combatant in seat_options(state).combatants:
                actions.update(a.action for a in combatant.actions)
                modes.update(m.mode for m in combatant.moves)
                if combatant.window is not None:
                    reactions.update(r.reaction for r in combatant.window.reactions)
    assert modes == {"tactical", "dash", "evade"}
    assert {"BBAim", "BBTakeCover", "BBOverwatch", "BBSuppress", "BBDisengage", "BBReady", "BBReload", "BBSearch", "BBThrow", "BBAreaAttack"} <= actions, actions
    assert {"reactive_fire", "return_fire", "dive_for_cover", "continue", "stop"} <= reactions, reactions


# ---------------------------------------------------------------- unlisted ones are refused


def test_unlisted_moves_attacks_and_placements_are_refused(states: dict[str, list[BoltAndBladeState]]) -> None:
    """Issue 9: next to the listed options, sampled unlisted ones are refused: a
    destination no mode lists (out of reach, a wall, occupied, enemy-held), an
    enemy no attack lists (out of sight, reach or range), an Overwatch centre
    not listed, a throw at a point not listed, or one catching allies without the
    confirmation the options carry."""
    chooser = random.Random(12)
    refusals = {"move": 0, "attack": 0, "overwatch": 0, "throw": 0, "confirm": 0}
    for source in ("demo", "armoury", "smoke"):
        for state in states[source][::2]:
            for combatant in seat_options(state).combatants:
                if not combatant.its_turn:
                    continue
                me = state.combatants[combatant.combatant]
                squares = [(x, y) for x in range(state.terrain.width) for y in range(state.terrain.height)]
                for mode in ("tactical", "dash", "evade"):
                    reachable = {m.to for m in combatant.moves if m.mode == mode}
                    if not reachable:
                        continue
                    for square in chooser.sample([s for s in squares if s not in reachable and s != me.position], 1):
                        refused(state, command_json_move(me.id, square, mode))
                        refusals["move"] += 1
                for weapon in {a.weapon for a in combatant.attacks}:
                    hit = {a.target for a in combatant.attacks if a.weapon == weapon}
                    for target in sorted(c for c in state.combatants if c not in hit and c != me.id)[:2]:
                        refused(state, msgspec.to_builtins(BBAttack(command_id="", actor=me.id, target=target, weapon=weapon)))
                        refusals["attack"] += 1
                for action in combatant.actions:
                    if action.action == "BBOverwatch":
                        centres = {c.square for c in action.choices}
                        for square in chooser.sample([s for s in squares if s not in centres], 2):
                            refused(state, msgspec.to_builtins(BBOverwatch(command_id="", actor=me.id, center=square)))
                            refusals["overwatch"] += 1
                    if action.action == "BBThrow":
                        weapon = action.choices[0].command["weapon"]
                        points = {c.square for c in action.choices}
                        for square in chooser.sample([s for s in squares if s not in points], 2):
                            refused(state, msgspec.to_builtins(BBThrow(command_id="", actor=me.id, target=square, weapon=weapon)))
                            refusals["throw"] += 1
                        for choice in action.choices:
                            if choice.command.get("confirm_friendly_fire"):
                                assert "confirm_friendly_fire" in refused(state, {**choice.command, "confirm_friendly_fire": False})
                                refusals["confirm"] += 1
                                break
    assert min(refusals.values()) > 0, refusals


def command_json_move(actor: str, to: tuple[int, int], mode: str) -> dict[str, Any]:
    return msgspec.to_builtins(BBMove(command_id="", actor=actor, to=to, mode=mode))


def test_unlisted_reaction_options_are_refused(states: dict[str, list[BoltAndBladeState]]) -> None:
    """BB-CMB-10, -17: a Reactive Fire at a square the window does not offer, a
    dive to a square not listed, and a reaction not offered are refused."""
    seen = {"reactive_fire": 0, "dive_for_cover": 0, "other": 0}
    for source in STATE_SOURCES:
        for state in states[source]:
            for combatant in seat_options(state).combatants:
                window = combatant.window
                if window is None:
                    continue
                for reaction in window.reactions:
                    if reaction.reaction not in ("reactive_fire", "dive_for_cover"):
                        continue
                    key = "square" if reaction.reaction == "reactive_fire" else "to"
                    offered = {c.square for c in reaction.choices}
                    x, y = next(iter(offered))
                    for square in [(x + dx, y + dy) for dx in (-3, 0, 3) for dy in (-3, 0, 3)]:
                        if square in offered:
                            continue
                        body = msgspec.to_builtins(ClaimReaction(command_id="", actor=combatant.combatant, window=window.window,
                                                                 reaction=reaction.reaction, options={key: list(square)}))
                        assert "offered" in refused(state, body) or "options" in refused(state, body)
                        seen[reaction.reaction] += 1
                offered_names = {r.reaction for r in window.reactions}
                for other in ("opportunity_strike", "return_fire", "dive_for_cover", "reactive_fire"):
                    if other not in offered_names:
                        body = msgspec.to_builtins(ClaimReaction(command_id="", actor=combatant.combatant, window=window.window, reaction=other))
                        assert "cannot use" in refused(state, body)
                        seen["other"] += 1
                        break
    assert min(seen.values()) > 0, seen


# ---------------------------------------------------------------- exact hit chances


def brute_force_chance(bonus: int, target: int, advantage: list[str], disadvantage: list[str]) -> Fraction:
    """Every face (or pair of faces) of the d20, the kept one by BB-CORE-05, a hit
    by BB-CORE-07, -12 and -14: natural 20 hits, natural 1 misses."""
    def hits(face: int) -> bool:
        return face == 20 or (face != 1 and face + bonus >= target)

    mode = d20_mode(advantage, disadvantage)
    if mode in ("normal", "cancelled"):
        return Fraction(sum(hits(f) for f in range(1, 21)), 20)
    keep = max if mode == "advantage" else min
    return Fraction(sum(hits(keep(a, b)) for a, b in product(range(1, 21), repeat=2)), 400)


def test_bb_core_07_attack_hit_chances_equal_brute_force_over_the_d20(states: dict[str, list[BoltAndBladeState]]) -> None:
    """BB-CORE-05, -07, -12, -14: every listed attack's chance is exactly the
    share of d20 faces (pairs, with Advantage or Disadvantage) that hit, by the
    engine's own plan of the attack; its modifiers are the plan's."""
    checked = 0
    modes = set()
    for source in STATE_SOURCES:
        for state in states[source]:
            for combatant in seat_options(state).combatants:
                me = state.combatants[combatant.combatant]
                for attack in combatant.attacks:
                    plan = plan_attack(state, me.id, attack.target, me.weapon(attack.weapon))  # type: ignore[arg-type]
                    # the plan's terms, as a person reads them (names for ids: engine/wording.py)
                    assert attack.modifiers == [msgspec.structs.replace(m, source=with_names(m.source, combatant_names(state)))
                                                for m in plan.modifiers] and attack.target_number == plan.defense.total
                    assert all(m.rule for m in attack.modifiers)
                    exact = brute_force_chance(sum(m.value for m in plan.modifiers), plan.defense.total, plan.advantage, plan.disadvantage)
                    assert attack.hit_chance == float(exact), (attack, exact)
                    modes.add(d20_mode(plan.advantage, plan.disadvantage))
                    checked += 1
    assert checked > 30 and {"normal", "disadvantage"} <= modes


@pytest.mark.parametrize("mode", ["normal", "advantage", "disadvantage"])
def test_bb_core_07_the_listed_chance_is_what_the_engine_rolls(mode: str) -> None:
    """BB-CORE-05, -07: deciding the listed attack with every face (or pair of
    faces) of the d20 hits exactly as often as its hit_chance says."""
    settings: dict[str, Any] = {}
    attacker = sheet(attributes={"agility": 14})
    target = knife_only(attributes={"agility": 12}, armour="flak armour")
    fighters = [fighter("a", "red", (1, 5), **attacker), fighter("b", "blue", (6 if mode != "disadvantage" else 14, 5), **target)]
    state = start(arena(fighters, **settings), ["a", "b"])
    if mode == "advantage":
        state.combatants["b"].conditions["helped"] = "start_of_turn:x"  # BB-CORE-17 Help: Advantage on the next attack
    option = next(a for a in seat_options(state).combatants[0].attacks if a.weapon == "lasgun")
    faces = [[f] for f in range(1, 21)] if mode == "normal" else [[a, b] for a, b in product(range(1, 21), repeat=2)]
    hits = 0
    for rolled in faces:
        events = SYSTEM.decide(state, command_of(option.command), FixedDice([*rolled, *[1] * 10]))
        hits += next(e for e in events if isinstance(e, AttackResolved)).hit
    assert Fraction(hits, len(faces)) == Fraction(option.hit_chance).limit_denominator(400)
    assert option.hit_chance == hits / len(faces)


def test_reaction_choices_carry_the_chance_the_engine_plans(states: dict[str, list[BoltAndBladeState]]) -> None:
    """BB-CMB-10, -11, -13: each Reactive Fire square's chance is the plan of the
    shot at the mover standing there, exactly (brute force over the d20)."""
    from firelane.engine.systems.bolt_and_blade.reactions import plan_reactive_fire

    checked = 0
    for source in STATE_SOURCES:
        for state in states[source]:
            window = state.window
            if window is None or window.trigger != "fire_lane":
                continue
            for combatant in seat_options(state).combatants:
                if combatant.window is None:
                    continue
                for choice in combatant.window.reactions[0].choices:
                    plan = plan_reactive_fire(state, combatant.combatant, window.actor, choice.square, str(window.continuation["mode"]))[0]  # type: ignore[arg-type]
                    exact = brute_force_chance(sum(m.value for m in plan.modifiers), plan.defense.total, plan.advantage, plan.disadvantage)
                    assert choice.hit_chance == float(exact)
                    checked += 1
    assert checked > 10


# ---------------------------------------------------------------- moves by destination


def walk_passing(state: BoltAndBladeState, body: dict[str, Any], seed: bytes = b"m" * 32) -> tuple[list[tuple[int, int]], list[tuple[str, str, tuple[int, int], float | None]]]:
    """Decide a move, every reactor passing each window it opens: (the squares
    walked, (reactor, trigger, the mover's square, the reactor's listed chance
    there) for every reactor offered a reaction on the way)."""
    state = copy_state(state)  # type: ignore[assignment]
    mover = body["actor"]
    walked: list[tuple[int, int]] = []
    met: list[tuple[str, str, tuple[int, int], float | None]] = []
    commands = [command_of(body)]
    while commands:
        events = SYSTEM.decide(state, commands.pop(0), SeededDice(seed, state.version))
        for event in events:
            SYSTEM.evolve(state, event)
            if isinstance(event, Moved) and event.combatant == mover:
                walked += [tuple(s) for s in event.path]
            if isinstance(event, ReactionWindowOpened):
                at = tuple(state.combatants[mover].position)
                for reactor in event.reactors:
                    choices = bb_options.reaction_options(state, state.window, reactor.combatant)[0].choices  # type: ignore[arg-type]
                    chance = choices[0].hit_chance if choices else None
                    met.append((reactor.combatant, event.trigger, at, chance))  # type: ignore[arg-type]
        if state.window is not None:
            commands = [PassReaction(command_id=f"p{n}", actor=r, window=state.window.window) for n, r in enumerate(state.window.unanswered())]
    return walked, met


def test_bb_cmb_06_a_move_by_destination_walks_the_listed_path_and_meets_the_listed_threats(states: dict[str, list[BoltAndBladeState]]) -> None:
    """BB-CMB-06..08, -10, -15: a move naming only its destination walks exactly
    the path its option lists, and (everyone passing) the windows it opens are
    the option's threats: who, what, where, and the chance listed in the window
    equals the chance the threat gave."""
    chooser = random.Random(6)
    checked = with_threats = 0
    for source in STATE_SOURCES:
        for state in states[source][::2]:
            for combatant in seat_options(state).combatants:
                if not combatant.moves:
                    continue
                for option in chooser.sample(combatant.moves, min(6, len(combatant.moves))):
                    walked, met = walk_passing(state, option.command)
                    assert walked == option.path, (option, walked)
                    expected = [(t.reactor, "leaving_reach" if t.reaction == "opportunity_strike" else "fire_lane", t.at, t.hit_chance)
                                for t in option.threats if t.reaction != "zone"]
                    got = [m for m in met if m[1] in ("leaving_reach", "fire_lane")]
                    assert got == expected, (option, met)
                    checked += 1
                    with_threats += bool(expected)
    assert checked > 50 and with_threats > 10


def test_moves_by_destination_and_waypoints_take_the_cheapest_path() -> None:
    """BB-CMB-06, -29: ``to`` alone takes the cheapest path (entering cover costs 5 ft,
    difficult ground double); waypoints are passed in order; a full path still works."""
    cover = [CoverFeature(x=3, y=1, level="light", facing=[(1, 0)])]
    setup = arena([fighter("m", "red", (1, 1), **knife_only()), fighter("e", "blue", (12, 9), **knife_only())],
                  walls=[(2, 0), (2, 2)], cover=cover, difficult=[(2, 1)], width=14, height=10)
    state = start(setup, ["m", "e"])
    listed_path = next(m.path for m in seat_options(state).combatants[0].moves if (m.to, m.mode) == ((4, 1), "tactical"))
    moved = [e for e in act(state, BBMove(command_id="a", actor="m", to=(4, 1))) if isinstance(e, Moved)]
    # Through the gap: 10 ft into the difficult square, 5 ft out of it (either open square beyond), 5 ft on.
    assert [tuple(s) for e in moved for s in e.path] == listed_path == [(2, 1), (3, 0), (4, 1)]
    assert state.combatants["m"].movement_used_ft == 20
    state = start(setup, ["m", "e"])
    act(state, BBMove(command_id="a2", actor="m", to=(3, 1)))
    assert state.combatants["m"].movement_used_ft == 15  # 10 (difficult) + 5 (entering cover, BB-CMB-29)
    state = start(setup, ["m", "e"])
    moved = [e for e in act(state, BBMove(command_id="b", actor="m", to=(1, 3), waypoints=[(2, 1)])) if isinstance(e, Moved)]
    assert [tuple(s) for e in moved for s in e.path] == [(2, 1), (1, 2), (1, 3)]
    state = start(setup, ["m", "e"])
    act(state, BBMove(command_id="c", actor="m", path=[(1, 2), (1, 3)]))
    assert state.combatants["m"].position == (1, 3)


def test_an_unreachable_destination_is_refused_with_what_is_reachable() -> None:
    """Issue 9: a destination out of reach names its cost, the movement left and
    the nearest squares the mover can reach; a wall, an occupied or an enemy's
    square, and a path with a destination too, are refused with the reason."""
    setup = arena([fighter("m", "red", (1, 1), **knife_only()), fighter("f", "red", (1, 2), **knife_only()),
                   fighter("e", "blue", (12, 9), **knife_only())], walls=[(5, 5)], width=14, height=10)
    state = start(setup, ["m", "e", "f"])
    reason = refused(state, command_json_move("m", (10, 1), "tactical"))
    assert reason == ("destination (10, 1) is not reachable: the cheapest path costs 45 ft but m has 30 ft of movement left (tactical); "
                      "nearest reachable: (7, 1) (30 ft), (7, 0) (30 ft), (7, 2) (30 ft)")
    assert refused(state, command_json_move("m", (5, 5), "tactical")) == "destination (5, 5) is a wall"
    assert refused(state, command_json_move("m", (1, 2), "tactical")) == "cannot end the move on (1, 2): f stands there"
    assert refused(state, command_json_move("m", (12, 9), "dash")) == "destination (12, 9) is held by the enemy e"
    assert refused(state, command_json_move("m", (40, 1), "tactical")) == "destination (40, 1) is off the 14x10 map"
    both = msgspec.to_builtins(BBMove(command_id="", actor="m", to=(2, 2), path=[(2, 2)]))
    assert refused(state, both) == "a move gives its destination (to, with optional waypoints) or its full path, not both"
    dash = command_json_move("m", (10, 1), "dash")
    assert [e for e in decided(state, dash) if isinstance(e, Moved)][-1].path[-1] == (10, 1)  # 60 ft with the Dash


# ---------------------------------------------------------------- a window's options, one by one


def test_bb_cmb_17_dive_choices_list_each_square_and_the_chance_the_hit_still_lands() -> None:
    """BB-CMB-17: a ranged hit on a target with cover a step away lists one dive
    per square; the save's DC is the attack total; the chance the hit still lands
    is the failed save plus, on a success, whether it beats the new Defense."""
    cover = [CoverFeature(x=5, y=4, level="heavy", facing=[(1, 0)]), CoverFeature(x=5, y=6, level="light", facing=[(1, 0)])]
    setup = arena([fighter("a", "red", (10, 5), **sheet()), fighter("b", "blue", (5, 5), **knife_only())], cover=cover)
    state = start(setup, ["a", "b"])
    act(state, BBAttack(command_id="x", actor="a", target="b"), [12])  # 12 + 2 + 2 (Exposed) = 16 hits Defense 10
    assert state.window is not None and state.window.trigger == "ranged_hit"
    (dive,) = bb_options.reaction_options(state, state.window, "b")
    assert [c.square for c in dive.choices] == [(5, 4), (5, 6)]
    heavy, light = dive.choices
    # save: d20 + 0 >= 16: 5/20. Into heavy cover: 14 (16 - 2 Exposed) vs 15: a miss; into light: 14 vs 12: still a hit.
    assert heavy.hit_chance == 15 / 20 and light.hit_chance == 1.0
    # issue 19 item 8: each number says what it is the chance of, from whose side
    assert heavy.chance_of == "the hit still lands" and heavy.notes == ["Agility save DC 16 succeeds: 25%"]
    assert heavy.command["options"] == {"to": [5, 4]}
    decided(state, heavy.command)


def test_bb_cmb_12_the_choice_under_fire_lists_continue_and_stop() -> None:
    """BB-CMB-12: after Reactive Fire damage the mover is offered keep moving and
    stop (Pinned); the move's declared choice is marked as what passing keeps."""
    fighters = [fighter("m", "red", (1, 5), **knife_only()), fighter("w", "blue", (10, 5), **sheet())]
    state = start(arena(fighters), ["m", "w"])
    act(state, BBMove(command_id="m", actor="m", path=[(1, 6), (1, 7), (1, 8)], on_reactive_fire="stop"))
    act(state, ClaimReaction(command_id="c", actor="w", window=1, reaction="reactive_fire", options={"square": [1, 6]}), [10, 4])
    assert state.window is not None and state.window.trigger == "reactive_fire_choice"
    answers = bb_options.reaction_options(state, state.window, "m")
    assert [(r.reaction, [c.command["reaction"] for c in r.choices]) for r in answers] == [("continue", ["continue"]), ("stop", ["stop"])]
    assert answers[1].choices[0].notes == ["the move's declared choice: passing keeps it"]
    for answer in answers:
        decided(state, answer.choices[0].command)


def test_bb_cmb_15_an_opportunity_strike_threat_is_listed_where_it_triggers() -> None:
    """BB-CMB-15: stepping out of an enemy's reach lists its Opportunity Strike at
    the square the mover leaves from, with the strike's chance; a Disengage removes it."""
    fighters = [fighter("m", "red", (5, 5), **knife_only()), fighter("k", "blue", (6, 5), **knife_only())]
    state = start(arena(fighters), ["m", "k"])
    moves = {(m.to, m.mode): m for m in seat_options(state).combatants[0].moves}
    away = moves[((3, 5), "tactical")]
    assert [(t.reactor, t.reaction, t.at) for t in away.threats] == [("k", "opportunity_strike", (5, 5))]
    assert away.threats[0].hit_chance == 13 / 20  # d20 + 2 (melee proficiency) vs Defense 10: faces 8-20
    act(state, msgspec.convert({"type": "BBDisengage", "command_id": "d", "actor": "m"}, UNION))
    moves = {(m.to, m.mode): m for m in seat_options(state).combatants[0].moves}
    assert moves[((3, 5), "tactical")].threats == []
