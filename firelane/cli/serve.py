"""`firelane serve`: one long-running server per campaign store.

- It owns the data directory's redis-server (one per data dir, shared with any
  other firelane command on it; see firelane.redisio.datadir) or uses ``--redis URL``.
- It runs the engine of every encounter that has not ended: those it finds at
  start, and new ones as they are registered (it follows ``firelane:created``).
  A failed engine restarts with backoff; an encounter another engine holds (a
  `firelane run` in a terminal) is left to it and taken over if it goes away.
- It serves the HTTP/WebSocket API (firelane.web.encounters) with hypercorn's
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
from dataclasses import dataclass, field

import msgspec
import trio
from hypercorn.trio import serve as hypercorn_serve

from firelane.actors.campaign import stored_gm_token
from firelane.actors.lease import EncounterBusy
from firelane.actors.runtime import default_policies, run_encounter
from firelane.actors.seating import close_seats, provision_seat_users
from firelane.actors.sequencer import encounter_setup, seat_token_digests
from firelane.engine.registry import get_system
from firelane.engine.seats import default_seats
from firelane.events.log import CAMPAIGNS_KEY, CREATED_KEY, EventLog, LogTampered
from firelane.cli import signals as stop_signals
from firelane.actors.store import SERVE_KEY, CliError, ServeInfo, Store, open_store
from firelane.web.guard import ServedNames, hypercorn_config
from firelane.web.encounters import Api, make_app
from firelane.logs import get_logger
from firelane.redisio import RedisConnectionError, RedisError, RedisServerError
from firelane.redisio.datadir import StoreSettings
from firelane.redisio.server import identity_alive, pid_alive, process_identity

log = get_logger("firelane.serve")

_REGISTRATION_TTL_MS = 5000
_BACKOFF_S = (0.5, 1, 2, 5, 10, 30)
# Each engine process holds its own Redis connections and takes the data dir's
# lock once at start: a few per core is all that helps.
MAX_WORKERS = 64


def _say(message: str) -> None:
    print(f"firelane serve: {message}", file=sys.stderr, flush=True)


ServeError = CliError


async def _ended(event_log: EventLog, encounter: str) -> bool:
    """Whether the encounter is over (its seed is revealed: nothing is left to run)."""
    page = await event_log.client.execute("XREVRANGE", event_log.log_key(encounter), "+", "-", "COUNT", 8)
    return any(dict(zip(fields[::2], fields[1::2])).get(b"t") == b"SeedRevealed" for _id, fields in page or [])


# The engine hosts of a store (one hash tag, so the claim script also runs on a cluster):
WORKERS_BEAT_KEY = "firelane:{workers}:beat"  # host id -> the server time of its last heartbeat
WORKERS_LOAD_KEY = "firelane:{workers}:load"  # host id -> encounters it runs or is claiming
WORKERS_ASSIGNED_KEY = "firelane:{workers}:assigned"  # "campaign/encounter" -> the host that reserved it
_HEARTBEAT_S = 1.0
_WORKER_STALE_S = 5
# How often a host compares its load with the others', and how long one that
# has handed an encounter off waits before it would take it back (the host
# with fewer polls every 0.2 s, so it has it by then).
_BALANCE_S = 1.0
_HANDOFF_PAUSE_S = 2.0

# Reserve encounter ARGV[3] for host ARGV[1] unless another live host (heartbeat
# within ARGV[2] s of the server's clock) has reserved it, or this host already
# has its fair share (ARGV[4], the encounters it knows of that have not ended,
# over the live hosts) while another live host runs fewer. Atomic, so two hosts
# never both decide on counts that are out of date, nor race each other for
# the same encounter. (Without the fair share, two hosts taking turns one
# encounter at a time would fill up only as fast as their retries.)
_RESERVE = """
local now = tonumber(redis.call('TIME')[1])
local function live(host)
  local beat = redis.call('HGET', KEYS[1], host)
  return beat and now - tonumber(beat) < tonumber(ARGV[2])
