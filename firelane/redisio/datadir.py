"""One redis-server per data directory, shared by every firelane process on it.

A data directory holds a campaign store: the redis-server's append-only file,
the secrets (the default user's password and the key that signs log entries),
the store's Ed25519 key (``signing-key.pem``: it signs exports, and its
fingerprint names the store), the pinned binary, and the store's settings. Any number of firelane processes
may use one data directory at once (`firelane serve`, `firelane run`, `watch`,
`audit`...). They share exactly one redis-server:

- ``.start.lock`` (an exclusive flock) serialises starting and stopping, so
  twenty processes started together start one server, not twenty;
- ``.users.lock`` is held *shared* by every process while it uses the server;
  on exit, a process that can then take it *exclusively* is the last user and
  shuts the server down (SHUTDOWN writes the AOF). A killed process's locks are
  released by the kernel, so a crash never blocks the others;
- the server runs in a session of its own (``start_new_session``): Ctrl-C in
  the terminal of the process that happened to start it, or that process's
  death, does not stop it while others use it.

The first use pins the binary (path, flavour, version) in ``redis-server.json``;
later uses run the pinned binary whatever the PATH says, and refuse to run on
a different version (an AOF written by one may not load in the other).
"""

from __future__ import annotations

import fcntl
import os
import secrets
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import msgspec
import trio

from firelane.events.public_signing import SigningKey
from firelane.redisio.server import (
    APPENDFSYNC_CHOICES,
    EmbeddedRedis,
    RedisBinary,
    RedisServerError,
    find_redis_server,
    pid_alive,
    probe_binary,
    request_sync,
)

__all__ = ["DataDir", "DataDirError", "StoreSettings", "shared_server"]

_LOCK_POLL_S = 0.02
_LOCK_TIMEOUT_S = 60.0


class DataDirError(RedisServerError):
    """The data directory cannot be used as it is (a pinned binary missing or different, bad settings)."""


class Secrets(msgspec.Struct, kw_only=True):
    admin_password: str
    log_key: str  # hex; per-campaign keys are derived from it (see firelane.events.signing)


class StoreSettings(msgspec.Struct, kw_only=True):
    appendfsync: str = "everysec"
    redis_port: int | None = None  # a TCP port on 127.0.0.1 for direct (seat) clients; None = socket only
    redis_host: str = "127.0.0.1"


class PinnedBinary(msgspec.Struct, kw_only=True):
    path: str
    flavour: str
    version: str


