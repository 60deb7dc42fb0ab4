"""Replay streams the log: memory does not grow with the log's length, and the
streamed folds give what the in-memory ones give."""

from __future__ import annotations

import gc
import tracemalloc
from contextlib import aclosing

import pytest

from firelane.actors.sequencer import fold_log
from firelane.engine.registry import register_system
from firelane.engine.simulate import run_headless
from firelane.events import codec
from firelane.events.log import Batch, EventLog
from firelane.events.schemas import EncounterEnded, RoundStarted
from firelane.projections.audit import Verifier, revealed_seed, verify
from firelane.projections.replay import state_at, state_at_version, stream_frames
from firelane.projections.turn_state import TurnStateProjection, fold, fold_stream
from firelane.redisio import connect
from tests.toy_system import TOY, setup

register_system(TOY, "tests.toy_system")


@pytest.fixture
async def event_log(redis_url: str):
    client = await connect(redis_url)
    try:
        yield EventLog(client, "stream")
    finally:
        await client.aclose()


def long_log_entries(length: int):
    """A toy fight's first events, then its rounds repeated to ``length`` events
    (evolve never validates, so the repeated rounds fold like a long fight)."""
    events = [e for _c, batch, _s in run_headless(TOY, setup(), b"r" * 32, encounter="x") for e in batch]
    first_round = next(i for i, e in enumerate(events) if isinstance(e, RoundStarted))
    end = next(i for i, e in enumerate(events) if isinstance(e, EncounterEnded))
    entries = [codec.encode_event(e) for e in events]
    rounds = entries[first_round:end]
    return entries[:first_round] + [rounds[i % len(rounds)] for i in range(length - first_round)]


async def write_log(event_log: EventLog, encounter: str, length: int) -> None:
    entries = long_log_entries(length)
    for start in range(0, length, 2000):
        await event_log.append_batches(encounter, start, [Batch(entries=entries[start:start + 2000], command_id=f"b{start}")])


async def peak_bytes(fold) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        await fold()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


async def test_streamed_folds_use_the_same_memory_for_a_log_ten_times_longer(event_log: EventLog) -> None:
    await write_log(event_log, "short", 3_000)
    await write_log(event_log, "long", 30_000)

    async def projection(encounter: str) -> None:
        state = TOY.initial_state()
        state.encounter = encounter
        await fold_stream(TOY, state, event_log, encounter)
        assert state.version == await event_log.version(encounter)

    async def replay(encounter: str) -> None:
        async with aclosing(stream_frames(event_log, encounter)) as frames:
            async for _stored, _event, _state in frames:
                pass

    async def restart(encounter: str) -> None:
        await fold_log(event_log, encounter, TOY)

    async def turn_state(encounter: str) -> None:
        await TurnStateProjection(event_log, encounter, checkpoint_every=1000).catch_up()

    for fold_kind in (projection, replay, restart, turn_state):
        short = await peak_bytes(lambda: fold_kind("short"))
        long = await peak_bytes(lambda: fold_kind("long"))
        # Holding the 27,000 extra events would take well over 10 MB.
        assert long < short + 1_000_000, (fold_kind.__name__, short, long)


async def test_streamed_folds_equal_the_in_memory_folds(event_log: EventLog) -> None:
    await write_log(event_log, "eq", 2_500)
    stored = await event_log.read("eq")
    events = [codec.decode_event(s) for s in stored]
    full = fold(TOY, events, "eq")
    streamed = TOY.initial_state()
    streamed.encounter = "eq"
    end = await fold_stream(TOY, streamed, event_log, "eq", page=333)
    assert streamed == full and end.entry_id == stored[-1].entry_id
    assert await state_at_version(event_log, "eq", 1234) == state_at(TOY, events, "eq", 1234)
    versions = []
    async with aclosing(stream_frames(event_log, "eq", upto=1500, page=100)) as frames:
        async for stored_event, _event, state in frames:
            versions.append((stored_event.version, state.version))
    assert versions == [(v, v) for v in range(1, 1501)]


async def test_a_fold_refuses_a_log_with_a_gap(event_log: EventLog) -> None:
    await write_log(event_log, "gap", 10)
    state = TOY.initial_state()
    state.version = 3  # as if three events had been folded that the log does not start with
    with pytest.raises(ValueError, match=r"log tampered: v1 appears again after v3 \(a copy of a genuine entry\)"):
        await fold_stream(TOY, state, event_log, "gap")


