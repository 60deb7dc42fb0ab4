"""A Redis Cluster client built on the single-node trio client.

URL
---
``redis+cluster://[user:password@]host:port[,host:port...]`` names one or more
seed nodes (any node, master or replica; port 6379 when left out). The client
asks the first seed that answers for the slot map and from then on talks to
the masters it lists. No database number (a cluster has only database 0) and
no unix-socket form: a cluster tells its clients where its nodes are as TCP
addresses, and its nodes need TCP for the cluster bus anyway.

Model
-----
* One ``RedisClient`` (its pool, its cancel safety) per master, created when
  first needed. Each command goes to the master of its first key's hash slot:
  CRC16 of the key, or of the part between the first ``{`` and the next ``}``
  when that part is not empty (the hash tag). firelane's keys all carry the
  campaign as hash tag, so one campaign lives on one slot and the append's
  Lua script touches one slot only.
* The key of a command is found from a table of common commands, the
  ``numkeys`` of EVAL/EVALSHA/FCALL, the ``STREAMS`` of XREAD/XREADGROUP, and
  for any other command by asking the server (``COMMAND GETKEYS``). Keyless
  commands (PING, SCRIPT, INFO, ...) go to one master, not to all.
* The slot map comes from ``CLUSTER SLOTS`` (it works on Redis 6.2 to 7.x;
  ``CLUSTER SHARDS`` is 7.0+ and gives nothing more that routing needs).
* ``MOVED``: the slot's new owner is noted, the whole map reloaded, the
  command sent again. ``ASK`` (a slot being migrated): the command is sent
  once to the named node, preceded by ``ASKING`` in the same write.
* A connection error, ``CLUSTERDOWN``, ``TRYAGAIN``, ``LOADING``,
  ``MASTERDOWN`` or ``READONLY`` (a failover or a restart under way): the map
  is reloaded and the command retried with a growing pause (20 ms to 0.5 s)
  for at most ``retry_timeout`` seconds (default 20, counted from the first
  failure), then ``ClusterDownError`` names the slot and the last error. Set
  it above ``cluster-node-timeout`` plus a second or two, the time a failover
  takes.
* A command whose connection broke may or may not have run, as on one server
  (see ``RedisConnectionError``), and it is retried: every write firelane
  makes is idempotent or deduplicated (appends and commands carry ids), so a
  second run changes nothing. Other callers must keep their writes
  idempotent too.
* Cancel safety is the single-node client's: a call interrupted anywhere
  (mid-write, mid-read, in a retry pause, while the map reloads) closes the
  connection it was using, and nothing else is held. The map is replaced in
  one assignment, so a cancelled reload leaves the old map.
* ``dedicated()`` hands out a ``ClusterConnection``: private connections
  (one per node, opened on demand) that route, redirect and retry like the
  client. It is for blocking-read loops (``follow``); MULTI/WATCH are refused
  on a cluster (use a Lua script on one hash slot).
* ``durability=`` on ``execute``/``evalsha_or_load`` runs WAIT/WAITAOF on the
  master that took the write, on the same connection (see ``Durability``).
"""

from __future__ import annotations

import binascii
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from types import TracebackType
from typing import Any, TypeVar
from urllib.parse import quote, unquote, urlsplit

import trio

from firelane.redisio.client import (
    CLUSTER_SCHEME,
    CommandArg,
    Durability,
    RedisAddress,
    RedisClient,
    RedisConnection,
    RedisConnectionError,
    RedisError,
    _as_upper_bytes,
    open_connection,
)

__all__ = [
    "ClusterAddress",
    "ClusterClient",
    "ClusterConnection",
    "ClusterDownError",
    "NotAClusterError",
    "SLOT_COUNT",
    "key_slot",
]

SLOT_COUNT = 16384
NodeAddress = tuple[str, int]
T = TypeVar("T")

_DEFAULT_PORT = 6379
_FIRST_RETRY_DELAY = 0.02
_MAX_RETRY_DELAY = 0.5
# Redirects followed at once; past these (a redirect loop while the cluster
# reconfigures) they wait like any other retry, within retry_timeout.
_FREE_REDIRECTS = 5
_SUSPECT_FOR = 10.0  # seconds a node that failed is asked last for the map
_SLOT_CACHE_SIZE = 4096


class ClusterDownError(RedisConnectionError):
    """The cluster did not serve a slot within the client's ``retry_timeout``
    (or no node answered for the slot map)."""


