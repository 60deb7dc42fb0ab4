"""A campaign exported with the schema versions of 2026-12-01
(tests/fixtures/campaign-export-v1.firelane, made by make_campaign_export.py
next to it, in the unsigned export format 1) is refused as unsigned unless the
user accepts an unsigned file; accepted, it still imports, exactly, into a
fresh store; and after a schema change it imports through the upcasters, or is
refused whole when an upcaster is missing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest

import firelane.engine.campaign as campaign_engine
import firelane.projections.characters as characters_projection
from firelane.events import codec
from firelane.events.schemas import Event
from firelane.actors.store import CliError, Store
from firelane.actors.campaign_io import Trust, export_campaign, import_campaign, store_trust, verify_export
from firelane.projections.characters import campaign_characters, character_history, downtime_audit
from firelane.projections.roster import campaign_roster
from firelane.redisio import connect
from firelane.redisio.datadir import DataDir

FIXTURE = Path(__file__).parent / "fixtures" / "campaign-export-v1.firelane"
UNSIGNED_ACCEPTED = Trust(accept_unsigned=True)


def payloads(path: Path) -> list[bytes]:
    """The items of an export, without their chain (which the header's version changes)."""
    return [line.split(b" ", 1)[1] for line in path.read_bytes().splitlines()]


def same_items_as_the_fixture(again: Path) -> None:
    """A re-export of the fixture: the same items, in format 2, with a signature line at the end."""
    old, new = payloads(FIXTURE), payloads(again)
    assert new[0] == old[0].replace(b'"version":1', b'"version":2') and new[1:-1] == old[1:]
    assert new[-1].startswith(b'{"x":"signature","algorithm":"ed25519"')


@pytest.fixture
async def store(redis_url: str, tmp_path: Path):
    client = await connect(redis_url)
    try:
        yield Store(client=client, server_key=b"f" * 32, data_dir=DataDir(tmp_path), redis_display="test")
    finally:
        await client.aclose()


async def seen(store: Store) -> dict[str, Any]:
    log = store.event_log("fixture")
    view = await campaign_characters(log)
    _entries, downtime = await downtime_audit(log)
    return {"characters": [(c.id, c.name, c.status, c.summary, c.encounters, c.downtimes) for c in view.characters],
            "pell": [entry.text for entry in (await character_history(log, "rg-pell"))[1]],
            "roster": [(row.encounter, row.status, row.winner) for row in await campaign_roster(log)],
            "downtime": (downtime.ok, downtime.rolls, downtime.dice)}


TODAY = {
    "characters": [("rg-ives", "Sgt. Ives", "ready", "HP 14/14", ["raid-1", "raid-2"], [1]),
                   ("rg-pell", "Doc Pell", "ready", "HP 12/12", ["raid-1", "raid-2"], [1])],
    "roster": [("raid-1", "ended", "rangers"), ("raid-2", "ended", "rangers")],
    "downtime": (True, 2, 2),
}


async def test_the_unsigned_v1_fixture_is_refused_unless_accepted_as_unsigned(store: Store) -> None:
    for check in (verify_export(FIXTURE, progress=False), import_campaign(store, FIXTURE, progress=False)):
        with pytest.raises(CliError, match=r"is an unsigned export \(format 1, made before firelane signed its exports\): "
                                           r"nothing proves who made it .*--accept-unsigned$"):
            await check
    assert await store.client.execute("KEYS", "*") == []
    verified = await verify_export(FIXTURE, trust=UNSIGNED_ACCEPTED, progress=False)
    assert verified.unsigned and not verified.fingerprint and not verified.own_key


async def test_the_v1_fixture_imports_exactly(store: Store, tmp_path: Path) -> None:
    verified = await verify_export(FIXTURE, trust=UNSIGNED_ACCEPTED, progress=False)
    assert (verified.encounters, verified.characters, verified.rests, verified.entries) == (2, 2, 1, 96)
    await import_campaign(store, FIXTURE, trust=store_trust(store, accept_unsigned=True), progress=False)
    found = await seen(store)
    assert {k: v for k, v in found.items() if k != "pell"} == TODAY
    assert found["pell"][2].startswith("came back from raid-1 (won by rangers, last side standing; 3 rounds): hurt; HP from 12 to 2")
    assert found["pell"][4].startswith("rested 2 days (downtime 1): ready; HP from 2 to 12 — first aid by Doc Pell: +10 HP")
    again = tmp_path / "again.firelane"
    await export_campaign(store, "fixture", again, progress=False)
    same_items_as_the_fixture(again)


class CharacterCreatedV2(Event, tag="CharacterCreated"):
    """A schema change as it might come: a required field that v1 did not have."""

    schema_version = 2

    character: str
    name: str
    system: str
    sheet: dict[str, Any]
    player: str  # who plays the character: new in v2, required
    notes: str = ""


@pytest.fixture
def schema_v2(monkeypatch: pytest.MonkeyPatch) -> None:
    """Today's code with CharacterCreated at v2 (the codec and the folds use the new class)."""
    monkeypatch.setitem(codec._event_types, "CharacterCreated", CharacterCreatedV2)
    monkeypatch.setattr(campaign_engine, "CharacterCreated", CharacterCreatedV2)
    monkeypatch.setattr(characters_projection, "CharacterCreated", CharacterCreatedV2)


async def test_after_a_schema_change_the_fixture_imports_through_its_upcaster(
    store: Store, tmp_path: Path, schema_v2: None, monkeypatch: pytest.MonkeyPatch,
) -> None:
    lifted: list[str] = []

    def v1_to_v2(body: dict[str, Any]) -> dict[str, Any]:
        lifted.append(body["character"])
        return {**body, "player": ""}

    monkeypatch.setitem(codec._upcasters, ("CharacterCreated", 1), v1_to_v2)
    await import_campaign(store, FIXTURE, trust=UNSIGNED_ACCEPTED, progress=False)
    assert set(lifted) == {"rg-ives", "rg-pell"}
    found = await seen(store)
    assert {k: v for k, v in found.items() if k != "pell"} == TODAY
    line = msgspec.json.decode(FIXTURE.read_bytes().splitlines()[2].split(b" ", 1)[1])
    created = codec.decode_body(line["t"], line["s"], msgspec.json.encode(line["d"]))
    assert isinstance(created, CharacterCreatedV2) and created.player == ""
    # The log keeps what was written (v1 bodies), so the file's items come out the same.
    again = tmp_path / "again.firelane"
    await export_campaign(store, "fixture", again, progress=False)
    same_items_as_the_fixture(again)


async def test_without_its_upcaster_the_old_file_is_refused_whole(store: Store, schema_v2: None) -> None:
    with pytest.raises(CliError, match=r"line 3: CharacterCreated v1 cannot be read with today's schemas: "
                                       r"no upcaster for CharacterCreated v1 -> v2"):
        await import_campaign(store, FIXTURE, trust=UNSIGNED_ACCEPTED, progress=False)
    assert await store.client.execute("KEYS", "*") == []
    with pytest.raises(msgspec.ValidationError, match="player"):
        msgspec.convert({"character": "x", "name": "x", "system": "toy", "sheet": {}}, CharacterCreatedV2)
