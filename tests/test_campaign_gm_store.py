"""The GM's hand over a campaign's characters on a real redis-server:
adjustments that land once (retried, or raced by another writer), releases
from an encounter that never started (it is ended before its first turn,
whichever engine starts it) or that ended without its aftermath, refused
while the fight is on; and a campaign with adjustments and releases exported
and imported into a fresh store (with a GM token of its own)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio

import firelane.actors.release as release_actor
import firelane.actors.sequencer as sequencer_module
from firelane.actors.campaign import adjust, create_characters, gm_token, gm_token_matches
from firelane.actors.release import release
from firelane.actors.runtime import TaskKeptFailing, default_policies, run_encounter
from firelane.actors.sequencer import create_encounter, ensure_encounter
from firelane.engine.campaign import Adjustment, CampaignError
from firelane.engine.registry import demo_setup, get_system
from firelane.events import codec
from firelane.events.campaign_log import CAMPAIGN_STREAM, CampaignLog
from firelane.events.campaign_schemas import AftermathRecorded, CharacterAdjusted, CharactersReleased
from firelane.events.log import EventLog
from firelane.events.schemas import CombatantSetup, EncounterSetup, EndEncounter
from firelane.actors.store import Store
from firelane.actors.campaign_io import export_campaign, import_campaign, store_trust
from firelane.projections.audit import verify
from firelane.projections.characters import campaign_characters, character_history, downtime_audit
from firelane.projections.roster import campaign_roster
from firelane.projections.turn_state import fold
from firelane.redisio import connect
from firelane.redisio.datadir import DataDir

ZONES = get_system("d100-zones")
DEMO = demo_setup("d100-zones")
RANGERS = [c for c in DEMO.combatants if c.id in ("rg-ives", "rg-pell")]
VEX = next(c for c in DEMO.combatants if c.id == "rd-vex")


@pytest.fixture
async def stores(redis_url: str, second_redis_url: str, tmp_path: Path):
    clients = [await connect(redis_url), await connect(second_redis_url)]
    try:
        yield [Store(client=client, server_key=bytes([n + 5]) * 32, data_dir=DataDir(tmp_path / f"store{n}"),
                     redis_display=f"server {n}") for n, client in enumerate(clients)]
    finally:
        for client in clients:
            await client.aclose()


async def rangers(log: EventLog) -> None:
    await create_characters(log, [(ZONES, c.id, c.name, c.sheet, "") for c in RANGERS])


def raid(policy: str = "ai") -> EncounterSetup:
    heroes = [CombatantSetup(id=c.id, character=c.id, side=c.side, position=c.position, policy=policy) for c in RANGERS]
    return msgspec.structs.replace(DEMO, combatants=[*heroes, msgspec.structs.replace(VEX, policy=policy)])


async def stream_events(log: EventLog) -> list[Any]:
    return [codec.decode_event(s) for s in await CampaignLog.of(log).read(CAMPAIGN_STREAM)]


async def by_id(log: EventLog) -> dict[str, Any]:
    return {c.id: c for c in (await campaign_characters(log)).characters}


# ------------------------------------------------------------------ adjustments


async def test_an_award_lands_once_when_retried_and_twice_when_two_gms_give_one_at_once(stores: list[Store]) -> None:
    log = stores[0].event_log("awards")
    await rangers(log)
    award = Adjustment(add={"medicine": 5}, reason="trained with the doc")
    assert len(await adjust(log, "rg-pell", award, command_id="train-1")) == 1
    assert await adjust(log, "rg-pell", award, command_id="train-1") == []  # a retry: already applied
    assert (await by_id(log))["rg-pell"].sheet["medicine"] == 80  # Doc Pell's 75, and 5
    # Two writers at once: the second one's append conflicts, refolds, and adds to what the first wrote.
    async with trio.open_nursery() as nursery:
        for _ in range(2):
            nursery.start_soon(adjust, log, "rg-pell", Adjustment(add={"medicine": 1}, reason="practice"))
    assert (await by_id(log))["rg-pell"].sheet["medicine"] == 82
    adjustments = [e for e in await stream_events(log) if isinstance(e, CharacterAdjusted)]
    assert [[(c.before, c.after) for c in e.changes] for e in adjustments] == [[(75, 80)], [(80, 81)], [(81, 82)]]
    _view, history = await character_history(log, "rg-pell")
    assert [entry.text for entry in history][-1] == "adjusted by the GM (practice): ready; medicine from 81 to 82"
    with pytest.raises(CampaignError, match="^character 'rg-pell': combatant 'rg-pell': sheet field 'hp' must be at least 1"):
        await adjust(log, "rg-pell", Adjustment(set={"hp": 0}, reason="x"))
    assert len([e for e in await stream_events(log) if isinstance(e, CharacterAdjusted)]) == 3


async def test_the_gm_token_comes_with_the_first_character_and_can_be_renewed(stores: list[Store]) -> None:
    log = stores[0].event_log("tokens")
    assert await gm_token_matches(log, "anything") is None  # no campaign yet, no token
    await rangers(log)
    token = await gm_token(log)
    assert len(token) >= 32 and await gm_token(log) == token
    assert await gm_token_matches(log, token) is True and await gm_token_matches(log, token + "x") is False
    renewed = await gm_token(log, renew=True)
    assert renewed != token and await gm_token_matches(log, token) is False and await gm_token_matches(log, renewed)


# ------------------------------------------------------------------ releases


async def test_a_character_released_from_an_encounter_that_never_started_and_the_encounter_ends_unplayed(
    stores: list[Store],
) -> None:
    log = stores[0].event_log("unplayed")
    await rangers(log)
    await create_encounter(log, "raid", raid(), b"u" * 32)
    released = await release(log, ["rg-ives"], "we ran out of time")
    assert released.encounter_status == "not started" and released.event is not None
    assert released.finished == "encounter raid was ended before its first turn; its seed is revealed"
    stored = await log.read("raid")
    types = [s.type for s in stored]
    assert types[0] == "EncounterStarted" and types[-2:] == ["EncounterEnded", "SeedRevealed"]
    assert not {"ActionTaken", "AttackResolved", "Moved", "DamageDealt"} & set(types)  # not one turn played
    ended = codec.decode_event(stored[-2])
    assert ended.by == "gm" and ended.reason == "rg-ives released by the GM before it started: we ran out of time"
    assert verify(await log.read("raid", include_invalid=True)).ok
    # Ives was released; Pell came back with the encounter's aftermath, as it went in.
    events = await stream_events(log)
    assert [type(e).__name__ for e in events[-2:]] == ["CharactersReleased", "AftermathRecorded"]
    assert [o.character for o in events[-1].characters] == ["rg-pell"]
    assert {c.engaged_in for c in (await by_id(log)).values()} == {""}
    _view, history = await character_history(log, "rg-ives")
    assert history[-1].text == "released by the GM from raid before it started (we ran out of time): ready"
    # Free again: a new fight can take both.
    await create_encounter(log, "raid-2", raid(), b"v" * 32)
    assert {c.engaged_in for c in (await by_id(log)).values()} == {"raid-2"}


async def test_whichever_engine_starts_a_released_encounter_ends_it_before_its_first_turn(
    stores: list[Store], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The release queues the GM's EndEncounter behind the start; here the
    releasing process stops right after its append, and an engine that plays
    every combatant starts the encounter later: it ends it first."""
    log = stores[0].event_log("later")
    await rangers(log)
    setup = raid()
    await create_encounter(log, "raid", setup, b"l" * 32)

    async def stops_here(*_args: Any) -> str:
        return "the releasing process stopped"

    monkeypatch.setattr(release_actor, "_finish_encounter", stops_here)
    released = await release(log, ["rg-ives", "rg-pell"], "postponed")
    assert released.finished == "the releasing process stopped" and await log.version("raid") == 0
    final = await run_encounter(log, "raid", ZONES, default_policies(ZONES, {c.id: c.policy for c in setup.combatants}))
    assert final.ended and final.seed_revealed and final.end_reason.endswith("postponed")
    assert not {"ActionTaken", "AttackResolved", "Moved", "DamageDealt"} & {s.type for s in await log.read("raid")}
    # Nobody was left enlisted, so the aftermath wrote nothing.
    assert not [e for e in await stream_events(log) if isinstance(e, AftermathRecorded)]


