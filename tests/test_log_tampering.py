"""Someone who may write to Redis but holds no key changes an encounter's log:
moves its version counter, appends a genuine entry again, deletes entries.
The engine stops that encounter with "log tampered: ..." (once: nothing
retries on it), readers name the versions missing or repeated and never fold
an entry twice, and the audit still verifies every genuine roll."""

from __future__ import annotations

import re
from contextlib import aclosing

import pytest
import trio

from firelane.actors.policies import AIPolicy
from firelane.actors.runtime import run_encounter
from firelane.actors.sequencer import Sequencer, create_encounter, load_seed
from firelane.engine.registry import register_system
from firelane.events import codec
from firelane.events.log import EventLog, LogTampered
from firelane.events.schemas import CombatantSetup, EncounterSetup, EndTurn, SeatSetup
from firelane.projections.audit import Verifier, audit_entries, revealed_seed, verify
from firelane.projections.roster import campaign_roster
from firelane.projections.turn_state import TurnStateProjection
from firelane.redisio import connect
from tests.test_runtime import wait_for_state
from tests.toy_system import TOY

register_system(TOY, "tests.toy_system")

SERVER_KEY = b"t" * 32
AI = {c: AIPolicy(TOY) for c in ("a", "b", "c")}


@pytest.fixture
async def event_log(redis_url: str):
    client = await connect(redis_url)
    try:
        yield EventLog(client, "tamper", server_key=SERVER_KEY)
    finally:
        await client.aclose()


def ai_setup() -> EncounterSetup:
    return EncounterSetup(system="toy", combatants=[
        CombatantSetup(id="a", name="Ann", side="red", position=(0, 0), sheet={"speed": 2}),
        CombatantSetup(id="b", name="Bo", side="blue", position=(3, 0), sheet={"speed": 0}),
        CombatantSetup(id="c", name="Cy", side="blue", position=(4, 0), sheet={"speed": 1})])


def waiting_setup() -> EncounterSetup:
    """Ann is played by seat alice and acts first: the fight waits for her."""
    return EncounterSetup(system="toy", combatants=[
        CombatantSetup(id="a", name="Ann", side="red", position=(0, 0), sheet={"speed": 9}, policy="human"),
        CombatantSetup(id="b", name="Bo", side="blue", position=(3, 0), sheet={"speed": 0})],
        seats=[SeatSetup(id="alice", combatants=["a"])])


async def ended_fight(event_log: EventLog, encounter: str) -> list:
    await create_encounter(event_log, encounter, ai_setup(), encounter.encode().ljust(32, b"."))
    with trio.fail_after(60):
        await run_encounter(event_log, encounter, TOY, AI)
    return await event_log.read(encounter)


async def rows(event_log: EventLog, encounter: str) -> list:
    return await event_log.client.execute("XRANGE", event_log.log_key(encounter), "-", "+")


async def copy_entry(event_log: EventLog, encounter: str, version: int) -> None:
    """Append a genuine entry again (its MAC still matches: it covers the version, not the place)."""
    row = next(r for r in await rows(event_log, encounter) if r[1][r[1].index(b"n") + 1] == str(version).encode())
    await event_log.client.execute("XADD", event_log.log_key(encounter), "*", *row[1])


async def delete_versions(event_log: EventLog, encounter: str, *versions: int) -> None:
    ids = [r[0] for r in await rows(event_log, encounter) if int(r[1][r[1].index(b"n") + 1]) in versions]
    await event_log.client.execute("XDEL", event_log.log_key(encounter), *ids)


def with_rolls(stored: list) -> list[int]:
    return [s.version for s in stored if s.type in ("AttackResolved", "InitiativeRolled")]


async def audit(event_log: EventLog, encounter: str):
    """As `firelane audit --verify` does: the seed from the log's tail, the log streamed."""
    verifier = Verifier(await revealed_seed(event_log, encounter))
    async with aclosing(event_log.iter_read(encounter, include_invalid=True)) as pages:
        async for page in pages:
            verifier.feed(page)
    return verifier.report()


def the_error(caught: pytest.ExceptionInfo) -> BaseException:
    """The one error a nursery raised (trio wraps it in a group)."""
    error = caught.value
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error


async def roster_status(event_log: EventLog, encounter: str) -> str:
    return next(row.status for row in await campaign_roster(event_log) if row.encounter == encounter)


# -- the version counter moved ------------------------------------------------------


async def test_a_moved_version_counter_stops_the_engine_once_with_what_is_wrong(event_log: EventLog) -> None:
    await create_encounter(event_log, "counter", waiting_setup(), b"c" * 32)
    attempts = []

    class Counting(Sequencer):
        async def load(self) -> None:
            attempts.append(1)
            await super().load()

    async def run() -> None:
        seed = await load_seed(event_log, "counter")
        from firelane.actors.runtime import supervise

        await supervise("sequencer", Counting(event_log, "counter", TOY, seed).run, backoff=0.01)

    with pytest.raises(BaseExceptionGroup) as caught:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(run)
            state = await wait_for_state(event_log, "counter", lambda s: s.active == "a")
            await event_log.client.execute("INCRBY", event_log.version_key("counter"), 5)
            await event_log.submit("counter", codec.encode_command(EndTurn(command_id="e", actor="a")), seat="alice")
    stopped = the_error(caught)
    assert isinstance(stopped, LogTampered)
    n = state.version
    assert str(stopped) == (f"log tampered: versions v{n + 1}-v{n + 5} are missing at the end of the log (deleted), "
                                  f"or its version counter was moved on from v{n}")
    assert len(attempts) == 2  # the first run, and the reload on the conflict: no retries
    assert await roster_status(event_log, "counter") == str(stopped)
    # An engine started again stops at once, saying the same.
    with pytest.raises(LogTampered, match="log tampered: versions"):
        await Sequencer(event_log, "counter", TOY, await load_seed(event_log, "counter")).run()


