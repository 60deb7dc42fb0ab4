"""Redis I/O for firelane: a thin cancel-safe trio client and an embedded redis-server."""

from firelane.redisio.client import (
    RedisAddress,
    RedisClient,
    RedisConnection,
    RedisConnectionError,
    RedisError,
    RedisProtocolError,
    connect,
    is_blocking_command,
)
from firelane.redisio.server import EmbeddedRedis, RedisServerError, RedisServerNotFound, find_redis_server

__all__ = [
    "EmbeddedRedis",
    "RedisAddress",
    "RedisClient",
    "RedisConnection",
    "RedisConnectionError",
    "RedisError",
    "RedisProtocolError",
    "RedisServerError",
    "RedisServerNotFound",
    "connect",
    "find_redis_server",
    "is_blocking_command",
]
