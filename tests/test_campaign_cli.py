"""Campaigns through the `firelane` CLI and the HTTP API, as a user runs them:
characters, a fight naming them, a rest, `audit --downtime --verify`, export
from one data directory and import into a fresh one (each with its own
embedded redis-server and signing key), and one-line refusals of bad input."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import httpx
import msgspec

from firelane.engine.registry import demo_setup
from tests.cli_helpers import cli_ok, cli_refused, Served


def raid_setup(tmp_path: Path, name: str = "raid.json") -> Path:
    """The d100-zones demo's rangers Ives and Pell, as campaign characters, against the raider Vex."""
    demo = msgspec.to_builtins(demo_setup("d100-zones"))
    heroes = [{"id": c["id"], "character": c["id"], "side": c["side"], "position": c["position"]}
              for c in demo["combatants"] if c["id"] in ("rg-ives", "rg-pell")]
    foe = next(c for c in demo["combatants"] if c["id"] == "rd-vex")
    path = tmp_path / name
    path.write_text(json.dumps({**demo, "combatants": heroes + [foe]}))
    return path


def test_a_campaign_is_played_exported_and_imported_into_a_fresh_data_dir(tmp_path: Path) -> None:
    first = ["--data-dir", str(tmp_path / "first")]
    fresh = ["--data-dir", str(tmp_path / "fresh")]
    characters = tmp_path / "rangers.json"
    demo = msgspec.to_builtins(demo_setup("d100-zones"))
    characters.write_text(json.dumps({"characters": [
        {"id": c["id"], "name": c["name"], "system": "d100-zones", "sheet": c["sheet"]}
        for c in demo["combatants"] if c["id"] in ("rg-ives", "rg-pell")]}))
    assert "created 2 characters in campaign default: rg-ives, rg-pell" in cli_ok("characters", "--create", str(characters), *first)
    cli_ok("run", "raid", "--setup", str(raid_setup(tmp_path)), "--seed", "raid", "--reproducible-dice", "--quiet", *first)
    listing = cli_ok("characters", *first)
    assert "rg-pell" in listing and "(1 fight, 0 rests)" in listing
    history = cli_ok("characters", "rg-pell", *first)
    assert "enlisted in encounter raid" in history and "came back from raid" in history
    rested = cli_ok("rest", "--party", "--days", "2", "--healer", "rg-pell", "--seed", "s", "--reproducible-dice", *first)
    assert "downtime 1: 2 days for rg-ives, rg-pell; healer rg-pell" in rested and "seed revealed" in rested
    assert cli_ok("audit", "--downtime", "--verify", *first).strip().splitlines()[-1].startswith(
        "verified: every rest's seed matches its commitment")

    exported = tmp_path / "default.firelane"
    said = cli_ok("campaign", "export", "default", str(exported), *first)
    first_key = re.search(r"signed by this store's key ((?:[0-9a-f]{4}-){7}[0-9a-f]{4})", said)
    assert "exported campaign 'default'" in said and first_key, said
    checked = cli_ok("campaign", "verify", str(exported), *first)
    assert f"signed by key {first_key[1]} (this store's key)" in checked
    assert "hash chain intact" in checked and "all match" in checked
    # The fresh store does not know the first one's key: the user names it (as the export printed it).
    assert f"is signed by key {first_key[1]}, not this store's" in cli_refused("campaign", "verify", str(exported), *fresh)
    assert f"--trust {first_key[1]}" in cli_refused("campaign", "import", str(exported), *fresh)
    assert "not a key fingerprint" in cli_refused("campaign", "import", str(exported), "--trust", "12ab", *fresh)
    imported = cli_ok("campaign", "import", str(exported), "--trust", first_key[1].upper().replace("-", ""), *fresh)
    assert "imported" in imported and "1 encounters, 2 characters, 1 rests" in imported
    assert f"signed by key {first_key[1]} (a key you trust (--trust), not this store's)" in imported
    for command in (["characters", "--json"], ["characters", "rg-pell", "--json"], ["encounters", "--json"]):
        assert json.loads(cli_ok(*command, *first)) == json.loads(cli_ok(*command, *fresh))
    audited = cli_ok("audit", "raid", "--verify", *fresh)
    assert "verified: seed matches its commitment" in audited
    # The fight's log keeps the first store's signatures, and says whose they are (docs/fairness.md).
    assert f"valid, covering v1-v" in audited and f"key {first_key[1]} (NOT this store's key" in audited
    assert cli_ok("seats", "raid", "--json", *first) != cli_ok("seats", "raid", "--json", *fresh)  # new tokens
    # And back: the fresh store's export, signed by its own key, imports into the first under another name.
    again = tmp_path / "again.firelane"
    fresh_key = re.search(r"signed by this store's key (\S+);", cli_ok("campaign", "export", "default", str(again), *fresh))
    assert fresh_key and fresh_key[1] != first_key[1]
    assert again.read_bytes().splitlines()[:-1] == exported.read_bytes().splitlines()[:-1]
    cli_ok("campaign", "import", str(again), "--as", "back", "--trust", fresh_key[1], *first)
    assert json.loads(cli_ok("characters", "--json", "--campaign", "back", *first))["characters"] == json.loads(
        cli_ok("characters", "--json", *first))["characters"]

    # Bad input: one line, exit 2, nothing half done.
    assert "campaign 'default' already exists" in cli_refused("campaign", "import", str(exported), "--trust", first_key[1],
                                                          *fresh)
    broken = tmp_path / "broken.firelane"
    broken.write_bytes(exported.read_bytes().replace(b'"days":2', b'"days":20'))
    assert "the hash chain breaks here" in cli_refused("campaign", "import", str(broken), "--as", "other",
                                                   "--trust", first_key[1], *fresh)
    assert json.loads(cli_ok("characters", "--json", "--campaign", "other", *fresh))["characters"] == []
    assert "no character 'nobody' in campaign 'default'" in cli_refused("rest", "nobody", "--days", "1", *first)
    assert "--days must be a whole number of days from 1 to 3650" in cli_refused("rest", "rg-ives", "--days", "0", *first)
    assert "character 'rg-ives' already exists" in cli_refused("characters", "--create", str(characters), *first)
    bad_sheet = tmp_path / "bad.json"
    bad_sheet.write_text(json.dumps({"id": "zed", "system": "d100-zones", "sheet": {"hp": 0}}))
    assert "sheet field 'hp' must be at least 1" in cli_refused("characters", "--create", str(bad_sheet), *first)
    assert "not a firelane campaign export" in cli_refused("campaign", "verify", str(characters))
    assert "give an ENCOUNTER, or --downtime" in cli_refused("audit", *first)
    busy = raid_setup(tmp_path, "again.json")
    cli_ok("create", "second", "--setup", str(busy), *first)
    assert "is in encounter 'second', which has not ended" in cli_refused("create", "third", "--setup", str(busy), *first)
    assert "encounter second has not ended" in cli_refused("campaign", "export", "default", str(tmp_path / "x"), *first)
    assert not (tmp_path / "x").exists()


