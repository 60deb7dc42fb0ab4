"""Projections: rebuilding from the log equals the live state; replay at any
version; checkpoints; the audit log explains and verifies every roll."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firelane.actors.policies import AIPolicy
from firelane.actors.runtime import run_encounter
from firelane.actors.sequencer import create_encounter
from firelane.engine.registry import register_system
from firelane.engine.simulate import run_headless
from firelane.engine.state import copy_state
from firelane.events import codec
from firelane.events.envelope import StoredEvent
from firelane.events.log import EventLog
from firelane.events.schemas import AttackResolved, Die
from firelane.engine.wording import explain_roll
from firelane.projections.audit import audit_entries, verify
from firelane.projections.replay import frames, state_at
from firelane.projections.turn_state import TurnStateProjection, fold
from firelane.redisio import connect
from tests.toy_system import TOY, setup

register_system(TOY, "tests.toy_system")


def headless(seed: bytes):
    events, states = [], []
    for _command, batch, state in run_headless(TOY, setup(), seed, encounter="p"):
        events.extend(batch)
        states.append(copy_state(state))
    return events, states


@settings(max_examples=40, deadline=None)
@given(st.binary(min_size=32, max_size=32))
def test_rebuilding_from_the_start_equals_the_live_state(seed: bytes) -> None:
    events, states = headless(seed)
    assert fold(TOY, events, "p") == states[-1]
    # and at every command boundary along the way
    for state in states:
        assert state_at(TOY, events, "p", state.version) == state


def as_stored(events) -> list[StoredEvent]:
    """The envelope the log would give these events, one command per batch as
    run_headless produced them (good enough for the audit's batch rule when
    each batch has its own command ID)."""
    stored = []
    for version, event in enumerate(events, start=1):
        entry = codec.encode_event(event)
        stored.append(StoredEvent(entry_id=f"{version}-0", version=version, encounter="p", type=entry.type,
                                  schema=entry.schema, data=entry.data, command_id=f"c{version}"))
    return stored


@pytest.fixture
async def event_log(redis_url: str):
    client = await connect(redis_url)
    try:
        yield EventLog(client, "proj")
    finally:
        await client.aclose()


async def live_fight(event_log: EventLog, encounter: str, seed: bytes) -> list[StoredEvent]:
    await create_encounter(event_log, encounter, setup(), seed)
    await run_encounter(event_log, encounter, TOY, {c: AIPolicy(TOY) for c in ("a", "b", "c")})
    return await event_log.read(encounter)


async def test_checkpointed_projection_resumes_to_the_same_state(event_log: EventLog) -> None:
    stored = await live_fight(event_log, "cp", b"c" * 32)
    full = fold(TOY, [codec.decode_event(s) for s in stored], "cp")
    first = TurnStateProjection(event_log, "cp", checkpoint_every=7)
    assert await first.catch_up() == full
    second = TurnStateProjection(event_log, "cp", checkpoint_every=7)
    assert await second.load_checkpoint()
    assert 0 < second.state.version <= full.version  # resumed from a checkpoint, not from zero
    assert await second.catch_up() == full


async def test_a_foreign_checkpoint_is_ignored(event_log: EventLog) -> None:
    stored = await live_fight(event_log, "cp2", b"d" * 32)
    await event_log.client.execute("SET", "firelane:{proj}:enc:cp2:checkpoint:turn_state", b"garbage")
    projection = TurnStateProjection(event_log, "cp2")
    assert not await projection.load_checkpoint()
    assert (await projection.catch_up()).version == len(stored)


async def test_audit_verifies_a_live_log_and_catches_tampering(event_log: EventLog) -> None:
    stored = await live_fight(event_log, "au", b"a" * 32)
    events = [codec.decode_event(s) for s in stored]
    report = verify(stored, events)
    assert report.ok and report.dice == sum(len(e.roll.dice) for e in audit_entries(stored, events))

    # Change one die's face (and the total with it, so the roll still adds up):
    # the verifier names the event and the expected face.
    index = next(i for i, e in enumerate(events) if isinstance(e, AttackResolved))
    attack = events[index]
    die = attack.roll.dice[0]
    forged_die = Die(sides=die.sides, face=die.face % die.sides + 1, at=die.at, k=die.k)
    forged_total = attack.roll.total + forged_die.face - die.face
    forged = msgspec.structs.replace(attack, roll=msgspec.structs.replace(attack.roll, dice=[forged_die], total=forged_total))
    tampered = list(events)
    tampered[index] = forged
    bad = verify(stored, tampered)
    assert not bad.ok
    assert bad.problems == [
        f"v{stored[index].version} AttackResolved.roll d{die.sides}: face {forged_die.face} but the seed gives {die.face}"
    ]


def test_unrevealed_seed_cannot_be_verified_and_rolls_are_explained() -> None:
    events, _states = headless(b"e" * 32)
    unrevealed = events[:-1]
    report = verify(as_stored(unrevealed), unrevealed)
    assert not report.ok and "not been revealed" in report.problems[0]
    attack = next(e for e in events if isinstance(e, AttackResolved))
    text = explain_roll(attack.roll)
    assert text.startswith(f"{attack.roll.purpose} [TOY-1] d6:{attack.roll.dice[0].face}")
    assert text.endswith("success" if attack.hit else "failure")


def test_frames_give_the_state_after_each_event() -> None:
    events, states = headless(b"f" * 32)
    last = None
    for version, _event, state in frames(TOY, events, "p"):
        assert state.version == version
        last = state
    assert last == states[-1]
    with pytest.raises(ValueError, match="outside the log"):
        state_at(TOY, events, "p", len(events) + 1)
