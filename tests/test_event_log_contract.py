"""The event log's contract, against a real redis-server.

What every writer and reader relies on: expected-version appends that write
all or nothing, idempotency per command id (also across cancelled attempts),
ordered paged reads, and a follow loop that can be cancelled anywhere and
resumed from the last entry it yielded without losing or repeating events.
"""

from __future__ import annotations

import itertools
from contextlib import aclosing

import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from firelane.events.envelope import NewEntry, StoredEvent
from firelane.events.log import AppendResult, Batch, EventLog, InboxTidy, PendingDrops, VersionConflict
from firelane.redisio import RedisClient, connect

_unique = itertools.count()

# Hypothesis runs each example in a fresh trio run, so those tests open their
# own client (trio fixtures do not carry across runs). The database is flushed
# once per test, not per example, so examples use fresh encounter ids.
_hypothesis_settings = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)

# Keeps the server busy (scripts run to completion before any other command)
# so a request sent meanwhile is executed only after its sender gave up.
_BUSY_SCRIPT = """
local start = redis.call('TIME')
local deadline = start[1] * 1000000 + start[2] + tonumber(ARGV[1])
while true do
  local now = redis.call('TIME')
  if now[1] * 1000000 + now[2] >= deadline then return 1 end
end
"""


def _entry(i: int, type_: str = "Happened") -> NewEntry:
    return NewEntry(type=type_, schema=1, data=b'{"i":%d}' % i)


def _fresh_encounter() -> str:
    return f"enc-{next(_unique)}"


@pytest.fixture
def log(redis_client: RedisClient) -> EventLog:
    return EventLog(redis_client, "camp")


# -- append and read -------------------------------------------------------------


async def test_append_then_read_round_trips_every_field(log: EventLog) -> None:
    result = await log.append(
        "e1",
        0,
        [NewEntry(type="Moved", schema=2, data=b'{"to":[1,2]}'), _entry(2, "Attacked")],
        command_id="cmd-1",
        causation="1-0",
        inbox_cursor="5-1",
    )
    assert result.version == 2 and not result.duplicate and len(result.entry_ids) == 2
    events = await log.read("e1")
    assert [e.entry_id for e in events] == result.entry_ids
    first, second = events
    assert first == StoredEvent(
        entry_id=result.entry_ids[0],
        version=1,
        encounter="e1",
        type="Moved",
        schema=2,
        data=b'{"to":[1,2]}',
        command_id="cmd-1",
        causation="1-0",
        inbox_cursor="5-1",
    )
    assert (second.version, second.type, second.data) == (2, "Attacked", b'{"i":2}')
    assert await log.version("e1") == 2
    assert await log.version("never-written") == 0
    assert await log.read("never-written") == []


async def test_keys_share_the_campaign_hash_tag(log: EventLog) -> None:
    await log.append("e1", 0, [_entry(1)], command_id="c")
    await log.submit("e1", b"p", seat="alice")
    await log.register_encounter("e1", b"m")
    keys = sorted(k.decode() for k in await log.client.execute("KEYS", "firelane:{*"))
    assert keys == [
        "firelane:{camp}:enc:e1:applied",
        "firelane:{camp}:enc:e1:inbox:alice",
        "firelane:{camp}:enc:e1:log",
        "firelane:{camp}:enc:e1:version",
        "firelane:{camp}:encounter_meta",
        "firelane:{camp}:encounters",
    ]
    # Store-wide, outside the campaign's slot: what `firelane serve` watches.
    assert await log.client.execute("SMEMBERS", "firelane:campaigns") == [b"camp"]


async def test_version_conflict_raises_and_writes_nothing(log: EventLog) -> None:
    await log.append("e1", 0, [_entry(1)])
    with pytest.raises(VersionConflict) as caught:
        await log.append("e1", 0, [_entry(2), _entry(3)], command_id="late")
    assert (caught.value.expected, caught.value.actual) == (0, 1)
    with pytest.raises(VersionConflict):
        await log.append("e1", 5, [_entry(2)])
    assert await log.version("e1") == 1
    # A conflicting command was not recorded as applied, so it can still go in.
    assert await log.applied_entry_id("e1", "late") is None
    assert (await log.append("e1", 1, [_entry(2)], command_id="late")).version == 2


