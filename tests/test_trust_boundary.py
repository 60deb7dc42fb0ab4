"""The engine as the trust boundary, against a real redis-server and a hostile client.

Every seat writes to its own inbox stream only; the engine authorises each
command by the stream it came from, rejects any inbox entry whatever its shape
(and moves past it), namespaces command ids per seat, signs its log, and keeps
the seed from everyone until it reveals it.
"""

from __future__ import annotations

from urllib.parse import quote

import msgspec
import pytest
import trio

from firelane.actors.policies import AIPolicy
from firelane.actors.runtime import run_encounter
from firelane.actors.seating import acl_user
from firelane.actors.sequencer import Sequencer, create_encounter, load_seed, seat_tokens, seed_key, seats_key
from firelane.engine.registry import register_system
from firelane.engine.seats import ENGINE_SEAT
from firelane.events import codec
from firelane.events.limits import MAX_PENDING_COMMANDS
from firelane.events.log import EventLog, InboxClosed, InboxFull
from firelane.events.schemas import CombatantSetup, EncounterSetup, EndEncounter, EndTurn, PassReaction, SeatSetup
from firelane.projections.audit import verify
from firelane.projections.roster import campaign_roster
from firelane.redisio import RedisError, connect
from tests.test_runtime import wait_for_state
from tests.toy_system import TOY, Strike

register_system(TOY, "tests.toy_system")

SERVER_KEY = b"s" * 32


def table_setup(**settings) -> EncounterSetup:
    """Ann (red) is played by seat alice; Bo and Cy (blue) by the engine's AI."""
    return EncounterSetup(
        system="toy", settings=settings,
        combatants=[
            CombatantSetup(id="a", name="Ann", side="red", position=(0, 0), sheet={"speed": 9}, policy="human"),
            CombatantSetup(id="b", name="Bo", side="blue", position=(3, 0), sheet={"speed": 0}),
            CombatantSetup(id="c", name="Cy", side="blue", position=(4, 0), sheet={"speed": 1}),
        ],
        seats=[SeatSetup(id="alice", combatants=["a"]), SeatSetup(id="bob")],
    )


@pytest.fixture
async def event_log(redis_url: str):
    client = await connect(redis_url)
    try:
        yield EventLog(client, "trust", server_key=SERVER_KEY)
    finally:
        await client.aclose()


async def send(event_log: EventLog, encounter: str, seat: str, command) -> str:
    return await event_log.submit(encounter, codec.encode_command(command), seat=seat)


async def rejections(event_log: EventLog, encounter: str) -> list:
    return [codec.decode_event(s) for s in await event_log.read(encounter) if s.type == "CommandRejected"]


async def test_poison_inbox_entries_are_rejected_with_a_reason_and_passed_over(event_log: EventLog) -> None:
    await create_encounter(event_log, "poison", table_setup(), b"p" * 32)
    inbox = event_log.inbox_key("poison", "alice")
    client = event_log.client
    sequencer = Sequencer(event_log, "poison", TOY, await load_seed(event_log, "poison"))
    async with trio.open_nursery() as nursery:
        nursery.start_soon(sequencer.run)
        await wait_for_state(event_log, "poison", lambda s: s.active == "a")
        await client.execute("XADD", inbox, "*", "x", "no p field")
        await client.execute("XADD", inbox, "*", "p", b"\xff\xfe not utf-8 \x80")
        await client.execute("XADD", inbox, "*", "p", b"[" * 100_000 + b"]" * 100_000)
        await client.execute("XADD", inbox, "*", "p", b'{"type":"EndTurn","command_id":"d","actor":"a","x":' + b"[" * 40 + b"]" * 40 + b"}")
        huge = b'{"type":"EndTurn","command_id":"big","actor":"a","x":"' + b"A" * 1_000_000 + b'"}'
        await client.execute("XADD", inbox, "*", "p", huge)
        await client.execute("XADD", inbox, "*", "p", b'{"type":"EndTurn","command_id":"' + b"i" * 500 + b'","actor":"a"}')
        await client.execute("XADD", inbox, "*", "p", b'{"type":"EndTurn","command_id":"n1","actor":"' + b"z" * 10_000 + b'"}')
        await client.execute("XADD", inbox, "*", "p", b"123")
        await send(event_log, "poison", "alice", EndTurn(command_id="real", actor="a"))
        state = await wait_for_state(event_log, "poison", lambda s: "a" in s.acted_this_round)
        nursery.cancel_scope.cancel()
    assert state.rejected_commands == 8
    reasons = [r.reason for r in await rejections(event_log, "poison")]
    assert reasons[0].startswith("the inbox entry has no field 'p'")
    assert reasons[1].startswith("malformed JSON")
    assert reasons[2] == "the command is 200,000 bytes; the limit is 65,536"
    assert reasons[3] == "the command nests deeper than 32 levels"
    assert reasons[4] == f"the command is {len(huge):,} bytes; the limit is 65,536"
    assert reasons[5] == "command_id must be 1-64 characters of A-Z a-z 0-9 _ . : @ # -"
    assert reasons[6] == "actor is longer than 64 characters"
    assert reasons[7].startswith("invalid command")
    # Nothing huge is echoed back into the log, which stays small.
    for stored in await event_log.read("poison"):
        assert len(stored.data) < 2_000
    # A restarted engine reads the same inbox from its recorded cursor, and
    # neither dies on the same entries nor handles them twice.
    again = Sequencer(event_log, "poison", TOY, await load_seed(event_log, "poison"))
    await again.load()
    assert again.state == state
    assert again._read["alice"] == again._safe["alice"] != "0-0"


