"""The shared engine machinery, exercised through a tiny test-only rule system.

The toy system ("toy"): initiative d6 + speed; Strike: d6 >= 4 hits for 1 damage;
Step: move one square, which opens a reaction window for every enemy with its
reaction, who may "snap" (d6 >= 5 hits) or "duck" (priority before snap).
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from firelane.engine.core import SEQUENCER
from firelane.engine.dice import FixedDice, SeededDice, commit_seed, derive_face, verify_die
from firelane.engine.reactions import order_claims
from firelane.engine.simulate import run_headless
from firelane.engine.state import Claim, EncounterState, copy_state
from firelane.events import codec
from tests.toy_system import TOY, Step, Strike, ToyState, setup
from firelane.events.schemas import (
    AttackResolved,
    ClaimReaction,
    CombatantSetup,
    Command,
    CommandRejected,
    EncounterEnded,
    EncounterSetup,
    EndTurn,
    Modifier,
    PassReaction,
    ReactionDenied,
    ReactionsOrdered,
    ReactionWindowClosed,
    ReactionWindowOpened,
    Roll,
    StartEncounter,
)


def started(faces: list[int], **settings: Any) -> ToyState:
    state = TOY.initial_state()
    events = TOY.decide(state, StartEncounter(command_id="s", actor=SEQUENCER, setup=setup(**settings), seed_commitment="x"), FixedDice(faces))
    for event in events:
        TOY.evolve(state, event)
    return state  # type: ignore[return-value]


def apply(state: EncounterState, command: Command, faces: list[int] = ()) -> list[Any]:  # type: ignore[assignment]
    events = TOY.decide_or_reject(state, command, FixedDice(faces))
    for event in events:
        TOY.evolve(state, event)
    return events


def test_start_rolls_initiative_and_starts_the_first_turn() -> None:
    state = started([3, 6, 1])  # a: 3+2=5, b: 6, c: 1+1=2
    assert state.turn_order == ["b", "a", "c"]
    assert state.active == "b"
    assert state.round == 1
    assert state.version == 4  # started, round, initiative, turn


def test_bad_setup_is_rejected_with_reasons() -> None:
    state = TOY.initial_state()
    bad = EncounterSetup(system="toy", combatants=[CombatantSetup(id="a", name="A", side="x")])
    events = TOY.decide_or_reject(state, StartEncounter(command_id="s", actor=SEQUENCER, setup=bad, seed_commitment=""), FixedDice([]))
    assert isinstance(events[0], CommandRejected) and "at least two" in events[0].reason
    events = TOY.decide_or_reject(state, StartEncounter(command_id="s", actor=SEQUENCER, setup=setup(bogus=1), seed_commitment=""), FixedDice([]))
    assert "unknown settings for toy: bogus" in events[0].reason
    sheet_bad = EncounterSetup(system="toy", combatants=[
        CombatantSetup(id="a", name="A", side="x", sheet={"speed": "fast"}),
        CombatantSetup(id="b", name="B", side="y")])
    events = TOY.decide_or_reject(state, StartEncounter(command_id="s", actor=SEQUENCER, setup=sheet_bad, seed_commitment=""), FixedDice([]))
    assert "combatant 'a' has an invalid sheet" in events[0].reason
    bad_policy = EncounterSetup(system="toy", combatants=[
        CombatantSetup(id="a", name="A", side="x", policy="telepathy"), CombatantSetup(id="b", name="B", side="y")])
    events = TOY.decide_or_reject(state, StartEncounter(command_id="s", actor=SEQUENCER, setup=bad_policy, seed_commitment=""), FixedDice([]))
    assert events[0].reason == "combatant 'a' has policy 'telepathy'; known: ai, human"


def test_rejected_commands_change_nothing_but_the_rejection_count() -> None:
    state = started([3, 6, 1])
    before = copy_state(state)
    for command, reason in [
        (Strike(command_id="1", actor="a", target="b"), "it is not a's turn (active: b)"),
        (Strike(command_id="2", actor="zed", target="b"), "unknown combatant 'zed'"),
        (Strike(command_id="3", actor="b", target="nobody"), "unknown combatant 'nobody'"),
        (ClaimReaction(command_id="4", actor="a", window=1, reaction="snap"), "reaction window 1 is not open (no window is open)"),
    ]:
        events = apply(state, command)
        assert len(events) == 1 and isinstance(events[0], CommandRejected)
        assert events[0].reason == reason
        assert events[0].command_id == command.command_id
    before.version += 4
    before.branch_version += 4
    before.rejected_commands = 4
    assert state == before


def test_window_orders_claims_by_priority_then_initiative_then_id() -> None:
    state = started([3, 6, 1])  # order b(6), a(5), c(2)
    apply(state, EndTurn(command_id="e", actor="b"))
    assert state.active == "a"
    events = apply(state, Step(command_id="m", actor="a", to=(1, 0)))
    assert state.window is not None and [r.combatant for r in state.window.reactors] == ["b", "c"]
    # c claims snap, b claims duck: duck has priority 0 and resolves first.
    apply(state, ClaimReaction(command_id="c1", actor="c", window=1, reaction="snap"))
    events = apply(state, ClaimReaction(command_id="b1", actor="b", window=1, reaction="duck"), faces=[5])
    ordered = next(e for e in events if isinstance(e, ReactionsOrdered))
    assert [(c.combatant, c.reaction) for c in ordered.order] == [("b", "duck"), ("c", "snap")]
    hit = next(e for e in events if isinstance(e, AttackResolved))
    assert hit.attacker == "c" and hit.hit and hit.roll.dice[0].face == 5
    assert state.window is None
    assert state.combatants["a"].hp == 1
    assert state.combatants["b"].reaction_used and state.combatants["c"].reaction_used


def test_second_reaction_in_a_round_is_rejected() -> None:
    state = started([3, 6, 1])
    apply(state, EndTurn(command_id="e", actor="b"))
    apply(state, Step(command_id="m", actor="a", to=(1, 0)))
    apply(state, PassReaction(command_id="p", actor="c", window=1))
    apply(state, ClaimReaction(command_id="b1", actor="b", window=1, reaction="snap"), faces=[1])
    apply(state, Step(command_id="m2", actor="a", to=(2, 0)))
    # Only c is still eligible: b spent its reaction this round.
    assert [r.combatant for r in state.window.reactors] == ["c"]  # type: ignore[union-attr]
    events = apply(state, ClaimReaction(command_id="b2", actor="b", window=2, reaction="snap"))
    assert events[0].reason == "b has already used its reaction this round"
    events = apply(state, ClaimReaction(command_id="c2", actor="c", window=2, reaction="dodge"))
    assert events[0].reason == "c cannot use 'dodge' here; offered: duck, snap"
    events = apply(state, EndTurn(command_id="e2", actor="a"))
    assert "waiting for reactions in window 2 (c)" in events[0].reason


def test_a_reaction_made_invalid_by_an_earlier_one_is_denied() -> None:
    state = started([3, 6, 1])
    state.combatants["a"].hp = 1
    apply(state, EndTurn(command_id="e", actor="b"))
    apply(state, Step(command_id="m", actor="a", to=(1, 0)))
    apply(state, ClaimReaction(command_id="c1", actor="c", window=1, reaction="snap"))
    events = apply(state, ClaimReaction(command_id="b1", actor="b", window=1, reaction="snap"), faces=[6])
    # b (initiative 6) fires first and drops a; c's snap is denied with a reason.
    denied = [e for e in events if isinstance(e, ReactionDenied)]
    assert [(d.combatant, d.reason) for d in denied] == [("c", "a is already down")]
    assert isinstance(events[-1], EncounterEnded) and events[-1].winner == "blue"


def test_a_reaction_to_a_reaction_nests_a_window_and_resumes_the_outer_one() -> None:
    state = TOY.initial_state()
    log: list[Any] = []

    def play(command: Command, faces: list[int] = ()) -> list[Any]:  # type: ignore[assignment]
        events = TOY.decide_or_reject(state, command, FixedDice(faces))
        for event in events:
            TOY.evolve(state, event)
        log.extend(events)
        return events

    play(StartEncounter(command_id="s", actor=SEQUENCER, setup=setup(brace=True), seed_commitment="x"), [3, 6, 1])
    play(EndTurn(command_id="e", actor="b"))  # order b(6), a(5), c(2): a is next
    play(Step(command_id="m", actor="a", to=(1, 0)))
    play(ClaimReaction(command_id="c1", actor="c", window=1, reaction="snap"))
    # b's snap (initiative 6) resolves first and hits (5): a may brace in a nested window.
    events = play(ClaimReaction(command_id="b1", actor="b", window=1, reaction="snap"), [5])
    nested = next(e for e in events if isinstance(e, ReactionWindowOpened))
    assert (nested.window, nested.trigger, nested.nested_in, nested.resume_at) == (2, "snap_hit", 1, 1)
    assert state.window.window == 2 and [w.window for w in state.suspended_windows] == [1]
    assert TOY.awaiting(state).combatants == ["a"]
    # a braces: no damage from b; the outer window resumes with c's snap (6: a hit).
    events = play(ClaimReaction(command_id="a1", actor="a", window=2, reaction="brace"), [6])
    assert [type(e).__name__ for e in events] == [
        "ReactionClaimed", "ReactionsOrdered", "ActionTaken", "ReactionWindowClosed", "ReactionWindowResumed",
        "ActionTaken", "AttackResolved", "DamageDealt", "ReactionWindowClosed"]
    assert [e.window for e in events if isinstance(e, ReactionWindowClosed)] == [2, 1]
    assert state.window is None and state.suspended_windows == []
    assert state.combatants["a"].hp == 1  # only c's snap hurt: it came after a had braced
    rebuilt = TOY.initial_state()
    for event in log:
        TOY.evolve(rebuilt, event)
    assert rebuilt == state


def test_order_claims_is_total_and_stable() -> None:
    claims = [Claim(combatant=c, reaction=r) for c, r in [("z", "snap"), ("y", "snap"), ("x", "duck"), ("w", "other")]]
    order = order_claims(claims, {"duck": 0, "snap": 1}, {"z": 3, "y": 3, "x": 1, "w": 9})
    assert [c.combatant for c in order] == ["x", "y", "z", "w"]


def test_seeded_dice_are_reproducible_and_verifiable() -> None:
    seed = b"s" * 32
    dice = SeededDice(seed, at=7)
    rolled = [dice.roll(20) for _ in range(50)]
    again = SeededDice(seed, at=7)
    assert rolled == [again.roll(20) for _ in range(50)]
    assert all(verify_die(seed, d) for d in rolled)
    assert not verify_die(b"t" * 32, rolled[0]) or derive_face(b"t" * 32, 7, 0, 20) == rolled[0].face
    faces = [derive_face(seed, at, 0, 6) for at in range(6000)]
    assert set(faces) == {1, 2, 3, 4, 5, 6}
    assert all(800 < faces.count(f) < 1200 for f in range(1, 7))


def test_fixed_dice_refuse_to_invent_faces() -> None:
    dice = FixedDice([7])
    with pytest.raises(ValueError, match="does not fit a d6"):
        dice.roll(6)
    with pytest.raises(Exception, match="only 0 faces"):
        FixedDice([]).roll(6)


def test_headless_fight_ends_and_replays_to_the_same_state() -> None:
    seed = b"k" * 32
    log = []
    final = None
    for _command, events, state in run_headless(TOY, setup(), seed):
        log.extend(events)
        final = state
    assert final is not None and final.ended and final.seed_revealed == seed.hex()
    rebuilt = TOY.initial_state()
    rebuilt.encounter = "headless"
    for event in log:
        TOY.evolve(rebuilt, event)
    assert rebuilt == final
    assert final.seed_commitment == commit_seed(seed)


def test_events_round_trip_through_the_codec_and_upcasters() -> None:
    roll = Roll(purpose="attack", rule="X-1", dice=[msgspec.structs.replace(SeededDice(b"q", 1).roll(20))],
                modifiers=[Modifier(source="agility", rule="X-2", value=3)], total=12, target=11, success=True)
    event = AttackResolved(attacker="a", target="b", weapon="w", roll=roll, hit=True)
    entry = codec.encode_event(event)
    assert entry.type == "AttackResolved" and entry.schema == 1
    assert codec.decode_body(entry.type, entry.schema, entry.data) == event

    class Renamed(codec.Event):  # a schema at v2 whose v1 called "amount" "points"
        schema_version = 2
        amount: int

    codec.register_events([Renamed])
    codec.register_upcaster("Renamed", 1, lambda body: {"amount": body.pop("points")})
    assert codec.decode_body("Renamed", 1, b'{"type":"Renamed","points":4}') == Renamed(amount=4)
    with pytest.raises(codec.UnknownEventType, match="newer"):
        codec.decode_body("Renamed", 3, b"{}")
    with pytest.raises(codec.UnknownEventType, match="unknown event type 'Nope'"):
        codec.decode_body("Nope", 1, b"{}")


def test_commands_decode_with_clear_errors() -> None:
    union = codec.command_union(TOY.command_types)
    assert codec.decode_command(b'{"type":"Strike","command_id":"1","actor":"a","target":"b"}', union) == Strike(command_id="1", actor="a", target="b")
    with pytest.raises(codec.CommandDecodeError, match="malformed JSON"):
        codec.decode_command(b'{"type":', union)
    with pytest.raises(codec.CommandDecodeError, match="invalid command"):
        codec.decode_command(b'{"type":"Fly","command_id":"1","actor":"a"}', union)
    with pytest.raises(codec.CommandDecodeError, match="target"):
        codec.decode_command(b'{"type":"Strike","command_id":"1","actor":"a"}', union)