async def test_duplicate_command_is_applied_once(log: EventLog) -> None:
    first = await log.append("e1", 0, [_entry(1), _entry(2)], command_id="cmd-a")
    again = await log.append("e1", 0, [_entry(1), _entry(2)], command_id="cmd-a")
    # Nothing written; the result points at the last entry the first append wrote.
    assert again == AppendResult(version=2, entry_ids=[], duplicate=True, first_entry_id=first.entry_ids[-1])
    assert await log.applied_entry_id("e1", "cmd-a") == first.entry_ids[-1]
    # The duplicate check wins over the version check, whatever version is passed.
    assert (await log.append("e1", 7, [_entry(9)], command_id="cmd-a")).duplicate
    assert [e.version for e in await log.read("e1")] == [1, 2]


async def test_several_batches_append_in_one_call_each_with_its_command(log: EventLog) -> None:
    results = await log.append_batches("eb", 0, [
        Batch(entries=[_entry(1), _entry(2)], command_id="c1", inbox_cursor="5-0"),
        Batch(entries=[_entry(3)], command_id="c2", inbox_cursor="6-0"),
    ])
    assert [(r.version, len(r.entry_ids), r.duplicate) for r in results] == [(2, 2, False), (3, 1, False)]
    stored = await log.read("eb")
    assert [(e.version, e.command_id, e.inbox_cursor) for e in stored] == [(1, "c1", "5-0"), (2, "c1", "5-0"), (3, "c2", "6-0")]
    # A retry of both: the first is a duplicate and nothing after it is attempted.
    retry = await log.append_batches("eb", 0, [Batch(entries=[_entry(1)], command_id="c1"), Batch(entries=[_entry(3)], command_id="c2")])
    assert retry == [AppendResult(version=3, entry_ids=[], duplicate=True, first_entry_id=results[0].entry_ids[-1])]
    # A stale expected version: conflict, nothing written.
    with pytest.raises(VersionConflict):
        await log.append_batches("eb", 1, [Batch(entries=[_entry(9)], command_id="c3")])
    # A batch after a new one that is a duplicate stops there, keeping the first.
    mixed = await log.append_batches("eb", 3, [Batch(entries=[_entry(4)], command_id="c4"), Batch(entries=[_entry(5)], command_id="c2")])
    assert [r.duplicate for r in mixed] == [False, True]
    assert await log.version("eb") == 4


async def test_empty_batch_marks_a_command_applied(log: EventLog) -> None:
    await log.append("e1", 0, [_entry(1)])
    result = await log.append("e1", 1, [], command_id="rejected-cmd")
    assert result == AppendResult(version=1, entry_ids=[], duplicate=False)
    assert await log.applied_entry_id("e1", "rejected-cmd") == ""
    assert (await log.append("e1", 1, [_entry(2)], command_id="rejected-cmd")).duplicate
    assert await log.version("e1") == 1


async def test_append_retried_after_cancel_while_server_busy_is_not_duplicated(
    redis_client: RedisClient, log: EventLog
) -> None:
    # Load the append script so the cancelled call is a single EVALSHA, and
    # leave two idle pooled connections so it needs no connect either: its
    # request is written to the socket the first time its task runs.
    async with trio.open_nursery() as nursery:
        nursery.start_soon(log.append, "warm-up", 0, [_entry(0)])
        nursery.start_soon(redis_client.execute, "PING")
    assert redis_client.open_connection_count == 2
    async with trio.open_nursery() as nursery:
        nursery.start_soon(redis_client.execute, "EVAL", _BUSY_SCRIPT, 0, 600_000)
        await trio.sleep(0.1)
        with trio.move_on_after(0.2) as scope:
            await log.append("e1", 0, [_entry(1), _entry(2)], command_id="cmd-busy")
        assert scope.cancelled_caught
    # The request reached the server before the cancel: Redis runs it once the
    # server is free even though nobody reads the reply (not necessarily before
    # our next command: it may serve the connections in any order); Valkey 8
    # drops the request of a connection closed meanwhile. Either way the retry
    # lands the batch exactly once.
    with trio.move_on_after(2):
        while await log.version("e1") != 2:
            await trio.sleep(0.01)
    ran_before_retry = await log.version("e1") == 2
    retry = await log.append("e1", 0, [_entry(1), _entry(2)], command_id="cmd-busy")
    assert retry.duplicate == ran_before_retry and retry.version == 2
    assert [e.version for e in await log.read("e1")] == [1, 2]


