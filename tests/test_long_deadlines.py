"""Long deadlines (issue 22): turn timers and reaction deadlines in human
units, what their end does chosen per seat (pass, the AI, the GM asked), and
deadlines that survive an engine restarted days later."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from firelane.actors.policies import AIPolicy
from firelane.actors.clock import deadlines_key, trio_wall_clock
from firelane.actors.sequencer import Sequencer, create_encounter, load_seed
from firelane.engine.core import Rejected
from firelane.engine.durations import DurationError, describe_duration, parse_duration
from firelane.engine.registry import register_system
from firelane.engine.timeouts import AI_PLAYS_THE_TURN, CLOSE_THE_WINDOW, END_THE_TURN, TIME_UP_CALL
from firelane.events import codec
from firelane.events.log import EventLog
from firelane.events.schemas import (
    CloseReactionWindow,
    EndTurn,
    GMRule,
    GMRuled,
    ReactionWindowClosed,
    TimeOutTurn,
    TurnEnded,
    TurnTimedOut,
    WindowTimedOut,
)
from firelane.redisio import connect
from tests.test_gm_and_rewind import act, started, table_setup
from tests.test_runtime import wait_for_state
from tests.toy_system import TOY, Step

register_system(TOY, "tests.toy_system")
HOUR_MS, DAY_MS = 3_600_000, 86_400_000


# -- durations in human units ------------------------------------------------------------


@pytest.mark.parametrize(("given", "ms"), [
    ("24h", DAY_MS), ("90m", 5_400_000), ("3d", 3 * DAY_MS), ("1h30m", 5_400_000), ("45s", 45_000),
    ("500ms", 500), ("1.5h", 5_400_000), (" 2D ", 2 * DAY_MS), (90_000, 90_000), (60000.0, 60_000),
])
def test_durations_read_human_units_and_milliseconds(given, ms: int) -> None:
    assert parse_duration(given) == ms


@pytest.mark.parametrize(("given", "line"), [
    ("24x", "turn_timer: '24x' is not a duration (e.g. 90s, 45m, 24h, 3d or 1h30m)"),
    ("h", "turn_timer: 'h' is not a duration (e.g. 90s, 45m, 24h, 3d or 1h30m)"),
    ("", "turn_timer: '' is not a duration (e.g. 90s, 45m, 24h, 3d or 1h30m)"),
    (True, "turn_timer: must be a duration (e.g. 90s, 45m, 24h, 3d or 1h30m), not true"),
    ([1], "turn_timer: must be a duration (e.g. 90s, 45m, 24h, 3d or 1h30m), not list"),
    ("0.5ms", "turn_timer: '0.5ms' is not a whole number of milliseconds"),
])
def test_a_duration_that_cannot_be_read_is_refused_in_one_line(given, line: str) -> None:
    with pytest.raises(DurationError) as error:
        parse_duration(given, name="turn_timer")
    assert str(error.value) == line


def test_durations_are_said_as_people_say_them() -> None:
    assert [describe_duration(ms) for ms in (500, 30_000, 90_000, 5_400_000, DAY_MS, 3 * DAY_MS + 2 * HOUR_MS)] == [
        "500 ms", "30 s", "1 min 30 s", "1 h 30 min", "1 d", "3 d 2 h"]


def test_the_setup_takes_turn_timers_and_reaction_deadlines_in_human_units() -> None:
    state = started(table_setup(turn_timer="24h", reaction_deadline="90m", on_timeout={"alice": "gm"}))
    assert state.settings["turn_timer_ms"] == DAY_MS and state.settings["reaction_deadline_ms"] == 5_400_000
    assert "turn_timer" not in state.settings and state.settings["on_timeout"] == {"alice": "gm"}
    assert state.turn_deadline_ms == DAY_MS  # Ann's turn (a human's) runs on it
    # The millisecond settings take human units too, and numbers as ever.
    assert started(table_setup(turn_timer_ms="3d")).settings["turn_timer_ms"] == 3 * DAY_MS
    assert started(table_setup(reaction_deadline_ms=60_000)).settings["reaction_deadline_ms"] == 60_000


@pytest.mark.parametrize(("settings", "line"), [
    ({"turn_timer": "24x"}, "settings.turn_timer: '24x' is not a duration (e.g. 90s, 45m, 24h, 3d or 1h30m)"),
    ({"reaction_deadline": "31d"}, "settings.reaction_deadline: must be from 1 ms to 30 d, not 31 d"),
    ({"turn_timer": "0s"}, None),
    ({"reaction_deadline": "0s"}, "settings.reaction_deadline: must be from 1 ms to 30 d, not 0"),
    ({"turn_timer": "1h", "turn_timer_ms": 5}, "settings: give turn_timer or turn_timer_ms, not both"),
    ({"on_turn_timeout": "nap"}, "settings.on_turn_timeout: must be one of end_turn, ai, gm, not 'nap'"),
    ({"on_timeout": {"bob": "ai"}}, "settings.on_timeout: there is no seat 'bob' (seats: gm, alice, spectator)"),
    ({"on_timeout": {"alice": "sleep"}}, "settings.on_timeout.alice: must be one of pass, ai, gm, not 'sleep'"),
    ({"on_timeout": 3}, 'settings.on_timeout: must name a choice (pass, ai, gm) per seat, e.g. {"alice": "gm"}'),
])
def test_bad_timing_settings_are_refused_in_one_line(settings: dict, line: str | None) -> None:
    if line is None:
        assert started(table_setup(**settings)).settings["turn_timer_ms"] == 0
        return
    with pytest.raises(Rejected) as error:
        started(table_setup(**settings))
    assert error.value.reason == line


# -- what a deadline's end does, per seat (pure) ------------------------------------------


def test_a_seat_that_chose_the_gm_has_the_gm_asked_when_its_turn_runs_out() -> None:
    for ruling, then in ((END_THE_TURN, TurnEnded), (AI_PLAYS_THE_TURN, None)):
        state = started(table_setup(turn_timer="1h", on_timeout={"alice": "gm"}))
        assert state.active == "a"
        events = act(state, TimeOutTurn(command_id="t", actor="sequencer", combatant="a"))
        assert events == [TurnTimedOut(round=1, combatant="a", then="gm")]
        assert state.active == "a" and state.time_up == "turn" and state.turn_deadline_ms is None
        call = next(c for c in TOY.options(state, "gm").gm.calls if c.id == TIME_UP_CALL)
        assert call.text == "Ann's turn ran out of time: end it, or let the AI play it"
        assert call.rulings == [END_THE_TURN, AI_PLAYS_THE_TURN] and not call.free_text
        with pytest.raises(Rejected, match="the ruling on a deadline's end is one of"):
            TOY.decide(state, GMRule(command_id="r0", actor="gm", call=TIME_UP_CALL, ruling="maybe"), None)
        events = act(state, GMRule(command_id="r", actor="gm", call=TIME_UP_CALL, ruling=ruling))
        assert events[0] == GMRuled(call=TIME_UP_CALL, ruling=ruling, combatant="a")
        assert state.time_up == "" and TIME_UP_CALL not in TOY.pending_gm_calls(state)
        if then is TurnEnded:
            assert isinstance(events[1], TurnEnded) and state.active != "a"
        else:
            assert len(events) == 1 and state.ai_plays == "a" and state.active == "a"


def test_a_seat_that_chose_to_pass_ends_its_turn_whatever_the_table_default() -> None:
    state = started(table_setup(turn_timer="1h", on_turn_timeout="ai", on_timeout={"alice": "pass"}))
    events = act(state, TimeOutTurn(command_id="t", actor="sequencer", combatant="a"))
    assert events[0] == TurnTimedOut(round=1, combatant="a", then="end_turn") and isinstance(events[1], TurnEnded)


def test_a_window_whose_seat_chose_the_gm_stays_open_until_the_gm_closes_it() -> None:
    # A window with a GM-asking seat's reactor: Ann is the reactor when the blue side steps.
    state = started(table_setup(reaction_deadline="2h", on_timeout={"alice": "gm"}))
    act(state, EndTurn(command_id="e", actor="a"))
    while state.active is not None and state.active != "a" and state.window is None:
        act(state, Step(command_id=f"s{state.version}", actor=state.active, to=(5, 5)))
    assert state.window is not None and state.window.unanswered() == ["a"]
    number = state.window.window
    events = act(state, CloseReactionWindow(command_id="c", actor="sequencer", window=number))
    assert events == [WindowTimedOut(window=number, waiting=["a"], then="gm")]
    assert state.window is not None and state.time_up == f"window-{number}"
    call = next(c for c in TOY.options(state, "gm").gm.calls if c.id == TIME_UP_CALL)
    assert call.rulings == [CLOSE_THE_WINDOW] and "waiting for Ann" in call.text
    events = act(state, GMRule(command_id="r", actor="gm", call=TIME_UP_CALL, ruling=CLOSE_THE_WINDOW))
    assert any(isinstance(e, ReactionWindowClosed) and e.window == number for e in events)
    assert state.time_up == ""


# -- live: a turn timer of three days, and an engine restarted in the middle ---------------


@pytest.fixture
async def event_log(redis_url: str):
    client = await connect(redis_url)
    try:
        yield EventLog(client, "long", server_key=b"k" * 32)
    finally:
        await client.aclose()


async def test_a_three_day_turn_timer_survives_a_restart_two_days_in(event_log: EventLog, mock_clock) -> None:
    encounter = "three-days"
    wall = trio_wall_clock(1_800_000_000_000)
    await create_encounter(event_log, encounter, table_setup(turn_timer="3d"), b"s" * 32)
    seed = await load_seed(event_log, encounter)

    async def run_for(jump_s: float) -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(Sequencer(event_log, encounter, TOY, seed, wall_clock=wall).run)
            await wait_for_state(event_log, encounter, lambda s: s.active == "a", pause=0)
            await trio.testing.wait_all_tasks_blocked(0.05)
            mock_clock.jump(jump_s)
            await trio.testing.wait_all_tasks_blocked(0.05)
            nursery.cancel_scope.cancel()

    await run_for(2 * 86_400)  # two days pass with the engine up; then serve stops
    recorded = await event_log.client.execute("HGET", deadlines_key("long", encounter), "turn")
    turn_version, due = recorded.decode().split(":")
    assert int(due) - wall() == 86_400_000  # a day left, by the wall clock
    assert not any(s.type == "TurnTimedOut" for s in await event_log.read(encounter))
    await run_for(86_400 - 60)  # started again: a minute before the deadline nothing has happened
    assert not any(s.type == "TurnTimedOut" for s in await event_log.read(encounter))
    async with trio.open_nursery() as nursery:
        nursery.start_soon(Sequencer(event_log, encounter, TOY, seed, wall_clock=wall).run)
        await trio.testing.wait_all_tasks_blocked(0.05)
        mock_clock.jump(61)
        state = await wait_for_state(event_log, encounter, lambda s: s.active != "a", pause=0)
        nursery.cancel_scope.cancel()
    timed_out = [codec.decode_event(s) for s in await event_log.read(encounter) if s.type == "TurnTimedOut"]
    assert timed_out == [TurnTimedOut(round=1, combatant="a", then="end_turn")]
    assert state.acted_this_round[:1] == ["a"] and int(turn_version) > 0


async def test_a_window_left_unanswered_by_a_seat_that_chose_the_ai_is_answered_by_the_ai(
        event_log: EventLog, mock_clock) -> None:
    encounter = "window-ai"
    await create_encounter(event_log, encounter, table_setup(reaction_deadline="2h", on_timeout={"alice": "ai"}), b"s" * 32)
    seed = await load_seed(event_log, encounter)
    async with trio.open_nursery() as nursery:
        players = {"b": AIPolicy(TOY), "c": AIPolicy(TOY)}
        nursery.start_soon(Sequencer(event_log, encounter, TOY, seed, wall_clock=trio_wall_clock(0), players=players).run)
        await wait_for_state(event_log, encounter, lambda s: s.active == "a", pause=0)
        await event_log.submit(encounter, codec.encode_command(EndTurn(command_id="done", actor="a")), seat="alice")
        state = await wait_for_state(event_log, encounter, lambda s: s.window is not None or s.round > 1, pause=0)
        assert state.window is not None and state.window.unanswered() == ["a"]
        await trio.testing.wait_all_tasks_blocked(0.05)
        mock_clock.jump(2 * 3600 - 1)
        await trio.testing.wait_all_tasks_blocked(0.05)
        assert (await wait_for_state(event_log, encounter, lambda s: True, pause=0)).window is not None
        mock_clock.jump(1.5)
        await wait_for_state(event_log, encounter, lambda s: s.window is None, pause=0)
        nursery.cancel_scope.cancel()
    claimed = next(s for s in await event_log.read(encounter) if s.type == "ReactionClaimed")
    assert claimed.command_id.startswith("sequencer/ai-") and claimed.causation == "timeout:ai-answers-a"
    assert codec.decode_event(claimed).combatant == "a"
