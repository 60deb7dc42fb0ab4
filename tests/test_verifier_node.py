"""The page's verifier (firelane/web/assets/fairness.js, the very file the
browser loads) run by node on the demo fights of all four systems, played on
the live runtime with a signed log, and on a fight with a client seed: every
die recomputed and every signature checked, agreeing with the Python audit;
and on tampered copies, which it must fail, naming the entries. Skipped,
with the reason, where node is missing (CI installs it: .ci/run)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import msgspec
import pytest
import trio

from firelane.actors.fairness import raw_entry
from firelane.actors.policies import AIPolicy
from firelane.actors.runtime import run_encounter
from firelane.actors.sequencer import create_encounter
from firelane.engine.registry import demo_setup, get_system
from firelane.events.log import EventLog
from firelane.events.log_signing import LogSigner
from firelane.events.public_signing import SigningKey
from firelane.projections.audit import verify
from firelane.redisio import connect
from tests.cli_helpers import REPO
from tests.test_fairness import SERVER_KEY, play_with_a_rewind, play_with_client_seeds

NODE = shutil.which("node")
RUNNER = REPO / "tests" / "node" / "verify_log.mjs"
SYSTEMS = ["bolt-and-blade", "d100-degrees", "d100-zones", "rond6"]
CAMPAIGN = "fair"

pytestmark = pytest.mark.skipif(NODE is None, reason="node is needed to run the page's verifier")


def run_node(logs: list[dict], folder: Path) -> list[dict]:
    path = folder / "logs.json"
    path.write_text(json.dumps(logs))
    done = subprocess.run([NODE, str(RUNNER), str(path)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def as_log(encounter: str, stored, public_key: str) -> dict:
    return {"campaign": CAMPAIGN, "encounter": encounter, "publishedKey": public_key,
            "entries": [raw_entry(s.entry_id, s) for s in stored]}


@pytest.fixture(scope="module")
def fights(redis_server, tmp_path_factory) -> tuple[list[dict], list]:
    """The four demo fights, one with a client seed undone by a rewind and one with a client seed, each as the API's
    ``…/log`` hands it out, with the Python audit's report."""
    async def play() -> tuple[list[dict], list]:
        client = await connect(redis_server.url)
        try:
            key = SigningKey.generate()
            event_log = EventLog(client, CAMPAIGN, server_key=SERVER_KEY, signer=LogSigner(key))
            logs, reports = [], []
            for index, name in enumerate(SYSTEMS):
                encounter = f"demo-{index}"
                setup = demo_setup(name)
                await create_encounter(event_log, encounter, setup, f"verifier-{name}".encode().ljust(32, b"."))
                system = get_system(name)
                await run_encounter(event_log, encounter, system, {c.id: AIPolicy(system) for c in setup.combatants})
                stored = await event_log.read(encounter)
                logs.append(as_log(encounter, stored, key.public_key.hex()))
                reports.append(verify(stored, campaign=CAMPAIGN))
            stored = await play_with_a_rewind(event_log, "rewound")
            logs.append(as_log("rewound", stored, key.public_key.hex()))
            reports.append(verify(stored, campaign=CAMPAIGN))
            stored = await play_with_client_seeds(event_log, "with-client-seed")
            logs.append(as_log("with-client-seed", stored, key.public_key.hex()))
            reports.append(verify(stored, campaign=CAMPAIGN))
            return logs, reports
        finally:
            await client.aclose()

    return trio.run(play)


def test_the_pages_verifier_agrees_with_the_audit_on_every_demo_fight(fights, tmp_path: Path) -> None:
    logs, reports = fights
    summaries = run_node(logs, tmp_path)
    for log, report, summary in zip(logs, reports, summaries):
        assert report.ok and report.dice > 0, report.problems
        assert summary["ok"], (log["encounter"], summary["problems"][:5])
        assert summary["failing"] == [] and summary["commitmentOk"]
        assert (summary["dice"], summary["rolls"]) == (report.dice, report.rolls), log["encounter"]
        assert summary["signatures"] == report.signatures >= 1
        assert summary["signedThrough"] == log["entries"][-1]["n"] == report.signed_through
        assert summary["unsigned"] == ""
    assert summaries[-1]["clientSeeds"] == [{"version": reports[-1].client_seeds[0][0], "seat": "alice",
                                             "clientSeed": "alice's own"}]


def first_die_entry(log: dict) -> int:
    """The index of the first entry with a die in it (an attack, a test)."""
    for index, entry in enumerate(log["entries"]):
        body = json.loads(entry["d"])
        if '"dice":[[' in entry["d"] and body["type"] != "InitiativeRolled":
            return index
    raise AssertionError("no die in the fight")


def test_the_pages_verifier_fails_a_tampered_log_and_names_the_entries(fights, tmp_path: Path) -> None:
    logs, _reports = fights
    log = logs[0]
    index = first_die_entry(log)
    entries = log["entries"]
    version = entries[index]["n"]
    body = json.loads(entries[index]["d"])
    roll_path = next(k for k, v in body.items() if isinstance(v, dict) and v.get("dice"))
    die = body[roll_path]["dice"][0]
    die[1] = die[1] % die[0] + 1  # another face, as a server that fudged the roll would write it
    refaced = [*entries[:index], {**entries[index], "d": msgspec.json.encode(body).decode()}, *entries[index + 1:]]
    removed = [*entries[:index], *entries[index + 1:]]
    reordered = [*entries[:index], entries[index + 1], entries[index], *entries[index + 2:]]
    other_key = SigningKey.generate().public_key.hex()
    cases = [
        {**log, "entries": refaced},
        {**log, "entries": removed},
        {**log, "entries": reordered},
        {**log, "publishedKey": other_key},  # the log's key is not the one published at creation
        {**log, "encounter": "another"},  # the log passed off as another encounter's
    ]
    summaries = run_node(cases, tmp_path)
    for case, summary in zip(cases, summaries):
        assert not summary["ok"], summary
    assert version in summaries[0]["failing"]
    assert any(f"face {die[1]} but the seed gives" in p for p in summaries[0]["problems"])
    assert any("signature does not match" in p for p in summaries[0]["problems"])
    assert version in summaries[1]["failing"] or version + 1 in summaries[1]["failing"]
    assert version in summaries[2]["failing"]
    assert summaries[3]["failing"] == [1]
    assert summaries[4]["failing"]
