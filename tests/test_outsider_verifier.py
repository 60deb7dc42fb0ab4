"""docs/examples/verify_fight.py, a verifier written from docs/fairness.md
alone (standard library and `cryptography`, no firelane import), run as a
subprocess on the four systems' demo fights, a fight with a client seed, a
rewound fight and tampered copies: it must agree with `firelane audit
--verify` (projections.audit.verify) exactly — the same rolls and dice, the
same signatures, the same failing versions."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest
import trio

from firelane.actors.fairness import raw_entry
from firelane.actors.policies import AIPolicy
from firelane.actors.runtime import run_encounter
from firelane.actors.sequencer import create_encounter
from firelane.engine.registry import demo_setup, get_system
from firelane.events.envelope import StoredEvent
from firelane.events.log import EventLog
from firelane.events.log_signing import LogSigner
from firelane.events.public_signing import SigningKey
from firelane.projections.audit import verify
from firelane.redisio import connect
from tests.cli_helpers import REPO
from tests.test_fairness import SERVER_KEY, play_with_a_rewind, play_with_client_seeds

VERIFIER = REPO / "docs" / "examples" / "verify_fight.py"
SYSTEMS = ["bolt-and-blade", "d100-degrees", "d100-zones", "rond6"]
CAMPAIGN = "outsider"


def run_verifier(log: dict, folder: Path) -> tuple[int, dict]:
    path = folder / f"{log['encounter']}.json"
    path.write_text(json.dumps(log))
    done = subprocess.run([sys.executable, str(VERIFIER), str(path), "--json"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


def as_log(encounter: str, stored, public_key: str) -> dict:
    """As `GET …/log` answers (every page's entries), with `…/signing-key`'s key."""
    return {"campaign": CAMPAIGN, "encounter": encounter, "version": stored[-1].version,
            "entries": [raw_entry(s.entry_id, s) for s in stored], "public_key": public_key}


def failing_versions(problems: list[str], entries: list[dict]) -> list[int]:
    """The versions the audit names: `v12 AttackResolved…: …` names 12, a group's `signature: v3-v9: …` its
    last, 9, and `log entry <id>: …` the version of that entry."""
    version_of = {entry["id"]: entry["n"] for entry in entries}
    versions = set()
    for problem in problems:
        named = re.match(r"(?:signature: )?v(\d+)(?:-v(\d+))?", problem)
        if named:
            versions.add(int(named[2] or named[1]))
        elif problem.startswith("log entry "):
            entry_id, what = problem.removeprefix("log entry ").split(": ", 1)
            span = re.match(r"v(\d+)(?:-v(\d+))?", what)
            versions.update(range(int(span[1]), int(span[2] or span[1]) + 1) if span else [version_of[entry_id]])
    return sorted(versions)


@pytest.fixture(scope="module")
def fights(redis_server) -> list[tuple[dict, list]]:
    async def play() -> list[tuple[dict, list]]:
        client = await connect(redis_server.url)
        try:
            key = SigningKey.generate()
            event_log = EventLog(client, CAMPAIGN, server_key=SERVER_KEY, signer=LogSigner(key))
            public_key = key.public_key.hex()
            played = []
            for index, name in enumerate(SYSTEMS):
                encounter = f"demo-{index}"
                setup = demo_setup(name)
                await create_encounter(event_log, encounter, setup, f"outsider-{name}".encode().ljust(32, b"."))
                system = get_system(name)
                await run_encounter(event_log, encounter, system, {c.id: AIPolicy(system) for c in setup.combatants})
                played.append((encounter, await event_log.read(encounter)))
            played.append(("rewound", await play_with_a_rewind(event_log, "rewound")))
            played.append(("with-client-seed", await play_with_client_seeds(event_log, "with-client-seed")))
            return [(as_log(encounter, stored, public_key), stored) for encounter, stored in played]
        finally:
            await client.aclose()

    return trio.run(play)


def test_the_outsiders_verifier_agrees_with_the_audit_on_every_fight(fights, tmp_path: Path) -> None:
    for log, stored in fights:
        report = verify(stored, campaign=CAMPAIGN)
        status, summary = run_verifier(log, tmp_path)
        assert report.ok and report.dice > 0, report.problems
        assert status == 0 and summary["ok"], (log["encounter"], summary["problems"][:5])
        assert (summary["rolls"], summary["dice"]) == (report.rolls, report.dice), log["encounter"]
        assert (summary["signatures"], summary["signed_through"]) == (report.signatures, report.signed_through)
        assert summary["signed_through"] == log["entries"][-1]["n"] and summary["unsigned"] == ""
        assert summary["client_seeds"] == [list(seed) for seed in report.client_seeds]
    assert fights[-1][0]["encounter"] == "with-client-seed" and fights[-1][1] and summary["client_seeds"]


def tampered(log: dict, stored: list, entries: list[dict]) -> tuple[dict, list]:
    """The log with these entries, and the same entries as the audit reads them from Redis."""
    by_id = {s.entry_id: s for s in stored}
    copies = []
    for entry in entries:
        original = by_id[entry["id"]]
        copies.append(msgspec.structs.replace(original, data=entry["d"].encode()) if entry["d"].encode() != original.data
                      else original)
    assert all(isinstance(c, StoredEvent) for c in copies)
    return {**log, "entries": entries}, copies


def test_the_outsiders_verifier_fails_tampered_logs_as_the_audit_does(fights, tmp_path: Path) -> None:
    log, stored = fights[0]
    entries = log["entries"]
    index = next(i for i, e in enumerate(entries) if '"dice":[[' in e["d"] and '"InitiativeRolled"' not in e["d"])
    body = json.loads(entries[index]["d"])
    roll = next(v for v in body.values() if isinstance(v, dict) and v.get("dice"))
    roll["dice"][0][1] = roll["dice"][0][1] % roll["dice"][0][0] + 1  # another face, as a fudging server would write
    refaced = [*entries[:index], {**entries[index], "d": json.dumps(body, separators=(",", ":"))}, *entries[index + 1:]]
    cases = [
        tampered(log, stored, refaced),
        tampered(log, stored, [*entries[:index], *entries[index + 1:]]),  # removed
        tampered(log, stored, [*entries[:index], entries[index + 1], entries[index], *entries[index + 2:]]),  # moved
    ]
    for case, copies in cases:
        report = verify(copies, campaign=CAMPAIGN)
        status, summary = run_verifier(case, tmp_path)
        assert status == 1 and not summary["ok"] and not report.ok
        assert summary["failing"] == failing_versions(report.problems, case["entries"]), (summary["problems"], report.problems)
    status, summary = run_verifier({**log, "public_key": SigningKey.generate().public_key.hex()}, tmp_path)
    assert status == 1 and summary["failing"] == [1]
    status, summary = run_verifier({**log, "encounter": "another"}, tmp_path)
    assert status == 1 and summary["failing"] and summary["signatures"] == 0
