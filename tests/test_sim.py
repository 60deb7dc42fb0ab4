"""firelane sim: parallel runs give the serial report, the report's numbers
are what the fights' events say, and bad input gets one line and exit 2."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import msgspec
import pytest

from firelane.engine.registry import demo_setup, get_system
from firelane.engine.simulate import run_headless
from firelane.events.schemas import DamageDealt, EncounterEnded, ReactionClaimed, ReactionDenied
from firelane.cli.sim import build_report, plot, run_seed, simulate_parallel, simulate_serial, wilson_interval

REPO = Path(__file__).resolve().parent.parent
SYSTEM = "d100-degrees"  # the quickest demo fight


def firelane(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "firelane", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=REPO)


def test_wilson_interval_matches_the_textbook_values() -> None:
    low, high = wilson_interval(8, 10)
    assert (round(low, 4), round(high, 4)) == (0.4902, 0.9433)
    assert wilson_interval(0, 20)[0] == 0.0 and round(wilson_interval(0, 20)[1], 4) == 0.1611


def test_a_side_that_wins_every_fight_has_an_interval_ending_at_one_and_plots(tmp_path: Path) -> None:
    # The formula's upper bound at p = 1 is 1 only up to rounding (0.9999999999999999 at 10 trials).
    for trials in range(1, 300):
        low, high = wilson_interval(trials, trials)
        assert high == 1.0 and 0.0 < low < 1.0, trials
        assert wilson_interval(0, trials)[0] == 0.0
    setup = demo_setup(SYSTEM)
    side = setup.combatants[0].side
    sweep = [msgspec.structs.replace(r, winner=side, end_reason="last side standing")
             for r in simulate_serial(setup, 10, "sweep")]
    report = build_report(setup, "sweep", sweep)
    assert (report.sides[side].rate, report.sides[side].ci_high) == (1.0, 1.0)
    png = tmp_path / "sweep.png"
    plot(report, sweep, str(png))  # its error bars were negative: matplotlib refused them
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_more_workers_than_fights_start_one_per_fight() -> None:
    result = firelane("sim", "--demo-setup", SYSTEM, "--runs", "2", "--workers", "50", "--seed", "few")
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("2 fights in ") and result.stderr.strip().endswith(
        "s on 2 workers")


def test_twenty_runs_on_two_workers_give_the_serial_report() -> None:
    setup = demo_setup(SYSTEM)
    serial = simulate_serial(setup, 20, "same")
    parallel = simulate_parallel(setup, 20, "same", workers=2)
    assert parallel == serial
    assert build_report(setup, "same", parallel) == build_report(setup, "same", serial)
    assert build_report(setup, "other", simulate_serial(setup, 20, "other")) != build_report(setup, "same", serial)


def test_the_report_is_what_the_fights_events_say() -> None:
    setup = demo_setup(SYSTEM)
    system = get_system(SYSTEM)
    runs = 12
    report = build_report(setup, "direct", simulate_serial(setup, runs, "direct"))

    wins: dict[str, int] = {}
    rounds, dealt, taken, reactions = [], {}, {}, {}
    for run in range(runs):
        events, state = [], None
        for _command, batch, state in run_headless(system, setup, run_seed("direct", run)):
            events.extend(batch)
        rounds.append(state.round)
        ended = next(e for e in events if isinstance(e, EncounterEnded))
        if ended.winner:
            wins[ended.winner] = wins.get(ended.winner, 0) + 1
        for e in events:
            if isinstance(e, DamageDealt):
                dealt[e.source] = dealt.get(e.source, 0) + e.amount
                taken[e.target] = taken.get(e.target, 0) + e.amount
        claimed = [e.combatant for e in events if isinstance(e, ReactionClaimed)]
        denied = [e.combatant for e in events if isinstance(e, ReactionDenied)]
        for c in setup.combatants:
            reactions[c.id] = reactions.get(c.id, 0) + claimed.count(c.id) - denied.count(c.id)

    assert {side: r.wins for side, r in report.sides.items()} == {s: wins.get(s, 0) for s in report.sides}
    assert sum(r.wins for r in report.sides.values()) + sum(report.draws.values()) == runs
    assert report.rounds.mean == pytest.approx(sum(rounds) / runs)
    assert (report.rounds.min, report.rounds.max) == (min(rounds), max(rounds))
    for c in report.combatants:
        assert c.damage_dealt == pytest.approx(dealt.get(c.id, 0) / runs)
        assert c.damage_taken == pytest.approx(taken.get(c.id, 0) / runs)
        assert c.reactions_used == pytest.approx(reactions[c.id] / runs)
    assert sum(c.damage_taken for c in report.combatants) > 0 and sum(c.reactions_used for c in report.combatants) > 0
    side = next(iter(report.sides))
    assert (report.sides[side].ci_low, report.sides[side].ci_high) == wilson_interval(report.sides[side].wins, runs)


def test_the_cli_prints_the_report_as_json_and_draws_a_png(tmp_path: Path) -> None:
    png = tmp_path / "sim.png"
    result = firelane("sim", "--demo-setup", SYSTEM, "--runs", "16", "--workers", "2", "--seed", "cli",
                      "--json", "--plot", str(png))
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    setup = demo_setup(SYSTEM)
    expected = build_report(setup, "cli", simulate_serial(setup, 16, "cli"))
    assert report["runs"] == 16 and report["sides"] == {k: {"wins": v.wins, "rate": v.rate, "ci_low": v.ci_low,
                                                             "ci_high": v.ci_high} for k, v in expected.sides.items()}
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000
    example = firelane("sim", str(REPO / "docs" / "examples" / "bolt-and-blade-corridor.json"), "--runs", "2",
                       "--workers", "1", "--seed", "x")
    assert example.returncode == 0, example.stderr
    assert "Hab-block corridor (bolt-and-blade): 2 fights" in example.stdout


@pytest.mark.parametrize(
    ("content", "extra", "message"),
    [
        (None, [], "cannot read setup"),
        ("{not json", [], "is not JSON"),
        ('{"system": "bolt-and-blade", "combatants": 3}', [], "is not a valid EncounterSetup"),
        ('{"system": "chess", "combatants": []}', [], "unknown rule system 'chess'"),
        ('{"system": "d100-degrees", "combatants": []}', [], "the setup is refused: an encounter needs at least two combatants"),
        ("demo", ["--runs", "0"], "--runs must be at least 1"),
        ("demo", ["--workers", "0"], "--workers must be at least 1"),
        ("demo", ["--plot", "out.svg"], "--plot writes a PNG"),
    ],
)
def test_bad_input_gets_one_line_and_exit_2(tmp_path: Path, content, extra, message) -> None:
    if content == "demo":
        args = ["--demo-setup", SYSTEM]
    else:
        path = tmp_path / "setup.json"
        if content is not None:
            path.write_text(content)
        args = [str(path)]
    result = firelane("sim", *args, *extra)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("firelane: error: ") and message in lines[0], result.stderr


def descendants(pid: int) -> set[int]:
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            children = {int(c) for c in (task / "children").read_text().split()}
        except OSError:
            continue
        for child in children:
            found |= {child} | descendants(child)
    return found


def test_ctrl_c_prints_one_line_exits_130_and_leaves_no_worker() -> None:
    process = subprocess.Popen([sys.executable, "-m", "firelane", "sim", "--demo-setup", "bolt-and-blade",
                                "--runs", "100000", "--workers", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, cwd=REPO, start_new_session=True)
    deadline = time.monotonic() + 60
    workers: set[int] = set()
    while time.monotonic() < deadline and len(workers) < 2:
        time.sleep(0.2)
        workers = descendants(process.pid)
    workers = descendants(process.pid)
    assert len(workers) >= 2, "the workers never started"
    # The workers are fighting (past their imports: over a second of CPU each,
    # however loaded the machine), as when a person presses Ctrl-C mid-run.
    # (Two of the descendants are the workers; the others, such as
    # multiprocessing's resource tracker, stay idle.)
    busy_by = time.monotonic() + 60
    while time.monotonic() < busy_by and sum(_cpu_seconds(pid) >= 1.5 for pid in workers) < 2:
        time.sleep(0.2)
    deadline = time.monotonic() + 60
    os.killpg(process.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole foreground group
    _out, err = process.communicate(timeout=30)
    assert process.returncode == 130
    assert err.strip().splitlines() == ["firelane: sim interrupted; no report (the workers are stopped)"]
    left = workers
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = {pid for pid in workers if Path(f"/proc/{pid}").exists() and "Z" not in _state(pid)}
    assert left == set()


def _cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"


def _pool_workers(pid: int) -> set[int]:
    """The descendants of ``pid`` that are multiprocessing workers (past exec:
    their command line is spawn's, not the parent's copy)."""
    found = set()
    for child in descendants(pid):
        try:
            if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes():
                found.add(child)
        except OSError:
            continue
    return found


def test_ctrl_c_while_the_workers_are_still_starting_is_one_line_with_no_worker_traceback() -> None:
    # A terminal's Ctrl-C reaches every process of the foreground group,
    # workers still importing included; each used to print a KeyboardInterrupt
    # traceback (or, cut off from a parent that stopped halfway through
    # starting the pool, an EOFError). Pressed as soon as the first worker
    # exists (the second one not started yet), then a little later.
    for delay in (0.0, 0.0, 0.1, 0.3):
        process = subprocess.Popen([sys.executable, "-m", "firelane", "sim", "--demo-setup", SYSTEM,
                                    "--runs", "100000", "--workers", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True, cwd=REPO, start_new_session=True)
        deadline = time.monotonic() + 60
        workers: set[int] = set()
        while not workers and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.002)
            workers = _pool_workers(process.pid)
        assert workers, "no worker started"
        time.sleep(delay)
        workers |= _pool_workers(process.pid)
        os.killpg(process.pid, signal.SIGINT)
        _out, err = process.communicate(timeout=30)
        assert (process.returncode, err.strip().splitlines()) == (
            130, ["firelane: sim interrupted; no report (the workers are stopped)"]), (delay, err)
        left = workers
        while left and time.monotonic() < deadline:
            time.sleep(0.05)
            left = {pid for pid in workers if Path(f"/proc/{pid}").exists() and "Z" not in _state(pid)}
        assert left == set(), delay
