"""Seat tokens and the Redis ACL user of each seat.

Every seat of an encounter has a secret token (created with the encounter,
kept in ``…:enc:<id>:seats`` as a digest and sealed, never in clear: see
firelane.events.tokens_at_rest; only the engine's own Redis user can read it).
The token is both the seat's key to the HTTP/WebSocket API and the password
of its Redis ACL user (given to Redis as its SHA-256, ``#<digest>``, so the
token itself is never sent to Redis), so a frontend in any language can also
talk to Redis directly, with exactly this much power:

- read the encounter's log (``%R~`` on its log stream: XREAD, XRANGE, XREVRANGE, XLEN);
- read its own options stream (``%R~`` on ``…:options:<seat>``: what the engine
  awaits and what this seat may do, written by the engine), no other seat's;
- append to its own inbox stream (``%W~`` on ``…:inbox:<seat>``: XADD), nothing else;
- a player seat: append its client seed to ``…:lobby_seed:<seat>`` while the
  fight waits in its lobby (actors/lobby_seeds.py: the first entry counts);
- no other key: not the seed, the lease, the seats' tokens, another seat's inbox.

Once the encounter has ended, its seats keep reading the log (replay, audit)
but write nothing: their users lose ``XADD`` and the inboxes are deleted
(``close_seats``), so nothing can pile up where no engine reads any more.

The engine reads each seat's inbox and knows the sender by the stream, so a
seat can only ever speak for itself. Per-key read/write permissions need
Redis 7.0 or newer.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from firelane.engine.seats import ENGINE_SEAT
from firelane.events.log import EventLog
from firelane.events.schemas import SeatSetup
from firelane.logs import get_logger
from firelane.redisio import RedisError

log = get_logger("firelane.seating")

# Connection housekeeping a client library sends on connect (redis-py, ioredis,
# Jedis, go-redis send HELLO or AUTH, CLIENT SETNAME, and PING to check a
# connection: refusing them would break ordinary clients), and the stream
# reads. None of them touches a key.
_READ_COMMANDS = ("+ping", "+echo", "+hello", "+auth", "+client|setname", "+client|getname", "+client|id",
                  "+client|info", "+xread", "+xrange", "+xrevrange", "+xlen")


def acl_user(campaign: str, encounter: str, seat: str) -> str:
    """The seat's Redis user name ('/' cannot appear in any of the three IDs)."""
    return f"{campaign}/{encounter}/{seat}"


_SHA256_HEX = re.compile(r"[0-9a-f]{64}")


def acl_rules(event_log: EventLog, encounter: str, seat: SeatSetup, token_digest: str, *,
              writes: bool = True) -> list[str]:
    """The seat's ACL rules, its password given by the SHA-256 (hex) of its token
    (firelane.events.tokens_at_rest.token_digest); ``writes=False``: reading the
    log only (an ended encounter)."""
    if not _SHA256_HEX.fullmatch(token_digest):
        raise ValueError("a seat's Redis user takes the SHA-256 of its token, not the token")
    rules = ["reset", "on", f"#{token_digest}", "resetchannels", "-@all", *_READ_COMMANDS,
             f"%R~{event_log.log_key(encounter)}", f"%R~{event_log.options_key(encounter, seat.id)}"]
    if writes and seat.role != "spectator":
        rules += ["+xadd", f"%W~{event_log.inbox_key(encounter, seat.id)}"]
    if writes and seat.role == "player":
        # Its client seed while the fight waits in the lobby (actors/lobby_seeds.py: the first entry counts).
        rules.append(f"%W~{event_log.encounter_key(encounter, f'lobby_seed:{seat.id}')}")
    return rules


async def provision_seat_users(event_log: EventLog, encounter: str, seats: list[SeatSetup],
                               token_digests: Mapping[str, str], *, writes: bool = True) -> str | None:
    """Create (or refresh) the ACL user of every seat, from its token's digest
    (sequencer.seat_token_digests); returns why not, when the Redis server
    refuses (then seats can still use the HTTP API). ``writes=False``: users
    that can only read the log."""
    try:
        for seat in seats:
            digest = token_digests.get(seat.id)
            if digest is None:
                continue
            await event_log.client.execute(
                "ACL", "SETUSER", acl_user(event_log.campaign, encounter, seat.id),
                *acl_rules(event_log, encounter, seat, digest, writes=writes))
    except RedisError as exc:
        log.warning("cannot create seat users", encounter=encounter, error=str(exc))
        return str(exc)
    try:
        await event_log.client.execute("ACL", "SAVE")  # persists them where the server has an ACL file
    except RedisError:
        pass  # a server without an ACL file keeps them until it restarts; `firelane serve` recreates them
    return None


async def close_seats(event_log: EventLog, encounter: str, seats: list[SeatSetup],
                      token_digests: Mapping[str, str]) -> None:
    """The encounter has ended: its inboxes are closed and deleted, and its
    seats' users may only read the log. Safe to repeat; once done,
    ``event_log.inboxes_closed`` says so (callers look first, before they
    gather the seats and tokens)."""
    await provision_seat_users(event_log, encounter, seats, token_digests, writes=False)
    await event_log.close_inboxes(encounter, [seat.id for seat in seats] + [ENGINE_SEAT])
