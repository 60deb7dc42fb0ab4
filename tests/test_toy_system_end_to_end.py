"""A rule system is one folder (issue 18): the toy (tests/toy_system/) is
registered by one line (``FIRELANE_PLUGINS=tests.toy_system``, which the CLI
helpers set) and works end to end with nothing else edited: create, run,
replay, audit, options, narration, the table page's view, sim and schema."""

from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path
from typing import Any

import msgspec
import pytest

from tests.cli_helpers import ENGINE_ENV, Served, firelane, serve_for_module
from tests.toy_system import demo_setup


def test_the_toy_is_registered_by_one_line_only() -> None:
    assert ENGINE_ENV["FIRELANE_PLUGINS"] == "tests.toy_system"
    assert "toy" not in Path(__file__).resolve().parents[1].joinpath("firelane", "engine", "registry.py").read_text()


def test_run_replay_and_audit_a_toy_fight(tmp_path: Path) -> None:
    data = ["--data-dir", str(tmp_path / "data")]
    ran = firelane("run", "toy-fight", "--demo-setup", "toy", *data)
    assert ran.returncode == 0, ran.stderr
    assert "Encounter over:" in ran.stdout and "Initiative" in ran.stdout
    replayed = firelane("replay", "toy-fight", *data)
    assert replayed.returncode == 0, replayed.stderr
    assert "Encounter Toy skirmish (toy) begins" in replayed.stdout  # the name from its sample data
    assert "Ann" in replayed.stdout and "Encounter over:" in replayed.stdout
    audited = firelane("audit", "toy-fight", "--verify", "--json", *data)
    assert audited.returncode == 0, audited.stderr
    rolls = json.loads(audited.stdout)
    assert rolls and {entry["roll"]["rule"] for entry in rolls} == {"TOY-1"}
    assert "seed matches its commitment" in audited.stderr and "all match" in audited.stderr, audited.stderr


def test_sim_and_schema_know_the_toy() -> None:
    simulated = firelane("sim", "--demo-setup", "toy", "--runs", "12", "--json")
    assert simulated.returncode == 0, simulated.stderr
    report = json.loads(simulated.stdout)
    assert report["runs"] == 12
    schema = firelane("schema", "--system", "toy")
    assert schema.returncode == 0, schema.stderr
    assert {"Strike", "Step"} <= set(json.loads(schema.stdout)["$defs"])


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    yield from serve_for_module(tmp_path_factory, "toy-serve")


def _get(url: str, token: str) -> dict[str, Any]:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())


def test_a_person_plays_the_toy_at_the_table(served: Served, tmp_path: Path) -> None:
    setup = msgspec.to_builtins(demo_setup())
    setup["combatants"][0]["policy"] = "human"  # Ann is played from the table
    path = tmp_path / "toy.json"
    path.write_text(json.dumps(setup))
    created = firelane("create", "toy-table", "--setup", str(path), "--data-dir", str(served.data_dir))
    assert created.returncode == 0, created.stderr
    seats = {s["seat"]: s for s in json.loads(firelane("seats", "toy-table", "--json", "--data-dir",
                                                        str(served.data_dir)).stdout)["seats"]}
    red = seats["red"]["token"]
    base = f"{served.api}/api/campaigns/default/encounters/toy-table"
    deadline = time.monotonic() + 30
    while True:  # the engine starts the fight and plays the AI until Ann is asked
        options = _get(f"{base}/options", red)
        ann = next((c for c in options.get("combatants") or [] if c["combatant"] == "a"), None)
        if ann is not None and (ann.get("its_turn") or ann.get("window")):
            break
        assert time.monotonic() < deadline, options
        time.sleep(0.2)
    view = _get(f"{base}/view?tail=50", red)
    assert view["system"] == "toy" and view["state"]["combatants"]["a"]["name"] == "Ann"
    assert view["extras"]["a"]["health"]["label"] == "hit points"
    assert view["labels"]["reactions"]["snap"] == "Snap shot"  # its words, from its folder
    assert view["lines"], "the page narrates the fight"
    options = _get(f"{base}/options", red)
    offered = [c for c in options["combatants"] if c["combatant"] == "a"][0]
    command = offered["end_turn"] if offered.get("its_turn") else offered["window"]["pass_command"]
    body = json.dumps({**command, "command_id": "ann-1"}).encode()
    request = urllib.request.Request(f"{base}/commands?wait=10", data=body, method="POST",
                                     headers={"Authorization": f"Bearer {red}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=20) as answer:
        answered = json.loads(answer.read())
    assert answered["rejected"] is False, answered


def test_the_narration_speaks_the_toys_own_sentences(monkeypatch: pytest.MonkeyPatch) -> None:
    from firelane.engine.registry import get_system
    from firelane.engine.simulate import run_headless
    from firelane.projections.narration import Narrator

    monkeypatch.setenv("FIRELANE_PLUGINS", "tests.toy_system")  # its one line
    system = get_system("toy")
    narrator = Narrator()
    lines = []
    for seed in (b"a" * 32, b"b" * 32, b"c" * 32):
        state = system.initial_state()
        for _command, events, _after in run_headless(system, demo_setup(), seed):
            for event in events:
                system.evolve(state, event)
                lines.append(narrator.line(state.version, event, state))
    reactions = [line for line in lines if "(TOY-2)" in line]
    assert reactions and all(("snaps a shot back" in line or "ducks" in line or "braces" in line) for line in reactions)
