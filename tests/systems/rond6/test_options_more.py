"""RonD6 options beyond the plain attack and walk (issue 9, "every legal action
with its parameters"): Rapid Fire (R6-36), off-hand weapons (R6-34),
Coordinated Attacks (R6-29), attacks on allies, assisted healing (R6-43),
swimming and climbing (R6-12), Charge with each weapon (R6-28). Listed ones
are accepted; sampled unlisted ones refused; the chances exact."""

from __future__ import annotations

import copy

import msgspec

import pytest

from firelane.engine.core import Rejected, command_json
from firelane.engine.dice import FixedDice
from firelane.engine.seats import ENGINE_SEAT
from firelane.engine.systems.rond6 import SYSTEM, odds, options
from firelane.engine.systems.rond6.pools import DieCode
from firelane.engine.systems.rond6.aux_schemas import R6Heal, R6Move
from firelane.engine.systems.rond6.schemas import R6Attack, R6Charge, R6DeclareActions
from firelane.events.schemas import EndTurn

from ..options_helpers import check_moves_follow_listed_paths, decide_listed
from .r6helpers import KNIFE, PISTOL, act, cmd, combatant, setup, start


def _opts(state, cid):
    return next(c for c in SYSTEM.options(state, ENGINE_SEAT).combatants if c.combatant == cid)


def _refused(state, command) -> bool:
    try:
        SYSTEM.decide(copy.deepcopy(state), command, FixedDice([3] * 40))
    except Rejected:
        return True
    return False


def _three(**a):
    # a and its ally c against b; initiative: a first (3D each, by ID: a, b, c).
    return start(setup(combatant("a", "red", (1, 1), **a), combatant("b", "blue", (2, 1)), combatant("c", "red", (1, 2))),
                 [5, 5, 5, 2, 2, 2, 1, 1, 1])


def _dice_and_flat(attack) -> tuple[int, int]:
    """An option's terms: the dice ("[dice]" terms) and the flat rest."""
    dice = sum(m.value for m in attack.modifiers if m.source.endswith("[dice]"))
    return dice, sum(m.value for m in attack.modifiers if not m.source.endswith("[dice]"))


def test_r6_36_rapid_fire_is_listed_for_each_shot_count_with_its_exact_chance() -> None:
    """R6-36: +1 to the attack per extra round (a flat term); 2 shots up to the rounds loaded."""
    state = _three()
    act(state, cmd(R6DeclareActions, "a", count=1))
    attacks = [a for a in _opts(state, "a").attacks if a.target == "b" and a.weapon == "pistol"]
    plain = next(a for a in attacks if a.mode == "normal")
    rapid = {a.command["shots"]: a for a in attacks if a.command["shots"] != 1}
    assert sorted(rapid) == list(range(2, 13))  # the pistol holds 12 rounds
    dice, flat = _dice_and_flat(plain)
    for shots, attack in rapid.items():
        assert _dice_and_flat(attack) == (dice, flat + shots - 1)
        assert ("Rapid Fire (%d extra rounds)" % (shots - 1), "R6-36", shots - 1) in [(m.source, m.rule, m.value) for m in attack.modifiers]
        expected = odds.chance_at_least(odds.pool_total(DieCode(dice), flat + shots - 1), attack.target_number)
        assert attack.hit_chance == pytest.approx(expected) and "rapid fire" in attack.mode and attack.rule == "R6-36"
        decide_listed(SYSTEM, state, attack.command)
    unlisted = R6Attack(command_id="u", actor="a", target="b", weapon="pistol", shots=13)
    assert command_json(unlisted) not in [a.command for a in _opts(state, "a").attacks] and _refused(state, unlisted)


def test_r6_34_an_off_hand_weapon_is_listed_when_two_actions_are_left() -> None:
    """R6-34: a second weapon in the other hand is a second action, at -1D."""
    state = _three(readied=["pistol", "knife"])
    act(state, cmd(R6DeclareActions, "a", count=2))
    pairs = {(a.weapon, a.command["off_hand_weapon"]) for a in _opts(state, "a").attacks if a.target == "b" and a.command["off_hand_weapon"]}
    assert pairs == {("pistol", "knife"), ("knife", "pistol"), ("pistol", "unarmed"), ("knife", "unarmed"),
                     ("unarmed", "pistol"), ("unarmed", "knife")}
    for attack in _opts(state, "a").attacks:
        if attack.command["off_hand_weapon"]:
            decide_listed(SYSTEM, state, attack.command)
    one_action = _three(readied=["pistol", "knife"])
    act(one_action, cmd(R6DeclareActions, "a", count=1))
    assert not [a for a in _opts(one_action, "a").attacks if a.command["off_hand_weapon"]]
    assert _refused(one_action, R6Attack(command_id="u", actor="a", target="b", weapon="pistol", off_hand_weapon="knife"))


