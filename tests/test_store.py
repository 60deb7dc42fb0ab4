"""The campaign store on a data directory, as users run it: many commands at
once on one data dir, signals, the pinned binary, bad setups, durability."""

from __future__ import annotations

import json
import os
import signal
import socket
import time
from pathlib import Path

import httpx
import pytest
import trio

from firelane.events.envelope import NewEntry
from firelane.redisio import connect
from firelane.redisio.datadir import DataDir, StoreSettings, shared_server
from tests.cli_helpers import Served, firelane, redis_servers_of, spawn

HUMANS = {"system": "toy", "combatants": [
    {"id": "a", "name": "Ann", "side": "red", "position": [0, 0], "policy": "human"},
    {"id": "b", "name": "Bo", "side": "blue", "position": [3, 0], "policy": "human"}]}


def wait_until(predicate, timeout: float = 30, what: str = "the condition") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def test_twenty_runs_on_one_data_dir_share_one_server_and_killing_one_breaks_none(tmp_path: Path) -> None:
    data = tmp_path / "data"
    runs = [spawn("run", f"e{i}", "--demo-setup", "toy", "--seed", str(i), "--reproducible-dice", "--data-dir", str(data), "--quiet")
            for i in range(20)]
    try:
        wait_until(lambda: redis_servers_of(data), what="a redis-server")
        time.sleep(0.3)
        runs[0].kill()  # whichever process started the server, the others go on
        results = [run.communicate(timeout=240) for run in runs[1:]]
        codes = [run.returncode for run in runs[1:]]
    finally:
        for run in runs:
            if run.poll() is None:
                run.kill()
                run.communicate()
    assert codes == [0] * 19, [err for (_out, err), code in zip(results, codes) if code]
    assert all("winner:" in out for out, _err in results)
    assert len(redis_servers_of(data)) <= 1
    roster = firelane("encounters", "--data-dir", str(data))
    assert roster.returncode == 0
    assert sum(1 for line in roster.stdout.splitlines() if " ended " in line) >= 19
    # The last command out stops the server (a killed one may have left it up: the roster's run closed it).
    wait_until(lambda: not redis_servers_of(data), what="the redis-server to stop")


def test_serve_stops_on_sigterm_and_sigint_with_one_line_and_no_process_left(tmp_path: Path) -> None:
    for signum in (signal.SIGTERM, signal.SIGINT):
        data = tmp_path / f"data-{signum}"
        served = Served(data)
        assert redis_servers_of(data)
        code, stderr = served.stop(signum)
        assert code == 0, stderr
        assert "Traceback" not in stderr
        assert [line for line in stderr.splitlines() if "stopped" in line] == [
            "firelane serve: stopped; 0 running encounters safe in the log, 0 finished while serving"]
        wait_until(lambda: not redis_servers_of(data), what="the redis-server to stop")



def test_serve_stopping_mid_fight_counts_the_fight_safe_and_reports_no_engine_failure(tmp_path: Path) -> None:
    # Stopping cancels each encounter's engine: that is not a failure to report
    # ("engine failed; restarting"), and the fight it interrupts is one of the
    # "running encounters safe in the log".
    data = tmp_path / "data"
    setup = tmp_path / "humans.json"
    setup.write_text(json.dumps(HUMANS))
    served = Served(data)
    created = firelane("create", "waits", "--setup", str(setup), "--data-dir", str(data), "--json")
    assert created.returncode == 0, created.stderr
    gm = next(seat["token"] for seat in json.loads(created.stdout)["seats"] if seat["seat"] == "gm")
    deadline = time.monotonic() + 20
    state = f"{served.api}/api/campaigns/default/encounters/waits/state"
    while not (httpx.get(state, headers={"Authorization": f"Bearer {gm}"}).json()["state"] or {}).get("active"):
        assert time.monotonic() < deadline, "the fight never started"
        time.sleep(0.1)
    code, stderr = served.stop(signal.SIGINT)
    assert code == 0, stderr
    assert "engine failed" not in stderr
    assert [line for line in stderr.splitlines() if "stopped" in line] == [
        "firelane serve: stopped; 1 running encounter safe in the log, 0 finished while serving"]


