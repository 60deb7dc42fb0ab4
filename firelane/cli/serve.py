"""`firelane serve`: one long-running server per campaign store.

- It owns the data directory's redis-server (one per data dir, shared with any
  other firelane command on it; see firelane.redisio.datadir) or uses ``--redis URL``.
- It runs the engine of every encounter that has not ended: those it finds at
  start, and new ones as they are registered (it follows ``firelane:created``).
  A failed engine restarts with backoff; an encounter another engine holds (a
  `firelane run` in a terminal) is left to it and taken over if it goes away.
- It serves the HTTP/WebSocket API (firelane.web.app) with hypercorn's
  trio worker, and announces itself in Redis (``firelane:serve``) so the other
  commands leave running encounters to it.
- It outlives its redis-server: one that dies (killed, crashed) is started
  again from its AOF (`_keep_redis_up`, under the data dir's start lock), and
  every loop here (the engines, the notices of new encounters, the heartbeats,
  the registration, the API's feeds) waits for Redis and goes on; meanwhile
  the API answers 503 with one line.
- A registration left by a serve that is gone (killed) is taken over at once:
  on the same host, its pid is checked, with the process's start time so a
  reused pid is not mistaken for it.
- SIGINT, SIGTERM or SIGHUP stop it cleanly: engines are cancelled (every
  append is atomic and idempotent, so any point is a safe point), its worker
  processes are stopped, the redis-server is shut down when no other command
  uses it (SHUTDOWN writes the AOF), one line is printed and it exits 0. A
  second signal stops it at once (workers killed, no goodbyes to Redis), with
  no process left either.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys

import msgspec
import trio
from hypercorn.trio import serve as hypercorn_serve

from firelane.actors.hooks import Notifier
from firelane.actors.inbox_hub import InboxHub
from firelane.actors.campaign import stored_gm_token
from firelane.actors.sequencer import seat_token_digests
from firelane.events.log import CAMPAIGNS_KEY
from firelane import stop_signals
from firelane.actors.store import SERVE_KEY, CliError, ServeInfo, Store, open_store
from firelane.web.guard import ServedNames, hypercorn_config
from firelane.web.app import Api, make_app
from firelane.logs import get_logger
from firelane.redisio import RedisError, RedisServerError
from firelane.redisio.datadir import StoreSettings
from firelane.redisio.server import identity_alive, pid_alive, process_identity
from firelane.actors.lease import TAKE_OVER_IF_UNCHANGED
from firelane.actors.host import REDIS_AWAY, EngineHost

log = get_logger("firelane.serve")

_REGISTRATION_TTL_MS = 5000
# Each engine process holds its own Redis connections and takes the data dir's
# lock once at start: a few per core is all that helps.
MAX_WORKERS = 64


def _say(message: str) -> None:
    print(f"firelane serve: {message}", file=sys.stderr, flush=True)


ServeError = CliError




def _gone(other: ServeInfo) -> bool:
    """Whether the serve that registered ``other`` is known to be gone: it ran
    on this host and its process has exited, or its pid now belongs to another
    process (told by the start time). One elsewhere, or from another boot,
    cannot be checked: its registration expires by itself (5 s)."""
    if other.host != socket.gethostname() or other.pid == os.getpid():
        return False
    verdict = identity_alive(other.pid, other.started)
    if verdict is None:
        return not other.started and not pid_alive(other.pid)  # an older serve's registration: by its pid alone
    return not verdict


async def _register(store: Store, info: ServeInfo) -> None:
    """Announce this server in Redis; refuse to run beside another live one,
    and take the place of one that is gone at once."""
    payload = msgspec.json.encode(info)
    for _attempt in range(5):
        if await store.client.execute("SET", SERVE_KEY, payload, "NX", "PX", _REGISTRATION_TTL_MS) is not None:
            return
        raw = await store.client.execute("GET", SERVE_KEY)
        if raw is None:
            continue  # expired meanwhile
        try:
            other: ServeInfo | None = msgspec.json.decode(raw, type=ServeInfo)
        except (msgspec.DecodeError, msgspec.ValidationError):
            other = None
        if other is not None and _gone(other):
            # Replaced only if it is still the one read (that of a serve found gone).
            if await store.client.evalsha_or_load(TAKE_OVER_IF_UNCHANGED, (SERVE_KEY,), (raw, payload, _REGISTRATION_TTL_MS)):
                log.info("took the place of a firelane serve that is gone", pid=other.pid, host=other.host)
                return
            continue  # it changed meanwhile: look again
        where = f"pid {other.pid} on {other.host}, {other.api}" if other else "another process"
        raise ServeError(f"this store is already served by another firelane serve ({where})")
    raise ServeError("this store's registration keeps changing: is another firelane serve starting on it?")


_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) and 1 or 0
"""

