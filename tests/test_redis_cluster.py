"""The Redis Cluster client and durable appends, on a real local Redis Cluster.

The cluster (3 masters + 3 replicas, real redis-servers) comes from
tests/cluster_harness.py. Tests that break a cluster (failover, outage) get
one of their own. Without a redis-server binary the cluster tests are
skipped, with the reason; the URL and hashing tests run anyway.
"""

from __future__ import annotations

import itertools
import os
import random
import signal
import socket
import time
from contextlib import aclosing
from functools import partial

import hiredis
import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from firelane.actors.lease import EncounterBusy, SequencerLease
from firelane.actors.policies import AIPolicy
from firelane.actors.runtime import run_encounter
from firelane.actors.sequencer import create_encounter
from firelane.engine.registry import demo_setup, get_system, register_system
from firelane.engine.simulate import run_headless
from firelane.events import codec
from firelane.events.envelope import NewEntry
from firelane.events.log import EventLog
from firelane.projections.audit import verify
from firelane.redisio import (
    ClusterClient,
    ClusterDownError,
    Durability,
    DurabilityError,
    NotAClusterError,
    RedisClient,
    connect,
    key_slot,
)
from firelane.redisio.cluster import ClusterAddress, first_key
from tests import test_event_log_contract as contract
from tests.cluster_harness import *  # noqa: F401,F403 - fixtures
from tests.cluster_harness import LocalCluster, command, require_redis_server
from tests.toy_system import TOY
from tests.toy_system import setup as toy_setup

register_system(TOY, "tests.toy_system")

_unique = itertools.count()
_hypothesis_settings = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


def _entry(i: int) -> NewEntry:
    return NewEntry(type="Happened", schema=1, data=b'{"i":%d}' % i)


def _campaign_on(cluster: LocalCluster, port: int, prefix: str) -> str:
    """A fresh campaign id whose hash tag lands on the master at ``port``."""
    for n in itertools.count():
        campaign = f"{prefix}-{next(_unique)}-{n}"
        if cluster.master_of_slot(key_slot(f"{{{campaign}}}")).port == port:
            return campaign
    raise AssertionError("unreachable")


# -- URLs, hashing, key positions (no server) --------------------------------------------