def test_the_api_shows_characters_and_their_history(tmp_path: Path) -> None:
    served = Served(tmp_path / "served")
    try:
        store = ["--data-dir", str(served.data_dir)]
        cli_ok("characters", "--create-demo", "d100-zones", "--side", "rangers", *store)
        cli_ok("run", "raid", "--setup", str(raid_setup(tmp_path)), "--quiet", *store)  # firelane serve runs it
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


def test_the_gm_adjusts_and_releases_characters_from_the_command_line(tmp_path: Path) -> None:
    store = ["--data-dir", str(tmp_path / "gm")]
    cli_ok("characters", "--create-demo", "rond6", "--side", "agents", *store)
    answer = cli_ok("character", "adjust", "vance", "--set", "fate_points=2", "--set", "name=Kell the Bold",
                "--add", "character_points=3", "--reason", "end of session", *store)
    assert answer.strip() == ("adjusted vance (Kell the Bold): renamed from Agent Vance to Kell the Bold; "
                              "character points from 2 to 5; fate points from 0 to 2; now ready")
    # --set values are JSON when they are JSON: a number, an object, a quoted string.
    cli_ok("character", "adjust", "okoro", "--set", 'reloads={"rifle": 3, "pistol": 2}', "--set", 'armor_name="plate"',
       "--reason", "resupplied", *store)
    okoro = json.loads(cli_ok("characters", "okoro", "--json", *store))
    assert okoro["character"]["sheet"]["reloads"] == {"rifle": 3, "pistol": 2}
    assert okoro["character"]["sheet"]["armor_name"] == "plate"
    assert okoro["history"][-1]["text"].startswith("adjusted by the GM (resupplied): ready; armor worn from")
    history = cli_ok("characters", "vance", *store)
    assert "adjusted by the GM (end of session): ready; renamed from Agent Vance to Kell the Bold" in history
    assert "Kell the Bold" in cli_ok("characters", *store)

    # Each refusal: one line, exit 2, nothing written.
    assert cli_refused("character", "adjust", "vance", "--set", "fate_points=-1", "--reason", "x", *store) == (
        "firelane: error: character 'vance': combatant 'vance': sheet field 'fate_points' must be at least 0 (got -1)")
    assert cli_refused("character", "adjust", "vance", "--add", "fate_points=lots", "--reason", "x", *store) == (
        "firelane: error: --add 'fate_points=lots': the amount must be a number")
    assert cli_refused("character", "adjust", "vance", "--set", "fate_points", "--reason", "x", *store) == (
        "firelane: error: --set 'fate_points': give FIELD=VALUE")
    assert cli_refused("character", "adjust", "vance", "--add", "fate_points=1", *store) == (
        "firelane: error: give a reason (--reason TEXT): it goes into the character's history")
    assert cli_refused("character", "adjust", "vance", "--reason", "x", *store).startswith("firelane: error: nothing to adjust")
    assert cli_refused("character", "adjust", "nobody", "--add", "fate_points=1", "--reason", "x", *store).startswith(
        "firelane: error: no character 'nobody' in campaign 'default' (known: ")

    # An encounter created and never run: busy, then released, and ended unplayed.
    setup = tmp_path / "raid.json"
    demo = msgspec.to_builtins(demo_setup("rond6"))
    heroes = [{"id": c["id"], "character": c["id"], "side": c["side"], "position": c["position"]}
              for c in demo["combatants"] if c["id"] in ("vance", "okoro")]
    foe = next(c for c in demo["combatants"] if c["side"] != "agents")
    setup.write_text(json.dumps({**demo, "combatants": heroes + [foe]}))
    cli_ok("create", "raid", "--setup", str(setup), *store)
    assert cli_refused("character", "adjust", "vance", "--add", "fate_points=1", "--reason", "x", *store) == (
        "firelane: error: 'vance' is in encounter 'raid', which has not ended: adjust it after the fight "
        "(one that never started can free it: firelane character release vance)")
    assert cli_refused("character", "release", "vance", *store) == (
        "firelane: error: give a reason (--reason TEXT): it goes into the character's history")
    answer = cli_ok("character", "release", "vance", "--reason", "we ran out of time", *store)
    assert answer.splitlines() == ["released vance from raid before it started: ready",
                                   "encounter raid was ended before its first turn; its seed is revealed"]
    assert cli_refused("character", "release", "vance", "--reason", "again", *store) == (
        "firelane: error: 'vance' is in no encounter: nothing to release it from")
    listing = json.loads(cli_ok("characters", "--json", *store))
    assert {c["id"]: c["engaged_in"] for c in listing["characters"]}["okoro"] == ""  # its aftermath freed it
    assert "raid" in cli_ok("encounters", *store) and "ended" in cli_ok("encounters", *store)
    cli_ok("campaign", "export", "default", str(tmp_path / "saga.firelane"), *store)  # nothing left unrevealed

    # The GM token: the same until renewed.
    token = cli_ok("campaign", "token", "--token-only", *store).strip()
    assert len(token) >= 32 and cli_ok("campaign", "token", "--token-only", *store).strip() == token
    assert cli_ok("campaign", "token", *store).splitlines() == [
        f"GM sign-in link: http://127.0.0.1:8740/workshop/default#gm={token}   (once firelane serve runs)",
        f"GM token (Authorization: Bearer, for scripts): {token}"]
    # The README shows the same two lines (with NAME and TOKEN for the campaign and its token).
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    workshop = readme[readme.index("## The GM's workshop\n"):]
    shown = workshop[workshop.index("```\n") + 4:workshop.index("\n```", workshop.index("```\n") + 4)].splitlines()
    printed = [line.removesuffix("   (once firelane serve runs)") for line in cli_ok("campaign", "token", *store).splitlines()]
    assert [line.replace("NAME", "default").replace("TOKEN", token) for line in shown] == printed
    renewed = cli_ok("campaign", "token", "--rotate", "--token-only", *store).strip()
    assert renewed != token and cli_ok("campaign", "token", "--token-only", *store).strip() == renewed