async def test_engine_command_ids_cannot_be_squatted(event_log: EventLog) -> None:
    """A seat that takes the ids the engine will use takes them in its own
    namespace: the AI plays on, the seed is revealed, the fight ends."""
    setup = EncounterSetup(system="toy", combatants=table_setup().combatants[1:] + [
        CombatantSetup(id="d", name="Di", side="red", position=(0, 1), sheet={"speed": 3})],
        seats=[SeatSetup(id="alice")])
    await create_encounter(event_log, "squat", setup, b"q" * 32)
    for command_id in ("start", "reveal-seed", "close-window-1", "b@v3", "c@v5", "d@v4"):
        await send(event_log, "squat", "alice", EndTurn(command_id=command_id, actor="b"))
    await send(event_log, "squat", "alice", EndEncounter(command_id="stop", actor="sequencer"))
    with trio.fail_after(60):
        state = await run_encounter(event_log, "squat", TOY, {c: AIPolicy(TOY) for c in ("b", "c", "d")})
    assert state.ended and state.winner is not None and state.seed_revealed
    stored = await event_log.read("squat")
    from_alice = [s for s in stored if s.causation.startswith("inbox:alice:")]
    assert len(from_alice) == 7 and all(s.type == "CommandRejected" and s.command_id.startswith("alice/") for s in from_alice)
    assert any(s.command_id == "sequencer/reveal-seed" for s in stored)
    assert verify(stored).ok


async def test_a_seat_acts_only_for_its_own_combatants(event_log: EventLog) -> None:
    await create_encounter(event_log, "imp", table_setup(), b"i" * 32)
    sequencer = Sequencer(event_log, "imp", TOY, await load_seed(event_log, "imp"))
    async with trio.open_nursery() as nursery:
        nursery.start_soon(sequencer.run)
        await wait_for_state(event_log, "imp", lambda s: s.active == "a")
        await send(event_log, "imp", "alice", Strike(command_id="1", actor="b", target="a"))
        await send(event_log, "imp", "alice", EndTurn(command_id="2", actor="sequencer"))
        await send(event_log, "imp", "alice", EndEncounter(command_id="3", actor="gm", reason="mine"))
        await send(event_log, "imp", "bob", EndTurn(command_id="4", actor="a"))
        # A spectator has no inbox the engine reads (nor may write one: see the ACL test).
        await send(event_log, "imp", "spectator", EndTurn(command_id="5", actor="a"))
        await send(event_log, "imp", "gm", EndEncounter(command_id="6", actor="sequencer"))
        await wait_for_state(event_log, "imp", lambda s: s.rejected_commands == 5)
        await send(event_log, "imp", "gm", EndEncounter(command_id="7", actor="gm", reason="the GM calls it"))
        state = await wait_for_state(event_log, "imp", lambda s: s.ended)
        nursery.cancel_scope.cancel()
    # (one read takes every seat's inbox: the order across seats is the read's, so compare as sets)
    assert sorted(r.reason for r in await rejections(event_log, "imp")) == sorted([
        "seat 'alice' does not control 'b' (it controls: a)",
        "EndTurn with actor 'sequencer' is the engine's alone",
        "EndEncounter is a GM command: only the GM seat may send it",
        "seat 'bob' does not control 'a' (it controls: no combatants)",
        "EndEncounter with actor 'sequencer' is the engine's alone",
    ])
    assert state.end_reason == "the GM calls it" and "a" not in state.acted_this_round


async def test_a_reused_command_id_with_another_body_is_rejected(event_log: EventLog) -> None:
    await create_encounter(event_log, "reuse", table_setup(), b"r" * 32)
    sequencer = Sequencer(event_log, "reuse", TOY, await load_seed(event_log, "reuse"))
    async with trio.open_nursery() as nursery:
        nursery.start_soon(sequencer.run)
        await wait_for_state(event_log, "reuse", lambda s: s.active == "a")
        await send(event_log, "reuse", "alice", Strike(command_id="same", actor="a", target="b"))
        await send(event_log, "reuse", "alice", Strike(command_id="same", actor="a", target="b"))  # a retry: ignored
        await send(event_log, "reuse", "alice", PassReaction(command_id="same", actor="a", window=9))
        state = await wait_for_state(event_log, "reuse", lambda s: s.rejected_commands == 1)
        nursery.cancel_scope.cancel()
    (rejection,) = await rejections(event_log, "reuse")
    assert rejection.reason == "command_id 'same' was already used by seat 'alice' for another command; send a new command_id"
    attacks = [s for s in await event_log.read("reuse") if s.type == "AttackResolved" and s.command_id == "alice/same"]
    assert len(attacks) == 1 and state.version > 0


