"""The GM's hand: adjustments, skipped turns, rulings, the winner, turn timers,
and rewinds (pure engine and live on a real redis-server)."""

from __future__ import annotations

from contextlib import aclosing

import pytest
import trio
import trio.testing

from firelane.actors.policies import AIPolicy
from firelane.actors.runtime import run_encounter
from firelane.actors.sequencer import Sequencer, command_key, create_encounter, fold_log, load_seed
from firelane.engine.core import Rejected, resting_points, resting_points_of
from firelane.engine.dice import FixedDice
from firelane.engine.registry import register_system
from firelane.engine.simulate import run_headless
from firelane.events import codec
from firelane.events.log import EventLog
from firelane.events.schemas import (
    CombatantSetup,
    EncounterEnded,
    EncounterRewound,
    EncounterSetup,
    EndEncounter,
    EndTurn,
    GMAdjust,
    GMAdjusted,
    GMRule,
    GMRuled,
    GMSkipTurn,
    PassReaction,
    RewindEncounter,
    SeatSetup,
    TurnEnded,
    TurnTimedOut,
)
from firelane.projections.audit import verify
from firelane.redisio import connect
from tests.test_runtime import wait_for_state
from tests.toy_system import TOY, Step, Strike

register_system(TOY, "tests.toy_system")
SEED = b"gm" * 16


def table_setup(**settings) -> EncounterSetup:
    """Ann (red) is played by seat alice; Bo and Cy (blue) by the AI."""
    return EncounterSetup(
        system="toy", settings=settings,
        combatants=[
            CombatantSetup(id="a", name="Ann", side="red", position=(0, 0), sheet={"speed": 9, "hp": 6}, policy="human"),
            CombatantSetup(id="b", name="Bo", side="blue", position=(3, 0), sheet={"speed": 0}),
            CombatantSetup(id="c", name="Cy", side="blue", position=(4, 0), sheet={"speed": 1}),
        ],
        seats=[SeatSetup(id="alice", combatants=["a"])],
    )


def started(setup: EncounterSetup | None = None, faces=(6, 1, 2)):
    state = TOY.initial_state()
    from firelane.events.schemas import StartEncounter

    for event in TOY.decide(state, StartEncounter(command_id="s", actor="sequencer", setup=setup or table_setup(),
                                                  seed_commitment="x"), FixedDice(faces)):
        TOY.evolve(state, event)
    return state


def act(state, command, faces=()):
    events = TOY.decide_or_reject(state, command, FixedDice(faces))
    for event in events:
        TOY.evolve(state, event)
    return events


# -- GM commands, pure ---------------------------------------------------------------


def test_gm_adjust_checks_each_change_and_records_it_with_its_reason() -> None:
    state = started()
    (adjusted,) = act(state, GMAdjust(command_id="g1", actor="gm", combatant="b", reason="the medic patched him up",
                                      changes={"hp": 5, "position": [6, 2], "conditions": {"add": ["inspired"]}}))
    assert isinstance(adjusted, GMAdjusted) and adjusted.reason == "the medic patched him up"
    assert adjusted.changes == {"hp": 5, "position": [6, 2], "conditions": {"add": ["inspired"], "remove": []}}
    b = state.combatants["b"]
    assert (b.hp, b.position, b.conditions) == (5, (6, 2), {"inspired": ""})
    for changes, reason in [
        ({"position": [99, 0]}, "position (99, 0) is outside the 24x16 map"),
        ({"position": [0, 0]}, "position (0, 0) is taken by Ann"),  # by name, as the page says it
        ({"hp": "lots"}, "hp: Expected `int`, got `str`"),
        ({"name": "Bob"}, "'name' is not a field the GM can set; one of:"),
        ({"conditions": {"remove": ["asleep"]}}, "b is not asleep"),
        ({}, "GMAdjust needs at least one change"),
    ]:
        (rejection,) = act(state, GMAdjust(command_id="g", actor="gm", combatant="b", changes=changes, reason="why"))
        assert rejection.reason.startswith(reason), rejection.reason
    (no_reason,) = act(state, GMAdjust(command_id="g", actor="gm", combatant="b", changes={"hp": 1}, reason=" "))
    assert "needs a reason" in no_reason.reason