@_hypothesis_settings
@given(cancel_after_us=st.integers(min_value=0, max_value=2000), batch_size=st.integers(min_value=0, max_value=5))
async def test_append_retried_after_cancel_at_any_point_lands_once(
    redis_url: str, cancel_after_us: int, batch_size: int
) -> None:
    async with await connect(redis_url) as client:
        await _append_cancel_and_retry(EventLog(client, "camp"), cancel_after_us, batch_size)


async def _append_cancel_and_retry(log: EventLog, cancel_after_us: int, batch_size: int) -> None:
    encounter = _fresh_encounter()
    entries = [_entry(i) for i in range(batch_size)]
    with trio.move_on_after(cancel_after_us / 1_000_000):
        await log.append(encounter, 0, entries, command_id="the-command")
    retry = await log.append(encounter, 0, entries, command_id="the-command")
    assert retry.version == batch_size
    assert [e.version for e in await log.read(encounter)] == list(range(1, batch_size + 1))
    assert await log.applied_entry_id(encounter, "the-command") is not None


async def test_concurrent_appenders_at_the_same_version_exactly_one_wins(log: EventLog) -> None:
    outcomes: list[object] = []

    async def appender(i: int) -> None:
        try:
            outcomes.append(await log.append("e1", 0, [_entry(i), _entry(i)], command_id=f"writer-{i}"))
        except VersionConflict as conflict:
            outcomes.append(conflict)

    async with trio.open_nursery() as nursery:
        for i in range(20):
            nursery.start_soon(appender, i)
    winners = [o for o in outcomes if isinstance(o, AppendResult)]
    losers = [o for o in outcomes if isinstance(o, VersionConflict)]
    assert len(winners) == 1 and len(losers) == 19
    assert all(conflict.actual == 2 for conflict in losers)
    events = await log.read("e1")
    assert len(events) == 2 and len({e.command_id for e in events}) == 1


async def test_large_log_is_paged(log: EventLog) -> None:
    for start in range(0, 2500, 250):
        await log.append("big", start, [_entry(i) for i in range(start, start + 250)])
    events = await log.read("big")
    assert [e.version for e in events] == list(range(1, 2501))
    assert [e.version for e in await log.read("big", count=1500)] == list(range(1, 1501))
    after_1000 = await log.read("big", after=events[999].entry_id)
    assert [e.version for e in after_1000] == list(range(1001, 2501))
    assert await log.read("big", after=events[-1].entry_id) == []
    assert [e.version for e in await log.read_from_version("big", 2400)] == list(range(2401, 2501))
    assert [e.version for e in await log.read_from_version("big", 700)] == list(range(701, 2501))
    assert len(await log.read_from_version("big", 0)) == 2500
    assert await log.read_from_version("big", 2500) == []


# -- follow ----------------------------------------------------------------------


async def test_follow_yields_backlog_then_new_appends(log: EventLog) -> None:
    await log.append("e1", 0, [_entry(1), _entry(2)])
    seen: list[int] = []
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:

            async def writer() -> None:
                for version in range(2, 6):
                    await trio.sleep(0.01)
                    await log.append("e1", version, [_entry(version + 1)])

            nursery.start_soon(writer)
            async with aclosing(log.follow("e1", block_ms=50, batch=2)) as batches:
                async for batch in batches:
                    assert len(batch) <= 2
                    seen.extend(e.version for e in batch)
                    if seen[-1] == 6:
                        break
    assert seen == [1, 2, 3, 4, 5, 6]


async def test_follow_from_dollar_sees_only_new_events(log: EventLog) -> None:
    await log.append("e1", 0, [_entry(1)])
    seen: list[int] = []

    async def follower() -> None:
        async with aclosing(log.follow("e1", after="$", block_ms=5_000)) as batches:
            async for batch in batches:
                seen.extend(e.version for e in batch)
                return

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(follower)
            # Append only once the follower is parked in XREAD, i.e. after it
            # resolved "$", so the test does not depend on timing.
            while await _blocked_clients(log.client) == 0:
                await trio.sleep(0.005)
            await log.append("e1", 1, [_entry(2)])
    assert seen == [2]


async def _blocked_clients(client: RedisClient) -> int:
    info: bytes = await client.execute("INFO", "clients")
    return int(info.decode().split("blocked_clients:", 1)[1].split()[0])