_UNREGISTER = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""


async def _keep_registered(store: Store, info: ServeInfo) -> None:
    payload = msgspec.json.encode(info)
    while True:
        await trio.sleep(_REGISTRATION_TTL_MS / 3000)
        try:
            await store.client.evalsha_or_load(_RENEW, (SERVE_KEY,), (payload, _REGISTRATION_TTL_MS))
        except REDIS_AWAY:
            pass  # Redis is away: registered again (SET NX) once it is back


_REDIS_CHECK_S = 0.2


async def _keep_redis_up(store: Store) -> None:
    """Embedded mode: a redis-server that dies (killed, crashed) is started again
    from its AOF, so every acknowledged command is back (all of them with
    ``--appendfsync always``), and the engines resume from their logs. Done
    under the data dir's start lock (`SharedServer.restart_if_down`): a server
    of this data dir that is alive but slow is never doubled, and of several
    processes that notice, one starts it."""
    assert store.shared is not None
    failures = 0
    while True:
        await trio.sleep(_REDIS_CHECK_S)
        try:
            with trio.fail_after(2):
                await store.client.execute("PING")
            failures = 0
            continue
        except (*REDIS_AWAY, trio.TooSlowError):
            pass
        try:
            if await store.shared.restart_if_down(announce=_say):
                drop_idle = getattr(store.client, "drop_idle_connections", None)
                if drop_idle is not None:
                    drop_idle()  # each would fail one call: they were the dead server's
        except (RedisServerError, OSError) as exc:
            failures += 1
            log.warning("cannot restart the redis-server; trying again", error=str(exc).splitlines()[0][:300])
            await trio.sleep(min(5.0, float(failures)))


SEALED_MARK_KEY = "firelane:tokens-sealed"


async def _seal_tokens_kept_in_clear(store: Store) -> None:
    """Once per store: seal the seat and GM tokens an older firelane kept in
    clear (they go on working), then have Redis rewrite its AOF so no file
    keeps them any more."""
    client = store.client
    if await client.execute("EXISTS", SEALED_MARK_KEY):
        return
    for raw_campaign in await client.execute("SMEMBERS", CAMPAIGNS_KEY) or []:
        try:
            event_log = store.event_log(raw_campaign.decode())
        except ValueError:
            continue
        for encounter in await event_log.encounters():
            await seat_token_digests(event_log, encounter)  # seals in place what is in clear
        await stored_gm_token(event_log)
    try:
        await client.execute("BGREWRITEAOF")
    except RedisError as exc:
        if "already in progress" not in str(exc):
            log.warning("cannot rewrite the AOF; tokens an older firelane kept in clear stay in it until the "
                        "next rewrite", error=str(exc)[:300])
    await client.execute("SET", SEALED_MARK_KEY, "1")