async def seat_client(redis_url: str, campaign: str, encounter: str, seat: str, token: str):
    socket_path = redis_url.removeprefix("unix://")
    return await connect(f"unix://{quote(acl_user(campaign, encounter, seat), safe='')}:{token}@{socket_path}")


async def test_each_seat_has_a_redis_user_that_reads_the_log_and_writes_only_its_inbox(
        event_log: EventLog, redis_url: str) -> None:
    await create_encounter(event_log, "acl", table_setup(), b"a" * 32)
    tokens = await seat_tokens(event_log, "acl")
    assert set(tokens) == {"gm", "alice", "bob", "spectator"} and len(set(tokens.values())) == 4
    alice = await seat_client(redis_url, "trust", "acl", "alice", tokens["alice"])
    spectator = await seat_client(redis_url, "trust", "acl", "spectator", tokens["spectator"])
    try:
        sequencer = Sequencer(event_log, "acl", TOY, await load_seed(event_log, "acl"))
        async with trio.open_nursery() as nursery:
            nursery.start_soon(sequencer.run)
            await wait_for_state(event_log, "acl", lambda s: s.active == "a")
            forbidden = [
                ("GET", seed_key("trust", "acl")),
                ("HGETALL", seats_key("trust", "acl")),
                ("GET", f"firelane:{{trust}}:enc:acl:sequencer"),
                ("XADD", event_log.inbox_key("acl", "bob"), "*", "p", "{}"),
                ("XADD", event_log.inbox_key("acl", ENGINE_SEAT), "*", "p", "{}"),
                ("XADD", event_log.log_key("acl"), "*", "n", "99"),
                ("XRANGE", event_log.inbox_key("acl", "alice"), "-", "+"),
                ("KEYS", "*"),
                ("FLUSHALL",),
            ]
            for command in forbidden:
                with pytest.raises(RedisError) as refused:
                    await alice.execute(*command)
                assert refused.value.code == "NOPERM", command
            # What it may do: read the log, and act through its own inbox.
            log_entries = await alice.execute("XRANGE", event_log.log_key("acl"), "-", "+")
            assert log_entries and log_entries[0][1][log_entries[0][1].index(b"t") + 1] == b"EncounterStarted"
            await alice.execute("XADD", event_log.inbox_key("acl", "alice"), "*", "p",
                                codec.encode_command(EndTurn(command_id="via-redis", actor="a")))
            state = await wait_for_state(event_log, "acl", lambda s: "a" in s.acted_this_round)
            with pytest.raises(RedisError) as refused:
                await spectator.execute("XADD", event_log.inbox_key("acl", "spectator"), "*", "p", "{}")
            assert refused.value.code == "NOPERM"
            assert await spectator.execute("XLEN", event_log.log_key("acl")) >= state.version
            nursery.cancel_scope.cancel()
    finally:
        await alice.aclose()
        await spectator.aclose()
    applied = [s for s in await event_log.read("acl") if s.command_id == "alice/via-redis"]
    assert applied and applied[0].type == "TurnEnded"


async def test_an_ended_encounters_inboxes_are_closed_and_its_seats_only_read_the_log(
        event_log: EventLog, redis_url: str) -> None:
    # Nobody reads an ended encounter's inboxes: were they still open, a seat
    # could fill Redis (and its append-only file) with commands without end.
    await create_encounter(event_log, "over", table_setup(), b"o" * 32)
    tokens = await seat_tokens(event_log, "over")
    alice = await seat_client(redis_url, "trust", "over", "alice", tokens["alice"])
    try:
        sequencer = Sequencer(event_log, "over", TOY, await load_seed(event_log, "over"))
        async with trio.open_nursery() as nursery:
            nursery.start_soon(sequencer.run)
            await wait_for_state(event_log, "over", lambda s: s.active == "a")
            await alice.execute("XADD", event_log.inbox_key("over", "alice"), "*", "p",
                                codec.encode_command(EndTurn(command_id="before", actor="a")))
            await wait_for_state(event_log, "over", lambda s: "a" in s.acted_this_round)
            await send(event_log, "over", "gm", EndEncounter(command_id="stop", actor="gm", reason="the end"))
        # sequencer.run has returned: the encounter ended, its seed is out, its inboxes are closed.
        inboxes = [event_log.inbox_key("over", seat) for seat in tokens] + [event_log.inbox_key("over", ENGINE_SEAT)]
        assert await event_log.client.execute("EXISTS", *inboxes) == 0
        with pytest.raises(RedisError) as refused:
            await alice.execute("XADD", event_log.inbox_key("over", "alice"), "*", "p", "{}")
        assert refused.value.code == "NOPERM"
        entries = await alice.execute("XRANGE", event_log.log_key("over"), "-", "+")
        assert entries[-1][1][entries[-1][1].index(b"t") + 1] == b"SeedRevealed"
        with pytest.raises(InboxClosed, match="encounter 'over' has ended: it takes no more commands"):
            await send(event_log, "over", "alice", EndTurn(command_id="after", actor="a"))
        assert await event_log.client.execute("EXISTS", *inboxes) == 0
    finally:
        await alice.aclose()
    # Run again (a restart), the engine finds it over and leaves it so.
    await Sequencer(event_log, "over", TOY, await load_seed(event_log, "over")).run()
    assert await event_log.client.execute("EXISTS", *inboxes) == 0


