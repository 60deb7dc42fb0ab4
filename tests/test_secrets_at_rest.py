"""Secrets on disk: whoever made the data dir, it ends up this user's alone
(folders 700, files 600, what the redis-server rewrites too), and no seat
token or campaign GM token is in any file of it: Redis keeps their digests
(checks) and sealed copies (join links), never the tokens."""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

import httpx
import pytest

from firelane.actors.campaign import gm_token, gm_token_key, gm_token_matches
from firelane.actors.sequencer import create_encounter, seat_token_digests, seat_tokens, seats_key
from firelane.engine.registry import demo_setup, register_system
from firelane.events.log import EventLog
from firelane.events.tokens_at_rest import open_token, seal_token, token_digest
from firelane.redisio import connect
from firelane.redisio.datadir import DataDir
from firelane.redisio.server import request_sync
from tests.cli_helpers import Served, firelane, redis_servers_of
from tests.toy_system import TOY

register_system(TOY, "tests.toy_system")

HUMANS = {"system": "toy", "combatants": [
    {"id": "a", "name": "Ann", "side": "red", "position": [0, 0], "policy": "human"},
    {"id": "b", "name": "Bo", "side": "blue", "position": [3, 0], "policy": "human"}]}
KEY = b"s" * 32


def _admin(data: Path, *command: str | bytes) -> object:
    return request_sync(str(data / "redis.sock"), *command, password=DataDir(data).secrets().admin_password)


def _loose_modes(data: Path) -> list[str]:
    """Every path under ``data`` that is not private: a folder not 700, a file readable by others."""
    loose = []
    for path in [data, *data.rglob("*")]:
        try:
            info = path.lstat()
        except FileNotFoundError:
            continue  # rewritten meanwhile
        mode = stat.S_IMODE(info.st_mode)
        if (stat.S_ISDIR(info.st_mode) and mode != 0o700) or (not stat.S_ISDIR(info.st_mode) and mode & 0o077):
            loose.append(f"{path.relative_to(data.parent)} {mode:o}")
    return loose


def _files_holding(data: Path, secrets: list[str]) -> list[str]:
    found = []
    for path in data.rglob("*"):
        if path.is_file() and not path.is_socket():
            content = path.read_bytes()
            found += [f"{path.name} holds {secret[:6]}…" for secret in secrets if secret.encode() in content]
    return found


def _wait_for_aof_rewrite(data: Path) -> None:
    deadline = time.monotonic() + 30
    while True:
        info = _admin(data, "INFO", "persistence").decode()  # type: ignore[union-attr]
        if "aof_rewrite_in_progress:0" in info and "aof_rewrite_scheduled:0" in info:
            return
        assert time.monotonic() < deadline, "the AOF rewrite did not finish"
        time.sleep(0.05)


def _end_fight(served: Served, encounter: str, gm: str) -> None:
    base = f"{served.api}/api/campaigns/default/encounters/{encounter}"
    with httpx.Client(timeout=20, headers={"Authorization": f"Bearer {gm}"}) as http:
        deadline = time.monotonic() + 20
        while not (http.get(f"{base}/state").json()["state"] or {}).get("active"):
            assert time.monotonic() < deadline, "the fight never started"
            time.sleep(0.05)
        ended = http.post(f"{base}/commands", params={"wait": 10},
                          content=b'{"type":"EndEncounter","command_id":"end","actor":"gm","reason":"done"}').json()
        assert ended["rejected"] is False
        while not http.get(f"{base}/state").json()["state"]["seed_revealed"]:
            assert time.monotonic() < deadline, "the fight never ended"
            time.sleep(0.05)


