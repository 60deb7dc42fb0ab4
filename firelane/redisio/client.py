"""A thin, cancel-safe async Redis client on trio sockets with hiredis as the RESP parser.

Why not redis-py or coredis: see "Measured facts" in DESIGN.md. The short
version is that redis-py does not run on trio and coredis leaked a pool slot
for every cancelled blocking read.

Model
-----
* A ``RedisClient`` owns a small pool of connections. Each connection is a trio
  socket stream plus a ``hiredis.Reader``; one call uses one connection
  exclusively for its whole round trip (no multiplexing), so a connection's
  state is always "idle and in sync" or "owned by exactly one call".
* Cancel safety: if a call is interrupted for any reason other than a normal
  Redis error reply (cancellation, a socket error, a protocol error), the
  connection may hold a half-written request or an unread reply. It is closed
  on the spot and never returned to the pool; its pool slot is freed. Closing
  is synchronous, so it happens even inside an already-cancelled scope.
* Blocking commands (XREAD/XREADGROUP with BLOCK, BLPOP, ...) are detected and
  run on a connection outside the pool's limit, so a follower parked in
  ``XREAD BLOCK`` never starves ordinary commands. ``RedisClient.dedicated()``
  hands out a private connection for loops of blocking reads.
* Replies are decoded by hiredis as-is: bulk strings stay ``bytes``, integers are
  ``int``, nil is ``None``, arrays are lists. Error replies become ``RedisError``.
* Durability: ``execute(..., durability=Durability(replicas=1))`` (and the same
  for ``evalsha_or_load``) sends the write and ``WAIT``/``WAITAOF`` in one
  round trip on one connection (they only count that connection's writes) and
  raises ``DurabilityError`` when fewer copies acknowledged it in time.
* ``firelane.redisio.connect(url)`` also takes ``redis+cluster://host:port[,host:port...]``
  and then returns a ``ClusterClient`` (firelane/redisio/cluster.py) with the same
  interface.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Protocol, Union
from urllib.parse import parse_qs, unquote, urlsplit

import hiredis
import trio

__all__ = [
    "CommandArg",
    "CommandClient",
    "CommandConnection",
    "Durability",
    "DurabilityError",
    "RedisAddress",
    "RedisClient",
    "RedisConnection",
    "RedisConnectionError",
    "RedisError",
    "RedisProtocolError",
    "is_blocking_command",
    "is_cluster_url",
]

CommandArg = Union[bytes, str, int, float, memoryview]

CLUSTER_SCHEME = "redis+cluster"
_RECEIVE_SIZE = 64 * 1024
_DEFAULT_MAX_CONNECTIONS = 16


class RedisError(Exception):
    """An error reply from the Redis server (e.g. ``ERR ...``, ``NOSCRIPT ...``).

    The connection that received it is still healthy.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    @property
    def code(self) -> str:
        """The error's leading word, e.g. ``"NOSCRIPT"`` or ``"WRONGTYPE"``."""
        return self.message.split(" ", 1)[0]


class RedisConnectionError(ConnectionError):
    """The client could not reach the server, or a connection broke mid-call.

    Whether a command that was in flight when the connection broke has been
    executed is unknown; callers that retry must make the command idempotent.
    """


class RedisProtocolError(RedisConnectionError):
    """The server sent bytes that are not valid RESP; the connection was dropped."""


class DurabilityError(RedisError):
    """A write ran on the server but not enough copies acknowledged it in time.

    The write is *not* undone: it is in the master's memory and may or may not
    survive a failover. Retry it (idempotently: firelane's appends carry a
    command id) once the replicas are back, or treat it as not acknowledged.
    """