async def test_follow_cancelled_while_blocked_resumes_exactly(log: EventLog) -> None:
    await log.append("e1", 0, [_entry(1)])
    cursor = "0-0"
    seen: list[int] = []
    with trio.move_on_after(0.2):
        async with aclosing(log.follow("e1", block_ms=5_000)) as batches:
            async for batch in batches:
                seen.extend(e.version for e in batch)
                cursor = batch[-1].entry_id
    assert seen == [1]
    # The cancelled follow was parked in XREAD BLOCK; its connection is gone.
    assert log.client.open_connection_count <= 1
    await log.append("e1", 1, [_entry(2), _entry(3)])
    with trio.fail_after(5):
        async with aclosing(log.follow("e1", after=cursor, block_ms=50)) as batches:
            async for batch in batches:
                seen.extend(e.version for e in batch)
                break
    assert seen == [1, 2, 3]


@_hypothesis_settings
@given(
    batch_sizes=st.lists(st.integers(min_value=1, max_value=7), min_size=1, max_size=12),
    writer_pauses_ms=st.lists(st.integers(min_value=0, max_value=8), min_size=1, max_size=12),
    cancel_after_ms=st.lists(st.integers(min_value=0, max_value=15), min_size=1, max_size=40),
    read_batch=st.integers(min_value=1, max_value=10),
)
async def test_follow_cancelled_anywhere_and_resumed_loses_and_repeats_nothing(
    redis_url: str,
    batch_sizes: list[int],
    writer_pauses_ms: list[int],
    cancel_after_ms: list[int],
    read_batch: int,
) -> None:
    async with await connect(redis_url) as client:
        await _follow_with_cancels(EventLog(client, "camp"), batch_sizes, writer_pauses_ms, cancel_after_ms, read_batch)


async def _follow_with_cancels(
    log: EventLog,
    batch_sizes: list[int],
    writer_pauses_ms: list[int],
    cancel_after_ms: list[int],
    read_batch: int,
) -> None:
    encounter = _fresh_encounter()
    total = sum(batch_sizes)
    received: list[StoredEvent] = []
    cursor = "0-0"

    async def writer() -> None:
        version = 0
        for i, size in enumerate(batch_sizes):
            await trio.sleep(writer_pauses_ms[i % len(writer_pauses_ms)] / 1000)
            await log.append(encounter, version, [_entry(version + j + 1) for j in range(size)])
            version += size

    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(writer)
            for attempt in itertools.count():
                if len(received) >= total:
                    break
                # The last attempts run uncancelled so the test always finishes.
                deadline = cancel_after_ms[attempt] / 1000 if attempt < len(cancel_after_ms) else 5.0
                with trio.move_on_after(deadline):
                    async with aclosing(log.follow(encounter, after=cursor, block_ms=10, batch=read_batch)) as batches:
                        async for batch in batches:
                            received.extend(batch)
                            cursor = batch[-1].entry_id
                            if len(received) >= total:
                                break
    assert [e.version for e in received] == list(range(1, total + 1))
    assert [e.data for e in received] == [b'{"i":%d}' % v for v in range(1, total + 1)]


# -- command inbox ---------------------------------------------------------------


def _payloads(entries) -> list[tuple[str, bytes]]:
    return [(entry.entry_id, entry.fields[b"p"]) for entry in entries]


async def test_inbox_submit_and_read(log: EventLog) -> None:
    first = await log.submit("e1", b"move north", seat="alice")
    second = await log.submit("e1", b"\x00binary\r\n", seat="alice")
    assert _payloads(await log.read_inbox("e1", "alice")) == [(first, b"move north"), (second, b"\x00binary\r\n")]
    assert _payloads(await log.read_inbox("e1", "alice", first)) == [(second, b"\x00binary\r\n")]
    assert await log.read_inbox("e1", "alice", second) == []
    assert _payloads(await log.read_inbox("e1", "alice", count=1)) == [(first, b"move north")]
    # Each seat has its own stream: bob's inbox is empty.
    assert await log.read_inbox("e1", "bob") == []


async def test_one_read_takes_every_seats_inbox_and_names_the_seat(log: EventLog) -> None:
    a = await log.submit("e1", b"from alice", seat="alice")
    b = await log.submit("e1", b"from bob", seat="bob")
    entries = await log.read_inboxes("e1", {"alice": "0-0", "bob": "0-0", "carol": "0-0"})
    assert sorted((e.seat, e.entry_id, e.fields[b"p"]) for e in entries) == sorted(
        [("alice", a, b"from alice"), ("bob", b, b"from bob")])


