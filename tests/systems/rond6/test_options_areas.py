"""RonD6 area attacks in the options (issue 9; R6-40 bursts, R6-41 cones): the
sample data's fragmentation grenade listed at each burst centre that catches
someone, allies flagged, the exact chance checked against a count of the dice
done here, and every listed choice accepted by the engine, catching whom its
notes say."""

from __future__ import annotations

import itertools
import random
import re
from fractions import Fraction

import pytest

from firelane.engine.wording import combatant_names, with_names
from firelane.engine.core import command_json
from firelane.engine.seats import ENGINE_SEAT
from firelane.engine.systems.rond6 import SYSTEM, areas, options
from firelane.engine.systems.rond6.data import weapon_profile
from firelane.events.options_schemas import ActionOption
from firelane.engine.systems.rond6.aux_schemas import R6AreaAttack, R6AreaTargeted
from firelane.engine.systems.rond6.schemas import R6Attack, R6DeclareActions, R6Wait
from firelane.events.schemas import AttackResolved, EndTurn

from ..options_helpers import as_command, decide_listed, demo_states
from .r6helpers import PISTOL, act, cmd, combatant, of_type, one, rejection, setup, start

GRENADE = weapon_profile("frag_grenade")  # the sample data's: thrown, Small Burst, ranges 5/10/15, one grenade
FLAMER = {"id": "flamer", "name": "flamer", "kind": "ranged", "skill": "firearms", "damage": "6D",
          "ranges": [3, 6, 9], "modes": ["cone:small"]}
CAUGHT = re.compile(r"^catches (\w[\w ()-]*?) \((enemy|ally|self), (R6-4[01])\): hit (\d{1,3}\.\d{2})% against (\w+) defense (\d+)$")


def wild_pool_at_least(dice: int, target: int) -> Fraction:
    """P(total >= target) for ``dice`` D6 with one Wild Die (R6-01), counted
    here: every face of the plain dice; the Wild Die's first face 1 a
    complication that removes it and the highest plain die ("remove"), its 6s
    exploding (counted to 40 sixes in a row, far below the float's precision)."""
    sixth = Fraction(1, 6)
    total = Fraction(0)
    for plain in itertools.product(range(1, 7), repeat=dice - 1):
        weight = sixth ** (dice - 1)
        if sum(plain) - max(plain, default=0) >= target:
            total += weight * sixth  # the complication
        for face in range(2, 6):
            total += weight * sixth * (sum(plain) + face >= target)
        for sixes in range(1, 41):  # 6 x sixes, then a last face 1-5
            total += weight * sum(sixth ** (sixes + 1) for last in range(1, 6) if sum(plain) + 6 * sixes + last >= target)
    return total


def _mine(state, cid: str):
    return next(c for c in SYSTEM.options(state, ENGINE_SEAT).combatants if c.combatant == cid)


def _areas(state, cid: str) -> list[ActionOption]:
    return [a for a in _mine(state, cid).actions if a.action == "R6AreaAttack"]


def _caught(notes: list[str]) -> dict[str, tuple[str, str, float, int]]:
    """{combatant: (relation, rule, chance, defense)} from a choice's "catches ..." notes."""
    found = {}
    for note in notes:
        match = CAUGHT.match(note)
        if match:
            who, relation, rule, chance, _kind, defense = match.groups()
            found[who] = (relation, rule, float(chance) / 100, int(defense))
    return found


def _verify(state, choice) -> None:
    """A listed area choice is accepted (``accepts`` and ``decide``) and catches
    exactly whom its notes name, each against the Defense the notes give."""
    assert SYSTEM.accepts(state, as_command(SYSTEM, choice.command)), choice.command
    events = decide_listed(SYSTEM, state, choice.command)
    targeted = one(events, R6AreaTargeted)
    said = combatant_names(state)  # the notes name combatants as a person reads them (engine/wording.py)
    names = {cid: with_names(cid, said) for cid in state.combatants}
    resolved = {names[r.target]: r for r in of_type(events, AttackResolved)}
    caught = _caught(choice.notes)
    assert sorted(names[t] for t in targeted.targets) == sorted(caught), (choice.label, targeted.targets, choice.notes)
    for who, (_relation, rule, _chance, defense) in caught.items():
        assert rule == targeted.rule
        if who in resolved:  # an earlier hit may end the fight before the rest are resolved
            assert resolved[who].roll.target == defense


