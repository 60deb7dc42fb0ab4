"""A play-by-post server's scale (issue 22, goal 5), checked for correctness,
not timed (the figures are scripts/bench.py's ``idle`` section): many running
encounters, each waiting on a person, under one engine host share a bounded
number of Redis connections (one blocking read each would be 300 here), and
each still answers its seat's command."""

from __future__ import annotations

import time

import trio

from firelane.actors.host import EngineHost
from firelane.actors.inbox_hub import InboxHub
from firelane.actors.lease import current_keeper, lease_key
from firelane.actors.sequencer import create_encounter
from firelane.actors.store import Store
from firelane.engine.registry import register_system
from firelane.events import codec
from firelane.events.schemas import EndTurn
from firelane.redisio import connect
from firelane.redisio.datadir import DataDir
from tests.test_gm_and_rewind import table_setup
from tests.toy_system import TOY

register_system(TOY, "tests.toy_system")
FIGHTS = 300
CONNECTIONS_ALLOWED = 64


async def _connections(client, name: str) -> int:
    listed = (await client.execute("CLIENT", "LIST")).decode()
    return sum(1 for line in listed.splitlines() if f"name={name} " in line)


async def _last(client, key: str) -> dict[bytes, bytes]:
    entry = await client.execute("XREVRANGE", key, "+", "-", "COUNT", 1)
    fields = entry[0][1]
    return dict(zip(fields[::2], fields[1::2]))


async def test_three_hundred_waiting_encounters_share_a_few_connections_and_each_answers(redis_url: str, tmp_path) -> None:
    setup_client = await connect(redis_url, client_name="idle-setup")
    engine_client = await connect(redis_url, client_name="idle-engine")
    store = Store(client=engine_client, server_key=b"k" * 32, data_dir=DataDir(tmp_path), redis_display=redis_url)
    campaigns = [f"pbp{c}" for c in range(6)]  # a server holds many campaigns
    names = [(campaigns[n % len(campaigns)], f"f{n:03d}") for n in range(FIGHTS)]
    setup_logs = {c: store.event_log(c) for c in campaigns}
    for campaign in setup_logs:
        setup_logs[campaign].client = setup_client  # created from another client than the engine's
    try:
        for campaign, encounter in names:
            await create_encounter(setup_logs[campaign], encounter, table_setup(), b"s" * 32)
        async with trio.open_nursery() as nursery:
            hub = InboxHub(engine_client)
            nursery.start_soon(hub.run)
            await trio.sleep(0)
            host = EngineHost(store)
            nursery.start_soon(host.run, nursery)
            # Every one started, and waiting for Ann's player at seat alice.
            with trio.fail_after(600):
                waiting: set[tuple[str, str]] = set()
                while len(waiting) < FIGHTS:
                    await trio.sleep(0.5)
                    for campaign, encounter in names:
                        if (campaign, encounter) not in waiting and host.running.get((campaign, encounter)) == "running":
                            view = await setup_client.execute("XREVRANGE", setup_logs[campaign].options_key(encounter, "alice"),
                                                              "+", "-", "COUNT", 1)
                            if view and b'"turn"' in view[0][1][3] and b'"a"' in view[0][1][3]:
                                waiting.add((campaign, encounter))
            await trio.sleep(1)
            used = await _connections(setup_client, "idle-engine")
            assert used <= CONNECTIONS_ALLOWED, f"{used} connections for {FIGHTS} waiting encounters"
            # Their leases are renewed together, by the host's keeper, not one task each.
            keeper = current_keeper()
            assert keeper is not None and len(keeper._kept) == FIGHTS
            rounds = keeper.rounds
            await trio.sleep(2)
            assert keeper.rounds > rounds
            for campaign, encounter in names[:5]:
                assert await setup_client.execute("PTTL", lease_key(campaign, encounter)) > 2000
            # Each answers its seat's command.
            for campaign, encounter in names:
                await setup_logs[campaign].submit(
                    encounter, codec.encode_command(EndTurn(command_id="end-1", actor="a")), seat="alice")
            answered: set[tuple[str, str]] = set()
            give_up = time.monotonic() + 300
            while len(answered) < FIGHTS and time.monotonic() < give_up:
                await trio.sleep(0.2)
                for campaign, encounter in names:
                    if (campaign, encounter) in answered:
                        continue
                    page = await setup_client.execute("XRANGE", setup_logs[campaign].log_key(encounter), "-", "+")
                    mine = [dict(zip(f[::2], f[1::2])) for _id, f in page]
                    mine = [f for f in mine if f.get(b"c") == b"alice/end-1"]
                    if mine:
                        assert mine[0][b"t"] == b"TurnEnded", (encounter, mine[0])
                        answered.add((campaign, encounter))
            assert len(answered) == FIGHTS
            assert await _connections(setup_client, "idle-engine") <= CONNECTIONS_ALLOWED
            nursery.cancel_scope.cancel()
    finally:
        await engine_client.aclose()
        await setup_client.aclose()


async def test_a_restarted_engine_does_not_write_the_same_versions_views_again(redis_url: str) -> None:
    """Resuming thousands of waiting fights costs no options work: a restarted
    sequencer finds every seat's view stream ending with its version's view."""
    from firelane.actors.sequencer import Sequencer, load_seed
    from firelane.events.log import EventLog

    client = await connect(redis_url)
    event_log = EventLog(client, "views-restart", server_key=b"k" * 32)
    try:
        await create_encounter(event_log, "f", table_setup(), b"s" * 32)
        seed = await load_seed(event_log, "f")
        key = event_log.options_key("f", "alice")

        async def run_until_waiting() -> None:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(Sequencer(event_log, "f", TOY, seed, lease_wait_s=10).run)
                with trio.fail_after(20):
                    while True:
                        view = await client.execute("XREVRANGE", key, "+", "-", "COUNT", 1)
                        if view and b'"turn"' in view[0][1][3] and b'"a"' in view[0][1][3]:
                            break
                        await trio.sleep(0.02)
                await trio.sleep(0.3)
                nursery.cancel_scope.cancel()

        await run_until_waiting()
        written = (await client.execute("XREVRANGE", key, "+", "-", "COUNT", 1))[0][0]  # the newest view's id
        version = await event_log.version("f")
        await run_until_waiting()  # the engine restarted: same version, nothing new to say
        assert await event_log.version("f") == version
        assert (await client.execute("XREVRANGE", key, "+", "-", "COUNT", 1))[0][0] == written
        # A seat's command moves the fight on: its views are written again.
        await event_log.submit("f", codec.encode_command(EndTurn(command_id="end-1", actor="a")), seat="alice")
        async with trio.open_nursery() as nursery:
            nursery.start_soon(Sequencer(event_log, "f", TOY, seed, lease_wait_s=10).run)
            with trio.fail_after(20):
                while (await client.execute("XREVRANGE", key, "+", "-", "COUNT", 1))[0][0] == written:
                    await trio.sleep(0.02)
            nursery.cancel_scope.cancel()
        newest = await client.execute("XREVRANGE", key, "+", "-", "COUNT", 1)
        assert int(dict(zip(newest[0][1][::2], newest[0][1][1::2]))[b"n"]) > version
    finally:
        await client.aclose()