def test_r6_29_coordinated_attacks_list_the_allies_who_can_join() -> None:
    """R6-29: each ally with a held action and the target in reach may join; one without is not listed and is refused."""
    # c acts first, declares two actions and holds one; then a.
    state = start(setup(combatant("a", "red", (1, 1)), combatant("b", "blue", (2, 1)), combatant("c", "red", (1, 2)),
                        combatant("d", "red", (1, 0))), [4, 4, 4, 1, 1, 1, 5, 5, 5, 2, 2, 2])
    assert state.active == "c"
    act(state, cmd(R6DeclareActions, "c", count=2))
    act(state, cmd(EndTurn, "c"))
    assert state.active == "a"
    act(state, cmd(R6DeclareActions, "a", count=1))
    teams = [a for a in _opts(state, "a").attacks if a.command["coordinate_with"]]
    assert {tuple(a.command["coordinate_with"]) for a in teams} == {("c",)}  # d has declared nothing
    for attack in teams:
        assert "coordinated with c" in attack.mode
        decide_listed(SYSTEM, state, attack.command)
    for unlisted in (R6Attack(command_id="u", actor="a", target="b", weapon="pistol", coordinate_with=["d"]),
                     R6Attack(command_id="u", actor="a", target="b", weapon="pistol", coordinate_with=["b"])):
        assert command_json(unlisted) not in [a.command for a in teams] and _refused(state, unlisted)


def test_attacks_on_allies_are_listed_flagged_and_accepted() -> None:
    """R6-13: the engine takes an attack on any standing combatant but oneself; on an ally it is listed, flagged."""
    state = _three()
    act(state, cmd(R6DeclareActions, "a", count=1))
    on_ally = [a for a in _opts(state, "a").attacks if a.target == "c"]
    assert {a.weapon for a in on_ally} == {"pistol", "unarmed"}
    for attack in on_ally:
        assert options.ALLY_NOTE in attack.notes
        decide_listed(SYSTEM, state, attack.command)
    assert not [a for a in _opts(state, "a").attacks if a.target == "b" and options.ALLY_NOTE in a.notes]
    # The AI never takes one.
    assert SYSTEM.choose_command(state, "a").target == "b"  # type: ignore[union-attr]


def test_r6_43_treating_a_wound_is_listed_for_each_patient_in_reach() -> None:
    state = _three(skills={"medicine": "4D"})
    state.combatants["c"].wounds = 1
    act(state, cmd(R6DeclareActions, "a", count=1))
    heal = next(a for a in _opts(state, "a").actions if a.action == "R6Heal")
    assert [c.command["patient"] for c in heal.choices] == ["c"]
    decide_listed(SYSTEM, state, heal.choices[0].command)
    far = start(setup(combatant("a", "red", (1, 1), skills={"medicine": "4D"}), combatant("b", "blue", (2, 1)),
                      combatant("c", "red", (12, 9))), [5, 5, 5, 2, 2, 2, 1, 1, 1])
    far.combatants["c"].wounds = 1
    act(far, cmd(R6DeclareActions, "a", count=1))
    assert not [a for a in _opts(far, "a").actions if a.action == "R6Heal"]
    assert _refused(far, R6Heal(command_id="u", actor="a", patient="c", kind="assisted"))


def test_r6_12_swimming_and_climbing_moves_are_listed_and_walk_the_listed_path() -> None:
    """R6-12: swimming is half Move (rounded up); climbing without the specialisation too; each pace
    listed, on a map whose water (a river along row 1) and surfaces to climb (a wall face along row 2) the settings mark."""
    river = [[x, 1] for x in range(0, 24)]
    face = [[x, 2] for x in range(0, 24)]
    state = start(setup(combatant("a", "red", (1, 1)), combatant("b", "blue", (20, 10)), water_spaces=river, climb_spaces=face),
                  [5, 5, 5, 2, 2, 2])
    act(state, cmd(R6DeclareActions, "a", count=2))
    moves = _opts(state, "a").moves
    swims = [m for m in moves if m.mode == "swim partial"]
    walks = [m for m in moves if m.mode == "partial"]
    assert swims and max(len(m.path) for m in swims) < max(len(m.path) for m in walks)
    assert {m.command["mode"] for m in moves} == {"walk", "swim", "climb"}
    assert check_moves_follow_listed_paths(SYSTEM, state, SYSTEM.options(state, ENGINE_SEAT), whole=False) == len(moves)
    too_far = max(len(m.path) for m in swims) + 1
    unlisted = R6Move(command_id="u", actor="a", to=(1 + too_far, 1), mode="swim", pace="partial")
    assert command_json(unlisted) not in [m.command for m in moves] and _refused(state, unlisted)


