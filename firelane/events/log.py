"""The append-only event log of each encounter, on Redis Streams.

Keys (the ``{campaign}`` hash tag keeps a campaign on one Redis Cluster slot,
which the Lua append needs since it touches several keys):

    firelane:{<campaign>}:enc:<encounter>:log           stream of events (fields n,t,s,d,c,k,q,h; see envelope.py)
    firelane:{<campaign>}:enc:<encounter>:version       the log's version (the last ``n`` the engine wrote)
    firelane:{<campaign>}:enc:<encounter>:applied       hash command_id -> last entry id its batch produced [+ body digest]
    firelane:{<campaign>}:enc:<encounter>:inbox:<seat>  stream of one seat's commands (field p)
    firelane:{<campaign>}:encounters                    zset encounter -> creation order (1, 2, ...)
    firelane:{<campaign>}:encounter_meta                hash encounter -> opaque metadata bytes

The version of a log counts the engine's entries: they are never trimmed or
deleted and their ``n`` run 1, 2, 3... An entry that anyone else added to the
stream does not count: readers with the campaign's key detect it (its MAC does
not match, see signing.py), and every reader skips an entry it cannot read,
reporting it where asked (``include_invalid``), never failing on it.

The engine's own entries can still be moved about by someone who may write to
Redis without the key: a genuine entry appended again (its MAC still matches:
it covers the version, not the stream position), entries deleted, the version
counter changed. The versions say so, since they must run 1, 2, 3... with
nothing missing or repeated: readers report what is wrong by version
(``include_invalid``: problem entries naming the versions missing or repeated;
otherwise ``LogTampered``), and an append notices a log whose end does not
match its counter. ``LogTampered`` is final: the log is not the engine's any
more, and nothing retries on it.

Appends are idempotent, not transactional from the caller's view: a cancelled
or failed append may or may not have been applied, so callers retry with the
same ``command_id`` and get ``duplicate=True`` if the first attempt landed.

Durability: ``EventLog(client, campaign, replicas=1)`` makes every write of
the log (appends, inbox commands, registrations) return only once a replica
has it (``WAIT``, in the same round trip), and raise ``DurabilityError``
otherwise; ``fsync=True`` asks for the AOF fsync as well (``WAITAOF``, Redis
>= 7.2). A duplicate append rewrites its ``applied`` entry, so the WAIT that
follows it also covers the original entries (replicas apply the stream in
order): a retried append is acknowledged only once they are replicated.
"""

from __future__ import annotations

import re
from hashlib import blake2b
from hmac import compare_digest
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import aclosing
from typing import Any

import msgspec

from firelane.events.envelope import NewEntry, StoredEvent
from firelane.events.limits import MAX_PENDING_COMMANDS
from firelane.events.log_signing import LogSigner, entry_bytes
from firelane.events.signing import MAC_BYTES, campaign_key, entry_mac
from firelane.redisio.client import CommandClient, Durability

__all__ = ["CAMPAIGNS_KEY", "CREATED_KEY", "AppendResult", "Batch", "EventLog", "InboxEntry", "LogTampered",
           "VersionConflict", "VersionSequence", "validate_id"]

CAMPAIGNS_KEY = "firelane:campaigns"  # set of campaign ids
CREATED_KEY = "firelane:created"  # stream of (campaign, encounter) as encounters are registered
_ID_PATTERN = re.compile(r"[A-Za-z0-9_.-]{1,64}")
_PAGE_SIZE = 1000
_RESUME_SCAN = 1000  # how far back an append looks for the log's open signed group
# The seed's reveal closes a fight: its entry always carries a signature, so a finished log is signed to its end.
_SEALING_TYPES = frozenset({"SeedRevealed"})

