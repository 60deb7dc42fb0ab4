"""The lease keeper (issue 22, scale): one process renews the leases of all
its sequencers together, and a lease lost meanwhile still stops its sequencer."""

from __future__ import annotations

import pytest
import trio

from firelane.actors.lease import LeaseKeeper, LeaseLost, SequencerLease
from firelane.events.log import EventLog
from firelane.redisio import connect


async def test_one_keeper_renews_many_leases_and_fails_the_lost_one(redis_url: str) -> None:
    client = await connect(redis_url)
    try:
        logs = [EventLog(client, f"keep{c}", server_key=b"k" * 32) for c in range(3)]
        leases = [SequencerLease(logs[n % 3], f"e{n}", ttl_ms=3000, wait_s=1) for n in range(30)]
        for lease in leases:
            await lease.acquire()
        keeper = LeaseKeeper(client, ttl_ms=3000)
        keeper.install()
        lost: list[BaseException] = []

        async def keep(lease: SequencerLease) -> None:
            try:
                await lease.keep()
            except LeaseLost as exc:
                lost.append(exc)

        async with trio.open_nursery() as nursery:
            for lease in leases:
                nursery.start_soon(keep, lease)
            await trio.sleep(0.1)
            for lease in leases:
                await client.execute("PEXPIRE", lease.key, 500)  # as if they had not been renewed for a while
            await client.execute("SET", leases[7].key, b"someone-else")  # one taken by another engine
            await keeper.renew_all()
            assert keeper.rounds == 1
            for index, lease in enumerate(leases):
                if index != 7:
                    assert await client.execute("GET", lease.key) == lease.value.encode()
                    assert await client.execute("PTTL", lease.key) > 2000  # renewed to its full lifetime
            await trio.sleep(0.05)
            assert len(lost) == 1 and "'e7'" in str(lost[0])
            nursery.cancel_scope.cancel()
        assert keeper._kept == {}  # every sequencer's keep left it
    finally:
        await client.aclose()


async def test_a_lease_of_another_client_renews_itself(redis_url: str) -> None:
    first, second = await connect(redis_url), await connect(redis_url)
    try:
        LeaseKeeper(first, ttl_ms=600).install()
        lease = SequencerLease(EventLog(second, "keep-other", server_key=b"k" * 32), "e", ttl_ms=600)
        await lease.acquire()
        with trio.move_on_after(1.0):
            await lease.keep()  # its own loop: the keeper serves another client
        assert await second.execute("GET", lease.key) == lease.value.encode()
    finally:
        await first.aclose()
        await second.aclose()
