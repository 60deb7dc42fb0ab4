"""The live runtime on a real redis-server: sequencer, actors, windows, rejections."""

from __future__ import annotations

from collections.abc import Callable

import time

import pytest
import trio
import trio.testing

from firelane.actors.lease import EncounterBusy, lease_key
from firelane.actors.policies import AIPolicy
from firelane.actors.runtime import run_encounter
from firelane.actors.sequencer import (
    EncounterExists,
    Sequencer,
    create_encounter,
    encounter_setup,
    ensure_encounter,
    load_seed,
)
from firelane.engine.registry import demo_setup, get_system, register_system
from firelane.engine.seats import ENGINE_SEAT
from firelane.engine.simulate import run_headless
from firelane.engine.state import EncounterState
from firelane.events import codec
from firelane.events.log import EventLog
from firelane.events.schemas import (
    ClaimReaction,
    EndTurn,
    ReactionWindowOpened,
)
from firelane.projections.audit import verify
from firelane.projections.turn_state import TurnStateProjection, fold
from firelane.redisio import connect
from tests.toy_system import TOY, Step, Strike, setup

register_system(TOY, "tests.toy_system")


@pytest.fixture
async def event_log(redis_url: str):
    client = await connect(redis_url)
    try:
        yield EventLog(client, "test")
    finally:
        await client.aclose()


async def wait_for_state(
    event_log: EventLog, encounter: str, predicate: Callable[[EncounterState], bool], *,
    real_seconds: float = 10, pause: float = 0.01,
) -> EncounterState:
    """Poll the folded state until ``predicate`` holds, bounded in real time so
    it also works on a frozen MockClock (there, use ``pause=0``)."""
    projection = TurnStateProjection(event_log, encounter)
    give_up = time.monotonic() + real_seconds
    while time.monotonic() < give_up:
        try:
            state = await projection.catch_up()
        except LookupError:
            state = None
        if state is not None and predicate(state):
            return state
        await trio.sleep(pause)
    raise AssertionError("the state never satisfied the predicate")


async def submit(event_log: EventLog, encounter: str, command, seat: str = ENGINE_SEAT) -> None:
    """Send a command as the engine's own AI would (the toy's combatants are AI)."""
    await event_log.submit(encounter, codec.encode_command(command), seat=seat)


@pytest.mark.parametrize("brace", [False, True], ids=["flat", "nested-windows"])
async def test_live_fight_matches_the_pure_reference_loop_and_verifies(event_log: EventLog, brace: bool) -> None:
    seed = b"live" * 8
    await create_encounter(event_log, "e1", setup(brace=brace), seed)
    state = await run_encounter(event_log, "e1", TOY, {c: AIPolicy(TOY) for c in ("a", "b", "c")})
    stored = await event_log.read("e1")
    live = [codec.decode_event(s) for s in stored]
    reference = [e for _cmd, events, _state in run_headless(TOY, setup(brace=brace), seed, encounter="e1") for e in events]
    assert live == reference
    if brace:
        assert any(isinstance(e, ReactionWindowOpened) and e.nested_in for e in live), "no nested window in this fight"
    assert state.ended and state.seed_revealed == seed.hex()
    assert any(isinstance(e, ReactionWindowOpened) for e in live), "the fight should exercise a reaction window"
    assert fold(TOY, live, "e1") == state
    report = verify(stored)
    assert report.ok, report.problems
    assert report.dice > 0


@pytest.mark.parametrize("system_name", ["bolt-and-blade", "d100-degrees", "d100-zones", "rond6"])
async def test_every_system_fights_live_exactly_as_the_pure_loop(event_log: EventLog, system_name: str) -> None:
    """Each rule system's demo, run by actors on Redis, gives the same log as the
    pure reference loop, and every die in it verifies against the revealed seed."""
    system = get_system(system_name)
    fight_setup = demo_setup(system_name)
    seed = system_name.encode().ljust(32, b"!")
    await create_encounter(event_log, "sys", fight_setup, seed)
    state = await run_encounter(event_log, "sys", system, {c.id: AIPolicy(system) for c in fight_setup.combatants})
    stored = await event_log.read("sys")
    reference = [e for _c, events, _s in run_headless(system, fight_setup, seed, encounter="sys") for e in events]
    assert [codec.decode_event(s) for s in stored] == reference
    assert state.ended and state.winner is not None
    report = verify(stored)
    assert report.ok, report.problems[:5]