def grenade_scene(**a_sheet):
    """a (red) throws; b (blue, Passive Defense 16) 4 Spaces away, Short range; its
    neighbour e is a's ally (Agility 4D: 17); d (blue) is 18 Spaces off, beyond Long range (15).
    Initiative (3D each, by ID a, b, d, e): a, e, b, d."""
    return start(setup(combatant("a", "red", (2, 2), weapons=[GRENADE, PISTOL], readied=["frag_grenade"],
                                 skills={"throwing": "4D"}, **a_sheet),
                       combatant("b", "blue", (6, 2)), combatant("d", "blue", (20, 10)),
                       combatant("e", "red", (7, 3), attributes={"Agility": "4D"})),
                 [5, 5, 5, 3, 3, 3, 2, 2, 2, 4, 4, 4])


def test_the_independent_count_agrees_with_a_plain_case() -> None:
    """The count above, checked where it is easy: 1D (the Wild Die alone) reaches 7 only by a 6
    and then anything: 1/6 (less what the count leaves out, 41 sixes in a row)."""
    assert abs(wild_pool_at_least(1, 7) - Fraction(1, 6)) < Fraction(1, 6 ** 40)
    assert abs(wild_pool_at_least(1, 2) - Fraction(5, 6)) < Fraction(1, 6 ** 40)  # 2-5, or a 6; the complication 1 leaves 0


def test_r6_40_the_grenade_is_listed_at_the_enemy_with_the_ally_caught_flagged_and_the_exact_chance() -> None:
    """R6-40: a Small Burst on b's Space catches b and the ally e next to it; the one attack test
    (throwing 4D, Short range: no modifier) against each Passive Defense, exact; the listed
    command thrown with fixed dice hits b (16 vs 16) and misses e (16 vs 17)."""
    state = grenade_scene()
    act(state, cmd(R6DeclareActions, "a", count=1))
    [grenade] = _areas(state, "a")
    assert (grenade.label, grenade.rule) == ("throw fragmentation grenade (small burst)", "R6-40")
    on_b = grenade.choices[0]
    assert on_b.square == (6, 2) and on_b.command == command_json(R6AreaAttack(command_id="", actor="a", weapon="frag_grenade", center=(6, 2)))
    caught = _caught(on_b.notes)
    assert {who: (relation, rule, defense) for who, (relation, rule, _c, defense) in caught.items()} == {
        "b": ("enemy", "R6-40", 16), "e": ("ally", "R6-40", 17)}
    assert options.AREA_ALLY_NOTE in on_b.notes and options.AREA_SELF_NOTE not in on_b.notes
    assert on_b.hit_chance == pytest.approx(float(wild_pool_at_least(4, 16)), abs=1e-12)
    assert caught["e"][2] == pytest.approx(float(wild_pool_at_least(4, 17)), abs=5e-5)  # the note's 2 decimals of a percentage
    # The Wild Die first: 4 + 4 + 4 + 4 = 16; then one damage roll for the hit.
    events = act(state, as_command(SYSTEM, on_b.command), [4, 4, 4, 4] + [3] * 10, exact=False)
    assert one(events, R6AreaTargeted).targets == ["b", "e"]
    assert {r.target: (r.roll.total, r.roll.target, r.hit) for r in of_type(events, AttackResolved)} == {
        "b": (16, 16, True), "e": (16, 17, False)}
    assert state.combatants["a"].ammo["frag_grenade"] == 0
    assert not _areas(state, "a")  # the one grenade is gone


