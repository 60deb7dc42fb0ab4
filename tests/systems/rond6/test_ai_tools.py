"""RonD6 AI with the aux tools: a grenadier throws a burst only where it catches
two enemies it is likely to hit and none of its own side (else it shoots, or
closes to Short range first); a medic treats an untreated, treatable ally within
reach (or a partial move away) and otherwise fights."""

from __future__ import annotations

from firelane.engine.state import copy_state
from firelane.engine.systems.rond6 import SYSTEM
from firelane.engine.systems.rond6.aux_schemas import (
    R6AreaAttack,
    R6AreaTargeted,
    R6Heal,
    R6Healed,
    R6Move,
)
from firelane.engine.systems.rond6.schemas import R6Attack, R6DeclareActions
from tests.systems.rond6.r6helpers import PISTOL, act, combatant, of_type, setup, start

GRENADE = {"id": "grenade", "name": "fragmentation grenade", "kind": "thrown", "skill": "throwing", "damage": "5D",
           "ranges": [5, 10, 15], "capacity": 1, "modes": ["burst:small"]}
# Initiative faces (3D Perception each, by ID): the first combatant, the one
# under test, acts first; no Wild Die 6 explodes and no tie is re-rolled.
FIRST = [5, 5, 5]
LATER = [1, 1, 1, 1, 1, 2, 1, 2, 2]


def ai(state, combatant_id: str):
    first = SYSTEM.choose_command(state, combatant_id)
    again = SYSTEM.choose_command(copy_state(state), combatant_id)
    assert first == again  # a pure function of the state
    return first


def grenadier(position: tuple[int, int] = (0, 0)):
    return combatant("a", "red", position, weapons=[PISTOL, GRENADE], readied=["pistol", "grenade"], skills={"throwing": "5D"})


def declare_and_choose(state, cid: str):
    declare = ai(state, cid)
    assert isinstance(declare, R6DeclareActions)
    act(state, declare)
    return declare.count, ai(state, cid)


# --------------------------------------------------------------------------- the grenade


def test_grenadier_throws_at_two_enemies_in_short_range_with_no_ally_caught() -> None:
    """Two adjacent enemies 4 Spaces away: one declared action, a small burst centred on one of them."""
    state = start(setup(grenadier(), combatant("b", "red", (0, 6)), combatant("x", "blue", (4, 0)), combatant("y", "blue", (4, 1))),
                  FIRST + LATER)
    count, throw = declare_and_choose(state, "a")
    assert count == 1
    assert isinstance(throw, R6AreaAttack) and throw.weapon == "grenade" and throw.center in {(4, 0), (4, 1)}
    events = act(state, throw, [4] * 20, exact=False)
    assert of_type(events, R6AreaTargeted)[0].targets == ["x", "y"]


def test_grenadier_holds_the_grenade_when_an_ally_or_too_few_enemies_would_be_caught() -> None:
    """An ally next to the enemies, or the enemies spread out: shoot the pistol (never the grenade as a gun)."""
    ally_next_to_them = start(setup(grenadier(), combatant("b", "red", (5, 1)), combatant("x", "blue", (4, 0)), combatant("y", "blue", (4, 1))),
                              FIRST + LATER)
    spread_out = start(setup(grenadier(), combatant("b", "red", (0, 6)), combatant("x", "blue", (4, 0)), combatant("y", "blue", (4, 4))),
                       FIRST + LATER)
    for state in (ally_next_to_them, spread_out):
        _count, attack = declare_and_choose(state, "a")
        assert isinstance(attack, R6Attack) and attack.weapon == "pistol"


def test_grenadier_closes_to_short_range_before_throwing() -> None:
    """Two adjacent enemies 9 Spaces away (Medium range, -5: a likely miss): a full move to Short range instead."""
    state = start(setup(grenadier(), combatant("b", "red", (0, 6)), combatant("x", "blue", (9, 0)), combatant("y", "blue", (9, 1))),
                  FIRST + LATER)
    count, move = declare_and_choose(state, "a")
    assert count == 1
    assert isinstance(move, R6Move) and move.pace == "full" and move.to == (4, 0)  # by destination, as listed (issue 9)


# --------------------------------------------------------------------------- the medic


def medic(position: tuple[int, int] = (0, 0)):
    return combatant("a", "red", position, skills={"medicine": "5D"})


def test_medic_treats_a_wounded_adjacent_ally_as_its_one_action() -> None:
    """A wounded ally next to it: one declared action, an assisted healing (R6-43) of that ally."""
    state = start(setup(medic(), combatant("b", "red", (1, 0)), combatant("x", "blue", (8, 0))), FIRST + LATER[:6])
    state.combatants["b"].wounds = 1
    count, heal = declare_and_choose(state, "a")
    assert count == 1
    assert isinstance(heal, R6Heal) and (heal.patient, heal.kind) == ("b", "assisted")
    events = act(state, heal, [5] * 10, exact=False)
    assert of_type(events, R6Healed)[0].wounds_after == 0


def test_medic_moves_to_a_wounded_ally_then_treats_it() -> None:
    """The wounded ally 3 Spaces away: two declared actions, a partial move next to it, then the treatment."""
    state = start(setup(medic(), combatant("b", "red", (0, 3)), combatant("x", "blue", (12, 0))), FIRST + LATER[:6])
    state.combatants["b"].wounds = 1
    count, move = declare_and_choose(state, "a")
    assert count == 2
    assert isinstance(move, R6Move) and move.pace == "partial" and move.to == (0, 2)  # by destination, as listed (issue 9)
    act(state, move)
    heal = ai(state, "a")
    assert isinstance(heal, R6Heal) and heal.patient == "b"


def test_medic_fights_when_nobody_is_hurt_treated_or_treatable() -> None:
    """No Wound, a Wound already treated (once per injury), or 3 Wounds (Very Difficult 25, beyond a 5D
    medic's expected 17.5): the medic shoots instead."""
    for wounds, treated in ((0, 0), (1, 1), (3, 0)):
        state = start(setup(medic(), combatant("b", "red", (1, 0)), combatant("x", "blue", (8, 0))), FIRST + LATER[:6])
        state.combatants["b"].wounds = wounds
        state.combatants["b"].aux = {"treated_wounds": treated}
        _count, attack = declare_and_choose(state, "a")
        assert isinstance(attack, R6Attack), (wounds, treated, attack)