async def test_creating_an_existing_encounter_is_refused_but_ensure_is_idempotent(event_log: EventLog) -> None:
    await create_encounter(event_log, "e2", setup(), b"1" * 32)
    with pytest.raises(EncounterExists, match="already exists"):
        await create_encounter(event_log, "e2", setup(), b"2" * 32)
    assert await ensure_encounter(event_log, "e2", setup(), b"3" * 32) == b"1" * 32
    assert await load_seed(event_log, "e2") == b"1" * 32


async def test_an_encounter_is_registered_only_once_its_start_is_queued(event_log: EventLog, monkeypatch) -> None:
    """`firelane serve` takes up an encounter the moment it is registered and
    reads its setup: by then the setup must be there."""
    found_at_registration = {}
    register = event_log.register_encounter

    async def register_and_look(encounter: str, meta: bytes) -> bool:
        found_at_registration[encounter] = [c.id for c in (await encounter_setup(event_log, encounter)).combatants]
        return await register(encounter, meta)

    monkeypatch.setattr(event_log, "register_encounter", register_and_look)
    await create_encounter(event_log, "seen1", setup(), b"4" * 32)
    await ensure_encounter(event_log, "seen2", setup(), b"5" * 32)
    assert found_at_registration == {"seen1": [c.id for c in setup().combatants],
                                     "seen2": [c.id for c in setup().combatants]}
    assert await event_log.encounters() == ["seen1", "seen2"]


async def test_bad_input_is_rejected_with_clear_reasons_and_nothing_is_lost(event_log: EventLog) -> None:
    await create_encounter(event_log, "e3", setup(), b"bad!" * 8)
    sequencer = Sequencer(event_log, "e3", TOY, await load_seed(event_log, "e3"))
    async with trio.open_nursery() as nursery:
        nursery.start_soon(sequencer.run)
        state = await wait_for_state(event_log, "e3", lambda s: s.active is not None)
        active = state.active
        idle = next(c for c in ("a", "b", "c") if c != active)
        sent = [await event_log.submit("e3", b'{"type": "Strike", "actor": ', seat=ENGINE_SEAT),
                await event_log.submit("e3", b'{"type": "Fly", "command_id": "x1", "actor": "a"}', seat=ENGINE_SEAT)]
        for command in (Strike(command_id="x2", actor="zed", target="a"), Strike(command_id="x3", actor=idle, target=active),
                        EndTurn(command_id="x4", actor=active)):
            sent.append(await event_log.submit("e3", codec.encode_command(command), seat=ENGINE_SEAT))
        state = await wait_for_state(event_log, "e3", lambda s: s.rejected_commands == 4 and s.active != active)
        nursery.cancel_scope.cancel()
    stored = await event_log.read("e3")
    rejections = [codec.decode_event(s) for s in stored if s.type == "CommandRejected"]
    reasons = [r.reason for r in rejections]
    assert reasons[0].startswith("malformed JSON")
    assert reasons[1].startswith("invalid command") and "Fly" in reasons[1]
    assert reasons[2] == "the engine acts only for AI combatants, not 'zed'"
    assert reasons[3] == f"it is not {idle}'s turn (active: {active})"
    assert rejections[0].command_id.startswith("inbox:") and rejections[1].actor == "a"
    # Every entry names what caused it: the inbox message of its command (the
    # start's, or one of those sent here); and what was handled has left the inbox.
    start = stored[0].causation
    assert start.startswith(f"inbox:{ENGINE_SEAT}:")
    assert {s.causation for s in stored} <= {start} | {f"inbox:{ENGINE_SEAT}:{i}" for i in sent}
    assert {s.causation for s in stored if s.type == "CommandRejected"} == {f"inbox:{ENGINE_SEAT}:{i}" for i in sent[:4]}
    assert await event_log.read_inbox("e3", ENGINE_SEAT, count=100) == []
    # The valid command after the bad ones was applied: the turn moved on.
    assert state.active != active and active in state.acted_this_round


async def test_a_retried_command_is_applied_once(event_log: EventLog) -> None:
    await create_encounter(event_log, "e4", setup(), b"once" * 8)
    sequencer = Sequencer(event_log, "e4", TOY, await load_seed(event_log, "e4"))
    async with trio.open_nursery() as nursery:
        nursery.start_soon(sequencer.run)
        state = await wait_for_state(event_log, "e4", lambda s: s.active is not None)
        end = EndTurn(command_id="retry-me", actor=state.active)
        for _ in range(3):
            await submit(event_log, "e4", end)
        marker = EndTurn(command_id="marker", actor="nobody")
        await submit(event_log, "e4", marker)
        await wait_for_state(event_log, "e4", lambda s: s.rejected_commands == 1)
        nursery.cancel_scope.cancel()
    stored = await event_log.read("e4")
    assert sum(1 for s in stored if s.command_id == f"{ENGINE_SEAT}/retry-me" and s.type == "TurnEnded") == 1


