"""Campaigns on a real redis-server: characters carried through three live
encounters in each system with downtime between, then exported and imported
into a fresh store (a redis-server of its own with another signing key) with
the same projections; the aftermath written once even when the engine restarts, from
the final branch of a rewound encounter; the roster and the characters
listing surviving broken entries; bad input refused with nothing half done."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio

import firelane.actors.sequencer as sequencer_module
from firelane.actors.campaign import CampaignStream, create_characters, record_aftermath, rest
from firelane.actors.runtime import default_policies, run_encounter
from firelane.actors.sequencer import create_encounter, load_seed, seat_tokens, seed_key
from firelane.engine.campaign import CampaignError, DowntimeRequest, party
from firelane.engine.campaign_rules import campaign_rules
from firelane.engine.registry import demo_setup, get_system, register_system
from firelane.events import codec
from firelane.events.campaign_log import CAMPAIGN_STREAM, CampaignLog
from firelane.events.campaign_schemas import AftermathRecorded, CharactersEnlisted, DowntimeStarted
from firelane.events.envelope import NewEntry
from firelane.events.log import EventLog, InboxClosed
from firelane.events.schemas import (
    CombatantSetup,
    EncounterSetup,
    EncounterStarted,
    EndEncounter,
    GMAdjust,
    RewindEncounter,
)
from firelane.actors.store import CliError, Store
from firelane.actors.campaign_io import Trust, export_campaign, import_campaign, store_trust, verify_export
from firelane.projections.audit import verify
from firelane.projections.characters import campaign_characters, character_history, downtime_audit
from firelane.projections.roster import campaign_roster, roster_page
from firelane.projections.turn_state import fold
from firelane.redisio import connect
from firelane.redisio.datadir import DataDir
from tests.toy_system import TOY

register_system(TOY, "tests.toy_system")


def trusting(target: Store, source: Store) -> Trust:
    """What an import into ``target`` of a file ``source`` signed is given: the source's fingerprint, by the user."""
    return store_trust(target, [source.signing_key().fingerprint])


@pytest.fixture
async def stores(redis_url: str, second_redis_url: str, tmp_path: Path):
    """Two stores on two redis-servers, each with its own signing key: the harness's, and a fresh one."""
    clients = [await connect(redis_url), await connect(second_redis_url)]
    try:
        yield [Store(client=client, server_key=bytes([n + 1]) * 32, data_dir=DataDir(tmp_path / f"store{n}"),
                     redis_display=f"server {n}") for n, client in enumerate(clients)]
    finally:
        for client in clients:
            await client.aclose()


# ------------------------------------------------------------------ three fights in each system

# (the party's side in the demo, how many of it, the foes' side, which foes, days of rest, a healer?)
CAMPAIGNS = {
    "bolt-and-blade": ("imperium", 3, "cult", ["cultist-ash", "cultist-mott"], 1, False),
    "d100-degrees": ("guard", 3, "gang", ["gn-rook"], 4, False),
    "d100-zones": ("rangers", 3, "raiders", ["rd-otto"], 3, True),
    "rond6": ("agents", 3, "gang", ["tess"], 14, True),
}


def carried(system: str, sheet: dict[str, Any], combatant: Any) -> dict[str, Any]:
    """The fields each system's aftermath must bring back from the final state, as (sheet, final) pairs."""
    if system == "bolt-and-blade":
        thrown = [w["name"] for w in sheet["weapons"] if w.get("kind") == "thrown" and w.get("magazine")]
        return {"vitality": (sheet["vitality"], combatant.vitality),
                **{f"ammo.{w}": (sheet["ammo"][w], combatant.ammo[w]) for w in thrown}}
    if system == "d100-degrees":
        return {"wounds": (sheet["wounds"], combatant.wounds)}
    if system == "d100-zones":
        return {"hp": (sheet["hp"], combatant.hp)}
    return {field: (sheet.get(field, default), getattr(combatant, field)) for field, default in
            (("wounds", 0), ("character_points", 0), ("fate_points", 0), ("ammo", {}), ("reloads", {}))}


