"""The append-only event log of each encounter, on Redis Streams.

Keys (the ``{campaign}`` hash tag keeps a campaign on one Redis Cluster slot,
which the Lua append needs since it touches several keys):

    firelane:{<campaign>}:enc:<encounter>:log      stream of events (fields n,t,s,d,c,k,q; see envelope.py)
    firelane:{<campaign>}:enc:<encounter>:applied  hash command_id -> last entry id its batch produced
    firelane:{<campaign>}:enc:<encounter>:inbox    stream of submitted commands (field p)
    firelane:{<campaign>}:encounters               zset encounter -> creation order (1, 2, ...)
    firelane:{<campaign>}:encounter_meta           hash encounter -> opaque metadata bytes

The version of a log is its length: entries are never trimmed or deleted, so
XLEN equals the ``n`` of the last entry.

Appends are idempotent, not transactional from the caller's view: a cancelled
or failed append may or may not have been applied, so callers retry with the
same ``command_id`` and get ``duplicate=True`` if the first attempt landed.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Sequence
from contextlib import aclosing
from typing import Any

import msgspec

from firelane.events.envelope import NewEntry, StoredEvent
from firelane.redisio.client import RedisClient

__all__ = ["AppendResult", "Batch", "EventLog", "VersionConflict", "validate_id"]

_ID_PATTERN = re.compile(r"[A-Za-z0-9_.-]{1,64}")
_PAGE_SIZE = 1000

# Appends one or more batches (one batch = the events answering one command).
# Arguments: ARGV[1] expected version, ARGV[2] batch count, then per batch:
# command id, causation, inbox cursor, entry count, then (type, schema, data)
# per entry. Batches are applied in order until one is a duplicate or a
# conflict; the reply lists one result per batch processed:
# {1, version, {ids}} written; {0, version, last_id} duplicate; {-1, version} conflict.
# The duplicate check comes before the version check so that a retry of an
# append that already landed reports "duplicate", not a spurious conflict.
_APPEND_SCRIPT = """
local log_key, applied_key = KEYS[1], KEYS[2]
local version = tonumber(ARGV[1])
local batches = tonumber(ARGV[2])
local results = {}
local base = 2
for b = 1, batches do
  local command_id, causation, inbox_cursor = ARGV[base + 1], ARGV[base + 2], ARGV[base + 3]
  local count = tonumber(ARGV[base + 4])
  if command_id ~= '' then
    local previous = redis.call('HGET', applied_key, command_id)
    if previous then
      results[b] = {0, redis.call('XLEN', log_key), previous}
      return results
    end
  end
  local actual = redis.call('XLEN', log_key)
  if actual ~= version then
    results[b] = {-1, actual}
    return results
  end
  local ids = {}
  local last_id = ''
  for i = 1, count do
    local at = base + 4 + (i - 1) * 3
    last_id = redis.call('XADD', log_key, '*',
      'n', tostring(version + i),
      't', ARGV[at + 1], 's', ARGV[at + 2], 'd', ARGV[at + 3],
      'c', command_id, 'k', causation, 'q', inbox_cursor)
    ids[i] = last_id
  end
  if command_id ~= '' then
    redis.call('HSET', applied_key, command_id, last_id)
  end
  version = version + count
  results[b] = {1, version, ids}
  base = base + 4 + count * 3
end
return results
"""

# Registers an encounter once (keeping its creation order) and sets its metadata.
_REGISTER_SCRIPT = """
local created = 0
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('ZADD', KEYS[1], redis.call('ZCARD', KEYS[1]) + 1, ARGV[1])
  created = 1
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return created
"""


class VersionConflict(Exception):
    """The log's version was not the one the writer expected; nothing was written."""

    def __init__(self, expected: int, actual: int) -> None:
        super().__init__(f"expected log version {expected}, but the log is at version {actual}")
        self.expected = expected
        self.actual = actual


class Batch(msgspec.Struct, frozen=True, kw_only=True):
    """The events answering one command, for ``append_batches``."""

    entries: list[NewEntry]
    command_id: str = ""
    causation: str = ""
    inbox_cursor: str = ""


class AppendResult(msgspec.Struct, frozen=True):
    """Outcome of ``EventLog.append``.

    ``version`` is the log's version after the append (for a duplicate: the
    current version). ``entry_ids`` are the new entries' stream IDs, empty for
    a duplicate or an empty batch.
    """

    version: int
    entry_ids: list[str]
    duplicate: bool = False