async def test_inbox_entries_come_back_raw_whatever_their_shape(log: EventLog) -> None:
    """A frontend may XADD anything: the log hands the fields over as they are
    (the sequencer checks them), it never fails on them."""
    weird = await log.client.execute("XADD", log.inbox_key("e1", "alice"), "*", "q", b"\xff\xfe", "x", "")
    (entry,) = await log.read_inbox("e1", "alice")
    assert entry.entry_id == weird.decode() and entry.fields == {b"q": b"\xff\xfe", b"x": b""}


async def test_tidying_an_inbox_keeps_what_is_not_handled_and_the_count_of_what_was_only_counted(log: EventLog) -> None:
    ids = [await log.submit("e1", b"c%d" % i, seat="alice") for i in range(6)]
    # Handled up to ids[3], but ids[1] is a window answer still held: it stays, and so does what is unread.
    await log.tidy_inboxes("e1", [InboxTidy(seat="alice", trim_before=ids[1], delete=[ids[2], ids[3]],
                                            drops=PendingDrops(2, ids[3]))])
    assert _payloads(await log.read_inbox("e1", "alice")) == [(ids[1], b"c1"), (ids[4], b"c4"), (ids[5], b"c5")]
    assert await log.pending_drops("e1") == {"alice": PendingDrops(2, ids[3], 0)}
    await log.tidy_inboxes("e1", [InboxTidy(seat="alice", trim_before=ids[5])])  # the drops were recorded
    assert _payloads(await log.read_inbox("e1", "alice")) == [(ids[5], b"c5")]
    assert await log.pending_drops("e1") == {}


async def test_a_backlog_past_the_bound_is_skipped_to_its_newest_entries_and_counted(log: EventLog) -> None:
    inbox = log.inbox_key("e1", "bob")
    ids = [raw.decode() for raw in await log.client.pipeline([("XADD", inbox, "*", "p", f"c{i}") for i in range(50)])]
    # Read up to ids[4] (all handled): the 45 after it are unread; keep the newest 10.
    skipped, last = await log.skip_backlog("e1", "bob", ids[4], keep=10, held=0, drops=PendingDrops(3, ids[2]))
    assert (skipped, last) == (35, ids[39])
    assert [entry.entry_id for entry in await log.read_inbox("e1", "bob")] == ids[40:]
    assert await log.pending_drops("e1") == {"bob": PendingDrops(38, ids[39], 35)}
    # Nothing past the bound: nothing skipped.
    assert await log.skip_backlog("e1", "bob", ids[39], keep=10, held=0, drops=None) == (0, "")
    # With a held answer at or before the read cursor, it stays where it is.
    more = [raw.decode() for raw in await log.client.pipeline([("XADD", inbox, "*", "p", f"d{i}") for i in range(30)])]
    await log.tidy_inboxes("e1", [InboxTidy(seat="bob", trim_before=ids[41], delete=ids[42:])])  # ids[41] held
    skipped, last = await log.skip_backlog("e1", "bob", ids[49], keep=5, held=1, drops=None)
    assert (skipped, last) == (25, more[24])
    assert [entry.entry_id for entry in await log.read_inbox("e1", "bob")] == [ids[41], *more[25:]]


async def test_blocking_inbox_read_wakes_on_submit(log: EventLog) -> None:
    assert await log.read_inboxes("e1", {"alice": "0-0"}, block_ms=20) == []
    got = []

    async def reader() -> None:
        got.extend(await log.read_inboxes("e1", {"alice": "0-0", "bob": "0-0"}, block_ms=5_000))

    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(reader)
            await trio.sleep(0.05)
            submitted = await log.submit("e1", b"attack", seat="bob")
    assert [(e.seat, e.entry_id, e.fields[b"p"]) for e in got] == [("bob", submitted, b"attack")]


# -- registry and ids ------------------------------------------------------------


async def test_encounter_registry_keeps_creation_order_and_meta(log: EventLog) -> None:
    assert await log.encounters() == []
    assert await log.register_encounter("zeta", b"first")
    assert await log.register_encounter("alpha", b"second")
    assert not await log.register_encounter("zeta", b"updated")
    assert await log.encounters() == ["zeta", "alpha"]
    assert await log.encounter_meta("zeta") == b"updated"
    assert await log.encounter_meta("unknown") is None
    # Another campaign's registry is separate.
    assert await EventLog(log.client, "other").encounters() == []


