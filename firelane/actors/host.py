"""The engine hosts of a store: each runs the engine of every live encounter
it reserves (`firelane serve`, and each worker of `serve --workers N`).

Each encounter's lease says who runs it; a host reserves a free encounter
(atomically, in Redis) only while no live host runs fewer, so encounters
spread evenly over the workers, and hands one to a host that runs fewer. A
dead worker's leases expire and the others take its encounters over. A
failed engine restarts with backoff; a tampered log is final; Redis away is
waited out, not counted as a failure.
"""

from __future__ import annotations


import os
import socket
from dataclasses import dataclass, field

import trio

from firelane.actors.lease import EncounterBusy, LeaseKeeper
from firelane.actors.runtime import default_policies, run_encounter
from firelane.actors.seating import close_seats, provision_seat_users
from firelane.actors.sequencer import encounter_setup, seat_token_digests
from firelane.engine.registry import get_system
from firelane.engine.seats import default_seats
from firelane.events.log import CAMPAIGNS_KEY, CREATED_KEY, EventLog, LogTampered
from firelane import stop_signals
from firelane.actors.store import Store
from firelane.logs import get_logger
from firelane.redisio import RedisConnectionError, RedisError
from firelane.redisio.server import pid_alive

log = get_logger("firelane.serve")


_BACKOFF_S = (0.5, 1, 2, 5, 10, 30)

_STARTING_AT_ONCE = 8


async def _ended(event_log: EventLog, encounter: str) -> bool:
    """Whether the encounter is over (its seed is revealed: nothing is left to run)."""
    page = await event_log.client.execute("XREVRANGE", event_log.log_key(encounter), "+", "-", "COUNT", 8)
    return any(dict(zip(fields[::2], fields[1::2])).get(b"t") == b"SeedRevealed" for _id, fields in page or [])

# The engine hosts of a store (one hash tag, so the claim script also runs on a cluster):
WORKERS_BEAT_KEY = "firelane:{workers}:beat"  # host id -> the server time of its last heartbeat


WORKERS_LOAD_KEY = "firelane:{workers}:load"  # host id -> encounters it runs or is claiming


WORKERS_ASSIGNED_KEY = "firelane:{workers}:assigned"  # "campaign/encounter" -> the host that reserved it


_HEARTBEAT_S = 1.0

_LOBBY_POLL_S = 0.25  # how soon an encounter started from its lobby is taken up


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


REDIS_AWAY = (RedisError, RedisConnectionError)


def redis_unavailable(exc: BaseException) -> bool:
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