def validate_id(kind: str, value: str) -> str:
    """Check a campaign or encounter id: 1-64 chars of ``[A-Za-z0-9_.-]``."""
    if not isinstance(value, str) or not _ID_PATTERN.fullmatch(value):
        raise ValueError(f"invalid {kind} id {value!r}: use 1-64 characters from A-Z a-z 0-9 _ . -")
    return value


def _decode_id(raw: bytes) -> str:
    return raw.decode("ascii")


# The envelope's fields in the order the append script writes them; ``iter_pages``
# hands out every row in this layout, so readers index fields directly.
ENVELOPE_FIELDS = (b"n", b"t", b"s", b"d", b"c", b"k", b"q")
_ENVELOPE_NAMES = list(ENVELOPE_FIELDS)
FIELD_VERSION, FIELD_TYPE, FIELD_SCHEMA, FIELD_DATA, FIELD_COMMAND, FIELD_CAUSATION, FIELD_INBOX = 1, 3, 5, 7, 9, 11, 13


def _normalized_row(encounter: str, row: list[Any]) -> list[Any]:
    """The row with its fields in envelope order (rows written by other means may differ)."""
    raw_id, flat_fields = row
    if flat_fields[::2] == _ENVELOPE_NAMES:
        return row
    fields = dict(zip(flat_fields[::2], flat_fields[1::2]))
    for required in (b"n", b"t", b"s", b"d"):
        if required not in fields:
            raise ValueError(f"log entry {raw_id!r} of encounter {encounter!r} lacks field {required!r}")
    layout: list[bytes] = []
    for name in ENVELOPE_FIELDS:
        layout += (name, fields.get(name, b""))
    return [raw_id, layout]


def _stream_entry_to_event(encounter: str, row: list[Any]) -> StoredEvent:
    raw_id, f = _normalized_row(encounter, row)
    return StoredEvent(
        entry_id=raw_id.decode("ascii"), version=int(f[1]), encounter=encounter, type=f[3].decode(),
        schema=int(f[5]), data=f[7], command_id=f[9].decode(), causation=f[11].decode(), inbox_cursor=f[13].decode(),
    )