@pytest.mark.parametrize("bad", ["", "has space", "a:b", "{tag}", "x" * 65, "ünï", "a/b"])
async def test_invalid_ids_are_rejected(redis_client: RedisClient, bad: str) -> None:
    with pytest.raises(ValueError, match="invalid campaign id"):
        EventLog(redis_client, bad)
    log = EventLog(redis_client, "ok.campaign_1-x")
    with pytest.raises(ValueError, match="invalid encounter id"):
        await log.append(bad, 0, [_entry(1)])
    with pytest.raises(ValueError, match="invalid encounter id"):
        await log.read(bad)
    with pytest.raises(ValueError, match="invalid encounter id"):
        await log.register_encounter(bad, b"")
    assert await redis_client.execute("DBSIZE") == 0


async def test_valid_id_edge_cases(redis_client: RedisClient) -> None:
    log = EventLog(redis_client, "C" * 64)
    assert (await log.append("a.b_c-9", 0, [_entry(1)])).version == 1


# -- what the engine did not write ----------------------------------------------

SERVER_KEY = b"k" * 32


async def test_signed_entries_read_back_and_a_forged_one_is_reported_not_trusted(redis_client: RedisClient) -> None:
    log = EventLog(redis_client, "camp", server_key=SERVER_KEY)
    await log.append("e1", 0, [_entry(1), _entry(2)], command_id="engine/c1")
    # Someone with write access to Redis adds entries of their own: one copied
    # from a real entry with a changed body, one with no signature, one broken.
    (real,) = [e for e in await log.read("e1") if e.version == 2]
    fields = await redis_client.execute("XRANGE", log.log_key("e1"), real.entry_id, real.entry_id)
    flat = fields[0][1]
    forged = list(flat)
    forged[forged.index(b"d") + 1] = b'{"i":999}'
    forged[forged.index(b"n") + 1] = b"3"
    await redis_client.execute("XADD", log.log_key("e1"), "*", *forged)
    await redis_client.execute("XADD", log.log_key("e1"), "*", "n", "4", "t", "Happened", "s", "1", "d", "{}")
    await redis_client.execute("XADD", log.log_key("e1"), "*", "junk", "x")
    # The engine's versions are not shifted: it appends at 3 as if nothing happened.
    assert await log.version("e1") == 2
    assert (await log.append("e1", 2, [_entry(3)], command_id="engine/c2")).version == 3
    stored = await log.read("e1")
    assert [(e.version, e.data) for e in stored] == [(1, b'{"i":1}'), (2, b'{"i":2}'), (3, b'{"i":3}')]
    everything = await log.read("e1", include_invalid=True)
    problems = [e.problem for e in everything if e.problem]
    assert problems == [f"not written by this engine (its signature does not match; it says v{n})" for n in (3, 4)] + [
        "entry lacks field n, t, s, d"]
    # Following skips them too.
    with trio.fail_after(5):
        async with aclosing(log.follow("e1", "0-0", block_ms=100)) as batches:
            async for batch in batches:
                assert [e.version for e in batch] == [1, 2, 3]
                break


async def test_an_entry_signed_for_one_encounter_is_refused_in_another(redis_client: RedisClient) -> None:
    log = EventLog(redis_client, "camp", server_key=SERVER_KEY)
    await log.append("e1", 0, [_entry(1)], command_id="engine/c1")
    (entry,) = await redis_client.execute("XRANGE", log.log_key("e1"), "-", "+")
    await redis_client.execute("XADD", log.log_key("e2"), "*", *entry[1])
    assert await log.read("e2") == []
    assert [e.problem for e in await log.read("e2", include_invalid=True)] == [
        "not written by this engine (its signature does not match; it says v1)"]
    # Without the key (a bare Redis, tests) nothing is checked.
    assert len(await EventLog(redis_client, "camp").read("e2")) == 1


async def test_a_command_id_reused_with_another_body_is_told_apart_from_a_retry(log: EventLog) -> None:
    await log.append("e1", 0, [_entry(1)], command_id="alice/c1", digest="aaaa")
    retry = await log.append("e1", 1, [_entry(1)], command_id="alice/c1", digest="aaaa")
    assert retry.duplicate and not retry.conflicting_body
    changed = await log.append("e1", 1, [_entry(2)], command_id="alice/c1", digest="bbbb")
    assert changed.duplicate and changed.conflicting_body
    assert await log.version("e1") == 1
    assert await log.applied_entry_id("e1", "alice/c1") == (await log.read("e1"))[0].entry_id
