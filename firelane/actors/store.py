"""Where the CLI's Redis comes from: the data directory's shared server, or a URL.

With no ``--redis URL`` and no ``FIRELANE_REDIS_URL``, every firelane command
uses the one redis-server of its data directory (``--data-dir``,
``FIRELANE_DATA_DIR``, default ``~/.local/share/firelane``), starting it when
none runs; the last command to leave stops it, so no command's exit ever
breaks another that is running (see firelane.redisio.datadir).

The data directory also holds the key that signs log entries, so it is used
with ``--redis URL`` too (copy its secrets.json to every machine that runs an
engine on the same Redis).

`firelane serve` announces itself in Redis (``firelane:serve``, renewed while
it runs); the other commands then leave running encounters to it.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import msgspec

from firelane.events.log import EventLog
from firelane.events.log_signing import LogSigner
from firelane.events.public_signing import KeyFileError, SigningKey, key_file
from firelane.redisio import RedisClient, connect
from firelane.redisio.datadir import DataDir, SharedServer, shared_server

SERVE_KEY = "firelane:serve"


class CliError(Exception):
    """A user's mistake or a situation to explain in one line (exit code 2)."""


def default_data_dir() -> Path:
    configured = os.environ.get("FIRELANE_DATA_DIR")
    if configured:
        return Path(configured).expanduser().resolve()
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return (Path(base) / "firelane").resolve()


class ServeInfo(msgspec.Struct, kw_only=True):
    """What a running `firelane serve` says about itself."""

    pid: int
    host: str
    api: str  # e.g. http://127.0.0.1:8740
    redis: str = ""  # where direct (seat) clients connect, without credentials
    version: str = ""
    # The process's start (boot id and start time: firelane.redisio.server.process_identity),
    # so a later process given the same pid is not taken for it.
    started: str = ""


@dataclass
class Store:
    """A campaign store: the Redis client and the log key."""

    client: RedisClient
    server_key: bytes
    data_dir: DataDir
    redis_display: str  # where the store is, for messages (no password)
    socket_path: str | None = None  # the embedded server's socket, when it is one
    shared: SharedServer | None = None  # the data dir's own redis-server, when it is the store (not --redis URL)

    def signing_key(self) -> SigningKey:
        """The store's Ed25519 key (made on first use): it signs what the store exports."""
        key = store_signing_key(self.data_dir)
        assert key is not None
        return key

    def log_signer(self) -> LogSigner:
        """Signs every append of this store's logs with its Ed25519 key (one
        per store, so what it keeps of each log's open group is shared)."""
        signer = self.__dict__.get("_log_signer")
        if signer is None:
            signer = self.__dict__["_log_signer"] = LogSigner(self.signing_key())
        return signer

    def event_log(self, campaign: str) -> EventLog:
        return EventLog(self.client, campaign, server_key=self.server_key, signer=self.log_signer())

    async def serve_info(self) -> ServeInfo | None:
        raw = await self.client.execute("GET", SERVE_KEY)
        if raw is None:
            return None
        try:
            return msgspec.json.decode(raw, type=ServeInfo)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return None


def store_signing_key(data_dir: DataDir, *, create: bool = True) -> SigningKey | None:
    """The data dir's Ed25519 key (None with ``create=False`` when it has none yet); one line when it is damaged."""
    try:
        return key_file(data_dir.signing_key_path, create=create)
    except KeyFileError as exc:
        raise CliError(str(exc)) from None


@asynccontextmanager
async def open_store(
    *, redis_url: str | None = None, data_dir: str | os.PathLike[str] | None = None,
    announce: Callable[[str], None] | None = None, client_name: str = "firelane-cli",
) -> AsyncIterator[Store]:
    url = redis_url or os.environ.get("FIRELANE_REDIS_URL")
    directory = DataDir(data_dir) if data_dir else DataDir(default_data_dir())
    if url:
        directory.secure()
        server_key = bytes.fromhex(directory.secrets().log_key)
        client = await connect(url, client_name=client_name)
        try:
            yield Store(client=client, server_key=server_key, data_dir=directory,
                        redis_display=client.url if hasattr(client, "url") else url)
        finally:
            await client.aclose()
        return
    async with shared_server(directory.path, announce=announce) as server:
        server_key = bytes.fromhex(directory.secrets().log_key)
        client = await connect(server.url, client_name=client_name)
        try:
            yield Store(client=client, server_key=server_key, data_dir=directory,
                        redis_display=f"unix://{server.socket_path}", socket_path=server.socket_path, shared=server)
        finally:
            await client.aclose()


@asynccontextmanager
async def open_event_log(
    campaign: str, *, redis_url: str | None = None, data_dir: str | os.PathLike[str] | None = None,
    announce: Callable[[str], None] | None = None,
) -> AsyncIterator[EventLog]:
    """One campaign's log in the store (see `open_store`)."""
    async with open_store(redis_url=redis_url, data_dir=data_dir, announce=announce) as store:
        yield store.event_log(campaign)