def test_a_data_dir_made_755_under_umask_022_is_private_and_holds_no_token(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    os.chmod(data, 0o755)
    setup = tmp_path / "humans.json"
    setup.write_text(json.dumps(HUMANS))
    was = os.umask(0o022)  # inherited by every process below
    try:
        served = Served(data, "--appendfsync", "always")
        try:
            created = firelane("create", "duel", "--setup", str(setup), "--data-dir", str(data), "--json")
            assert created.returncode == 0, created.stderr
            tokens = {seat["seat"]: seat["token"] for seat in json.loads(created.stdout)["seats"]}
            campaign_gm = firelane("campaign", "token", "--token-only", "--data-dir", str(data))
            assert campaign_gm.returncode == 0, campaign_gm.stderr
            secrets = [*tokens.values(), campaign_gm.stdout.strip()]
            assert len(secrets) == 5 and all(len(secret) >= 24 for secret in secrets)
            _end_fight(served, "duel", tokens["gm"])
            # The seats' Redis users are saved (ACL SAVE rewrites users.acl), and
            # the AOF rewritten: what the redis-server writes later is private too.
            _admin(data, "BGREWRITEAOF")
            _wait_for_aof_rewrite(data)
            assert (data / "appendonlydir").is_dir() and (data / "users.acl").is_file()
            assert _loose_modes(data) == []  # while it runs: socket, pid file, log, locks...
            assert _files_holding(data, secrets) == []
        finally:
            code, stderr = served.stop()
        assert code == 0, stderr
    finally:
        os.umask(was)
    assert not redis_servers_of(data)
    assert _loose_modes(data) == []
    assert _files_holding(data, secrets) == []
    # ...and every token still opens its seat, and prints: join links need the clear token.
    seats = json.loads(firelane("seats", "duel", "--data-dir", str(data), "--json").stdout)["seats"]
    assert {seat["seat"]: seat["token"] for seat in seats} == tokens
    assert firelane("campaign", "token", "--token-only", "--data-dir", str(data)).stdout.strip() == secrets[-1]


def test_a_store_of_an_older_firelane_is_tightened_and_its_clear_tokens_sealed(tmp_path: Path) -> None:
    data = tmp_path / "data"
    setup = tmp_path / "humans.json"
    setup.write_text(json.dumps(HUMANS))
    assert firelane("create", "old", "--setup", str(setup), "--data-dir", str(data)).returncode == 0
    # As an older firelane left it: tokens in clear in Redis (so in the AOF), files 644, folders 755.
    clear_seat, clear_gm = "olderSeatToken0123456789", "olderGmToken0123456789abcdefghij"
    served = Served(data)
    try:
        _admin(data, "HSET", seats_key("default", "old"), "red", clear_seat)
        _admin(data, "SET", "firelane:{default}:campaign:gm_token", clear_gm)
        _admin(data, "DEL", "firelane:tokens-sealed")  # not yet migrated
    finally:
        code, stderr = served.stop()
    assert code == 0, stderr
    for path in [data, *data.rglob("*")]:
        if not path.is_socket():
            os.chmod(path, 0o755 if path.is_dir() else 0o644)
    assert _files_holding(data, [clear_seat, clear_gm]), "the older store's AOF should hold the clear tokens"
    assert _loose_modes(data)

    served = Served(data)
    try:
        assert _loose_modes(data) == []
        base = f"{served.api}/api/campaigns/default"
        with httpx.Client(timeout=10) as http:
            # The old tokens go on working: the seat's, and the campaign GM's
            # (past the token check, the unknown character is what is refused).
            seat = http.get(f"{base}/encounters/old/seat", headers={"Authorization": f"Bearer {clear_seat}"})
            assert seat.status_code == 200 and seat.json()["seat"]["id"] == "red"
            award = {"add": {"character_points": 1}, "reason": "test"}
            wrong = http.post(f"{base}/characters/nobody/adjust", json=award, headers={"Authorization": "Bearer nope"})
            right = http.post(f"{base}/characters/nobody/adjust", json=award,
                              headers={"Authorization": f"Bearer {clear_gm}"})
            assert wrong.status_code == 403 and right.status_code not in (401, 403), right.text
        _wait_for_aof_rewrite(data)
        assert _files_holding(data, [clear_seat, clear_gm]) == []
        stored = _admin(data, "HGET", seats_key("default", "old"), "red")
        assert isinstance(stored, bytes) and clear_seat.encode() not in stored
    finally:
        code, stderr = served.stop()
    assert code == 0, stderr
    seats = json.loads(firelane("seats", "old", "--data-dir", str(data), "--json").stdout)["seats"]
    assert next(seat["token"] for seat in seats if seat["seat"] == "red") == clear_seat
    assert _files_holding(data, [clear_seat, clear_gm]) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a directory to another user needs root")
def test_a_data_dir_of_another_user_is_refused_with_one_line(tmp_path: Path) -> None:
    data = tmp_path / "theirs"
    data.mkdir()
    os.chown(data, 65534, 65534)
    refused = firelane("encounters", "--data-dir", str(data))
    assert refused.returncode == 2
    (line,) = refused.stderr.strip().splitlines()
    assert line.startswith(f"firelane: error: {data} belongs to another user (uid 65534)"), line
    assert list(data.iterdir()) == []  # nothing written there
    # One file of another user inside one's own data dir is refused too.
    mine = tmp_path / "mine"
    assert firelane("encounters", "--data-dir", str(mine)).returncode == 0
    os.chown(mine / "secrets.json", 65534, 65534)
    refused = firelane("encounters", "--data-dir", str(mine))
    assert refused.returncode == 2 and "belongs to another user" in refused.stderr.strip().splitlines()[0]


# -- the tokens at rest, in the store -----------------------------------------------------


async def _event_log(redis_url: str, server_key: bytes | None = KEY) -> EventLog:
    return EventLog(await connect(redis_url), "rest", server_key=server_key)


def test_a_sealed_token_holds_only_its_digest_and_opens_only_where_it_was_kept() -> None:
    token = "seatTokenABCDEFGHIJKLMNOP"
    stored = seal_token(KEY, "rest", "where/red", token)
    assert token.encode() not in stored and token_digest(token).encode() in stored
    assert open_token(KEY, "rest", "where/red", stored).token == token
    moved = open_token(KEY, "rest", "where/gm", stored)  # copied to another seat: checks its digest, does not open
    assert moved.token is None and moved.matches(token)
    assert open_token(b"o" * 32, "rest", "where/red", stored).token is None  # another store's key
    assert open_token(KEY, "other", "where/red", stored).token is None  # another campaign's
    keyless = seal_token(None, "rest", "where/red", token)
    assert token.encode() not in keyless and open_token(None, "rest", "where/red", keyless).matches(token)


async def test_seat_tokens_are_kept_sealed_and_an_older_clear_one_is_sealed_in_place(redis_url: str) -> None:
    event_log = await _event_log(redis_url)
    try:
        await create_encounter(event_log, "kept", demo_setup("toy"), b"k" * 32)
        tokens = await seat_tokens(event_log, "kept")
        raw = await event_log.client.execute("HGETALL", seats_key("rest", "kept"))
        assert raw and all(token.encode() not in b"".join(raw) for token in tokens.values())
        assert await seat_token_digests(event_log, "kept") == {s: token_digest(t) for s, t in tokens.items()}
        # An older firelane's clear token: still works, and is sealed when read.
        await event_log.client.execute("HSET", seats_key("rest", "kept"), "gm", "clearGmSeatToken012345678")
        assert (await seat_tokens(event_log, "kept"))["gm"] == "clearGmSeatToken012345678"
        assert b"clearGmSeatToken012345678" not in await event_log.client.execute("HGET", seats_key("rest", "kept"), "gm")
        assert (await seat_token_digests(event_log, "kept"))["gm"] == token_digest("clearGmSeatToken012345678")
        # Opened without the store's secret: the digests (checks), not the tokens.
        keyless = EventLog(event_log.client, "rest")
        assert await seat_token_digests(keyless, "kept") == await seat_token_digests(event_log, "kept")
        assert await seat_tokens(keyless, "kept") == {}
    finally:
        await event_log.client.aclose()


async def test_the_campaign_gm_token_is_kept_sealed_and_an_older_clear_one_still_matches(redis_url: str) -> None:
    event_log = await _event_log(redis_url)
    try:
        token = await gm_token(event_log)
        stored = await event_log.client.execute("GET", gm_token_key(event_log))
        assert token.encode() not in stored and await gm_token(event_log) == token
        assert await gm_token_matches(event_log, token) is True and await gm_token_matches(event_log, token[:-1]) is False
        await event_log.client.execute("SET", gm_token_key(event_log), "olderClearGmToken0123456789abcdef")
        assert await gm_token_matches(event_log, "olderClearGmToken0123456789abcdef") is True
        assert b"olderClearGmToken" not in await event_log.client.execute("GET", gm_token_key(event_log))
        assert await gm_token(event_log) == "olderClearGmToken0123456789abcdef"
        # Opened without the store's secret, it can be checked, not shown.
        keyless = EventLog(event_log.client, "rest")
        assert await gm_token_matches(keyless, "olderClearGmToken0123456789abcdef") is True
        with pytest.raises(LookupError, match="cannot be shown here"):
            await gm_token(keyless)
    finally:
        await event_log.client.aclose()


def test_securing_leaves_files_firelane_did_not_write_as_they_are(tmp_path: Path) -> None:
    # A data dir given by mistake (a home directory, a project) loses no one's
    # access to files that are not the store's; the store's own are tightened.
    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    os.chmod(data, 0o755)
    notes = data / "notes.txt"
    notes.write_text("mine")
    os.chmod(notes, 0o644)
    assert firelane("encounters", "--data-dir", str(data)).returncode == 0
    assert stat.S_IMODE(notes.stat().st_mode) == 0o644
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    assert [line for line in _loose_modes(data) if "notes.txt" not in line] == []