async def play_campaign(store: Store, system_name: str) -> list[str]:
    """Three live fights with the same characters, a rest after each of the first two."""
    side, size, foe_side, foe_ids, days, healer = CAMPAIGNS[system_name]
    system, demo = get_system(system_name), demo_setup(system_name)
    log = store.event_log("saga")
    heroes = [c for c in demo.combatants if c.side == side][:size]
    foes = [c for c in demo.combatants if c.id in foe_ids]
    assert await create_characters(log, [(system, c.id, c.name, c.sheet, "") for c in heroes]) == [c.id for c in heroes]
    rules = campaign_rules(system_name)
    encounters = []
    for fight in range(3):
        view = await campaign_characters(log)
        fit = {c.id: c for c in view.characters if rules.unfit(c.sheet) is None}
        assert fit, f"fight {fight}: nobody left to fight"
        combatants = [CombatantSetup(id=c.id, character=c.id, side=side, position=c.position, policy="ai")
                      for c in heroes if c.id in fit] + foes
        encounter = f"fight-{fight + 1}"
        await create_encounter(log, encounter, msgspec.structs.replace(demo, combatants=combatants), bytes([fight + 7]) * 32)
        # Enlisted: the characters are in this fight, with their current sheets written into its start.
        busy = await campaign_characters(log)
        assert {c.id for c in busy.characters if c.engaged_in == encounter} == set(fit)
        final = await run_encounter(log, encounter, system, default_policies(system, {c.id: c.policy for c in combatants}))
        started = codec.decode_event((await log.read(encounter, count=1))[0])
        assert isinstance(started, EncounterStarted)
        for combatant in started.setup.combatants:
            if combatant.character:
                assert combatant.sheet == fit[combatant.character].sheet  # the start records the resolved sheet
                assert combatant.name == fit[combatant.character].name
        # The aftermath: what the final state says, once, and nobody is left in the fight.
        after = await campaign_characters(log)
        by_id = {c.id: c for c in after.characters}
        for character in fit:
            for field, (kept, fought) in carried(system_name, by_id[character].sheet, final.combatants[character]).items():
                assert kept == fought, f"fight {fight + 1}, {character}: {field} {kept} != {fought}"
            assert by_id[character].engaged_in == "" and by_id[character].encounters[-1] == encounter
        report = verify(await log.read(encounter, include_invalid=True))
        assert report.ok, report.problems
        encounters.append(encounter)
        if fight < 2:
            resting = party(await CampaignStream(log).refresh())
            medic = next((c for c in resting if rules.unfit(by_id[c].sheet) is None), "") if healer else ""
            events = await rest(log, DowntimeRequest(characters=resting, days=days, healer=medic, resupply=fight == 1),
                                seed=bytes([fight + 70]) * 32)
            assert isinstance(events[0], DowntimeStarted) and events[0].days == days
    return encounters


async def projections(store: Store, campaign: str, encounters: list[str]) -> dict[str, Any]:
    """Everything a user can see of a campaign, as plain data."""
    log = store.event_log(campaign)
    view = await campaign_characters(log)
    histories = {c.id: msgspec.to_builtins(await character_history(log, c.id)) for c in view.characters}
    audits = {}
    for encounter in encounters:
        report = verify(await log.read(encounter, include_invalid=True))
        audits[encounter] = (report.ok, report.rolls, report.dice, report.problems)
    entries, downtime = await downtime_audit(log)
    return {"characters": msgspec.to_builtins(view), "histories": histories,
            "roster": msgspec.to_builtins(await campaign_roster(log)), "audits": audits,
            "downtime": (msgspec.to_builtins(entries), downtime.ok, downtime.rolls, downtime.dice)}