def test_gm_adjust_refuses_to_put_a_combatant_on_a_downed_body() -> None:
    # engine/occupancy.py: a body holds its square for the end of any move, the GM's included.
    state = started()
    felled = act(state, GMAdjust(command_id="g1", actor="gm", combatant="b", reason="felled", changes={"out_of_fight": True}))
    assert isinstance(felled[0], GMAdjusted) and state.combatants["b"].out_of_fight and not state.ended
    (onto_body,) = act(state, GMAdjust(command_id="g2", actor="gm", combatant="c", reason="why", changes={"position": [3, 0]}))
    assert onto_body.reason == "position (3, 0) is where Bo lies: no move ends on a body"
    assert tuple(state.combatants["c"].position) == (4, 0)



def test_taking_the_last_enemy_out_ends_the_fight_and_the_gm_names_a_winner_or_none() -> None:
    state = started()
    act(state, GMAdjust(command_id="g1", actor="gm", combatant="b", changes={"out_of_fight": True}, reason="fled"))
    events = act(state, GMAdjust(command_id="g2", actor="gm", combatant="c", changes={"out_of_fight": True}, reason="fled"))
    assert isinstance(events[-1], EncounterEnded) and events[-1].winner == "red"
    other = started()
    (bad,) = act(other, EndEncounter(command_id="e", actor="gm", winner="green"))
    assert bad.reason == "the winner must be one of the sides (blue, red) or none, not 'green'"
    (ended,) = act(other, EndEncounter(command_id="e2", actor="gm", winner="blue", reason="the red side surrenders"))
    assert (ended.winner, ended.by, other.winner) == ("blue", "gm", "blue")


def test_the_gm_skips_a_stalled_turn_or_closes_a_stalled_window() -> None:
    state = started()
    assert state.active == "a"
    events = act(state, GMSkipTurn(command_id="k", actor="gm", reason="Alice stepped away"))
    assert isinstance(events[0], GMRuled) and events[0].ruling == "skip a's turn" and events[0].reason == "Alice stepped away"
    assert isinstance(events[1], TurnEnded) and state.active in ("b", "c")
    mover = state.active
    act(state, Step(command_id="s", actor=mover, to=(state.combatants[mover].position[0], 1)))
    assert state.window is not None and state.window.unanswered() == ["a"]
    window = state.window.window
    events = act(state, GMSkipTurn(command_id="k2", actor="gm", reason="no answer coming"))
    assert events[0].ruling == f"close reaction window {window} (not answered: a)" and state.window is None
    (nothing,) = act(started(), GMRule(command_id="r", actor="gm", call="c1", ruling="yes"))
    assert nothing.reason == "no pending GM call 'c1'; pending: none"


# -- rewind, pure --------------------------------------------------------------------


def people(state, combatant: str):
    """Alice's play for Ann: pass in windows; on her turn step (which opens a
    window for the foes) or strike the first foe standing, then end the turn."""
    window = state.window
    if window is not None:
        return PassReaction(command_id=f"alice-{state.version}", actor=combatant, window=window.window)
    if state.active != combatant:
        return None
    struck = state.combatants[combatant].conditions.get("struck") is not None
    foes = sorted(c for c, x in state.combatants.items() if x.side != "red" and not x.out_of_fight)
    me = state.combatants[combatant]
    if state.version % 3 == 0 and me.position is not None and me.position[1] < 15:
        return Step(command_id=f"alice-{state.version}", actor=combatant, to=(me.position[0], me.position[1] + 1))
    if foes and not struck and state.version % 2 == 0:
        return Strike(command_id=f"alice-{state.version}", actor=combatant, target=foes[0])
    return EndTurn(command_id=f"alice-{state.version}", actor=combatant)