@dataclass(frozen=True)
class Durability:
    """How many copies a write needs before the call that made it returns.

    * ``replicas=N``: ``WAIT N timeout_ms`` (every Redis): N replicas have the
      write in memory. It survives the master's crash and the promotion of a
      replica that acknowledged it, not every node losing power at once.
    * ``fsync=True``: ``WAITAOF 1 N timeout_ms`` (Redis >= 7.2; needs
      ``appendonly yes``): the write is fsynced to the master's AOF and to N
      replicas' AOFs, so it also survives the machines restarting. On a server
      without WAITAOF this raises ``DurabilityError`` before writing: no
      silent downgrade to WAIT.

    ``timeout_ms`` bounds the wait (Redis's 0, "wait forever", is refused).
    """

    replicas: int = 0
    fsync: bool = False
    timeout_ms: int = 5000

    def __post_init__(self) -> None:
        if self.replicas < 0:
            raise ValueError(f"replicas must be >= 0, got {self.replicas}")
        if self.timeout_ms <= 0:
            raise ValueError(f"the acknowledgement timeout must be a positive number of ms, got {self.timeout_ms}")
        if not self.replicas and not self.fsync:
            raise ValueError("a Durability asks for nothing: give replicas >= 1 or fsync=True")

    def describe(self) -> str:
        if self.fsync:
            return f"WAITAOF 1 {self.replicas} {self.timeout_ms}"
        return f"WAIT {self.replicas} {self.timeout_ms}"


def _check_acknowledged(reply: Any, durability: Durability, where: str) -> None:
    """Raise ``DurabilityError`` unless the WAIT/WAITAOF ``reply`` meets ``durability``."""
    if isinstance(reply, RedisError):
        raise DurabilityError(f"Redis at {where} ran the write but {durability.describe()} failed: {reply.message}")
    if durability.fsync:
        local, replicas = reply
        if local >= 1 and replicas >= durability.replicas:
            return
        got = f"the local AOF {'has' if local else 'does not have'} it and {replicas} of {durability.replicas} replicas"
    else:
        if reply >= durability.replicas:
            return
        got = f"{reply} of {durability.replicas} replicas"
    raise DurabilityError(
        f"Redis at {where} ran the write but only {got} acknowledged it within {durability.timeout_ms} ms "
        f"({durability.describe()}); it may be lost on a failover"
    )


# hiredis turns error replies into instances of the class it is given, so
# errors nested inside arrays (pipelines, EXEC, Lua tables) are RedisError too.
_NOT_ENOUGH_DATA = object()


def _new_reader() -> hiredis.Reader:
    return hiredis.Reader(
        replyError=RedisError,
        protocolError=RedisProtocolError,
        notEnoughData=_NOT_ENOUGH_DATA,
    )


# ---------------------------------------------------------------------------
# Addresses
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RedisAddress:
    """A parsed ``redis://``, ``unix://`` or ``redis+unix://`` URL."""

    url: str
    host: str | None = None
    port: int | None = None
    path: str | None = None
    db: int = 0
    username: str | None = None
    password: str | None = None

    @classmethod
    def parse(cls, url: str) -> RedisAddress:
        """Parse ``redis://[user:pass@]host[:port][/db]`` or ``unix:///sock[?db=N]``."""
        parts = urlsplit(url)
        query = parse_qs(parts.query)
        username = unquote(parts.username) if parts.username else None
        password = unquote(parts.password) if parts.password else None
        db_text = query.get("db", [""])[0]
        if parts.scheme == "redis":
            if not parts.hostname:
                raise ValueError(f"Redis URL {url!r} has no host")
            path_db = parts.path.strip("/")
            db_text = path_db or db_text
            db = _parse_db(url, db_text)
            try:
                port = parts.port or 6379
            except ValueError as exc:
                raise ValueError(f"Redis URL {url!r} has an invalid port") from exc
            return cls(url, host=parts.hostname, port=port, db=db, username=username, password=password)
        if parts.scheme == CLUSTER_SCHEME:
            raise ValueError(f"{url!r} is a Redis Cluster URL: open it with firelane.redisio.connect(), not RedisClient")
        if parts.scheme in ("unix", "redis+unix"):
            if not parts.path:
                raise ValueError(f"Redis URL {url!r} has no socket path")
            return cls(url, path=unquote(parts.path), db=_parse_db(url, db_text), username=username, password=password)
        raise ValueError(
            f"unsupported Redis URL scheme in {url!r}: use redis://host:port/db, unix:///path or redis+unix:///path "
            "(or redis+cluster://host:port[,host:port...] for a Redis Cluster)"
        )

    @property
    def display(self) -> str:
        """The URL with any password masked, for error messages and logs."""
        if self.password is None:
            return self.url
        return self.url.replace(f":{self.password}@", ":***@", 1)