def test_r6_40_burst_centres_one_per_outcome_each_accepted_and_catching_whom_the_notes_say() -> None:
    """R6-40: the centres listed: one per set of combatants caught at one range modifier (the
    enemy's Space first, then empty Spaces nearest first); none beyond Long range (d), whom the
    engine refuses to reach; every listed choice accepted, catching exactly whom it names."""
    state = grenade_scene()
    act(state, cmd(R6DeclareActions, "a", count=1))
    [grenade] = _areas(state, "a")
    listed = [(c.square, sorted(_caught(c.notes)), c.hit_chance is not None) for c in grenade.choices]
    assert listed == [
        ((6, 2), ["b", "e"], True),    # on b; e next to it (the same as a burst on e's Space, which is not listed again)
        ((5, 1), ["b"], False),        # b alone: the nearest empty Space whose burst misses e
        ((6, 4), ["e"], False),        # e alone, Short range
        ((8, 2), ["e"], False),        # e alone, Medium range (-5): another outcome
    ]
    assert "-5 medium range (R6-14)" in grenade.choices[3].notes[0]
    assert grenade.choices[3].notes[0].startswith("one attack test: 4D with the Wild Die")
    for choice in grenade.choices:
        _verify(state, choice)
    beyond = R6AreaAttack(command_id="u", actor="a", weapon="frag_grenade", center=(20, 10))
    assert rejection(act(state, beyond)) == "(20, 10) is 18 Spaces away, beyond fragmentation grenade's Long range"


def test_r6_40_the_multiple_action_penalty_and_the_attacker_in_its_own_burst() -> None:
    """R6-40/05: with two actions declared the test is 3D; a burst on the adjacent enemy catches
    the thrower too (flagged "self"); its chance is the same exact count."""
    state = start(setup(combatant("a", "red", (2, 2), weapons=[GRENADE], readied=["frag_grenade"], skills={"throwing": "4D"}),
                        combatant("b", "blue", (3, 2))), [5, 5, 5, 2, 2, 2])
    act(state, cmd(R6DeclareActions, "a", count=2))
    [grenade] = _areas(state, "a")
    on_b = next(c for c in grenade.choices if c.square == (3, 2))
    caught = _caught(on_b.notes)
    assert {who: relation for who, (relation, *_rest) in caught.items()} == {"a": "self", "b": "enemy"}
    assert options.AREA_SELF_NOTE in on_b.notes and options.AREA_ALLY_NOTE not in on_b.notes
    # Point Blank +5: 3D + 5 against 16 is 3D against 11.
    assert "+5 point blank range (R6-14)" in on_b.notes[0]
    assert on_b.hit_chance == pytest.approx(float(wild_pool_at_least(3, 11)), abs=1e-12)
    assert all(sorted(_caught(c.notes)) != ["a"] for c in grenade.choices)  # a burst catching only the thrower is not listed
    for choice in grenade.choices:
        _verify(state, choice)


def test_r6_41_a_cone_is_listed_in_each_facing_with_whom_it_catches() -> None:
    """R6-41 (the sample data has no cone weapon: a flamer profile here): a Small Cone in each of
    the 8 facings; east catches the enemy b (row 2) and the ally e (row 1), flagged; no aim point,
    so no hit_chance: each caught combatant's exact chance is in the notes."""
    state = start(setup(combatant("a", "red", (2, 2), weapons=[FLAMER], readied=["flamer"]),
                        combatant("b", "blue", (4, 2)), combatant("e", "red", (3, 3), attributes={"Agility": "4D"})),
                  [5, 5, 5, 2, 2, 2, 1, 1, 1])
    act(state, cmd(R6DeclareActions, "a", count=1))
    [cone] = _areas(state, "a")
    assert (cone.label, cone.rule) == ("fire flamer (small cone)", "R6-41")
    assert [c.command["facing"] for c in cone.choices] == ["n", "ne", "e", "se", "s", "sw", "w", "nw"]
    east = cone.choices[2]
    caught = _caught(east.notes)
    assert {who: (relation, rule, defense) for who, (relation, rule, _c, defense) in caught.items()} == {
        "b": ("enemy", "R6-41", 16), "e": ("ally", "R6-41", 17)}
    assert east.hit_chance is None and east.square is None and options.AREA_ALLY_NOTE in east.notes
    assert caught["b"][2] == pytest.approx(float(wild_pool_at_least(4, 16)), abs=5e-5)
    assert "catches no one" in cone.choices[0].notes  # north: nobody there, still a legal facing
    for choice in cone.choices:
        _verify(state, choice)