def first_window_point(setup: EncounterSetup) -> int:
    """A version between commands at which a reaction window is open (on a run without a rewind)."""
    ids: list[str] = []
    windows = {}
    for command, events, state in run_headless(TOY, setup, SEED, people=people):
        ids += [command.command_id] * len(events)
        windows[state.version] = state.window is not None
    return min(v for v in resting_points(ids) if windows.get(v))


def gm_rewinds_once(to_version: int):
    def gm(state):
        if state.branch_version == state.version and state.round == 3 and state.active == "a" and state.window is None:
            return RewindEncounter(command_id="rewind-1", actor="gm", to_version=to_version, reason="we misread the map")
        return None
    return gm


def test_a_rewind_into_an_open_window_restores_it_and_the_dice_there_are_the_same() -> None:
    setup = table_setup(brace=False)
    point = first_window_point(setup)
    steps = list(run_headless(TOY, setup, SEED, people=people, gm=gm_rewinds_once(point)))
    events = [e for _c, batch, _s in steps for e in batch]
    rewinds = [e for e in events if isinstance(e, EncounterRewound)]
    assert len(rewinds) == 1 and rewinds[0].to_version == point and rewinds[0].reason == "we misread the map"
    # The state right after the rewind is the state at `point` (but for the counters that keep going).
    at_point = TOY.initial_state()
    at_point.encounter = "headless"
    for event in events[:point]:
        TOY.evolve(at_point, event)
    after = TOY.initial_state()
    after.encounter = "headless"
    index = events.index(rewinds[0])
    for event in events[: index + 1]:
        TOY.evolve(after, event)
    assert after.window is not None and after.window.window == at_point.window.window
    kept = ("version", "branch_version", "windows_opened", "undone")
    same = {f: getattr(after, f) for f in after.__struct_fields__ if f not in kept}
    assert same == {f: getattr(at_point, f) for f in at_point.__struct_fields__ if f not in kept}
    # What came after `point`, up to the rewind, is undone by it (the rewind is version index + 1).
    assert after.undone == [(point + 1, index, index + 1)] and at_point.undone == []
    assert after.branch_version == point and after.version == index + 1
    # Whatever is rolled first after the rewind is what was rolled first after `point`: no fishing.
    def first_die_after(batch_events):
        for event in batch_events:
            for roll in [getattr(event, "roll", None)]:
                if roll is not None and roll.dice:
                    return roll.dice[0]
        return None
    original = first_die_after(events[point:index])
    again = first_die_after(events[index + 1:])
    assert original is not None and again is not None
    assert (again.at, again.k, again.face) == (original.at, original.k, original.face)


def test_a_rewind_must_land_between_commands_while_the_fight_runs() -> None:
    setup = table_setup()
    ids: list[str] = []
    state = None
    for command, events, state in run_headless(TOY, setup, SEED, people=people):
        ids += [command.command_id] * len(events)
        if state.round == 2:
            break
    inside = next(v for v in range(2, state.version) if v not in resting_points(ids))
    past = TOY.initial_state()
    with pytest.raises(Rejected, match="falls inside a command's events"):
        TOY.check_rewind(state, RewindEncounter(command_id="r", actor="gm", to_version=inside, reason="x"), resting_points(ids))
    with pytest.raises(Rejected, match="to_version must be between 1 and"):
        TOY.check_rewind(state, RewindEncounter(command_id="r", actor="gm", to_version=state.version, reason="x"), resting_points(ids))
    with pytest.raises(Rejected, match="needs a reason"):
        TOY.check_rewind(state, RewindEncounter(command_id="r", actor="gm", to_version=1, reason=""), resting_points(ids))
    assert past.version == 0