class EventLog:
    """The event logs (and command inboxes) of one campaign's encounters."""

    def __init__(self, client: RedisClient, campaign: str) -> None:
        self.client = client
        self.campaign = validate_id("campaign", campaign)
        self._prefix = f"firelane:{{{campaign}}}"

    # -- keys ----------------------------------------------------------------

    def log_key(self, encounter: str) -> str:
        return f"{self._prefix}:enc:{validate_id('encounter', encounter)}:log"

    def applied_key(self, encounter: str) -> str:
        return f"{self._prefix}:enc:{validate_id('encounter', encounter)}:applied"

    def inbox_key(self, encounter: str) -> str:
        return f"{self._prefix}:enc:{validate_id('encounter', encounter)}:inbox"

    @property
    def encounters_key(self) -> str:
        return f"{self._prefix}:encounters"

    @property
    def encounter_meta_key(self) -> str:
        return f"{self._prefix}:encounter_meta"

    # -- writing -------------------------------------------------------------

    async def append(
        self,
        encounter: str,
        expected_version: int,
        entries: Sequence[NewEntry],
        *,
        command_id: str = "",
        causation: str = "",
        inbox_cursor: str = "",
    ) -> AppendResult:
        """Append ``entries`` atomically if the log is at ``expected_version``.

        If ``command_id`` was already applied, nothing is written and the
        result has ``duplicate=True``. Otherwise a version mismatch raises
        ``VersionConflict``. An empty ``entries`` with a ``command_id`` marks
        the command as applied without writing events.
        """
        batch = Batch(entries=list(entries), command_id=command_id, causation=causation, inbox_cursor=inbox_cursor)
        (result,) = await self.append_batches(encounter, expected_version, [batch])
        return result

    async def append_batches(self, encounter: str, expected_version: int, batches: Sequence[Batch]) -> list[AppendResult]:
        """Append several batches in one atomic script call (one round trip).

        Batches apply in order, each recording its own command ID, until one
        is a duplicate (its result has ``duplicate=True`` and the rest are not
        attempted, so fewer results than batches come back) or the log is not
        at the version the batch expects (``VersionConflict``; the batches
        before it stay applied — retrying them is safe, they are duplicates).
        """
        if expected_version < 0:
            raise ValueError(f"expected_version must be >= 0, got {expected_version}")
        if not batches:
            raise ValueError("append_batches needs at least one batch")
        args: list[str | bytes | int] = [expected_version, len(batches)]
        for batch in batches:
            args.extend((batch.command_id, batch.causation, batch.inbox_cursor, len(batch.entries)))
            for entry in batch.entries:
                if not entry.type:
                    raise ValueError("a log entry needs a non-empty type")
                args.extend((entry.type, entry.schema, entry.data))
        reply = await self.client.evalsha_or_load(
            _APPEND_SCRIPT, (self.log_key(encounter), self.applied_key(encounter)), args
        )
        results = []
        expected = expected_version
        for status, version, *rest in reply:
            if status == 1:
                results.append(AppendResult(version, [_decode_id(raw) for raw in rest[0]]))
                expected = version
            elif status == 0:
                results.append(AppendResult(version, [], duplicate=True))
            else:
                raise VersionConflict(expected, version)
        return results

    async def applied_entry_id(self, encounter: str, command_id: str) -> str | None:
        """The last entry id written for ``command_id`` ("" if it wrote none), or None if never applied."""
        raw = await self.client.execute("HGET", self.applied_key(encounter), command_id)
        return None if raw is None else raw.decode("ascii")

    # -- reading -------------------------------------------------------------

    async def version(self, encounter: str) -> int:
        """The number of events in the encounter's log."""
        result: int = await self.client.execute("XLEN", self.log_key(encounter))
        return result

    async def read(self, encounter: str, after: str = "0-0", count: int | None = None) -> list[StoredEvent]:
        """Events with entry id greater than ``after``, oldest first (all of them if ``count`` is None).

        Holds the whole answer in memory: to go through a long log, use ``iter_read``.
        """
        events: list[StoredEvent] = []
        async for page in self.iter_read(encounter, after, count=count):
            events.extend(page)
        return events

    async def iter_read(
        self, encounter: str, after: str = "0-0", *, page: int = _PAGE_SIZE, count: int | None = None
    ) -> AsyncIterator[list[StoredEvent]]:
        """Yield the events after ``after`` page by page, oldest first, up to
        ``count`` events in all (None: to the end of the log).

        Only one page is held at a time, so a fold over a log of any length
        runs in bounded memory. Use ``contextlib.aclosing`` if you may stop early.
        """
        async with aclosing(self.iter_pages(encounter, after, page=page, count=count)) as pages:
            async for rows in pages:
                yield [_stream_entry_to_event(encounter, row) for row in rows]

    async def iter_pages(
        self, encounter: str, after: str = "0-0", *, page: int = _PAGE_SIZE, count: int | None = None
    ) -> AsyncIterator[list[list[Any]]]:
        """Like ``iter_read``, but yields the stream entries as Redis returns
        them, ``[entry_id, [b"n", n, b"t", t, b"s", s, b"d", d, b"c", c, b"k", k, b"q", q]]``
        (bytes; fields always in this order, see ``FIELD_*``), for folds that
        need no `StoredEvent` per entry (the fastest way through a long log).
        """
        if page <= 0:
            raise ValueError("page must be positive")
        if count is not None and count <= 0:
            return
        key = self.log_key(encounter)
        size = page if count is None else min(page, count)
        rows = await self.client.execute("XRANGE", key, f"({after}", "+", "COUNT", size)
        if rows:
            yield [_normalized_row(encounter, row) for row in rows]
        remaining = None if count is None else count - len(rows)
        if len(rows) < size or remaining == 0:
            return
        # A long read: on a connection of its own, ask for the next page before
        # handing out this one, so Redis prepares it while the caller folds.
        async with self.client.dedicated() as connection:
            size = page if remaining is None else min(page, remaining)
            await connection.send("XRANGE", key, b"(" + rows[-1][0], "+", "COUNT", size)
            while True:
                rows = await connection.receive()
                if not rows:
                    return
                if remaining is not None:
                    remaining -= len(rows)
                more = len(rows) == size and remaining != 0
                if more:
                    size = page if remaining is None else min(page, remaining)
                    await connection.send("XRANGE", key, b"(" + rows[-1][0], "+", "COUNT", size)
                yield [_normalized_row(encounter, row) for row in rows]
                if not more:
                    return

    async def read_from_version(self, encounter: str, version: int) -> list[StoredEvent]:
        """Events with version (``n``) greater than ``version``, oldest first.

        Pages backwards from the end of the log, so reading a recent tail does
        not scan the whole log.
        """
        if version <= 0:
            return await self.read(encounter)
        key = self.log_key(encounter)
        newest_first: list[StoredEvent] = []
        upper = "+"
        while True:
            page = await self.client.execute("XREVRANGE", key, upper, "-", "COUNT", _PAGE_SIZE)
            for entry in page:
                event = _stream_entry_to_event(encounter, entry)
                if event.version <= version:
                    newest_first.reverse()
                    return newest_first
                newest_first.append(event)
            if len(page) < _PAGE_SIZE:
                newest_first.reverse()
                return newest_first
            upper = f"({newest_first[-1].entry_id}"

    async def last_entry_id(self, encounter: str) -> str:
        """The id of the newest entry, or ``"0-0"`` for an empty log."""
        page = await self.client.execute("XREVRANGE", self.log_key(encounter), "+", "-", "COUNT", 1)
        return _decode_id(page[0][0]) if page else "0-0"

    async def follow(
        self, encounter: str, after: str = "0-0", *, block_ms: int = 1000, batch: int = 500
    ) -> AsyncIterator[list[StoredEvent]]:
        """Yield batches of events after ``after`` forever: first the backlog, then new appends.

        Runs ``XREAD BLOCK`` on a dedicated connection. Cancel-safe: reads do
        not consume anything, so if the loop is cancelled the caller resumes
        with ``follow(encounter, after=<last entry id it processed>)`` and gets
        every later event exactly once. ``after="$"`` means "only new events"
        (resolved once, up front, to the current last id).

        Use ``async with contextlib.aclosing(log.follow(...)) as batches:`` so
        the connection is released promptly when the loop ends early.
        """
        if batch <= 0:
            raise ValueError("batch must be positive")
        if block_ms < 0:
            raise ValueError("block_ms must be >= 0")
        key = self.log_key(encounter)
        cursor = await self.last_entry_id(encounter) if after == "$" else after
        async with self.client.dedicated() as connection:
            while True:
                reply = await connection.execute("XREAD", "COUNT", batch, "BLOCK", block_ms, "STREAMS", key, cursor)
                if reply is None:
                    continue
                entries = reply[0][1]
                if not entries:
                    continue
                events = [_stream_entry_to_event(encounter, entry) for entry in entries]
                cursor = events[-1].entry_id
                yield events

    # -- command inbox -------------------------------------------------------

    async def submit(self, encounter: str, payload: bytes) -> str:
        """Add a command to the encounter's inbox; returns its inbox entry id."""
        raw = await self.client.execute("XADD", self.inbox_key(encounter), "*", "p", payload)
        return _decode_id(raw)

    async def read_inbox(
        self, encounter: str, after: str, *, block_ms: int | None = None, count: int = 100
    ) -> list[tuple[str, bytes]]:
        """Commands after inbox id ``after`` as ``(id, payload)``; waits up to ``block_ms`` if none."""
        if count <= 0:
            raise ValueError("count must be positive")
        command: list[str | int] = ["XREAD", "COUNT", count]
        if block_ms is not None:
            if block_ms < 0:
                raise ValueError("block_ms must be >= 0")
            command += ["BLOCK", block_ms]
        command += ["STREAMS", self.inbox_key(encounter), after]
        reply = await self.client.execute(*command)
        if not reply:
            return []
        return [(_decode_id(raw_id), dict(zip(fields[::2], fields[1::2]))[b"p"]) for raw_id, fields in reply[0][1]]

    # -- encounter registry --------------------------------------------------

    async def register_encounter(self, encounter: str, meta: bytes) -> bool:
        """Record the encounter (once, keeping creation order) and set its metadata.

        Returns True if it was new. Registering again only replaces the metadata.
        """
        created = await self.client.evalsha_or_load(
            _REGISTER_SCRIPT,
            (self.encounters_key, self.encounter_meta_key),
            (validate_id("encounter", encounter), meta),
        )
        return bool(created)

    async def encounters(self) -> list[str]:
        """Registered encounter ids in creation order."""
        raw = await self.client.execute("ZRANGE", self.encounters_key, 0, -1)
        return [item.decode() for item in raw]

    async def encounter_meta(self, encounter: str) -> bytes | None:
        """The metadata given at registration, or None if the encounter is unknown."""
        result: bytes | None = await self.client.execute(
            "HGET", self.encounter_meta_key, validate_id("encounter", encounter)
        )
        return result
