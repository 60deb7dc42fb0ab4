"""Crash safety: kill the engine process at random points of a seeded fight,
restart it, and the final log equals the uninterrupted run's — no event lost,
none duplicated.

The engine runs as a real subprocess (`firelane run ...`) against the test
harness's redis-server; it is killed with SIGKILL (no clean-up of any kind)
when the log reaches randomly chosen versions, then started again, until the
fight ends. The reference is the pure in-memory loop (`run_headless`), which
the live runtime must match event for event.

And the store's redis-server killed under `firelane serve` (appendfsync
always): serve starts it again from its AOF, and the fight goes on to the same
log as the pure loop's, its human player answering through Redis throughout.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import msgspec
import pytest
import trio

from firelane.engine.registry import demo_setup, get_system
from firelane.engine.simulate import fallback_command, run_headless
from firelane.events import codec
from firelane.events.log import EventLog
from firelane.cli.common import seed_from
from firelane.events.schemas import EncounterSetup
from firelane.projections.audit import verify
from firelane.redisio import EmbeddedRedis, RedisConnectionError, RedisError, connect
from firelane.redisio.datadir import DataDir, shared_server
from tests.cli_helpers import Served, firelane, redis_servers_of

REPO = Path(__file__).resolve().parent.parent
CAMPAIGN = "crash"


def engine_command(redis_url: str, encounter: str, system: str, seed_text: str, pace: float) -> list[str]:
    # Paced (the engine's players wait a moment before each command, each then
    # appended at once), so a kill can land between any two commands: unpaced,
    # a short fight is written in two or three appends, faster than the kill.
    return [sys.executable, "-m", "firelane", "run", encounter, "--demo-setup", system,
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
    # The store's engine publishes its signing key in the start (tests/test_fairness.py checks it); the rest is the pure loop's.
    assert len(live[0].log_public_key) == 64  # type: ignore[attr-defined]
    reference[0] = msgspec.structs.replace(reference[0], log_public_key=live[0].log_public_key)  # type: ignore[attr-defined]
    assert live == reference, f"log differs after kills at {killed_at}"
    # Each restarted engine took up the open signed group from the log: every signature checks, to the end.
    signatures = verify(stored, campaign=CAMPAIGN)
    assert not [p for p in signatures.problems if p.startswith("signature")], signatures.problems
    assert signatures.signed_through == len(stored) and not signatures.unsigned
    assert [s.version for s in stored] == list(range(1, len(stored) + 1))
    assert any(v < len(reference) for v in killed_at), f"no kill landed mid-fight ({killed_at} of {len(reference)})"


DUEL = {"system": "toy", "combatants": [
    {"id": "a", "name": "Ann", "side": "red", "position": [0, 0], "policy": "human"},
    {"id": "b", "name": "Bo", "side": "blue", "position": [3, 0], "policy": "ai"}]}


def _player(state, combatant):  # noqa: ANN001, ANN202 - the pure loop's People
    """Ann's player: passes every window and ends every turn (the AI fights her)."""
    return fallback_command(state, combatant)