def test_r6_12_swimming_and_climbing_are_not_offered_on_a_dry_floor_with_nothing_to_climb() -> None:
    """R6-12 (issue 19 item 11): on a map with no water and nothing to climb, only walks are
    offered; with a pool marked, swims are offered only along paths that meet the water."""
    state = start(setup(combatant("a", "red", (1, 1)), combatant("b", "blue", (20, 10))), [5, 5, 5, 2, 2, 2])
    act(state, cmd(R6DeclareActions, "a", count=2))
    assert {m.command["mode"] for m in _opts(state, "a").moves} == {"walk"}
    pool = [[x, y] for x in range(4, 7) for y in range(4, 7)]
    wet = start(setup(combatant("a", "red", (1, 1)), combatant("b", "blue", (20, 10)), water_spaces=pool), [5, 5, 5, 2, 2, 2])
    act(wet, cmd(R6DeclareActions, "a", count=2))
    swims = [m for m in _opts(wet, "a").moves if m.command["mode"] == "swim"]
    marked = {tuple(s) for s in pool}
    assert swims and all(marked & {tuple(s) for s in m.path} for m in swims)
    assert {m.command["mode"] for m in _opts(wet, "a").moves} == {"walk", "swim"}


def test_r6_28_charge_is_listed_with_each_melee_weapon_in_hand() -> None:
    state = start(setup(combatant("a", "red", (1, 1), weapons=[PISTOL, KNIFE], readied=["pistol", "knife"]),
                        combatant("b", "blue", (6, 1))), [5, 5, 5, 2, 2, 2])
    act(state, cmd(R6DeclareActions, "a", count=1))
    charge = next(a for a in _opts(state, "a").actions if a.action == "R6Charge")
    assert [c.command["weapon"] for c in charge.choices] == ["knife", "unarmed"]
    for choice in charge.choices:
        decide_listed(SYSTEM, state, choice.command)
    unlisted = R6Charge(command_id="u", actor="a", target="b", weapon="pistol")  # a Charge ends in a melee attack
    assert _refused(state, unlisted)


def test_sampled_rapid_fire_off_hand_and_coordinated_attacks_are_accepted_exactly_when_listed() -> None:
    """Property (issue 9, R6-29/34/36): in demo states, random attacks with one of
    ``shots``, ``off_hand_weapon`` or ``coordinate_with`` set (a normal attack, no
    Called Shot) are accepted by decide exactly when the options list them."""
    import random

    from firelane.engine.systems.rond6.state import UNARMED

    from ..options_helpers import demo_states

    chooser = random.Random(36)
    checked = accepted = 0
    for system, state in demo_states("rond6", [bytes([n]) * 32 for n in range(2)], every=2):
        if state.window is not None or state.active is None or not state.combatants[state.active].declared_actions:
            continue
        me = state.combatants[state.active]
        if system.action_unavailable(state, me) is not None:
            continue
        listed = [a.command for a in _opts(state, me.id).attacks]
        foes = [c.id for c in state.combatants.values() if c.side != me.side and not c.out_of_fight]
        friends = [c.id for c in state.combatants.values() if c.side == me.side and c.id != me.id and not c.out_of_fight]
        weapons = [w.id for w in me.weapons] + [UNARMED.id]
        for _ in range(10):
            if not foes:
                break
            command = R6Attack(command_id="p", actor=me.id, target=chooser.choice(foes), weapon=chooser.choice(weapons))
            kind = chooser.randrange(3)
            semi = [w.id for w in me.weapons if "SA" in w.modes and w.id in me.readied]
            if kind == 0:
                # Mostly a semi-automatic weapon in hand, so that some samples are legal.
                weapon = chooser.choice(semi) if semi and chooser.random() < 0.8 else command.weapon
                command = msgspec.structs.replace(command, weapon=weapon, shots=chooser.randint(2, 14))
            elif kind == 1:
                command = msgspec.structs.replace(command, off_hand_weapon=chooser.choice(weapons))
            elif friends:
                command = msgspec.structs.replace(command, coordinate_with=chooser.sample(friends, chooser.randint(1, min(3, len(friends)))))
            else:
                continue
            refused = _refused(state, command)
            assert refused == (command_json(command) not in listed), (command_json(command), refused)
            checked += 1
            accepted += not refused
    assert checked > 40 and accepted > 0
