"""Redis I/O for firelane: a thin cancel-safe trio client (one server or a Redis Cluster) and an embedded redis-server."""

from firelane.redisio.client import (
    CommandClient,
    CommandConnection,
    Durability,
    DurabilityError,
    RedisAddress,
    RedisClient,
    RedisConnection,
    RedisConnectionError,
    RedisError,
    RedisProtocolError,
    connect,
    is_blocking_command,
    is_cluster_url,
)
from firelane.redisio.cluster import ClusterClient, ClusterConnection, ClusterDownError, NotAClusterError, key_slot
from firelane.redisio.server import EmbeddedRedis, RedisServerError, RedisServerNotFound, find_redis_server

__all__ = [
    "ClusterClient",
    "ClusterConnection",
    "ClusterDownError",
    "CommandClient",
    "CommandConnection",
    "Durability",
    "DurabilityError",
    "EmbeddedRedis",
    "NotAClusterError",
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
    "is_cluster_url",
    "key_slot",
]
