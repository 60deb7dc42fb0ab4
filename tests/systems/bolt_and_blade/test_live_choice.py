"""BB-CMB-12 live: the choice under fire is a prompt to the mover with a deadline,
run by the real sequencer on a real redis-server (trio's mock clock for the deadline)."""

from __future__ import annotations

import time

import pytest
import trio.testing

from firelane.actors.sequencer import Sequencer, create_encounter, load_seed
from firelane.engine.systems.bolt_and_blade import SYSTEM
from firelane.events import codec
from firelane.engine.systems.bolt_and_blade.schemas import BBMove, BBReactiveFireChoice
from firelane.events.log import EventLog
from firelane.events.schemas import ClaimReaction, CombatantSetup, EndTurn, ReactionWindowOpened
from firelane.projections.turn_state import TurnStateProjection
from firelane.redisio import connect

from .helpers import arena, knife_only, sheet


@pytest.fixture
async def event_log(redis_url: str):
    client = await connect(redis_url)
    try:
        yield EventLog(client, "bb-live")
    finally:
        await client.aclose()


async def state_when(event_log: EventLog, encounter: str, predicate, real_seconds: float = 10):  # type: ignore[no-untyped-def]
    projection = TurnStateProjection(event_log, encounter)
    give_up = time.monotonic() + real_seconds
    while time.monotonic() < give_up:
        try:
            state = await projection.catch_up()
        except LookupError:
            state = None
        if state is not None and predicate(state):
            return state
        await trio.testing.wait_all_tasks_blocked(0.01)
    raise AssertionError("the state never satisfied the predicate")


async def test_bb_cmb_12_a_human_mover_who_does_not_answer_by_the_deadline_keeps_its_declared_choice(event_log: EventLog, mock_clock) -> None:
    """BB-CMB-12: w's Reactive Fire damages m (a human seat); the sequencer opens the
    choice window addressed to m alone, waits its 30 s deadline, then closes it: the
    choice m's move declared ("stop") stands, and m is Pinned where it was hit."""
    marksman = sheet(attributes={"agility": 30})  # +10: hits on anything but a natural 1
    setup = arena([
        CombatantSetup(id="m", name="M", side="red", position=(1, 5), sheet=knife_only(vitality=40), policy="human"),
        CombatantSetup(id="w", name="W", side="blue", position=(10, 5), sheet=marksman, policy="human"),
    ])
    await create_encounter(event_log, "choice", setup, b"choi" * 8)
    sequencer = Sequencer(event_log, "choice", SYSTEM, await load_seed(event_log, "choice"))
    async with trio.open_nursery() as nursery:
        nursery.start_soon(sequencer.run)
        state = await state_when(event_log, "choice", lambda s: s.active is not None)
        if state.active == "w":
            await event_log.submit("choice", codec.encode_command(EndTurn(command_id="w-ends", actor="w")), seat="blue")
            state = await state_when(event_log, "choice", lambda s: s.active == "m")
        move = BBMove(command_id="m-runs", actor="m", path=[(1, 6), (1, 7), (1, 8)], on_reactive_fire="stop")
        await event_log.submit("choice", codec.encode_command(move), seat="red")
        state = await state_when(event_log, "choice", lambda s: s.window is not None)
        await event_log.submit("choice", codec.encode_command(ClaimReaction(command_id="w-fires", actor="w", window=state.window.window, reaction="reactive_fire")), seat="blue")
        state = await state_when(event_log, "choice", lambda s: s.window is not None and s.window.trigger == "reactive_fire_choice")
        assert state.window.unanswered() == ["m"] and state.window.continuation["default"] == "stop"
        asked = state.version
        mock_clock.jump(29.9)  # the deadline is 30 s: not yet
        await trio.testing.wait_all_tasks_blocked(0.05)
        assert (await state_when(event_log, "choice", lambda s: True)).version == asked
        mock_clock.jump(0.2)
        state = await state_when(event_log, "choice", lambda s: s.window is None and s.version > asked)
        nursery.cancel_scope.cancel()
    events = [codec.decode_event(s) for s in await event_log.read("choice")]
    opened = [e for e in events if isinstance(e, ReactionWindowOpened) and e.trigger == "reactive_fire_choice"]
    assert len(opened) == 1 and opened[0].deadline_ms == 30_000 and [r.combatant for r in opened[0].reactors] == ["m"]
    choice = [e for e in events if isinstance(e, BBReactiveFireChoice)]
    assert [(c.choice, c.answered) for c in choice] == [("stop", False)]
    assert state.combatants["m"].position == (1, 6) and "pinned" in state.combatants["m"].conditions
    assert not state.combatants["m"].reaction_used