async def _apply_settings(store: Store, args: argparse.Namespace) -> StoreSettings:
    """Keep --appendfsync and --redis-port in the data dir and apply them to
    the running redis-server (embedded mode only)."""
    settings = store.data_dir.settings()
    if store.socket_path is None:
        if args.appendfsync or args.redis_port:
            raise ServeError("--appendfsync and --redis-port configure the embedded redis-server; "
                             "with --redis URL, configure your Redis itself")
        return settings
    changed = False
    if args.appendfsync and args.appendfsync != settings.appendfsync:
        settings = msgspec.structs.replace(settings, appendfsync=args.appendfsync)
        changed = True
    if args.redis_port is not None and args.redis_port != settings.redis_port:
        settings = msgspec.structs.replace(settings, redis_port=args.redis_port or None)
        changed = True
    try:
        await store.client.execute("CONFIG", "SET", "appendfsync", settings.appendfsync)
        if settings.redis_port:
            await store.client.execute("CONFIG", "SET", "bind", settings.redis_host)
            await store.client.execute("CONFIG", "SET", "port", settings.redis_port)
    except RedisError as exc:
        # Not kept: a setting the server refuses would stop it from starting next time.
        raise ServeError(f"the redis-server refused the settings: {exc}") from None
    if changed:
        store.data_dir.save_settings(settings)
    return settings


def _worker_command(args: argparse.Namespace) -> list[str]:
    command = [sys.executable, "-m", "firelane", "serve", "--engine-only", "--workers", str(args.workers)]
    if args.redis:
        command += ["--redis", args.redis]
    if args.data_dir:
        command += ["--data-dir", str(args.data_dir)]
    if args.log:
        command += ["--log", args.log]
    if args.allow_private_hooks:
        command += ["--allow-private-hooks"]
    return command


# What a terminal sends its whole foreground group (Ctrl-C; a hangup): the
# serve that started the workers stops them itself (SIGTERM), so they must not
# also stop on their own, nor print a traceback when it lands while they load.
_SIGNALS_FOR_SERVE = {signal.SIGINT, signal.SIGHUP}


def _start_worker(args: argparse.Namespace) -> subprocess.Popen[bytes]:
    """An engine worker, started with SIGINT and SIGHUP blocked: a signal mask,
    unlike a handler, survives exec, so it holds from the worker's first instruction."""
    held = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS_FOR_SERVE)
    try:
        return subprocess.Popen(_worker_command(args), stdin=subprocess.DEVNULL)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


async def _keep_workers(args: argparse.Namespace, count: int) -> None:
    """Run ``count`` engine-only worker processes beside this one; restart one
    that dies (its encounters are taken over meanwhile by the other hosts).
    Stopping, they are asked to stop (SIGTERM) and given 15 s, or killed at
    once on a second signal: none outlives this process."""
    workers: list[subprocess.Popen[bytes]] = []
    try:
        for _ in range(count):
            workers.append(_start_worker(args))
        while True:
            await trio.sleep(1)
            for index, worker in enumerate(workers):
                if worker.poll() is not None:
                    log.warning("engine worker exited; starting another", pid=worker.pid, code=worker.returncode)
                    workers[index] = _start_worker(args)
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.terminate()
        with stop_signals.cleanup_scope(timeout=15):
            for worker in workers:
                while worker.poll() is None:
                    await trio.sleep(0.05)
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
                worker.wait()


def _check_bindable(host: str, port: int) -> None:
    """One line naming the address when the HTTP API cannot listen there (the
    web server would only fail deep inside its nursery); nothing is started yet."""
    try:
        family, kind, proto, _name, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the web server binds
            probe.bind(address)
    except OSError as exc:  # socket.gaierror included
        raise ServeError(f"cannot serve HTTP on {host}:{port}: {exc.strerror or exc}") from None


