"""Campaigns through the `firelane` CLI and the HTTP API, as a user runs them:
characters, a fight naming them, a rest, `audit --downtime --verify`, export
from one data directory and import into a fresh one (each with its own
embedded redis-server and signing key), and one-line refusals of bad input."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import msgspec

from firelane.engine.registry import demo_setup
from tests.cli_helpers import Served, firelane


def raid_setup(tmp_path: Path, name: str = "raid.json") -> Path:
    """The d100-zones demo's rangers Ives and Pell, as campaign characters, against the raider Vex."""
    demo = msgspec.to_builtins(demo_setup("d100-zones"))
    heroes = [{"id": c["id"], "character": c["id"], "side": c["side"], "position": c["position"]}
              for c in demo["combatants"] if c["id"] in ("rg-ives", "rg-pell")]
    foe = next(c for c in demo["combatants"] if c["id"] == "rd-vex")
    path = tmp_path / name
    path.write_text(json.dumps({**demo, "combatants": heroes + [foe]}))
    return path


def ok(*args: str) -> str:
    result = firelane(*args)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def refused(*args: str) -> str:
    result = firelane(*args)
    assert result.returncode == 2, result.stdout + result.stderr
    # (A command that starts the data dir's redis-server says so on the line before.)
    lines = [line for line in result.stderr.strip().splitlines() if not line.startswith("started Redis")]
    assert len(lines) == 1 and lines[0].startswith("firelane: error: "), result.stderr
    return lines[0]


def test_a_campaign_is_played_exported_and_imported_into_a_fresh_data_dir(tmp_path: Path) -> None:
    first = ["--data-dir", str(tmp_path / "first")]
    fresh = ["--data-dir", str(tmp_path / "fresh")]
    characters = tmp_path / "rangers.json"
    demo = msgspec.to_builtins(demo_setup("d100-zones"))
    characters.write_text(json.dumps({"characters": [
        {"id": c["id"], "name": c["name"], "system": "d100-zones", "sheet": c["sheet"]}
        for c in demo["combatants"] if c["id"] in ("rg-ives", "rg-pell")]}))
    assert "created 2 characters in campaign default: rg-ives, rg-pell" in ok("characters", "--create", str(characters), *first)
    ok("run", "raid", "--setup", str(raid_setup(tmp_path)), "--seed", "raid", "--quiet", *first)
    listing = ok("characters", *first)
    assert "rg-pell" in listing and "(1 fights, 0 rests)" in listing
    history = ok("characters", "rg-pell", *first)
    assert "enlisted in encounter raid as rg-pell" in history and "came back from raid" in history
    rested = ok("rest", "--party", "--days", "2", "--healer", "rg-pell", "--seed", "s", *first)
    assert "downtime 1: 2 day(s) for rg-ives, rg-pell; healer rg-pell" in rested and "seed revealed" in rested
    assert ok("audit", "--downtime", "--verify", *first).strip().splitlines()[-1].startswith(
        "verified: every rest's seed matches its commitment")

    exported = tmp_path / "default.firelane"
    assert "exported campaign 'default'" in ok("campaign", "export", "default", str(exported), *first)
    checked = ok("campaign", "verify", str(exported))
    assert "hash chain intact" in checked and "all match" in checked
    imported = ok("campaign", "import", str(exported), *fresh)
    assert "imported" in imported and "1 encounters, 2 characters, 1 rests" in imported
    for command in (["characters", "--json"], ["characters", "rg-pell", "--json"], ["encounters", "--json"]):
        assert json.loads(ok(*command, *first)) == json.loads(ok(*command, *fresh))
    assert "verified: seed matches its commitment" in ok("audit", "raid", "--verify", *fresh)
    assert ok("seats", "raid", "--json", *first) != ok("seats", "raid", "--json", *fresh)  # new tokens
    again = tmp_path / "again.firelane"
    ok("campaign", "export", "default", str(again), *fresh)
    assert again.read_bytes() == exported.read_bytes()

    # Bad input: one line, exit 2, nothing half done.
    assert "campaign 'default' already exists" in refused("campaign", "import", str(exported), *fresh)
    broken = tmp_path / "broken.firelane"
    broken.write_bytes(exported.read_bytes().replace(b'"days":2', b'"days":20'))
    assert "the hash chain breaks here" in refused("campaign", "import", str(broken), "--as", "other", *fresh)
    assert json.loads(ok("characters", "--json", "--campaign", "other", *fresh))["characters"] == []
    assert "no character 'nobody' in campaign 'default'" in refused("rest", "nobody", "--days", "1", *first)
    assert "--days must be a whole number of days from 1 to 3650" in refused("rest", "rg-ives", "--days", "0", *first)
    assert "character 'rg-ives' already exists" in refused("characters", "--create", str(characters), *first)
    bad_sheet = tmp_path / "bad.json"
    bad_sheet.write_text(json.dumps({"id": "zed", "system": "d100-zones", "sheet": {"hp": 0}}))
    assert "sheet field 'hp' must be at least 1" in refused("characters", "--create", str(bad_sheet), *first)
    assert "not a firelane campaign export" in refused("campaign", "verify", str(characters))
    assert "give an ENCOUNTER, or --downtime" in refused("audit", *first)
    busy = raid_setup(tmp_path, "again.json")
    ok("create", "second", "--setup", str(busy), *first)
    assert "is in encounter 'second', which has not ended" in refused("create", "third", "--setup", str(busy), *first)
    assert "encounter second has not ended" in refused("campaign", "export", "default", str(tmp_path / "x"), *first)
    assert not (tmp_path / "x").exists()


def test_the_api_shows_characters_and_their_history(tmp_path: Path) -> None:
    served = Served(tmp_path / "served")
    try:
        store = ["--data-dir", str(served.data_dir)]
        ok("characters", "--create-demo", "d100-zones", "--side", "rangers", *store)
        ok("run", "raid", "--setup", str(raid_setup(tmp_path)), "--quiet", *store)  # firelane serve runs it
        with httpx.Client(base_url=served.api, timeout=10) as http:
            listing = http.get("/api/campaigns/default/characters").json()
            ids = [c["id"] for c in listing["characters"]]
            assert ids == ["rg-ives", "rg-moss", "rg-pell", "rg-quinn"]
            pell = next(c for c in listing["characters"] if c["id"] == "rg-pell")
            assert pell["encounters"] == ["raid"] and pell["engaged_in"] == "" and pell["sheet"]["max_hp"] == 12
            one = http.get("/api/campaigns/default/characters/rg-pell").json()
            assert one["character"] == pell
            assert [entry["type"] for entry in one["history"]] == ["CharacterCreated", "CharactersEnlisted", "AftermathRecorded"]
            assert one["history"][2]["event"]["encounter"] == "raid"
            missing = http.get("/api/campaigns/default/characters/nobody")
            assert missing.status_code == 404 and "no character 'nobody'" in missing.json()["error"]
            assert http.get("/api/campaigns/default/characters/bad%20id").status_code == 400
            page = http.get("/api/campaigns/default/encounters", params={"page": 1, "per_page": 1}).json()
            assert (page["total"], page["pages"], [e["encounter"] for e in page["encounters"]]) == (1, 1, ["raid"])
    finally:
        code, stderr = served.stop()
        assert code == 0, stderr
