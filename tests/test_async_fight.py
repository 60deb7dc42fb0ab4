"""A fight across three days, in simulated time (trio's MockClock and a wall
clock that follows it): two players answer hours apart, one is away and
plays by standing orders, the GM is asked when the away player's turn runs
out and hears of it by webhook (a local receiver), and the log is checked
entry by entry (issue 22)."""

from __future__ import annotations

import json
import re

import pytest
import trio
import trio.testing

from firelane.actors.clock import trio_wall_clock
from firelane.actors.hooks import DUE_KEY, Notifier, check_signature, register_hook
from firelane.actors.orders import set_seat_orders
from firelane.actors.policies import AIPolicy
from firelane.actors.sequencer import Sequencer, create_encounter, load_seed
from firelane.engine.registry import register_system
from firelane.engine.timeouts import END_THE_TURN, TIME_UP_CALL
from firelane.events import codec
from firelane.events.log import EventLog
from firelane.events.schemas import ClaimReaction, CombatantSetup, EncounterSetup, EndTurn, GMRule, PassReaction, SeatSetup
from firelane.redisio import connect
from tests.hook_receiver import Receiver
from tests.test_runtime import wait_for_state
from tests.toy_system import TOY, Strike

register_system(TOY, "tests.toy_system")
T0 = 1_800_000_000_000
HOUR = 3600


def three_day_setup() -> EncounterSetup:
    return EncounterSetup(
        system="toy", name="The long siege",
        settings={"turn_timer": "12h", "reaction_deadline": "8h", "on_timeout": {"carol": "gm"}, "max_rounds": 3},
        combatants=[
            CombatantSetup(id="a", name="Ann", side="red", position=(0, 0), sheet={"speed": 3, "hp": 3}, policy="human"),
            CombatantSetup(id="d", name="Dee", side="red", position=(0, 1), sheet={"speed": 2, "hp": 3}, policy="human"),
            CombatantSetup(id="e", name="Eve", side="red", position=(0, 2), sheet={"speed": 1, "hp": 3}, policy="human"),
            CombatantSetup(id="b", name="Bo", side="blue", position=(3, 0), sheet={"speed": 0, "hp": 4}),
            CombatantSetup(id="c", name="Cy", side="blue", position=(4, 0), sheet={"speed": 0, "hp": 4}),
        ],
        seats=[SeatSetup(id="alice", combatants=["a"]), SeatSetup(id="bob", combatants=["d"]),
               SeatSetup(id="carol", combatants=["e"])],
    )


@pytest.fixture
async def event_log(redis_url: str):
    client = await connect(redis_url)
    try:
        await client.execute("DEL", DUE_KEY)
        yield EventLog(client, "siege", server_key=b"k" * 32)
    finally:
        await client.aclose()