def test_the_api_adjusts_and_releases_characters_only_with_the_campaign_gm_token(tmp_path: Path) -> None:
    served = Served(tmp_path / "served")
    try:
        store = ["--data-dir", str(served.data_dir)]
        cli_ok("characters", "--create-demo", "d100-zones", "--side", "rangers", *store)
        token = cli_ok("campaign", "token", "--token-only", *store).strip()
        # A fight serve runs and that waits for its human players: Ives and Pell are in it.
        setup = json.loads(raid_setup(tmp_path).read_text())
        setup["combatants"] = [{**c, "policy": "human"} for c in setup["combatants"]]
        (tmp_path / "humans.json").write_text(json.dumps(setup))
        seats = json.loads(cli_ok("create", "raid", "--setup", str(tmp_path / "humans.json"), "--json", *store))["seats"]
        encounter_gm_token = next(row["token"] for row in seats if row["role"] == "gm")
        adjust_url = "/api/campaigns/default/characters/rg-moss/adjust"
        award = {"add": {"medicine": 5}, "set": {"name": "Moss the Medic"}, "reason": "field training",
                 "command_id": "train-1"}
        with httpx.Client(base_url=served.api, timeout=30) as http:
            def post(url: str, body: object, with_token: str | None = None) -> httpx.Response:
                headers = {"Authorization": f"Bearer {with_token}"} if with_token is not None else {}
                return http.post(url, json=body, headers=headers)

            answer = post(adjust_url, award)
            assert answer.status_code == 401 and answer.json()["error"] == (
                "this needs the campaign's GM token (Authorization: Bearer <token>; firelane campaign token --campaign default)")
            assert post(adjust_url, award, "not-the-token").json() == {"error": "this token is not the campaign's GM token"}
            assert post(adjust_url, award, encounter_gm_token).status_code == 403  # an encounter's GM seat is not the campaign's
            empty = post("/api/campaigns/empty/characters/rg-moss/adjust", award, token)
            assert empty.status_code == 403 and empty.json()["error"] == (
                "campaign 'empty' has no GM token yet: make one with firelane campaign token --campaign empty")
            moss = http.get("/api/campaigns/default/characters/rg-moss").json()
            assert moss["character"]["name"] == "Moss" and len(moss["history"]) == 1  # nothing written

            answer = post(adjust_url, award, token)
            assert answer.status_code == 200, answer.text
            event, character = answer.json()["event"], answer.json()["character"]
            assert (event["via"], event["reason"], event["name"]) == ("api", "field training", "Moss the Medic")
            assert character["sheet"]["medicine"] == moss["character"]["sheet"]["medicine"] + 5
            again = post(adjust_url, award, token)  # a retry with the same command id: applied once
            assert again.status_code == 200 and again.json()["event"] is None
            assert again.json()["character"]["sheet"]["medicine"] == character["sheet"]["medicine"]
            history = http.get("/api/campaigns/default/characters/rg-moss").json()["history"]
            assert [entry["type"] for entry in history] == ["CharacterCreated", "CharacterAdjusted"]
            assert history[1]["text"].startswith("adjusted by the GM (field training): ready; renamed from Moss to Moss the Medic")

            bad = post(adjust_url, {"set": {"hp": 0}, "reason": "x"}, token)
            assert bad.status_code == 400 and bad.json()["error"] == (
                "character 'rg-moss': combatant 'rg-moss': sheet field 'hp' must be at least 1 (got 0)")
            assert post(adjust_url, {"sett": {}, "reason": "x"}, token).status_code == 400
            assert post(adjust_url, {"add": {"medicine": 1}, "reason": "x", "command_id": "no way"}, token).status_code == 400
            assert post("/api/campaigns/default/characters/nobody/adjust", award, token).status_code == 404

            deadline = time.monotonic() + 30
            while http.get("/api/campaigns/default/encounters").json()["encounters"][0]["status"] != "running":
                assert time.monotonic() < deadline, "serve did not start the raid"
                time.sleep(0.1)
            busy = post("/api/campaigns/default/characters/rg-ives/adjust", {"add": {"medicine": 1}, "reason": "x"}, token)
            assert busy.status_code == 409 and busy.json()["error"].startswith(
                "'rg-ives' is in encounter 'raid', which has not ended: adjust it after the fight")
            release_url = "/api/campaigns/default/characters/rg-ives/release"
            assert post(release_url, {"reason": "x"}).status_code == 401
            under_way = post(release_url, {"reason": "bored"}, token)
            assert under_way.status_code == 400 and under_way.json()["error"] == (
                "encounter 'raid' is under way (round 1): a character leaves a fight with its aftermath; "
                "end it first (the GM's EndEncounter)")
            assert post(release_url, {"reason": "x", "extra": 1}, token).json() == {
                "error": "unknown field 'extra' (the release takes: reason)"}
            idle = post("/api/campaigns/default/characters/rg-moss/release", {"reason": "x"}, token)
            assert idle.status_code == 400 and idle.json()["error"] == "'rg-moss' is in no encounter: nothing to release it from"
    finally:
        code, stderr = served.stop()
        assert code == 0, stderr


def test_the_documented_campaign_example_runs_and_brings_its_characters_back(tmp_path: Path) -> None:
    """docs/campaigns.md's first commands as written (from the repository's root):
    the RonD6 demo's agents as characters, then docs/examples/rond6-raid.json naming them."""
    data = ["--data-dir", str(tmp_path / "data")]
    created = cli_ok("characters", "--create-demo", "rond6", "--side", "agents", *data)
    assert "created 4 characters in campaign default: vance, okoro, reyes, brandt" in created
    cli_ok("run", "raid", "--setup", "docs/examples/rond6-raid.json", "--seed", "doc", "--reproducible-dice", "--quiet", *data)
    listing = {line.split()[0]: line for line in cli_ok("characters", *data).splitlines()}
    assert sorted(listing) == ["brandt", "okoro", "reyes", "vance"]
    assert all(line.endswith("(1 fight, 0 rests)") for line in listing.values()), listing
    history = cli_ok("characters", "vance", *data)
    assert "enlisted in encounter raid" in history and "came back from raid" in history
