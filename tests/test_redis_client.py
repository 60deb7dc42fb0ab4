"""The trio Redis client and the embedded server, against a real redis-server."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import trio

from firelane.redisio import (
    EmbeddedRedis,
    RedisAddress,
    RedisClient,
    RedisConnectionError,
    RedisError,
    RedisServerError,
    RedisServerNotFound,
    connect,
    find_redis_server,
    is_blocking_command,
)


async def _clients_named(client: RedisClient, name: str) -> int:
    listing: bytes = await client.execute("CLIENT", "LIST")
    return sum(1 for line in listing.decode().splitlines() if f" name={name} " in f" {line} ")


async def _blocked_clients(client: RedisClient) -> int:
    info: bytes = await client.execute("INFO", "clients")
    for line in info.decode().splitlines():
        if line.startswith("blocked_clients:"):
            return int(line.split(":", 1)[1])
    raise AssertionError("INFO clients has no blocked_clients line")


async def _wait_until(predicate, timeout: float = 5.0) -> None:  # type: ignore[no-untyped-def]
    with trio.fail_after(timeout):
        while not await predicate():
            await trio.sleep(0.005)


# -- addresses and command classification (no server needed) ------------------


def test_parse_tcp_url() -> None:
    address = RedisAddress.parse("redis://:s3cret@example.org:6380/2")
    assert (address.host, address.port, address.db, address.password) == ("example.org", 6380, 2, "s3cret")
    assert "s3cret" not in address.display
    assert RedisAddress.parse("redis://localhost").port == 6379


def test_parse_unix_urls() -> None:
    assert RedisAddress.parse("unix:///tmp/r.sock").path == "/tmp/r.sock"
    address = RedisAddress.parse("redis+unix:///tmp/r.sock?db=3")
    assert (address.path, address.db) == ("/tmp/r.sock", 3)


@pytest.mark.parametrize("url", ["http://x", "redis://", "unix://", "redis://h/notanumber"])
def test_bad_urls_are_rejected(url: str) -> None:
    with pytest.raises(ValueError):
        RedisAddress.parse(url)


def test_blocking_commands_are_recognised() -> None:
    assert is_blocking_command(("XREAD", "BLOCK", 0, "STREAMS", "s", "$"))
    assert is_blocking_command((b"xread", b"count", 5, b"block", 10, b"streams", b"s", b"0"))
    assert is_blocking_command(("BLPOP", "l", 0))
    assert not is_blocking_command(("XREAD", "COUNT", 5, "STREAMS", "s", "0"))
    # A stream key named BLOCK is not the BLOCK option.
    assert not is_blocking_command(("XREAD", "STREAMS", "BLOCK", "0"))
    assert not is_blocking_command(("GET", "BLOCK"))


# -- commands, replies, errors -------------------------------------------------


async def test_replies_are_decoded_as_hiredis_types(redis_client: RedisClient) -> None:
    binary = b"\x00\r\n\xff" * 10
    assert await redis_client.execute("SET", "k", binary) == b"OK"
    assert await redis_client.execute("GET", "k") == binary
    assert await redis_client.execute("GET", "missing") is None
    assert await redis_client.execute("INCRBY", "n", 41) == 41
    await redis_client.execute("RPUSH", "l", "a", "b")
    assert await redis_client.execute("LRANGE", "l", 0, -1) == [b"a", b"b"]


async def test_large_values_cross_many_socket_reads(redis_client: RedisClient) -> None:
    big = os.urandom(3 * 1024 * 1024)
    await redis_client.execute("SET", "big", big)
    assert await redis_client.execute("GET", "big") == big


async def test_error_reply_raises_and_keeps_connection(redis_client: RedisClient) -> None:
    await redis_client.execute("SET", "s", "x")
    with pytest.raises(RedisError) as caught:
        await redis_client.execute("LPUSH", "s", "y")
    assert caught.value.code == "WRONGTYPE"
    with pytest.raises(RedisError, match="unknown command"):
        await redis_client.execute("NOSUCHCOMMAND")
    assert await redis_client.execute("PING") == b"PONG"
    assert redis_client.open_connection_count == 1


async def test_pipeline_returns_replies_in_order_with_errors_inline(redis_client: RedisClient) -> None:
    await redis_client.execute("SET", "s", "x")
    replies = await redis_client.pipeline([("INCR", "c"), ("LPUSH", "s", "y"), ("INCR", "c"), ("GET", "c")])
    assert replies[0] == 1 and replies[2] == 2 and replies[3] == b"2"
    assert isinstance(replies[1], RedisError) and replies[1].code == "WRONGTYPE"
    assert await redis_client.pipeline([]) == []


async def test_large_pipeline(redis_client: RedisClient) -> None:
    replies = await redis_client.pipeline([("RPUSH", "l", i) for i in range(20_000)])
    assert replies == list(range(1, 20_001))


async def test_concurrent_commands_from_many_tasks_stay_within_pool(redis_url: str) -> None:
    async with await connect(redis_url, max_connections=4) as client:
        peak = 0

        async def worker() -> None:
            nonlocal peak
            for _ in range(100):
                await client.execute("INCR", "counter")
                peak = max(peak, client.open_connection_count)

        async with trio.open_nursery() as nursery:
            for _ in range(50):
                nursery.start_soon(worker)
        assert await client.execute("GET", "counter") == b"5000"
        assert peak <= 4


async def test_database_number_from_url(redis_server: EmbeddedRedis, redis_url: str) -> None:
    async with await connect(f"redis+unix://{redis_server.socket_path}?db=3") as db3:
        await db3.execute("SET", "only-in-3", "1")
    async with await connect(redis_url) as db0:
        assert await db0.execute("EXISTS", "only-in-3") == 0


# -- connection errors ---------------------------------------------------------


async def test_failed_connection_setup_is_a_connection_error(redis_server: EmbeddedRedis) -> None:
    with pytest.raises(RedisConnectionError, match="cannot initialise.*DB index is out of range"):
        await connect(f"unix://{redis_server.socket_path}?db=999")


async def test_execute_needs_a_command(redis_client: RedisClient) -> None:
    with pytest.raises(ValueError):
        await redis_client.execute()


async def test_unreachable_unix_socket_names_the_url(tmp_path: Path) -> None:
    url = f"unix://{tmp_path}/nothing-here.sock"
    with pytest.raises(RedisConnectionError, match="nothing-here.sock"):
        await connect(url)


async def test_unreachable_tcp_port_names_the_url() -> None:
    # Port 1 on localhost is reserved (tcpmux) and closed on any sane machine.
    with pytest.raises(RedisConnectionError, match="127.0.0.1:1"):
        await connect("redis://127.0.0.1:1/0")


async def test_connection_killed_by_server_is_replaced(redis_url: str) -> None:
    async with await connect(redis_url, client_name="victim") as client:
        assert await client.execute("PING") == b"PONG"
        async with await connect(redis_url) as admin:
            assert await admin.execute("CLIENT", "KILL", "SKIPME", "yes", "TYPE", "normal") >= 1
        # The idle pooled connection is dead; the call fails clearly, it is dropped...
        with pytest.raises(RedisConnectionError, match="Redis at"):
            await client.execute("PING")
        assert client.open_connection_count == 0
        # ...and the next call opens a fresh one.
        assert await client.execute("PING") == b"PONG"


async def test_closed_client_refuses_calls_and_fails_calls_in_flight(redis_client: RedisClient) -> None:
    failure: list[BaseException] = []

    async def blocked_reader() -> None:
        try:
            await redis_client.execute("XREAD", "BLOCK", 0, "STREAMS", "quiet", "$")
        except RedisConnectionError as exc:
            failure.append(exc)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(blocked_reader)
        await _wait_until(lambda: _one_blocked(redis_client))
        await redis_client.aclose()
    assert len(failure) == 1
    assert redis_client.open_connection_count == 0
    with pytest.raises(RedisConnectionError, match="closed"):
        await redis_client.execute("PING")


async def _one_blocked(client: RedisClient) -> bool:
    return await _blocked_clients(client) == 1


# -- cancel safety ---------------------------------------------------------------


async def test_500_cancelled_blocking_reads_leak_nothing(redis_url: str) -> None:
    async with await connect(redis_url, max_connections=4, client_name="cancel-test") as client:
        with trio.fail_after(60):
            for _ in range(500):
                with trio.move_on_after(0.002):
                    await client.execute("XREAD", "BLOCK", 10_000, "STREAMS", "never-written", "$")
                    raise AssertionError("the blocking read returned instead of being cancelled")
            assert await client.execute("SET", "after", "ok") == b"OK"
            assert await client.execute("GET", "after") == b"ok"
        assert client.open_connection_count <= 4

        async def settled() -> bool:
            return await _clients_named(client, "cancel-test") <= 4 and await _blocked_clients(client) == 0

        await _wait_until(settled)


async def test_many_concurrent_blocked_reads_cancelled_at_once(redis_url: str) -> None:
    async with await connect(redis_url, max_connections=2, client_name="crowd") as client:
        with trio.fail_after(30):
            async with trio.open_nursery() as nursery:
                for _ in range(100):
                    nursery.start_soon(client.execute, "XREAD", "BLOCK", 0, "STREAMS", "never-written", "$")

                async def all_blocked() -> bool:
                    return await _blocked_clients(client) == 100

                await _wait_until(all_blocked, timeout=20)
                # Blocking reads never use pool slots, so ordinary commands still run.
                assert await client.execute("PING") == b"PONG"
                nursery.cancel_scope.cancel()
            assert await client.execute("PING") == b"PONG"
            assert client.open_connection_count <= 2

            async def released() -> bool:
                return await _blocked_clients(client) == 0 and await _clients_named(client, "crowd") <= 2

            await _wait_until(released)


async def test_blocking_read_does_not_hold_up_other_commands(redis_url: str) -> None:
    async with await connect(redis_url, max_connections=1) as client:
        result: list[object] = []

        async def reader() -> None:
            result.append(await client.execute("XREAD", "BLOCK", 0, "STREAMS", "wake", "$"))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(reader)
            await _wait_until(lambda: _one_blocked(client))
            with trio.fail_after(5):
                for _ in range(100):
                    assert await client.execute("PING") == b"PONG"
            await client.execute("XADD", "wake", "*", "f", "v")
        assert result and result[0][0][0] == b"wake"  # type: ignore[index]


async def test_cancelled_pipeline_drops_its_connection(redis_client: RedisClient) -> None:
    with trio.move_on_after(0.001):
        while True:
            await redis_client.pipeline([("INCR", "p")] * 5000)
    # Whatever state the cancelled connection was in, the next call is in sync.
    assert await redis_client.execute("SET", "marker", "m") == b"OK"
    assert await redis_client.execute("GET", "marker") == b"m"


async def test_callers_cancelled_while_waiting_for_a_pool_slot_leak_no_slot(redis_url: str) -> None:
    busy_script = """
    local start = redis.call('TIME')
    repeat local now = redis.call('TIME')
    until (now[1] - start[1]) * 1000000 + now[2] - start[2] >= tonumber(ARGV[1])
    return 1
    """
    async with await connect(redis_url, max_connections=1) as client:
        async with trio.open_nursery() as nursery:
            # Holds the only slot for 200 ms while ten callers queue for it and give up.
            nursery.start_soon(client.execute, "EVAL", busy_script, 0, 200_000)
            await trio.sleep(0.02)
            for _ in range(10):
                with trio.move_on_after(0.02):
                    await client.execute("PING")
        with trio.fail_after(5):
            assert await client.pipeline([("PING",), ("PING",)]) == [b"PONG", b"PONG"]
            async with trio.open_nursery() as nursery:
                for _ in range(5):
                    nursery.start_soon(client.execute, "INCR", "after")
        assert await client.execute("GET", "after") == b"5"
        assert client.open_connection_count == 1


async def test_dedicated_connection_is_closed_on_exit(redis_client: RedisClient) -> None:
    before = redis_client.open_connection_count
    async with redis_client.dedicated() as connection:
        assert redis_client.open_connection_count == before + 1
        assert await connection.execute("PING") == b"PONG"
        assert await connection.pipeline([("SET", "d", 1), ("GET", "d")]) == [b"OK", b"1"]
    assert connection.closed
    assert redis_client.open_connection_count == before


# -- scripts -----------------------------------------------------------------------

_SCRIPT = "return redis.call('INCRBY', KEYS[1], ARGV[1])"


async def test_evalsha_loads_script_and_survives_script_flush(redis_client: RedisClient) -> None:
    assert await redis_client.evalsha_or_load(_SCRIPT, ["n"], [2]) == 2
    await redis_client.execute("SCRIPT", "FLUSH")
    assert await redis_client.evalsha_or_load(_SCRIPT, ["n"], [3]) == 5
    sha = redis_client._script_shas[_SCRIPT]
    assert await redis_client.execute("SCRIPT", "EXISTS", sha) == [1]
    assert await redis_client.execute("GET", "n") == b"5"


async def test_script_errors_raise_redis_error(redis_client: RedisClient) -> None:
    with pytest.raises(RedisError):
        await redis_client.evalsha_or_load("return redis.call('NOSUCHCOMMAND')")
    with pytest.raises(RedisError):
        await redis_client.evalsha_or_load("return redis.error_reply('MYERR custom')")


# -- the embedded server -----------------------------------------------------------


def test_find_redis_server_honours_env_and_reports_missing_binary(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    missing = tmp_path / "no-such-redis-server"
    monkeypatch.setenv("FIRELANE_REDIS_SERVER", str(missing))
    with pytest.raises(RedisServerNotFound, match="FIRELANE_REDIS_SERVER.*no-such-redis-server"):
        find_redis_server()
    with pytest.raises(RedisServerNotFound):
        EmbeddedRedis(tmp_path / "data", persist=False).start()
    monkeypatch.delenv("FIRELANE_REDIS_SERVER")
    assert os.access(find_redis_server(), os.X_OK)


def test_startup_failure_reports_the_server_log(tmp_path: Path) -> None:
    server = EmbeddedRedis(tmp_path, persist=False, extra_args=["--no-such-directive", "1"])
    with pytest.raises(RedisServerError, match="(?s)exited with code.*no-such-directive"):
        server.start()
    assert not server.running


def test_aof_data_survives_restart_on_the_same_dir(tmp_path: Path) -> None:
    async def write(url: str) -> None:
        async with await connect(url) as client:
            await client.execute("XADD", "stream", "*", "f", "persisted")
            await client.execute("SET", "k", "v")

    async def read(url: str) -> tuple[object, object]:
        async with await connect(url) as client:
            return await client.execute("XRANGE", "stream", "-", "+"), await client.execute("GET", "k")

    data_dir = tmp_path / "data"
    with EmbeddedRedis(data_dir, persist=True) as server:
        trio.run(write, server.url)
    assert not server.running
    with EmbeddedRedis(data_dir, persist=True) as server:
        entries, value = trio.run(read, server.url)
    assert value == b"v"
    assert [fields for _, fields in entries] == [[b"f", b"persisted"]]  # type: ignore[union-attr]


async def test_async_server_lifecycle_and_persistence(tmp_path: Path) -> None:
    async with EmbeddedRedis(tmp_path, persist=True) as server:
        async with await connect(server.url) as client:
            await client.execute("SET", "async", "yes")
    assert not server.running
    async with EmbeddedRedis(tmp_path, persist=True) as server:
        async with await connect(server.url) as client:
            assert await client.execute("GET", "async") == b"yes"


def test_long_data_dir_gets_a_short_socket_path(tmp_path: Path) -> None:
    deep = tmp_path.joinpath(*["a-rather-long-directory-name"] * 6)
    with EmbeddedRedis(deep, persist=False) as server:
        assert len(os.fsencode(server.socket_path)) <= 100
        assert server.command_sync("PING") == b"PONG"
        assert server.data_dir == deep.resolve()
