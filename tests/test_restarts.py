"""Restarts: a serve killed with kill -9 is replaced at once (its registration,
and its engine host, are recognised as gone, a reused pid is not taken for
it), and the API answers 503 with one line while Redis is away. (Killing the
redis-server under a running fight: tests/test_crash_safety.py.)"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import httpx
import msgspec
import trio

from firelane.actors.store import SERVE_KEY, ServeInfo, Store
from firelane.web.app import Api, make_app
from firelane.redisio import RedisClient, connect
from firelane.redisio.datadir import DataDir, shared_server
from firelane.redisio.server import process_identity
from tests.cli_helpers import Served, firelane, redis_servers_of

HUMANS = {"system": "toy", "combatants": [
    {"id": "a", "name": "Ann", "side": "red", "position": [0, 0], "policy": "human"},
    {"id": "b", "name": "Bo", "side": "blue", "position": [3, 0], "policy": "human"}]}


def _lease_holder(data: Path, encounter: str) -> int | None:
    from firelane.redisio.server import request_sync

    raw = request_sync(str(data / "redis.sock"), "GET", f"firelane:{{default}}:enc:{encounter}:sequencer",
                       password=DataDir(data).secrets().admin_password)
    return int(raw.decode().split(":")[1]) if raw else None  # type: ignore[union-attr]


def _beating_hosts(data: Path) -> list[str]:
    from firelane.redisio.server import request_sync

    raw = request_sync(str(data / "redis.sock"), "HKEYS", "firelane:{workers}:beat",
                       password=DataDir(data).secrets().admin_password)
    return sorted(host.decode() for host in raw)  # type: ignore[union-attr]


def test_a_serve_killed_with_kill_9_is_replaced_at_once_and_its_fight_taken_over(tmp_path: Path) -> None:
    data = tmp_path / "data"
    setup = tmp_path / "humans.json"
    setup.write_text(json.dumps(HUMANS))
    first = Served(data)
    assert firelane("create", "held", "--setup", str(setup), "--data-dir", str(data)).returncode == 0
    deadline = time.monotonic() + 30
    while _lease_holder(data, "held") != first.process.pid:
        assert time.monotonic() < deadline, "serve never ran the fight"
        time.sleep(0.05)
    first.process.kill()  # no goodbye: its registration, heartbeat and lease stay in Redis
    # Not reaped yet, as a parent may leave it: a zombie is no running serve either.
    second = Served(data)  # on the first try: no "already served by another firelane serve"
    first.process.wait()
    try:
        assert "already served" not in "".join(second.stderr_lines)
        # Its engine host does not wait for the dead one's heartbeat to go stale.
        here = socket.gethostname()
        while f"{here}:{second.process.pid}" not in _beating_hosts(data):
            assert time.monotonic() < deadline, "the new serve's engine host never beat"
            time.sleep(0.02)
        assert f"{here}:{first.process.pid}" not in _beating_hosts(data)
        while _lease_holder(data, "held") != second.process.pid:
            assert time.monotonic() < deadline, "the new serve never took the fight over"
            time.sleep(0.05)
    finally:
        code, stderr = second.stop()
    assert code == 0, stderr
    assert "1 running encounter safe in the log" in stderr


async def _with_registration(data: Path, info: ServeInfo):  # noqa: ANN202
    """Start the data dir's server and leave ``info`` as serve's registration (for a minute)."""
    server = shared_server(data)
    shared = await server.__aenter__()
    client = await connect(shared.url)
    await client.execute("SET", SERVE_KEY, msgspec.json.encode(info), "PX", 60_000)
    await client.aclose()
    return server


async def test_a_registration_whose_pid_is_now_another_process_is_taken_over_and_a_live_one_refused(
        tmp_path: Path) -> None:
    data = tmp_path / "data"
    stranger = subprocess.Popen(["sleep", "60"])  # alive, on this host, and not a serve
    try:
        identity = process_identity(stranger.pid)
        boot, start = identity.split(":")
        # A serve that had this pid once (another start time): gone, whatever the pid shows.
        reused = ServeInfo(pid=stranger.pid, host=socket.gethostname(), api="http://127.0.0.1:1",
                           started=f"{boot}:{int(start) - 1000}")
        server = await _with_registration(data, reused)
        try:
            served = await trio.to_thread.run_sync(Served, data)
            code, stderr = await trio.to_thread.run_sync(served.stop)
            assert code == 0 and "already served" not in stderr, stderr
            # The one that runs as that very process (the same start): alive, so refused.
            live = ServeInfo(pid=stranger.pid, host=socket.gethostname(), api="http://127.0.0.1:1", started=identity)
            client = await connect(f"unix://:{DataDir(data).secrets().admin_password}@{data / 'redis.sock'}")
            await client.execute("SET", SERVE_KEY, msgspec.json.encode(live), "PX", 60_000)
            await client.aclose()
            refused = await trio.to_thread.run_sync(lambda: firelane("serve", "--data-dir", str(data), "--port", "0"))
            assert refused.returncode == 2
            assert refused.stderr.strip().splitlines() == [
                f"firelane: error: this store is already served by another firelane serve "
                f"(pid {stranger.pid} on {socket.gethostname()}, http://127.0.0.1:1)"]
        finally:
            await server.__aexit__(None, None, None)
    finally:
        stranger.kill()
        stranger.wait()
    assert not redis_servers_of(data)


async def test_the_api_answers_503_with_one_line_while_redis_is_away(tmp_path: Path) -> None:
    gone = RedisClient(f"unix://{tmp_path / 'nothing-here.sock'}")
    store = Store(client=gone, server_key=b"k" * 32, data_dir=DataDir(tmp_path), redis_display="test")
    async with trio.open_nursery() as nursery:
        app = make_app(Api(store, nursery))
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as http:
            roster = await http.get("/api/campaigns/default/encounters")
            seat = await http.get("/api/campaigns/default/encounters/e1/seat", headers={"Authorization": "Bearer x"})
        nursery.cancel_scope.cancel()
    for answer in (roster, seat):
        assert answer.status_code == 503
        assert answer.json() == {"error": "the store's Redis is not answering (it is being restarted); "
                                          "try again in a moment"}


def test_a_worker_whose_serve_is_killed_stops_by_itself(tmp_path: Path) -> None:
    data = tmp_path / "data"
    served = Served(data, "--workers", "2")
    deadline = time.monotonic() + 30
    workers: list[int] = []
    while len(workers) < 1:
        workers = [int(host.rsplit(":", 1)[1]) for host in _beating_hosts(data)
                   if int(host.rsplit(":", 1)[1]) != served.process.pid]
        assert time.monotonic() < deadline, "no worker came up"
        time.sleep(0.05)
    os.kill(served.process.pid, signal.SIGKILL)
    served.process.wait()
    while any(_running(pid) for pid in workers):
        assert time.monotonic() < deadline, "the worker of a killed serve ran on"
        time.sleep(0.1)
    # Nobody uses the store now; the next command on it is its last user and stops the server.
    assert firelane("encounters", "--data-dir", str(data)).returncode == 0
    assert not redis_servers_of(data)


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")