end
local holder = redis.call('HGET', KEYS[3], ARGV[3])
if holder and holder ~= ARGV[1] and live(holder) then
  return 0
end
local mine = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0')
local hosts, fewer = 1, false
local beats = redis.call('HGETALL', KEYS[1])
for i = 1, #beats, 2 do
  if beats[i] ~= ARGV[1] and now - tonumber(beats[i + 1]) < tonumber(ARGV[2]) then
    hosts = hosts + 1
    if tonumber(redis.call('HGET', KEYS[2], beats[i]) or '0') < mine then
      fewer = true
    end
  end
end
if fewer and mine >= math.ceil(tonumber(ARGV[4]) / hosts) then
  return 0
end
redis.call('HINCRBY', KEYS[2], ARGV[1], 1)
redis.call('HSET', KEYS[3], ARGV[3], ARGV[1])
return 1
"""

_RELEASE = """
redis.call('HINCRBY', KEYS[1], ARGV[1], -1)
if redis.call('HGET', KEYS[2], ARGV[2]) == ARGV[1] then
  redis.call('HDEL', KEYS[2], ARGV[2])
end
return 1
"""

_BEAT = """
redis.call('HSET', KEYS[1], ARGV[1], redis.call('TIME')[1])
return 1
"""


_REDIS_AWAY = (RedisError, RedisConnectionError)


def _redis_unavailable(exc: BaseException) -> bool:
    """Whether ``exc``, or anything it wraps (a group's members, its cause), is
    Redis being out of reach or still loading its AOF: a failure to wait out,
    not one of the engine's."""
    seen: set[int] = set()
    pending: list[BaseException] = [exc]
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, RedisConnectionError):
            return True
        if isinstance(current, RedisError) and current.code in ("LOADING", "BUSY", "MASTERDOWN", "TRYAGAIN"):
            return True
        if isinstance(current, BaseExceptionGroup):
            pending.extend(current.exceptions)
        if current.__cause__ is not None:  # e.g. a supervisor's TaskKeptFailing, raised from the last failure
            pending.append(current.__cause__)
    return False


async def _redis_back(store: Store) -> None:
    """Until the store's Redis answers again (restarted by `_keep_redis_up`, or by whoever runs it)."""
    while True:
        try:
            with trio.move_on_after(2):
                await store.client.execute("PING")
                return
        except _REDIS_AWAY:
            pass
        await trio.sleep(0.2)