async def test_a_release_frees_characters_whose_encounter_creation_stopped_half_way(
    stores: list[Store], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The creation enlisted the characters and died before it queued the start:
    the release frees them, and a creation repeated later under that id refuses
    rather than start a fight with copies of characters who have left it."""
    log = stores[0].event_log("halfmade")
    await rangers(log)

    async def dies(*_args: Any) -> None:
        raise ConnectionResetError("the store went away")

    monkeypatch.setattr(sequencer_module, "_store_tokens", dies)
    with pytest.raises(ConnectionResetError):
        await create_encounter(log, "raid", raid(), b"h" * 32)
    monkeypatch.undo()
    assert {c.engaged_in for c in (await by_id(log)).values()} == {"raid"} and await log.encounter_meta("raid") is None
    released = await release(log, ["rg-ives", "rg-pell"], "the creation broke")
    assert released.finished == "encounter raid was never fully created (no start was queued): there is nothing to end"
    assert {c.engaged_in for c in (await by_id(log)).values()} == {""}
    with pytest.raises(CampaignError, match="^encounter 'raid' already enlisted these characters and they have left it since"):
        await ensure_encounter(log, "raid", raid(), b"h" * 32)
    assert await log.version("raid") == 0 and not await log.read_inbox("raid", "engine")
    await create_encounter(log, "raid-2", raid(), b"i" * 32)  # under a new id they fight
    assert {c.engaged_in for c in (await by_id(log)).values()} == {"raid-2"}


async def test_a_character_released_from_an_encounter_that_ended_without_its_aftermath(
    stores: list[Store], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The engine ended the fight and kept failing before its aftermath (and
    its seed's reveal): a release brings the character back with what the
    fight did, and finishing the encounter writes the others' aftermath."""
    log = stores[0].event_log("crashed")
    await rangers(log)
    setup = raid()
    await create_encounter(log, "raid", setup, b"c" * 32)

    async def breaks(*_args: Any) -> list[Any]:
        raise ConnectionResetError("the store went away")

    monkeypatch.setattr(sequencer_module, "record_aftermath", breaks)
    failed = False
    try:
        await run_encounter(log, "raid", ZONES, default_policies(ZONES, {c.id: c.policy for c in setup.combatants}),
                            max_restarts=0)
    except* TaskKeptFailing:
        failed = True
    assert failed
    monkeypatch.undo()
    stored = await log.read("raid")
    assert stored[-1].type == "EncounterEnded"  # ended, its seed not revealed
    assert {c.engaged_in for c in (await by_id(log)).values()} == {"raid"}
    released = await release(log, ["rg-ives"], "the engine died")
    assert released.encounter_status == "ended" and released.event is not None
    assert released.finished == "encounter raid: its other characters' aftermath is written and its seed revealed"
    final = fold(ZONES, [codec.decode_event(s) for s in stored], "raid")
    (outcome,) = released.event.characters
    assert outcome.sheet["hp"] == final.combatants["rg-ives"].hp
    assert released.event.final_version == len(stored)
    (aftermath,) = [e for e in await stream_events(log) if isinstance(e, AftermathRecorded)]
    assert [o.character for o in aftermath.characters] == ["rg-pell"]
    assert aftermath.characters[0].sheet["hp"] == final.combatants["rg-pell"].hp
    assert (await log.read("raid"))[-1].type == "SeedRevealed"
    assert {c.engaged_in for c in (await by_id(log)).values()} == {""}


async def test_a_release_is_refused_while_the_fight_is_on(stores: list[Store]) -> None:
    log = stores[0].event_log("onair")
    await rangers(log)
    await create_encounter(log, "raid", raid(policy="human"), b"h" * 32)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(run_encounter, log, "raid", ZONES, {})
        with trio.fail_after(20):
            while await log.version("raid") == 0:
                await trio.sleep(0.02)
        with pytest.raises(CampaignError, match=r"^encounter 'raid' is under way \(round 1\): a character leaves a fight "
                                                r"with its aftermath; end it first \(the GM's EndEncounter\)$"):
            await release(log, ["rg-ives"], "bored")
        with pytest.raises(CampaignError, match=r"^'rg-ives' is in encounter 'raid', which has not ended: adjust it after"):
            await adjust(log, "rg-ives", Adjustment(add={"medicine": 1}, reason="x"))
        await log.submit("raid", codec.encode_command(EndEncounter(command_id="end", actor="gm", reason="over")), seat="gm")
    assert not [e for e in await stream_events(log) if isinstance(e, CharactersReleased)]
    assert {c.engaged_in for c in (await by_id(log)).values()} == {""}


# ------------------------------------------------------------------ export and import


async def test_adjustments_and_releases_go_through_export_and_import(stores: list[Store], tmp_path: Path) -> None:
    source, target = stores
    log = source.event_log("saga")
    await rangers(log)
    await adjust(log, "rg-ives", Adjustment(set={"name": "Ives the Bold", "medicine": 60}, reason="promoted"))
    await create_encounter(log, "raid", raid(), b"s" * 32)
    await release(log, ["rg-ives"], "called off")
    await adjust(log, "rg-pell", Adjustment(retire=True, reason="moved away"))
    exported = tmp_path / "saga.firelane"
    await export_campaign(source, "saga", exported, progress=False)
    source_key = source.signing_key().fingerprint  # the user names the other store's key to trust it
    name, verified = await import_campaign(target, exported, trust=store_trust(target, [source_key]), progress=False)
    assert (name, verified.encounters, verified.characters) == ("saga", 1, 2)
    imported = target.event_log("saga")
    assert msgspec.to_builtins(await campaign_characters(imported)) == msgspec.to_builtins(await campaign_characters(log))
    for character in ("rg-ives", "rg-pell"):
        assert msgspec.to_builtins(await character_history(imported, character)) == msgspec.to_builtins(
            await character_history(log, character))
    ives = (await by_id(imported))["rg-ives"]
    assert (ives.name, ives.sheet["medicine"], ives.status) == ("Ives the Bold", 60, "ready")
    assert (await by_id(imported))["rg-pell"].status == "retired"
    assert (await downtime_audit(imported))[1].ok
    assert [row.status for row in await campaign_roster(imported)] == ["ended"]
    # The GM token is the store's, not the file's: the import made a new one.
    source_token, target_token = await gm_token(log), await gm_token(imported)
    assert source_token != target_token and source_token not in exported.read_text()
    # The imported campaign goes on, and comes out of the store as it went in (signed by this store now).
    again = tmp_path / "again.firelane"
    await export_campaign(target, "saga", again, progress=False)
    assert again.read_bytes().splitlines()[:-1] == exported.read_bytes().splitlines()[:-1]
    await adjust(imported, "rg-pell", Adjustment(revive=True, reason="came back"))
    assert (await by_id(imported))["rg-pell"].status == "ready"


# ------------------------------------------------------------------ the web API, in process


async def test_the_api_releases_a_character_with_the_gm_token(stores: list[Store]) -> None:
    """No `firelane serve` runs the raid here, so it stays unstarted until the
    API's release ends it before its first turn."""
    import httpx

    from firelane.web.app import Api, make_app

    store = stores[0]
    log = store.event_log("web")
    await rangers(log)
    await create_encounter(log, "raid", raid(), b"w" * 32)
    token = await gm_token(log)
    async with trio.open_nursery() as nursery:
        app = make_app(Api(store, nursery))
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://localhost") as http:
            url = "/api/campaigns/web/characters/rg-pell/release"
            assert (await http.post(url, json={"reason": "postponed"})).status_code == 401
            assert (await http.post(url, json={"reason": "postponed"}, headers={"Authorization": "Bearer nope"})).status_code == 403
            assert {c.engaged_in for c in (await by_id(log)).values()} == {"raid"}
            answer = await http.post(url, json={"reason": "postponed"}, headers={"Authorization": f"Bearer {token}"})
            assert answer.status_code == 200, answer.text
            released = answer.json()["released"]
            assert (released["encounter_status"], released["event"]["via"], released["event"]["reason"]) == (
                "not started", "api", "postponed")
            assert answer.json()["character"]["engaged_in"] == ""
            assert released["finished"] == "encounter raid was ended before its first turn; its seed is revealed"
        nursery.cancel_scope.cancel()
    assert {c.engaged_in for c in (await by_id(log)).values()} == {""}
    assert (await log.read("raid"))[-1].type == "SeedRevealed"
