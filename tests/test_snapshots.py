"""Snapshots: a restarted sequencer resumes from the newest snapshot that
matches, folds only the tail, and gets exactly what a full fold gets; a
snapshot that does not match is ignored with its reason."""

from __future__ import annotations

from functools import partial

import msgspec
import pytest

import firelane.actors.runtime as runtime_module
from firelane.actors.policies import ScriptedPolicy
from firelane.actors.runtime import run_encounter
from firelane.actors.sequencer import Sequencer, create_encounter, fold_log, load_seed
from firelane.engine.registry import get_system, register_system
from firelane.engine.simulate import fallback_command
from firelane.events.log import EventLog
from firelane.events.schemas import CombatantSetup, EncounterSetup
from firelane.projections.snapshots import Snapshot, encode_snapshot, load_snapshot, snapshot_key
from firelane.redisio import connect
from tests.toy_system import TOY

register_system(TOY, "tests.toy_system")


class PassingPolicy:
    def choose(self, state, combatant, *, last_rejected):
        return fallback_command(state, combatant)


@pytest.fixture
async def event_log(redis_url: str):
    client = await connect(redis_url, max_connections=32)
    try:
        yield EventLog(client, "snap")
    finally:
        await client.aclose()


async def long_fight(event_log: EventLog, encounter: str, monkeypatch, *, steps: int = 120, every: int = 100) -> None:
    """A live toy encounter of a few thousand events: a runner steps past six
    watchers, each step opening a window they pass; the sequencer snapshots every ``every`` events."""
    combatants = [CombatantSetup(id="runner", name="Runner", side="red", position=(0, 0), sheet={"speed": 99})]
    combatants += [CombatantSetup(id=f"w{i}", name=f"Watcher {i}", side="blue", position=(i, 5)) for i in range(6)]
    await create_encounter(event_log, encounter, EncounterSetup(system="toy", combatants=combatants,
                                                                settings={"max_rounds": 1}), b"s" * 32)
    policies = {"runner": ScriptedPolicy(TOY, [{"type": "Step", "to": [k % 20, 1]} for k in range(steps)] + [{"type": "EndTurn"}])}
    policies.update({c.id: PassingPolicy() for c in combatants[1:]})
    monkeypatch.setattr(runtime_module, "Sequencer", partial(Sequencer, snapshot_every=every))
    await run_encounter(event_log, encounter, TOY, policies)


def count_evolves(monkeypatch) -> list[int]:
    """Counts the events folded from now on, however they are folded: by
    ``evolve``, by a type's ``evolver`` (a log fold), or counted unread."""
    calls = [0]
    original_evolve, original_evolver, original_unread = TOY.evolve, TOY.evolver, TOY.evolve_without_reading

    def counting(state, event):
        calls[0] += 1
        return original_evolve(state, event)

    def counting_evolver(event_type):
        evolver = original_evolver(event_type)
        if evolver is None:
            return None

        def counted(state, event):
            calls[0] += 1
            evolver(state, event)
        return counted

    def counting_unread(state):
        calls[0] += 1
        original_unread(state)

    monkeypatch.setattr(TOY, "evolve", counting)
    monkeypatch.setattr(TOY, "evolver", counting_evolver)
    monkeypatch.setattr(TOY, "evolve_without_reading", counting_unread)
    return calls


async def test_a_restarted_sequencer_resumes_from_the_snapshot_and_equals_a_full_fold(event_log, monkeypatch) -> None:
    await long_fight(event_log, "long", monkeypatch)
    version = await event_log.version("long")
    assert version > 1000
    raw = await event_log.client.execute("GET", snapshot_key("snap", "long"))
    snapshot = msgspec.msgpack.decode(raw, type=Snapshot)
    assert version - 100 <= snapshot.version < version  # the sequencer kept one every 100 events

    full_state, full_cursor = await fold_log(event_log, "long", TOY, use_snapshot=False)
    evolves = count_evolves(monkeypatch)
    restarted = Sequencer(event_log, "long", TOY, await load_seed(event_log, "long"))
    await restarted.load()
    assert evolves[0] == version - snapshot.version  # only the tail after the snapshot was folded
    assert restarted.state == full_state and restarted.state.version == version
    assert full_cursor and {seat: c for seat, c in restarted._read.items() if c != "0-0"} == full_cursor


