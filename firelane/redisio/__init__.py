"""Redis I/O for firelane: a thin cancel-safe trio client (one server or a Redis Cluster) and an embedded redis-server."""

from typing import Any

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
    is_blocking_command,
    is_cluster_url,
)
from firelane.redisio.cluster import ClusterClient, ClusterConnection, ClusterDownError, NotAClusterError, key_slot
from firelane.redisio.server import EmbeddedRedis, RedisServerError, RedisServerNotFound, find_redis_server


async def connect(url: str, **options: Any) -> CommandClient:
    """Open a client for ``url`` and check the server answers.

    ``redis://``, ``unix://``, ``redis+unix://``: a ``RedisClient`` (PING).
    ``redis+cluster://host:port[,host:port...]``: a ``ClusterClient`` that has
    loaded the cluster's slot map (see firelane/redisio/cluster.py).

    Options: ``max_connections`` (per node on a cluster), ``connect_timeout``,
    ``client_name``; on a cluster also ``retry_timeout``.
    """
    if is_cluster_url(url):
        return await ClusterClient.connect(url, **options)
    return await RedisClient.connect(url, **options)

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