@pytest.mark.parametrize("run", range(2))
async def test_serve_restarts_its_killed_redis_server_and_the_fight_ends_as_the_pure_loop(run: int, tmp_path: Path) -> None:
    os.environ.setdefault("FIRELANE_PLUGINS", "tests.toy_system")
    system = get_system("toy")
    seed_text, encounter = f"redis-kill-{run}", "killed"
    steps = list(run_headless(system, msgspec.convert(DUEL, EncounterSetup), seed_from(seed_text), encounter=encounter,
                              people=_player, reproducible_dice=True))
    reference = [event for _command, events, _state in steps for event in events]
    # Where the log holds still until Ann's player answers: a kill there lands mid-fight for sure.
    waits, version = [], 0
    for command, events, _state in steps:
        if getattr(command, "actor", None) == "a" and version > 2:
            waits.append(version)
        version += len(events)
    kill_points = sorted(random.Random(seed_text).sample(sorted(set(waits)), k=2))
    data = tmp_path / "data"
    setup = tmp_path / "duel.json"
    setup.write_text(json.dumps(DUEL))
    served = Served(data, "--appendfsync", "always")  # nothing acknowledged may be lost
    killed_at: list[int] = []
    try:
        created = firelane("create", encounter, "--setup", str(setup), "--seed", seed_text, "--reproducible-dice",
                           "--campaign", CAMPAIGN,
                           "--data-dir", str(data), "--json")
        assert created.returncode == 0, created.stderr
        spectator = next(s["token"] for s in json.loads(created.stdout)["seats"] if s["role"] == "spectator")
        state_url = f"{served.api}/api/campaigns/{CAMPAIGN}/encounters/{encounter}/state"
        client = await connect(_admin_url(data))
        event_log = EventLog(client, CAMPAIGN)
        sent: set[str] = set()  # acknowledged (appendfsync always): durable, so never sent twice
        deadline = time.monotonic() + 120
        try:
            # Ann's player, through her seat's inbox; the redis-server killed
            # (kill -9) twice: while the fight waits for her, and right after
            # she answers (the engine at work); the player sends again only
            # what Redis did not take.
            while True:
                assert time.monotonic() < deadline, f"the fight did not finish (killed at {killed_at})"
                try:
                    stored = await event_log.read(encounter)
                except (RedisConnectionError, RedisError):
                    await trio.sleep(0.05)
                    continue
                state = system.initial_state()
                state.encounter = encounter
                for entry in stored:
                    system.evolve(state, codec.decode_event(entry))
                if state.seed_revealed:
                    break
                if kill_points and len(stored) >= kill_points[0] and len(kill_points) == 2:
                    await _kill_and_wait_for_the_restart(data, state_url, spectator, deadline)
                    killed_at.append(len(stored))
                    kill_points.pop(0)
                    continue
                awaited = (state.window.unanswered() if state.window is not None
                           else system.awaiting(state).combatants[:1] if state.started else [])
                for combatant in awaited:
                    if state.combatants[combatant].policy != "human":
                        continue
                    command = _player(state, combatant)
                    if command.command_id not in sent:
                        try:
                            await event_log.submit(encounter, codec.encode_command(command), seat="red")
                            sent.add(command.command_id)
                        except (RedisConnectionError, RedisError):
                            continue  # not taken: sent again next time round
                        if kill_points and len(stored) >= kill_points[0]:
                            # Taken: the engine is at work on it, and on the AI's answer to it.
                            await _kill_and_wait_for_the_restart(data, state_url, spectator, deadline)
                            killed_at.append(len(stored))
                            kill_points.pop(0)
                await trio.sleep(0.02)
        finally:
            await client.aclose()
    finally:
        code, stderr = served.stop()
    assert code == 0, stderr
    assert len(killed_at) == 2 and all(version < len(reference) for version in killed_at), killed_at
    assert stderr.count("restarted Redis") == 2, stderr
    assert "Traceback" not in stderr and "engine failed" not in stderr, stderr

    # Read back from the store as it was left, started again from its AOF.
    async with shared_server(data) as again:
        client = await connect(again.url)
        try:
            stored = await EventLog(client, CAMPAIGN).read(encounter)
        finally:
            await client.aclose()
    live = [codec.decode_event(s) for s in stored]
    assert len(live[0].log_public_key) == 64  # type: ignore[attr-defined]  (the store's signing key, published)
    reference[0] = msgspec.structs.replace(reference[0], log_public_key=live[0].log_public_key)  # type: ignore[attr-defined]
    assert live == reference
    assert [s.version for s in stored] == list(range(1, len(stored) + 1))


async def _kill_and_wait_for_the_restart(data: Path, state_url: str, token: str, deadline: float) -> None:
    pid = _redis_pid(data)
    os.kill(pid, signal.SIGKILL)
    # While it is down and restarting, the API answers (503, one line) and is never broken.
    answer = await trio.to_thread.run_sync(
        lambda: httpx.get(state_url, headers={"Authorization": f"Bearer {token}"}, timeout=30))
    assert answer.status_code in (200, 503), answer.text
    if answer.status_code == 503:
        assert list(answer.json()) == ["error"] and "\n" not in answer.json()["error"]
    while not [other for other in redis_servers_of(data) if other != pid]:
        assert time.monotonic() < deadline, "serve did not restart its redis-server"
        await trio.sleep(0.01)


def _admin_url(data: Path) -> str:
    return f"unix://:{DataDir(data).secrets().admin_password}@{data / 'redis.sock'}"


def _redis_pid(data: Path) -> int:
    return int((data / "redis-server.pid").read_text())