@pytest.mark.parametrize("system_name", sorted(CAMPAIGNS))
async def test_a_three_encounter_campaign_carries_its_characters_and_round_trips_through_export(
    stores: list[Store], tmp_path: Path, system_name: str,
) -> None:
    source, target = stores
    encounters = await play_campaign(source, system_name)
    before = await projections(source, "saga", encounters)
    stream = await CampaignStream(source.event_log("saga")).refresh()
    assert stream.aftermaths == 3 and stream.downtimes == 2 and before["downtime"][1]
    # Every character fought in the first fight and carries its history.
    for history in before["histories"].values():
        assert [entry["type"] for entry in history[1]][:3] == ["CharacterCreated", "CharactersEnlisted", "AftermathRecorded"]

    exported = tmp_path / "saga.firelane"
    summary = await export_campaign(source, "saga", exported, progress=False)
    assert summary.encounters == 3 and summary.streams == 4
    checked = await verify_export(exported, trust=store_trust(source), progress=False)
    assert (checked.encounters, checked.characters, checked.rests, checked.chain) == (3, CAMPAIGNS[system_name][1], 2, summary.chain)
    assert checked.dice == sum(a[2] for a in before["audits"].values()) + before["downtime"][3]
    assert checked.own_key and checked.fingerprint == summary.fingerprint == source.signing_key().fingerprint

    name, _verified = await import_campaign(target, exported, trust=trusting(target, source), progress=False)
    assert name == "saga"
    assert await projections(target, "saga", encounters) == before
    # New seat tokens, the revealed seeds kept, and nothing for an engine to run.
    source_log, target_log = source.event_log("saga"), target.event_log("saga")
    for encounter in encounters:
        old, new = await seat_tokens(source_log, encounter), await seat_tokens(target_log, encounter)
        assert set(old) == set(new) and not set(old.values()) & set(new.values())
        seed = await load_seed(source_log, encounter)
        assert await load_seed(target_log, encounter) == seed
        # Sealed under each store's own key: the stored values differ, and neither is the seed in clear.
        sealed = [await store.client.execute("GET", seed_key("saga", encounter)) for store in stores]
        assert sealed[0] != sealed[1] and not any(seed.hex().encode() in value or seed in value for value in sealed)
        # Ended, here as there: no seat can queue a command for an engine that will never read it.
        assert await source_log.inboxes_closed(encounter) and await target_log.inboxes_closed(encounter)
        with pytest.raises(InboxClosed):
            await target_log.submit(encounter, b"{}", seat=next(iter(new)))
    # The imported entries carry the target store's signatures, not the source's.
    assert await EventLog(target.client, "saga", server_key=source.server_key).read(encounters[0]) == []
    # Exactly: exporting the imported campaign gives the same lines, signed by the target's key now.
    again = tmp_path / "again.firelane"
    resigned = await export_campaign(target, "saga", again, progress=False)
    assert again.read_bytes().splitlines()[:-1] == exported.read_bytes().splitlines()[:-1]
    assert resigned.fingerprint == target.signing_key().fingerprint != summary.fingerprint
    # The imported campaign goes on: a rest (of everyone, the dead too) appends after the imported stream.
    everyone = [c["id"] for c in before["characters"]["characters"]]
    events = await rest(target_log, DowntimeRequest(characters=everyone, days=1))
    assert events[0].downtime == 3 and len(events) == len(everyone) + 2  # type: ignore[attr-defined]


# ------------------------------------------------------------------ the aftermath, exactly once


def toy_table(**sheet: Any) -> EncounterSetup:
    return EncounterSetup(system="toy", combatants=[
        CombatantSetup(id="ann", character="ann", side="red", position=(0, 0), policy="human"),
        CombatantSetup(id="bo", name="Bo", side="blue", position=(3, 0), policy="human", sheet={"hp": 2})])


async def gm(log: EventLog, encounter: str, command: Any) -> None:
    """A GM command through the GM's seat, waited for until the log has its answer."""
    key = f"gm/{command.command_id}"
    await log.submit(encounter, codec.encode_command(command), seat="gm")
    with trio.fail_after(20):
        while await log.applied_entry_id(encounter, key) is None:
            await trio.sleep(0.02)