def _parse_db(url: str, text: str) -> int:
    if not text:
        return 0
    try:
        db = int(text)
    except ValueError:
        raise ValueError(f"Redis URL {url!r} has a non-numeric database {text!r}") from None
    if db < 0:
        raise ValueError(f"Redis URL {url!r} has a negative database number")
    return db


# ---------------------------------------------------------------------------
# Blocking-command detection
# ---------------------------------------------------------------------------

_ALWAYS_BLOCKING = frozenset(
    {
        b"BLPOP",
        b"BRPOP",
        b"BRPOPLPUSH",
        b"BLMOVE",
        b"BLMPOP",
        b"BZPOPMIN",
        b"BZPOPMAX",
        b"BZMPOP",
        b"WAIT",
        b"WAITAOF",
    }
)
_BLOCKING_WITH_OPTION = frozenset({b"XREAD", b"XREADGROUP"})


def _as_upper_bytes(arg: CommandArg) -> bytes:
    if isinstance(arg, str):
        return arg.upper().encode()
    if isinstance(arg, (bytes, bytearray, memoryview)):
        return bytes(arg).upper()
    return b""


def is_blocking_command(args: Sequence[CommandArg]) -> bool:
    """True for commands that may park on the server (so they get their own connection)."""
    if not args:
        return False
    name = _as_upper_bytes(args[0])
    if name in _ALWAYS_BLOCKING:
        return True
    if name in _BLOCKING_WITH_OPTION:
        # BLOCK always comes before the STREAMS keyword, so only scan up to it;
        # a stream key that happens to be named "BLOCK" is not an option.
        for arg in args[1:]:
            word = _as_upper_bytes(arg)
            if word == b"STREAMS":
                return False
            if word == b"BLOCK":
                return True
    return False


# ---------------------------------------------------------------------------
# Connections
# ---------------------------------------------------------------------------


