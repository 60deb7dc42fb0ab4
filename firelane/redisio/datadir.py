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

Privacy: the directory holds secrets (the running fights' seeds in the AOF,
the store's keys), so it is this user's alone whoever made it: every use
tightens it (folders 700, files 600; `DataDir.secure`), or refuses with one
line when it cannot (a directory of another user). Firelane writes its own
files 600, and the redis-server runs with umask 077, so what it writes or
rewrites later (the AOF directory and files, users.acl, its pid file) is
private from the start.
"""

from __future__ import annotations

import fcntl
import os
import secrets
import signal
import stat
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import msgspec
import trio

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

    def secure(self) -> None:
        """Make the directory private, whoever made it: this user's own, every
        folder in it 700 and every file firelane or its redis-server writes
        there 600 (a store written by an older firelane, or made with
        ``mkdir -m 755``, is tightened). DataDirError (one line) when it cannot
        be: another user's directory or file. Files it did not write (a data
        dir given by mistake, e.g. a home directory) are left as they are."""
        self.ensure()
        _make_private(self.path)  # first: a folder is listed before its entries are seen to
        for entry in os.scandir(self.path):
            if entry.name == _AOF_FOLDER:
                _make_private(Path(entry.path))
                for directory, folders, files in os.walk(entry.path):
                    for name in (*folders, *files):
                        _make_private(Path(directory) / name)
            elif _written_by_a_store(entry.name):
                _make_private(Path(entry.path))

    def write_private(self, name: str, data: bytes) -> None:
        """Replace the file ``name`` of the directory with ``data``, atomically
        and readable by this user only (mode 600), whatever the umask."""
        self.ensure()
        fd, temporary = tempfile.mkstemp(dir=self.path, prefix=f".{name}.", suffix=".tmp")  # mkstemp: mode 600
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(temporary, self.path / name)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise

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
        fd, temporary = tempfile.mkstemp(dir=self.path, prefix=".secrets.", suffix=".tmp")  # mode 600
        with os.fdopen(fd, "wb") as handle:
            handle.write(msgspec.json.encode(created))
        try:
            # link, not rename: if another process created it meanwhile, keep theirs.
            os.link(temporary, path)
        except FileExistsError:
            pass
        finally:
            Path(temporary).unlink(missing_ok=True)
        return msgspec.json.decode(path.read_bytes(), type=Secrets)

    # -- the store's public-key signing key ----------------------------------

    @property
    def signing_key_path(self) -> Path:
        """The store's Ed25519 key (mode 600; events/public_signing.py's `key_file` reads and makes it)."""
        return self.path / "signing-key.pem"

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
        self.write_private("settings.json", msgspec.json.format(msgspec.json.encode(settings)))

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
            self.write_private(pin_path.name, msgspec.json.format(msgspec.json.encode(
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


_AOF_FOLDER = "appendonlydir"  # Redis 7's multi-part AOF


def _written_by_a_store(name: str) -> bool:
    """Whether a file of the data dir is one firelane or its redis-server writes:
    the secrets, settings, pins and keys (JSON, PEM), locks and temporary files,
    the ACL file, the server's log, pid file and socket, an AOF or RDB (and the
    temporary files Redis rewrites them through)."""
    return (name.endswith((".json", ".pem", ".lock", ".tmp", ".acl", ".aof", ".rdb", ".conf"))
            or name.startswith(("redis", "users.acl", "appendonly", "temp-", "dump")))


def _make_private(path: Path) -> None:
    """This user's own path, 700 for a folder, 600 at most for a file; DataDirError otherwise."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return  # the redis-server replaced it meanwhile (an AOF rewrite), privately
    if stat.S_ISLNK(info.st_mode):
        return  # not ours to change: chmod would follow it out of the directory
    me = os.geteuid()
    if info.st_uid != me:
        raise DataDirError(
            f"{path} belongs to another user (uid {info.st_uid}); a data dir holds secrets, so all of it must "
            f"belong to the user running firelane (uid {me}): use another --data-dir")
    mode = stat.S_IMODE(info.st_mode)
    private = 0o700 if stat.S_ISDIR(info.st_mode) else mode & 0o600
    if mode == private:
        return
    try:
        os.chmod(path, private)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise DataDirError(f"cannot make {path} private (mode {private:o}): {exc.strerror}") from None


