"""Crash safety: kill the engine process at random points of a seeded fight,
restart it, and the final log equals the uninterrupted run's — no event lost,
none duplicated.

The engine runs as a real subprocess (`firelane run ...`) against the test
harness's redis-server; it is killed with SIGKILL (no clean-up of any kind)
when the log reaches randomly chosen versions, then started again, until the
fight ends. The reference is the pure in-memory loop (`run_headless`), which
the live runtime must match event for event.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from firelane.engine.registry import demo_setup, get_system
from firelane.engine.simulate import run_headless
from firelane.events import codec
from firelane.events.log import EventLog
from firelane.frontends.cli import seed_from
from firelane.redisio import EmbeddedRedis, connect

REPO = Path(__file__).resolve().parent.parent
CAMPAIGN = "crash"


def engine_command(redis_url: str, encounter: str, system: str, seed_text: str, pace: float) -> list[str]:
    # Paced (the engine's players wait a moment before each command, each then
    # appended at once), so a kill can land between any two commands: unpaced,
    # a short fight is written in two or three appends, faster than the kill.
    return [sys.executable, "-m", "firelane.frontends.cli", "run", encounter, "--demo-setup", system,
            "--seed", seed_text, "--reproducible-dice", "--redis", redis_url, "--campaign", CAMPAIGN, "--quiet", "--no-color",
            "--pace", str(pace)]


def log_version(server: EmbeddedRedis, encounter: str) -> int:
    return int(server.command_sync("XLEN", f"firelane:{{{CAMPAIGN}}}:enc:{encounter}:log"))  # type: ignore[arg-type]


def run_with_kills(server: EmbeddedRedis, encounter: str, system: str, seed_text: str, kill_at: list[int],
                   pace: float) -> list[int]:
    """Run the engine, SIGKILLing it whenever the log reaches the next kill
    point; returns the versions the log actually had at each kill."""
    env = {**os.environ, "FIRELANE_PLUGINS": "tests.toy_system", "PYTHONPATH": str(REPO)}
    killed_at = []
    pending = sorted(kill_at)
    deadline = time.monotonic() + 120
    while True:
        process = subprocess.Popen(engine_command(server.url, encounter, system, seed_text, pace), env=env, cwd=REPO,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        while process.poll() is None and time.monotonic() < deadline:
            if pending and log_version(server, encounter) >= pending[0]:
                process.send_signal(signal.SIGKILL)
                process.wait()
                killed_at.append(log_version(server, encounter))
                while pending and pending[0] <= killed_at[-1]:
                    pending.pop(0)
                break
            time.sleep(0.002)
        else:
            out, err = process.communicate(timeout=30)
            assert process.returncode == 0, f"engine failed ({process.returncode}): {err.decode()[-2000:]}"
            return killed_at
        assert time.monotonic() < deadline, "the fight did not finish in 120 s"


async def stored_events(redis_url: str, encounter: str):
    client = await connect(redis_url)
    try:
        return await EventLog(client, CAMPAIGN).read(encounter)
    finally:
        await client.aclose()


@pytest.mark.parametrize("system", ["toy", "bolt-and-blade", "d100-degrees", "d100-zones", "rond6"])
@pytest.mark.parametrize("run", range(2))
async def test_killed_engine_restarts_to_the_same_log(system: str, run: int, redis_server: EmbeddedRedis, redis_url: str) -> None:
    import trio

    seed_text = f"crash-{system}-{run}"
    os.environ.setdefault("FIRELANE_PLUGINS", "tests.toy_system")
    rule_system = get_system(system)
    setup = demo_setup(system)
    reference = [e for _c, events, _s in run_headless(rule_system, setup, seed_from(seed_text), encounter=f"e{run}",
                                                                reproducible_dice=True)
                 for e in events]
    rng = random.Random(seed_text)
    kill_points = sorted(rng.sample(range(1, len(reference)), k=min(4, len(reference) - 1)))
    killed_at = await trio.to_thread.run_sync(run_with_kills, redis_server, f"e{run}", system, seed_text, kill_points,
                                              0.001 + 0.003 * run)

    stored = await stored_events(redis_url, f"e{run}")
    live = [codec.decode_event(s) for s in stored]
    assert live == reference, f"log differs after kills at {killed_at}"
    assert [s.version for s in stored] == list(range(1, len(stored) + 1))
    assert any(v < len(reference) for v in killed_at), f"no kill landed mid-fight ({killed_at} of {len(reference)})"