class RedisConnection:
    """One socket to Redis. Used by one call at a time; closed on any interrupted call."""

    def __init__(self, stream: trio.SocketStream, address: RedisAddress) -> None:
        # The stream's raw trio socket is used directly: one owner at a time is
        # guaranteed by the pool, so SocketStream's conflict detection is pure
        # overhead on the hot path (measured ~4% of a round trip).
        self._socket = stream.socket
        self._reader = _new_reader()
        self._address = address
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Close the socket now. Synchronous so it also works in cancelled scopes."""
        if not self._closed:
            self._closed = True
            # Closing the trio socket wakes any task waiting on it with
            # ClosedResourceError, which we turn into RedisConnectionError.
            self._socket.close()

    async def execute(self, *args: CommandArg) -> Any:
        """Send one command and return its reply; an error reply raises ``RedisError``."""
        reply = await self.roundtrip(hiredis.pack_command(args))
        if isinstance(reply, RedisError):
            raise reply
        return reply

    async def pipeline(self, commands: Iterable[Sequence[CommandArg]]) -> list[Any]:
        """Send all commands in one write; return their replies in order.

        Error replies are returned in the list as ``RedisError`` instances, not
        raised, so the caller can see which commands succeeded.
        """
        packed = [hiredis.pack_command(tuple(command)) for command in commands]
        if not packed:
            return []
        return await self.roundtrip_many(b"".join(packed), len(packed))

    async def send(self, *args: CommandArg) -> None:
        """Write one command without waiting for its reply; ``receive`` reads the
        replies in the order the commands were sent (a pipeline kept open, so
        the server works on the next request while the caller handles a reply)."""
        self._check_open()
        try:
            await self._send_all(hiredis.pack_command(args))
        except BaseException as exc:
            self._abandon(exc)
            raise

    async def receive(self) -> Any:
        """The reply to the oldest command ``send`` wrote and no call has read; an error reply raises ``RedisError``."""
        self._check_open()
        try:
            reply = await self._read_reply()
        except BaseException as exc:
            self._abandon(exc)
            raise
        if isinstance(reply, RedisError):
            raise reply
        return reply

    async def roundtrip(self, payload: bytes) -> Any:
        """Write one packed command and read exactly one reply."""
        self._check_open()
        try:
            await self._send_all(payload)
            return await self._read_reply()
        except BaseException as exc:
            self._abandon(exc)
            raise

    async def roundtrip_many(self, payload: bytes, reply_count: int) -> list[Any]:
        """Write several packed commands at once and read ``reply_count`` replies."""
        self._check_open()
        try:
            await self._send_all(payload)
            return [await self._read_reply() for _ in range(reply_count)]
        except BaseException as exc:
            self._abandon(exc)
            raise

    async def _send_all(self, payload: bytes) -> None:
        sent = await self._socket.send(payload)
        if sent < len(payload):
            view = memoryview(payload)
            while sent < len(view):
                sent += await self._socket.send(view[sent:])

    async def _read_reply(self) -> Any:
        reader = self._reader
        while True:
            reply = reader.gets()
            if reply is not _NOT_ENOUGH_DATA:
                return reply
            data = await self._socket.recv(_RECEIVE_SIZE)
            if not data:
                raise RedisConnectionError(f"Redis at {self._address.display} closed the connection")
            reader.feed(data)

    def _check_open(self) -> None:
        if self._closed:
            raise RedisConnectionError(f"connection to Redis at {self._address.display} is closed")

    def _abandon(self, exc: BaseException) -> None:
        """Close after an interrupted round trip; re-raise socket errors as RedisConnectionError.

        Anything but a completed round trip (cancellation included) leaves the
        connection out of sync with the server: bytes half-sent or a reply unread.
        """
        self.close()
        if isinstance(exc, _TRANSPORT_ERRORS) and not isinstance(exc, RedisConnectionError):
            raise self._translate(exc) from exc

    def _translate(self, exc: BaseException) -> RedisConnectionError:
        if isinstance(exc, trio.ClosedResourceError):
            return RedisConnectionError(f"connection to Redis at {self._address.display} was closed during the call")
        return RedisConnectionError(f"connection to Redis at {self._address.display} failed: {exc}")


# Errors from the socket layer that mean "this connection is gone"; our own
# RedisConnectionError (EOF, protocol error) is already the right type.
_TRANSPORT_ERRORS = (OSError, trio.BrokenResourceError, trio.ClosedResourceError)


async def open_connection(
    address: RedisAddress, *, connect_timeout: float = 5.0, client_name: str | None = None
) -> RedisConnection:
    """Open and initialise (AUTH, SELECT, CLIENT SETNAME) one connection."""
    try:
        with trio.fail_after(connect_timeout):
            if address.path is not None:
                stream = await trio.open_unix_socket(address.path)
            else:
                assert address.host is not None and address.port is not None
                stream = await trio.open_tcp_stream(address.host, address.port)
    except trio.TooSlowError:
        raise RedisConnectionError(
            f"cannot connect to Redis at {address.display}: no answer within {connect_timeout}s"
        ) from None
    except OSError as exc:
        raise RedisConnectionError(f"cannot connect to Redis at {address.display}: {exc}") from exc
    connection = RedisConnection(stream, address)
    setup: list[tuple[CommandArg, ...]] = []
    if address.password is not None:
        if address.username is not None:
            setup.append(("AUTH", address.username, address.password))
        else:
            setup.append(("AUTH", address.password))
    if address.db:
        setup.append(("SELECT", address.db))
    if client_name:
        setup.append(("CLIENT", "SETNAME", client_name))
    if setup:
        try:
            replies = await connection.pipeline(setup)
        except BaseException:
            connection.close()
            raise
        for reply in replies:
            if isinstance(reply, RedisError):
                connection.close()
                raise RedisConnectionError(
                    f"cannot initialise connection to Redis at {address.display}: {reply.message}"
                )
    return connection


# ---------------------------------------------------------------------------
# The pooled client
# ---------------------------------------------------------------------------


class RedisClient:
    """A pool of Redis connections for trio tasks.

    Its dedicated connections can pipeline a read ahead (``send`` then
    ``receive``), which ``read_ahead_supported`` advertises to the log's readers.

    ``max_connections`` bounds the connections used concurrently by ordinary
    commands (callers beyond it wait for a free slot) and the number kept idle.
    Blocking commands and ``dedicated()`` connections are not counted against
    the limit: each lives exactly as long as its caller needs it.
    """

    read_ahead_supported = True

    def __init__(
        self,
        url: str,
        *,
        max_connections: int = _DEFAULT_MAX_CONNECTIONS,
        connect_timeout: float = 5.0,
        client_name: str | None = None,
    ) -> None:
        if max_connections < 1:
            raise ValueError("max_connections must be at least 1")
        self._address = RedisAddress.parse(url)
        self._max_connections = max_connections
        self._connect_timeout = connect_timeout
        self._client_name = client_name
        self._idle: list[RedisConnection] = []
        self._all: set[RedisConnection] = set()
        self._slots_in_use = 0
        self._slot_freed = trio.lowlevel.ParkingLot()
        self._script_shas: dict[str, str] = {}
        self._has_waitaof: bool | None = None  # learned on first use (COMMAND INFO)
        self._closed = False

    # -- lifecycle ---------------------------------------------------------

    @classmethod
    async def connect(cls, url: str, **options: Any) -> RedisClient:
        """Create a client and check the server answers (raises ``RedisConnectionError``)."""
        client = cls(url, **options)
        try:
            await client.execute("PING")
        except BaseException:
            await client.aclose()
            raise
        return client

    async def aclose(self) -> None:
        """Close every connection, including ones in use (their calls fail)."""
        self._closed = True
        for connection in list(self._all):
            connection.close()
        self._all.clear()
        self._idle.clear()
        self._slot_freed.unpark_all()
        await trio.lowlevel.checkpoint()

    async def __aenter__(self) -> RedisClient:
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
        """Connections currently open (idle, in use, blocking and dedicated)."""
        return len(self._all)

    def drop_idle_connections(self) -> None:
        """Close the idle connections: after the server restarted they are dead,
        and each would fail the one call that next took it."""
        for connection in self._idle:
            self._discard(connection)
        self._idle.clear()

    # -- commands ----------------------------------------------------------

    async def execute(self, *args: CommandArg, durability: Durability | None = None) -> Any:
        """Run one command; error replies raise ``RedisError``.

        Blocking commands are routed to a connection outside the pool limit.
        With ``durability``, the command is followed by WAIT/WAITAOF on the
        same connection, in the same round trip (see ``Durability``).
        """
        if not args:
            raise ValueError("execute() needs a command name")
        if durability is not None:
            return await self._execute_with(args, durability=durability)
        if is_blocking_command(args):
            return await self._execute_blocking(args)
        connection = await self._checkout()
        try:
            reply = await connection.roundtrip(hiredis.pack_command(args))
        finally:
            self._checkin(connection)
        if isinstance(reply, RedisError):
            raise reply
        return reply

    async def pipeline(self, commands: Iterable[Sequence[CommandArg]]) -> list[Any]:
        """Send many commands in one write on one connection; return replies in order.

        Error replies are returned in the list as ``RedisError`` instances (not
        raised) so partial success is visible. Not a transaction: other clients'
        commands may interleave. Blocking commands inside a pipeline are the
        caller's responsibility (use ``dedicated()``).
        """
        packed = [hiredis.pack_command(tuple(command)) for command in commands]
        if not packed:
            await trio.lowlevel.checkpoint()
            return []
        connection = await self._checkout()
        try:
            return await connection.roundtrip_many(b"".join(packed), len(packed))
        finally:
            self._checkin(connection)

    async def evalsha_or_load(
        self,
        script: str,
        keys: Sequence[CommandArg] = (),
        args: Sequence[CommandArg] = (),
        *,
        durability: Durability | None = None,
    ) -> Any:
        """Run a Lua script by SHA1, loading it on ``NOSCRIPT`` (e.g. after a restart or SCRIPT FLUSH).

        Works on Redis 6.2 and 7.x. A ``NOSCRIPT`` reply means the script did
        not run, so retrying after loading cannot run it twice. With
        ``durability``, the script is followed by WAIT/WAITAOF on the same
        connection (see ``Durability``).
        """
        if durability is not None:
            return await self._script_with(script, keys, args, durability=durability)
        sha = self._script_sha(script)
        command: tuple[CommandArg, ...] = (len(keys), *keys, *args)
        try:
            return await self.execute("EVALSHA", sha, *command)
        except RedisError as exc:
            if exc.code != "NOSCRIPT":
                raise
        loaded = await self.execute("SCRIPT", "LOAD", script)
        if loaded.decode() != sha:
            raise RedisError(f"SCRIPT LOAD returned SHA1 {loaded!r}, expected {sha}")
        try:
            return await self.execute("EVALSHA", sha, *command)
        except RedisError as exc:
            if exc.code != "NOSCRIPT":
                raise
        # The cache was flushed again between LOAD and EVALSHA; EVAL both runs
        # and re-caches the script.
        return await self.execute("EVAL", script, *command)

    # -- one round trip with ASKING and/or WAIT (durable writes; the cluster client's ASK) --

    def _script_sha(self, script: str) -> str:
        sha = self._script_shas.get(script)
        if sha is None:
            sha = hashlib.sha1(script.encode()).hexdigest()
            self._script_shas[script] = sha
        return sha

    async def _wait_command(self, durability: Durability) -> tuple[CommandArg, ...]:
        if not durability.fsync:
            return ("WAIT", durability.replicas, durability.timeout_ms)
        if self._has_waitaof is None:
            # COMMAND INFO answers [nil] for a command the server does not know.
            self._has_waitaof = (await self.execute("COMMAND", "INFO", "WAITAOF")) != [None]
        if not self._has_waitaof:
            raise DurabilityError(
                f"fsync=True needs WAITAOF, which Redis at {self.url} does not have (it came in Redis 7.2); "
                "nothing was written"
            )
        return ("WAITAOF", 1, durability.replicas, durability.timeout_ms)

    async def _roundtrip_with(
        self, command: Sequence[CommandArg], *, durability: Durability | None, asking: bool
    ) -> tuple[Any, Any]:
        """Send ``[ASKING,] command [, WAIT...]`` in one write; return (reply, WAIT reply or None)."""
        commands: list[Sequence[CommandArg]] = [("ASKING",)] if asking else []
        commands.append(command)
        if durability is not None:
            commands.append(await self._wait_command(durability))
        replies = await self.pipeline(commands)
        if asking:
            del replies[0]
        return replies[0], (replies[1] if durability is not None else None)

    async def _execute_with(
        self, args: Sequence[CommandArg], *, durability: Durability | None = None, asking: bool = False
    ) -> Any:
        reply, acknowledged = await self._roundtrip_with(args, durability=durability, asking=asking)
        if isinstance(reply, RedisError):
            raise reply
        if durability is not None:
            _check_acknowledged(acknowledged, durability, self.url)
        return reply

    async def _script_with(
        self,
        script: str,
        keys: Sequence[CommandArg],
        args: Sequence[CommandArg],
        *,
        durability: Durability | None = None,
        asking: bool = False,
    ) -> Any:
        command: tuple[CommandArg, ...] = (len(keys), *keys, *args)
        sha = self._script_sha(script)
        reply, acknowledged = await self._roundtrip_with(("EVALSHA", sha, *command), durability=durability, asking=asking)
        if isinstance(reply, RedisError) and reply.code == "NOSCRIPT":
            # EVAL both runs the script and caches it for the next EVALSHA.
            reply, acknowledged = await self._roundtrip_with(("EVAL", script, *command), durability=durability, asking=asking)
        if isinstance(reply, RedisError):
            raise reply
        if durability is not None:
            _check_acknowledged(acknowledged, durability, self.url)
        return reply

    @asynccontextmanager
    async def dedicated(self) -> AsyncIterator[RedisConnection]:
        """A private connection (outside the pool limit) for blocking-read loops or MULTI.

        It is closed on exit, and immediately if a call on it is interrupted.
        """
        self._check_open()
        connection = await self._open()
        try:
            yield connection
        finally:
            self._discard(connection)

    # -- pool internals ----------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise RedisConnectionError(f"Redis client for {self._address.display} is closed")

    async def _open(self) -> RedisConnection:
        connection = await open_connection(
            self._address, connect_timeout=self._connect_timeout, client_name=self._client_name
        )
        if self._closed:
            connection.close()
            self._check_open()
        self._all.add(connection)
        return connection

    async def _checkout(self) -> RedisConnection:
        self._check_open()
        # Park (rather than a Semaphore) keeps the common uncontended path free
        # of extra scheduler round trips; the I/O that follows is the checkpoint.
        while self._slots_in_use >= self._max_connections:
            await self._slot_freed.park()
            self._check_open()
        self._slots_in_use += 1
        try:
            if self._idle:
                return self._idle.pop()
            return await self._open()
        except BaseException:
            self._release_slot()
            raise

    def _checkin(self, connection: RedisConnection) -> None:
        self._release_slot()
        self._return_to_idle(connection)

    def _release_slot(self) -> None:
        self._slots_in_use -= 1
        self._slot_freed.unpark()

    def _return_to_idle(self, connection: RedisConnection) -> None:
        if connection.closed or self._closed or len(self._idle) >= self._max_connections:
            self._discard(connection)
        else:
            self._idle.append(connection)

    def _discard(self, connection: RedisConnection) -> None:
        connection.close()
        self._all.discard(connection)

    async def _execute_blocking(self, args: Sequence[CommandArg]) -> Any:
        self._check_open()
        connection = self._idle.pop() if self._idle else await self._open()
        try:
            reply = await connection.roundtrip(hiredis.pack_command(tuple(args)))
        finally:
            self._return_to_idle(connection)
        if isinstance(reply, RedisError):
            raise reply
        return reply


class CommandConnection(Protocol):
    """What ``dedicated()`` hands out, on one server or on a cluster."""

    @property
    def closed(self) -> bool: ...

    def close(self) -> None: ...

    async def execute(self, *args: CommandArg) -> Any: ...

    async def pipeline(self, commands: Iterable[Sequence[CommandArg]]) -> list[Any]: ...


class CommandClient(Protocol):
    """The interface firelane uses, shared by ``RedisClient`` and ``ClusterClient``."""

    @property
    def url(self) -> str: ...

    @property
    def closed(self) -> bool: ...

    @property
    def open_connection_count(self) -> int: ...

    async def execute(self, *args: CommandArg, durability: Durability | None = None) -> Any: ...

    async def pipeline(self, commands: Iterable[Sequence[CommandArg]]) -> list[Any]: ...

    async def evalsha_or_load(
        self,
        script: str,
        keys: Sequence[CommandArg] = (),
        args: Sequence[CommandArg] = (),
        *,
        durability: Durability | None = None,
    ) -> Any: ...

    def dedicated(self) -> AbstractAsyncContextManager[CommandConnection]: ...

    async def aclose(self) -> None: ...

    async def __aenter__(self) -> Any: ...

    async def __aexit__(self, *exc_info: object) -> None: ...


def is_cluster_url(url: str) -> bool:
    return urlsplit(url).scheme == CLUSTER_SCHEME
