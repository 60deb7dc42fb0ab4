"""SIGINT, SIGTERM and SIGHUP stop a command cleanly at any moment: while it
loads, while its store starts the redis-server, while it serves or fights,
and while it stops (a second signal: at once). Each time: one line on stderr,
the documented exit code (serve 0, any other command 128 + the signal's
number), no traceback, and no process left behind (no redis-server of the data
dir, no worker), checked by the data dir's pid file and by ``pgrep -f`` on its
path. Real processes, real signals."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from firelane.redisio.datadir import DataDir
from firelane.redisio.server import pid_alive, request_sync
from tests.cli_helpers import ENGINE_ENV, REPO, Served, firelane, redis_servers_of

SIGNALS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]
SERVE_STOPPED = re.compile(r"firelane serve: stopped(?: before serving; nothing was running|"
                           r"(?: at once)?; \d+ running encounters? safe in the log, \d+ finished while serving)")
FIGHT = ["run", "long", "--demo-setup", "bolt-and-blade", "--pace", "0.5", "--quiet"]
HUMANS = {"system": "toy", "combatants": [
    {"id": "a", "name": "Ann", "side": "red", "position": [0, 0], "policy": "human"},
    {"id": "b", "name": "Bo", "side": "blue", "position": [3, 0], "policy": "human"}]}


def _start(*args: str) -> subprocess.Popen[str]:
    """The command as a user starts it (``python -m firelane``, as the console script runs it)."""
    return subprocess.Popen([sys.executable, "-m", "firelane", *args], env=ENGINE_ENV, cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def _left_behind(data: Path) -> list[str]:
    """Processes of the data dir still running: its redis-server (by pid file and
    working directory) and anything whose command line names the data dir."""
    left = [f"redis-server {pid}" for pid in redis_servers_of(data)]
    try:
        pid = int((data / "redis-server.pid").read_text())
    except (OSError, ValueError):
        pid = None
    if pid is not None and pid_alive(pid):
        left.append(f"pid file's {pid}")
    found = subprocess.run(["pgrep", "-f", str(data)], capture_output=True, text=True)
    left += [f"pgrep {line}" for line in found.stdout.split()]
    return left


def _stop_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines()
            if line.startswith(("firelane serve: stopped", "firelane: interrupted", "firelane: error"))]


def _expected_run_line(signum: int) -> re.Pattern[str]:
    name = signal.Signals(signum).name
    return re.compile(rf"firelane: interrupted \({name}\); nothing is lost: the log keeps every event"
                      r"(; resume with: firelane run ENCOUNTER)?")


def _check(code: int, stderr: str, command: str, signum: int, data: Path) -> None:
    assert "Traceback" not in stderr, stderr
    lines = _stop_lines(stderr)
    assert len(lines) == 1, stderr
    if command == "serve":
        assert code == 0 and SERVE_STOPPED.fullmatch(lines[0]), (code, stderr)
    else:
        assert code == 128 + signum and _expected_run_line(signum).fullmatch(lines[0]), (code, stderr)
    # Checked at once: the command returns only once nothing of its is left.
    assert _left_behind(data) == []


def _handles(pid: int, signum: int) -> bool:
    """Whether the process has a handler of its own for ``signum`` (/proc's SigCgt mask)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    mask = next(line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(int(mask, 16) & (1 << (signum - 1)))


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
@pytest.mark.parametrize("moment", ["first instant", "0.3 s", "1 s"])
@pytest.mark.parametrize("command", ["serve", "run"])
def test_a_signal_soon_after_the_start_stops_cleanly(tmp_path: Path, command: str, moment: str, signum: int) -> None:
    data = tmp_path / "data"
    args = ["serve", "--port", "0"] if command == "serve" else FIGHT
    process = _start(*args, "--data-dir", str(data))
    if moment == "first instant":
        # As soon as firelane's own code runs (before it imports anything
        # heavy): its handler of SIGHUP, the last it installs, is in place
        # (Python handles SIGINT from its own start, by a KeyboardInterrupt).
        # Sooner is Python's own start, which no program can answer.
        deadline = time.monotonic() + 30
        while not _handles(process.pid, signal.SIGHUP):
            assert process.poll() is None and time.monotonic() < deadline, "no handler was ever installed"
            time.sleep(0.0005)
    else:
        time.sleep(float(moment.split()[0]))
    process.send_signal(signum)
    _out, stderr = process.communicate(timeout=60)
    _check(process.returncode, stderr, command, signum, data)


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
@pytest.mark.parametrize("command", ["serve", "run"])
def test_a_signal_while_the_command_loads_stops_it_with_its_usual_line(tmp_path: Path, command: str,
                                                                       signum: int) -> None:
    data = tmp_path / "data"
    args = ["serve", "--port", "0"] if command == "serve" else FIGHT
    # -X importtime reports each module as its import ends: once msgspec is in,
    # the CLI itself is loading (sooner, the signal may land in Python's own
    # start, before any of firelane's code runs).
    process = subprocess.Popen([sys.executable, "-X", "importtime", "-m", "firelane", *args, "--data-dir", str(data)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=ENGINE_ENV, cwd=REPO)
    assert process.stderr is not None
    lines = []
    for line in process.stderr:
        lines.append(line)
        if line.startswith("import time:") and line.rsplit("|", 1)[-1].strip() == "msgspec":
            process.send_signal(signum)
            break
    lines += process.stderr.readlines()
    code = process.wait(timeout=60)
    stderr = "".join(line for line in lines if not line.startswith("import time:"))
    _check(code, stderr, command, signum, data)
    assert not data.exists(), "it went on past the signal (its data dir was made)"


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
@pytest.mark.parametrize("command", ["serve", "run"])
def test_a_signal_while_the_store_starts_its_redis_server_leaves_none(tmp_path: Path, command: str,
                                                                     signum: int) -> None:
    data = tmp_path / "data"
    args = ["serve", "--port", "0"] if command == "serve" else FIGHT
    process = _start(*args, "--data-dir", str(data))
    deadline = time.monotonic() + 60
    while not redis_servers_of(data):  # the server is starting (loading, opening its socket)
        assert process.poll() is None and time.monotonic() < deadline, "no redis-server was started"
        time.sleep(0.002)
    process.send_signal(signum)
    _out, stderr = process.communicate(timeout=60)
    _check(process.returncode, stderr, command, signum, data)


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_a_signal_while_serving_a_fight_stops_it_and_counts_the_fight(tmp_path: Path, signum: int) -> None:
    data = tmp_path / "data"
    setup = tmp_path / "humans.json"
    setup.write_text(json.dumps(HUMANS))
    served = Served(data)
    try:
        created = firelane("create", "held", "--setup", str(setup), "--data-dir", str(data), "--json")
        assert created.returncode == 0, created.stderr
        gm = next(seat["token"] for seat in json.loads(created.stdout)["seats"] if seat["seat"] == "gm")
        state = f"{served.api}/api/campaigns/default/encounters/held/state"
        deadline = time.monotonic() + 30
        while not (httpx.get(state, headers={"Authorization": f"Bearer {gm}"}).json()["state"] or {}).get("active"):
            assert time.monotonic() < deadline, "the fight never started"
            time.sleep(0.05)
    finally:
        code, stderr = served.stop(signum)
    _check(code, stderr, "serve", signum, data)
    assert "firelane serve: stopped; 1 running encounter safe in the log, 0 finished while serving" in stderr


@pytest.mark.parametrize("first, second", [(signal.SIGTERM, signal.SIGINT), (signal.SIGINT, signal.SIGINT),
                                           (signal.SIGHUP, signal.SIGTERM)],
                         ids=lambda s: signal.Signals(s).name)
def test_a_second_signal_while_stopping_stops_at_once_and_leaves_nothing(tmp_path: Path, first: int,
                                                                        second: int) -> None:
    data = tmp_path / "data"
    served = Served(data, "--workers", "2")
    workers = _children_named(served.process.pid, "--engine-only")
    assert len(workers) == 1
    deadline = time.monotonic() + 30
    while not any(host.endswith(f":{workers[0]}".encode())  # it runs: it beats as an engine host
                  for host in request_sync(str(data / "redis.sock"), "HKEYS", "firelane:{workers}:beat",
                                           password=DataDir(data).secrets().admin_password)):  # type: ignore[union-attr]
        assert time.monotonic() < deadline, "the worker never came up"
        time.sleep(0.05)
    # A worker that hangs: stopping, serve would wait up to 15 s for it to stop by itself.
    os.kill(workers[0], signal.SIGSTOP)
    began = time.monotonic()
    served.process.send_signal(first)
    time.sleep(0.5)
    assert served.process.poll() is None, "serve did not wait for its worker"
    served.process.send_signal(second)
    _out, err = served.process.communicate(timeout=60)
    waited = time.monotonic() - began
    code, stderr = served.process.returncode, "".join(served.stderr_lines) + err
    _check(code, stderr, "serve", first, data)
    assert "firelane serve: stopped at once;" in stderr
    assert waited < 12, f"the second signal did not cut the 15 s wait for the worker short ({waited:.1f} s)"
    assert not pid_alive(workers[0])  # killed: a stopped process dies of nothing else


def _children_named(pid: int, needle: str, count: int = 1) -> list[int]:
    """The children of ``pid`` whose command line holds ``needle``, once there are ``count`` of them."""
    deadline = time.monotonic() + 30
    while True:
        found = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                    command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                except (OSError, IndexError):
                    continue
                if parent == pid and needle in command:
                    found.append(int(entry.name))
        if len(found) >= count or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


@pytest.mark.parametrize("moment", ["first instant", "as it starts its workers", "0.3 s", "1 s", "serving"])
def test_ctrl_c_to_the_terminal_group_of_a_serve_with_workers_stops_all_with_one_line(tmp_path: Path,
                                                                                       moment: str) -> None:
    # A terminal's Ctrl-C reaches the whole foreground group: serve and the
    # workers it started, wherever each one is (a worker still loading too).
    data = tmp_path / "data"
    process = subprocess.Popen([sys.executable, "-m", "firelane", "serve", "--port", "0", "--workers", "3",
                                "--data-dir", str(data)], env=ENGINE_ENV, cwd=REPO, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, process_group=0)
    assert process.stderr is not None
    said = []
    if moment == "first instant":
        deadline = time.monotonic() + 30
        while not _handles(process.pid, signal.SIGHUP):
            assert process.poll() is None and time.monotonic() < deadline
            time.sleep(0.0005)
    elif moment in ("as it starts its workers", "serving"):
        while "API and table at" not in (line := process.stderr.readline()):  # the workers are started just before
            assert line, "serve stopped"
            said.append(line)
        said.append(line)
        if moment == "serving":
            assert len(_children_named(process.pid, "--engine-only", count=2)) == 2
            time.sleep(1.5)  # the workers are up
    else:
        time.sleep(float(moment.split()[0]))
    os.killpg(process.pid, signal.SIGINT)
    _out, err = process.communicate(timeout=60)
    _check(process.returncode, "".join(said) + err, "serve", signal.SIGINT, data)