def test_ctrl_c_on_a_command_prints_one_line_exits_130_and_leaves_nothing(tmp_path: Path) -> None:
    data = tmp_path / "data"
    setup = tmp_path / "humans.json"
    setup.write_text(json.dumps(HUMANS))
    run = spawn("run", "waits", "--setup", str(setup), "--data-dir", str(data), "--quiet")
    wait_until(lambda: "waits" in firelane("encounters", "--data-dir", str(data)).stdout, what="the encounter")
    run.send_signal(signal.SIGINT)
    _out, err = run.communicate(timeout=60)
    assert run.returncode == 130
    assert err.strip().splitlines()[-1].startswith("firelane: interrupted (SIGINT); nothing is lost")
    assert "Traceback" not in err
    wait_until(lambda: not redis_servers_of(data), what="the redis-server to stop")
    # SIGTERM too: the same clean exit (143).
    again = spawn("run", "waits", "--data-dir", str(data), "--quiet")
    wait_until(lambda: redis_servers_of(data), what="a redis-server")
    time.sleep(0.5)
    again.send_signal(signal.SIGTERM)
    _out, err = again.communicate(timeout=60)
    assert again.returncode == 143 and "Traceback" not in err
    wait_until(lambda: not redis_servers_of(data), what="the redis-server to stop")


def test_run_leaves_the_encounter_to_a_running_serve_and_a_relative_data_dir_finds_it(tmp_path: Path) -> None:
    served = Served(Path("rel-data"), cwd=tmp_path)
    try:
        run = firelane("run", "by-serve", "--demo-setup", "toy", "--data-dir", "./rel-data/", "--quiet", cwd=tmp_path)
        assert run.returncode == 0, run.stderr
        assert "firelane serve (pid" in run.stderr and "winner:" in run.stdout
        assert len(redis_servers_of(tmp_path / "rel-data")) == 1
    finally:
        code, stderr = served.stop()
    assert code == 0 and "1 finished while serving" in stderr


def test_a_data_dir_refuses_another_redis_version_than_the_one_it_was_made_with(tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = firelane("encounters", "--data-dir", str(data))
    assert first.returncode == 0, first.stderr
    pin = json.loads((data / "redis-server.json").read_text())
    assert pin["version"] and os.path.isfile(pin["path"])
    (data / "redis-server.json").write_text(json.dumps({**pin, "version": "6.2.99"}))
    refused = firelane("encounters", "--data-dir", str(data))
    assert refused.returncode == 2
    (line,) = refused.stderr.strip().splitlines()
    assert "was created with" in line and "6.2.99" in line and "FIRELANE_REDIS_SERVER" in line


BAD_SETUPS = {
    "off the map": ({"position": [30, 2]}, "combatants[1] (b).position: (30, 2) is outside the 24x16 map"),
    "in a wall": ({"position": [5, 5]}, "combatants[1] (b).position: (5, 5) is inside a wall"),
    "stacked": ({"position": [0, 0]}, "combatants[1] (b).position: (0, 0) is already taken by a"),
    "bad id": ({"id": "has space"}, "combatants[1].id: 'has space' must be 1-64 characters"),
    "reserved id": ({"id": "gm"}, "combatants[1].id: 'gm' is reserved"),
    "wrong type": ({"position": ["x", 1]}, "combatants[1].position[0]: Expected `int`, got `str`"),
}


@pytest.mark.parametrize("case", sorted(BAD_SETUPS))
def test_a_bad_setup_gets_one_line_naming_the_field_and_the_id_stays_free(tmp_path: Path, redis_url: str, case: str) -> None:
    change, message = BAD_SETUPS[case]
    setup = json.loads(json.dumps(HUMANS))
    setup["terrain"] = {"walls": [[5, 5]]}
    setup["combatants"][1].update(change)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(setup))
    result = firelane("create", "fresh", "--setup", str(path), "--redis", redis_url)
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert message in line, line
    good = tmp_path / "good.json"
    good.write_text(json.dumps(HUMANS))
    created = firelane("create", "fresh", "--setup", str(good), "--redis", redis_url)
    assert created.returncode == 0, created.stderr