def test_r6_40_a_waiting_grenadier_may_interrupt_with_the_listed_throw() -> None:
    """R6-08/40: the Wait interruption lists the area attacks too; the claimed throw is queued
    and resolved before the declared attack."""
    state = grenade_scene()
    act(state, cmd(R6DeclareActions, "a", count=2))
    act(state, cmd(R6Wait, "a"))
    act(state, cmd(EndTurn, "a"))
    act(state, cmd(R6DeclareActions, "e", count=1))
    act(state, cmd(EndTurn, "e"))
    act(state, cmd(R6DeclareActions, "b", count=1))
    act(state, cmd(R6Attack, "b", target="a", weapon="pistol"))
    window = _mine(state, "a").window
    assert window is not None and window.trigger == "action_declared"
    [interrupt] = [r for r in window.reactions if r.reaction == "interrupt"]
    throws = [c for c in interrupt.choices if c.command["options"]["command"]["type"] == "R6AreaAttack"]
    assert [c.square for c in throws] == [(6, 2), (5, 1), (6, 4), (8, 2)]
    on_b = throws[0]
    # Two actions declared: 3D, against b's 16.
    assert on_b.hit_chance == pytest.approx(float(wild_pool_at_least(3, 16)), abs=1e-12)
    events = act(state, as_command(SYSTEM, on_b.command), [6, 5, 5, 5] + [3] * 30, exact=False)
    targeted = one(events, R6AreaTargeted)
    assert (targeted.attacker, targeted.center, targeted.targets) == ("a", (6, 2), ["b", "e"])
    assert not state.combatants["a"].waiting


def test_every_area_choice_in_demo_states_is_accepted_and_catches_whom_it_names() -> None:
    """Property (issue 9): in the demo fights, every listed area choice (on a turn or as an
    interruption) is accepted; a turn's catches exactly the combatants its notes name."""
    chooser = random.Random(40)
    turns = 0
    for system, state in demo_states("rond6", [bytes([n]) * 32 for n in range(4)]):
        if not any(c.ammo.get(w.id, w.capacity) > 0 and areas.weapon_area(w) for c in state.combatants.values() for w in c.weapons):
            continue  # no grenade left in the fight: nothing to list (and the options of every state are slow to ask)
        for combatant_options in system.options(state, ENGINE_SEAT).combatants:
            for option in combatant_options.actions:
                if option.action == "R6AreaAttack":
                    for choice in chooser.sample(option.choices, min(6, len(option.choices))):
                        _verify(state, choice)
                        turns += 1
            if combatant_options.window is not None:
                for reaction in combatant_options.window.reactions:
                    for choice in reaction.choices:
                        if choice.command.get("options", {}).get("command", {}).get("type") == "R6AreaAttack":
                            decide_listed(system, state, choice.command)
    assert turns >= 5, turns


@pytest.mark.parametrize("walls_block", [True, False])
@pytest.mark.parametrize("size", ["small", "medium"])
def test_r6_40_burst_catches_is_membership_of_the_affected_burst(size: str, walls_block: bool) -> None:
    """R6-40: the options' per-Space test (`areas.burst_catches`) agrees with the Spaces the
    attack affects (`areas.affected_burst`), walls, the map's edge and line of sight included."""
    from firelane.engine.grid import Grid
    from firelane.events.schemas import Terrain, Wall

    grid = Grid(Terrain(width=12, height=9, walls=[Wall(5, y) for y in range(2, 7)] + [Wall(7, 4)]))
    for centre in [(4, 4), (6, 4), (0, 0), (8, 5)]:
        affected = set(areas.affected_burst(grid, centre, size, walls_block=walls_block))
        caught = {(x, y) for x in range(-2, 14) for y in range(-2, 11)
                  if areas.burst_catches(grid, centre, size, (x, y), walls_block=walls_block)}
        assert caught == affected, centre