async def test_snapshot_cursor_and_state_equal_a_full_fold_at_its_version(event_log, monkeypatch) -> None:
    await long_fight(event_log, "atv", monkeypatch, steps=30, every=37)
    resumed, why_not = await load_snapshot(event_log, "atv", snapshot_key("snap", "atv"), TOY)
    assert resumed is not None, why_not
    # A full fold stopped at the snapshot's version gives the same state and cursor.
    from firelane.projections.turn_state import fold_stream

    state = TOY.initial_state()
    state.encounter = "atv"
    end = await fold_stream(TOY, state, event_log, "atv", upto=resumed.state.version)
    assert state == resumed.state
    assert (end.entry_id, end.inbox_cursors) == (resumed.entry_id, resumed.inbox_cursors)


def forged(raw: bytes, **changes) -> bytes:
    snapshot = msgspec.msgpack.decode(raw, type=Snapshot)
    return msgspec.msgpack.encode(msgspec.structs.replace(snapshot, **changes))


@pytest.mark.parametrize(
    ("case", "reason"),
    [
        ("other system", "snapshot of another rule system (bolt-and-blade, not toy)"),
        ("other schema", "snapshot written under other state or event schemas"),
        ("version mismatch", "snapshot state is of 'bad' at v"),
        ("not in the log", "the log has no entry"),
        ("another encounter", "snapshot state is of 'elsewhere'"),
        ("corrupt", "unreadable snapshot"),
        ("corrupt state", "unreadable snapshot state"),
    ],
)
async def test_a_snapshot_that_does_not_match_is_ignored_and_the_fold_starts_over(event_log, monkeypatch, case, reason) -> None:
    await long_fight(event_log, "bad", monkeypatch, steps=20, every=50)
    key = snapshot_key("snap", "bad")
    good = await event_log.client.execute("GET", key)
    snapshot = msgspec.msgpack.decode(good, type=Snapshot)
    state = msgspec.msgpack.decode(snapshot.state, type=TOY.state_type)
    if case == "other system":
        bad = forged(good, system=get_system("bolt-and-blade").name)
    elif case == "other schema":
        bad = forged(good, fingerprint="0" * 24)
    elif case == "version mismatch":
        bad = forged(good, version=snapshot.version - 1)
    elif case == "not in the log":
        state.version = snapshot.version + 5  # an entry that exists, at another version
        bad = forged(good, version=state.version, state=msgspec.msgpack.encode(state))
    elif case == "another encounter":
        state.encounter = "elsewhere"
        bad = forged(good, state=msgspec.msgpack.encode(state))
    elif case == "corrupt":
        bad = good[: len(good) // 2]
    else:
        bad = forged(good, state=b"\xc1 not msgpack")
    await event_log.client.execute("SET", key, bad)

    resumed, why_not = await load_snapshot(event_log, "bad", key, TOY)
    assert resumed is None and why_not.startswith(reason)
    version = await event_log.version("bad")
    expected = await fold_log(event_log, "bad", TOY, use_snapshot=False)
    evolves = count_evolves(monkeypatch)
    assert await fold_log(event_log, "bad", TOY) == expected
    assert evolves[0] == version  # folded from the start


async def test_a_snapshot_of_an_entry_id_redis_refuses_is_ignored(event_log, monkeypatch) -> None:
    await long_fight(event_log, "id", monkeypatch, steps=10, every=20)
    key = snapshot_key("snap", "id")
    await event_log.client.execute("SET", key, forged(await event_log.client.execute("GET", key), entry_id="not-an-id"))
    resumed, why_not = await load_snapshot(event_log, "id", key, TOY)
    assert resumed is None and "not usable" in why_not
    assert (await fold_log(event_log, "id", TOY))[0].version == await event_log.version("id")


def test_encode_snapshot_records_the_state_and_where_it_is() -> None:
    state = TOY.initial_state()
    state.version, state.encounter = 12, "e"
    snapshot = msgspec.msgpack.decode(encode_snapshot(TOY, state, "5-1", {"engine": "3-0", "alice": "4-0"}), type=Snapshot)
    assert (snapshot.system, snapshot.version, snapshot.entry_id, snapshot.inbox_cursors) == (
        "toy", 12, "5-1", {"engine": "3-0", "alice": "4-0"})
    assert msgspec.msgpack.decode(snapshot.state, type=TOY.state_type) == state