async def serve(args: argparse.Namespace) -> int:
    if not 1 <= args.workers <= MAX_WORKERS:
        raise ServeError(f"--workers must be from 1 to {MAX_WORKERS}, not {args.workers}")
    if args.engine_only:
        return await _engine_only(args)
    _check_bindable(args.host, args.port)
    try:
        names = ServedNames([args.host, *args.allowed_host])  # the Host headers answered
    except ValueError as exc:
        raise ServeError(f"--host: {exc}") from None
    host: EngineHost | None = None
    try:
        async with open_store(redis_url=args.redis, data_dir=args.data_dir, client_name="firelane-serve") as store:
            settings = await _apply_settings(store, args)
            await _seal_tokens_kept_in_clear(store)
            config = hypercorn_config(args.host, args.port)
            host = EngineHost(store, expected_hosts=args.workers)
            stopping = trio.Event()
            try:
                async with trio.open_nursery() as nursery:
                    api = Api(store, nursery)
                    api.allow_private_hooks = args.allow_private_hooks
                    # The webhooks of this process's engines (actors/hooks.py): never in their way.
                    nursery.start_soon(Notifier(store.client, allow_private=args.allow_private_hooks).run)
                    # The engines' waits for commands share a few connections (actors/inbox_hub.py).
                    nursery.start_soon(InboxHub(store.client).run)
                    binds = await nursery.start(lambda task_status: hypercorn_serve(
                        make_app(api, names), config, shutdown_trigger=stopping.wait, task_status=task_status))
                    names.add_urls(binds)  # the announced address, which the join links use
                    api_url = binds[0].rstrip("/") if binds else f"http://{args.host}:{args.port}"
                    redis_for_seats = (f"redis://{settings.redis_host}:{settings.redis_port}" if settings.redis_port
                                       else (f"unix://{store.socket_path}" if store.socket_path else store.redis_display))
                    info = ServeInfo(pid=os.getpid(), host=socket.gethostname(), api=api_url, redis=redis_for_seats,
                                     started=process_identity(os.getpid()))
                    await _register(store, info)
                    try:
                        nursery.start_soon(_keep_registered, store, info)
                        if store.shared is not None:
                            nursery.start_soon(_keep_redis_up, store)
                        if args.workers > 1:
                            nursery.start_soon(_keep_workers, args, args.workers - 1)
                        nursery.start_soon(host.run, nursery)
                        where = "" if store.socket_path is None else f" ({store.data_dir.path})"
                        binary = ""
                        if store.socket_path is not None:
                            binary = f"{store.data_dir.binary().describe()} — "
                        workers = f"; {args.workers} engine processes" if args.workers > 1 else ""
                        _say(f"{binary}Redis at {redis_for_seats}{where}; API and table at {api_url}/ "
                             f"(appendfsync {settings.appendfsync}{workers}); Ctrl-C stops")
                        await trio.sleep_forever()
                    finally:
                        with stop_signals.cleanup_scope(timeout=5):
                            try:
                                await store.client.evalsha_or_load(_UNREGISTER, (SERVE_KEY,), (msgspec.json.encode(info),))
                            except REDIS_AWAY:
                                pass  # it expires by itself
            finally:
                stopping.set()
    finally:
        if stop_signals.requested():
            # Said once everything has stopped (the redis-server too, when nobody else uses it).
            stop_signals.announce(_stopped_line(host))
    return 0


def _stopped_line(host: EngineHost | None) -> str:
    if host is None:
        return "firelane serve: stopped before serving; nothing was running"
    # Counted as each engine stops: by now every encounter's task has ended.
    live = host.interrupted + sum(1 for status in host.running.values() if status == "running")
    how = "stopped at once" if stop_signals.forced() else "stopped"
    return (f"firelane serve: {how}; {live} running encounter{'s' if live != 1 else ''} safe in the log, "
            f"{host.finished} finished while serving")


async def _stop_when_orphaned(parent: int, scope: trio.CancelScope) -> None:
    """A worker whose serve is gone (killed with kill -9, which it cannot
    answer) stops: it must not run on, unseen, beside the next serve."""
    while os.getppid() == parent:
        await trio.sleep(0.5)
    log.warning("the firelane serve that started this worker is gone; stopping", parent=parent)
    scope.cancel()


async def _engine_only(args: argparse.Namespace) -> int:
    """One more engine process of a `firelane serve --workers N` (started by it)."""
    parent = os.getppid()
    async with open_store(redis_url=args.redis, data_dir=args.data_dir, client_name="firelane-worker") as store:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_stop_when_orphaned, parent, nursery.cancel_scope)
            nursery.start_soon(Notifier(store.client, allow_private=args.allow_private_hooks).run)
            nursery.start_soon(InboxHub(store.client).run)  # the engines' waits share a few connections
            await EngineHost(store, expected_hosts=args.workers).run(nursery)
    return 0