class DataDir:
    """Files of one data directory (absolute path, created on first use)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).expanduser().resolve()

    @property
    def socket_path(self) -> Path:
        return self.path / "redis.sock"

    def ensure(self) -> None:
        self.path.mkdir(parents=True, exist_ok=True, mode=0o700)

    # -- secrets -----------------------------------------------------------

    def secrets(self) -> Secrets:
        """The store's secrets, created (mode 600) on first use."""
        path = self.path / "secrets.json"
        try:
            return msgspec.json.decode(path.read_bytes(), type=Secrets)
        except FileNotFoundError:
            pass
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise DataDirError(f"{path} is damaged ({exc}); restore it from a backup") from None
        created = Secrets(admin_password=secrets.token_urlsafe(32), log_key=secrets.token_hex(32))
        self.ensure()
        temporary = path.with_suffix(".tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(msgspec.json.encode(created))
        try:
            # link, not rename: if another process created it meanwhile, keep theirs.
            os.link(temporary, path)
        except FileExistsError:
            pass
        finally:
            temporary.unlink(missing_ok=True)
        return msgspec.json.decode(path.read_bytes(), type=Secrets)

    # -- the store's public-key signing key ----------------------------------

    def signing_key(self, *, create: bool = True) -> SigningKey | None:
        """The store's Ed25519 key (``signing-key.pem``, mode 600): it signs
        what the store exports, and its fingerprint names the store. Created on
        first use, safely when several processes start at once (the first one's
        key is kept). With ``create=False``, None when the store has none yet."""
        path = self.path / "signing-key.pem"
        try:
            return SigningKey.from_pem(path.read_bytes())
        except FileNotFoundError:
            if not create:
                return None
        except ValueError as exc:
            raise DataDirError(f"{path} is damaged ({exc}); restore it from a backup") from None
        self.ensure()
        temporary = path.with_name(f".signing-key.{os.getpid()}.{secrets.token_hex(4)}.tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(SigningKey.generate().to_pem())
            handle.flush()
            os.fsync(handle.fileno())
        try:
            # link, not rename: if another process created it meanwhile, keep theirs.
            os.link(temporary, path)
        except FileExistsError:
            pass
        finally:
            temporary.unlink(missing_ok=True)
        return SigningKey.from_pem(path.read_bytes())

    # -- settings ----------------------------------------------------------

    def settings(self) -> StoreSettings:
        path = self.path / "settings.json"
        try:
            settings = msgspec.json.decode(path.read_bytes(), type=StoreSettings)
        except FileNotFoundError:
            return StoreSettings()
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise DataDirError(f"{path} is not valid: {exc}") from None
        if settings.appendfsync not in APPENDFSYNC_CHOICES:
            raise DataDirError(f"{path}: appendfsync must be one of {', '.join(APPENDFSYNC_CHOICES)}")
        return settings

    def save_settings(self, settings: StoreSettings) -> None:
        self.ensure()
        path = self.path / "settings.json"
        temporary = path.with_suffix(".tmp")
        temporary.write_bytes(msgspec.json.format(msgspec.json.encode(settings)))
        temporary.replace(path)

    # -- the pinned binary -------------------------------------------------

    def binary(self) -> RedisBinary:
        """The binary this data dir runs: the pinned one, or (first use) the
        one found now, which gets pinned."""
        pin_path = self.path / "redis-server.json"
        try:
            pinned = msgspec.json.decode(pin_path.read_bytes(), type=PinnedBinary)
        except FileNotFoundError:
            pinned = None
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise DataDirError(f"{pin_path} is damaged ({exc})") from None
        requested = os.environ.get("FIRELANE_REDIS_SERVER")
        if pinned is None:
            binary = probe_binary(find_redis_server())
            self.ensure()
            pin_path.write_bytes(msgspec.json.format(msgspec.json.encode(
                PinnedBinary(path=binary.path, flavour=binary.flavour, version=binary.version))))
            return binary
        wanted = f"{'Valkey' if pinned.flavour == 'valkey' else 'Redis'} {pinned.version} ({pinned.path})"
        candidate_path = requested or pinned.path
        if not os.path.isfile(candidate_path):
            raise DataDirError(
                f"the data dir {self.path} was created with {wanted}, which is no longer there; "
                f"set FIRELANE_REDIS_SERVER to a {pinned.flavour} {pinned.version} binary"
            )
        binary = probe_binary(candidate_path)
        if (binary.flavour, binary.version) != (pinned.flavour, pinned.version):
            raise DataDirError(
                f"the data dir {self.path} was created with {wanted}, but {binary.describe()} would run it; "
                f"its data files may not load in another version: set FIRELANE_REDIS_SERVER to the pinned binary"
            )
        return binary


@dataclass
class SharedServer:
    """What a user of a data directory's server gets."""

    data_dir: DataDir
    binary: RedisBinary
    url: str  # unix socket URL with the admin password (keep it out of logs)
    started_here: bool
    settings: StoreSettings

    @property
    def socket_path(self) -> str:
        return str(self.data_dir.socket_path)


class _Flock:
    """A flock on a file, taken by polling (so trio stays responsive and cancellable)."""

    def __init__(self, path: Path) -> None:
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)

    def try_lock(self, mode: int) -> bool:
        try:
            fcntl.flock(self.fd, mode | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            return False

    async def lock(self, mode: int, what: str) -> None:
        deadline = time.monotonic() + _LOCK_TIMEOUT_S
        while not self.try_lock(mode):
            if time.monotonic() > deadline:
                raise DataDirError(f"timed out waiting for {what}")
            await trio.sleep(_LOCK_POLL_S)

    def unlock(self) -> None:
        fcntl.flock(self.fd, fcntl.LOCK_UN)

    def close(self) -> None:
        os.close(self.fd)


def _answers(data_dir: DataDir, password: str) -> bool:
    try:
        return request_sync(str(data_dir.socket_path), "PING", timeout=2.0, password=password) == b"PONG"
    except RedisServerError as exc:
        if "LOADING" in str(exc):
            return True  # up, still reading its AOF: it is the one to use
        return False
    except OSError:
        return False


def _exit_reason(data_dir: DataDir) -> str:
    """What a redis-server that exited at start said last: the line of its log
    after a FATAL banner (e.g. a bad setting), else its last line."""
    try:
        lines = [line.strip() for line in (data_dir.path / "redis-server.log").read_text(errors="replace").splitlines()]
    except OSError:
        return "no log"
    lines = [line for line in lines if line]
    fatal = [index for index, line in enumerate(lines) if "FATAL" in line]
    if fatal:  # the last start's FATAL CONFIG FILE ERROR: the setting (">>> 'port 99999'") and why
        after = lines[fatal[-1] + 1:]
        setting = [line.removeprefix(">>>").strip() for line in after if line.startswith(">>>")]
        reason = [line for line in after if not line.startswith((">>>", "Reading the configuration"))]
        return ": ".join(setting[:1] + reason[:1]) or lines[fatal[-1]]
    return lines[-1] if lines else "an empty log"


async def _wait_until_ready(data_dir: DataDir, password: str, timeout: float = 30.0,
                            server: EmbeddedRedis | None = None) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            if request_sync(str(data_dir.socket_path), "PING", timeout=2.0, password=password) == b"PONG":
                return
        except (OSError, RedisServerError):
            pass
        process = server._process if server is not None else None
        if process is not None and process.poll() is not None:
            raise DataDirError(f"the redis-server of {data_dir.path} exited as it started (code {process.returncode}): "
                               f"{_exit_reason(data_dir)} (see {data_dir.path / 'redis-server.log'})")
        if time.monotonic() > deadline:
            raise DataDirError(f"the redis-server of {data_dir.path} did not become ready within {timeout}s")
        await trio.sleep(0.02)


def _server_pid(data_dir: DataDir) -> int | None:
    try:
        return int((data_dir.path / "redis-server.pid").read_text().strip())
    except (OSError, ValueError):
        return None


async def _shutdown(data_dir: DataDir, password: str, timeout: float = 30.0) -> None:
    """SHUTDOWN (which fsyncs the AOF) and wait until the process is gone."""
    pid = _server_pid(data_dir)
    try:
        request_sync(str(data_dir.socket_path), "SHUTDOWN", timeout=timeout, password=password)
    except (OSError, RedisServerError):
        pass  # the connection closes as the server exits
    deadline = time.monotonic() + timeout
    while pid is not None and pid_alive(pid):
        try:
            os.waitpid(pid, os.WNOHANG)  # reap it if it is our child
        except ChildProcessError:
            pass
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            break
        await trio.sleep(0.02)


@asynccontextmanager
async def shared_server(path: str | os.PathLike[str], *, announce=None) -> AsyncIterator[SharedServer]:
    """Use the data directory's redis-server, starting it if none runs; stop
    it on exit if this was its last user. ``announce(str)`` gets one line when
    a server is started."""
    data_dir = DataDir(path)
    data_dir.ensure()
    start_lock = _Flock(data_dir.path / ".start.lock")
    users_lock = _Flock(data_dir.path / ".users.lock")
    started_here = False
    try:
        await start_lock.lock(fcntl.LOCK_EX, f"the data dir {data_dir.path} (another firelane is starting or stopping its server)")
        try:
            secrets_ = data_dir.secrets()
            settings = data_dir.settings()
            binary = data_dir.binary()
            # Shared: other users may hold it too; the last one out stops the server.
            await users_lock.lock(fcntl.LOCK_SH, "the data dir's user lock")
            if not _answers(data_dir, secrets_.admin_password):
                server = EmbeddedRedis(
                    data_dir.path, persist=True, binary=binary.path, password=secrets_.admin_password,
                    appendfsync=settings.appendfsync, tcp_port=settings.redis_port, tcp_host=settings.redis_host,
                    detached=True,
                    # The ACL users of seats survive restarts in this file.
                    acl_file=data_dir.path / "users.acl",
                )
                server._spawn()
                await _wait_until_ready(data_dir, secrets_.admin_password, server=server)
                started_here = True
                if announce:
                    announce(f"started {binary.describe()} for {data_dir.path}")
        finally:
            start_lock.unlock()
        yield SharedServer(
            data_dir=data_dir, binary=binary, started_here=started_here, settings=settings,
            url=f"unix://:{secrets_.admin_password}@{data_dir.socket_path}",
        )
    finally:
        with trio.CancelScope(shield=True):
            try:
                await start_lock.lock(fcntl.LOCK_EX, f"the data dir {data_dir.path} to stop its server")
                users_lock.unlock()
                if users_lock.try_lock(fcntl.LOCK_EX):
                    # Nobody else uses it: stop it cleanly (its AOF is flushed).
                    if _answers(data_dir, data_dir.secrets().admin_password):
                        await _shutdown(data_dir, data_dir.secrets().admin_password)
                    users_lock.unlock()
                start_lock.unlock()
            finally:
                users_lock.close()
                start_lock.close()