async def test_second_reaction_in_a_round_is_rejected_live(event_log: EventLog) -> None:
    await create_encounter(event_log, "e5", setup(), b"reac" * 8)
    sequencer = Sequencer(event_log, "e5", TOY, await load_seed(event_log, "e5"))
    async with trio.open_nursery() as nursery:
        nursery.start_soon(sequencer.run)
        # Play until "a" (side red) is active; blue's b and c are the reactors.
        state = await wait_for_state(event_log, "e5", lambda s: s.active is not None)
        while state.active != "a":
            await submit(event_log, "e5", EndTurn(command_id=f"end-{state.version}", actor=state.active))
            version = state.version
            state = await wait_for_state(event_log, "e5", lambda s, v=version: s.version > v and s.active is not None)
        await submit(event_log, "e5", Step(command_id="s1", actor="a", to=(1, 0)))
        state = await wait_for_state(event_log, "e5", lambda s: s.window is not None)
        window = state.window.window
        await submit(event_log, "e5", ClaimReaction(command_id="b1", actor="b", window=window, reaction="duck"))
        await submit(event_log, "e5", ClaimReaction(command_id="c1", actor="c", window=window, reaction="duck"))
        state = await wait_for_state(event_log, "e5", lambda s: s.window is None and s.version > state.version)
        await submit(event_log, "e5", Step(command_id="s2", actor="a", to=(2, 0)))
        await submit(event_log, "e5", ClaimReaction(command_id="b2", actor="b", window=window + 1, reaction="duck"))
        state = await wait_for_state(event_log, "e5", lambda s: s.rejected_commands >= 1)
        nursery.cancel_scope.cancel()
    rejected = [codec.decode_event(s) for s in await event_log.read("e5") if s.type == "CommandRejected"]
    assert [r.reason for r in rejected] == [f"reaction window {window + 1} is not open (no window is open)"] or [
        r.reason for r in rejected
    ] == ["b has already used its reaction this round"]


async def test_window_closes_at_its_deadline_on_the_mock_clock(event_log: EventLog, mock_clock) -> None:
    await create_encounter(event_log, "e6", setup(), b"dead" * 8)
    sequencer = Sequencer(event_log, "e6", TOY, await load_seed(event_log, "e6"))
    async with trio.open_nursery() as nursery:
        nursery.start_soon(sequencer.run)
        state = await wait_for_state(event_log, "e6", lambda s: s.active is not None, pause=0)
        mover = state.active
        await submit(event_log, "e6", Step(command_id="s1", actor=mover, to=(5, 5)))
        state = await wait_for_state(event_log, "e6", lambda s: s.window is not None, pause=0)
        opened = state.version
        mock_clock.jump(29.9)  # not yet: the default deadline is 30 s
        await trio.testing.wait_all_tasks_blocked(0.05)
        assert (await wait_for_state(event_log, "e6", lambda s: True, pause=0)).window is not None
        mock_clock.jump(0.2)
        state = await wait_for_state(event_log, "e6", lambda s: s.window is None and s.version > opened, pause=0)
        nursery.cancel_scope.cancel()
    ordered = [codec.decode_event(s) for s in await event_log.read("e6") if s.type == "ReactionsOrdered"]
    foes = sorted(c for c, comb in state.combatants.items() if comb.side != state.combatants[mover].side)
    assert ordered[0].order == [] and sorted(ordered[0].timed_out) == foes


class FailsOncePolicy:
    """The AI, except that its first decision raises: the supervisor must restart
    the actor, which then recomputes the same command from the log."""

    def __init__(self) -> None:
        self.inner = AIPolicy(TOY)
        self.failed = False

    def choose(self, state: EncounterState, combatant: str, *, last_rejected: bool):
        if not self.failed:
            self.failed = True
            raise RuntimeError("policy crashed")
        return self.inner.choose(state, combatant, last_rejected=last_rejected)


async def test_a_crashed_actor_is_restarted_and_the_fight_is_unchanged(event_log: EventLog) -> None:
    seed = b"sup!" * 8
    await create_encounter(event_log, "sup", setup(), seed)
    flaky = {c: FailsOncePolicy() for c in ("a", "b", "c")}
    state = await run_encounter(event_log, "sup", TOY, flaky)
    assert all(p.failed for p in flaky.values())
    reference = [e for _c, events, _s in run_headless(TOY, setup(), seed, encounter="sup") for e in events]
    assert [codec.decode_event(s) for s in await event_log.read("sup")] == reference
    assert state.ended


