"""D100Z-01 initiative, D100Z-02 zones, D100Z-03 moving and attacking."""

from __future__ import annotations

import pytest

from firelane.engine.systems.d100_zones import rules
from firelane.engine.systems.d100_zones.schemas import D100ZAttack, D100ZMove
from firelane.events.schemas import ActionTaken, InitiativeRolled, Moved

from .helpers import act, end_turn, fighter, make_setup, of_type, one, rejection, start, start_logged


def test_D100Z_01_initiative_is_d100_plus_spd_highest_first_natural_90_acts_last() -> None:
    """D100Z-01: 1d100 + SPD, highest first; a natural 90+ acts last (no other penalty); ties: SPD, then ID."""
    setup = make_setup([
        fighter("a1", "red", (1, 1), speed=10),
        fighter("a2", "red", (1, 3), speed=5),
        fighter("b1", "blue", (20, 1), speed=0),
        fighter("b2", "blue", (20, 3), speed=15),
    ])
    state, events = start_logged(setup, [40, 95, 60, 35])  # a1 50, a2 100 (natural 95), b1 60, b2 50
    rolled = one(events, InitiativeRolled)
    assert {e.combatant: e.total for e in rolled.entries} == {"a1": 50, "a2": 100, "b1": 60, "b2": 50}
    assert rolled.order == ["b1", "b2", "a1", "a2"]  # b2 beats a1 on SPD; a2 acts last despite 100
    a2 = next(e for e in rolled.entries if e.combatant == "a2")
    assert a2.roll.notes == ["natural 90+: acts last (D100Z-01)"] and a2.roll.rule == "D100Z-01"
    assert state.active == "b1"


def test_D100Z_01_initiative_is_rolled_again_every_round() -> None:
    """D100Z-01: each round begins with initiative; the fallen do not roll."""
    state = start(make_setup([fighter("a1", "red", (1, 1)), fighter("b1", "blue", (20, 1)), fighter("b2", "blue", (20, 5))]))
    assert state.turn_order == ["a1", "b1", "b2"]
    state.combatants["b1"].out_of_fight = True
    end_turn(state)
    events = end_turn(state, [10, 90])  # a1 10, b2 natural 90 -> last anyway
    rolled = one(events, InitiativeRolled)
    assert rolled.round == 2 and [e.combatant for e in rolled.entries] == ["a1", "b2"]
    assert rolled.order == ["a1", "b2"] and state.active == "a1"


@pytest.mark.parametrize(("metres", "zone", "moves"), [
    (0, "engaged", 0), (2, "engaged", 0), (3, "close", 1), (15, "close", 1), (16, "far", 2), (50, "far", 2), (51, "distant", 3), (120, "distant", 3),
])
def test_D100Z_02_zones_by_distance(metres: float, zone: str, moves: int) -> None:
    """D100Z-02: Engaged 0-2 m (already there), Close 3-15 m (1 action), Far 16-50 m (2), Distant 51 m+ (3+)."""
    assert rules.zone_of(metres) == zone
    assert rules.zone_moves(metres) == moves


def test_D100Z_02_a_distant_move_is_refused_in_one_turn() -> None:
    """D100Z-02: more than 50 m in a turn is Distant and takes 3+ actions; 50 m (Far) is the most."""
    state = start(make_setup([fighter("a1", "red", (0, 0)), fighter("b1", "blue", (29, 19))]))
    path = [(x, 0) for x in range(1, 27)]  # 26 squares = 52 m
    reason = rejection(act(state, D100ZMove(command_id="m", actor="a1", path=path)))
    assert reason == "a1 would move 52 m this turn; beyond 50 m is Distant and takes 3+ actions (D100Z-02)"
    events = act(state, D100ZMove(command_id="m", actor="a1", path=path[:25]))
    assert one(events, Moved).cost == 50.0 and one(events, ActionTaken).action == "move"


def test_D100Z_03_one_zone_move_and_attack_is_free() -> None:
    """D100Z-03: moving up to 15 m costs nothing; the attack still takes the action."""
    state = start(make_setup([fighter("a1", "red", (0, 5)), fighter("b1", "blue", (12, 5))]))
    events = act(state, D100ZMove(command_id="m", actor="a1", path=[(x, 5) for x in range(1, 8)]))  # 7 squares = 14 m
    assert not of_type(events, ActionTaken) and one(events, Moved).cost == 14.0
    assert not state.combatants["a1"].action_used
    events = act(state, D100ZAttack(command_id="a", actor="a1", target="b1"), [99])
    assert one(events, ActionTaken).action == "attack"


def test_D100Z_03_moving_more_than_one_zone_costs_the_attack() -> None:
    """D100Z-03: moving more than 15 m in a turn spends the action: no attack that turn."""
    state = start(make_setup([fighter("a1", "red", (0, 5)), fighter("b1", "blue", (20, 5))]))
    events = act(state, D100ZMove(command_id="m", actor="a1", path=[(x, 5) for x in range(1, 9)]))  # 16 m
    spent = one(events, ActionTaken)
    assert (spent.action, spent.slot, spent.rule) == ("move", "action", "D100Z-03")
    assert spent.details["because"] == ["moving more than one zone (16 m this turn, over 15 m)"]
    reason = rejection(act(state, D100ZAttack(command_id="a", actor="a1", target="b1")))
    assert reason == "a1 has already used its action this turn (move); an attack needs it"


def test_D100Z_03_moves_add_up_over_the_turn() -> None:
    """D100Z-03: two moves of 10 m and 6 m make 16 m: the second one costs the action; after an attack it is refused."""
    state = start(make_setup([fighter("a1", "red", (0, 5)), fighter("b1", "blue", (20, 5))]))
    act(state, D100ZMove(command_id="m1", actor="a1", path=[(x, 5) for x in range(1, 6)]))
    act(state, D100ZAttack(command_id="a", actor="a1", target="b1"), [99])
    reason = rejection(act(state, D100ZMove(command_id="m2", actor="a1", path=[(6, 5), (7, 5), (8, 5)])))
    assert reason == "moving more than one zone (16 m this turn, over 15 m) costs the action, and a1 has already used it (attack) (D100Z-03)"
    act(state, D100ZMove(command_id="m3", actor="a1", path=[(6, 5)]))
    assert state.combatants["a1"].moved_m == 12.0 and state.combatants["a1"].position == (6, 5)


def test_D100Z_03_moves_are_checked_square_by_square() -> None:
    state = start(make_setup([fighter("a1", "red", (0, 5)), fighter("b1", "blue", (2, 5))], walls=[(1, 6)]))
    assert rejection(act(state, D100ZMove(command_id="m", actor="a1", path=[(1, 6)]))) == "cannot move: step 1 to (1, 6) is blocked by a wall"
    assert rejection(act(state, D100ZMove(command_id="m", actor="a1", path=[(1, 5), (2, 5)]))) == "cannot move: step 2 to (2, 5) is occupied"
    assert rejection(act(state, D100ZMove(command_id="m", actor="b1", path=[(3, 5)]))) == "it is not b1's turn (active: a1)"