async def test_a_seat_may_have_only_so_many_commands_waiting(event_log: EventLog) -> None:
    # With no engine reading (not started yet, or down), a seat's inbox could
    # grow without end; past MAX_PENDING_COMMANDS a submit is refused, unstored.
    await create_encounter(event_log, "full", table_setup(), b"f" * 32)
    inbox = event_log.inbox_key("full", "alice")
    for i in range(MAX_PENDING_COMMANDS):
        await send(event_log, "full", "alice", EndTurn(command_id=f"q{i}", actor="a"))
    with pytest.raises(InboxFull, match=f"seat 'alice' has {MAX_PENDING_COMMANDS} commands waiting"):
        await send(event_log, "full", "alice", EndTurn(command_id="one-too-many", actor="a"))
    assert await event_log.client.execute("XLEN", inbox) == MAX_PENDING_COMMANDS
    await send(event_log, "full", "bob", EndTurn(command_id="other-seat", actor="b"))  # another seat's inbox is its own
    sequencer = Sequencer(event_log, "full", TOY, await load_seed(event_log, "full"))
    async with trio.open_nursery() as nursery:
        nursery.start_soon(sequencer.run)
        # The engine handles them (the first ends Ann's turn, the rest are refused and
        # rationed) and trims what it has handled: the seat may send again.
        with trio.fail_after(20):
            while await event_log.client.execute("XLEN", inbox) >= MAX_PENDING_COMMANDS:
                await trio.sleep(0.02)
        await send(event_log, "full", "alice", EndTurn(command_id="again", actor="a"))
        nursery.cancel_scope.cancel()
    first = [s for s in await event_log.read("full") if s.command_id == "alice/q0"]
    assert first and first[0].type == "TurnEnded"


async def test_a_forged_log_entry_is_reported_never_trusted_never_fatal(event_log: EventLog) -> None:
    setup = EncounterSetup(system="toy", combatants=table_setup().combatants[1:] + [
        CombatantSetup(id="d", name="Di", side="red", position=(0, 1), sheet={"speed": 3})])
    await create_encounter(event_log, "forge", setup, b"f" * 32)
    sequencer = Sequencer(event_log, "forge", TOY, await load_seed(event_log, "forge"))
    async with trio.open_nursery() as nursery:
        nursery.start_soon(sequencer.run)
        state = await wait_for_state(event_log, "forge", lambda s: s.round >= 1)
        # Someone with write access to Redis declares the fight over in the log itself.
        forged = codec.encode_event(codec.decode_body("EncounterEnded", 1, b'{"type":"EncounterEnded","winner":"red","reason":"forged"}'))
        await event_log.client.execute("XADD", event_log.log_key("forge"), "*", "n", state.version + 1, "t", forged.type,
                                       "s", forged.schema, "d", forged.data, "c", "", "k", "", "q", "", "h", "00" * 16)
        await event_log.client.execute("XADD", event_log.log_key("forge"), "*", "garbage", "1")
        nursery.cancel_scope.cancel()
    with trio.fail_after(60):
        final = await run_encounter(event_log, "forge", TOY, {c: AIPolicy(TOY) for c in ("b", "c", "d")})
    assert final.ended and final.end_reason != "forged"
    everything = await event_log.read("forge", include_invalid=True)
    report = verify(everything)
    assert not report.ok
    assert [p for p in report.problems if "signature" in p or "lacks field" in p] == report.problems
    assert len(report.problems) == 2
    # The engine's own entries still verify on their own, and the roster lists the encounter.
    assert verify(await event_log.read("forge")).ok
    (row,) = await campaign_roster(event_log)
    assert row.status == "ended" and row.winner == final.winner


async def test_the_roster_lists_every_encounter_even_when_one_is_broken(event_log: EventLog) -> None:
    await create_encounter(event_log, "fine", table_setup(), b"1" * 32)
    await event_log.register_encounter("broken", b"not json at all")
    await event_log.client.execute("SET", event_log.version_key("broken"), 3)
    rows = await campaign_roster(event_log)
    assert [row.encounter for row in rows] == ["fine", "broken"]
    assert rows[0].status == "waiting to start"
    assert rows[1].status.startswith("unreadable")