def test_a_refused_rewind_names_the_versions_a_gm_can_use() -> None:
    """A rewind inside a command's events (even inside the start's, before any
    version a rewind can go to) is told where it can go: never "(e.g. None)"."""
    setup = table_setup()
    ids: list[str] = []
    state = None
    for command, events, state in run_headless(TOY, setup, SEED, people=people):
        ids += [command.command_id] * len(events)
        if state.round == 2:
            break
    points = resting_points(ids)
    targets = sorted(v for v in points if v < state.version)
    first, second = targets[0], targets[1]
    assert first > 1  # the start writes several events: version 1 lies inside them
    reasons = {}
    for to_version in (1, next(v for v in range(first + 1, second) if v not in points) if second > first + 1 else None,
                       state.version, 0):
        if to_version is None:
            continue
        with pytest.raises(Rejected) as refused:
            TOY.check_rewind(state, RewindEncounter(command_id="r", actor="gm", to_version=to_version, reason="x"), points)
        reasons[to_version] = refused.value.reason
    assert reasons[1] == (f"version 1 falls inside a command's events; rewind to a version between commands: "
                          f"the nearest is {first} (after it)")
    for to_version, reason in reasons.items():
        assert "None" not in reason and str(first) in reason, reason
    assert reasons[state.version].endswith(f"the versions between commands run from {first} to {targets[-1]}")
    if second > first + 1:
        inside = next(v for v in range(first + 1, second) if v not in points)
        assert reasons[inside].endswith(f"the nearest are {first} (before it) and {second} (after it)")


# -- live -----------------------------------------------------------------------------


@pytest.fixture
async def event_log(redis_url: str):
    client = await connect(redis_url)
    try:
        yield EventLog(client, "gm", server_key=b"k" * 32)
    finally:
        await client.aclose()


async def play_table(event_log: EventLog, encounter: str, gm) -> None:
    """The people at the table, live: follow the log and send what `people`
    and `gm` say, through their own seats, once per state."""
    state = TOY.initial_state()
    state.encounter = encounter
    sent: set[tuple[int, str]] = set()
    async with aclosing(event_log.follow(encounter, "0-0", block_ms=200)) as batches:
        async for batch in batches:
            for stored in batch:
                TOY.evolve(state, codec.decode_event(stored))
            if state.ended:
                return
            if batch[-1].version < await event_log.version(encounter):
                continue  # not caught up
            command = gm(state) if state.started else None
            if command is not None and (state.version, "gm") not in sent:
                sent.add((state.version, "gm"))
                await event_log.submit(encounter, codec.encode_command(command), seat="gm")
                continue
            awaited = TOY.awaiting(state).combatants
            if "a" in awaited and (state.version, "a") not in sent:
                answer = people(state, "a")
                if answer is not None:
                    sent.add((state.version, "a"))
                    await event_log.submit(encounter, codec.encode_command(answer), seat="alice")


async def test_live_and_pure_agree_after_a_rewind_and_a_restarted_engine_resumes_it(event_log: EventLog) -> None:
    setup = table_setup(brace=False)
    point = first_window_point(setup)
    gm = gm_rewinds_once(point)
    await create_encounter(event_log, "rw", setup, SEED)
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(play_table, event_log, "rw", gm)
            state = await run_encounter(event_log, "rw", TOY, {"b": AIPolicy(TOY), "c": AIPolicy(TOY)})
            nursery.cancel_scope.cancel()
    stored = await event_log.read("rw")
    live = [codec.decode_event(s) for s in stored]
    reference = [e for _c, events, _s in run_headless(TOY, setup, SEED, encounter="rw", people=people, gm=gm) for e in events]
    assert live == reference
    assert sum(isinstance(e, EncounterRewound) for e in live) == 1
    rewind_entry = next(s for s in stored if s.type == "EncounterRewound")
    assert rewind_entry.command_id == command_key("gm", "rewind-1")
    assert state.ended and verify(stored).ok, verify(stored).problems
    # A restarted engine folds to exactly the live state.
    folded, _cursors = await fold_log(event_log, "rw", TOY, use_snapshot=False)
    assert folded == state


