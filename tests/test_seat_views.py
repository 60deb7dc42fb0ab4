"""A bot on Redis decides: each seat's Redis user reads what the engine awaits
and its own options from its own stream (`…:options:<seat>`), written by the
engine when it waits for the seats, and no other seat's (a real redis-server)."""

from __future__ import annotations

import msgspec
import pytest
import trio

from firelane.actors.sequencer import Sequencer, create_encounter, load_seed, seat_tokens
from firelane.events import codec
from firelane.events.log import EventLog
from firelane.redisio import RedisError
from tests.test_runtime import wait_for_state
from tests.test_trust_boundary import event_log, seat_client, table_setup  # noqa: F401 - the fixture

pytestmark = pytest.mark.usefixtures("event_log")


async def newest_view(client, event_log: EventLog, encounter: str, seat: str) -> tuple[str, dict]:
    ((entry_id, fields),) = await client.execute("XREVRANGE", event_log.options_key(encounter, seat), "+", "-", "COUNT", "1")
    values = dict(zip(fields[::2], fields[1::2]))
    view = msgspec.json.decode(values[b"o"])
    assert int(values[b"n"]) == view["version"]
    return entry_id.decode(), view


async def test_a_seat_reads_its_own_options_from_redis_and_acts_on_them_but_reads_no_other_seats(
        event_log: EventLog, redis_url: str) -> None:
    await create_encounter(event_log, "views", table_setup(), b"v" * 32)
    tokens = await seat_tokens(event_log, "views")
    alice = await seat_client(redis_url, "trust", "views", "alice", tokens["alice"])
    bob = await seat_client(redis_url, "trust", "views", "bob", tokens["bob"])
    try:
        sequencer = Sequencer(event_log, "views", sequencer_system(), await load_seed(event_log, "views"))
        async with trio.open_nursery() as nursery:
            nursery.start_soon(sequencer.run)
            state = await wait_for_state(event_log, "views", lambda s: s.active == "a")
            with trio.fail_after(10):
                while True:  # written as the engine goes to wait for Alice
                    try:
                        entry_id, view = await newest_view(alice, event_log, "views", "alice")
                    except ValueError:
                        view = {"version": -1}
                    if view["version"] == state.version:
                        break
                    await trio.sleep(0.02)
            assert view["seat"] == "alice" and view["waiting"] == {"kind": "turn", "combatants": ["a"], "window": None, "deadline_ms": None}
            (ann,) = view["combatants"]
            assert ann["combatant"] == "a" and ann["its_turn"] and ann["end_turn"] == {"type": "EndTurn", "actor": "a"}
            # Nobody reads another seat's options: not Bob Alice's, not Alice Bob's or the GM's.
            for reader, seat in ((bob, "alice"), (alice, "bob"), (alice, "gm")):
                for command in (("XRANGE", event_log.options_key("views", seat), "-", "+"),
                                ("XREAD", "STREAMS", event_log.options_key("views", seat), "0-0")):
                    with pytest.raises(RedisError) as refused:
                        await reader.execute(*command)
                    assert refused.value.code == "NOPERM", (seat, command)
            # A refused command changes nothing anyone may do: no new view for it.
            refused_id = await bob.execute("XADD", event_log.inbox_key("views", "bob"), "*", "p",
                                           b'{"type":"EndTurn","command_id":"not-mine","actor":"a"}')
            with trio.fail_after(10):
                while not [s for s in await event_log.read("views") if s.causation == f"inbox:bob:{refused_id.decode()}"]:
                    await trio.sleep(0.02)
            await trio.sleep(0.2)
            assert (await newest_view(alice, event_log, "views", "alice"))[0] == entry_id
            _, bobs = await newest_view(bob, event_log, "views", "bob")
            assert bobs["seat"] == "bob" and bobs["combatants"] == [] and bobs["waiting"]["combatants"] == ["a"]
            # Act on the option as sent, then follow the log and the seat's own stream in one XREAD.
            await alice.execute("XADD", event_log.inbox_key("views", "alice"), "*", "p",
                                msgspec.json.encode({**ann["end_turn"], "command_id": "bot-1"}))
            with trio.fail_after(10):
                reply = await alice.execute("XREAD", "BLOCK", "10000", "STREAMS", event_log.options_key("views", "alice"),
                                            entry_id)
            ((_key, entries),) = reply
            newer = msgspec.json.decode(dict(zip(entries[-1][1][::2], entries[-1][1][1::2]))[b"o"])
            assert newer["version"] > view["version"]
            turn_ended = [s for s in await event_log.read("views") if s.command_id == "alice/bot-1"]
            assert turn_ended and turn_ended[0].type == "TurnEnded"
            nursery.cancel_scope.cancel()
    finally:
        await alice.aclose()
        await bob.aclose()
    assert await event_log.client.execute("XLEN", event_log.options_key("views", "alice")) <= 4  # the newest few kept


def sequencer_system():
    from tests.toy_system import TOY

    return TOY