class NotAClusterError(RedisConnectionError):
    """A seed answered but is not a cluster node (its cluster support is disabled)."""


# ---------------------------------------------------------------------------
# URLs
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ClusterAddress:
    """A parsed ``redis+cluster://[user:password@]host:port[,host:port...]`` URL."""

    url: str
    seeds: tuple[NodeAddress, ...]
    username: str | None = None
    password: str | None = None

    @classmethod
    def parse(cls, url: str) -> ClusterAddress:
        try:
            parts = urlsplit(url)
        except ValueError as exc:  # e.g. an unclosed "[" of an IPv6 address
            raise ValueError(f"Redis Cluster URL {url!r} is malformed: {exc}") from None
        if parts.scheme != CLUSTER_SCHEME:
            raise ValueError(f"{url!r} is not a Redis Cluster URL: use redis+cluster://host:port[,host:port...]")
        userinfo, at, hosts = parts.netloc.rpartition("@")
        username = password = None
        if at:
            user, colon, secret = userinfo.partition(":")
            username = unquote(user) or None
            password = unquote(secret) if colon else None
        if parts.path not in ("", "/", "/0"):
            raise ValueError(f"Redis Cluster URL {url!r} names a database: a cluster has only database 0")
        if parts.query or parts.fragment:
            raise ValueError(f"Redis Cluster URL {url!r} has options after the hosts: none are supported")
        seeds = tuple(_parse_host_port(url, item.strip()) for item in hosts.split(","))
        return cls(url, seeds, username, password)

    @property
    def display(self) -> str:
        """The URL with any password masked, for error messages and logs."""
        if self.password is None:
            return self.url
        return self.url.replace(f":{quote(self.password, safe='')}@", ":***@", 1).replace(
            f":{self.password}@", ":***@", 1
        )

    def node_url(self, node: NodeAddress) -> str:
        """The single-node ``redis://`` URL of one node, with this URL's credentials."""
        host, port = node
        if ":" in host:
            host = f"[{host}]"
        auth = ""
        if self.password is not None:
            auth = f"{quote(self.username or '', safe='')}:{quote(self.password, safe='')}@"
        elif self.username is not None:
            auth = f"{quote(self.username, safe='')}@"
        return f"redis://{auth}{host}:{port}"