async def test_a_human_turn_times_out_and_ends_or_is_played_by_the_ai(event_log: EventLog, mock_clock) -> None:
    for then in ("end_turn", "ai"):
        encounter = f"timer-{then}"
        await create_encounter(event_log, encounter, table_setup(turn_timer_ms=5000, on_turn_timeout=then), SEED)
        sequencer = Sequencer(event_log, encounter, TOY, await load_seed(event_log, encounter))
        async with trio.open_nursery() as nursery:
            nursery.start_soon(sequencer.run)
            state = await wait_for_state(event_log, encounter, lambda s: s.active == "a", pause=0)
            assert state.turn_deadline_ms == 5000
            mock_clock.jump(4.9)
            await trio.testing.wait_all_tasks_blocked(0.05)
            assert (await wait_for_state(event_log, encounter, lambda s: True, pause=0)).active == "a"
            mock_clock.jump(0.2)
            state = await wait_for_state(event_log, encounter, lambda s: s.active != "a", pause=0)
            nursery.cancel_scope.cancel()
        events = [(s, codec.decode_event(s)) for s in await event_log.read(encounter)]
        timed_out = [(s, e) for s, e in events if isinstance(e, TurnTimedOut)]
        assert len(timed_out) == 1 and timed_out[0][1].then == then and timed_out[0][1].combatant == "a"
        after = events[events.index(timed_out[0]) + 1:]
        if then == "end_turn":
            assert isinstance(after[0][1], TurnEnded) and after[0][1].combatant == "a"
        else:
            # The AI played Ann's turn: its commands are the engine's, one decided at a time.
            played = [s for s, _e in after if s.command_id.startswith("sequencer/ai-")]
            assert played and all(s.causation == "timeout:ai-plays-a" for s in played)
            assert any(isinstance(e, TurnEnded) and e.combatant == "a" for _s, e in after)


def _entry_ms(stored) -> int:
    return int(stored.entry_id.split("-")[0])


async def test_a_restarted_engine_gives_the_running_turn_only_the_time_it_had_left(event_log: EventLog) -> None:
    # The table page counts a turn down from its TurnStarted entry (Redis's
    # clock); an engine restarted mid-turn (or handed the fight by another
    # host) must time it out then too, not a full turn after its own start.
    encounter = "timer-restart"
    await create_encounter(event_log, encounter, table_setup(turn_timer_ms=2000), SEED)
    seed = await load_seed(event_log, encounter)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(Sequencer(event_log, encounter, TOY, seed).run)
        await wait_for_state(event_log, encounter, lambda s: s.active == "a")
        await trio.sleep(1.2)
        nursery.cancel_scope.cancel()
    assert not any(s.type == "TurnTimedOut" for s in await event_log.read(encounter))
    async with trio.open_nursery() as nursery:
        nursery.start_soon(Sequencer(event_log, encounter, TOY, seed).run)
        with trio.fail_after(10):
            while not any(s.type == "TurnTimedOut" for s in await event_log.read(encounter)):
                await trio.sleep(0.02)
        nursery.cancel_scope.cancel()
    stored = await event_log.read(encounter)
    started = next(s for s in stored if s.type == "TurnStarted" and codec.decode_event(s).combatant == "a")
    timed_out = next(s for s in stored if s.type == "TurnTimedOut")
    # 2 s after the turn began (the restart's 1.2 s in included), not 1.2 + 2 s.
    assert 1950 <= _entry_ms(timed_out) - _entry_ms(started) < 2900