async def test_a_rewound_encounter_writes_back_its_final_branch_only(stores: list[Store]) -> None:
    store = stores[0]
    log = store.event_log("table")
    await create_characters(log, [(TOY, "ann", "Ann", {"hp": 3, "speed": 1}, "")])
    await create_encounter(log, "rw", toy_table(), b"r" * 32)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(run_encounter, log, "rw", TOY, {})
        with trio.fail_after(20):
            while await log.version("rw") == 0:
                await trio.sleep(0.02)
        branch_point = await log.version("rw")
        await gm(log, "rw", GMAdjust(command_id="hurt", actor="gm", combatant="ann", changes={"hp": 1}, reason="ambush"))
        await gm(log, "rw", RewindEncounter(command_id="back", actor="gm", to_version=branch_point, reason="wrong room"))
        await gm(log, "rw", GMAdjust(command_id="graze", actor="gm", combatant="ann", changes={"hp": 2}, reason="graze"))
        await gm(log, "rw", EndEncounter(command_id="end", actor="gm", reason="called off"))
    stored = await log.read("rw")
    assert [s.type for s in stored].count("EncounterRewound") == 1 and stored[-1].type == "SeedRevealed"
    final = fold(TOY, [codec.decode_event(s) for s in stored], "rw")
    assert final.combatants["ann"].hp == 2
    (ann,) = (await campaign_characters(log)).characters
    assert ann.sheet["hp"] == 2 and ann.engaged_in == ""  # the abandoned branch's 1 never reaches the campaign
    aftermaths = [e for _v, e in await stream_events(log) if isinstance(e, AftermathRecorded)]
    assert len(aftermaths) == 1 and aftermaths[0].final_version == len(stored) - 1


async def stream_events(log: EventLog) -> list[tuple[int, Any]]:
    return [(s.version, codec.decode_event(s)) for s in await CampaignLog.of(log).read(CAMPAIGN_STREAM)]