# Appends one or more batches (one batch = the events answering one command).
# Arguments: ARGV[1] expected version, ARGV[2] batch count, then per batch:
# command id, causation, inbox cursor, body digest, entry count, then (type,
# schema, data, mac, signature) per entry (signature "" for none: the field
# ``g`` is written only on the entry that closes a signed group, log_signing.py).
# Batches are applied in order until one is a duplicate or a conflict; the reply is the ``n`` of the stream's last entry
# before the call ("" for none), then one result per batch processed:
# {1, version, {ids}} written; {0, version, last_id} duplicate; {2, version,
# last_id} the command id was applied with another body; {-1, version} conflict.
# The duplicate check comes before the version check so that a retry of an
# append that already landed reports "duplicate", not a spurious conflict.
# The version is a counter of its own (not XLEN), so an entry someone else
# XADDs to the stream does not shift the engine's versions.
_APPEND_SCRIPT = """
local log_key, applied_key, version_key = KEYS[1], KEYS[2], KEYS[3]
local version = tonumber(ARGV[1])
local batches = tonumber(ARGV[2])
-- The version of the stream's last entry, for the caller to compare with the
-- counter (see EventLog.tail_problem): the reply's first element.
local tail_version = ''
local tail = redis.call('XREVRANGE', log_key, '+', '-', 'COUNT', 1)
if tail[1] then
  local fields = tail[1][2]
  for i = 1, #fields, 2 do
    if fields[i] == 'n' then tail_version = fields[i + 1] break end
  end
end
local results = {tail_version}
local base = 2
for b = 1, batches do
  local command_id, causation, inbox_cursor = ARGV[base + 1], ARGV[base + 2], ARGV[base + 3]
  local digest = ARGV[base + 4]
  local count = tonumber(ARGV[base + 5])
  local actual = tonumber(redis.call('GET', version_key) or '0')
  if command_id ~= '' then
    local previous = redis.call('HGET', applied_key, command_id)
    if previous then
      local space = string.find(previous, ' ', 1, true)
      local previous_id, previous_digest = previous, ''
      if space then
        previous_id, previous_digest = string.sub(previous, 1, space - 1), string.sub(previous, space + 1)
      end
      -- A write (of the same value), so a WAIT after a retried append waits
      -- for the replicas to have everything up to the original entries.
      redis.call('HSET', applied_key, command_id, previous)
      if digest ~= '' and previous_digest ~= '' and digest ~= previous_digest then
        results[b + 1] = {2, actual, previous_id}
      else
        results[b + 1] = {0, actual, previous_id}
      end
      return results
    end
  end
  if actual ~= version then
    results[b + 1] = {-1, actual}
    return results
  end
  local ids = {}
  local last_id = ''
  for i = 1, count do
    local at = base + 5 + (i - 1) * 5
    if ARGV[at + 5] == '' then
      last_id = redis.call('XADD', log_key, '*',
        'n', tostring(version + i),
        't', ARGV[at + 1], 's', ARGV[at + 2], 'd', ARGV[at + 3],
        'c', command_id, 'k', causation, 'q', inbox_cursor, 'h', ARGV[at + 4])
    else
      last_id = redis.call('XADD', log_key, '*',
        'n', tostring(version + i),
        't', ARGV[at + 1], 's', ARGV[at + 2], 'd', ARGV[at + 3],
        'c', command_id, 'k', causation, 'q', inbox_cursor, 'h', ARGV[at + 4], 'g', ARGV[at + 5])
    end
    ids[i] = last_id
  end
  version = version + count
  if count > 0 then
    redis.call('SET', version_key, version)
  end
  if command_id ~= '' then
    if digest ~= '' then
      redis.call('HSET', applied_key, command_id, last_id .. ' ' .. digest)
    else
      redis.call('HSET', applied_key, command_id, last_id)
    end
  end
  results[b + 1] = {1, version, ids}
  base = base + 5 + count * 5
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


# Adds a command to a seat's inbox (KEYS[1]) unless the encounter's inboxes are
# closed (KEYS[2] exists: it has ended) or ARGV[1] commands are waiting already.
_SUBMIT_SCRIPT = """
if redis.call('EXISTS', KEYS[2]) == 1 then return -1 end
if redis.call('XLEN', KEYS[1]) >= tonumber(ARGV[1]) then return -2 end
return redis.call('XADD', KEYS[1], '*', 'p', ARGV[2])
"""


# Removes what the engine has handled from seats' inboxes, after each read, and
# keeps the count of refusals it has not recorded yet (so a crash loses none).
# KEYS[1] the encounter's counted-drops hash, KEYS[2..] the seats' inboxes;
# ARGV, per inbox in KEYS order: seat, its drops ("count last_id skipped", ""
# for none), trim before this id ("" for nothing), how many entries to delete,
# their ids.
_TIDY_SCRIPT = """
local at = 1
for k = 2, #KEYS do
  local seat, drops, before, n = ARGV[at], ARGV[at + 1], ARGV[at + 2], tonumber(ARGV[at + 3])
  if drops ~= '' then
    redis.call('HSET', KEYS[1], seat, drops)
  else
    redis.call('HDEL', KEYS[1], seat)
  end
  if before ~= '' then
    redis.call('XTRIM', KEYS[k], 'MINID', before)
  end
  if n > 0 then
    redis.call('XDEL', KEYS[k], unpack(ARGV, at + 4, at + 3 + n))
  end
  at = at + 4 + n
end
return 1
"""

# Skips the oldest unread entries of a seat's inbox past a bound (a seat's
# Redis user can XADD without limit), counting them with the seat's drops.
# KEYS[1] the inbox, KEYS[2] the counted-drops hash; ARGV[1] seat, ARGV[2] the
# last entry read, ARGV[3] how many unread entries to keep, ARGV[4] how many
# entries the engine keeps at or before ARGV[2] (held window answers),
# ARGV[5] trim before this id first ("" when answers are held: everything read
# is handled, and no longer needed), ARGV[6]/ARGV[7] drops/skips counted before.
# Replies {skipped, last skipped id} ({0, ""}: nothing to skip).
_SKIP_SCRIPT = """
if ARGV[5] ~= '' then
  redis.call('XTRIM', KEYS[1], 'MINID', ARGV[5])
end
local keep = tonumber(ARGV[3])
if redis.call('XLEN', KEYS[1]) - tonumber(ARGV[4]) <= keep then
  return {0, ''}