async def test_streamed_verification_equals_verifying_the_whole_list(event_log: EventLog) -> None:
    from firelane.actors.policies import AIPolicy
    from firelane.actors.runtime import run_encounter
    from firelane.actors.sequencer import create_encounter

    await create_encounter(event_log, "v", setup(), b"v" * 32)
    await run_encounter(event_log, "v", TOY, {c: AIPolicy(TOY) for c in ("a", "b", "c")})
    stored = await event_log.read("v")
    verifier = Verifier(await revealed_seed(event_log, "v"))
    async for page in event_log.iter_read("v", page=7):
        verifier.feed(page, [codec.decode_event(s) for s in page])
    streamed, whole = verifier.report(), verify(stored)
    assert streamed.ok and whole.ok and (streamed.dice, streamed.rolls) == (whole.dice, whole.rolls) and whole.dice > 0


@pytest.mark.parametrize(("page", "count"), [(7, None), (7, 20), (7, 14), (50, None), (100, 49), (1, 3)])
async def test_iter_read_pages_through_the_log_exactly(event_log: EventLog, page, count) -> None:
    await write_log(event_log, "pages", 50)
    everything = await event_log.read("pages")
    pages = [p async for p in event_log.iter_read("pages", page=page, count=count)]
    assert all(0 < len(p) <= page for p in pages)
    assert [s for p in pages for s in p] == everything[:count]
    after = everything[9].entry_id
    assert [s for p in [p async for p in event_log.iter_read("pages", after, page=page, count=count)] for s in p] == \
        everything[10:][:count]


async def test_stopping_a_long_read_early_leaves_no_connection_open(event_log: EventLog) -> None:
    await write_log(event_log, "early", 5_000)
    before = event_log.client.open_connection_count
    async with aclosing(event_log.iter_read("early", page=100)) as pages:
        seen = 0
        async for page in pages:
            seen += len(page)
            if seen >= 1_000:
                break  # a prefetched page is in flight on the read's own connection
    assert event_log.client.open_connection_count == before
    assert len(await event_log.read("early", count=10)) == 10  # the pool is healthy


async def test_a_hand_pipelined_connection_answers_in_order_and_raises_error_replies(event_log: EventLog) -> None:
    from firelane.redisio.client import RedisError

    async with event_log.client.dedicated() as connection:
        await connection.send("SET", "stream:k", "1")
        await connection.send("INCR", "stream:k")
        await connection.send("HGET", "stream:k", "x")  # wrong type
        assert await connection.receive() == b"OK"
        assert await connection.receive() == 2
        with pytest.raises(RedisError, match="WRONGTYPE"):
            await connection.receive()
        await connection.send("GET", "stream:k")
        assert await connection.receive() == b"2"  # still in step after an error reply


@pytest.mark.parametrize("system_name", ["bolt-and-blade", "d100-degrees", "d100-zones", "rond6"])
def test_an_event_evolve_says_it_does_not_read_changes_nothing_but_the_count(system_name: str) -> None:
    # A fold skips decoding the bodies of types evolve does not read
    # (evolve_reads); that is only right if evolving them changes nothing else.
    from firelane.engine.registry import demo_setup, get_system
    from firelane.engine.state import copy_state
    from firelane.projections.snapshots import encode_snapshot

    system = get_system(system_name)
    events = [e for _c, batch, _s in run_headless(system, demo_setup(system_name), b"u" * 32, encounter="u")
              for e in batch]
    unread = {type(e) for e in events if not system.evolve_reads(type(e))}
    if system_name == "bolt-and-blade":
        assert {"AttackResolved", "TestRolled"} <= {t.__name__ for t in unread}  # it does skip some
    state = system.initial_state()
    state.encounter = "u"
    skipped = 0
    for event in events:
        if type(event) in unread:
            counted = copy_state(state)
            system.evolve_without_reading(counted)
            system.evolve(state, event)
            assert encode_snapshot(system, counted, "0-0", {}) == encode_snapshot(system, state, "0-0", {}), type(event)
            skipped += 1
        else:
            system.evolve(state, event)
    assert skipped == sum(type(e) in unread for e in events)
    assert state.ended


@pytest.mark.parametrize("system_name", ["bolt-and-blade", "d100-degrees", "d100-zones", "rond6"])
def test_each_types_evolver_folds_as_evolve_does(system_name: str) -> None:
    # A fold calls one evolver per type (its lookups done once) instead of evolve.
    from firelane.engine.registry import demo_setup, get_system
    from firelane.projections.snapshots import encode_snapshot

    system = get_system(system_name)
    events = [e for _c, batch, _s in run_headless(system, demo_setup(system_name), b"v" * 32, encounter="v")
              for e in batch]
    by_evolve, by_evolver = system.initial_state(), system.initial_state()
    by_evolve.encounter = by_evolver.encounter = "v"
    for event in events:
        system.evolve(by_evolve, event)
        evolver = system.evolver(type(event))
        if evolver is None:
            system.evolve_without_reading(by_evolver)
        else:
            evolver(by_evolver, event)
    assert by_evolver.ended and by_evolver.version == len(events)
    assert encode_snapshot(system, by_evolver, "0-0", {}) == encode_snapshot(system, by_evolve, "0-0", {})