async def test_the_aftermath_is_written_once_though_the_engine_dies_before_revealing_the_seed(
    stores: list[Store], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The sequencer writes the aftermath, then reveals the seed; an engine killed in
    between is restarted (by its supervisor here, by `firelane serve` or a new
    `firelane run` otherwise), finds the seed unrevealed and writes no second aftermath."""
    store = stores[0]
    log = store.event_log("once")
    system = get_system("d100-zones")
    demo = demo_setup("d100-zones")
    await create_characters(log, [(system, c.id, c.name, c.sheet, "") for c in demo.combatants[:2]])
    combatants = [CombatantSetup(id=c.id, character=c.id, side=c.side, position=c.position) for c in demo.combatants[:2]]
    setup = msgspec.structs.replace(demo, combatants=combatants + [demo.combatants[-1]])
    await create_encounter(log, "once", setup, b"o" * 32)
    real = sequencer_module.record_aftermath
    calls: list[list[Any]] = []

    async def dies_after_writing(*args: Any) -> list[Any]:
        written = await real(*args)
        calls.append(written)
        if len(calls) == 1:
            raise ConnectionResetError("the engine's connection broke right after the aftermath")
        return written

    monkeypatch.setattr(sequencer_module, "record_aftermath", dies_after_writing)
    final = await run_encounter(log, "once", system, default_policies(system, {c.id: c.policy for c in setup.combatants}))
    assert final.ended and final.seed_revealed
    assert [len(written) for written in calls] == [1, 0]  # written the first time, a duplicate decision the second
    aftermaths = [e for _v, e in await stream_events(log) if isinstance(e, AftermathRecorded)]
    assert len(aftermaths) == 1 and {o.character for o in aftermaths[0].characters} == {c.id for c in combatants}
    assert await record_aftermath(log, "once", final) == []  # and again later: nothing


async def test_two_encounters_cannot_take_one_character_and_the_loser_leaves_its_id_free(stores: list[Store]) -> None:
    log = stores[0].event_log("race")
    await create_characters(log, [(TOY, "ann", "Ann", {"hp": 3}, "")])
    outcomes: dict[str, Any] = {}

    async def create(encounter: str) -> None:
        try:
            await create_encounter(log, encounter, toy_table(), encounter.encode() * 8)
            outcomes[encounter] = "created"
        except CampaignError as exc:
            outcomes[encounter] = str(exc)

    async with trio.open_nursery() as nursery:
        for encounter in ("left", "rite"):
            nursery.start_soon(create, encounter)
    winner = next(e for e, outcome in outcomes.items() if outcome == "created")
    loser = next(e for e in outcomes if e != winner)
    assert f"'ann' is in encounter '{winner}', which has not ended" in outcomes[loser]
    assert await log.client.execute("GET", seed_key("race", loser)) is None
    assert await log.encounter_meta(loser) is None
    enlisted = [e for _v, e in await stream_events(log) if isinstance(e, CharactersEnlisted)]
    assert [e.encounter for e in enlisted] == [winner]


# ------------------------------------------------------------------ surviving what is broken


async def test_the_characters_listing_survives_entries_it_cannot_read(stores: list[Store]) -> None:
    log = stores[0].event_log("odd")
    await create_characters(log, [(TOY, "ann", "Ann", {"hp": 3}, "")])
    stream = CampaignLog.of(log)
    # An entry someone wrote into the stream without the key, and a signed one of a type this engine does not know.
    await log.client.execute("XADD", stream.log_key(), "*", "n", "2", "t", "CharacterCreated", "s", "1", "d", b"{}")
    await stream.append(CAMPAIGN_STREAM, 1, [NewEntry(type="FromTheFuture", schema=1, data=b"{}")], command_id="x")
    await create_characters(log, [(TOY, "bo", "Bo", {"hp": 2}, "")])
    view = await campaign_characters(log)
    assert [c.id for c in view.characters] == ["ann", "bo"] and view.version == 3
    assert len(view.problems) == 1 and "FromTheFuture" in view.problems[0]


async def test_the_roster_pages_cheaply_and_lists_broken_encounters_as_such(stores: list[Store]) -> None:
    log = stores[0].event_log("big")
    for number in range(1, 251):
        await log.register_encounter(f"e{number:04d}", codec.encode_json({"system": "toy", "name": f"fight {number}"}))
    await log.register_encounter("bad-meta", b"\xff not json")
    await log.client.execute("SET", log.version_key("bad-meta"), 3)
    await log.client.execute("XADD", log.log_key("bad-meta"), "*", "n", "1", "t", "Nope", "s", "1", "d", b"{}")
    await log.client.execute("ZADD", log.encounters_key, 999, b"\xfe\xfd")  # not even an id
    page = await roster_page(log, 3, 100)
    assert (page.total, page.pages, len(page.rows)) == (252, 3, 52)
    assert [r.encounter for r in page.rows[:2]] == ["e0201", "e0202"] and page.rows[0].status == "waiting to start"
    assert page.rows[50].encounter == "bad-meta" and page.rows[50].status.startswith("unreadable")
    assert page.rows[51].status.startswith("unreadable (ValueError: invalid encounter id")

    async def commands_for(page_number: int) -> int:
        before = await log.client.execute("INFO", "commandstats")
        await roster_page(log, page_number, 10)
        after = await log.client.execute("INFO", "commandstats")
        return calls(after) - calls(before) - 1  # less the INFO itself

    # A page of 10 costs the same whether the campaign has 252 encounters or far more.
    small = await commands_for(2)
    for number in range(251, 1001):
        await log.register_encounter(f"e{number:04d}", codec.encode_json({"system": "toy", "name": f"fight {number}"}))
    assert await commands_for(2) == small and small < 60


def calls(info: bytes) -> int:
    return sum(int(part.split(b"calls=")[1].split(b",")[0]) for part in info.split(b"\r\n") if b"calls=" in part)


# ------------------------------------------------------------------ refusals


async def test_export_refuses_a_running_encounter_and_import_refuses_an_existing_name(stores: list[Store], tmp_path: Path) -> None:
    source, target = stores
    log = source.event_log("live")
    await create_characters(log, [(TOY, "ann", "Ann", {"hp": 3}, "")])
    with pytest.raises(CliError, match="nothing to export"):
        await export_campaign(source, "empty", tmp_path / "x", progress=False)
    await create_encounter(log, "waiting", toy_table(), b"w" * 32)
    with pytest.raises(CliError, match="encounter waiting has not ended: a seed that is still secret"):
        await export_campaign(source, "live", tmp_path / "live.firelane", progress=False)
    assert not (tmp_path / "live.firelane").exists()
    # End it; then it exports, and imports once under a name.
    async with trio.open_nursery() as nursery:
        nursery.start_soon(run_encounter, log, "waiting", TOY, {})
        await gm(log, "waiting", EndEncounter(command_id="end", actor="gm", reason="over"))
    await export_campaign(source, "live", tmp_path / "live.firelane", progress=False)
    await import_campaign(target, tmp_path / "live.firelane", trust=trusting(target, source), progress=False)
    with pytest.raises(CliError, match="campaign 'live' already exists in this store; import it under another name with --as NAME"):
        await import_campaign(target, tmp_path / "live.firelane", trust=trusting(target, source), progress=False)
    name, _ = await import_campaign(target, tmp_path / "live.firelane", "copy", trust=trusting(target, source), progress=False)
    assert [c.id for c in (await campaign_characters(target.event_log(name))).characters] == ["ann"]


async def test_a_tampered_export_is_refused_and_nothing_is_imported(stores: list[Store], tmp_path: Path) -> None:
    source, target = stores
    log = source.event_log("tamper")
    await create_characters(log, [(TOY, "ann", "Ann", {"hp": 3}, ""), (TOY, "bo", "Bo", {"hp": 2}, "")])
    exported = tmp_path / "t.firelane"
    await export_campaign(source, "tamper", exported, progress=False)
    lines = exported.read_bytes().splitlines(keepends=True)
    forged = lines[2].replace(b'"hp":3', b'"hp":30')  # line 3: Ann's creation
    assert forged != lines[2]
    (tmp_path / "forged").write_bytes(b"".join(lines[:2] + [forged] + lines[3:]))
    with pytest.raises(CliError, match="forged line 3: the hash chain breaks here"):
        await import_campaign(target, tmp_path / "forged", trust=trusting(target, source), progress=False)
    (tmp_path / "cut").write_bytes(b"".join(lines[:-2]))
    with pytest.raises(CliError, match="without its end line"):
        await import_campaign(target, tmp_path / "cut", trust=trusting(target, source), progress=False)
    (tmp_path / "unsigned").write_bytes(b"".join(lines[:-1]))
    with pytest.raises(CliError, match="without its signature line"):
        await import_campaign(target, tmp_path / "unsigned", trust=trusting(target, source), progress=False)
    assert await target.client.execute("KEYS", "*tamper*") == []


async def test_an_import_that_fails_half_way_is_taken_back(stores: list[Store], tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import firelane.actors.campaign_io as campaign_io

    source, target = stores
    log = source.event_log("half")
    await create_characters(log, [(TOY, "ann", "Ann", {"hp": 3}, "")])
    await create_encounter(log, "one", toy_table(), b"1" * 32)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(run_encounter, log, "one", TOY, {})
        await gm(log, "one", EndEncounter(command_id="end", actor="gm", reason="over"))
    exported = tmp_path / "half.firelane"
    await export_campaign(source, "half", exported, progress=False)

    async def broken_commit(self: Any) -> None:
        raise ConnectionResetError("the store went away")

    monkeypatch.setattr(campaign_io._Importer, "commit", broken_commit)
    with pytest.raises(ConnectionResetError):
        await import_campaign(target, exported, "half-copy", trust=trusting(target, source), progress=False)
    assert await target.client.execute("KEYS", "*half-copy*") == []
    assert not [u for u in await target.client.execute("ACL", "USERS") if u.startswith(b"half-copy/")]
    monkeypatch.undo()
    await import_campaign(target, exported, "half-copy", trust=trusting(target, source), progress=False)
    (row,) = await campaign_roster(target.event_log("half-copy"))
    assert row.status == "ended" and row.encounter == "one"