end
local newest = redis.call('XREVRANGE', KEYS[1], '+', '(' .. ARGV[2], 'COUNT', keep)
local first_kept = newest[#newest][1]
local last_skipped = redis.call('XREVRANGE', KEYS[1], '(' .. first_kept, '(' .. ARGV[2], 'COUNT', 1)[1][1]
local skipped = 0
if tonumber(ARGV[4]) == 0 then
  skipped = redis.call('XTRIM', KEYS[1], 'MINID', first_kept)
else
  local from = '(' .. ARGV[2]
  while true do
    local page = redis.call('XRANGE', KEYS[1], from, last_skipped, 'COUNT', 1000)
    if #page == 0 then break end
    local ids = {}
    for i, entry in ipairs(page) do ids[i] = entry[1] end
    skipped = skipped + redis.call('XDEL', KEYS[1], unpack(ids))
    from = '(' .. ids[#ids]
  end
end
redis.call('HSET', KEYS[2], ARGV[1],
  (tonumber(ARGV[6]) + skipped) .. ' ' .. last_skipped .. ' ' .. (tonumber(ARGV[7]) + skipped))
return {skipped, last_skipped}
"""


class InboxClosed(Exception):
    """The encounter has ended: its inboxes take no more commands."""


class InboxFull(Exception):
    """The seat has as many commands waiting as it may (MAX_PENDING_COMMANDS)."""


class LogTampered(ValueError):
    """The log's own entries contradict each other: a genuine entry appended
    again, entries deleted, or the version counter changed, by someone who may
    write to Redis without the key. Final: nothing retries on it. The message
    begins "log tampered: " and names the versions."""

    def __init__(self, problem: str) -> None:
        super().__init__(f"log tampered: {problem}")
        self.problem = problem


def missing_versions(first: int, last: int) -> str:
    return f"v{first} is missing" if first == last else f"versions v{first}-v{last} are missing"


class VersionSequence:
    """The versions of a log read oldest first, which run 1, 2, 3... with
    nothing missing or repeated: what is wrong, by version. ``expected``:
    the version that comes next (None: whichever comes first)."""

    __slots__ = ("expected",)

    def __init__(self, expected: int | None = 1) -> None:
        self.expected = expected

    def problem(self, version: int) -> str:
        """"" when ``version`` comes next; else what is wrong. A version seen
        already is a copy (the sequence stays where it was: leave the copy
        out); after a gap the sequence goes on from ``version``."""
        expected = self.expected
        if expected is None or version == expected:
            self.expected = version + 1
            return ""
        if version < expected:
            return f"v{version} appears again after v{expected - 1} (a copy of a genuine entry)"
        self.expected = version + 1
        return f"{missing_versions(expected, version - 1)} (deleted from the log)"


class VersionConflict(Exception):
    """The log's version was not the one the writer expected; nothing was written."""

    def __init__(self, expected: int, actual: int) -> None:
        super().__init__(f"expected log version {expected}, but the log is at version {actual}")
        self.expected = expected
        self.actual = actual


class Batch(msgspec.Struct, frozen=True, kw_only=True):
    """The events answering one command, for ``append_batches``.

    ``digest`` identifies the command's body: a command id that was applied
    with another digest gives ``conflicting_body`` instead of a duplicate."""

    entries: list[NewEntry]
    command_id: str = ""
    causation: str = ""
    inbox_cursor: str = ""
    digest: str = ""


class InboxEntry(msgspec.Struct, frozen=True, kw_only=True):
    """One entry read from a seat's inbox: its id and its raw fields (any shape:
    the sequencer checks them, the reader does not)."""

    seat: str
    entry_id: str
    fields: dict[bytes, bytes]


class AppendResult(msgspec.Struct, frozen=True):
    """Outcome of ``EventLog.append``.

    ``version`` is the log's version after the append (for a duplicate: the
    current version). ``entry_ids`` are the new entries' stream IDs, empty for
    a duplicate or an empty batch.
    """

    version: int
    entry_ids: list[str]
    duplicate: bool = False
    conflicting_body: bool = False
    # For a duplicate: the last entry the command's first application wrote ("" for none).
    first_entry_id: str = ""


class PendingDrops(msgspec.Struct, frozen=True):
    """A seat's refusals the engine counted and has not recorded in the log yet
    (see ``EventLog.tidy_inboxes``): how many, up to which inbox entry, and how
    many of them it skipped unread."""

    count: int
    last_inbox_id: str
    skipped: int = 0

    def encode(self) -> str:
        return f"{self.count} {self.last_inbox_id} {self.skipped}"


class InboxTidy(msgspec.Struct, frozen=True):
    """What to remove from one seat's inbox: every entry before ``trim_before``
    ("" none) and the entries ``delete``; and the seat's drops to keep."""

    seat: str
    trim_before: str = ""
    delete: list[str] = []
    drops: PendingDrops | None = None


def validate_id(kind: str, value: str) -> str:
    """Check a campaign or encounter id: 1-64 chars of ``[A-Za-z0-9_.-]``."""
    if not isinstance(value, str) or not _ID_PATTERN.fullmatch(value):
        raise ValueError(f"invalid {kind} id {value!r}: use 1-64 characters from A-Z a-z 0-9 _ . -")
    return value


def _decode_id(raw: bytes) -> str:
    return raw.decode("ascii")


def _next_id(entry_id: str) -> str:
    milliseconds, _, sequence = entry_id.partition("-")
    return f"{milliseconds}-{int(sequence or 0) + 1}"


# The envelope's fields in the order the append script writes them; ``iter_pages``
# hands out every row in this layout, so readers index fields directly.
ENVELOPE_FIELDS = (b"n", b"t", b"s", b"d", b"c", b"k", b"q", b"h")
_ENVELOPE_NAMES = list(ENVELOPE_FIELDS)
# The entry that closes a signed group has one more field, last: ``g``, its
# public-key signature (log_signing.py); rows keep it at index 17.
_SIGNED_NAMES = [*ENVELOPE_FIELDS, b"g"]
FIELD_SIGNATURE = 17
FIELD_VERSION, FIELD_TYPE, FIELD_SCHEMA, FIELD_DATA, FIELD_COMMAND, FIELD_CAUSATION, FIELD_INBOX, FIELD_MAC = (
    1, 3, 5, 7, 9, 11, 13, 15)


def _checked_row(encounter: str, row: list[Any], key: bytes | None) -> tuple[list[Any] | None, str]:
    """The row with its fields in envelope order, or None and why it cannot be
    trusted: malformed, missing a field, unreadable, or (with a key) not signed
    by the engine. Rows the append script wrote take the fast path (their
    fields are already in order); others are rebuilt, or refused."""
    raw_id, flat = row
    if not isinstance(flat, list) or len(flat) % 2:
        return None, "malformed entry"
    names = flat[::2]
    if names != _ENVELOPE_NAMES and names != _SIGNED_NAMES:
        fields = dict(zip(flat[::2], flat[1::2]))
        missing = [name.decode() for name in (b"n", b"t", b"s", b"d") if name not in fields]
        if missing:
            return None, f"entry lacks field {', '.join(missing)}"
        flat = []
        for name in ENVELOPE_FIELDS:
            flat += (name, fields.get(name, b""))
        if fields.get(b"g"):
            flat += (b"g", fields[b"g"])
    if key is not None:
        # signing.raw_entry_mac, inlined: this runs for every entry of every read.
        # (Redis hands out every stream field as a string, so every value is bytes here.)
        header = b"\x00".join((encounter.encode(), flat[1], flat[3], flat[5], flat[9], flat[11], flat[13], b""))
        expected = blake2b(header + flat[7], key=key, digest_size=MAC_BYTES).hexdigest().encode()
        if not compare_digest(expected, flat[15]):
            claim = flat[1].decode("ascii", "replace")[:20] if isinstance(flat[1], bytes) else "?"
            return None, f"not written by this engine (its signature does not match; it says v{claim})"
    return [raw_id, flat], ""


def _checked_page(encounter: str, rows: list[Any], key: bytes | None) -> list[Any]:
    """The rows of a page that can be trusted (see ``_checked_row``). Unsigned,
    a page the append script wrote (every row's fields in order) is handed out
    as it is: one look per row, no copy."""
    if key is None:
        try:
            if all(type(flat) is list and flat[::2] in (_ENVELOPE_NAMES, _SIGNED_NAMES) for _raw_id, flat in rows):
                return rows
        except (TypeError, ValueError):
            pass  # a row that is not [id, fields]: checked one by one below
    return [row for row in (_checked_row(encounter, r, key)[0] for r in rows) if row is not None]


class _WindowOnly(msgspec.Struct):
    window: int = -1


_window_decoder = msgspec.json.Decoder(_WindowOnly)


def _window_of(body: bytes) -> int:
    """The ``window`` of a ReactionWindowOpened body (-1 if unreadable)."""
    try:
        return _window_decoder.decode(body).window
    except msgspec.DecodeError:
        return -1


def _invalid(encounter: str, entry_id: str, problem: str) -> StoredEvent:
    return StoredEvent(entry_id=entry_id, version=-1, encounter=encounter, type="", schema=0, data=b"", problem=problem)


def _stream_entry_to_event(encounter: str, row: list[Any], key: bytes | None) -> StoredEvent:
    """A stream entry as a StoredEvent; one that is malformed or (with a key)
    not signed by the engine comes back with ``problem`` set."""
    entry_id = row[0].decode("ascii", "replace")
    checked, problem = _checked_row(encounter, row, key)
    if checked is None:
        return _invalid(encounter, entry_id, problem)
    f = checked[1]
    try:
        return StoredEvent(
            entry_id=entry_id, version=int(f[1]), encounter=encounter, type=f[3].decode(), schema=int(f[5]),
            data=f[7], command_id=f[9].decode(), causation=f[11].decode(), inbox_cursor=f[13].decode(),
            signature=f[FIELD_SIGNATURE].decode() if len(f) > FIELD_SIGNATURE else "",
        )
    except (ValueError, UnicodeDecodeError) as exc:
        return _invalid(encounter, entry_id, f"unreadable entry ({type(exc).__name__})")


class EventLog:
    """The event logs (and command inboxes) of one campaign's encounters."""

    def __init__(
        self, client: CommandClient, campaign: str, *, server_key: bytes | None = None,
        replicas: int = 0, fsync: bool = False, ack_timeout_ms: int = 5000, signer: LogSigner | None = None,
    ) -> None:
        """``server_key``: the store's log key (see firelane.redisio.datadir);
        with it, every append is signed and every read checked. Without it
        (tests, a bare Redis), entries are neither signed nor checked.
        ``replicas``/``fsync``: what a write needs before it returns (see the
        module doc and ``Durability``). ``signer``: the store's public-key
        signer (log_signing.py); with it, appends carry signatures anyone can
        check with the store's public key."""
        self.client = client
        self.campaign = validate_id("campaign", campaign)
        self._prefix = f"firelane:{{{campaign}}}"
        self.server_key = server_key
        self.key = campaign_key(server_key, campaign) if server_key is not None else None
        self.durability = (
            Durability(replicas=replicas, fsync=fsync, timeout_ms=ack_timeout_ms) if replicas or fsync else None
        )
        self.signer = signer
        self._options = {"server_key": server_key, "replicas": replicas, "fsync": fsync, "ack_timeout_ms": ack_timeout_ms,
                         "signer": signer}

    def for_campaign(self, campaign: str) -> EventLog:
        """The same store, another campaign."""
        return EventLog(self.client, campaign, **self._options)  # type: ignore[arg-type]

    # -- keys ----------------------------------------------------------------

    def log_key(self, encounter: str) -> str:
        return f"{self._prefix}:enc:{validate_id('encounter', encounter)}:log"

    def applied_key(self, encounter: str) -> str:
        return f"{self._prefix}:enc:{validate_id('encounter', encounter)}:applied"

    def version_key(self, encounter: str) -> str:
        return f"{self._prefix}:enc:{validate_id('encounter', encounter)}:version"

    def inbox_key(self, encounter: str, seat: str) -> str:
        return f"{self._prefix}:enc:{validate_id('encounter', encounter)}:inbox:{validate_id('seat', seat)}"

    def options_key(self, encounter: str, seat: str) -> str:
        """The seat's own view stream: what the engine awaits and the seat's
        options (``n``: the log version they hold for; ``o``: SeatOptions JSON),
        written by the engine whenever it goes to wait for the seats."""
        return f"{self._prefix}:enc:{validate_id('encounter', encounter)}:options:{validate_id('seat', seat)}"

    def encounter_key(self, encounter: str, suffix: str) -> str:
        """Any other per-encounter key (seed, seats, lease, checkpoints...)."""
        return f"{self._prefix}:enc:{validate_id('encounter', encounter)}:{suffix}"

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
        digest: str = "",
    ) -> AppendResult:
        """Append ``entries`` atomically if the log is at ``expected_version``.

        If ``command_id`` was already applied, nothing is written and the
        result has ``duplicate=True``. Otherwise a version mismatch raises
        ``VersionConflict``. An empty ``entries`` with a ``command_id`` marks
        the command as applied without writing events.
        """
        batch = Batch(entries=list(entries), command_id=command_id, causation=causation, inbox_cursor=inbox_cursor,
                      digest=digest)
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
        if any(not entry.type for batch in batches for entry in batch.entries):
            raise ValueError("a log entry needs a non-empty type")
        signature, plan = "", None
        if self.signer is not None:  # (after every check that can refuse the append: the plan moves the signer on)
            signature, plan = await self._plan_signature(encounter, expected_version, batches)
        args: list[str | bytes | int] = [expected_version, len(batches)]
        version = expected_version
        last = sum(len(batch.entries) for batch in batches) + expected_version
        for batch in batches:
            args.extend((batch.command_id, batch.causation, batch.inbox_cursor, batch.digest, len(batch.entries)))
            for entry in batch.entries:
                version += 1
                mac = "" if self.key is None else entry_mac(
                    self.key, encounter, version, entry.type, entry.schema, entry.data,
                    batch.command_id, batch.causation, batch.inbox_cursor)
                args.extend((entry.type, entry.schema, entry.data, mac, signature if version == last else ""))
        try:
            tail_version, *reply = await self.client.evalsha_or_load(
                _APPEND_SCRIPT, (self.log_key(encounter), self.applied_key(encounter), self.version_key(encounter)),
                args, durability=self.durability,
            )
        except BaseException:
            if self.signer is not None:
                self.signer.forget(self.campaign, encounter)  # it may or may not have landed
            raise
        if self.signer is not None:
            if len(reply) == len(batches) and all(status == 1 for status, *_ in reply):
                self.signer.commit(self.campaign, encounter, last, plan)
            else:
                self.signer.forget(self.campaign, encounter)
        results = []
        expected = expected_version
        conflict = None
        for status, version, *rest in reply:
            if status == 1:
                results.append(AppendResult(version, [_decode_id(raw) for raw in rest[0]]))
                expected = version
            elif status in (0, 2):
                results.append(AppendResult(version, [], duplicate=True, conflicting_body=status == 2,
                                            first_entry_id=rest[0].decode("ascii") if rest and rest[0] else ""))
            else:
                conflict = VersionConflict(expected, version)
        if results and results[0].entry_ids and tail_version != (str(expected_version).encode() if expected_version else b""):
            # The counter was where the writer expected it, but the stream does
            # not end with that version: entries deleted from its end, a
            # genuine one appended again, or the counter moved (or only
            # someone's unsigned entries after the engine's: those are fine).
            problem = await self.tail_problem(encounter, expected_version, before=results[0].entry_ids[0])
            if problem:
                raise LogTampered(problem)
        if conflict is not None:
            raise conflict
        return results

    async def _plan_signature(self, encounter: str, expected_version: int,
                              batches: Sequence[Batch]) -> tuple[str, object]:
        """The signature the last entry of this append carries ("" for none
        yet) and the signer's plan for it (log_signing.LogSigner)."""
        signer = self.signer
        assert signer is not None
        if not signer.known(self.campaign, encounter, expected_version):
            await self._resume_signing(encounter, expected_version)
        entries = []
        version = expected_version
        seal = False
        for batch in batches:
            command, causation, cursor = batch.command_id.encode(), batch.causation.encode(), batch.inbox_cursor.encode()
            for entry in batch.entries:
                version += 1
                entries.append(entry_bytes(str(version).encode(), entry.type.encode(), str(entry.schema).encode(),
                                           command, causation, cursor, entry.data))
                seal = seal or entry.type in _SEALING_TYPES
        return signer.plan(self.campaign, encounter, entries, seal=seal)

    async def _resume_signing(self, encounter: str, version: int) -> None:
        """Find the group the log has open (the entries after the last one
        carrying a signature) so the next signature covers them: at most
        `_RESUME_SCAN` entries are looked back over; further back (a log an
        older firelane wrote unsigned), the next group starts after ``version``."""
        assert self.signer is not None
        tail: list[StoredEvent] = []
        first = version + 1
        if version > 0:
            try:
                async with aclosing(self._newest_first(encounter, page=100)) as events:
                    async for event in events:
                        if event.version > version:
                            continue
                        if event.signature:
                            first = event.version + 1
                            break
                        tail.append(event)
                        if event.version == 1:
                            first = 1
                            break
                        if len(tail) >= _RESUME_SCAN:
                            tail = []
                            break
            except LogTampered:
                tail = []
        tail.reverse()
        if tail and (tail[0].version != first or tail[-1].version != version):
            tail, first = [], version + 1  # the log does not run on: leave it to the readers to say so
        self.signer.resume(self.campaign, encounter, first, [
            entry_bytes(str(e.version).encode(), e.type.encode(), str(e.schema).encode(), e.command_id.encode(),
                        e.causation.encode(), e.inbox_cursor.encode(), e.data) for e in tail])

    async def tail_problem(self, encounter: str, version: int, *, before: str = "") -> str:
        """What is wrong with the end of a log whose counter says ``version``
        (its engine's entries before entry ``before``), or "" when its last
        genuine entry is that version. Looks back over at most 100 entries."""
        seen: list[int] = []
        found = False
        async with aclosing(self._newest_first(encounter, f"({before}" if before else "+", page=100,
                                               strict=False)) as events:
            async for event in events:
                if event.version == version:
                    found = True
                    break
                if event.version > version:
                    return f"the log has v{event.version} but its version counter says v{version} (set back)"
                seen.append(event.version)  # after the counter's entry in the stream, yet older: a copy, or the end is gone
                if len(seen) >= 100:
                    break
        if not seen and (found or version == 0):
            return ""
        if not found:
            newest = max(seen, default=0)
            return (f"{missing_versions(newest + 1, version)} at the end of the log (deleted), "
                    f"or its version counter was moved on from v{newest}")
        copies = sorted(set(seen))
        return (f"{', '.join(f'v{v}' for v in copies)} appear{'s' if len(copies) == 1 else ''} again "
                f"after v{version} (a copy of a genuine entry)")

    async def applied_entry_id(self, encounter: str, command_id: str) -> str | None:
        """The last entry id written for ``command_id`` ("" if it wrote none), or None if never applied."""
        raw = await self.client.execute("HGET", self.applied_key(encounter), command_id)
        return None if raw is None else raw.decode("ascii").split(" ", 1)[0]

    async def applied_record(self, encounter: str, command_id: str) -> tuple[str, str] | None:
        """``(last entry id, body digest)`` of what ``command_id`` wrote (either may be ""), or None if never applied."""
        raw = await self.client.execute("HGET", self.applied_key(encounter), command_id)
        if raw is None:
            return None
        entry_id, _, digest = raw.decode("ascii").partition(" ")
        return entry_id, digest

    # -- reading -------------------------------------------------------------

    async def version(self, encounter: str) -> int:
        """The number of the engine's events in the encounter's log."""
        raw = await self.client.execute("GET", self.version_key(encounter))
        return int(raw) if raw is not None else 0

    def _convert(self, encounter: str, page: list[Any], include_invalid: bool,
                 sequence: VersionSequence | None = None) -> list[StoredEvent]:
        events = [_stream_entry_to_event(encounter, entry, self.key) for entry in page]
        if sequence is None:
            return events if include_invalid else [e for e in events if not e.problem]
        kept = []
        for event in events:
            if not event.problem:
                copy = sequence.expected is not None and event.version < sequence.expected
                problem = sequence.problem(event.version)
                if problem:
                    if not include_invalid:
                        raise LogTampered(problem)
                    kept.append(_invalid(encounter, event.entry_id,
                                         f"log tampered: {problem}{'; left out' if copy else ''}"))
                    if copy:
                        continue  # a copy is never handed out as an event: it would be folded twice
            if include_invalid or not event.problem:
                kept.append(event)
        return kept

    async def read(
        self, encounter: str, after: str = "0-0", count: int | None = None, *, include_invalid: bool = False
    ) -> list[StoredEvent]:
        """Events with entry id greater than ``after``, oldest first (all of them
        if ``count`` is None; ``count`` counts stream entries). Entries that are
        malformed or not the engine's are left out, or with ``include_invalid``
        returned with ``problem`` set. Versions that do not run on (a copy of
        an entry, entries deleted) raise `LogTampered`, or with
        ``include_invalid`` come as entries whose ``problem`` names them (a
        copy is left out; see ``iter_read``).

        Holds the whole answer in memory: to go through a long log, use ``iter_read``.
        """
        events: list[StoredEvent] = []
        async for page in self.iter_read(encounter, after, count=count, include_invalid=include_invalid):
            events.extend(page)
        return events

    async def iter_read(
        self, encounter: str, after: str = "0-0", *, page: int = _PAGE_SIZE, count: int | None = None,
        include_invalid: bool = False,
    ) -> AsyncIterator[list[StoredEvent]]:
        """Yield the events after ``after`` page by page, oldest first, up to
        ``count`` stream entries in all (None: to the end of the log); entries
        that cannot be trusted as in ``read``.

        The versions must run on from the first one read (from 1, reading from
        the start): a copy of an entry or a gap raises `LogTampered`, or with
        ``include_invalid`` comes as an entry whose ``problem`` names the
        versions (the copy itself is left out); then, read to its end, a log
        that stops short of its version counter gets one more such entry.

        Only one page is held at a time, so a fold over a log of any length
        runs in bounded memory. Use ``contextlib.aclosing`` if you may stop early.
        """
        sequence = VersionSequence(1 if after in ("0-0", "-") else None)
        # Read before the entries: appends only move it on, so entries up to it were there.
        counter = await self.version(encounter) if count is None and include_invalid else None
        async with aclosing(self._raw_pages(encounter, after, page=page, count=count)) as pages:
            async for rows in pages:
                events = self._convert(encounter, rows, include_invalid, sequence)
                if events:
                    yield events
        if counter is not None and sequence.expected is not None and sequence.expected <= counter:
            problem = (f"{missing_versions(sequence.expected, counter)} at the end of the log (deleted): "
                       f"its version counter says v{counter}")
            yield [_invalid(encounter, "(end)", f"log tampered: {problem}")]

    async def iter_pages(
        self, encounter: str, after: str = "0-0", *, page: int = _PAGE_SIZE, count: int | None = None
    ) -> AsyncIterator[list[list[Any]]]:
        """Like ``iter_read``, but yields the stream entries as Redis returns
        them, ``[entry_id, [b"n", n, b"t", t, b"s", s, b"d", d, b"c", c, b"k", k, b"q", q, b"h", h]]``
        (bytes; fields always in this order, see ``FIELD_*``), for folds that
        need no `StoredEvent` per entry (the fastest way through a long log).
        Only the rows that can be trusted (see ``read``) are handed out.
        """
        async with aclosing(self._raw_pages(encounter, after, page=page, count=count)) as pages:
            async for rows in pages:
                checked = _checked_page(encounter, rows, self.key)
                if checked:
                    yield checked

    async def _raw_pages(
        self, encounter: str, after: str = "0-0", *, page: int = _PAGE_SIZE, count: int | None = None
    ) -> AsyncIterator[list[list[Any]]]:
        """The log's stream entries after ``after``, unchecked, page by page."""
        if page <= 0:
            raise ValueError("page must be positive")
        if count is not None and count <= 0:
            return
        key = self.log_key(encounter)
        size = page if count is None else min(page, count)
        rows = await self.client.execute("XRANGE", key, f"({after}", "+", "COUNT", size)
        if rows:
            yield rows
        remaining = None if count is None else count - len(rows)
        if len(rows) < size or remaining == 0:
            return
        if not getattr(self.client, "read_ahead_supported", False):
            # A cluster client cannot follow a redirect in the middle of a
            # read-ahead: page by plain requests.
            while len(rows) == size and remaining != 0:
                size = page if remaining is None else min(page, remaining)
                rows = await self.client.execute("XRANGE", key, b"(" + rows[-1][0], "+", "COUNT", size)
                if not rows:
                    return
                if remaining is not None:
                    remaining -= len(rows)
                yield rows
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
                yield rows
                if not more:
                    return

    async def clock_starts(
        self, encounter: str, *, turn_version: int | None, window: int | None, scan: int = 5000
    ) -> tuple[int | None, int | None]:
        """When the running turn (its TurnStarted, at version ``turn_version``)
        and the open ``window`` (its ReactionWindowOpened) began, in Redis
        milliseconds (their entries' ids). A rewind after one counts as its
        start: an EncounterRewound gives the restored turn and window their
        time again. Looks back over at most ``scan`` entries (signed ones, with
        a key); None for what it does not find there."""
        turn_ms = window_ms = None
        looked = 0
        async with aclosing(self._newest_first(encounter, page=500)) as events:
            async for event in events:
                at = int(event.entry_id.split("-")[0])
                rewound = event.type == "EncounterRewound"
                if turn_version is not None and turn_ms is None and (
                        rewound or (event.type == "TurnStarted" and event.version == turn_version)):
                    turn_ms = at
                if window is not None and window_ms is None and (
                        rewound or (event.type == "ReactionWindowOpened" and _window_of(event.data) == window)):
                    window_ms = at
                looked += 1
                if looked >= scan or ((turn_version is None or turn_ms is not None)
                                      and (window is None or window_ms is not None)):
                    break
        return turn_ms, window_ms

    async def read_from_version(self, encounter: str, version: int) -> list[StoredEvent]:
        """Events with version (``n``) greater than ``version``, oldest first.

        Pages backwards from the end of the log, so reading a recent tail does
        not scan the whole log.
        """
        if version <= 0:
            return await self.read(encounter)
        newest_first: list[StoredEvent] = []
        reached = False
        async with aclosing(self._newest_first(encounter)) as events:
            async for event in events:
                if reached:
                    break  # (read one further, so the versions' run is checked there too)
                if event.version <= version:
                    reached = True
                    continue
                newest_first.append(event)
        newest_first.reverse()
        return newest_first

    async def batch_ending_at(self, encounter: str, entry_id: str, command_id: str) -> list[StoredEvent]:
        """The events ``command_id`` wrote in the batch whose last entry is
        ``entry_id`` (``applied_record``), oldest first: a batch's entries are
        contiguous, so this pages back from there while ``c`` is that id."""
        if not entry_id:
            return []
        newest_first: list[StoredEvent] = []
        async with aclosing(self._newest_first(encounter, entry_id, page=100)) as events:
            async for event in events:
                if event.command_id != command_id:
                    break
                newest_first.append(event)
        newest_first.reverse()
        return newest_first

    async def _newest_first(self, encounter: str, upper: str = "+", *, page: int = _PAGE_SIZE,
                            strict: bool = True) -> AsyncIterator[StoredEvent]:
        """The log's trusted events from entry ``upper`` (inclusive; "+": the
        end) back to its start, newest first, an XREVRANGE page at a time.
        ``strict``: versions that do not run back one by one (a copy of an
        entry appended, entries deleted) raise `LogTampered`."""
        key = self.log_key(encounter)
        later: int | None = None
        while True:
            rows = await self.client.execute("XREVRANGE", key, upper, "-", "COUNT", page)
            for event in self._convert(encounter, rows, include_invalid=False):
                if strict and later is not None and event.version != later - 1:
                    if event.version >= later:
                        raise LogTampered(f"v{later} appears again after v{event.version} (a copy of a genuine entry)")
                    raise LogTampered(f"{missing_versions(event.version + 1, later - 1)} (deleted from the log)")
                later = event.version
                yield event
            if len(rows) < page:
                return
            upper = f"({_decode_id(rows[-1][0])}"

    async def last_of_type(self, encounter: str, event_type: str, *, scan: int = 50) -> StoredEvent | None:
        """The newest trusted entry of ``event_type`` among the last ``scan``
        (whatever else the log's end holds: copies, gaps), or None."""
        looked = 0
        async with aclosing(self._newest_first(encounter, page=min(scan, _PAGE_SIZE), strict=False)) as events:
            async for event in events:
                if event.type == event_type:
                    return event
                looked += 1
                if looked >= scan:
                    break
        return None

    async def entry_at(self, encounter: str, entry_id: str) -> StoredEvent | None:
        """The trusted entry with this id, or None."""
        rows = await self.client.execute("XRANGE", self.log_key(encounter), entry_id, entry_id)
        events = self._convert(encounter, rows or [], include_invalid=False)
        return events[0] if events else None

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
                cursor = _decode_id(entries[-1][0])
                events = self._convert(encounter, entries, include_invalid=False)
                if events:
                    yield events

    # -- command inbox -------------------------------------------------------

    def inboxes_closed_key(self, encounter: str) -> str:
        """Set when the encounter has ended and its inboxes are gone (see ``close_inboxes``)."""
        return self.encounter_key(encounter, "inboxes-closed")

    async def submit(self, encounter: str, payload: bytes, *, seat: str) -> str:
        """Add a command to a seat's inbox of the encounter; returns its inbox entry id.

        Raises `InboxClosed` once the encounter has ended, and `InboxFull` when
        the seat has MAX_PENDING_COMMANDS waiting: nothing is written then."""
        raw = await self.client.evalsha_or_load(
            _SUBMIT_SCRIPT, (self.inbox_key(encounter, seat), self.inboxes_closed_key(encounter)),
            (MAX_PENDING_COMMANDS, payload), durability=self.durability)
        if raw == -1:
            raise InboxClosed(f"encounter {encounter!r} has ended: it takes no more commands")
        if raw == -2:
            raise InboxFull(f"seat {seat!r} has {MAX_PENDING_COMMANDS} commands waiting for the engine of "
                            f"encounter {encounter!r}; send more once it has answered them")
        return _decode_id(raw)

    async def mark_inboxes_closed(self, encounter: str) -> None:
        """From now on ``submit`` refuses every command (`InboxClosed`): the
        first step of closing an ended encounter's inboxes (the engine answers
        what they still hold before it deletes them)."""
        await self.client.execute("SET", self.inboxes_closed_key(encounter), "1")

    async def close_inboxes(self, encounter: str, seats: Iterable[str]) -> None:
        """An ended encounter's inboxes: marked closed (so no submit recreates
        one), then deleted. Nothing reads them any more."""
        await self.mark_inboxes_closed(encounter)
        keys = [self.inbox_key(encounter, seat) for seat in seats] + [self.dropped_key(encounter)]
        await self.client.execute("DEL", *keys)

    async def inboxes_closed(self, encounter: str) -> bool:
        return bool(await self.client.execute("EXISTS", self.inboxes_closed_key(encounter)))

    async def read_inboxes(
        self, encounter: str, cursors: dict[str, str], *, block_ms: int | None = None, count: int = 100
    ) -> list[InboxEntry]:
        """Entries after each seat's cursor in its inbox (seat -> last id read),
        in one read; waits up to ``block_ms`` when there are none. Fields come
        back raw: an entry may have any shape."""
        if count <= 0:
            raise ValueError("count must be positive")
        if not cursors:
            raise ValueError("read_inboxes needs at least one seat")
        seats = list(cursors)
        command: list[str | int] = ["XREAD", "COUNT", count]
        if block_ms is not None:
            if block_ms < 0:
                raise ValueError("block_ms must be >= 0")
            command += ["BLOCK", block_ms]
        command += ["STREAMS", *(self.inbox_key(encounter, seat) for seat in seats), *(cursors[s] for s in seats)]
        reply = await self.client.execute(*command)
        if not reply:
            return []
        seat_of = {self.inbox_key(encounter, seat).encode(): seat for seat in seats}
        entries = []
        for stream, stream_entries in reply:
            seat = seat_of[stream]
            for raw_id, flat in stream_entries:
                fields = dict(zip(flat[::2], flat[1::2])) if isinstance(flat, list) else {}
                entries.append(InboxEntry(seat=seat, entry_id=_decode_id(raw_id), fields=fields))
        return entries

    async def read_inbox(self, encounter: str, seat: str, after: str = "0-0", *, count: int = 100) -> list[InboxEntry]:
        """One seat's inbox after ``after`` (no waiting)."""
        return await self.read_inboxes(encounter, {seat: after}, count=count)

    def dropped_key(self, encounter: str) -> str:
        """Hash seat -> the refusals the engine counted and has not recorded yet (`PendingDrops`)."""
        return self.encounter_key(encounter, "inbox-dropped")

    async def tidy_inboxes(self, encounter: str, tidies: Sequence[InboxTidy]) -> None:
        """Remove what the engine has handled from seats' inboxes and keep each
        seat's counted refusals, in one atomic script: an entry whose refusal
        was only counted leaves its inbox together with the count that holds it."""
        if not tidies:
            return
        keys = [self.dropped_key(encounter)] + [self.inbox_key(encounter, tidy.seat) for tidy in tidies]
        args: list[str | int] = []
        for tidy in tidies:
            args += [tidy.seat, tidy.drops.encode() if tidy.drops is not None else "", tidy.trim_before,
                     len(tidy.delete), *tidy.delete]
        await self.client.evalsha_or_load(_TIDY_SCRIPT, keys, args)

    async def skip_backlog(self, encounter: str, seat: str, read_up_to: str, *, keep: int, held: int,
                           drops: PendingDrops | None) -> tuple[int, str]:
        """When a seat's inbox holds more than ``keep`` entries after
        ``read_up_to``, remove the oldest of them unread (counted with the
        seat's ``drops``, atomically) so that only the newest ``keep`` remain
        to be read. ``held``: the entries at or before ``read_up_to`` that the
        engine still keeps (held window answers; with none, everything up to it
        is removed first). Returns how many were skipped and the last one's id."""
        skipped, last_id = await self.client.evalsha_or_load(
            _SKIP_SCRIPT, (self.inbox_key(encounter, seat), self.dropped_key(encounter)),
            (seat, read_up_to, keep, held, "" if held else _next_id(read_up_to),
             drops.count if drops else 0, drops.skipped if drops else 0))
        return int(skipped), last_id.decode("ascii") if last_id else ""

    async def pending_drops(self, encounter: str) -> dict[str, PendingDrops]:
        """The refusals counted and not recorded yet, by seat (see ``tidy_inboxes``)."""
        raw = await self.client.execute("HGETALL", self.dropped_key(encounter)) or []
        drops = {}
        for i in range(0, len(raw), 2):
            try:
                count, last_id, skipped = raw[i + 1].decode("ascii").split(" ")
                drops[raw[i].decode()] = PendingDrops(int(count), last_id, int(skipped))
            except (ValueError, UnicodeDecodeError):
                continue  # not the engine's: nothing to report
        return drops

    # -- encounter registry --------------------------------------------------

    async def register_encounter(self, encounter: str, meta: bytes) -> bool:
        """Record the encounter (once, keeping creation order) and set its metadata.

        Returns True if it was new. Registering again only replaces the metadata.
        """
        created = await self.client.evalsha_or_load(
            _REGISTER_SCRIPT,
            (self.encounters_key, self.encounter_meta_key),
            (validate_id("encounter", encounter), meta),
            durability=self.durability,
        )
        if created:
            # Store-wide (outside the campaign's hash slot): what `firelane serve`
            # watches to find every campaign and pick up new encounters at once.
            await self.client.execute("SADD", CAMPAIGNS_KEY, self.campaign)
            await self.client.execute("XADD", CREATED_KEY, "MAXLEN", "~", 10_000, "*",
                                      "campaign", self.campaign, "encounter", encounter)
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