async def test_a_three_day_fight_with_an_away_player_and_the_gm_told_by_webhook(event_log: EventLog, mock_clock) -> None:
    encounter = "siege"
    wall = trio_wall_clock(T0)
    await create_encounter(event_log, encounter, three_day_setup(), b"s" * 32)
    seed = await load_seed(event_log, encounter)
    people = {"a": "alice", "d": "bob", "e": "carol"}
    sent: list[tuple[float, str, str]] = []  # (hours since the start, seat, what)

    async def settle() -> None:
        # Everything idle for a while of real time (deliveries on loopback done) before the clock jumps.
        await trio.testing.wait_all_tasks_blocked(0.2)

    async def send(seat: str, command) -> None:
        sent.append((trio.current_time() / HOUR, seat, type(command).__name__))
        await event_log.submit(encounter, codec.encode_command(command), seat=seat)

    async with trio.open_nursery() as nursery:
        receiver = await nursery.start(Receiver().serve)
        hooks = {seat: await register_hook(event_log.client, campaign="siege", encounter=encounter, seat=seat,
                                           url=receiver.url(f"/ok?{seat}"), format="json", allow_private=True,
                                           wall_clock=wall)
                 for seat in ("gm", "alice")}
        nursery.start_soon(Notifier(event_log.client, allow_private=True, wall_clock=wall).run)
        players = {"b": AIPolicy(TOY), "c": AIPolicy(TOY)}
        nursery.start_soon(Sequencer(event_log, encounter, TOY, seed, wall_clock=wall, players=players).run)
        state = await wait_for_state(event_log, encounter, lambda s: s.started, pause=0)
        # Carol will be away: her standing order ducks whatever steps past Eve.
        await set_seat_orders(event_log, encounter, "carol", json.dumps(
            {"orders": [{"combatant": "e", "on": "step", "do": "duck"}]}).encode())
        handled: set[tuple[int, str]] = set()
        for _ in range(60):
            await settle()
            state = await wait_for_state(event_log, encounter, lambda s: True, pause=0)
            if state.ended:
                break
            waiting = TOY.awaiting(state)
            if waiting.kind == "turn" and waiting.combatants[0] in people:
                who = waiting.combatants[0]
                if who == "a" and (state.version, who) not in handled:
                    handled.add((state.version, who))
                    mock_clock.jump(2 * HOUR)  # Alice answers two hours in
                    await send("alice", Strike(command_id=f"a{state.version}", actor="a", target="b"))
                    await wait_for_state(event_log, encounter, lambda s, v=state.version: s.version > v, pause=0)
                    await settle()
                    after = await wait_for_state(event_log, encounter, lambda s: True, pause=0)
                    if after.active == "a" and after.window is None:
                        await send("alice", EndTurn(command_id=f"ae{after.version}", actor="a"))
                elif who == "d" and (state.version, who) not in handled:
                    handled.add((state.version, who))
                    mock_clock.jump(7 * HOUR)  # Bob, seven hours in
                    await send("bob", EndTurn(command_id=f"d{state.version}", actor="d"))
                elif who == "e":
                    if state.time_up == "turn":
                        # The GM heard of it by webhook; three hours later the GM rules.
                        await receiver.wait_for("/ok?gm", count=1)
                        mock_clock.jump(3 * HOUR)
                        await send("gm", GMRule(command_id=f"g{state.version}", actor="gm", call=TIME_UP_CALL,
                                                ruling=END_THE_TURN))
                    else:
                        mock_clock.jump(12 * HOUR + 1)  # Carol is away: her twelve hours run out
                await wait_for_state(event_log, encounter, lambda s, v=state.version: s.version > v, pause=0)
                continue
            if waiting.kind == "reactions":
                number = waiting.window
                unanswered = [c for c in waiting.combatants if c in people]
                if "a" in unanswered and (number, "a") not in handled:
                    handled.add((number, "a"))
                    mock_clock.jump(1 * HOUR)
                    await send("alice", PassReaction(command_id=f"pa{number}", actor="a", window=number))
                if "d" in unanswered and (number, "d") not in handled:
                    handled.add((number, "d"))
                    mock_clock.jump(5 * HOUR)
                    await send("bob", ClaimReaction(command_id=f"cd{number}", actor="d", window=number, reaction="snap"))
                await settle()
                now = await wait_for_state(event_log, encounter, lambda s: True, pause=0)
                if now.window is not None and now.window.window == number and now.version == state.version:
                    mock_clock.jump(8 * HOUR + 1)  # Eve's answer comes from her order, at the deadline
                    await wait_for_state(event_log, encounter, lambda s, v=state.version: s.version > v, pause=0)
                continue
            await trio.sleep(0)
        # The seed is revealed once the seats' last views are written (in a worker thread).
        await wait_for_state(event_log, encounter, lambda s: s.seed_revealed, pause=0.01)
        await settle()
        days = trio.current_time() / 86_400
        nursery.cancel_scope.cancel()

    stored = await event_log.read(encounter)
    assert [s.version for s in stored] == list(range(1, len(stored) + 1))
    # Every entry: what it is, whose command wrote it (seat/command id), and what caused it
    # (an inbox's entry ids come from Redis's real clock: the seat is checked, not the id).
    entries = [(s.type, s.command_id, re.sub(r"^inbox:(\w+):[\d-]+$", r"inbox:\1", s.causation)) for s in stored]
    round_two_and_three = []
    for first in (29, 43):
        round_two_and_three += [
            ("TurnEnded", f"engine/b@v{first}", "player:b"), ("RoundStarted", f"engine/b@v{first}", "player:b"),
            ("TurnStarted", f"engine/b@v{first}", "player:b"),
            ("TurnEnded", f"bob/d{first + 3}", "inbox:bob"), ("TurnStarted", f"bob/d{first + 3}", "inbox:bob"),
            ("AttackResolved", f"alice/a{first + 5}", "inbox:alice"),
            ("TurnEnded", f"alice/ae{first + 6}", "inbox:alice"), ("TurnStarted", f"alice/ae{first + 6}", "inbox:alice"),
            ("TurnEnded", f"engine/c@v{first + 8}", "player:c"), ("TurnStarted", f"engine/c@v{first + 8}", "player:c"),
            ("TurnTimedOut", f"sequencer/timeout-{first + 10}", f"deadline:turn-{first + 10}"),
            ("GMRuled", f"gm/g{first + 11}", "inbox:gm"), ("TurnEnded", f"gm/g{first + 11}", "inbox:gm"),
            ("TurnStarted", f"gm/g{first + 11}", "inbox:gm"),
        ]
    assert entries == [
        ("EncounterStarted", "engine/start", "inbox:engine"), ("RoundStarted", "engine/start", "inbox:engine"),
        ("InitiativeRolled", "engine/start", "inbox:engine"), ("TurnStarted", "engine/start", "inbox:engine"),
        # Round 1: Bob (Dee) ends his turn 7 h in; Alice (Ann) strikes 2 h later.
        ("TurnEnded", "bob/d4", "inbox:bob"), ("TurnStarted", "bob/d4", "inbox:bob"),
        ("AttackResolved", "alice/a6", "inbox:alice"), ("DamageDealt", "alice/a6", "inbox:alice"),
        ("TurnEnded", "alice/ae8", "inbox:alice"), ("TurnStarted", "alice/ae8", "inbox:alice"),
        ("AttackResolved", "engine/c@v10", "player:c"), ("DamageDealt", "engine/c@v10", "player:c"),
        # Cy steps past the red side: Alice passes 1 h in, Bob claims 5 h later, and
        # Carol's standing order ducks for Eve at the 8 h deadline, as Carol's answer.
        ("Moved", "engine/c@v12", "player:c"), ("ReactionWindowOpened", "engine/c@v12", "player:c"),
        ("ReactionPassed", "alice/pa1", "inbox:alice"), ("ReactionClaimed", "bob/cd1", "inbox:bob"),
        ("ReactionClaimed", "carol/order-o1-w1", "order:carol:o1"),
        ("ReactionsOrdered", "carol/order-o1-w1", "order:carol:o1"),
        ("ActionTaken", "carol/order-o1-w1", "order:carol:o1"), ("ActionTaken", "carol/order-o1-w1", "order:carol:o1"),
        ("AttackResolved", "carol/order-o1-w1", "order:carol:o1"),
        ("ReactionWindowClosed", "carol/order-o1-w1", "order:carol:o1"),
        ("AttackResolved", "engine/c@v22", "player:c"),
        ("TurnEnded", "engine/c@v23", "player:c"), ("TurnStarted", "engine/c@v23", "player:c"),
        # Eve's 12 h run out: Carol chose to have the GM asked; the GM ends the turn 3 h later.
        ("TurnTimedOut", "sequencer/timeout-25", "deadline:turn-25"),
        ("GMRuled", "gm/g26", "inbox:gm"), ("TurnEnded", "gm/g26", "inbox:gm"), ("TurnStarted", "gm/g26", "inbox:gm"),
        *round_two_and_three,
        ("TurnEnded", "engine/b@v57", "player:b"), ("EncounterEnded", "engine/b@v57", "player:b"),
        ("SeedRevealed", "sequencer/reveal-seed", "encounter-ended"),
    ]
    events = [codec.decode_event(s) for s in stored]
    of = lambda name: [e for e in events if type(e).__name__ == name]  # noqa: E731
    assert [e.then for e in of("TurnTimedOut")] == ["gm", "gm", "gm"]
    assert [(e.call, e.ruling) for e in of("GMRuled")] == [(TIME_UP_CALL, END_THE_TURN)] * 3
    assert [(e.combatant, e.reaction) for e in of("ReactionClaimed")] == [("d", "snap"), ("e", "duck")]
    assert events[-2].reason == "round limit (3) reached"
    assert 3 <= days < 4  # the fight ran over three days and a half of simulated time
    assert [(round(h, 3), seat, what) for h, seat, what in sent][:5] == [
        (7.0, "bob", "EndTurn"), (9.0, "alice", "Strike"), (9.0, "alice", "EndTurn"), (10.0, "alice", "PassReaction"),
        (15.0, "bob", "ClaimReaction")]

    # The webhooks: the GM was told each time a ruling was needed, and of the end;
    # Alice of her turns (each with its deadline), the window and the end. Every body is signed.
    told = {seat: [(r, json.loads(r.body)) for r in receiver.at(f"/ok?{seat}")] for seat in ("gm", "alice")}
    for seat, bodies in told.items():
        for request, _body in bodies:
            assert check_signature(hooks[seat].secret, request.body, request.headers["firelane-signature"],
                                   now=int(request.headers["firelane-signature"].split(",")[0][2:]))
    gm = [body for _r, body in told["gm"]]
    assert [b["kind"] for b in gm] == ["gm_ruling"] * 3 + ["ended"]
    assert gm[0]["text"] == "A GM ruling is needed in The long siege: Eve's turn ran out of time."
    assert gm[-1]["text"] == "The fight The long siege has ended: round limit (3) reached."
    alice = [body for _r, body in told["alice"]]
    assert [b["kind"] for b in alice] == ["your_turn", "window", "your_turn", "your_turn", "ended"]
    turns = [b for b in alice if b["kind"] == "your_turn"]
    # Her turns began when Bob ended his (7 h, 45 h and 69 h in, and the seconds the
    # deadlines' jumps added); each is due twelve hours later.
    bob_ended = [h for h, seat, what in sent if seat == "bob" and what == "EndTurn"]
    assert [round(h) for h in bob_ended] == [7, 45, 69]
    assert [b["deadline_at_ms"] - T0 for b in turns] == [round((h + 12) * HOUR * 1000) for h in bob_ended]
    assert turns[0]["text"] == f"It is Ann's turn in The long siege (due {turns[0]['deadline_at']})."
    window = next(b for b in alice if b["kind"] == "window")
    assert window["deadline_at_ms"] - T0 == (9 * HOUR + 8 * HOUR) * 1000 and window["names"] == ["Ann"]