def test_oversized_and_absurd_setups_are_refused_before_anything_is_stored(tmp_path: Path, redis_url: str) -> None:
    cases = {
        "deep": (b'{"system":"toy","combatants":[],"settings":{"x":' + b"[" * 100_000 + b"]" * 100_000 + b"}}",
                 "nests deeper than 64 levels"),
        "huge": (b'{"system":"toy","name":"' + b"n" * 2_000_000 + b'","combatants":[]}', "bytes; the limit is 1,048,576"),
        "negative map": (json.dumps({**HUMANS, "terrain": {"width": -3}}).encode(), "terrain.width: must be 1 to 500 squares (got -3)"),
        "many": (json.dumps({"system": "toy", "combatants": [
            {"id": f"c{i}", "name": f"C{i}", "side": "red" if i % 2 else "blue", "position": [i % 500, i // 500]}
            for i in range(1000)], "terrain": {"width": 500, "height": 10}}).encode(),
            "combatants: 1000 is more than the limit of 200"),
        "unknown system": (b'{"system":"chess","combatants":[]}', "unknown rule system 'chess'"),
        "not json": (b"{nope", "is not valid JSON"),
    }
    for name, (raw, message) in cases.items():
        path = tmp_path / f"{name}.json"
        path.write_bytes(raw)
        result = firelane("create", "kept-free", "--setup", str(path), "--redis", redis_url)
        assert result.returncode == 2, (name, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and message in lines[0], (name, lines)
    assert "no encounters yet" in firelane("encounters", "--redis", redis_url).stdout


async def test_with_appendfsync_always_killing_redis_loses_no_acknowledged_append(tmp_path: Path) -> None:
    data = DataDir(tmp_path / "data")
    data.save_settings(StoreSettings(appendfsync="always"))
    acknowledged = 0
    async with shared_server(data.path) as server:
        client = await connect(server.url)
        try:
            assert (await client.execute("CONFIG", "GET", "appendfsync"))[1] == b"always"
            from firelane.events.log import EventLog

            log = EventLog(client, "durable", server_key=bytes.fromhex(data.secrets().log_key))
            for i in range(200):
                await log.append("e", i, [NewEntry(type="Happened", schema=1, data=b'{"i":%d}' % i)], command_id=f"c{i}")
                acknowledged += 1
            pid = int((data.path / "redis-server.pid").read_text())
            os.kill(pid, signal.SIGKILL)  # no shutdown, no final flush
            with trio.fail_after(10):
                while os.path.exists(f"/proc/{pid}") and "zombie" not in _proc_state(pid):
                    await trio.sleep(0.02)
        finally:
            await client.aclose()
    async with shared_server(data.path) as server:
        client = await connect(server.url)
        try:
            log = EventLog(client, "durable", server_key=bytes.fromhex(data.secrets().log_key))
            assert [e.data for e in await log.read("e")] == [b'{"i":%d}' % i for i in range(acknowledged)]
        finally:
            await client.aclose()


def _proc_state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text().lower()
    except OSError:
        return "zombie"


def lease_holders(data: Path, encounters: list[str]) -> dict[str, int | None]:
    from firelane.redisio.datadir import DataDir
    from firelane.redisio.server import request_sync

    secrets = DataDir(data).secrets()
    holders: dict[str, int | None] = {}
    for encounter in encounters:
        raw = request_sync(str(data / "redis.sock"), "GET", f"firelane:{{default}}:enc:{encounter}:sequencer",
                           password=secrets.admin_password)
        holders[encounter] = int(raw.decode().split(":")[1]) if raw else None  # type: ignore[union-attr]
    return holders


def test_serve_spreads_encounters_over_its_workers_and_takes_over_those_of_a_dead_one(tmp_path: Path) -> None:
    data = tmp_path / "data"
    setup = tmp_path / "humans.json"
    setup.write_text(json.dumps(HUMANS))
    served = Served(data, "--workers", "2")
    try:
        encounters = [f"w{i}" for i in range(6)]
        for encounter in encounters:
            assert firelane("create", encounter, "--setup", str(setup), "--data-dir", str(data)).returncode == 0
        wait_until(lambda: None not in lease_holders(data, encounters).values(), what="every encounter to be run")
        holders = lease_holders(data, encounters)
        counts = {pid: list(holders.values()).count(pid) for pid in set(holders.values())}
        assert len(counts) == 2 and sorted(counts.values()) == [3, 3], counts
        worker = next(pid for pid in counts if pid != served.process.pid)
        os.kill(worker, signal.SIGKILL)
        # Its leases expire; the main process and the worker started in its place take its encounters over.
        wait_until(lambda: worker not in lease_holders(data, encounters).values()
                   and None not in lease_holders(data, encounters).values(), timeout=40, what="the take-over")
        assert set(lease_holders(data, encounters).values()) <= {served.process.pid} | set(_children(served.process.pid))

        # Whichever host took them over, the running fights are shared out again:
        # a host that runs two more than another hands fights to it.
        def balanced() -> bool:
            holders = lease_holders(data, encounters)
            counts = [list(holders.values()).count(pid) for pid in set(holders.values())]
            return None not in holders.values() and sorted(counts) == [3, 3]

        wait_until(balanced, timeout=40, what="the fights to be shared out again")
        assert worker not in lease_holders(data, encounters).values()
    finally:
        code, stderr = served.stop()
    assert code == 0 and "Traceback" not in stderr
    wait_until(lambda: not redis_servers_of(data), what="the redis-server to stop")


def test_a_worker_that_comes_back_is_handed_its_share_of_the_running_fights(tmp_path: Path) -> None:
    data = tmp_path / "data"
    setup = tmp_path / "humans.json"
    setup.write_text(json.dumps(HUMANS))
    served = Served(data, "--workers", "2")
    main = served.process.pid
    try:
        encounters = [f"back{i}" for i in range(6)]
        for encounter in encounters:
            assert firelane("create", encounter, "--setup", str(setup), "--data-dir", str(data)).returncode == 0
        wait_until(lambda: None not in lease_holders(data, encounters).values(), what="every fight to be run")
        (worker,) = set(lease_holders(data, encounters).values()) - {main}
        # The worker hangs (stopped, not dead: nobody starts another in its place);
        # its leases lapse and the main process takes every fight over.
        os.kill(worker, signal.SIGSTOP)
        try:
            wait_until(lambda: set(lease_holders(data, encounters).values()) == {main}, timeout=40,
                       what="the main process to run every fight")
            versions = {e: _version(data, e) for e in encounters}
        finally:
            os.kill(worker, signal.SIGCONT)
        # Back, it runs none; the main process runs two more than it, so hands fights over until they are even.
        wait_until(lambda: sorted(list(lease_holders(data, encounters).values()).count(pid)
                                  for pid in (main, worker)) == [3, 3],
                   timeout=40, what="the fights to be shared with the worker again")
        # A fight handed over goes on from its log: nothing rewritten, nothing lost.
        for encounter in encounters:
            assert _version(data, encounter) >= versions[encounter]
    finally:
        code, stderr = served.stop()
    assert code == 0 and "Traceback" not in stderr, stderr


def _version(data: Path, encounter: str) -> int:
    from firelane.redisio.datadir import DataDir
    from firelane.redisio.server import request_sync

    raw = request_sync(str(data / "redis.sock"), "GET", f"firelane:{{default}}:enc:{encounter}:version",
                       password=DataDir(data).secrets().admin_password)
    return int(raw) if raw else 0


def _children(pid: int) -> list[int]:
    children = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(stat[1]) == pid:
                children.append(int(entry.name))
    return children


def test_serve_stopped_mid_fight_counts_it_safe_and_reports_no_failure(tmp_path: Path) -> None:
    data = tmp_path / "data"
    setup = tmp_path / "humans.json"
    setup.write_text(json.dumps(HUMANS))
    served = Served(data)
    try:
        # Created while the server runs: it takes the encounter up at once.
        assert firelane("create", "held", "--setup", str(setup), "--data-dir", str(data)).returncode == 0
        wait_until(lambda: lease_holders(data, ["held"])["held"] == served.process.pid, what="serve to run it")
    finally:
        code, stderr = served.stop(signal.SIGINT)
    assert code == 0 and "Traceback" not in stderr
    # Stopping cancels the fight's tasks: that is not a failure to warn about, and the fight is counted.
    assert "engine failed" not in stderr, stderr
    assert [line for line in stderr.splitlines() if "serve: stopped" in line] == [
        "firelane serve: stopped; 1 running encounter safe in the log, 0 finished while serving"]


def _listening() -> socket.socket:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    return taken


def test_a_port_in_use_gets_one_line_and_a_refused_setting_is_not_kept(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with _listening() as taken:
        port = taken.getsockname()[1]
        http = firelane("serve", "--data-dir", str(data), "--port", str(port))
        assert http.returncode == 2 and "Traceback" not in http.stderr
        assert http.stderr.strip().splitlines() == [
            f"firelane: error: cannot serve HTTP on 127.0.0.1:{port}: Address already in use"]
        redis = firelane("serve", "--data-dir", str(data), "--port", "0", "--redis-port", str(port))
        assert redis.returncode == 2 and "Traceback" not in redis.stderr
        assert redis.stderr.strip().splitlines()[-1].startswith("firelane: error: the redis-server refused the settings")
        # Not kept in the data dir: the next start is not broken by it.
        assert DataDir(data).settings().redis_port is None
        again = firelane("encounters", "--data-dir", str(data))
        assert again.returncode == 0, again.stderr
        # A data dir whose redis-server cannot start says why at once, in one line.
        DataDir(data).save_settings(StoreSettings(redis_port=port))
        broken = firelane("encounters", "--data-dir", str(data))
    assert broken.returncode == 2
    (line,) = broken.stderr.strip().splitlines()
    assert line.startswith(f"firelane: error: the redis-server of {data.resolve()} exited as it started (code 1): ")
    assert f"Failed listening on port {port}" in line and "redis-server.log" in line
    assert not redis_servers_of(data)


def test_serve_refuses_more_workers_than_it_can_use(tmp_path: Path) -> None:
    result = firelane("serve", "--data-dir", str(tmp_path / "data"), "--workers", "65")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == ["firelane: error: --workers must be from 1 to 64, not 65"]