@dataclass
class SharedServer:
    """What a user of a data directory's server gets."""

    data_dir: DataDir
    binary: RedisBinary
    url: str  # unix socket URL with the admin password (keep it out of logs)
    started_here: bool
    settings: StoreSettings
    secrets: Secrets

    @property
    def socket_path(self) -> str:
        return str(self.data_dir.socket_path)

    async def restart_if_down(self, announce: Callable[[str], None] | None = None) -> bool:
        """Start the data dir's redis-server again if it is gone (killed, crashed):
        it loads its AOF, so everything acknowledged is back. Taken under the
        start lock, like a first start, so of all the processes that notice,
        one starts it and the others find it running; a server of this data
        dir that is alive but not answering (loading, busy) is waited for,
        never doubled. True if this call started it."""
        start_lock = _Flock(self.data_dir.path / ".start.lock")
        try:
            await start_lock.lock(fcntl.LOCK_EX, f"the data dir {self.data_dir.path} (another firelane is starting or stopping its server)")
            try:
                started = await _start_unless_running(self.data_dir, self.secrets, self.settings, self.binary)
            finally:
                start_lock.unlock()
        finally:
            start_lock.close()
        if started and announce:
            announce(f"restarted {self.binary.describe()} for {self.data_dir.path} from its append-only file")
        return started


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


async def _answers(data_dir: DataDir, password: str) -> bool:
    """Whether the data dir's server answers (or is loading its AOF). In a
    thread: a server that is alive but frozen would hold the caller for the
    probe's whole timeout."""
    return await trio.to_thread.run_sync(_answers_now, data_dir, password)


def _answers_now(data_dir: DataDir, password: str) -> bool:
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
                            server: EmbeddedRedis | None = None, pid: int | None = None) -> None:
    """Until the server answers PING (its AOF loaded). ``server``/``pid``: the
    process, so that one exiting is reported at once (with why, from its log)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if await trio.to_thread.run_sync(
                    lambda: request_sync(str(data_dir.socket_path), "PING", timeout=2.0, password=password)) == b"PONG":
                return
        except (OSError, RedisServerError):
            pass
        process = server._process if server is not None else None
        if process is not None and process.poll() is not None:
            raise DataDirError(f"the redis-server of {data_dir.path} exited as it started (code {process.returncode}): "
                               f"{_exit_reason(data_dir)} (see {data_dir.path / 'redis-server.log'})")
        if pid is not None and not _alive(pid):
            raise DataDirError(f"the redis-server of {data_dir.path} (pid {pid}) exited before it was ready: "
                               f"{_exit_reason(data_dir)} (see {data_dir.path / 'redis-server.log'})")
        if time.monotonic() > deadline:
            raise DataDirError(f"the redis-server of {data_dir.path} did not become ready within {timeout}s")
        await trio.sleep(0.02)


def _server_pid(data_dir: DataDir) -> int | None:
    try:
        return int((data_dir.path / "redis-server.pid").read_text().strip())
    except (OSError, ValueError):
        return None


def _alive(pid: int) -> bool:
    """Whether the process runs (reaped first if it is our child that exited: a zombie is not running)."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass
    return pid_alive(pid)


def _running_server(data_dir: DataDir) -> int | None:
    """The pid of this data dir's redis-server if one runs, answering or not
    (by its pid file; a pid since taken by another process is not it: Redis
    runs in its data dir, which /proc tells)."""
    pid = _server_pid(data_dir)
    if pid is None or not _alive(pid):
        return None
    try:
        working_in = Path(os.readlink(f"/proc/{pid}/cwd"))
    except (FileNotFoundError, ProcessLookupError):
        return None  # gone meanwhile
    except OSError:
        return pid  # no /proc here, or not ours to look at: trust the pid file
    return pid if working_in == data_dir.path else None