# -- a genuine entry appended again ---------------------------------------------------


async def test_a_genuine_entry_appended_again_is_named_never_folded_twice(event_log: EventLog) -> None:
    stored = await ended_fight(event_log, "copied")
    last = stored[-1].version
    copied = with_rolls(stored)[1]
    await copy_entry(event_log, "copied", copied)
    problem = f"v{copied} appears again after v{last} (a copy of a genuine entry)"
    # Readers: said, not folded or handed out twice.
    with pytest.raises(LogTampered, match=re.escape(problem)):
        await event_log.read("copied")
    with pytest.raises(LogTampered, match=f"v{copied} appears again"):
        await TurnStateProjection(event_log, "copied").catch_up()
    with pytest.raises(LogTampered, match=f"v{copied} appears again after v{last}"):
        await event_log.read_from_version("copied", last - 3)
    everything = await event_log.read("copied", include_invalid=True)
    assert [s.problem for s in everything if s.problem] == [f"log tampered: {problem}; left out"]
    assert [s.version for s in everything if not s.problem] == list(range(1, last + 1))
    assert (await roster_status(event_log, "copied")).startswith(f"log tampered: v{copied} appears again after v{last}")
    # The audit names it and verifies every genuine roll.
    report = await audit(event_log, "copied")
    assert report.problems == [f"log entry {everything[-1].entry_id}: log tampered: {problem}; left out"]
    assert report.seed_revealed and report.commitment_ok and report.rolls == verify(stored).rolls


async def test_an_engine_notices_a_copy_appended_while_it_waits(event_log: EventLog) -> None:
    await create_encounter(event_log, "live-copy", waiting_setup(), b"l" * 32)
    seed = await load_seed(event_log, "live-copy")
    with pytest.raises(BaseExceptionGroup) as caught:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(run_encounter, event_log, "live-copy", TOY, {"b": AIPolicy(TOY)})
            state = await wait_for_state(event_log, "live-copy", lambda s: s.active == "a")
            await copy_entry(event_log, "live-copy", 2)
            await event_log.submit("live-copy", codec.encode_command(EndTurn(command_id="e", actor="a")), seat="alice")
    assert str(the_error(caught)) == f"log tampered: v2 appears again after v{state.version} (a copy of a genuine entry)"
    del seed


# -- genuine entries deleted --------------------------------------------------------


async def test_deleted_entries_are_named_and_the_rolls_around_them_still_verify(event_log: EventLog) -> None:
    stored = await ended_fight(event_log, "holes")
    rolled = with_rolls(stored)
    gone = rolled[1]
    await delete_versions(event_log, "holes", gone)
    with pytest.raises(LogTampered, match=f"v{gone} is missing"):
        await event_log.read("holes")
    with pytest.raises(LogTampered, match=f"v{gone} is missing"):
        await TurnStateProjection(event_log, "holes").catch_up()
    assert (await roster_status(event_log, "holes")).startswith(f"log tampered: v{gone} is missing (deleted from the log); at entry ")
    report = await audit(event_log, "holes")
    # One problem, naming the version; the rolls after it verify at their own positions.
    assert len(report.problems) == 1 and report.problems[0].endswith(f"log tampered: v{gone} is missing (deleted from the log)")
    assert report.rolls == verify(stored).rolls - len(audit_entries([s for s in stored if s.version == gone]))


async def test_deleting_the_last_entries_of_an_ended_fight_is_said_not_shown_running(event_log: EventLog) -> None:
    stored = await ended_fight(event_log, "cut")
    last = stored[-1].version
    assert stored[-1].type == "SeedRevealed" and stored[-2].type == "EncounterEnded"
    await delete_versions(event_log, "cut", last - 1, last)
    status = await roster_status(event_log, "cut")
    assert status == (f"log tampered: versions v{last - 1}-v{last} are missing at the end of the log (deleted), "
                      f"or its version counter was moved on from v{last - 2}")
    report = await audit(event_log, "cut")
    assert f"log tampered: versions v{last - 1}-v{last} are missing at the end of the log (deleted): its version " \
           f"counter says v{last}" in report.problems[-1]
    # An engine (as `firelane serve` starts one for a fight that has not ended) stops at once, saying so.
    with trio.fail_after(10), pytest.raises(BaseExceptionGroup) as caught:
        await run_encounter(event_log, "cut", TOY, AI)
    assert isinstance(the_error(caught), LogTampered) and f"versions v{last - 1}-v{last} are missing" in str(the_error(caught))


async def test_dice_of_a_batch_whose_first_entry_was_deleted_still_verify(event_log: EventLog) -> None:
    """The batch after a gap may have begun inside it: its dice are checked at
    the positions the missing entries leave open, and against the seed."""
    stored = await ended_fight(event_log, "headless")
    batches: dict[str, list] = {}
    for s in stored:
        batches.setdefault(s.command_id, []).append(s)
    # A batch whose first entry rolls nothing and a later one rolls dice.
    batch = next(b for b in batches.values() if len(b) > 2 and not audit_entries(b[:1]) and audit_entries(b[1:])
                 and b[0].version > 1)
    await delete_versions(event_log, "headless", batch[0].version)
    report = await audit(event_log, "headless")
    assert len(report.problems) == 1, report.problems
    assert report.problems[0].endswith(f"log tampered: v{batch[0].version} is missing (deleted from the log)")
    assert report.rolls == verify(stored).rolls