def test_cluster_url_names_seed_nodes_and_credentials() -> None:
    address = ClusterAddress.parse("redis+cluster://app:p%40ss@10.0.0.1:7000,[::1]:7001,redis-c")
    assert address.seeds == (("10.0.0.1", 7000), ("::1", 7001), ("redis-c", 6379))
    assert (address.username, address.password) == ("app", "p@ss")
    assert "p%40ss" not in address.display and "p@ss" not in address.display
    assert address.node_url(("::1", 7001)) == "redis://app:p%40ss@[::1]:7001"
    assert ClusterAddress.parse("redis+cluster://h:1/0").seeds == (("h", 1),)


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("redis+cluster://h:1/2", "only database 0"),
        ("redis+cluster://h:1?timeout=3", "none are supported"),
        ("redis+cluster://h:1,,h:2", "empty entry"),
        ("redis+cluster://h:99999", "invalid port"),
        ("redis+cluster://h:x", "invalid port"),
        ("redis+cluster://[::1:7000", "is malformed"),
        ("redis+cluster://h:1,[::1]x", "malformed IPv6"),
    ],
)
def test_bad_cluster_urls_say_what_is_wrong(url: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        ClusterAddress.parse(url)


def test_single_node_client_points_cluster_urls_to_connect() -> None:
    with pytest.raises(ValueError, match=r"Redis Cluster URL: open it with firelane.redisio.connect"):
        RedisClient("redis+cluster://127.0.0.1:7000")


def test_key_slot_matches_the_cluster_spec_examples() -> None:
    assert key_slot("123456789") == 0x31C3  # the CRC16/XMODEM check value
    assert key_slot("foo") == 12182
    assert key_slot("{user1000}.following") == key_slot("{user1000}.followers") == key_slot("user1000")
    assert key_slot("foo{}{bar}") == key_slot(b"foo{}{bar}")  # empty tag: the whole key is hashed
    assert key_slot("foo{{bar}}zap") == key_slot("{bar")
    assert key_slot("foo{bar}{zap}") == key_slot("bar")
    assert key_slot("firelane:{camp}:enc:e1:log") == key_slot("firelane:{camp}:encounters")


def test_first_key_is_found_for_every_shape_of_command_firelane_sends() -> None:
    assert first_key(("XADD", "k", "*", "p", b"x")) == "k"
    assert first_key(("EVALSHA", "sha", 2, "a", "b", "arg")) == "a"
    keyless = first_key(("PING",))
    assert first_key((b"evalsha", "sha", 0, "arg")) is keyless and first_key(("SCRIPT", "LOAD", "s")) is keyless
    assert first_key(("XREAD", "COUNT", 5, "BLOCK", 10, "STREAMS", "s1", "0")) == "s1"
    assert first_key(("XREADGROUP", "GROUP", "STREAMS", "c", "STREAMS", "s2", ">")) == "s2"
    with pytest.raises(ValueError, match="MULTI is not supported on a Redis Cluster"):
        first_key(("MULTI",))


def test_durability_refuses_asking_for_nothing_or_waiting_forever() -> None:
    with pytest.raises(ValueError, match="asks for nothing"):
        Durability()
    with pytest.raises(ValueError, match="positive"):
        Durability(replicas=1, timeout_ms=0)
    assert Durability(replicas=2).describe() == "WAIT 2 5000"
    assert Durability(replicas=1, fsync=True, timeout_ms=100).describe() == "WAITAOF 1 1 100"


# -- durability on a single server (the standard harness; it has no replica) ----------------


async def test_durable_append_without_a_replica_raises_and_is_not_undone(redis_client: RedisClient) -> None:
    log = EventLog(redis_client, "camp", replicas=1, ack_timeout_ms=50)
    with pytest.raises(DurabilityError, match=r"only 0 of 1 replicas acknowledged it within 50 ms \(WAIT 1 50\)"):
        await log.append("e1", 0, [_entry(1)], command_id="c1")
    # The write stays on the master (WAIT is no rollback); a retry is a
    # duplicate, and still unacknowledged as long as no replica has it.
    assert await log.version("e1") == 1
    with pytest.raises(DurabilityError):
        await log.append("e1", 0, [_entry(1)], command_id="c1")
    assert await log.version("e1") == 1
    with pytest.raises(DurabilityError):
        await log.submit("e1", b"cmd", seat="alice")
    plain = EventLog(redis_client, "camp")
    assert (await plain.append("e1", 0, [_entry(1)], command_id="c1")).duplicate


async def test_fsync_durability_uses_waitaof_only_where_the_server_has_it(redis_client: RedisClient) -> None:
    log = EventLog(redis_client, "camp", fsync=True, ack_timeout_ms=50)
    has_waitaof = await redis_client.execute("COMMAND", "INFO", "WAITAOF") != [None]
    if has_waitaof:
        # Redis >= 7.2: WAITAOF runs; this test server has no AOF, which it reports.
        with pytest.raises(DurabilityError, match="WAITAOF 1 0 50 failed: .*appendonly"):
            await log.append("e1", 0, [_entry(1)], command_id="c1")
    else:
        # Redis 7.0 (Debian's): refused before anything is written, no silent downgrade to WAIT.
        with pytest.raises(DurabilityError, match=r"fsync=True needs WAITAOF.*Redis 7.2.*nothing was written"):
            await log.append("e1", 0, [_entry(1)], command_id="c1")
        assert await log.version("e1") == 0


async def test_a_lease_whose_retried_set_had_landed_is_ours(redis_client: RedisClient) -> None:
    """A cluster client retries a SET NX whose reply was lost; if the first one
    landed, the retry finds the key holding our own value: we hold the lease."""
    lease = SequencerLease(EventLog(redis_client, "camp"), "e1", wait_s=0.3)
    await redis_client.execute("SET", lease.key, lease.value, "PX", 5000)  # the first, landed attempt
    with trio.fail_after(0.2):
        await lease.acquire()
    other = SequencerLease(EventLog(redis_client, "camp"), "e1", wait_s=0.3)
    with pytest.raises(EncounterBusy):
        await other.acquire()


# -- the cluster: routing ------------------------------------------------------------------


def test_harness_forms_three_replicated_masters_covering_every_slot(redis_cluster: LocalCluster) -> None:
    masters = redis_cluster.current_masters()
    assert len(masters) == 3
    assert all(len(redis_cluster.replicas_of(master)) == 1 for master in masters)
    info = command(masters[0].port, "CLUSTER", "INFO")
    assert b"cluster_state:ok" in info and b"cluster_slots_assigned:16384" in info  # type: ignore[operator]


async def test_each_command_lands_on_the_master_of_its_slot(redis_cluster: LocalCluster, cluster_url: str) -> None:
    async with await connect(cluster_url) as client:
        assert isinstance(client, ClusterClient)
        assert sorted(client.masters) == sorted(node.address for node in redis_cluster.current_masters())
        seen_masters = set()
        for i in range(30):
            key = f"key-{i}"
            assert await client.execute("SET", key, i) == b"OK"
            # The server's own slot computation agrees with ours...
            assert command(redis_cluster.nodes[0].port, "CLUSTER", "KEYSLOT", key) == key_slot(key)
            owner = redis_cluster.master_of_slot(key_slot(key))
            assert client.node_for_key(key) == owner.address
            # ...and the value is on that master, which the others redirect to.
            assert command(owner.port, "GET", key) == str(i).encode()
            other = next(m for m in redis_cluster.current_masters() if m is not owner)
            moved = command(other.port, "GET", key)
            assert isinstance(moved, hiredis.ReplyError) and str(moved).startswith("MOVED")
            assert await client.execute("GET", key) == str(i).encode()
            seen_masters.add(owner.port)
        assert len(seen_masters) == 3
        assert await client.execute("PING") == b"PONG"
        # A command outside the key table: its key comes from COMMAND GETKEYS.
        assert await client.execute("OBJECT", "ENCODING", "key-1") == b"int"
        with pytest.raises(ValueError, match="one hash slot"):
            await client.pipeline([("GET", "key-1"), ("GET", "key-2")])
        assert await client.pipeline([("SET", "{t}a", 1), ("INCR", "{t}a"), ("GET", "{t}a")]) == [b"OK", 2, b"2"]


_CONTRACT = [
    contract.test_append_then_read_round_trips_every_field,
    contract.test_version_conflict_raises_and_writes_nothing,
    contract.test_duplicate_command_is_applied_once,
    contract.test_several_batches_append_in_one_call_each_with_its_command,
    contract.test_empty_batch_marks_a_command_applied,
    contract.test_concurrent_appenders_at_the_same_version_exactly_one_wins,
    contract.test_large_log_is_paged,
    contract.test_follow_yields_backlog_then_new_appends,
    contract.test_inbox_submit_and_read,
    contract.test_blocking_inbox_read_wakes_on_submit,
    contract.test_one_read_takes_every_seats_inbox_and_names_the_seat,
    contract.test_tidying_an_inbox_keeps_what_is_not_handled_and_the_count_of_what_was_only_counted,
    contract.test_a_backlog_past_the_bound_is_skipped_to_its_newest_entries_and_counted,
    contract.test_a_command_id_reused_with_another_body_is_told_apart_from_a_retry,
    contract.test_encounter_registry_keeps_creation_order_and_meta,
]


@pytest.mark.parametrize("contract_test", _CONTRACT, ids=lambda test: test.__name__.removeprefix("test_"))
@pytest.mark.parametrize("replicas", [0, 1], ids=["async", "wait-1-replica"])
async def test_event_log_contract_holds_on_the_cluster(cluster_url: str, contract_test, replicas: int) -> None:  # type: ignore[no-untyped-def]
    """The single-server contract tests of the event log, run on the cluster as they are."""
    async with await connect(cluster_url) as client:
        await contract_test(EventLog(client, "camp", replicas=replicas))


async def test_slot_migration_is_followed_through_ask_and_moved(redis_cluster: LocalCluster, cluster_url: str) -> None:
    log_key = "firelane:{migrating}:enc:e1:log"
    slot = key_slot(log_key)
    async with await connect(cluster_url) as client:
        log = EventLog(client, "migrating")
        await log.append("e1", 0, [_entry(1), _entry(2)], command_id="before")
        source = redis_cluster.master_of_slot(slot)
        target = next(m for m in redis_cluster.current_masters() if m is not source)
        # Half-way through a migration: keys still on the source are served
        # there; a key the source lacks is answered with ASK (to the target).
        command(target.port, "CLUSTER", "SETSLOT", slot, "IMPORTING", source.node_id)
        command(source.port, "CLUSTER", "SETSLOT", slot, "MIGRATING", target.node_id)
        assert await log.version("e1") == 2
        assert await client.execute("SET", "{migrating}new", "on-target") == b"OK"
        # It was written on the target (which serves the slot only after ASKING).
        assert str(command(source.port, "GET", "{migrating}new")).startswith(f"ASK {slot} ")
        with NodeConnection(target.port) as on_target:
            assert on_target("ASKING") == b"OK"
            assert on_target("GET", "{migrating}new") == b"on-target"
        assert await client.execute("GET", "{migrating}new") == b"on-target"
        # Finish the migration: the client's map is now stale, MOVED fixes it.
        redis_cluster.move_slot(slot, target)
        assert client.node_for_key(log_key) == source.address
        assert (await log.append("e1", 2, [_entry(3)], command_id="after")).version == 3
        assert client.node_for_key(log_key) == target.address
        assert [e.version for e in await log.read("e1")] == [1, 2, 3]
        assert command(target.port, "XLEN", log_key) == 3


# -- the cluster: cancel safety -------------------------------------------------------------


@_hypothesis_settings
@given(cancel_after_us=st.integers(min_value=0, max_value=3000), batch_size=st.integers(min_value=0, max_value=5))
async def test_append_cancelled_anywhere_even_mid_redirect_lands_once(
    redis_cluster: LocalCluster, cluster_url: str, cancel_after_us: int, batch_size: int
) -> None:
    campaign = f"cancel-{next(_unique)}"
    slot = key_slot(f"{{{campaign}}}")
    async with await connect(cluster_url, client_name="cancel-append") as client:
        # The slot moves after the client loaded its map, so the cancelled
        # call may be anywhere in: send, MOVED, map reload, resend, reply.
        owner = redis_cluster.master_of_slot(slot)
        redis_cluster.move_slot(slot, next(m for m in redis_cluster.current_masters() if m is not owner))
        log = EventLog(client, campaign)
        entries = [_entry(i) for i in range(batch_size)]
        with trio.move_on_after(cancel_after_us / 1_000_000):
            await log.append("e", 0, entries, command_id="the-command")
        retry = await log.append("e", 0, entries, command_id="the-command")
        assert retry.version == batch_size
        assert [e.version for e in await log.read("e")] == list(range(1, batch_size + 1))
        assert client.open_connection_count <= 3


@_hypothesis_settings
@given(
    batch_sizes=st.lists(st.integers(min_value=1, max_value=7), min_size=1, max_size=10),
    writer_pauses_ms=st.lists(st.integers(min_value=0, max_value=8), min_size=1, max_size=10),
    cancel_after_ms=st.lists(st.integers(min_value=0, max_value=15), min_size=1, max_size=30),
    read_batch=st.integers(min_value=1, max_value=10),
)
async def test_follow_on_the_cluster_cancelled_anywhere_loses_and_repeats_nothing(
    cluster_url: str, batch_sizes: list[int], writer_pauses_ms: list[int], cancel_after_ms: list[int], read_batch: int
) -> None:
    async with await connect(cluster_url) as client:
        await contract._follow_with_cancels(EventLog(client, "camp"), batch_sizes, writer_pauses_ms, cancel_after_ms, read_batch)


def _clients_named(port: int, name: str) -> int:
    listing = command(port, "CLIENT", "LIST")
    assert isinstance(listing, bytes)
    return sum(1 for line in listing.decode().splitlines() if f" name={name} " in f" {line} ")


async def test_cancelled_blocking_reads_on_the_cluster_leak_no_connection(
    redis_cluster: LocalCluster, cluster_url: str
) -> None:
    stream = "{leak}stream"
    owner = redis_cluster.master_of_slot(key_slot(stream))
    async with await connect(cluster_url, max_connections=2, client_name="leak-test") as client:
        with trio.fail_after(60):
            for i in range(300):
                with trio.move_on_after(0.001 * (i % 5)):
                    if i % 2:
                        await client.execute("XREAD", "BLOCK", 10_000, "STREAMS", stream, "$")
                    else:
                        async with client.dedicated() as connection:
                            await connection.execute("XREAD", "BLOCK", 10_000, "STREAMS", stream, "$")
            assert await client.execute("SET", "{leak}after", "ok") == b"OK"
        assert client.open_connection_count <= 2
        deadline = time.monotonic() + 5
        while _clients_named(owner.port, "leak-test") > 2 and time.monotonic() < deadline:
            await trio.sleep(0.01)
        assert _clients_named(owner.port, "leak-test") <= 2
    assert client.open_connection_count == 0


async def test_a_single_server_behind_a_cluster_url_is_refused_clearly(tmp_path) -> None:  # type: ignore[no-untyped-def]
    binary = require_redis_server()
    cluster = LocalCluster(tmp_path, masters=1, replicas_per_master=0, binary=binary)
    # One node started in plain (non-cluster) mode, so connect() meets "cluster support disabled".
    node = cluster.standalone_node()
    try:
        with pytest.raises(NotAClusterError, match=rf"127.0.0.1:{node.port} is not a cluster node.*use a redis:// URL"):
            await connect(f"redis+cluster://127.0.0.1:{node.port}")
    finally:
        cluster.stop()


async def test_unreachable_seeds_fail_clearly(cluster_url: str) -> None:
    with pytest.raises(ClusterDownError, match="no node of Redis Cluster redis\\+cluster://127.0.0.1:1 answers"):
        await connect("redis+cluster://127.0.0.1:1")


# -- campaigns spread over the masters ------------------------------------------------------

_SPREAD_SYSTEMS = ["toy", "d100-degrees", "d100-zones", "bolt-and-blade"]


def _fight(system_name: str):  # type: ignore[no-untyped-def]
    if system_name == "toy":
        return TOY, toy_setup(brace=True)
    return get_system(system_name), demo_setup(system_name)


async def test_campaigns_spread_over_the_masters_fight_exactly_as_the_pure_loop(
    redis_cluster: LocalCluster, cluster_url: str
) -> None:
    masters = redis_cluster.current_masters()
    campaigns = [_campaign_on(redis_cluster, masters[i % len(masters)].port, "spread") for i in range(8)]
    assert {redis_cluster.master_of_slot(key_slot(f"{{{c}}}")).port for c in campaigns} == {m.port for m in masters}
    assert len({key_slot(f"{{{c}}}") for c in campaigns}) == 8
    async with await connect(cluster_url) as client:
        final_states = {}

        async def fight(index: int, campaign: str) -> None:
            system, setup = _fight(_SPREAD_SYSTEMS[index % len(_SPREAD_SYSTEMS)])
            log = EventLog(client, campaign)
            await create_encounter(log, "duel", setup, f"spread-{index}".encode().ljust(32, b"."))
            policies = {c.id: AIPolicy(system) for c in setup.combatants}
            final_states[campaign] = await run_encounter(log, "duel", system, policies)

        with trio.fail_after(120):
            async with trio.open_nursery() as nursery:
                for index, campaign in enumerate(campaigns):
                    nursery.start_soon(fight, index, campaign)
        for index, campaign in enumerate(campaigns):
            system, setup = _fight(_SPREAD_SYSTEMS[index % len(_SPREAD_SYSTEMS)])
            seed = f"spread-{index}".encode().ljust(32, b".")
            stored = await EventLog(client, campaign).read("duel")
            reference = [e for _c, events, _s in run_headless(system, setup, seed, encounter="duel") for e in events]
            assert [codec.decode_event(s) for s in stored] == reference, f"campaign {campaign} differs"
            report = verify(stored)
            assert report.ok and report.dice > 0, report.problems[:5]
            assert final_states[campaign].ended
            # The log is on its campaign's master, nowhere else.
            owner = redis_cluster.master_of_slot(key_slot(f"{{{campaign}}}"))
            log_key = EventLog(client, campaign).log_key("duel")
            assert command(owner.port, "XLEN", log_key) == len(reference)


async def test_an_acknowledged_durable_append_is_already_on_the_replica(
    redis_cluster: LocalCluster, cluster_url: str
) -> None:
    async with await connect(cluster_url) as client:
        log = EventLog(client, "durable", replicas=1)
        owner = redis_cluster.master_of_slot(key_slot("{durable}"))
        replica = redis_cluster.replicas_of(owner)[0]
        log_key = log.log_key("e1")
        version = 0
        with NodeConnection(replica.port) as on_replica:
            assert on_replica("READONLY") == b"OK"  # reads on a replica, per connection
            for i in range(100):
                version = (await log.append("e1", version, [_entry(i)], command_id=f"c{i}")).version
                # Read from the replica directly, right after the append returned.
                assert on_replica("XLEN", log_key) == version


class NodeConnection:
    """One blocking connection to a node, kept for several commands."""

    def __init__(self, port: int) -> None:
        self._sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self._reader = hiredis.Reader()

    def __enter__(self) -> NodeConnection:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._sock.close()

    def __call__(self, *args: str | bytes | int) -> object:
        self._sock.sendall(hiredis.pack_command(args))
        while (reply := self._reader.gets()) is False:
            self._reader.feed(self._sock.recv(65536))
        return reply


# -- failover and outage (each on a cluster of its own) --------------------------------------


async def _await_promotion_and_restart(cluster: LocalCluster, master, replica) -> float:  # type: ignore[no-untyped-def]
    """Kill ``master`` (SIGKILL), wait for the automatic failover to promote
    ``replica``, start the old master again (it rejoins as a replica) and
    return how long the promotion took."""
    killed_at = time.monotonic()
    cluster.kill(master)
    await trio.to_thread.run_sync(partial(cluster.wait_until, lambda: cluster.is_master(replica), "the replica is promoted"))
    promoted_after = time.monotonic() - killed_at
    cluster.restart(master, wait=False)  # spawned from the main thread (see the harness)
    await trio.to_thread.run_sync(cluster.wait_answers, master)
    return promoted_after


async def test_acknowledged_appends_survive_the_kill_of_their_master(fresh_cluster: LocalCluster) -> None:
    cluster = fresh_cluster
    campaign = "stream"
    master = cluster.master_of_slot(key_slot(f"{{{campaign}}}"))
    replica = cluster.replicas_of(master)[0]
    total = 1500
    acknowledged: list[tuple[str, int]] = []
    not_durable: list[str] = []
    async with await connect(cluster.url, retry_timeout=30) as client:
        log = EventLog(client, campaign, replicas=1)

        async def writer() -> None:
            version = 0
            i = 0
            while i < total:
                command_id = f"cmd-{i}"
                try:
                    result = await log.append("e", version, [_entry(3 * i + j) for j in range(3)], command_id=command_id)
                except DurabilityError as exc:
                    not_durable.append(str(exc))
                    await trio.sleep(0.05)
                    continue  # the same command again: a duplicate if it landed
                version = result.version
                acknowledged.append((command_id, version))
                i += 1

        with trio.fail_after(120):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(writer)
                while len(acknowledged) < 300:
                    await trio.sleep(0.001)
                acknowledged_before_kill = len(acknowledged)
                promoted_after = await _await_promotion_and_restart(cluster, master, replica)
    assert acknowledged_before_kill < total - 500, "the kill came too late to test anything"
    assert cluster.is_master(replica) and not cluster.is_master(master)
    async with await connect(cluster.url) as reader:
        stored = await EventLog(reader, campaign).read("e")
    # Every acknowledged append is there, once, in order; nothing else is.
    assert [e.version for e in stored] == list(range(1, 3 * total + 1))
    assert [e.data for e in stored] == [b'{"i":%d}' % i for i in range(3 * total)]
    for command_id, version in acknowledged:
        assert {e.command_id for e in stored[version - 3 : version]} == {command_id}
    print(f"promoted after {promoted_after:.2f} s; {len(not_durable)} appends waited for a replica and were retried")


async def test_only_appends_acknowledged_by_a_replica_are_sure_to_survive_a_failover(
    fresh_cluster: LocalCluster,
) -> None:
    """What WAIT buys, shown deterministically: the replica is frozen and cut
    off, the master acknowledges plain appends (they are lost when it dies),
    refuses to acknowledge durable ones, and every durable append it did
    acknowledge is on the promoted replica."""
    cluster = fresh_cluster
    master = cluster.master_of_slot(key_slot("{wait}"))
    replica = cluster.replicas_of(master)[0]
    async with await connect(cluster.url, retry_timeout=30) as client:
        durable = EventLog(client, "wait", replicas=1, ack_timeout_ms=300)
        plain = EventLog(client, "wait")
        for i in range(10):
            await durable.append("e", i, [_entry(i)], command_id=f"durable-{i}")
        assert replica.process is not None
        replica.process.send_signal(signal.SIGSTOP)
        try:
            # Cut the replication link while the replica cannot reconnect: what
            # the master takes from now on is on the master alone.
            assert command(master.port, "CLIENT", "KILL", "TYPE", "replica") == 1
            for i in range(10, 15):
                assert (await plain.append("e", i, [_entry(i)], command_id=f"plain-{i}")).version == i + 1
            with pytest.raises(DurabilityError, match="only 0 of 1 replicas acknowledged it within 300 ms"):
                await durable.append("e", 15, [_entry(15)], command_id="durable-15")
            cluster.kill(master)
        finally:
            replica.process.send_signal(signal.SIGCONT)
        await trio.to_thread.run_sync(partial(cluster.wait_until, lambda: cluster.is_master(replica), "the replica is promoted"))
        stored = await durable.read("e")
    # The 10 acknowledged durable appends survived; the 5 plain appends the
    # master acknowledged did not, nor did the durable one it refused to.
    assert [(e.version, e.command_id) for e in stored] == [(i + 1, f"durable-{i}") for i in range(10)]


async def test_live_fight_finishes_through_a_master_failover(fresh_cluster: LocalCluster) -> None:
    cluster = fresh_cluster
    campaign = "failover"
    system, setup = get_system("rond6"), demo_setup("rond6")
    seed = b"failover".ljust(32, b"!")
    reference = [e for _c, events, _s in run_headless(system, setup, seed, encounter="fight") for e in events]
    master = cluster.master_of_slot(key_slot(f"{{{campaign}}}"))
    replica = cluster.replicas_of(master)[0]
    async with await connect(cluster.url, retry_timeout=30) as client:
        log = EventLog(client, campaign, replicas=1)
        await create_encounter(log, "fight", setup, seed)
        # The seed is written without WAIT (by the sequencer module): let it reach the replica.
        await trio.to_thread.run_sync(partial(cluster.wait_until, cluster.replicas_in_sync, "the seed is replicated"))
        final = []

        async def fight() -> None:
            final.append(await run_encounter(log, "fight", system, {c.id: AIPolicy(system) for c in setup.combatants}))

        with trio.fail_after(120):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(fight)
                while command(master.port, "XLEN", log.log_key("fight")) < len(reference) // 3:
                    await trio.sleep(0.002)
                version_at_kill = command(master.port, "XLEN", log.log_key("fight"))
                await _await_promotion_and_restart(cluster, master, replica)
        stored = await log.read("fight")
    assert version_at_kill < len(reference), "the kill came after the fight"
    assert cluster.is_master(replica)
    assert [codec.decode_event(s) for s in stored] == reference
    assert [s.version for s in stored] == list(range(1, len(reference) + 1))
    assert final and final[0].ended
    report = verify(stored)
    assert report.ok, report.problems[:5]


async def test_a_slot_whose_master_and_replica_are_gone_fails_clearly_in_bounded_time(
    fresh_cluster: LocalCluster,
) -> None:
    cluster = fresh_cluster
    key = "{gone}key"
    master = cluster.master_of_slot(key_slot(key))
    replica = cluster.replicas_of(master)[0]
    async with await connect(cluster.url, retry_timeout=1.5) as client:
        assert await client.execute("SET", key, "v") == b"OK"
        cluster.kill(replica)
        cluster.kill(master)
        # Calls cancelled anywhere in their retry loop (a pause, a reconnect,
        # a map reload) leave nothing behind.
        delays = random.Random(12).sample(range(0, 200), 15)
        for delay_ms in delays:
            with trio.move_on_after(delay_ms / 1000) as scope:
                await client.execute("GET", key)
            assert scope.cancelled_caught
        assert client.open_connection_count <= 3
        started = time.monotonic()
        with pytest.raises(ClusterDownError, match=rf"did not serve slot {key_slot(key)} within 1.5 s; last error: "):
            await client.execute("GET", key)
        assert 1.4 < time.monotonic() - started < 10
        # Once the nodes are back (the master still owns its slots), it serves again.
        cluster.restart(master, wait=False)
        cluster.restart(replica, wait=False)
        await trio.to_thread.run_sync(partial(cluster.wait_until, cluster.state_ok, "cluster_state:ok"))
        assert await client.execute("SET", key, "back") == b"OK"
        assert await client.execute("GET", key) == b"back"


def test_harness_leaves_no_process_behind_even_when_the_test_fails(tmp_path) -> None:  # type: ignore[no-untyped-def]
    binary = require_redis_server()
    cluster = LocalCluster(tmp_path, masters=1, replicas_per_master=1, binary=binary)
    with pytest.raises(RuntimeError, match="a failing test"):
        with cluster.start():
            pids = [node.process.pid for node in cluster.nodes if node.process is not None]
            assert len(pids) == 2 and all(node.running for node in cluster.nodes)
            raise RuntimeError("a failing test")
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)