async def _start_unless_running(data_dir: DataDir, secrets_: Secrets, settings: StoreSettings,
                                binary: RedisBinary) -> bool:
    """Start the data dir's redis-server unless one answers or still runs (then
    wait for it to answer). Call it holding the start lock. True if started here.
    A start interrupted (cancelled, a signal) stops the server it began: nobody
    else can be using it yet, and it must not outlive this process unseen."""
    if await _answers(data_dir, secrets_.admin_password):
        return False
    pid = _running_server(data_dir)
    if pid is not None:  # alive, not answering yet (loading its AOF, busy): never a second one on the same files
        await _wait_until_ready(data_dir, secrets_.admin_password, pid=pid)
        return False
    server = EmbeddedRedis(
        data_dir.path, persist=True, binary=binary.path, password=secrets_.admin_password,
        appendfsync=settings.appendfsync, tcp_port=settings.redis_port, tcp_host=settings.redis_host,
        detached=True,
        # The ACL users of seats survive restarts in this file.
        acl_file=data_dir.path / "users.acl",
    )
    server._spawn()
    try:
        await _wait_until_ready(data_dir, secrets_.admin_password, server=server)
    except BaseException:
        process = server._process
        if process is not None and process.poll() is None:
            with trio.CancelScope(shield=True):
                await _stop_process(process.pid, timeout=10)
        raise
    return True


async def _stop_process(pid: int, timeout: float) -> None:
    """SIGTERM (Redis then writes its AOF and exits, as on SHUTDOWN), SIGKILL after ``timeout``."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout
    while _alive(pid):
        if time.monotonic() > deadline:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            return
        await trio.sleep(0.02)


async def _shutdown(data_dir: DataDir, password: str, timeout: float = 30.0) -> None:
    """Stop the data dir's server, answering or not: SHUTDOWN (which fsyncs
    the AOF), or SIGTERM to one that does not answer (still loading its AOF),
    and wait until the process is gone (SIGKILL after a further 10 s)."""
    pid = _running_server(data_dir)
    if await _answers(data_dir, password):
        try:
            await trio.to_thread.run_sync(
                lambda: request_sync(str(data_dir.socket_path), "SHUTDOWN", timeout=timeout, password=password))
        except (OSError, RedisServerError):
            pass  # the connection closes as the server exits
        deadline = time.monotonic() + timeout
        while pid is not None and _alive(pid) and time.monotonic() < deadline:
            await trio.sleep(0.02)
    if pid is not None and _alive(pid):
        await _stop_process(pid, timeout=10)


@asynccontextmanager
async def shared_server(path: str | os.PathLike[str], *, announce=None) -> AsyncIterator[SharedServer]:
    """Use the data directory's redis-server, starting it if none runs; stop
    it on exit if this was its last user. ``announce(str)`` gets one line when
    a server is started."""
    data_dir = DataDir(path)
    data_dir.secure()
    start_lock = _Flock(data_dir.path / ".start.lock")
    users_lock = _Flock(data_dir.path / ".users.lock")
    try:
        await start_lock.lock(fcntl.LOCK_EX, f"the data dir {data_dir.path} (another firelane is starting or stopping its server)")
        try:
            secrets_ = data_dir.secrets()
            settings = data_dir.settings()
            binary = data_dir.binary()
            # Shared: other users may hold it too; the last one out stops the server.
            await users_lock.lock(fcntl.LOCK_SH, "the data dir's user lock")
            started_here = await _start_unless_running(data_dir, secrets_, settings, binary)
            if started_here and announce:
                announce(f"started {binary.describe()} for {data_dir.path}")
        finally:
            start_lock.unlock()
        yield SharedServer(
            data_dir=data_dir, binary=binary, started_here=started_here, settings=settings, secrets=secrets_,
            url=f"unix://:{secrets_.admin_password}@{data_dir.socket_path}",
        )
    finally:
        with trio.CancelScope(shield=True):
            try:
                await start_lock.lock(fcntl.LOCK_EX, f"the data dir {data_dir.path} to stop its server")
                users_lock.unlock()
                if users_lock.try_lock(fcntl.LOCK_EX):
                    # Nobody else uses it: stop it cleanly (its AOF is flushed),
                    # answering or not (one still loading its AOF is stopped too).
                    await _shutdown(data_dir, data_dir.secrets().admin_password)
                    users_lock.unlock()
                start_lock.unlock()
            finally:
                users_lock.close()
                start_lock.close()
