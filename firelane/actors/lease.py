"""The sequencer's lease: one writer per encounter, across processes and hosts.

A second engine started on an encounter that is already being run would fight
the first for every append (both stay correct, thanks to the version check and
idempotent commands, but both waste their work). The lease makes the second one
stop with a clear message instead.

The lease is a Redis key holding "host:pid:token" with a short expiry, renewed
while the sequencer runs. A lease left by a process that was killed expires by
itself; when that process was on this host and is gone, the lease is taken over
at once, so a crashed engine can be restarted without waiting.

A process that runs many encounters (`firelane serve`) installs one
`LeaseKeeper`: it renews every lease of the process together, one script per
campaign (a campaign's keys share a Cluster slot) and many scripts a round
trip, so 10,000 idle encounters cost a few round trips every 1.7 s rather
than 6,000 renewals a second, and no encounter holds a task that wakes to
renew its own.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import socket

from collections.abc import Sequence
from typing import Any

import trio

from firelane.events.log import EventLog
from firelane.logs import get_logger
from firelane.redisio import RedisClient, RedisConnectionError, RedisError
from firelane.redisio.server import pid_alive

log = get_logger("firelane.lease")

# Set KEYS[1] to ARGV[2] (for ARGV[3] ms) only if it still holds ARGV[1]: taking over
# from a holder found gone, never from one that renewed or took it meanwhile.
TAKE_OVER_IF_UNCHANGED = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  return 1
end
return 0
"""

_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""

# Renew every lease KEYS[i] still holding ARGV[i] for ARGV[#KEYS + 1] ms; return the i of those lost.
_RENEW_MANY = """
local lost = {}
local ttl = ARGV[#KEYS + 1]
for i = 1, #KEYS do
  if redis.call('GET', KEYS[i]) == ARGV[i] then
    redis.call('PEXPIRE', KEYS[i], ttl)
  else
    lost[#lost + 1] = i
  end
end
return lost
"""

_RENEW_MANY_SHA = hashlib.sha1(_RENEW_MANY.encode()).hexdigest()

_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""


class EncounterBusy(RuntimeError):
    """Another engine holds the encounter's lease."""


class LeaseLost(RuntimeError):
    """The lease expired or was taken while the sequencer ran (e.g. a long pause)."""


def lease_key(campaign: str, encounter: str) -> str:
    return f"firelane:{{{campaign}}}:enc:{encounter}:sequencer"


class SequencerLease:
    def __init__(self, event_log: EventLog, encounter: str, *, ttl_ms: int = 5000, wait_s: float = 6.0) -> None:
        self.log = event_log
        self.key = lease_key(event_log.campaign, encounter)
        self.encounter = encounter
        self.ttl_ms = ttl_ms
        self.wait_s = wait_s
        self.host = socket.gethostname()
        self.value = f"{self.host}:{os.getpid()}:{secrets.token_hex(6)}"

    async def acquire(self) -> None:
        """Take the lease, waiting up to ``wait_s`` for another holder's to expire."""
        client = self.log.client
        with trio.move_on_after(self.wait_s):
            while True:
                if await client.execute("SET", self.key, self.value, "NX", "PX", self.ttl_ms) is not None:
                    return
                holder = await client.execute("GET", self.key)
                if holder is not None and holder.decode() == self.value:
                    return  # our SET landed but its reply was lost (a cluster client retried it)
                if holder is not None and self._held_by_a_dead_local_process(holder.decode()):
                    if await client.evalsha_or_load(TAKE_OVER_IF_UNCHANGED, (self.key,), (holder, self.value, self.ttl_ms)):
                        return
                await trio.sleep(0.1)
        holder = await client.execute("GET", self.key)
        who = holder.decode().rsplit(":", 1)[0].replace(":", ", pid ") if holder else "unknown"
        raise EncounterBusy(f"encounter {self.encounter!r} is being run by another engine (host {who}); "
                            f"stop it first, or wait for it to finish")

    def _held_by_a_dead_local_process(self, holder: str) -> bool:
        host, _, rest = holder.partition(":")
        pid_text = rest.split(":", 1)[0]
        return host == self.host and pid_text.isdigit() and int(pid_text) != os.getpid() and not pid_alive(int(pid_text))

    async def keep(self) -> None:
        """Renew the lease every third of its lifetime until cancelled (by this
        process's `LeaseKeeper` when one is installed)."""
        keeper = current_keeper()
        if keeper is not None and keeper.ttl_ms == self.ttl_ms and keeper.client is self.log.client:
            await keeper.keep(self)  # returns only by raising (lost) or being cancelled
            return
        while True:
            await trio.sleep(self.ttl_ms / 3000)
            if not await self.log.client.evalsha_or_load(_RENEW, (self.key,), (self.value, self.ttl_ms)):
                raise LeaseLost(f"the lease on encounter {self.encounter!r} was lost; another engine may have taken it over")

    async def release(self) -> None:
        with trio.CancelScope(shield=True):
            await self.log.client.evalsha_or_load(_RELEASE, (self.key,), (self.value,))


_keeper: trio.lowlevel.RunVar[LeaseKeeper] = trio.lowlevel.RunVar("firelane_lease_keeper")