def _parse_host_port(url: str, item: str) -> NodeAddress:
    if not item:
        raise ValueError(f"Redis Cluster URL {url!r} has an empty entry in its host list")
    if item.startswith("["):
        host, bracket, rest = item[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            raise ValueError(f"Redis Cluster URL {url!r} has a malformed IPv6 address {item!r}")
        port_text = rest[1:]
    else:
        host, colon, port_text = item.rpartition(":")
        if not colon:
            host, port_text = item, ""
    if not host:
        raise ValueError(f"Redis Cluster URL {url!r} has an entry without a host: {item!r}")
    if not port_text:
        return host, _DEFAULT_PORT
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise ValueError(f"Redis Cluster URL {url!r} has an invalid port in {item!r}")
    return host, int(port_text)


# ---------------------------------------------------------------------------
# Hash slots and keys
# ---------------------------------------------------------------------------


def _key_bytes(key: CommandArg) -> bytes:
    if isinstance(key, bytes):
        return key
    if isinstance(key, str):
        return key.encode()
    if isinstance(key, (bytearray, memoryview)):
        return bytes(key)
    return str(key).encode()


def key_slot(key: CommandArg) -> int:
    """The cluster hash slot of ``key``: CRC16 (XMODEM) of its hash tag or of the whole key, mod 16384."""
    data = _key_bytes(key)
    start = data.find(b"{")
    if start >= 0:
        end = data.find(b"}", start + 1)
        if end > start + 1:
            data = data[start + 1 : end]
    # binascii.crc_hqx is CRC-CCITT (polynomial 0x1021); from 0 it is the XMODEM variant Redis uses.
    return binascii.crc_hqx(data, 0) & (SLOT_COUNT - 1)


_NO_KEY: Any = object()  # the command has no key: any master will do
_ASK_SERVER: Any = object()  # the key position is not known here: COMMAND GETKEYS

# Commands whose first argument is their first key (all of firelane's, and the
# common data commands). Others are looked up with COMMAND GETKEYS.
_KEY_FIRST = frozenset(
    b"""
    APPEND BITCOUNT BITFIELD BITFIELD_RO BITPOS BLMOVE BLPOP BRPOP BRPOPLPUSH BZPOPMAX BZPOPMIN
    COPY DECR DECRBY DEL DUMP EXISTS EXPIRE EXPIREAT EXPIRETIME GEOADD GEODIST GEOHASH GEOPOS
    GEOSEARCH GEOSEARCHSTORE GET GETDEL GETEX GETRANGE GETSET HDEL HEXISTS HGET HGETALL HINCRBY
    HINCRBYFLOAT HKEYS HLEN HMGET HMSET HRANDFIELD HSCAN HSET HSETNX HSTRLEN HVALS INCR INCRBY
    INCRBYFLOAT LINDEX LINSERT LLEN LMOVE LPOP LPOS LPUSH LPUSHX LRANGE LREM LSET LTRIM MGET MSET
    MSETNX PERSIST PEXPIRE PEXPIREAT PEXPIRETIME PFADD PFCOUNT PFMERGE PSETEX PTTL RENAME RENAMENX
    RESTORE RPOP RPOPLPUSH RPUSH RPUSHX SADD SCARD SDIFF SDIFFSTORE SET SETEX SETNX SETRANGE SINTER
    SINTERSTORE SISMEMBER SMEMBERS SMISMEMBER SMOVE SPOP SRANDMEMBER SREM SSCAN STRLEN SUNION
    SUNIONSTORE TOUCH TTL TYPE UNLINK XACK XADD XAUTOCLAIM XCLAIM XDEL XLEN XPENDING XRANGE
    XREVRANGE XSETID XTRIM ZADD ZCARD ZCOUNT ZINCRBY ZLEXCOUNT ZMSCORE ZPOPMAX ZPOPMIN
    ZRANDMEMBER ZRANGE ZRANGEBYLEX ZRANGEBYSCORE ZRANGESTORE ZRANK ZREM ZREMRANGEBYLEX
    ZREMRANGEBYRANK ZREMRANGEBYSCORE ZREVRANGE ZREVRANGEBYLEX ZREVRANGEBYSCORE ZREVRANK ZSCAN
    ZSCORE
    """.split()
)
_KEYLESS = frozenset(
    b"""
    ACL ASKING AUTH BGREWRITEAOF BGSAVE CLIENT CLUSTER COMMAND CONFIG DBSIZE ECHO FLUSHALL FLUSHDB
    FUNCTION HELLO INFO LASTSAVE LATENCY LOLWUT MEMORY PING PUBLISH RANDOMKEY READONLY READWRITE
    SAVE SCAN SCRIPT SLOWLOG TIME WAIT WAITAOF
    """.split()
)
_SCRIPT_CALLS = frozenset({b"EVAL", b"EVALSHA", b"EVAL_RO", b"EVALSHA_RO", b"FCALL", b"FCALL_RO"})
_STREAM_READS = frozenset({b"XREAD", b"XREADGROUP"})
# Transactions need every command on one connection of one node, which a pool
# of nodes does not give; a Lua script on one hash slot does the same job.
_REFUSED = frozenset({b"MULTI", b"EXEC", b"DISCARD", b"WATCH", b"UNWATCH", b"SELECT", b"SWAPDB"})


def first_key(args: Sequence[CommandArg]) -> Any:
    """The command's first key, ``_NO_KEY``, or ``_ASK_SERVER`` when only the server knows."""
    name = _as_upper_bytes(args[0])
    if name in _KEY_FIRST:
        return args[1] if len(args) > 1 else _NO_KEY
    if name in _KEYLESS:
        return _NO_KEY
    if name in _SCRIPT_CALLS:
        try:
            numkeys = int(args[2])
        except (IndexError, ValueError, TypeError):
            return _NO_KEY  # malformed: the server will say why
        return args[3] if numkeys > 0 and len(args) > 3 else _NO_KEY
    if name in _STREAM_READS:
        index = 1
        while index < len(args):
            word = _as_upper_bytes(args[index])
            if word == b"STREAMS":
                return args[index + 1] if index + 1 < len(args) else _NO_KEY
            index += 3 if word == b"GROUP" else 2 if word in (b"COUNT", b"BLOCK") else 1
        return _NO_KEY
    if name in _REFUSED:
        raise ValueError(
            f"{name.decode()} is not supported on a Redis Cluster client: "
            "use a Lua script (evalsha_or_load) whose keys share one hash tag"
        )
    return _ASK_SERVER


_RETRIED = frozenset({"CLUSTERDOWN", "TRYAGAIN", "LOADING", "MASTERDOWN", "READONLY"})
_RELOAD_MAP_ON = frozenset({"CLUSTERDOWN", "MASTERDOWN", "READONLY"})
# Errors that, in a one-slot pipeline, every keyed command gets or none does:
# the pipeline can be sent again as a whole.
_WHOLE_PIPELINE = frozenset({"MOVED", "CLUSTERDOWN", "LOADING", "MASTERDOWN", "READONLY"})


def _parse_redirect(error: RedisError, asked: NodeAddress) -> tuple[int, NodeAddress]:
    """``MOVED 3999 127.0.0.1:6381`` -> (3999, ("127.0.0.1", 6381)); an empty host means the node asked."""
    try:
        _code, slot_text, endpoint = error.message.split(" ", 2)
        host, _, port_text = endpoint.rpartition(":")
        host = host.strip("[]")
        return int(slot_text), (host if host and host != "?" else asked[0], int(port_text))
    except ValueError:
        raise RedisError(f"malformed cluster redirect from {asked[0]}:{asked[1]}: {error.message!r}") from None


# ---------------------------------------------------------------------------
# The client
# ---------------------------------------------------------------------------


class ClusterClient:
    """A Redis Cluster client with the interface of ``RedisClient``.

    ``max_connections`` and ``connect_timeout`` apply per node;
    ``retry_timeout`` bounds how long one call keeps retrying through a
    failover or an outage before ``ClusterDownError``.
    """

    def __init__(
        self,
        url: str,
        *,
        max_connections: int = 16,
        connect_timeout: float = 5.0,
        client_name: str | None = None,
        retry_timeout: float = 20.0,
    ) -> None:
        if max_connections < 1:
            raise ValueError("max_connections must be at least 1")
        if retry_timeout <= 0:
            raise ValueError("retry_timeout must be positive")
        self._address = ClusterAddress.parse(url)
        self._max_connections = max_connections
        self._connect_timeout = connect_timeout
        self._client_name = client_name
        self._retry_timeout = retry_timeout
        self._nodes: dict[NodeAddress, RedisClient] = {}
        self._owners: list[NodeAddress | None] = [None] * SLOT_COUNT
        self._masters: tuple[NodeAddress, ...] = ()
        self._replicas: dict[NodeAddress, tuple[NodeAddress, ...]] = {}
        self._map_version = 0
        self._refresh_lock = trio.Lock()
        self._suspects: dict[NodeAddress, float] = {}
        self._dedicated: set[ClusterConnection] = set()
        self._slot_cache: dict[Any, int] = {}
        self._closed = False

    # -- lifecycle ---------------------------------------------------------

    @classmethod
    async def connect(cls, url: str, **options: Any) -> ClusterClient:
        """Create a client and load the slot map (raises ``ClusterDownError`` if no seed answers)."""
        client = cls(url, **options)
        try:
            await client.refresh_slot_map()
        except BaseException:
            await client.aclose()
            raise
        return client

    async def aclose(self) -> None:
        """Close every connection to every node, including ones in use (their calls fail)."""
        self._closed = True
        with trio.CancelScope(shield=True):
            for connection in list(self._dedicated):
                connection.close()
            self._dedicated.clear()
            for client in self._nodes.values():
                await client.aclose()

    async def __aenter__(self) -> ClusterClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    @property
    def url(self) -> str:
        return self._address.display

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def open_connection_count(self) -> int:
        """Connections open to all nodes (pooled, blocking and dedicated)."""
        return sum(client.open_connection_count for client in self._nodes.values()) + sum(
            connection.open_connection_count for connection in self._dedicated
        )

    @property
    def masters(self) -> list[str]:
        """``host:port`` of each master in the current slot map."""
        return [f"{host}:{port}" for host, port in self._masters]

    def node_for_key(self, key: CommandArg) -> str:
        """``host:port`` of the master that serves ``key`` in the current slot map."""
        owner = self._owners[key_slot(key)]
        if owner is None:
            raise LookupError(f"no master serves slot {key_slot(key)} in the slot map of {self.url}")
        return f"{owner[0]}:{owner[1]}"

    # -- commands ----------------------------------------------------------

    async def execute(self, *args: CommandArg, durability: Durability | None = None) -> Any:
        """Run one command on the master of its key's slot; error replies raise ``RedisError``."""
        if not args:
            raise ValueError("execute() needs a command name")
        slot = await self._slot_of(args)

        async def attempt(node: NodeAddress, asking: bool) -> Any:
            client = self._client_for(node)
            if asking or durability is not None:
                return await client._execute_with(args, durability=durability, asking=asking)
            return await client.execute(*args)

        return await self._call(slot, attempt)

    async def evalsha_or_load(
        self,
        script: str,
        keys: Sequence[CommandArg] = (),
        args: Sequence[CommandArg] = (),
        *,
        durability: Durability | None = None,
    ) -> Any:
        """Run a Lua script on the master of its keys' slot (they must share one), loading it there if needed."""
        slot = self._slot(keys[0]) if keys else None

        async def attempt(node: NodeAddress, asking: bool) -> Any:
            client = self._client_for(node)
            if asking or durability is not None:
                return await client._script_with(script, keys, args, durability=durability, asking=asking)
            return await client.evalsha_or_load(script, keys, args)

        return await self._call(slot, attempt)

    async def pipeline(self, commands: Iterable[Sequence[CommandArg]]) -> list[Any]:
        """Send commands whose keys share one hash slot in one write to its master.

        Error replies are returned in the list, as on one server. The whole
        pipeline is sent again after a MOVED, a failover or a broken
        connection, so keep its commands idempotent.
        """
        batch = [tuple(command) for command in commands]
        if not batch:
            await trio.lowlevel.checkpoint()
            return []
        slot = await self._common_slot(batch)

        async def attempt(node: NodeAddress, asking: bool) -> list[Any]:
            client = self._client_for(node)
            if asking:
                sent = [part for command in batch for part in (("ASKING",), command)]
                replies = (await client.pipeline(sent))[1::2]
            else:
                replies = await client.pipeline(batch)
            _raise_whole_pipeline_errors(replies)
            return replies

        return await self._call(slot, attempt)

    @asynccontextmanager
    async def dedicated(self) -> AsyncIterator[ClusterConnection]:
        """Private connections (outside the pools) for blocking-read loops; closed on exit."""
        self._check_open()
        connection = ClusterConnection(self)
        self._dedicated.add(connection)
        try:
            yield connection
        finally:
            connection.close()
            self._dedicated.discard(connection)

    async def refresh_slot_map(self) -> None:
        """Reload the slot map now (it is reloaded by itself after MOVED and failures)."""
        self._check_open()
        await self._refresh(self._map_version)

    # -- routing -----------------------------------------------------------

    def _slot(self, key: CommandArg) -> int:
        try:
            return self._slot_cache[key]
        except KeyError:
            pass
        except TypeError:  # an unhashable key (memoryview, bytearray)
            return key_slot(key)
        slot = key_slot(key)
        if len(self._slot_cache) >= _SLOT_CACHE_SIZE:
            self._slot_cache.clear()
        self._slot_cache[key] = slot
        return slot

    async def _slot_of(self, args: Sequence[CommandArg]) -> int | None:
        key = first_key(args)
        if key is _ASK_SERVER:
            key = await self._first_key_from_server(args)
        return None if key is _NO_KEY else self._slot(key)

    async def _first_key_from_server(self, args: Sequence[CommandArg]) -> Any:
        async def attempt(node: NodeAddress, asking: bool) -> Any:
            return await self._client_for(node).execute("COMMAND", "GETKEYS", *args)

        try:
            keys = await self._call(None, attempt)
        except RedisError:
            return _NO_KEY  # keyless, or not a command: the server that runs it will say
        return keys[0] if keys else _NO_KEY

    async def _common_slot(self, commands: Sequence[Sequence[CommandArg]]) -> int | None:
        slots = set()
        for command in commands:
            if not command:
                raise ValueError("a pipeline command needs a command name")
            slot = await self._slot_of(command)
            if slot is not None:
                slots.add(slot)
        if len(slots) > 1:
            raise ValueError(
                f"a pipeline on a Redis Cluster must keep to one hash slot, these commands use slots "
                f"{sorted(slots)}: give their keys a common {{hash tag}}"
            )
        return next(iter(slots), None)

    def _node_for(self, slot: int | None) -> NodeAddress | None:
        if slot is not None:
            return self._owners[slot]
        now = trio.current_time()
        for master in self._masters:
            if now - self._suspects.get(master, -_SUSPECT_FOR) >= _SUSPECT_FOR:
                return master
        return self._masters[0] if self._masters else None

    def _client_for(self, node: NodeAddress) -> RedisClient:
        client = self._nodes.get(node)
        if client is None:
            self._check_open()
            client = RedisClient(
                self._address.node_url(node),
                max_connections=self._max_connections,
                connect_timeout=self._connect_timeout,
                client_name=self._client_name,
            )
            self._nodes[node] = client
        return client

    def _check_open(self) -> None:
        if self._closed:
            raise RedisConnectionError(f"Redis Cluster client for {self.url} is closed")

    async def _call(self, slot: int | None, attempt: Callable[[NodeAddress, bool], Awaitable[T]]) -> T:
        """Run ``attempt(node, asking)`` on the slot's master, following redirects and retrying failures."""
        ask_target: NodeAddress | None = None
        give_up_at: float | None = None
        delay = _FIRST_RETRY_DELAY
        redirects = 0
        while True:
            self._check_open()
            seen_version = self._map_version
            reload_map = False
            if ask_target is not None:
                node, asking, ask_target = ask_target, True, None
            else:
                node, asking = self._node_for(slot), False
            if node is None:
                failure: BaseException = ClusterDownError(f"no master serves slot {slot} in the slot map")
                reload_map = True
            else:
                try:
                    return await attempt(node, asking)
                except NotAClusterError:
                    raise
                except RedisConnectionError as exc:
                    failure, reload_map = exc, True
                    self._suspects[node] = trio.current_time()
                except RedisError as exc:
                    code = exc.code
                    if code == "MOVED":
                        moved_slot, target = _parse_redirect(exc, node)
                        self._owners[moved_slot] = target
                        redirects += 1
                        if redirects <= _FREE_REDIRECTS:
                            # The rest of the moved node's slots most likely moved too.
                            await self._refresh_quietly(seen_version)
                            continue
                        failure, reload_map = exc, True
                    elif code == "ASK":
                        _slot, ask_target = _parse_redirect(exc, node)
                        redirects += 1
                        if redirects <= _FREE_REDIRECTS:
                            continue
                        failure = exc
                    elif code in _RETRIED:
                        failure, reload_map = exc, code in _RELOAD_MAP_ON
                    else:
                        raise
            now = trio.current_time()
            if give_up_at is None:
                give_up_at = now + self._retry_timeout
            if now >= give_up_at:
                where = f"slot {slot}" if slot is not None else "a keyless command"
                raise ClusterDownError(
                    f"Redis Cluster {self.url} did not serve {where} within {self._retry_timeout:g} s; "
                    f"last error: {failure}"
                ) from failure
            await trio.sleep(min(delay, give_up_at - now))
            delay = min(delay * 2, _MAX_RETRY_DELAY)
            if reload_map:
                await self._refresh_quietly(seen_version)

    # -- the slot map --------------------------------------------------------

    async def _refresh(self, seen_version: int) -> None:
        # One reload at a time; callers that waited for it find the version
        # moved on and use its result. A reload cancelled midway leaves the
        # old map (it is replaced in one assignment at the end).
        async with self._refresh_lock:
            if self._map_version == seen_version:
                await self._load_slot_map()

    async def _refresh_quietly(self, seen_version: int) -> None:
        try:
            await self._refresh(seen_version)
        except NotAClusterError:
            raise
        except RedisConnectionError:
            pass  # every node down for now: the caller's retry loop keeps count of the time

    def _refresh_candidates(self) -> list[NodeAddress]:
        known = list(self._masters)
        for replicas in self._replicas.values():
            known.extend(replicas)
        known.extend(self._address.seeds)
        unique = list(dict.fromkeys(known))
        now = trio.current_time()
        return sorted(unique, key=lambda node: now - self._suspects.get(node, -_SUSPECT_FOR) < _SUSPECT_FOR)

    async def _load_slot_map(self) -> None:
        errors: list[str] = []
        for node in self._refresh_candidates():
            try:
                reply = await self._client_for(node).execute("CLUSTER", "SLOTS")
            except RedisConnectionError as exc:
                self._suspects[node] = trio.current_time()
                errors.append(str(exc))
                continue
            except RedisError as exc:
                if "cluster support disabled" in exc.message:
                    raise NotAClusterError(
                        f"Redis at {node[0]}:{node[1]} is not a cluster node ({exc.message}); "
                        "use a redis:// URL for a single server"
                    ) from None
                errors.append(f"{node[0]}:{node[1]}: {exc.message}")
                continue
            self._install_slot_map(reply, node)
            return
        raise ClusterDownError(
            f"no node of Redis Cluster {self.url} answers CLUSTER SLOTS: " + "; ".join(errors[-3:])
        )

    def _install_slot_map(self, reply: list[Any], answered_by: NodeAddress) -> None:
        owners: list[NodeAddress | None] = [None] * SLOT_COUNT
        masters: dict[NodeAddress, None] = {}
        replicas: dict[NodeAddress, tuple[NodeAddress, ...]] = {}
        for start, end, master, *replica_entries in reply:
            owner = _endpoint(master, answered_by)
            masters[owner] = None
            owners[start : end + 1] = [owner] * (end - start + 1)
            replicas[owner] = tuple(_endpoint(entry, answered_by) for entry in replica_entries)
        self._owners, self._masters, self._replicas = owners, tuple(masters), replicas
        self._map_version += 1


def _endpoint(entry: list[Any], answered_by: NodeAddress) -> NodeAddress:
    """(host, port) of a CLUSTER SLOTS node entry; an unknown host ("" or "?") is the node that answered."""
    host = entry[0].decode() if isinstance(entry[0], bytes) else str(entry[0])
    return (host if host and host != "?" else answered_by[0]), int(entry[1])


def _raise_whole_pipeline_errors(replies: list[Any]) -> None:
    for reply in replies:
        if isinstance(reply, RedisError) and reply.code in _WHOLE_PIPELINE:
            raise reply


# ---------------------------------------------------------------------------
# Dedicated connections
# ---------------------------------------------------------------------------


class ClusterConnection:
    """What ``ClusterClient.dedicated()`` yields: private connections, one per node, opened on demand.

    Commands route, redirect and retry like ``ClusterClient.execute``; a
    connection whose call was interrupted is closed and replaced by the next
    call, as on one server.
    """

    def __init__(self, cluster: ClusterClient) -> None:
        self._cluster = cluster
        self._connections: dict[NodeAddress, RedisConnection] = {}
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def open_connection_count(self) -> int:
        return sum(1 for connection in self._connections.values() if not connection.closed)

    def close(self) -> None:
        """Close every connection now (synchronous, so it works in cancelled scopes)."""
        self._closed = True
        for connection in self._connections.values():
            connection.close()
        self._connections.clear()

    async def execute(self, *args: CommandArg) -> Any:
        if not args:
            raise ValueError("execute() needs a command name")
        slot = await self._cluster._slot_of(args)

        async def attempt(node: NodeAddress, asking: bool) -> Any:
            connection = await self._connection_to(node)
            if not asking:
                return await connection.execute(*args)
            _ok, reply = await connection.pipeline([("ASKING",), args])
            if isinstance(reply, RedisError):
                raise reply
            return reply

        return await self._cluster._call(slot, attempt)

    async def pipeline(self, commands: Iterable[Sequence[CommandArg]]) -> list[Any]:
        batch = [tuple(command) for command in commands]
        if not batch:
            await trio.lowlevel.checkpoint()
            return []
        slot = await self._cluster._common_slot(batch)

        async def attempt(node: NodeAddress, asking: bool) -> list[Any]:
            connection = await self._connection_to(node)
            if asking:
                replies = (await connection.pipeline([part for c in batch for part in (("ASKING",), c)]))[1::2]
            else:
                replies = await connection.pipeline(batch)
            _raise_whole_pipeline_errors(replies)
            return replies

        return await self._cluster._call(slot, attempt)

    async def _connection_to(self, node: NodeAddress) -> RedisConnection:
        if self._closed:
            raise RedisConnectionError(f"this dedicated connection to Redis Cluster {self._cluster.url} is closed")
        connection = self._connections.get(node)
        if connection is None or connection.closed:
            cluster = self._cluster
            connection = await open_connection(
                RedisAddress.parse(cluster._address.node_url(node)),
                connect_timeout=cluster._connect_timeout,
                client_name=cluster._client_name,
            )
            if self._closed:  # closed while connecting
                connection.close()
                raise RedisConnectionError(f"this dedicated connection to Redis Cluster {cluster.url} is closed")
            self._connections[node] = connection
        return connection