async def test_rejections_never_grow_the_log_by_what_they_reject(event_log: EventLog) -> None:
    await create_encounter(event_log, "size", table_setup(), b"z" * 32)
    sequencer = Sequencer(event_log, "size", TOY, await load_seed(event_log, "size"))
    async with trio.open_nursery() as nursery:
        nursery.start_soon(sequencer.run)
        await wait_for_state(event_log, "size", lambda s: s.active == "a")
        before = await event_log.client.execute("MEMORY", "USAGE", event_log.log_key("size"))
        huge = msgspec.json.encode({"type": "Strike", "command_id": "h", "actor": "a", "target": "x" * 60_000})
        await event_log.submit("size", huge, seat="alice")
        state = await wait_for_state(event_log, "size", lambda s: s.rejected_commands == 1)
        after = await event_log.client.execute("MEMORY", "USAGE", event_log.log_key("size"))
        nursery.cancel_scope.cancel()
    (rejection,) = await rejections(event_log, "size")
    assert len(rejection.reason) <= 400
    assert after - before < 2_000, (before, after)
    assert state.rejected_commands == 1


async def test_a_flood_of_refused_commands_is_counted_not_recorded_one_by_one(event_log: EventLog) -> None:
    """A seat that floods its inbox with commands the engine refuses gets a
    burst of REJECTION_BURST refusals recorded, then one a second; the rest
    are counted in CommandsDropped events, so the log stays small. The engine
    goes on: another seat's command is applied, and a restart does not
    record the dropped refusals again."""
    from firelane.actors.sequencer import REJECTION_BURST

    await create_encounter(event_log, "flood", table_setup(), b"f" * 32)
    client = event_log.client
    sequencer = Sequencer(event_log, "flood", TOY, await load_seed(event_log, "flood"))
    flood = 2_000
    async with trio.open_nursery() as nursery:
        nursery.start_soon(sequencer.run)
        await wait_for_state(event_log, "flood", lambda s: s.active == "a")
        began = trio.current_time()
        inbox = event_log.inbox_key("flood", "bob")
        for start in range(0, flood, 500):
            # bob controls no combatant: each of these is refused
            added = await client.pipeline([("XADD", inbox, "*", "p", codec.encode_command(EndTurn(command_id=f"f{i}", actor="a")))
                                           for i in range(start, start + 500)])
        last_entry = added[-1].decode()
        await send(event_log, "flood", "alice", EndTurn(command_id="real", actor="a"))
        await wait_for_state(event_log, "flood", lambda s: "a" in s.acted_this_round)

        async def counted() -> int:
            stored = await event_log.read("flood")
            return sum(1 for s in stored if s.type == "CommandRejected" and s.command_id.startswith("bob/")) + sum(
                codec.decode_event(s).count for s in stored if s.type == "CommandsDropped")

        with trio.fail_after(30):
            while await counted() < flood:
                await trio.sleep(0.05)
        elapsed = trio.current_time() - began
        nursery.cancel_scope.cancel()
    stored = await event_log.read("flood")
    recorded = [s for s in stored if s.type == "CommandRejected" and s.command_id.startswith("bob/")]
    dropped = [codec.decode_event(s) for s in stored if s.type == "CommandsDropped"]
    assert REJECTION_BURST <= len(recorded) <= REJECTION_BURST + elapsed + 1
    assert len(recorded) + sum(d.count for d in dropped) == flood
    assert dropped and all(d.seat == "bob" and d.reason.startswith(f"more than {REJECTION_BURST} refused") for d in dropped)
    assert len(dropped) <= elapsed + 2  # one report per burst, not one per command
    assert len(stored) < 200
    # The last report covers bob's inbox to its end, so a restart reads none of it again;
    # the inbox holds nothing any more: what the engine read has left it.
    assert await client.execute("XLEN", inbox) == 0
    assert dropped[-1].last_inbox_id == last_entry or recorded[-1].causation == f"inbox:bob:{last_entry}"
    again = Sequencer(event_log, "flood", TOY, await load_seed(event_log, "flood"))
    await again.load()
    assert again._safe["bob"] == last_entry
    assert again.state.rejected_commands == flood


# -- a seat is never stuck on its limit ------------------------------------------


async def answers_to(event_log: EventLog, encounter: str, seat: str, inbox_id: str) -> list:
    return [s for s in await event_log.read(encounter) if s.causation == f"inbox:{seat}:{inbox_id}"]


async def wait_for_answer(event_log: EventLog, encounter: str, seat: str, inbox_id: str) -> list:
    while True:
        found = await answers_to(event_log, encounter, seat, inbox_id)
        if found:
            return found
        await trio.sleep(0.01)


async def accounted(event_log: EventLog, encounter: str, seat: str) -> int:
    """The seat's commands the log answers: one by one, or counted in CommandsDropped."""
    stored = await event_log.read(encounter)
    return len({s.causation for s in stored if s.causation.startswith(f"inbox:{seat}:") and s.type != "CommandsDropped"}) + sum(
        codec.decode_event(s).count for s in stored if s.type == "CommandsDropped" and codec.decode_event(s).seat == seat)


