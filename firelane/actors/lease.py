"""The sequencer's lease: one writer per encounter, across processes and hosts.

A second engine started on an encounter that is already being run would fight
the first for every append (both stay correct, thanks to the version check and
idempotent commands, but both waste their work). The lease makes the second one
stop with a clear message instead.

The lease is a Redis key holding "host:pid:token" with a short expiry, renewed
while the sequencer runs. A lease left by a process that was killed expires by
itself; when that process was on this host and is gone, the lease is taken over
at once, so a crashed engine can be restarted without waiting.
"""

from __future__ import annotations

import os
import secrets
import socket

import trio

from firelane.events.log import EventLog
from firelane.redisio.server import pid_alive

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
        """Renew the lease every third of its lifetime until cancelled."""
        while True:
            await trio.sleep(self.ttl_ms / 3000)
            if not await self.log.client.evalsha_or_load(_RENEW, (self.key,), (self.value, self.ttl_ms)):
                raise LeaseLost(f"the lease on encounter {self.encounter!r} was lost; another engine may have taken it over")

    async def release(self) -> None:
        with trio.CancelScope(shield=True):
            await self.log.client.evalsha_or_load(_RELEASE, (self.key,), (self.value,))
