"""docs/examples/python_bot.py, a bot written from the README's Protocol
alone (standard library only), plays both player seats of the Bolt & Blade
table example against a real `firelane serve` to the fight's end."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator

import httpx
import pytest

from tests.cli_helpers import REPO, Served, firelane, serve_for_module

BOT = REPO / "docs" / "examples" / "python_bot.py"
SETUP = REPO / "docs" / "examples" / "bolt-and-blade-table.json"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    yield from serve_for_module(tmp_path_factory, "bot-serve")


def test_two_bots_play_the_table_example_to_its_end(served: Served) -> None:
    created = firelane("create", "bots", "--setup", str(SETUP), "--data-dir", str(served.data_dir))
    assert created.returncode == 0, created.stderr
    listed = firelane("seats", "bots", "--data-dir", str(served.data_dir), "--json")
    seats = {s["seat"]: s["token"] for s in json.loads(listed.stdout)["seats"]}
    bots = {name: subprocess.Popen([sys.executable, str(BOT), "--api", served.api, "--encounter", "bots",
                                    "--token", seats[name], "--timeout", "90"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for name in ("alice", "bruno")}
    summaries = {}
    for name, bot in bots.items():
        out, err = bot.communicate(timeout=120)
        assert bot.returncode == 0, (out, err)
        summaries[name] = json.loads(out.strip().splitlines()[-1])
    answer = httpx.get(f"{served.api}/api/campaigns/default/encounters/bots/events",
                       headers={"Authorization": f"Bearer {seats['spectator']}"}, timeout=20).json()
    events = answer["events"]
    ended = next(e for e in events if e["type"] == "EncounterEnded")
    for name, summary in summaries.items():
        assert summary["ok"] and summary["seat"] == name and summary["winner"] == ended["data"]["winner"]
        assert summary["commands"] > 0 and summary["rejected"] == [], summary
        assert any(e["c"].startswith(f"{name}/bot-") for e in events)  # its commands answered under its seat