async def test_refused_commands_leave_the_inbox_so_a_flood_never_locks_a_seat_out(event_log: EventLog) -> None:
    """The issue's case: 600 fast commands the engine refuses (most of them only
    counted), then a valid one. It is accepted at once (the 256 limit counts
    what the engine has not read, never what it refused) and answered within
    2 s; what the engine read has left the inbox; every command is accounted for."""
    await create_encounter(event_log, "stuck", table_setup(), b"s" * 32)
    inbox = event_log.inbox_key("stuck", "alice")
    sequencer = Sequencer(event_log, "stuck", TOY, await load_seed(event_log, "stuck"))
    async with trio.open_nursery() as nursery:
        nursery.start_soon(sequencer.run)
        await wait_for_state(event_log, "stuck", lambda s: s.active == "a")
        stored, full = 0, 0
        for i in range(600):
            try:
                await send(event_log, "stuck", "alice", Strike(command_id=f"f{i}", actor="a", target="nobody"))
                stored += 1
            except InboxFull:
                full += 1  # the engine is behind for a moment: nothing is stored, the client sends later
        valid = await send(event_log, "stuck", "alice", EndTurn(command_id="valid", actor="a"))  # not InboxFull
        with trio.fail_after(2):
            answer = (await wait_for_answer(event_log, "stuck", "alice", valid))[0]
        assert answer.type == "TurnEnded" and answer.command_id == "alice/valid"
        with trio.fail_after(5):
            while await event_log.client.execute("XLEN", inbox) != 0:
                await trio.sleep(0.01)
            while await accounted(event_log, "stuck", "alice") < stored + 1:
                await trio.sleep(0.05)
        nursery.cancel_scope.cancel()
    assert stored > 256  # the flood went past the limit: the engine read and removed as it went
    assert await accounted(event_log, "stuck", "alice") == stored + 1
    dropped = [codec.decode_event(s) for s in await event_log.read("stuck") if s.type == "CommandsDropped"]
    assert dropped and all(d.seat == "alice" for d in dropped)


async def test_a_redis_user_flooding_its_inbox_is_skipped_to_its_newest_commands(
        event_log: EventLog, redis_url: str) -> None:
    """A seat's Redis user can XADD without any limit. Past MAX_PENDING_COMMANDS
    unread, the engine reads only the newest and counts the rest as dropped
    unread: the valid command after the flood is answered within 2 s, the
    inbox is empty after, and another seat is not touched."""
    await create_encounter(event_log, "deluge", table_setup(), b"d" * 32)
    tokens = await seat_tokens(event_log, "deluge")
    alice = await seat_client(redis_url, "trust", "deluge", "alice", tokens["alice"])
    inbox = event_log.inbox_key("deluge", "alice")
    flood = 30_000
    try:
        sequencer = Sequencer(event_log, "deluge", TOY, await load_seed(event_log, "deluge"))
        async with trio.open_nursery() as nursery:
            nursery.start_soon(sequencer.run)
            await wait_for_state(event_log, "deluge", lambda s: s.active == "a")
            bob_waiting = await send(event_log, "deluge", "bob", EndTurn(command_id="bob-1", actor="a"))
            refused = codec.encode_command(Strike(command_id="f", actor="a", target="nobody"))
            for start in range(0, flood, 5_000):
                await alice.pipeline([("XADD", inbox, "*", "p", refused) for _ in range(5_000)])
            valid = (await alice.execute("XADD", inbox, "*", "p",
                                         codec.encode_command(EndTurn(command_id="valid", actor="a")))).decode()
            with trio.fail_after(2):
                answer = (await wait_for_answer(event_log, "deluge", "alice", valid))[0]
            assert answer.type == "TurnEnded"
            with trio.fail_after(5):
                while await event_log.client.execute("XLEN", inbox) != 0:
                    await trio.sleep(0.01)
                while await accounted(event_log, "deluge", "alice") < flood + 1:
                    await trio.sleep(0.05)
            nursery.cancel_scope.cancel()
    finally:
        await alice.aclose()
    stored = await event_log.read("deluge")
    dropped = [codec.decode_event(s) for s in stored if s.type == "CommandsDropped"]
    assert await accounted(event_log, "deluge", "alice") == flood + 1
    assert any("skipped unread" in d.reason for d in dropped)
    assert len(stored) < 200  # counted, not recorded one by one
    # bob's command was read and answered as ever (refused: bob controls nobody).
    assert [s.type for s in await answers_to(event_log, "deluge", "bob", bob_waiting)] == ["CommandRejected"]


async def test_an_engine_stopped_anywhere_in_a_flood_loses_and_doubles_no_count(event_log: EventLog) -> None:
    """What leaves an inbox unrecorded in the log (refusals only counted, a
    backlog skipped) leaves it with its count, atomically: an engine stopped
    at any point and started again accounts for every command exactly once."""
    import random

    await create_encounter(event_log, "halts", table_setup(), b"h" * 32)
    inbox = event_log.inbox_key("halts", "alice")
    flood = 3_000
    refused = codec.encode_command(Strike(command_id="f", actor="a", target="nobody"))
    for start in range(0, flood, 1_000):
        await event_log.client.pipeline([("XADD", inbox, "*", "p", refused) for _ in range(1_000)])
    seed = await load_seed(event_log, "halts")
    chance = random.Random(17)
    for _ in range(12):
        with trio.move_on_after(chance.uniform(0.0, 0.05)):
            await Sequencer(event_log, "halts", TOY, seed).run()
    sequencer = Sequencer(event_log, "halts", TOY, seed)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(sequencer.run)
        with trio.fail_after(20):
            while await accounted(event_log, "halts", "alice") < flood:
                await trio.sleep(0.05)
        await trio.sleep(1.5)  # anything counted twice would be reported by now
        nursery.cancel_scope.cancel()
    assert await accounted(event_log, "halts", "alice") == flood
    assert await event_log.client.execute("XLEN", inbox) == 0