def current_keeper() -> LeaseKeeper | None:
    """The `LeaseKeeper` installed in this trio run, if any."""
    try:
        return _keeper.get()
    except LookupError:
        return None


class _Kept:
    __slots__ = ("lease", "failed", "error")

    def __init__(self, lease: SequencerLease) -> None:
        self.lease = lease
        self.failed = trio.Event()
        self.error: BaseException | None = None


class LeaseKeeper:
    """Renews all the sequencer leases of one process together (see the
    module's docstring). A lease found lost fails its sequencer with
    `LeaseLost`, as its own renewal would; a round that Redis does not answer
    fails every sequencer it renews, as theirs would (the host waits for
    Redis and resumes them from their logs)."""

    SCRIPTS_PER_ROUND_TRIP = 200
    KEYS_PER_SCRIPT = 500  # a script holds Redis for ~0.3 ms at most

    def __init__(self, client: Any, *, ttl_ms: int = 5000) -> None:
        self.client = client
        self.ttl_ms = ttl_ms
        self._kept: dict[int, _Kept] = {}
        self._own: Any = None
        self.rounds = 0

    def install(self) -> None:
        _keeper.set(self)

    async def run(self) -> None:
        """Renew every third of a lease's lifetime until cancelled; installs the
        keeper. On one server the renewals have a connection of their own, so
        they never queue behind the engines' commands in the pool, however busy."""
        self.install()
        while True:
            if not isinstance(self.client, RedisClient):
                await trio.sleep(self.ttl_ms / 3000)
                await self.renew_all()
                continue
            try:
                async with self.client.dedicated() as connection:
                    self._own = connection
                    while not connection.closed:  # (closed by a failed round: open another)
                        await trio.sleep(self.ttl_ms / 3000)
                        await self.renew_all()
            except (RedisError, RedisConnectionError) as exc:
                self._fail_all(exc)  # as their own renewals would have failed
                await trio.sleep(self.ttl_ms / 3000)
            finally:
                self._own = None

    async def keep(self, lease: SequencerLease) -> None:
        """Until cancelled, or until the lease is lost (raises as `SequencerLease.keep`)."""
        kept = _Kept(lease)
        self._kept[id(lease)] = kept
        try:
            await kept.failed.wait()
        finally:
            self._kept.pop(id(lease), None)
        assert kept.error is not None
        raise kept.error

    async def renew_all(self) -> None:
        kept = list(self._kept.values())
        if not kept:
            return
        self.rounds += 1
        by_campaign: dict[str, list[_Kept]] = {}
        for item in kept:
            by_campaign.setdefault(item.lease.log.campaign, []).append(item)
        groups = [group[start:start + self.KEYS_PER_SCRIPT]
                  for group in by_campaign.values() for start in range(0, len(group), self.KEYS_PER_SCRIPT)]
        for start in range(0, len(groups), self.SCRIPTS_PER_ROUND_TRIP):
            chunk = groups[start:start + self.SCRIPTS_PER_ROUND_TRIP]
            try:
                replies = await self._renew(chunk)
            except (RedisError, RedisConnectionError) as exc:
                log.warning("cannot renew the sequencers' leases", leases=sum(map(len, chunk)), error=str(exc)[:200])
                for group in chunk:
                    for item in group:
                        self._fail(item, exc)
                continue
            for group, lost in zip(chunk, replies):
                if isinstance(lost, BaseException):
                    for item in group:
                        self._fail(item, lost)
                    continue
                for index in lost:
                    item = group[index - 1]
                    self._fail(item, LeaseLost(f"the lease on encounter {item.lease.encounter!r} was lost; "
                                               f"another engine may have taken it over"))

    def _fail_all(self, error: BaseException) -> None:
        for item in list(self._kept.values()):
            self._fail(item, error)

    def _fail(self, item: _Kept, error: BaseException) -> None:
        if self._kept.get(id(item.lease)) is item and not item.failed.is_set():
            item.error = error
            item.failed.set()

    async def _renew(self, groups: Sequence[list[_Kept]]) -> list[Any]:
        """One script per group; on one server all in one round trip, on a
        cluster (a pipeline stays on one slot) one after the other."""
        def arguments(group: list[_Kept]) -> tuple[list[str], list[str | int]]:
            return [item.lease.key for item in group], [*(item.lease.value for item in group), self.ttl_ms]

        if not isinstance(self.client, RedisClient):
            replies: list[Any] = []
            for group in groups:
                keys, args = arguments(group)
                try:
                    replies.append(await self.client.evalsha_or_load(_RENEW_MANY, keys, args))
                except RedisError as exc:
                    replies.append(exc)
            return replies
        sha = _RENEW_MANY_SHA
        commands = []
        for group in groups:
            keys, args = arguments(group)
            commands.append(("EVALSHA", sha, len(keys), *keys, *args))
        connection = self._own if self._own is not None and not self._own.closed else self.client
        replies = await connection.pipeline(commands)
        if any(isinstance(reply, RedisError) and reply.code == "NOSCRIPT" for reply in replies):
            await connection.execute("SCRIPT", "LOAD", _RENEW_MANY)
            replies = await connection.pipeline(commands)
        return replies
