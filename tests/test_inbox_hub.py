"""The inbox hub (issue 22, scale): many encounters' sequencers wait for their
seats' commands on a few shared blocking reads, not one connection each, and
a command is still answered at once."""

from __future__ import annotations

import time

import trio

from firelane.actors.inbox_hub import InboxHub
from firelane.actors.sequencer import Sequencer, create_encounter, load_seed
from firelane.engine.registry import register_system
from firelane.events import codec
from firelane.events.log import EventLog
from firelane.events.schemas import EndTurn
from firelane.redisio import connect
from tests.test_gm_and_rewind import table_setup
from tests.test_runtime import wait_for_state
from tests.toy_system import TOY

register_system(TOY, "tests.toy_system")
FIGHTS = 40


async def _connections(client) -> int:
    listed = (await client.execute("CLIENT", "LIST")).decode()
    return sum(1 for line in listed.splitlines() if "name=hub-test" in line)


async def test_forty_waiting_encounters_share_a_few_connections_and_answer_at_once(redis_url: str) -> None:
    client = await connect(redis_url, max_connections=8, client_name="hub-test")
    event_log = EventLog(client, "hub", server_key=b"k" * 32)
    try:
        for number in range(FIGHTS):
            await create_encounter(event_log, f"f{number}", table_setup(), b"s" * 32)
        async with trio.open_nursery() as nursery:
            hub = InboxHub(client, readers=2)
            nursery.start_soon(hub.run)
            await trio.sleep(0)
            for number in range(FIGHTS):
                seed = await load_seed(event_log, f"f{number}")
                nursery.start_soon(Sequencer(event_log, f"f{number}", TOY, seed).run)
            for number in range(FIGHTS):
                await wait_for_state(event_log, f"f{number}", lambda s: s.active == "a")
            await trio.sleep(0.5)  # every one of them waiting for Ann's player
            # The pool's 8 and the hub's 2 readers: not one connection per encounter.
            assert await _connections(client) <= 8 + 2
            took = []
            for number in (0, FIGHTS // 2, FIGHTS - 1):
                before = await event_log.version(f"f{number}")
                started = time.perf_counter()
                await event_log.submit(f"f{number}", codec.encode_command(EndTurn(command_id="end", actor="a")), seat="alice")
                while await event_log.version(f"f{number}") == before:
                    await trio.sleep(0.002)
                took.append(time.perf_counter() - started)
            assert max(took) < 0.5, took  # woken by the hub's read, not by a timeout (30 s)
            assert hub.reads < 200  # the reads are shared: not one per encounter per second
            nursery.cancel_scope.cancel()
    finally:
        await client.aclose()