def window_setup() -> EncounterSetup:
    """Ann (alice) and Di (dina) on red, Bo (bob) on blue, all played by people:
    Bo's step opens a window that waits for Ann and Di."""
    return EncounterSetup(
        system="toy",
        combatants=[
            CombatantSetup(id="a", name="Ann", side="red", position=(0, 0), sheet={"speed": 1}, policy="human"),
            CombatantSetup(id="d", name="Di", side="red", position=(0, 2), sheet={"speed": 1}, policy="human"),
            CombatantSetup(id="b", name="Bo", side="blue", position=(3, 0), sheet={"speed": 9}, policy="human"),
        ],
        seats=[SeatSetup(id="alice", combatants=["a"]), SeatSetup(id="dina", combatants=["d"]),
               SeatSetup(id="bob", combatants=["b"])],
    )


async def test_a_held_window_answer_stays_in_its_inbox_until_applied_whatever_follows(event_log: EventLog) -> None:
    """A window answer the engine holds is the one thing it keeps in an inbox
    it has read: the seat's later commands leave it, a restarted engine finds
    the answer there, and it is applied when the window closes."""
    from firelane.events.schemas import ClaimReaction  # noqa: F401 (the toy's answers are PassReaction here)
    from tests.toy_system import Step

    await create_encounter(event_log, "held", window_setup(), b"w" * 32)
    seed = await load_seed(event_log, "held")
    inbox = event_log.inbox_key("held", "alice")
    async with trio.open_nursery() as nursery:
        nursery.start_soon(Sequencer(event_log, "held", TOY, seed).run)
        await wait_for_state(event_log, "held", lambda s: s.active == "b")
        await send(event_log, "held", "bob", Step(command_id="step", actor="b", to=(3, 1)))
        state = await wait_for_state(event_log, "held", lambda s: s.window is not None)
        window = state.window.window
        answer = await send(event_log, "held", "alice", PassReaction(command_id="pass", actor="a", window=window))
        again = await send(event_log, "held", "alice", PassReaction(command_id="pass", actor="a", window=window))
        for i in range(300):  # refused: it is not Ann's turn
            await send(event_log, "held", "alice", EndTurn(command_id=f"n{i}", actor="a"))
        with trio.fail_after(5):
            while await accounted(event_log, "held", "alice") < 301:
                await trio.sleep(0.02)
            while await event_log.client.execute("XLEN", inbox) != 1:
                await trio.sleep(0.02)
        (kept,) = await event_log.client.execute("XRANGE", inbox, "-", "+")
        assert kept[0].decode() == answer  # the held answer, and nothing else
        nursery.cancel_scope.cancel()
    # The repeat of the held answer was answered on its own, pointing at the first.
    (repeat,) = [codec.decode_event(s) for s in await answers_to(event_log, "held", "alice", again)]
    assert type(repeat).__name__ == "CommandRepeated" and repeat.first_version == 0
    assert repeat.first_cause == f"inbox:alice:{answer}" and repeat.command_id == "pass"
    # A new engine (as after a crash) finds the held answer and applies it when Di answers.
    async with trio.open_nursery() as nursery:
        nursery.start_soon(Sequencer(event_log, "held", TOY, seed).run)
        await send(event_log, "held", "dina", PassReaction(command_id="pass", actor="d", window=window))
        state = await wait_for_state(event_log, "held", lambda s: s.window is None)
        with trio.fail_after(5):
            while await event_log.client.execute("XLEN", inbox) != 0:
                await trio.sleep(0.02)
        nursery.cancel_scope.cancel()
    passed = [s for s in await event_log.read("held") if s.type == "ReactionPassed"]
    assert [s.causation for s in passed] == [f"inbox:alice:{answer}", f"inbox:dina:{(await answers_to_seat(event_log, 'held', 'dina'))}"]


async def answers_to_seat(event_log: EventLog, encounter: str, seat: str) -> str:
    """The inbox id of the one command the log answers for ``seat``."""
    (cause,) = {s.causation for s in await event_log.read(encounter) if s.causation.startswith(f"inbox:{seat}:")}
    return cause.rsplit(":", 1)[1]