async def redis_back(store: Store) -> None:
    """Until the store's Redis answers again (restarted by `_keep_redis_up`, or by whoever runs it)."""
    while True:
        try:
            with trio.move_on_after(2):
                await store.client.execute("PING")
                return
        except REDIS_AWAY:
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
    # Encounters whose engines are starting (folding their logs, answering their
    # start, publishing their seats' views). Thousands started at once (a server
    # resuming) would each hold trio's scheduler for their share of every batch,
    # so the leases renewed in between would run out; a few at a time, each goes
    # through quickly and the whole lot sooner.
    _starting: trio.CapacityLimiter = field(default_factory=lambda: trio.CapacityLimiter(_STARTING_AT_ONCE))
    _starting_now: set[object] = field(default_factory=set)

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
            except REDIS_AWAY as exc:
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
                except REDIS_AWAY:
                    pass  # Redis is away: the beats go on once it is back (the other hosts see this one stale meanwhile)
                await trio.sleep(_HEARTBEAT_S)
        finally:
            with stop_signals.cleanup_scope(timeout=5):
                try:
                    await client.execute("HDEL", WORKERS_BEAT_KEY, self.worker_id)
                    await client.execute("HDEL", WORKERS_LOAD_KEY, self.worker_id)
                except REDIS_AWAY:
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
            except REDIS_AWAY:
                pass
        self._unreleased.add(key)  # Redis is away (or the stop is in a hurry): the heartbeat retries it

    async def run(self, nursery: trio.Nursery) -> None:
        # The leases of every engine this host runs are renewed together (actors/lease.py).
        keeper = LeaseKeeper(self.store.client)
        keeper.install()
        nursery.start_soon(keeper.run)
        nursery.start_soon(self._heartbeat)
        try:
            await wait_for_hosts(self.store, self.expected_hosts)
        except REDIS_AWAY:
            pass  # the notices below wait for Redis
        nursery.start_soon(self._balance)
        while True:
            try:
                await self._follow_created(nursery)
            except REDIS_AWAY as exc:
                if not redis_unavailable(exc):
                    log.warning("cannot read the notices of new encounters; retrying", error=str(exc)[:300])
                    await trio.sleep(1)
                await redis_back(self.store)

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
                    if await event_log.client.execute("EXISTS", event_log.encounter_key(encounter, "lobby")):
                        # Waiting in the lobby until the GM starts it (actors/workshop.py): looked at
                        # again and again, so a start is never missed, whenever its notice came.
                        self.running[key] = "in the lobby"
                        await trio.sleep(_LOBBY_POLL_S)
                        continue
                    if not await self._reserve(key):
                        self.running[key] = "waiting"
                        await trio.sleep(0.2)
                        continue
                    reserved = True
                    self.running[key] = "running"
                    # A few encounters start at a time (see _STARTING_AT_ONCE); this one's
                    # turn ends once its engine waits for its seats.
                    starting = object()
                    await self._starting.acquire_on_behalf_of(starting)

                    def settled(starting: object = starting) -> None:
                        if starting in self._starting_now:
                            self._starting_now.discard(starting)
                            self._starting.release_on_behalf_of(starting)

                    self._starting_now.add(starting)
                    try:
                        setup = await encounter_setup(event_log, encounter)
                        system = get_system(setup.system)
                        await provision_seat_users(event_log, encounter, default_seats(setup),
                                                   await seat_token_digests(event_log, encounter))
                        policies = default_policies(system, {c.id: c.policy for c in setup.combatants})
                        with trio.CancelScope() as engine:
                            self._engines[key] = engine
                            await run_encounter(event_log, encounter, system, policies, lease_wait_s=0.3,
                                                on_settled=settled)
                    finally:
                        settled()
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
                    if only_cancelled(exc):
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
                    if redis_unavailable(exc):
                        # Not the engine's failure: resume from the log as soon as Redis is back.
                        self.running[key] = "waiting for Redis"
                        await redis_back(self.store)
                        continue
                    delay = _BACKOFF_S[min(failures, len(_BACKOFF_S) - 1)]
                    failures += 1
                    self.running[key] = f"failed {failures}x: {exc!r}"[:200]
                    log.warning("engine failed; restarting", campaign=campaign, encounter=encounter,
                                failures=failures, delay_s=delay, error=repr(exc)[:300])
                    await trio.sleep(delay)
                    continue
        except BaseException as exc:
            if only_cancelled(exc) and self.running.get(key) == "running":
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


def only_cancelled(exc: BaseException) -> bool:
    """Whether ``exc`` is a cancellation (alone, or all a group holds), as when the server stops."""
    if isinstance(exc, trio.Cancelled):
        return True
    return isinstance(exc, BaseExceptionGroup) and exc.split(trio.Cancelled)[1] is None


async def wait_for_hosts(store: Store, count: int, timeout: float = 20) -> None:
    """Give every engine host a moment to come up (its heartbeat), so the
    encounters found at start are spread over all of them rather than taken by
    the first one alone. A host that never comes up is not waited for long."""
    with trio.move_on_after(timeout):
        while len(await store.client.execute("HKEYS", WORKERS_BEAT_KEY) or []) < count:
            await trio.sleep(0.05)


__all__ = ["REDIS_AWAY", "EngineHost", "only_cancelled", "redis_back", "redis_unavailable", "wait_for_hosts"]