@dataclass
class EngineHost:
    """Runs the engine of every live encounter of the store, with any other
    hosts (`firelane serve --workers N`): each encounter's lease says who runs
    it, and a host reserves a free encounter (atomically, in Redis) only while
    no live host runs fewer, so encounters spread evenly over the workers. When
    a worker dies its leases expire and the others take its encounters over.
    Every loop here outlives a lost Redis: it waits for it and goes on."""

    store: Store
    running: dict[tuple[str, str], str] = field(default_factory=dict)  # (campaign, encounter) -> status
    finished: int = 0
    interrupted: int = 0  # encounters whose engine this host stopped mid-fight (their log goes on from there)
    worker_id: str = field(default_factory=lambda: f"{socket.gethostname()}:{os.getpid()}")
    # How many hosts `firelane serve --workers N` starts: each waits (a while)
    # for all of them to beat before taking any encounter, or the first one up
    # would reserve every encounter found at start before the others count.
    expected_hosts: int = 1
    # The engines this host runs, each in a scope of its own so one can be
    # handed to another host (stopped between two appends, like a crash, and
    # resumed there from its log).
    _engines: dict[tuple[str, str], trio.CancelScope] = field(default_factory=dict)
    # Reservations whose release Redis did not take (it was away): released
    # with a later heartbeat, or kept if this host takes the encounter up again.
    _unreleased: set[tuple[str, str]] = field(default_factory=set)
    _created_cursor: str | None = None  # where the notices of new encounters were read up to

    async def _balance(self) -> None:
        """While this host runs at least two encounters more than another live
        host, hand one to it (a host started later, or in a dead one's place,
        would otherwise get only fights created from then on)."""
        client = self.store.client
        while True:
            await trio.sleep(_BALANCE_S)
            try:
                now = int((await client.execute("TIME"))[0])
                beats = await client.execute("HGETALL", WORKERS_BEAT_KEY) or []
                loads = await client.execute("HGETALL", WORKERS_LOAD_KEY) or []
            except _REDIS_AWAY as exc:
                log.warning("cannot compare loads with the other hosts", error=str(exc)[:300])
                continue
            load_of = {loads[i].decode(): int(loads[i + 1]) for i in range(0, len(loads), 2)}
            others = [load_of.get(beats[i].decode(), 0) for i in range(0, len(beats), 2)
                      if beats[i].decode() != self.worker_id and now - int(beats[i + 1]) < _WORKER_STALE_S]
            if others and len(self._engines) - min(others) >= 2:
                key, scope = next(reversed(self._engines.items()))  # the one started last
                log.info("handing an encounter to a host that runs fewer", campaign=key[0], encounter=key[1],
                         running=len(self._engines), fewest_elsewhere=min(others))
                del self._engines[key]
                scope.cancel()

    async def _forget_dead_local_hosts(self) -> None:
        """Hosts of this machine whose process is gone (a serve killed with
        kill -9) stop counting at once, rather than after their heartbeat goes
        stale: their encounters are free to take up now."""
        client = self.store.client
        here = socket.gethostname()
        for raw in await client.execute("HKEYS", WORKERS_BEAT_KEY) or []:
            host, _, pid = raw.decode().rpartition(":")
            if host == here and pid.isdigit() and int(pid) != os.getpid() and not pid_alive(int(pid)):
                await client.execute("HDEL", WORKERS_BEAT_KEY, raw)
                await client.execute("HDEL", WORKERS_LOAD_KEY, raw)

    async def _heartbeat(self) -> None:
        client = self.store.client
        started = False
        try:
            while True:
                try:
                    if not started:
                        await self._forget_dead_local_hosts()
                        await client.execute("HSET", WORKERS_LOAD_KEY, self.worker_id, 0)
                        started = True
                    await client.evalsha_or_load(_BEAT, (WORKERS_BEAT_KEY,), (self.worker_id,))
                    for key in list(self._unreleased):
                        if key not in self.running:  # not taken up again meanwhile: release it now
                            await self._release(key)
                except _REDIS_AWAY:
                    pass  # Redis is away: the beats go on once it is back (the other hosts see this one stale meanwhile)
                await trio.sleep(_HEARTBEAT_S)
        finally:
            with stop_signals.cleanup_scope(timeout=5):
                try:
                    await client.execute("HDEL", WORKERS_BEAT_KEY, self.worker_id)
                    await client.execute("HDEL", WORKERS_LOAD_KEY, self.worker_id)
                except _REDIS_AWAY:
                    pass  # its beat goes stale by itself

    async def _reserve(self, key: tuple[str, str]) -> bool:
        """Take on this encounter if no other live host has it, and this host
        has less than its fair share or no other live host runs fewer (see _RESERVE)."""
        if key in self._unreleased:  # still reserved for this host: Redis never took the release
            self._unreleased.discard(key)
            return True
        return bool(await self.store.client.evalsha_or_load(
            _RESERVE, (WORKERS_BEAT_KEY, WORKERS_LOAD_KEY, WORKERS_ASSIGNED_KEY),
            (self.worker_id, _WORKER_STALE_S, "/".join(key), len(self.running))))

    async def _release(self, key: tuple[str, str]) -> None:
        self._unreleased.discard(key)
        with stop_signals.cleanup_scope(timeout=5):
            try:
                await self.store.client.evalsha_or_load(
                    _RELEASE, (WORKERS_LOAD_KEY, WORKERS_ASSIGNED_KEY), (self.worker_id, "/".join(key)))
                return
            except _REDIS_AWAY:
                pass
        self._unreleased.add(key)  # Redis is away (or the stop is in a hurry): the heartbeat retries it

    async def run(self, nursery: trio.Nursery) -> None:
        nursery.start_soon(self._heartbeat)
        try:
            await _wait_for_hosts(self.store, self.expected_hosts)
        except _REDIS_AWAY:
            pass  # the notices below wait for Redis
        nursery.start_soon(self._balance)
        while True:
            try:
                await self._follow_created(nursery)
            except _REDIS_AWAY as exc:
                if not _redis_unavailable(exc):
                    log.warning("cannot read the notices of new encounters; retrying", error=str(exc)[:300])
                    await trio.sleep(1)
                await _redis_back(self.store)

    async def _follow_created(self, nursery: trio.Nursery) -> None:
        """Start every encounter found, then each one created from now on (from
        where it was before Redis went away, scanning again first: nothing
        registered meanwhile is missed)."""
        client = self.store.client
        if self._created_cursor is None:
            # Read the notification stream's end first, then scan: nothing
            # created in between is missed.
            last = await client.execute("XREVRANGE", CREATED_KEY, "+", "-", "COUNT", 1)
            self._created_cursor = last[0][0].decode() if last else "0-0"
        for raw_campaign in sorted(await client.execute("SMEMBERS", CAMPAIGNS_KEY) or []):
            campaign = raw_campaign.decode()
            try:
                event_log = self.store.event_log(campaign)
            except ValueError:
                log.warning("ignoring a campaign with an invalid name", campaign=campaign[:80])
                continue
            for encounter in await event_log.encounters():
                self._start(nursery, campaign, encounter)
        async with client.dedicated() as connection:
            while True:
                reply = await connection.execute("XREAD", "COUNT", 100, "BLOCK", 1000, "STREAMS", CREATED_KEY,
                                                 self._created_cursor)
                for _stream, entries in reply or []:
                    for raw_id, flat in entries:
                        self._created_cursor = raw_id.decode()
                        fields = dict(zip(flat[::2], flat[1::2]))
                        try:
                            self._start(nursery, fields[b"campaign"].decode(), fields[b"encounter"].decode())
                        except (KeyError, UnicodeDecodeError, ValueError):
                            log.warning("ignoring a malformed creation notice", entry=self._created_cursor)

    def _start(self, nursery: trio.Nursery, campaign: str, encounter: str) -> None:
        if (campaign, encounter) not in self.running:
            self.running[(campaign, encounter)] = "starting"
            nursery.start_soon(self._keep_running, campaign, encounter)

    async def _keep_running(self, campaign: str, encounter: str) -> None:
        key = (campaign, encounter)
        event_log = self.store.event_log(campaign)
        failures = 0
        reserved = False
        try:
            while True:
                try:
                    if await _ended(event_log, encounter):
                        await _close_ended(event_log, encounter)
                        return
                    if not await self._reserve(key):
                        self.running[key] = "waiting"
                        await trio.sleep(0.2)
                        continue
                    reserved = True
                    self.running[key] = "running"
                    setup = await encounter_setup(event_log, encounter)
                    system = get_system(setup.system)
                    await provision_seat_users(event_log, encounter, default_seats(setup),
                                               await seat_token_digests(event_log, encounter))
                    policies = default_policies(system, {c.id: c.policy for c in setup.combatants})
                    with trio.CancelScope() as engine:
                        self._engines[key] = engine
                        await run_encounter(event_log, encounter, system, policies, lease_wait_s=0.3)
                    self._engines.pop(key, None)
                    if engine.cancelled_caught:  # handed off (see _balance): the other host goes on from the log
                        self.running[key] = "handed off"
                        reserved = False
                        await self._release(key)
                        await trio.sleep(_HANDOFF_PAUSE_S)
                        continue
                    self.finished += 1
                    self.running[key] = "finished"
                    return
                except (Exception, BaseExceptionGroup) as exc:  # noqa: BLE001 - one encounter never stops the rest
                    if _only_cancelled(exc):
                        raise  # the host is stopping: not a failure to retry
                    self._engines.pop(key, None)
                    if reserved:
                        reserved = False
                        await self._release(key)
                    tampered = _first_tampered(exc)
                    if tampered is not None:
                        # Final: the log is not the engine's any more; nothing a retry could mend.
                        self.running[key] = str(tampered)
                        log.error(str(tampered), campaign=campaign, encounter=encounter)
                        return
                    busy = isinstance(exc, EncounterBusy) or (
                        isinstance(exc, BaseExceptionGroup) and exc.subgroup(lambda e: isinstance(e, EncounterBusy)))
                    if busy:
                        self.running[key] = "run elsewhere"
                        await trio.sleep(2)  # another engine has it; take over if it goes away
                        continue
                    if _redis_unavailable(exc):
                        # Not the engine's failure: resume from the log as soon as Redis is back.
                        self.running[key] = "waiting for Redis"
                        await _redis_back(self.store)
                        continue
                    delay = _BACKOFF_S[min(failures, len(_BACKOFF_S) - 1)]
                    failures += 1
                    self.running[key] = f"failed {failures}x: {exc!r}"[:200]
                    log.warning("engine failed; restarting", campaign=campaign, encounter=encounter,
                                failures=failures, delay_s=delay, error=repr(exc)[:300])
                    await trio.sleep(delay)
                    continue
        except BaseException as exc:
            if _only_cancelled(exc) and self.running.get(key) == "running":
                self.interrupted += 1
            raise
        finally:
            self._engines.pop(key, None)
            if reserved:
                await self._release(key)
            self.running.pop(key, None)


