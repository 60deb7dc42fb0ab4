"""Running the `firelane` CLI as a user does, in a subprocess."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
# With --redis URL the data dir still holds the key that signs the log: one per test session.
DATA_DIR = tempfile.mkdtemp(prefix="firelane-cli-tests-")
ENGINE_ENV = {**os.environ, "FIRELANE_PLUGINS": "tests.toy_system", "PYTHONPATH": str(REPO), "FIRELANE_DATA_DIR": DATA_DIR,
              "NO_COLOR": "1"}
FIRELANE = [sys.executable, "-m", "firelane"]


def firelane(*args: str, env_extra: dict[str, str] | None = None, timeout: float = 120,
             cwd: Path | str = REPO) -> subprocess.CompletedProcess[str]:
    env = {**ENGINE_ENV, **(env_extra or {})}
    return subprocess.run([*FIRELANE, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout)


def cli_ok(*args: str) -> str:
    """Run a command that must succeed; its standard output."""
    result = firelane(*args)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def cli_refused(*args: str) -> str:
    """Run a command that must be refused: exit code 2 and one line saying why (returned)."""
    result = firelane(*args)
    assert result.returncode == 2, result.stdout + result.stderr
    # (A command that starts the data dir's redis-server says so on the line before.)
    lines = [line for line in result.stderr.strip().splitlines() if not line.startswith("started Redis")]
    assert len(lines) == 1 and lines[0].startswith("firelane: error: "), result.stderr
    return lines[0]


# Two toy combatants people play (Ann is quick, so hers is the first turn).
TOY_HUMANS = {"system": "toy", "combatants": [
    {"id": "a", "name": "Ann", "side": "red", "position": [0, 0], "policy": "human", "sheet": {"speed": 9}},
    {"id": "b", "name": "Bo", "side": "blue", "position": [3, 0], "policy": "human"}]}


def create_seats(served: "Served", encounter: str, tmp_path: Path, setup: dict[str, Any] = TOY_HUMANS) -> dict[str, str]:
    """Create an encounter on a served store; each seat's token."""
    path = tmp_path / f"{encounter}.json"
    path.write_text(json.dumps(setup))
    result = firelane("create", encounter, "--setup", str(path), "--data-dir", str(served.data_dir), "--json")
    assert result.returncode == 0, result.stderr
    return {seat["seat"]: seat["token"] for seat in json.loads(result.stdout)["seats"]}


def spawn(*args: str, cwd: Path | str = REPO, env_extra: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen([*FIRELANE, *args], env={**ENGINE_ENV, **(env_extra or {})}, cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def redis_servers_of(data_dir: Path) -> list[int]:
    """PIDs of live redis-server processes working in ``data_dir`` (by their
    working directory: Redis rewrites its command line)."""
    wanted = Path(data_dir).resolve()
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if Path(os.readlink(entry / "cwd")) != wanted:
                continue
            name = (entry / "comm").read_text().strip()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if name.startswith(("redis-server", "valkey-server")) and state != "Z":
            pids.append(int(entry.name))
    return pids


class Served:
    """A `firelane serve` subprocess, started and waited for."""

    def __init__(self, data_dir: Path, *extra: str, cwd: Path | str = REPO) -> None:
        self.data_dir = Path(data_dir)
        self.process = spawn("serve", "--data-dir", str(data_dir), "--port", "0", *extra, cwd=cwd)
        self.stderr_lines: list[str] = []
        deadline = time.monotonic() + 60
        assert self.process.stderr is not None
        while True:
            line = self.process.stderr.readline()
            if not line:
                raise AssertionError(f"firelane serve stopped: {''.join(self.stderr_lines)}")
            self.stderr_lines.append(line)
            match = re.search(r"API and table at (http://\S+?)/ ", line)
            if match:
                self.api = match.group(1)
                break
            if time.monotonic() > deadline:
                raise AssertionError("firelane serve did not start")

    def stop(self, signum: int = signal.SIGTERM) -> tuple[int, str]:
        if self.process.poll() is None:
            self.process.send_signal(signum)
        _out, err = self.process.communicate(timeout=60)
        return self.process.returncode, "".join(self.stderr_lines) + err


def serve_for_module(tmp_path_factory: Any, name: str) -> Iterator[Served]:
    """A `firelane serve` on a fresh data dir for one test module (yield from
    it in a module-scoped fixture); it must stop cleanly at the end."""
    server = Served(tmp_path_factory.mktemp(name) / "data")
    try:
        yield server
    finally:
        code, stderr = server.stop()
        assert code == 0, stderr
