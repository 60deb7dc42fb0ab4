"""D100D-02: a turn is one Full Action or two Half Actions; movement (house default)."""

from __future__ import annotations

from firelane.engine.systems.d100_degrees.schemas import (
    D100DAllOutAttack,
    D100DBasicAttack,
    D100DControlledFire,
    D100DMove,
    D100DSuppressingFire,
)
from firelane.events.schemas import ActionTaken, EndTurn, Moved

from .helpers import act, fighter, make_setup, one, rejection, start


def _two_sides():
    return make_setup([fighter("a1", "red", (2, 5)), fighter("b1", "blue", (10, 5)), fighter("b2", "blue", (15, 9))], walls=[(4, 6)])


def test_D100D_02_two_half_actions_then_the_turn_is_used() -> None:
    """D100D-02: Move (Half) + Controlled Fire (Half) fill the turn; a third action is refused."""
    state = start(_two_sides())
    events = act(state, D100DMove(command_id="m", actor="a1", path=[(3, 5), (4, 5), (5, 5)]))
    assert one(events, ActionTaken).slot == "half" and one(events, Moved).path == [(3, 5), (4, 5), (5, 5)]
    assert state.combatants["a1"].position == (5, 5) and state.combatants["a1"].half_actions_used == 1
    events = act(state, D100DControlledFire(command_id="f", actor="a1", target="b1"), [90])  # a miss, no jam (< 97)
    assert one(events, ActionTaken).action == "controlled_fire" and one(events, ActionTaken).slot == "half"
    assert state.combatants["a1"].half_actions_used == 2
    reason = rejection(act(state, D100DControlledFire(command_id="g", actor="a1", target="b1")))
    assert reason == "a1 has already used its whole turn (two Half Actions or one Full Action, D100D-02)"


def test_D100D_02_full_action_needs_the_whole_turn() -> None:
    """D100D-02: a Full Action (Suppressing Fire, All Out Attack) cannot follow a Half Action."""
    state = start(_two_sides())
    act(state, D100DMove(command_id="m", actor="a1", path=[(3, 5)]))
    reason = rejection(act(state, D100DSuppressingFire(command_id="s", actor="a1", toward=(10, 5))))
    assert reason == "Suppressing Fire is a Full Action and a1 has already used 1 Half Action this turn (D100D-02)"
    reason = rejection(act(state, D100DAllOutAttack(command_id="s", actor="a1", target="b1")))
    assert reason == "All Out Attack is a Full Action and a1 has already used 1 Half Action this turn (D100D-02)"


def test_D100D_02_a_full_action_spends_both_halves_and_turns_reset() -> None:
    """D100D-02: after a Full Action nothing else fits; the next turn starts fresh."""
    state = start(make_setup([fighter("a1", "red", (5, 5)), fighter("b1", "blue", (6, 5)), fighter("b2", "blue", (15, 9))]))
    events = act(state, D100DAllOutAttack(command_id="x", actor="a1", target="b1"), [99])
    assert one(events, ActionTaken).slot == "full"
    assert state.combatants["a1"].half_actions_used == 2
    assert rejection(act(state, D100DBasicAttack(command_id="y", actor="a1", target="b1"))).startswith("a1 has already used its whole turn")
    act(state, EndTurn(command_id="e1", actor="a1"))
    act(state, EndTurn(command_id="e2", actor="b1"))
    act(state, EndTurn(command_id="e3", actor="b2"))
    assert state.round == 2 and state.active == "a1" and state.combatants["a1"].half_actions_used == 0


def test_D100D_02_move_is_a_half_action_of_agility_bonus_metres() -> None:
    """House default movement: a Half Action of Agility Bonus metres; walls, occupied squares, jumps refused."""
    state = start(_two_sides())
    reason = rejection(act(state, D100DMove(command_id="m", actor="a1", path=[(3, 5), (4, 5), (5, 5), (6, 5)])))
    assert reason == "a1 can move 3 m in a Half Action, not 4 m (house default)"
    assert rejection(act(state, D100DMove(command_id="m", actor="a1", path=[(3, 6), (4, 6)]))) == "cannot move: step 2 to (4, 6) is blocked by a wall"
    assert rejection(act(state, D100DMove(command_id="m", actor="a1", path=[(4, 5)]))) == "cannot move: step 1 from (2, 5) to (4, 5) is not to a neighbouring square"
    assert rejection(act(state, D100DMove(command_id="m", actor="a1", path=[(1, 5), (0, 5), (-1, 5)]))) == "cannot move: step 3 to (-1, 5) leaves the map"


def test_D100D_02_commands_out_of_turn_are_refused() -> None:
    state = start(_two_sides())
    assert rejection(act(state, D100DMove(command_id="m", actor="b1", path=[(9, 5)]))) == "it is not b1's turn (active: a1)"
    assert rejection(act(state, D100DControlledFire(command_id="f", actor="a1", target="nobody"))) == "unknown target 'nobody'"
    assert rejection(act(state, D100DControlledFire(command_id="f", actor="a1", target="a1"))) == "a1 cannot attack itself"