async def test_a_task_that_keeps_failing_stops_the_encounter_with_its_error(event_log: EventLog) -> None:
    class AlwaysFails:
        def choose(self, state, combatant, *, last_rejected):
            raise RuntimeError("broken policy")

    await create_encounter(event_log, "dead", setup(), b"dead" * 8)
    with pytest.raises(BaseException) as caught:
        await run_encounter(event_log, "dead", TOY, {"a": AlwaysFails(), "b": AlwaysFails(), "c": AlwaysFails()}, max_restarts=2)
    assert "failed 3 times; last error: RuntimeError('broken policy')" in repr(caught.value)


async def run_until(sequencer: Sequencer, predicate: Callable[[EncounterState], bool], real_seconds: float = 10) -> None:
    """Run a sequencer until its state satisfies ``predicate`` (bounded in real time), then stop it."""
    async with trio.open_nursery() as nursery:
        nursery.start_soon(sequencer.run)
        give_up = time.monotonic() + real_seconds
        while not predicate(sequencer.state):
            assert time.monotonic() < give_up, "the sequencer never reached the expected state"
            await trio.sleep(0.01)
        nursery.cancel_scope.cancel()


async def test_a_second_engine_on_a_running_encounter_stops_with_a_clear_error(event_log: EventLog) -> None:
    await create_encounter(event_log, "busy", setup(), b"busy" * 8)
    seed = await load_seed(event_log, "busy")
    first = Sequencer(event_log, "busy", TOY, seed)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(first.run)
        await wait_for_state(event_log, "busy", lambda s: s.active is not None)
        second = Sequencer(event_log, "busy", TOY, seed, lease_wait_s=0.3)
        with pytest.raises(EncounterBusy, match="encounter 'busy' is being run by another engine"):
            await second.run()
        nursery.cancel_scope.cancel()
    # The first engine released its lease when it stopped: a new one may take over at once.
    third = Sequencer(event_log, "busy", TOY, seed, lease_wait_s=0.3)
    await run_until(third, lambda s: s.active is not None)


async def test_a_lease_left_by_a_dead_process_on_this_host_is_taken_over_at_once(event_log: EventLog) -> None:
    import socket
    import subprocess

    await create_encounter(event_log, "stale", setup(), b"stal" * 8)
    gone = subprocess.Popen(["true"])
    gone.wait()  # a pid that no longer runs
    await event_log.client.execute("SET", lease_key("test", "stale"), f"{socket.gethostname()}:{gone.pid}:x", "PX", 60_000)
    sequencer = Sequencer(event_log, "stale", TOY, await load_seed(event_log, "stale"), lease_wait_s=0.5)
    await run_until(sequencer, lambda s: s.started)  # with 0.5 s to wait, not the 60 s the lease had left


async def test_slices_take_turns_in_order_and_one_a_seat_waits_on_goes_first() -> None:
    from firelane.actors.sequencer import SliceTurns

    turns = SliceTurns()
    order: list[str] = []

    async def slice_of(name: str, urgent: bool) -> None:
        async with turns.turn(urgent=urgent):
            order.append(name)

    async def holder(release: trio.Event) -> None:
        async with turns.turn(urgent=False):
            order.append("first")
            await release.wait()

    release = trio.Event()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(holder, release)
        await trio.testing.wait_all_tasks_blocked()
        for name, urgent in (("a", False), ("b", False), ("seat", True), ("c", False)):
            nursery.start_soon(slice_of, name, urgent)
            await trio.testing.wait_all_tasks_blocked()
        # One waiting for its turn is cancelled: it leaves the queue, and the turn goes on past it.
        cancelled = trio.CancelScope()
        async def cancelled_waiter() -> None:
            with cancelled:
                await slice_of("cancelled", False)
        nursery.start_soon(cancelled_waiter)
        await trio.testing.wait_all_tasks_blocked()
        nursery.start_soon(slice_of, "last", False)
        await trio.testing.wait_all_tasks_blocked()
        cancelled.cancel()
        await trio.testing.wait_all_tasks_blocked()
        release.set()
    assert order == ["first", "seat", "a", "b", "c", "last"]
    # Free again: the next one takes its turn at once.
    await slice_of("free", False)
    assert order[-1] == "free"
