"""The JavaScript frontend of docs/examples/js-frontend, written from the
README alone, run against a real `firelane serve`: it plays the Bolt & Blade
table example to its end over HTTP and the WebSocket (reconnecting mid-fight),
plays one seat with the GM skipping the other, and talks to Redis directly as
a seat's ACL user. Skipped, with the reason, where node or npm is missing or
its packages cannot be installed."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.cli_helpers import REPO, Served, firelane, serve_for_module

EXAMPLE = REPO / "docs" / "examples" / "js-frontend"
SETUP = REPO / "docs" / "examples" / "bolt-and-blade-table.json"
NODE, NPM = shutil.which("node"), shutil.which("npm")

pytestmark = pytest.mark.skipif(NODE is None or NPM is None, reason="node and npm are needed for the JavaScript example")


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example's scripts with their packages installed from the lock file, in a copy of their own."""
    folder = tmp_path_factory.mktemp("js-frontend")
    for name in ("package.json", "package-lock.json", "play.js", "redis.js"):
        shutil.copy(EXAMPLE / name, folder / name)
    try:
        installed = subprocess.run([NPM, "ci", "--no-audit", "--no-fund"], cwd=folder, capture_output=True,
                                   text=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.skip("npm ci did not finish in 120 s (no access to the npm registry?)")
    if installed.returncode != 0:
        pytest.skip(f"npm ci failed: {installed.stderr.strip().splitlines()[-1:]}")
    return folder


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    yield from serve_for_module(tmp_path_factory, "js-serve")


def seats_of(served: Served, encounter: str, folder: Path) -> Path:
    created = firelane("create", encounter, "--setup", str(SETUP), "--data-dir", str(served.data_dir))
    assert created.returncode == 0, created.stderr
    seats = firelane("seats", encounter, "--data-dir", str(served.data_dir), "--json")
    assert seats.returncode == 0, seats.stderr
    path = folder / f"{encounter}-seats.json"
    path.write_text(seats.stdout)
    return path


def node(folder: Path, script: str, *args: str) -> tuple[dict, str]:
    run = subprocess.run([NODE, script, *args], cwd=folder, capture_output=True, text=True, timeout=60)
    lines = run.stdout.strip().splitlines()
    assert lines, f"{script} printed nothing: {run.stderr}"
    summary = json.loads(lines[-1])
    assert run.returncode == (0 if summary["ok"] else 1), run.stderr
    return summary, run.stdout


def logged_events(served: Served, encounter: str, seats: Path) -> list[dict]:
    token = next(s["token"] for s in json.loads(seats.read_text())["seats"] if s["role"] == "spectator")
    answer = httpx.get(f"{served.api}/api/campaigns/default/encounters/{encounter}/events",
                       headers={"Authorization": f"Bearer {token}"}, timeout=20).json()
    return answer["events"]


def test_plays_both_player_seats_to_the_end_with_a_reconnect_mid_fight(served: Served, example: Path) -> None:
    seats = seats_of(served, "js-both", example)
    summary, out = node(example, "play.js", "--seats", str(seats), "--drop-at", "15,60", "--timeout", "45")
    assert summary["ok"] is True, out
    events = logged_events(served, "js-both", seats)
    assert events[-1]["type"] == "SeedRevealed" and "EncounterEnded" in [e["type"] for e in events]
    ended = next(e for e in events if e["type"] == "EncounterEnded")
    assert summary["winner"] == ended["data"]["winner"]
    # Cut twice mid-fight, each follower still saw every event once, in order.
    assert summary["reconnects"] == {"alice": 2, "bruno": 0}
    assert summary["followed"] == {"alice": len(events), "bruno": len(events)} and summary["version"] == len(events)
    assert "cutting the socket at n=15" in out and "cutting the socket at n=60" in out
    # Both seats played: their commands are in the log under their own seats, each answered.
    players = {e["c"].split("/")[0] for e in events if e["c"].split("/")[0] in ("alice", "bruno")}
    assert players == {"alice", "bruno"}
    assert summary["commands"] > 4 and summary["unanswered"] == 0 and summary["refused_on_purpose"] == 2
    refusals = [e["data"]["reason"] for e in events if e["type"] == "CommandRejected"]
    assert "seat 'alice' does not control 'vass' (it controls: kell)" in refusals
    assert any("was already used by seat 'alice' for another command" in r for r in refusals)
    assert "the same command again -> the first answer" in out


def test_plays_one_seat_while_the_gm_skips_the_seat_nobody_plays(served: Served, example: Path) -> None:
    seats = seats_of(served, "js-one", example)
    summary, out = node(example, "play.js", "--seats", str(seats), "--seat", "alice", "--gm-skip-after", "0.2",
                        "--timeout", "45")
    assert summary["ok"] is True, out
    assert summary["gm_skips"] > 0
    events = logged_events(served, "js-one", seats)
    assert any(e["type"] == "GMRuled" and e["c"].startswith("gm/") for e in events)
    assert not any(e["c"].startswith("bruno/") for e in events)  # Bruno never sent a thing
    assert summary["followed"] == {"alice": len(events)}


def test_talks_to_redis_as_a_seat_and_meets_noperm_elsewhere(served: Served, example: Path) -> None:
    seats = seats_of(served, "js-redis", example)
    summary, out = node(example, "redis.js", "--seats", str(seats), "--seat", "alice")
    assert summary["ok"] is True, out
    assert summary["answer"], out  # its command was answered in the log, under its inbox entry
    events = logged_events(served, "js-redis", seats)
    answered = [e for e in events if e["k"] == f"inbox:alice:{summary['inbox_id']}"]
    assert [e["type"] for e in answered] == summary["answer"]
    for what in ("GET firelane:{default}:enc:js-redis:seed -> NOPERM",
                 "XADD firelane:{default}:enc:js-redis:log (the log itself) -> NOPERM",
                 "XADD firelane:{default}:enc:js-redis:inbox:bruno (seat bruno's inbox) -> NOPERM",
                 "XRANGE firelane:{default}:enc:js-redis:inbox:bruno -> NOPERM"):
        assert what in out, out