async def test_the_clocks_of_a_turn_and_a_window_start_at_their_entries_or_at_a_later_rewind(event_log: EventLog) -> None:
    from firelane.events.log import Batch
    from firelane.events.schemas import ReactionWindowOpened, RoundStarted, TurnStarted

    def entry(event) -> object:
        return codec.encode_event(event)

    encounter = "clocks"
    await event_log.append_batches(encounter, 0, [Batch(entries=[entry(RoundStarted(round=1))], command_id="c1")])
    await event_log.append_batches(encounter, 1, [Batch(entries=[entry(TurnStarted(round=1, combatant="a"))], command_id="c2")])
    await trio.sleep(0.02)
    opened = ReactionWindowOpened(window=7, trigger="moved", actor="a", reactors=[], deadline_ms=1000)
    await event_log.append_batches(encounter, 2, [Batch(entries=[entry(opened)], command_id="c3")])
    stored = await event_log.read(encounter)
    turn_ms, window_ms = await event_log.clock_starts(encounter, turn_version=2, window=7)
    assert (turn_ms, window_ms) == (_entry_ms(stored[1]), _entry_ms(stored[2]))
    assert await event_log.clock_starts(encounter, turn_version=9, window=8) == (None, None)
    await trio.sleep(0.02)
    rewound = EncounterRewound(to_version=2, from_version=3, branch_version=3, reason="again", state={})
    await event_log.append_batches(encounter, 3, [Batch(entries=[entry(rewound)], command_id="c4")])
    rewind_ms = _entry_ms((await event_log.read(encounter))[3])
    # The restored turn and window run their time again from the rewind.
    assert await event_log.clock_starts(encounter, turn_version=2, window=7) == (rewind_ms, rewind_ms)


def test_a_rewind_closes_the_windows_the_abandoned_branch_left_open() -> None:
    """A window opened after the version rewound to is closed by the rewind
    (``closed_windows``), so a client following the log knows it is gone."""
    calm: list[int] = []
    rewound: list[int] = []

    def gm(state):
        if rewound or not state.started:
            return None
        if state.window is None:
            calm.append(state.version)  # between commands, no window open
            return None
        rewound.append(state.window.window)
        return RewindEncounter(command_id="back", actor="gm", to_version=calm[-1], reason="wrong square")

    steps = list(run_headless(TOY, table_setup(brace=False), SEED, people=people, gm=gm))
    (rewind,) = [e for _c, batch, _s in steps for e in batch if isinstance(e, EncounterRewound)]
    assert rewind.closed_windows == rewound and rewind.to_version == calm[-1]
    events = [e for _c, batch, _s in steps for e in batch]
    after = TOY.initial_state()
    after.encounter = "headless"
    for event in events[: events.index(rewind) + 1]:
        TOY.evolve(after, event)
    assert after.window is None and after.windows_opened >= rewound[0]
    # A rewind into a window that stays open lists nothing: that window is open again.
    setup = table_setup(brace=False)
    point = first_window_point(setup)
    into = [e for _c, batch, _s in run_headless(TOY, setup, SEED, people=people, gm=gm_rewinds_once(point))
            for e in batch if isinstance(e, EncounterRewound)]
    assert into and point not in into[0].closed_windows and into[0].closed_windows == []


def test_the_gms_options_list_where_a_rewind_may_go() -> None:
    ids: list[str] = []
    final = None
    for command, events, state in run_headless(TOY, table_setup(), SEED, people=people):
        ids += [command.command_id] * len(events)
        final = state
        if state.round == 2:
            break
    points = resting_points(ids)
    options = TOY.with_rewind_targets(TOY.options(final, "gm"), final, points)
    targets = options.gm.rewind_targets
    assert targets == sorted(v for v in points if v < final.version) and targets
    for inside in set(range(1, final.version)) - set(targets):  # every other version is refused, naming the nearest
        with pytest.raises(Rejected) as refused:
            TOY.check_rewind(final, RewindEncounter(command_id="r", actor="gm", to_version=inside, reason="x"), points)
        assert "falls inside a command's events" in refused.value.reason
    for target in targets:
        TOY.check_rewind(final, RewindEncounter(command_id="r", actor="gm", to_version=target, reason="x"), points)
    assert TOY.options(final, "gm").gm.rewind_targets is None  # the pure options leave it to who holds the log
    assert resting_points_of(list(enumerate(ids, start=1))) == points
