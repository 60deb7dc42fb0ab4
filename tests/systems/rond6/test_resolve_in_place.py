"""A declared action and a claim resolve on the decision itself, without a copy
of the state (issue 12), and still as a transaction: an action that is no
longer possible is lost whole, a claim that is no longer possible is denied
and changes nothing; a refusal after an event is an internal error."""

from __future__ import annotations

import msgspec
import pytest

from firelane.engine.core import GM
from firelane.engine.dice import FixedDice
from firelane.engine.systems.rond6 import SYSTEM, actions
from firelane.engine.systems.rond6.reactions import RefusedAfterEvents
from firelane.engine.systems.rond6.aux_schemas import R6Move
from firelane.engine.systems.rond6.schemas import R6ActionDeclared, R6ActionLost, R6ActionsDeclared, R6Attack, R6Charge, R6DeclareActions, R6Wait
from firelane.events.schemas import (
    ActionTaken,
    AttackResolved,
    ClaimReaction,
    EndTurn,
    GMAdjust,
    Moved,
    PassReaction,
    ReactionDenied,
    ReactionWindowOpened,
)
from tests.systems.rond6.r6helpers import KNIFE, SPEAR, act, cmd, combatant, of_type, one, rejection, setup, start


def encoded(state: object) -> bytes:
    return msgspec.msgpack.encode(state)


def test_a_charge_whose_target_holds_an_unknown_set_weapon_is_lost_whole() -> None:
    """R6-28: the set weapon a charge runs onto is looked up before the charge spends its
    action or moves: a set weapon the target does not have (the GM set it) loses the
    charge with the reason, and nothing of it happens."""
    state = start(setup(combatant("a", "red", (0, 0), weapons=[KNIFE], readied=["knife"]),
                        combatant("b", "blue", (4, 0), weapons=[SPEAR], readied=["spear"])), [4, 4, 4, 2, 2, 2])
    act(state, GMAdjust(command_id="g1", actor=GM, combatant="b", changes={"set_weapon": "halberd"}, reason="a test"))
    act(state, cmd(R6DeclareActions, "a", count=1))
    events = act(state, cmd(R6Charge, "a", target="b"))
    assert one(events, R6ActionDeclared).action == "R6Charge"
    lost = one(events, R6ActionLost)
    assert (lost.combatant, lost.action, lost.reason) == ("a", "R6Charge", "b has no weapon 'halberd'; it has: spear, unarmed")
    assert not of_type(events, ActionTaken) and not of_type(events, Moved)
    a = state.combatants["a"]
    assert (a.position, a.actions_used, "charging" in a.conditions) == ((0, 0), 0, False)


def test_a_defense_claim_with_no_action_left_after_its_declaration_changes_nothing() -> None:
    """R6-05/16: b has not declared and will lose its next 2 actions; it claims a dodge
    declaring 2 actions: the declaration would lose both, so no action is left to dodge
    with. The claim is denied and the declaration is not kept."""
    state = start(setup(combatant("a", "red", (0, 0)), combatant("b", "blue", (3, 0))), [4, 4, 4, 2, 2, 2])
    act(state, GMAdjust(command_id="g1", actor=GM, combatant="b", changes={"actions_lost": 2}, reason="a test"))
    act(state, cmd(R6DeclareActions, "a", count=1))
    window = one(act(state, cmd(R6Attack, "a", target="b")), ReactionWindowOpened)
    assert [(r.combatant, r.reactions) for r in window.reactors] == [("b", ["dodge"])]
    # The dodge is denied; a's attack then rolls: firearms 4D 8 vs b's Passive Defense 16, a miss.
    events = act(state, cmd(ClaimReaction, "b", window=window.window, reaction="dodge", options={"declare": 2}), [2, 2, 2, 2])
    denied = one(events, ReactionDenied)
    assert (denied.combatant, denied.reason) == ("b", "b has 0 of its 2 declared actions left this round, needs 1 (R6-05)")
    assert not of_type(events, R6ActionsDeclared)
    assert one(events, AttackResolved).hit is False
    b = state.combatants["b"]
    assert (b.declared_actions, b.actions_used, b.actions_lost, b.active_defense) == (0, 0, 2, {})


def test_an_action_refused_after_its_first_event_is_an_internal_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """A declared action runs on the decision itself: one whose perform refuses after
    it has emitted (a bug: its checks must all come first) is raised as an internal
    error, not recorded as a lost action with half of it applied."""

    def spend_then_refuse(system, decision, actor, command, dice, queue):  # type: ignore[no-untyped-def]
        system.spend_action(decision, actor, action="wait")
        raise actions.Rejected("refused too late")

    monkeypatch.setitem(actions.SPECS, R6Wait, actions.Spec(actions.check_wait, spend_then_refuse))
    state = start(setup(combatant("a", "red", (0, 0)), combatant("b", "blue", (3, 0))), [4, 4, 4, 2, 2, 2])
    act(state, cmd(R6DeclareActions, "a", count=2))
    before = encoded(state)
    with pytest.raises(RefusedAfterEvents, match="refused after 1 of its events were applied: refused too late"):
        SYSTEM.decide(state, cmd(R6Wait, "a"), FixedDice([]))
    assert encoded(state) == before  # decide works on a copy: the state given is untouched


def test_checking_an_interrupting_move_leaves_the_state_as_it_was() -> None:
    """R6-08: a move claimed as an interruption is checked on the state itself (no copy),
    acting as the interrupter meanwhile; the state is left exactly as it was, whether
    the move passes its checks or not."""
    state = start(setup(combatant("a", "red", (0, 0)), combatant("b", "blue", (3, 0))), [4, 4, 4, 2, 2, 2])
    act(state, cmd(R6DeclareActions, "a", count=2))
    act(state, cmd(R6Wait, "a"))
    act(state, cmd(EndTurn, "a"))
    before = encoded(state)
    move = R6Move(command_id="m", actor="a", path=[(0, 1), (0, 2)], pace="partial")
    SYSTEM.check_command(state, "a", move, interrupt=True)
    assert encoded(state) == before and state.interrupting == ""
    with pytest.raises(actions.Rejected, match=r"^it is not a's turn \(active: b\)"):
        SYSTEM.check_command(state, "a", move)  # not an interruption: off its turn, refused
    far = R6Move(command_id="m", actor="a", path=[(0, 1), (0, 2), (0, 3), (0, 4)], pace="partial")
    with pytest.raises(actions.Rejected, match="a Partial Move covers at most 3 Spaces"):
        SYSTEM.check_command(state, "a", far, interrupt=True)
    assert encoded(state) == before and state.interrupting == ""


def test_a_declared_aux_action_the_rules_refuse_is_rejected_at_its_declaration() -> None:
    """A strenuous move past the Fortitude rounds needs a fatigue test of the
    ``strenuous_test_base`` level: an unknown level refuses the move when it is
    declared (the check comes before the move's first event), not after."""
    state = start(setup(combatant("a", "red", (0, 0)), combatant("b", "blue", (9, 9)), strenuous_test_base="impossible-ish"),
                  [4, 4, 4, 2, 2, 2])
    store = state.combatants["a"].aux
    store.update({"strenuous_streak": 5, "strenuous_round": state.round - 1})  # 5 strenuous rounds in a row: a test is due
    act(state, cmd(R6DeclareActions, "a", count=1))
    reason = rejection(act(state, cmd(R6Move, "a", path=[(1, 0), (2, 0), (3, 0)], pace="full")))
    assert reason.startswith("R6Move: ") and "impossible-ish" in reason
    assert state.combatants["a"].actions_used == 0