async def _close_ended(event_log: EventLog, encounter: str) -> None:
    """Close the inboxes of an encounter that ended before its engine did so
    itself (a store written by an older firelane)."""
    try:
        if not await event_log.inboxes_closed(encounter):
            setup = await encounter_setup(event_log, encounter)
            await close_seats(event_log, encounter, default_seats(setup), await seat_token_digests(event_log, encounter))
    except (RedisError, LookupError, ValueError) as exc:
        log.warning("cannot close an ended encounter's inboxes", campaign=event_log.campaign,
                    encounter=encounter, error=str(exc)[:300])


def _first_tampered(exc: BaseException) -> LogTampered | None:
    if isinstance(exc, LogTampered):
        return exc
    found = exc.subgroup(lambda e: isinstance(e, LogTampered)) if isinstance(exc, BaseExceptionGroup) else None
    while isinstance(found, BaseExceptionGroup):
        found = found.exceptions[0]
    return found


def _only_cancelled(exc: BaseException) -> bool:
    """Whether ``exc`` is a cancellation (alone, or all a group holds), as when the server stops."""
    if isinstance(exc, trio.Cancelled):
        return True
    return isinstance(exc, BaseExceptionGroup) and exc.split(trio.Cancelled)[1] is None


# Replace a registration only if it is still the one read (that of a serve found gone).
_TAKE_OVER = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  return 1
end
return 0
"""


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
            if await store.client.evalsha_or_load(_TAKE_OVER, (SERVE_KEY,), (raw, payload, _REGISTRATION_TTL_MS)):
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
        except _REDIS_AWAY:
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
        except (*_REDIS_AWAY, trio.TooSlowError):
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


async def _wait_for_hosts(store: Store, count: int, timeout: float = 20) -> None:
    """Give every engine host a moment to come up (its heartbeat), so the
    encounters found at start are spread over all of them rather than taken by
    the first one alone. A host that never comes up is not waited for long."""
    with trio.move_on_after(timeout):
        while len(await store.client.execute("HKEYS", WORKERS_BEAT_KEY) or []) < count:
            await trio.sleep(0.05)


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
                            except _REDIS_AWAY:
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
            await EngineHost(store, expected_hosts=args.workers).run(nursery)
    return 0