async def test_every_inbox_entry_gets_an_answer_of_its_own_even_a_repeat(event_log: EventLog, redis_url: str) -> None:
    """The README: match your answers by ``k``. A command sent twice (same id,
    same body) is applied once, and the second entry is answered too: a
    CommandRepeated under its own ``k`` pointing at the first answer. So is
    the repeat of a refused command; a restarted engine adds nothing."""
    await create_encounter(event_log, "twice", table_setup(), b"t" * 32)
    tokens = await seat_tokens(event_log, "twice")
    alice = await seat_client(redis_url, "trust", "twice", "alice", tokens["alice"])
    inbox = event_log.inbox_key("twice", "alice")
    seed = await load_seed(event_log, "twice")
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(Sequencer(event_log, "twice", TOY, seed).run)
            await wait_for_state(event_log, "twice", lambda s: s.active == "a")
            end_turn = codec.encode_command(EndTurn(command_id="e1", actor="a"))
            bad = codec.encode_command(Strike(command_id="s1", actor="a", target="nobody"))
            ids = [(await alice.execute("XADD", inbox, "*", "p", payload)).decode()
                   for payload in (end_turn, end_turn, bad, bad)]
            with trio.fail_after(5):
                for inbox_id in ids:
                    await wait_for_answer(event_log, "twice", "alice", inbox_id)
            nursery.cancel_scope.cancel()
    finally:
        await alice.aclose()
    stored = await event_log.read("twice")
    first_end = [s for s in stored if s.causation == f"inbox:alice:{ids[0]}"]
    assert first_end[0].type == "TurnEnded" and all(s.command_id == "alice/e1" for s in first_end)
    assert sum(1 for s in stored if s.type == "TurnEnded" and s.command_id == "alice/e1") == 1  # applied once
    (repeat,) = await answers_to(event_log, "twice", "alice", ids[1])
    assert repeat.type == "CommandRepeated" and repeat.command_id == f"alice/inbox:{ids[1]}"
    body = codec.decode_event(repeat)
    assert (body.command_id, body.first_version, body.first_cause) == ("e1", first_end[-1].version, f"inbox:alice:{ids[0]}")
    (refusal,) = await answers_to(event_log, "twice", "alice", ids[2])
    (refused_again,) = await answers_to(event_log, "twice", "alice", ids[3])
    assert refusal.type == "CommandRejected" and refused_again.type == "CommandRepeated"
    assert codec.decode_event(refused_again).first_version == refusal.version
    # A restarted engine reading the first entries again (as after a crash
    # before they left the inbox) answers none of them a second time.
    again = Sequencer(event_log, "twice", TOY, seed)
    await again.load()
    from firelane.events.log import InboxEntry

    for inbox_id, payload in zip(ids, (end_turn, end_turn, bad, bad)):
        again._read["alice"] = inbox_id
        await again._handle(InboxEntry(seat="alice", entry_id=inbox_id, fields={b"p": payload}))
    assert await event_log.read("twice") == stored


async def test_the_inboxes_close_before_the_seed_is_revealed_and_what_they_held_is_answered(
        event_log: EventLog, redis_url: str) -> None:
    """At the end the engine closes the inboxes (the API's submit and the seats'
    Redis users refuse from then on), answers what they still hold, deletes
    them, and only then reveals the seed: nothing is taken, and left
    unanswered, once the reveal is readable."""
    await create_encounter(event_log, "shut", table_setup(), b"c" * 32)
    tokens = await seat_tokens(event_log, "shut")
    alice = await seat_client(redis_url, "trust", "shut", "alice", tokens["alice"])
    inbox = event_log.inbox_key("shut", "alice")
    at_reveal: dict[str, object] = {}
    late: list[str] = []

    class WatchedLog(EventLog):
        async def mark_inboxes_closed(self, encounter: str) -> None:
            # A command that reached the inbox just as the encounter ended, before it was closed.
            if not late:
                late.append((await alice.execute("XADD", inbox, "*", "p",
                                                 codec.encode_command(EndTurn(command_id="late", actor="a")))).decode())
            await super().mark_inboxes_closed(encounter)

        async def append_batches(self, encounter, expected_version, batches):
            if any(entry.type == "SeedRevealed" for batch in batches for entry in batch.entries):
                try:
                    await alice.execute("XADD", inbox, "*", "p", "{}")
                    at_reveal["redis"] = "accepted"
                except RedisError as exc:
                    at_reveal["redis"] = exc.code
                try:
                    await send(self, encounter, "alice", EndTurn(command_id="later", actor="a"))
                    at_reveal["submit"] = "accepted"
                except InboxClosed:
                    at_reveal["submit"] = "closed"
                at_reveal["answered"] = bool(await answers_to(self, encounter, "alice", late[0])) if late else False
                at_reveal["inboxes"] = await self.client.execute("EXISTS", inbox)
            return await super().append_batches(encounter, expected_version, batches)

    watched = WatchedLog(event_log.client, "trust", server_key=SERVER_KEY)
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(Sequencer(watched, "shut", TOY, await load_seed(event_log, "shut")).run)
            await wait_for_state(event_log, "shut", lambda s: s.active == "a")
            await send(event_log, "shut", "gm", EndEncounter(command_id="stop", actor="gm", reason="the end"))
    finally:
        await alice.aclose()
    assert at_reveal == {"redis": "NOPERM", "submit": "closed", "answered": True, "inboxes": 0}
    (answer,) = await answers_to(event_log, "shut", "alice", late[0])
    assert codec.decode_event(answer).reason == "the encounter has ended: it takes no more commands"
    stored = await event_log.read("shut")
    assert stored[-1].type == "SeedRevealed" and stored.index(answer) < len(stored) - 1
