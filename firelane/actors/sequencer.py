"""The encounter sequencer: the single writer of an encounter's log.

It reads commands from the encounter's seat inboxes (one stream per seat: the
stream a command arrives on names its seat, and so its authority), checks each
entry as hostile input (any shape is rejected with a reason and passed over),
authorises it for its seat, decides it against the state folded from the log,
and appends the resulting events with an expected-version check and the
command's ID namespaced by its seat ("<seat>/<command_id>"), so a retried
command is applied once, nobody can take an ID another seat or the engine will
use, and a second writer is detected.

Crash safety: every append records how far its seat's inbox is handled
("<seat>=<entry id>"); a restarted sequencer folds the log, resumes each inbox
from its cursor, and re-handles what follows (already-applied commands come
back as duplicates and are skipped).

Inboxes hold only what the engine has not read, and the window answers it
holds: after each read, what it handled leaves the inbox (with the count of
the refusals it only counted, kept in Redis until a CommandsDropped records
them), so the limit on waiting commands (MAX_PENDING_COMMANDS) counts what is
waiting, never what was refused. A seat's Redis user can XADD past that limit:
the engine then reads only the newest MAX_PENDING_COMMANDS of its inbox and
counts the older ones as dropped unread.

Reaction windows: answers (claims and passes) are checked at once (a bad one is
rejected immediately) but held until every reactor has answered or the
deadline passes, then applied in the order the window lists its reactors. So
the log does not depend on which reactor's message arrived first, and every
reactor answers from the same state. The deadline restarts in full when a
sequencer restarts with a window open.
"""

from __future__ import annotations

import hashlib
import math
import re
import secrets
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass

import msgspec
import trio

from firelane.actors.campaign import enlistment, record_aftermath
from firelane.actors import hooks, inbox_hub
from firelane.actors.clock import WallClock, deadlines_key, system_wall_clock
from firelane.actors.orders import load_orders, note_used, orders_used
from firelane.actors.lease import SequencerLease
from firelane.actors.seating import close_seats, provision_seat_users
from firelane.actors.policies import AIPolicy, Policy
from firelane.engine.core import SEQUENCER, Applied, BaseRuleSystem, Rejected, reject, resting_points
from firelane.engine.dice import SeededDice, check_seed_size, commit_seed, dice_key
from firelane.engine.registry import get_system
from firelane.actors.lobby_seeds import lobby_client_seeds
from firelane.engine.seats import ENGINE_SEAT, authorize, default_seats, seat_controlling
from firelane.engine.setup_check import check_setup
from firelane.engine.state import EncounterState, copy_state
from firelane.engine.orders import StandingOrder, turn_answer, window_answer
from firelane.engine.timeouts import TIME_UP_CALL, window_timeout
from firelane.events import codec
from firelane.events.limits import (
    MAX_COMMAND_BYTES,
    MAX_COMMAND_DEPTH,
    MAX_ECHOED_ID_CHARS,
    MAX_PENDING_COMMANDS,
    bounded,
    json_too_deep,
)
from firelane.events.envelope import format_inbox_cursors, parse_inbox_cursors
from firelane.events.log import (
    FIELD_COMMAND,
    Batch,
    EventLog,
    InboxEntry,
    InboxTidy,
    LogTampered,
    PendingDrops,
    VersionConflict,
)
from firelane.events.sealing import SealError, SeedRecord, open_seed, seal_seed
from firelane.events.tokens_at_rest import StoredToken, open_token, seal_token
from firelane.events.schemas import (
    ClaimReaction,
    CloseReactionWindow,
    Command,
    CommandRejected,
    CommandRepeated,
    CommandsDropped,
    EncounterSetup,
    Event,
    EncounterRewound,
    EndEncounter,
    EndTurn,
    GMSkipTurn,
    PassReaction,
    RewindEncounter,
    SeedRevealed,
    StartEncounter,
    TimeOutTurn,
)
from firelane.logs import get_logger
from firelane.projections.snapshots import encode_snapshot, load_snapshot, snapshot_key
from firelane.projections.turn_state import fold_stream
from firelane.redisio import RedisError

log = get_logger("firelane.sequencer")

# A client's command_id: short and plain, so it can be namespaced and echoed safely.
_COMMAND_ID = re.compile(r"[A-Za-z0-9_.:@#-]{1,64}")
# Inbox entries read at a time, per seat. A seat whose read is full may have
# a backlog: past MAX_PENDING_COMMANDS unread, its oldest are skipped.
READ_BATCH = 256
SEAT_VIEWS_KEPT = 4  # entries of a seat's view stream kept (the newest is what counts)
# Events that answer a seat without changing what anyone may do: no new seat views for them.
_ANSWERS_ONLY = (CommandRejected, CommandRepeated, CommandsDropped)
ENDED_REASON = "the encounter has ended: it takes no more commands"
# A seat's refused commands recorded one by one: a burst of REJECTION_BURST,
# then one per REJECTION_REFILL_S; the others are counted in one
# CommandsDropped per burst, so a client cannot make the log hold without end
# what the engine refused. (A person is refused a few times at most; a
# correct program, never.)
REJECTION_BURST = 32
REJECTION_REFILL_S = 1.0
# Commands the engine's own players make before the sequencer reads the inboxes again.
PLAY_SLICE = 32
PLAY_SLICE_SECONDS = 0.002


class SliceTurns:
    """The turns the engine's players' slices take in one process, which runs
    many encounters: one slice at a time, held across a schedule point (so a
    slice of another encounter, or a seat's command, runs between two), in
    order of arrival, except that a slice someone outside is waiting on (a
    seat's command just handled, or a seat's window answer held) goes before
    the slices nobody waits on. Without that, a person's command at a busy
    server would wait for one slice of every encounter queued before it."""

    def __init__(self) -> None:
        self._held = False
        self._urgent: deque[trio.Event] = deque()
        self._others: deque[trio.Event] = deque()

    @asynccontextmanager
    async def turn(self, *, urgent: bool) -> AsyncIterator[None]:
        await trio.lowlevel.checkpoint_if_cancelled()
        if not self._held:
            self._held = True
            await trio.lowlevel.cancel_shielded_checkpoint()
        else:
            handed = trio.Event()
            queue = self._urgent if urgent else self._others
            queue.append(handed)
            try:
                await handed.wait()
            except BaseException:
                if handed.is_set():
                    self._pass_on()  # handed the turn as it was cancelled: the next one has it
                else:
                    queue.remove(handed)
                raise
        try:
            yield
        finally:
            self._pass_on()

    def _pass_on(self) -> None:
        for queue in (self._urgent, self._others):
            if queue:
                queue.popleft().set()  # still held: it is that one's turn now
                return
        self._held = False


_slice_turns: trio.lowlevel.RunVar[SliceTurns] = trio.lowlevel.RunVar("firelane_slice_turns")


_views_limiter: trio.lowlevel.RunVar[trio.CapacityLimiter] = trio.lowlevel.RunVar("firelane_views_limiter")


def _views_threads() -> trio.CapacityLimiter:
    """The threads that work out seat views in this trio run: one (more would
    only share the GIL with the engines)."""
    try:
        return _views_limiter.get()
    except LookupError:
        limiter = trio.CapacityLimiter(1)
        _views_limiter.set(limiter)
        return limiter


def _play_turns() -> SliceTurns:
    """This trio run's turns for the engine's players' slices."""
    try:
        return _slice_turns.get()
    except LookupError:
        turns = SliceTurns()
        _slice_turns.set(turns)
        return turns


def seed_key(campaign: str, encounter: str) -> str:
    """The encounter's secret seed, sealed (see firelane.events.sealing): the engine's alone until revealed."""
    return f"firelane:{{{campaign}}}:enc:{encounter}:seed"


def seats_key(campaign: str, encounter: str) -> str:
    """Hash seat -> its secret token at rest (digest and sealed; readable by the engine and the server only)."""
    return f"firelane:{{{campaign}}}:enc:{encounter}:seats"


def command_key(seat: str, command_id: str) -> str:
    """The idempotency key of a command in the log's ``c`` field."""
    return f"{seat}/{command_id}"


class EncounterExists(RuntimeError):
    pass


def log_public_key(event_log: EventLog) -> str:
    """The public key (hex) that signs this store's logs ("" for a log opened
    without one): published in the log's first entry, by `seats --json` and
    the API, when the encounter is created."""
    return event_log.signer.key.public_key.hex() if event_log.signer is not None else ""


def _start_command(setup: EncounterSetup, seed: SeedRecord, log_public_key: str = "") -> bytes:
    start = StartEncounter(command_id="start", actor=SEQUENCER, setup=setup, seed_commitment=commit_seed(seed.seed_bytes),
                           reproducible_dice=seed.reproducible_dice, log_public_key=log_public_key)
    return codec.encode_command(start)


def sealed_seed(event_log: EventLog, encounter: str, seed: bytes, reproducible_dice: bool = False) -> bytes:
    """The value `seed_key` holds for ``seed``: sealed with the store's key (see firelane.events.sealing)."""
    return seal_seed(event_log.server_key, event_log.campaign, seed_key(event_log.campaign, encounter), seed,
                     reproducible_dice=reproducible_dice)


async def _stored_seed(event_log: EventLog, encounter: str) -> SeedRecord:
    key = seed_key(event_log.campaign, encounter)
    stored = await event_log.client.execute("GET", key)
    if stored is None:
        raise LookupError(f"no seed for encounter {encounter!r} in campaign {event_log.campaign!r}")
    try:
        return open_seed(event_log.server_key, event_log.campaign, key, stored)
    except SealError as exc:
        raise LookupError(f"the seed of encounter {encounter!r} in campaign {event_log.campaign!r} {exc}") from None


async def _store_tokens(event_log: EventLog, encounter: str, setup: EncounterSetup) -> None:
    """A secret token per seat (kept once: a repeated creation keeps the first),
    and the seats' Redis users. Kept at rest as a digest and sealed, never in
    clear (firelane.events.tokens_at_rest)."""
    seats = default_seats(setup)
    key = seats_key(event_log.campaign, encounter)
    fresh = seal_seat_tokens(event_log, encounter, {seat.id: secrets.token_urlsafe(18) for seat in seats})
    for seat_id, stored in fresh.items():
        await event_log.client.execute("HSETNX", key, seat_id, stored)
    await provision_seat_users(event_log, encounter, seats, await seat_token_digests(event_log, encounter))


async def create_encounter(event_log: EventLog, encounter: str, setup: EncounterSetup, seed: bytes, *,
                           reproducible_dice: bool = False, lobby: bool = False) -> EncounterSetup:
    """Check the setup in full, then register the encounter, keep its secret
    seed (sealed), give each seat a token and queue its StartEncounter.

    ``seed``: 32 secret random bytes (`firelane.engine.dice.new_seed`), unless
    the creator asked for dice anyone can reproduce from a text
    (``reproducible_dice``, which the log then records for all to see).

    A setup that cannot be played raises SetupError before anything is stored;
    an encounter ID that is already taken is refused, so a campaign's history is
    never mixed with a new fight. Returns the setup as it will start.

    ``lobby``: the encounter waits in the lobby (its seats can connect) until
    the GM starts it (actors/workshop.py: `start_lobby`); no engine takes it up
    before, so nothing is rolled and no AI acts.
    """
    enlisting = await enlistment(event_log, encounter, setup)  # campaign characters' sheets written in
    setup = enlisting.setup
    resolved = check_setup(get_system(setup.system), setup)
    check_seed_size(seed)
    created = await event_log.client.execute("SET", seed_key(event_log.campaign, encounter),
                                             sealed_seed(event_log, encounter, seed, reproducible_dice), "NX")
    if created is None:
        raise EncounterExists(f"encounter {encounter!r} already exists in campaign {event_log.campaign!r}")
    try:
        await enlisting.record()
    except BaseException:
        with trio.CancelScope(shield=True):  # the characters are taken: leave the encounter ID free
            await event_log.client.execute("DEL", seed_key(event_log.campaign, encounter))
        raise
    await _store_tokens(event_log, encounter, setup)
    # The start is queued before the encounter is registered: `firelane serve`
    # takes up a registered encounter at once, and reads its setup from it.
    record = SeedRecord(seed=seed.hex(), reproducible_dice=reproducible_dice)
    await event_log.submit(encounter, _start_command(setup, record, log_public_key(event_log)), seat=ENGINE_SEAT)
    if lobby:  # before it is registered: an engine that sees it registered sees it waiting
        await event_log.client.execute("SET", event_log.encounter_key(encounter, "lobby"), b"1")
    await event_log.register_encounter(encounter, _meta(encounter, setup, record))
    return resolved


def _meta(encounter: str, setup: EncounterSetup, seed: SeedRecord) -> bytes:
    """The roster's registration; it says so when the dice are reproducible (before the log does)."""
    meta = {"system": setup.system, "name": setup.name or encounter}
    return codec.encode_json({**meta, "reproducible_dice": True} if seed.reproducible_dice else meta)


async def ensure_encounter(event_log: EventLog, encounter: str, setup: EncounterSetup, seed: bytes, *,
                           reproducible_dice: bool = False) -> bytes:
    """Create the encounter if it is new; safe to repeat after a crash at any
    point of creation (the seed and tokens are kept once, the start command is
    idempotent). Returns the seed in force (the stored one if the encounter
    already had one: it comes with the reproducibility it was stored with)."""
    enlisting = await enlistment(event_log, encounter, setup)  # campaign characters' sheets written in
    setup = enlisting.setup
    check_setup(get_system(setup.system), setup)
    check_seed_size(seed)
    await event_log.client.execute("SET", seed_key(event_log.campaign, encounter),
                                   sealed_seed(event_log, encounter, seed, reproducible_dice), "NX")
    stored = await _stored_seed(event_log, encounter)
    await enlisting.record()
    await _store_tokens(event_log, encounter, setup)
    if await event_log.version(encounter) == 0:  # queued before it is registered, as in create_encounter
        await event_log.submit(encounter, _start_command(setup, stored, log_public_key(event_log)), seat=ENGINE_SEAT)
    await event_log.register_encounter(encounter, _meta(encounter, setup, stored))
    return stored.seed_bytes


async def load_seed(event_log: EventLog, encounter: str) -> bytes:
    """The encounter's secret seed (LookupError if it has none, or it does not open)."""
    return (await _stored_seed(event_log, encounter)).seed_bytes


def _token_place(event_log: EventLog, encounter: str, seat: str) -> str:
    """Where a seat's token is kept: what its sealed value is bound to."""
    return f"{seats_key(event_log.campaign, encounter)}/{seat}"


def seal_seat_tokens(event_log: EventLog, encounter: str, tokens: Mapping[str, str]) -> dict[str, bytes]:
    """Seat -> the value to keep in the seats hash for that clear token."""
    return {seat: seal_token(event_log.server_key, event_log.campaign, _token_place(event_log, encounter, seat), token)
            for seat, token in tokens.items()}


# Replace a field's value only if it is still the one read (a token kept in clear by an older firelane).
_RESEAL = """
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
  return 1
end
return 0
"""


async def _stored_seat_tokens(event_log: EventLog, encounter: str) -> dict[str, StoredToken]:
    """Seat -> its stored token. Tokens an older firelane kept in clear are sealed in place (once the
    log has the store's secret); they go on working."""
    key = seats_key(event_log.campaign, encounter)
    raw = await event_log.client.execute("HGETALL", key) or []
    stored: dict[str, StoredToken] = {}
    for index in range(0, len(raw), 2):
        seat = raw[index].decode()
        token = open_token(event_log.server_key, event_log.campaign, _token_place(event_log, encounter, seat), raw[index + 1])
        if token.legacy and token.token is not None and event_log.server_key is not None:
            sealed = seal_seat_tokens(event_log, encounter, {seat: token.token})[seat]
            await event_log.client.evalsha_or_load(_RESEAL, (key,), (seat, raw[index + 1], sealed))
        stored[seat] = token
    return stored


async def seat_tokens(event_log: EventLog, encounter: str) -> dict[str, str]:
    """Seat -> its secret token in clear, for join links (`firelane seats`). Checks need only
    `seat_token_digests`. A token sealed with another key (or a log opened without the store's
    secret) is left out; an encounter that does not exist gives {}."""
    return {seat: stored.token for seat, stored in (await _stored_seat_tokens(event_log, encounter)).items()
            if stored.token is not None}


async def seat_token_digests(event_log: EventLog, encounter: str) -> dict[str, str]:
    """Seat -> the SHA-256 (hex) of its token: enough to check a token, and what the
    seat's Redis user takes. {} when the encounter does not exist."""
    return {seat: stored.digest for seat, stored in (await _stored_seat_tokens(event_log, encounter)).items()}


async def encounter_setup(event_log: EventLog, encounter: str) -> EncounterSetup:
    """The encounter's setup: from its first event, or from its queued StartEncounter."""
    stored = await event_log.read(encounter, count=1)
    if stored:
        return codec.decode_event(stored[0]).setup  # type: ignore[attr-defined]
    for entry in await event_log.read_inbox(encounter, ENGINE_SEAT, count=10):
        try:
            raw = msgspec.json.decode(entry.fields.get(b"p", b""))
        except msgspec.DecodeError:
            continue
        if isinstance(raw, dict) and raw.get("type") == "StartEncounter":
            return msgspec.convert(raw["setup"], EncounterSetup)
    raise LookupError(f"encounter {encounter!r} does not exist in campaign {event_log.campaign!r}")


async def seed_commitment(event_log: EventLog, encounter: str) -> str:
    """The seed commitment the encounter publishes: its first event's, or, while
    it waits in its lobby, its queued StartEncounter's (fixed when it was
    created, before any seat can add a client seed). "" if neither is found."""
    stored = await event_log.read(encounter, count=1)
    if stored:
        return str(getattr(codec.decode_event(stored[0]), "seed_commitment", ""))
    for entry in await event_log.read_inbox(encounter, ENGINE_SEAT, count=10):
        try:
            raw = msgspec.json.decode(entry.fields.get(b"p", b""))
        except msgspec.DecodeError:
            continue
        if isinstance(raw, dict) and raw.get("type") == "StartEncounter":
            return str(raw.get("seed_commitment", ""))
    return ""


async def fold_log(
    event_log: EventLog, encounter: str, system: BaseRuleSystem, *, use_snapshot: bool = True
) -> tuple[EncounterState, dict[str, str]]:
    """Rebuild state from the log; also return how far each seat's inbox is handled.

    Starts from the newest snapshot that matches (see projections/snapshots.py)
    and folds only the tail after it; without one, folds from the start. Either
    way the log is streamed page by page.
    """
    resumed = None
    if use_snapshot:
        resumed, why_not = await load_snapshot(event_log, encounter, snapshot_key(event_log.campaign, encounter), system)
        if resumed is None and why_not != "no snapshot":
            log.warning("snapshot ignored, folding the whole log", encounter=encounter, reason=why_not)
    if resumed is not None:
        state, after, cursors = resumed.state, resumed.entry_id, resumed.inbox_cursors
    else:
        state, after, cursors = system.initial_state(), "0-0", {}
        state.encounter = encounter
    end = await fold_stream(system, state, event_log, encounter, after, inbox_cursors=cursors)
    return state, end.inbox_cursors


def body_digest(command: Command) -> str:
    return hashlib.blake2b(codec.encode_command(command), digest_size=12).hexdigest()


def _all_written(results, batches: list[Batch]) -> bool:
    """Whether an append wrote every batch (none was a duplicate)."""
    return results is not None and len(results) == len(batches) and not any(r.duplicate for r in results)


def _id_order(entry_id: str) -> tuple[int, int]:
    """A stream entry id as something to compare ("5-1" < "10-0")."""
    milliseconds, _, sequence = entry_id.partition("-")
    return int(milliseconds), int(sequence or 0)


def _next_id(entry_id: str) -> str:
    milliseconds, sequence = _id_order(entry_id)
    return f"{milliseconds}-{sequence + 1}"


@dataclass
class _Received:
    """A command to apply: from a seat's inbox (checked and authorised), or
    from one of the engine's own players in this process (no inbox entry)."""

    seat: str
    inbox_id: str
    command: Command
    cause: str = ""  # for in-process players: what the log records as its causation

    @property
    def key(self) -> str:
        return command_key(self.seat, self.command.command_id)

    @property
    def causation(self) -> str:
        return self.cause or f"inbox:{self.seat}:{self.inbox_id}"


class Sequencer:
    """Serves one encounter: reads its seats' inboxes, plays the engine's own
    combatants (``players``: their policies, run in this process on the
    sequencer's state, so nothing is decoded, folded or sent twice), decides,
    and appends.

    The engine's players are asked exactly as the pure loop asks them
    (engine/simulate.py): the awaited combatant on its turn; every unanswered
    reactor of a window at once, on the state the window opened in. So a fight
    of AI combatants gives the same log live as in the pure loop, whatever the
    timing; a combatant played from outside (a human's frontend, a bot on
    Redis) answers through its seat's inbox.
    """

    def __init__(self, event_log: EventLog, encounter: str, system: BaseRuleSystem, seed: bytes, *, lease_wait_s: float = 6.0,
                 snapshot_every: int = 1000, players: Mapping[str, Policy] | None = None, pace: float = 0.0,
                 wall_clock: WallClock | None = None, publish_seat_views: bool = True,
                 on_settled: Callable[[], None] | None = None) -> None:
        # Called once, when this run has gone to wait for the seats (or its own players have
        # played a first slice): a host starting thousands of encounters starts a few at a time.
        self._on_settled = on_settled
        self._read_points = 0
        # The wall clock the deadlines are kept on across restarts (`deadlines_key`);
        # tests pass one that follows trio's MockClock (actors/clock.py).
        self.wall_clock = wall_clock or system_wall_clock
        self._deadlines_to_record: dict[str, str] = {}
        self._title = encounter  # the fight's name, for notices (read at start)
        self._calls_told: set[str] = set()  # the GM calls pending at the last append (told once each)
        self.lease_wait_s = lease_wait_s
        self.snapshot_every = snapshot_every  # events between snapshots (0: none)
        self._snapshot_version = 0
        self._logged_cursors: dict[str, str] = {}  # seat -> the last inbox cursor recorded in the log
        self.log = event_log
        self.encounter = encounter
        self.system = system
        self.seed = seed
        self.players: dict[str, Policy] = dict(players or {})
        # Seconds the engine's players wait before each command (a fight a person can watch);
        # each then goes to the log at once.
        self.pace = pace
        self._timed_out_player = AIPolicy(system)  # plays a timed-out human's turn (on_turn_timeout "ai")
        self.state: EncounterState = system.initial_state()
        self._union = codec.command_union(system.command_types)
        self._read: dict[str, str] = {}  # seat -> last inbox entry read
        self._safe: dict[str, str] = {}  # seat -> every entry up to here is handled
        self._buffer: dict[str, _Received] = {}  # held window answers, by answering combatant
        self._policies: dict[str, str] = {}  # combatant -> "ai" or "human"
        self._last_rejected: set[str] = set()  # whose last command was refused (its player falls back)
        self._window_deadline: float | None = None
        self._window_seen: int | None = None
        self._turn_deadline: float | None = None  # a human's turn timer, on trio's clock
        self._turn_seen: int | None = None  # the TurnStarted version it was set for
        # Per seat: inbox entries handled since the inbox was last tidied
        # (removed after each read; see _tidy_inboxes).
        self._untidy: dict[str, list[str]] = {}
        self._loads = 0  # how often the state was rebuilt from the log (that moves the read cursors back)
        # Per seat: refusals it may still have recorded (a token bucket: the
        # tokens and when they were counted), and those dropped since the last
        # report (count, last inbox id, when, how many of them skipped unread).
        self._rejection_tokens: dict[str, tuple[float, float]] = {}
        self._dropped: dict[str, tuple[int, str, float, int]] = {}
        self._unread_seats = False
        self.commands_handled = 0
        self._seat_waiting = False  # a seat's command was handled since the last slice (see SliceTurns)
        # Each seat's view stream (EventLog.options_key) is written when the engine goes to wait for the
        # seats, once per version; publish_seat_views=False: never (a bench of the pure engine).
        self.publish_seat_views = publish_seat_views
        self._views_stale = True  # something a seat may do may have changed since the views were written
        self._views_pending: EncounterState | None = None  # a copy of the state whose views are to be written
        self._views_wanted = trio.Event()
        # Whether the views' streams were looked at: a restarted engine (serve resuming
        # thousands of fights) writes none whose stream ends with the same version's.
        self._views_checked = False
        self._views_asked = self._views_done = 0
        self._views_progress = trio.Event()  # set each time the writer catches up with what was asked

    async def load(self) -> None:
        """Rebuild the state from the log; raises `LogTampered` when the log's
        entries contradict each other or its version counter."""
        # The counter before the fold: every entry up to it was in the log then
        # (an append writes its entries and moves the counter at once).
        before = await self.log.version(self.encounter)
        self.state, cursors = await fold_log(self.log, self.encounter, self.system)
        folded = self.state.version
        if folded != before:
            # Behind the counter read first: entries are gone. Ahead of it: fine
            # if another writer appended meanwhile (the counter has moved on too).
            counter = before if folded < before else await self.log.version(self.encounter)
            if folded < before or folded > counter:
                problem = await self.log.tail_problem(self.encounter, counter)
                raise LogTampered(problem or f"the log's entries end at v{folded} but its version counter says v{counter}")
        self._loads += 1
        # Entries read but not yet recorded as handled are read again: none may leave its inbox first.
        self._untidy = {seat: [] for seat in self._untidy}
        self._views_stale = True
        self._read, self._safe = {ENGINE_SEAT: "0-0"}, {ENGINE_SEAT: "0-0"}
        self._know_seats()
        for seat, cursor in cursors.items():
            if seat in self._read:
                self._read[seat] = self._safe[seat] = cursor
        self._logged_cursors = dict(cursors)
        self._snapshot_version = self.state.version
        self._buffer.clear()
        self._last_rejected = set()
        self._window_seen = None
        self._track_window()
        await self._count_time_already_run()

    async def _count_time_already_run(self) -> None:
        """The running turn and window keep only the time they have left: an
        engine loaded mid-turn (restarted, or handed the encounter by another
        host) counts from their opening entries by Redis's clock, as the table
        page counts them down, not from its own start."""
        state = self.state
        window = state.window.window if self._window_deadline is not None and state.window is not None else None
        turn = state.turn_started_at if self._turn_deadline is not None else None
        if turn is None and window is None:
            return
        try:
            recorded = await self.log.client.execute("HGETALL", deadlines_key(self.log.campaign, self.encounter)) or []
        except RedisError as exc:
            log.warning("cannot read the recorded deadlines", error=str(exc)[:200])
            recorded = []
        kept = {recorded[i].decode(): recorded[i + 1].decode() for i in range(0, len(recorded), 2)}
        now_ms = self.wall_clock()
        if turn is not None and kept.get("turn", "").startswith(f"{turn}:"):
            # The deadline the engine recorded when the turn began: a restart
            # (hours or days later) keeps it, by the wall clock.
            self._turn_deadline = trio.current_time() + (int(kept["turn"].split(":")[1]) - now_ms) / 1000
            self._deadlines_to_record.pop("turn", None)
            turn = None
        if window is not None and kept.get("window", "").startswith(f"{window}:"):
            self._window_deadline = trio.current_time() + (int(kept["window"].split(":")[1]) - now_ms) / 1000
            self._deadlines_to_record.pop("window", None)
            window = None
        if turn is None and window is None:
            return
        try:
            turn_ms, window_ms = await self.log.clock_starts(self.encounter, turn_version=turn, window=window)
            seconds, micros = await self.log.client.execute("TIME")
        except RedisError as exc:
            log.warning("cannot read when the running turn began; it gets its full time", error=str(exc)[:200])
            return
        now_ms = int(seconds) * 1000 + int(micros) // 1000
        wall_ms = self.wall_clock()
        if turn_ms is not None and self._turn_deadline is not None:
            self._turn_deadline -= max(0, now_ms - turn_ms) / 1000
            self._deadlines_to_record["turn"] = f"{turn}:{wall_ms + int((self._turn_deadline - trio.current_time()) * 1000)}"
        if window_ms is not None and self._window_deadline is not None:
            self._window_deadline -= max(0, now_ms - window_ms) / 1000
            self._deadlines_to_record["window"] = (f"{window}:"
                                                   f"{wall_ms + int((self._window_deadline - trio.current_time()) * 1000)}")
        await self._record_deadlines()

    async def _record_deadlines(self) -> None:
        """Keep the running turn's and window's deadlines on the wall clock in
        Redis, so an engine restarted hours or days later (`firelane serve`
        stopped and started again) times them out when they were due, and
        the API can show them."""
        if not self._deadlines_to_record:
            return
        recording, self._deadlines_to_record = self._deadlines_to_record, {}
        fields = [item for pair in recording.items() for item in pair]
        await self.log.client.execute("HSET", deadlines_key(self.log.campaign, self.encounter), *fields)

    def _know_seats(self) -> None:
        """Read the inbox of every seat that may act (known once the encounter has started)."""
        for seat in self.state.seats:
            if seat.role != "spectator" and seat.id not in self._read:
                self._read[seat.id] = self._safe[seat.id] = "0-0"
                self._unread_seats = True  # read what they sent before the engine's players go on
        if len(self._policies) != len(self.state.combatants):
            self._policies = {cid: c.policy for cid, c in self.state.combatants.items()}

    async def run(self, *, stop_when_ended: bool = True) -> EncounterState:
        """Serve the encounter until it has ended (and its seed is revealed),
        holding the encounter's lease so no other engine writes meanwhile."""
        lease = SequencerLease(self.log, self.encounter, wait_s=self.lease_wait_s)
        await lease.acquire()
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(lease.keep)
                nursery.start_soon(self._write_seat_views)
                state = await self._serve(stop_when_ended=stop_when_ended)
                nursery.cancel_scope.cancel()
            return state
        except BaseExceptionGroup as group:
            tampered = group.subgroup(LogTampered)
            while isinstance(tampered, BaseExceptionGroup):
                tampered = tampered.exceptions[0]
            if tampered is not None:
                raise tampered from None  # final, said once: not a failure to retry (see LogTampered)
            raise
        finally:
            await lease.release()

    async def _serve(self, *, stop_when_ended: bool) -> EncounterState:
        await self.load()
        self._calls_told = set(self.system.pending_gm_calls(self.state)) if self.state.started else set()
        if hooks.notifier_running():
            try:
                self._title = (await encounter_setup(self.log, self.encounter)).name or self.encounter
            except LookupError:
                pass
        await self._restore_drops()
        log.info("sequencer started", encounter=self.encounter, version=self.state.version)
        while True:
            await self._play()
            if self.state.ended:
                await self._finish()
                if stop_when_ended:
                    return self.state
            if self._window_deadline is not None and trio.current_time() >= self._window_deadline:
                await self._close_window_on_deadline()
                continue
            if self._turn_deadline is not None and trio.current_time() >= self._turn_deadline:
                await self._time_out_turn()
                continue
            if self._dropped:
                await self._report_quiet_drops()
            entries: list[InboxEntry] = []
            # The deadlines are trio deadlines (not Redis's BLOCK timeout), so
            # they follow trio's clock (MockClock in tests); cancelling the
            # blocked read is safe: the client drops that connection.
            report_at = min((at + REJECTION_REFILL_S for _, _, at, _ in self._dropped.values()), default=math.inf)
            wake = min(d for d in (self._window_deadline, self._turn_deadline, report_at, math.inf) if d is not None)
            players_awaited = self._players_awaited()
            if not players_awaited:
                await self._publish_seat_views()  # the engine waits for the seats: tell each what it may do
            self._read_points += 1
            if self._on_settled is not None and (not players_awaited or self._read_points > 2):
                # Once its views are written too: a host starting thousands holds
                # only a few states' copies for the view writer at a time.
                await self._views_written(within_s=60)  # (a queue of thousands takes more than the usual 5 s)
                settled, self._on_settled = self._on_settled, None
                settled()
            with trio.move_on_at(wake):
                # Players waiting to act: only look; else wait for a command.
                block = None if players_awaited else 1000
                self._unread_seats = False
                hub = inbox_hub.current()
                if block is not None and hub is not None:
                    # Many encounters in one process: look, then wait on the hub's shared
                    # reads (a few connections for them all), then look again.
                    entries = await self.log.read_inboxes(self.encounter, dict(self._read), count=READ_BATCH)
                    if not entries:
                        await hub.wait({self.log.inbox_key(self.encounter, seat): cursor
                                        for seat, cursor in self._read.items()})
                        entries = await self.log.read_inboxes(self.encounter, dict(self._read), count=READ_BATCH)
                else:
                    entries = await self.log.read_inboxes(self.encounter, dict(self._read), block_ms=block,
                                                          count=READ_BATCH)
            await self._handle_read(entries)

    async def _handle_read(self, entries: list[InboxEntry]) -> None:
        """Handle what one read brought, then take it out of the inboxes, and
        skip the oldest of a backlog too long to read through."""
        loads = self._loads
        read_per_seat: dict[str, int] = {}
        for entry in entries:
            self._read[entry.seat] = entry.entry_id
            await self._handle(entry)
            if self._loads != loads:
                break  # the state was rebuilt from the log, which moved the read cursors back: read again
            self._untidy.setdefault(entry.seat, []).append(entry.entry_id)
            read_per_seat[entry.seat] = read_per_seat.get(entry.seat, 0) + 1
        await self._tidy_inboxes()
        if self._loads == loads:
            for seat, count in read_per_seat.items():
                if count >= READ_BATCH and seat != ENGINE_SEAT:
                    await self._skip_backlog(seat)

    def _held_inbox_ids(self, seat: str) -> list[str]:
        """The inbox entries of the seat's window answers held now, oldest first."""
        return sorted((b.inbox_id for b in self._buffer.values() if b.seat == seat and b.inbox_id), key=_id_order)

    def _pending_drops(self, seat: str) -> PendingDrops | None:
        if seat not in self._dropped:
            return None
        count, last_inbox_id, _at, skipped = self._dropped[seat]
        return PendingDrops(count, last_inbox_id, skipped)

    async def _tidy_inboxes(self) -> None:
        """Take what the engine has handled out of the seats' inboxes: all it
        has read, but a window answer it holds (that stays until it is
        applied, so a crash loses no answer a seat was told was taken) and
        what is still to be read; the refusals it only counted leave with
        their count, kept in Redis until a CommandsDropped records it."""
        if not self._untidy:
            return
        tidies = []
        for seat, handled in self._untidy.items():
            held = self._held_inbox_ids(seat)
            if held:
                first = _id_order(held[0])
                tidies.append(InboxTidy(seat=seat, trim_before=held[0], drops=self._pending_drops(seat),
                                        delete=[i for i in handled if i not in held and _id_order(i) > first]))
            else:
                tidies.append(InboxTidy(seat=seat, trim_before=_next_id(self._read[seat]), drops=self._pending_drops(seat)))
        await self.log.tidy_inboxes(self.encounter, tidies)
        self._untidy.clear()

    async def _skip_backlog(self, seat: str) -> None:
        """A seat whose inbox holds more than MAX_PENDING_COMMANDS unread (only
        its Redis user can put them there: the API refuses past that): its
        oldest are dropped unread and counted, so its newest command is
        reached at once and the inbox stays bounded."""
        skipped, last_id = await self.log.skip_backlog(
            self.encounter, seat, self._read[seat], keep=MAX_PENDING_COMMANDS, held=len(self._held_inbox_ids(seat)),
            drops=self._pending_drops(seat))
        if not skipped:
            return
        count, _, _, skipped_before = self._dropped.get(seat, (0, "", 0.0, 0))
        self._dropped[seat] = (count + skipped, last_id, trio.current_time(), skipped_before + skipped)
        self._read[seat] = last_id
        log.warning("skipped commands a seat queued past the limit", encounter=self.encounter, seat=seat,
                    skipped=skipped, limit=MAX_PENDING_COMMANDS)

    async def _restore_drops(self) -> None:
        """The refusals a previous run counted and did not record (kept with
        the inbox entries they answer, see _tidy_inboxes): reported as ever."""
        for seat, drops in (await self.log.pending_drops(self.encounter)).items():
            if seat not in self._read or seat in self._dropped:
                continue
            reported = command_key(seat, f"dropped:{drops.last_inbox_id}")
            if await self.log.applied_entry_id(self.encounter, reported) is None:
                self._dropped[seat] = (drops.count, drops.last_inbox_id, trio.current_time(), drops.skipped)

    # ------------------------------------------------------------ the engine's own players

    def _player(self, combatant: str) -> Policy | None:
        if combatant in self.players:
            return self.players[combatant]
        if self.state.ai_plays == combatant:
            return self._timed_out_player
        return None

    def _players_awaited(self) -> bool:
        state = self.state
        if state.ended:
            return False
        if state.window is not None:
            return any(self._player(c) is not None and c not in self._buffer for c in state.window.unanswered())
        awaited = self.system.awaiting(state).combatants
        return bool(awaited) and self._player(awaited[0]) is not None

    async def _play(self) -> None:
        """Let the engine's players act while the encounter waits for them, a
        slice at a time, decided in place one after the other and appended
        together (one round trip for the slice: the log is the same as one
        append per command). Between slices the inboxes are read, so a GM (or
        anyone) is heard even in a fight the engine plays alone.

        The slices of all the encounters in this process take turns (one at a
        time, in order of arrival): a seat's command, handled outside any
        slice, then waits for at most one slice however many encounters the
        engine's players are busy in, instead of for one slice of each."""
        if self._unread_seats or not self._players_awaited():
            return
        if self.pace:
            await trio.sleep(self.pace)
        # Someone outside waits on this slice: a seat whose command was just
        # handled, or whose window answer is held until the engine's answers.
        urgent = self._seat_waiting or any(b.inbox_id for b in self._buffer.values())
        async with _play_turns().turn(urgent=urgent):
            expected = self.state.version
            batches, applied_all, flushed_seats = self._play_slice()
            self._seat_waiting = False
        if batches:
            spoiled = any(a.spoiled for a in applied_all)
            results = await self._append_batches(batches, None if spoiled else self.state, applied_all, expected)
            if _all_written(results, batches):
                for seat in flushed_seats:
                    self._safe[seat] = self._read[seat]
                    self._untidy.setdefault(seat, [])

    def _play_slice(self) -> tuple[list[Batch], list[Applied], set[str]]:
        """The engine's players' commands for one slice, decided in place. A
        slice is up to PLAY_SLICE commands (a window's answers count one
        each), so a big window ends its slice and its close is durable without
        waiting for more windows behind it; it also ends after
        PLAY_SLICE_SECONDS, which bounds how long a seat's command can wait."""
        batches: list[Batch] = []
        applied_all: list[Applied] = []
        flushed_seats: set[str] = set()
        budget = 1 if self.pace else PLAY_SLICE
        ends_at = time.perf_counter() + PLAY_SLICE_SECONDS
        while len(batches) < budget and (not batches or time.perf_counter() < ends_at):
            if self.state.ended or (applied_all and applied_all[-1].spoiled):
                break
            state = self.state
            window = state.window
            if window is not None:
                # Every unanswered reactor this process plays answers now, on this one state.
                answers = []
                for combatant in window.unanswered():
                    player = self._player(combatant)
                    if player is not None and combatant not in self._buffer:
                        command = player.choose(state, combatant, last_rejected=combatant in self._last_rejected)
                        if command is not None:
                            answers.append(_Received(ENGINE_SEAT, "", command, cause=f"player:{combatant}"))
                for received in answers:
                    self._buffer[received.command.actor] = received
                if answers and set(window.unanswered()) <= set(self._buffer):
                    more, applied, seats = self._decide_held_answers()
                    batches += more
                    applied_all += applied
                    flushed_seats |= seats
                    continue
                break
            awaited = self.system.awaiting(state).combatants
            player = self._player(awaited[0]) if awaited else None
            if player is None:
                break
            combatant = awaited[0]
            command = player.choose(state, combatant, last_rejected=combatant in self._last_rejected)
            if command is None:
                break
            if state.ai_plays == combatant and combatant not in self.players:
                received = _Received(SEQUENCER, "", msgspec.structs.replace(command, command_id=f"ai-{command.command_id}"),
                                     cause=f"timeout:ai-plays-{combatant}")
            else:
                received = _Received(ENGINE_SEAT, "", command, cause=f"player:{combatant}")
            applied = self._apply(received.command, in_place=True)
            batches.append(Batch(entries=applied.entries, command_id=received.key, inbox_cursor="",
                                 causation=received.causation, digest=body_digest(received.command)))
            applied_all.append(applied)
            self._last_rejected = {combatant} if applied.rejected else set()
        return batches, applied_all, flushed_seats

    # ------------------------------------------------------------ handling

    def _check_entry(self, entry: InboxEntry) -> Command | str:
        """The command in an inbox entry, or why there is none (bounded text)."""
        payload = entry.fields.get(b"p")
        if payload is None:
            return "the inbox entry has no field 'p' (send: XADD <your inbox> * p <command JSON>)"
        if len(payload) > MAX_COMMAND_BYTES:
            return f"the command is {len(payload):,} bytes; the limit is {MAX_COMMAND_BYTES:,}"
        if json_too_deep(payload, MAX_COMMAND_DEPTH):
            return f"the command nests deeper than {MAX_COMMAND_DEPTH} levels"
        try:
            command = codec.decode_command(payload, self._union)
        except codec.CommandDecodeError as exc:
            return bounded(str(exc))
        except (RecursionError, UnicodeDecodeError, ValueError) as exc:
            return f"unreadable command ({type(exc).__name__})"
        if not _COMMAND_ID.fullmatch(command.command_id):
            return "command_id must be 1-64 characters of A-Z a-z 0-9 _ . : @ # -"
        if len(command.actor) > MAX_ECHOED_ID_CHARS:
            return f"actor is longer than {MAX_ECHOED_ID_CHARS} characters"
        return command

    async def _handle(self, entry: InboxEntry) -> None:
        self.commands_handled += 1
        checked = self._check_entry(entry)
        if isinstance(checked, str):
            if await self._may_record_rejection(entry.seat, entry.entry_id):
                await self._append_rejection(entry, checked)
            return
        received = _Received(entry.seat, entry.entry_id, checked)
        command = checked
        refused = authorize(self.state.seats, self._policies, entry.seat, command)
        if refused is not None:
            if await self._may_record_rejection(entry.seat, entry.entry_id):
                await self._refuse(received, reject(command, refused))
            return
        # A seat's command the engine's players may now have to answer: their
        # next slice goes first (refusals are answered at once and do not count,
        # so a flood of them buys a seat no place in the queue).
        self._seat_waiting = entry.seat != ENGINE_SEAT
        if isinstance(command, RewindEncounter):
            await self._rewind(received)
            return
        if isinstance(command, StartEncounter) and not self.state.started and entry.seat == ENGINE_SEAT:
            # The seeds the player seats added while the fight waited in its
            # lobby (actors/lobby_seeds.py): recorded by the start, and mixed
            # into its opening dice (`_apply`). A fight made without a lobby has none.
            seeds = await lobby_client_seeds(self.log, self.encounter, default_seats(command.setup))
            if seeds:
                received = _Received(entry.seat, entry.entry_id, msgspec.structs.replace(command, client_seeds=seeds))
        window = self.state.window
        if isinstance(command, (ClaimReaction, PassReaction)) and command.actor in self._buffer:
            first = self._buffer[command.actor]
            if first.key == received.key:
                if first.inbox_id != received.inbox_id and body_digest(first.command) == body_digest(command):
                    # The same answer again (a client's retry): held once, and this entry answered on its own.
                    await self._answer_repeat(received, None, rationed=False)
                elif first.inbox_id != received.inbox_id and await self._may_record_rejection(entry.seat, entry.entry_id):
                    await self._refuse_reused_id(received, self._cursor_after(received))
                return
            if await self._may_record_rejection(entry.seat, entry.entry_id):
                await self._refuse(received, reject(command, f"{command.actor} has already answered window {command.window}"))
            return
        if (
            isinstance(command, (ClaimReaction, PassReaction))
            and window is not None
            and command.window == window.window
            and command.actor in window.unanswered()
        ):
            # Checked at once, so a bad answer is refused now; a good one waits for the others.
            try:
                self.system.decide(self.state, command, SeededDice(dice_key(self.seed, self.state.client_seeds), self.state.branch_version))
            except Rejected:
                await self._commit(received, self._cursor_after(received))  # the rejection, recorded at once
                return
            self._buffer[command.actor] = received
            if set(window.unanswered()) <= set(self._buffer):
                await self._flush_window_answers()
            return
        if isinstance(command, (GMSkipTurn, EndEncounter)) and self._buffer:
            # The answers held for the open window came before the GM's call:
            # they count, as they do when its deadline closes it.
            await self._flush_window_answers()
        await self._commit(received, self._cursor_after(received))

    def _cursor_after(self, received: _Received) -> str:
        """The inbox cursor an append may record for this command's seat: up to
        it, unless an earlier answer of that seat is still held for a window."""
        if not received.inbox_id:
            return ""  # one of this process's players: nothing read from an inbox
        held = any(b.seat == received.seat and b.inbox_id for b in self._buffer.values())
        return f"{received.seat}={self._safe[received.seat] if held else received.inbox_id}"

    def _apply(self, command: Command, *, in_place: bool) -> Applied:
        """Decide and evolve ``command`` (see BaseRuleSystem.apply); a bug in a
        rule system becomes a rejection and never stops the encounter."""
        # A start draws its opening dice with the lobby's client seeds (it records them before any die).
        client_seeds = command.client_seeds if isinstance(command, StartEncounter) else self.state.client_seeds
        try:
            return self.system.apply(self.state, command, SeededDice(dice_key(self.seed, client_seeds), self.state.branch_version), in_place=in_place)
        except Exception as exc:  # noqa: BLE001
            log.exception("decide failed", encounter=self.encounter, command=type(command).__name__)
            rejection = CommandRejected(command_id=command.command_id, actor=command.actor,
                                        command_type=type(command).__name__, reason=bounded(f"internal error: {exc!r}"))
            return Applied(events=[rejection], entries=[codec.encode_event(rejection)], state=self.state,
                           rejected=True, spoiled=in_place)

    async def _commit(self, received: _Received, inbox_cursor: str, *, in_place: bool = False) -> Applied:
        """Decide a command and append what it did, under its key."""
        expected = self.state.version  # (deciding in place moves the state's version ahead of the log's)
        applied = self._apply(received.command, in_place=in_place)
        if applied.rejected and not applied.spoiled and received.inbox_id \
                and not await self._may_record_rejection(received.seat, received.inbox_id):
            return applied
        digest = body_digest(received.command)
        batch = Batch(entries=applied.entries, command_id=received.key, inbox_cursor=inbox_cursor,
                      causation=received.causation, digest=digest)
        results = await self._append_batches([batch], applied.state if not applied.spoiled else None, [applied], expected)
        await self._answer_if_applied_before(received, results, rationed=applied.rejected)
        return applied

    async def _answer_if_applied_before(self, received: _Received, results, *, rationed: bool) -> None:
        """A seat's command whose id was applied before: refused when its body
        differs, else answered as a repeat (so every inbox entry has an answer of its own)."""
        if not received.inbox_id or not results or not results[0].duplicate:
            return
        if results[0].conflicting_body:
            if rationed or await self._may_record_rejection(received.seat, received.inbox_id):
                await self._refuse_reused_id(received, self._cursor_after(received))
        else:
            await self._answer_repeat(received, results[0].first_entry_id, rationed=rationed)

    async def _answer_repeat(self, received: _Received, first_entry_id: str | None, *, rationed: bool) -> None:
        """Answer an inbox entry whose command (same seat, id and body) was
        applied before (``first_entry_id``: the last entry its first answer
        wrote) or is held for its window (None). Rationed like a refusal, so
        repeats cannot grow the log without end; ``rationed``: already counted."""
        command = received.command
        first = await self.log.entry_at(self.encounter, first_entry_id) if first_entry_id else None
        if first is not None and first.causation == received.causation:
            return  # the same inbox entry read again (after a restart): it has its answer
        if not rationed and not await self._may_record_rejection(received.seat, received.inbox_id):
            return
        if first_entry_id is None:
            window = getattr(command, "window", 0)
            repeat = CommandRepeated(command_id=command.command_id, actor=command.actor,
                                     command_type=type(command).__struct_config__.tag,  # type: ignore[arg-type]
                                     first_version=0, first_cause=self._buffer[command.actor].causation,
                                     reason=f"the same answer is held already: it is applied when window {window} closes")
        else:
            repeat = CommandRepeated(command_id=command.command_id, actor=command.actor,
                                     command_type=type(command).__struct_config__.tag,  # type: ignore[arg-type]
                                     first_version=first.version if first is not None else 0,
                                     first_cause=first.causation if first is not None else "",
                                     reason="this command was sent before with the same command_id: it was applied "
                                            "once, and its answer is the first one's")
        await self._append([repeat], command_key(received.seat, f"inbox:{received.inbox_id}"),
                           self._cursor_after(received), causation=received.causation)

    async def _refuse(self, received: _Received, rejection: CommandRejected) -> None:
        """Record the refusal of a seat's command under the command's key; when
        that id was used already for another command, what is recorded is
        that (under the inbox entry's own key), so every command is answered."""
        cursor = self._cursor_after(received)
        results = await self._append([rejection], received.key, cursor, causation=received.causation,
                                      digest=body_digest(received.command))
        await self._answer_if_applied_before(received, results, rationed=True)

    async def _refuse_reused_id(self, received: _Received, inbox_cursor: str) -> None:
        command = received.command
        rejection = reject(command, f"command_id {command.command_id!r} was already used by seat "
                                    f"{received.seat!r} for another command; send a new command_id")
        await self._append([rejection], command_key(received.seat, f"inbox:{received.inbox_id}"), inbox_cursor,
                           causation=received.causation)

    def _decide_held_answers(self) -> tuple[list[Batch], list[Applied], set[str]]:
        """Decide the held answers in the window's reactor order, in place, each
        on the state the earlier ones left; returns their batches (and the
        seats whose inboxes they finish) for one append."""
        window = self.state.window
        order = [r.combatant for r in window.reactors] if window is not None else []
        order += sorted(c for c in self._buffer if c not in order)
        held = [self._buffer.pop(c) for c in order if c in self._buffer]
        last_of_seat = {received.seat: index for index, received in enumerate(held) if received.inbox_id}
        batches, applied_all = [], []
        for index, received in enumerate(held):
            applied = self._apply(received.command, in_place=True)
            applied_all.append(applied)
            cursor = ""
            if received.inbox_id:
                # The seat's inbox is handled up to what was read once its last held answer is in.
                seat = received.seat
                cursor = f"{seat}={self._read[seat] if last_of_seat[seat] == index else self._safe[seat]}"
            batches.append(Batch(entries=applied.entries, command_id=received.key, inbox_cursor=cursor,
                                 causation=received.causation, digest=body_digest(received.command)))
            if applied.spoiled:
                # The state is to be rebuilt from the log: the rest wait for it.
                for rest in held[index + 1:]:
                    self._buffer[rest.command.actor] = rest
                break
        if held:
            # As the pure loop does: a player whose answer (the last one applied) was refused falls back next time.
            last = held[len(applied_all) - 1]
            self._last_rejected = {last.command.actor} if applied_all[-1].rejected and not last.inbox_id else set()
        return batches, applied_all, set(last_of_seat)

    async def _flush_window_answers(self) -> None:
        """Apply the held answers, as one atomic multi-batch append (one round
        trip, one wake-up for every follower)."""
        expected = self.state.version
        batches, applied_all, seats = self._decide_held_answers()
        if not batches:
            return
        spoiled = any(a.spoiled for a in applied_all)
        results = await self._append_batches(batches, None if spoiled else self.state, applied_all, expected)
        if _all_written(results, batches):
            for seat in seats:
                self._safe[seat] = self._read[seat]
                self._untidy.setdefault(seat, [])  # its answers are in the log: out of its inbox

    async def _append_batches(self, batches: list[Batch], after: EncounterState | None,
                              applied: list[Applied], expected: int):  # -> list[AppendResult] | None
        """Append decided batches at log version ``expected``; ``after`` is the
        state they lead to (None: spoiled, rebuild it). On a duplicate or a
        conflict the state is rebuilt from the log; returns the results (see
        `_all_written`)."""
        try:
            results = await self.log.append_batches(self.encounter, expected, batches)
        except VersionConflict:
            # Another writer appended: our state is stale. Rebuild and let the
            # command be handled again (it is a duplicate if the other applied it).
            log.warning("version conflict, reloading", encounter=self.encounter, version=self.state.version)
            await self.load()
            raise
        # (Cancelled or failed mid-append, a state changed in place may hold what
        # the log does not: that ends this run, and the next one reloads.)
        if len(results) != len(batches) or any(r.duplicate for r in results):
            # Already in the log (a restart re-read it) or a reused id: nothing
            # was written. A state decided in place went ahead of the log: refold.
            if any(a.state is self.state for a in applied) or after is None:
                await self.load()
            return results
        if after is None:
            await self.load()
        else:
            self.state = after
        for batch in batches:
            for seat, cursor in parse_inbox_cursors(batch.inbox_cursor):
                if not any(b.seat == seat and b.inbox_id for b in self._buffer.values()) \
                        and _id_order(cursor) > _id_order(self._safe.get(seat, "0-0")):
                    self._safe[seat] = cursor
            self._logged_cursors.update(parse_inbox_cursors(batch.inbox_cursor))
        if any(isinstance(e, EncounterRewound) for a in applied for e in a.events):
            self._window_seen = self._turn_seen = None  # the restored window or turn runs its time again
        if any(not isinstance(e, _ANSWERS_ONLY) for a in applied for e in a.events):
            self._views_stale = True
        self._know_seats()
        self._track_window()
        written = [r.entry_ids[-1] for r in results if r.entry_ids]
        if written:
            await self._note_appended(written[-1])
        await self._record_deadlines()
        self._tell(applied)
        return results

    def _tell(self, applied: list[Applied]) -> None:
        """Hand the notices of what was just appended to this process's
        notifier (webhooks, actors/hooks.py), if one runs: never waits."""
        if not hooks.notifier_running():
            return
        events = [event for a in applied for event in a.events]
        first = self.state.version - len(events) + 1
        numbered = list(enumerate(events, start=first))
        notices = hooks.notices_for(self.system, self.state, self.log.campaign, numbered, self.wall_clock(),
                                    title=self._title)
        calls = self.system.pending_gm_calls(self.state) if not self.state.ended else {}
        for call, text in calls.items():
            if call not in self._calls_told and call != TIME_UP_CALL:  # (time-up is told by its own event)
                notices += hooks.gm_call_notices(self.state, self.log.campaign, call, text, title=self._title)
        self._calls_told = set(calls)
        hooks.offer(notices)

    async def _close_window_on_deadline(self) -> None:
        window = self.state.window
        assert window is not None
        log.info("reaction window deadline", encounter=self.encounter, window=window.window, waiting=window.unanswered())
        await self._answer_for_the_away()
        await self._flush_window_answers()
        if self.state.window is not None and self.state.window.window == window.window:
            close = CloseReactionWindow(command_id=f"close-window-{window.window}", actor=SEQUENCER, window=window.window)
            await self._commit(_Received(SEQUENCER, "", close, cause=f"deadline:window-{window.window}"), "", in_place=True)

    async def _seat_orders(self, seat: str) -> tuple[list[StandingOrder], dict[str, int]]:
        """A seat's standing orders and how often each has answered (read at a deadline only)."""
        try:
            return await load_orders(self.log, self.encounter, seat), await orders_used(self.log, self.encounter, seat)
        except RedisError:
            raise
        except Exception as exc:  # noqa: BLE001 - a seat's orders never stop the engine
            log.warning("standing orders unreadable", encounter=self.encounter, seat=seat, error=repr(exc)[:200])
            return [], {}

    async def _answer_for_the_away(self) -> None:
        """A window's deadline ran out: answer for the reactors still awaited,
        by their seats' standing orders (the seat's answer, citing the order),
        or by the AI where their seats chose it (setting ``on_timeout``); the
        others pass, or their GM is asked, when the window closes."""
        state = self.state
        window = state.window
        assert window is not None
        by_order: list[tuple[str, str]] = []
        for combatant in window.unanswered():
            if combatant in self._buffer or combatant in self.players:
                continue
            seat = seat_controlling(state.seats, combatant)
            if seat is not None:
                orders, used = await self._seat_orders(seat.id)
                answer = window_answer(self.system, state, combatant, orders, used, self._union)
                if answer is not None:
                    order, command = answer
                    command = msgspec.structs.replace(command, command_id=f"order-{order.id}-w{window.window}")
                    self._buffer[combatant] = _Received(seat.id, "", command, cause=f"order:{seat.id}:{order.id}")
                    by_order.append((seat.id, order.id))
                    continue
            if window_timeout(state, combatant) == "ai":
                command = self._timed_out_player.choose(state, combatant, last_rejected=False)
                if command is not None:
                    self._buffer[combatant] = _Received(
                        SEQUENCER, "", msgspec.structs.replace(command, command_id=f"ai-{command.command_id}"),
                        cause=f"timeout:ai-answers-{combatant}")
        for seat_id, order_id in by_order:
            await note_used(self.log, self.encounter, seat_id, order_id)

    async def _may_record_rejection(self, seat: str, inbox_id: str) -> bool:
        """Whether a refusal of this seat's inbox entry is recorded in the log
        (its bucket has a token; the drops counted before it are reported
        first), or only counted."""
        now = trio.current_time()
        tokens, counted_at = self._rejection_tokens.get(seat, (float(REJECTION_BURST), now))
        tokens = min(float(REJECTION_BURST), tokens + (now - counted_at) / REJECTION_REFILL_S)
        if tokens < 1:
            self._rejection_tokens[seat] = (tokens, now)
            count, _, _, skipped = self._dropped.get(seat, (0, "", now, 0))
            self._dropped[seat] = (count + 1, inbox_id, now, skipped)
            return False
        self._rejection_tokens[seat] = (tokens - 1, now)
        if seat in self._dropped:
            await self._report_dropped(seat)
        return True

    async def _report_dropped(self, seat: str) -> None:
        """One CommandsDropped for the seat's refusals counted since the last
        (and the oldest commands of a backlog it skipped unread)."""
        count, last_inbox_id, _, skipped = self._dropped.pop(seat)
        held = any(b.seat == seat and b.inbox_id for b in self._buffer.values())
        handled = last_inbox_id if _id_order(last_inbox_id) > _id_order(self._safe[seat]) else self._safe[seat]
        cursor = f"{seat}={self._safe[seat] if held else handled}"
        reason = (f"more than {REJECTION_BURST} refused or repeated commands in a burst: after those, one a second "
                  f"is recorded, and the rest are counted here")
        if skipped == count:
            reason = (f"more than {MAX_PENDING_COMMANDS} commands were waiting in the inbox: the oldest were "
                      f"skipped unread, and are counted here")
        elif skipped:
            reason += (f"; {skipped} of them were skipped unread (more than {MAX_PENDING_COMMANDS} commands were "
                       f"waiting in the inbox)")
        await self._append([CommandsDropped(seat=seat, count=count, last_inbox_id=last_inbox_id, reason=reason)],
                           command_key(seat, f"dropped:{last_inbox_id}"), cursor, causation=f"inbox:{seat}:{last_inbox_id}")
        self._untidy.setdefault(seat, [])  # recorded: its count leaves Redis at the next tidy

    async def _report_quiet_drops(self) -> None:
        """Report the drops of seats that have been quiet for a refill's time."""
        now = trio.current_time()
        for seat in [s for s, (_, _, at, _) in self._dropped.items() if now - at >= REJECTION_REFILL_S]:
            await self._report_dropped(seat)

    async def _append_rejection(self, entry: InboxEntry, reason: str) -> None:
        """Record that an inbox entry was refused, echoing nothing unbounded."""
        actor, command_id = "", f"inbox:{entry.entry_id}"
        payload = entry.fields.get(b"p")
        if payload is not None and len(payload) <= MAX_COMMAND_BYTES and not json_too_deep(payload, MAX_COMMAND_DEPTH):
            try:
                raw = msgspec.json.decode(payload)
            except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
                raw = None
            if isinstance(raw, dict):
                if isinstance(raw.get("actor"), str) and len(raw["actor"]) <= MAX_ECHOED_ID_CHARS:
                    actor = raw["actor"]
                if isinstance(raw.get("command_id"), str) and _COMMAND_ID.fullmatch(raw["command_id"]):
                    command_id = raw["command_id"]
        rejection = CommandRejected(command_id=command_id, actor=actor, command_type="?", reason=reason)
        received_key = command_key(entry.seat, f"inbox:{entry.entry_id}")
        held = any(b.seat == entry.seat and b.inbox_id for b in self._buffer.values())
        cursor = f"{entry.seat}={self._safe[entry.seat] if held else entry.entry_id}"
        await self._append([rejection], received_key, cursor, causation=f"inbox:{entry.seat}:{entry.entry_id}")

    async def _append(self, events: list[Event], key: str, inbox_cursor: str, *, causation: str = "",
                      digest: str = ""):  # -> list[AppendResult] | None
        """Append events that are not a decision (rejections, the seed's reveal):
        the state follows once they are in the log."""
        after = copy_state(self.state)
        for event in events:
            self.system.evolve(after, event)
        entries = [codec.encode_event(e) for e in events]
        applied = Applied(events=events, entries=entries, state=after,
                          rejected=any(isinstance(e, CommandRejected) for e in events))
        batch = Batch(entries=entries, command_id=key, inbox_cursor=inbox_cursor, causation=causation, digest=digest)
        return await self._append_batches([batch], after, [applied], self.state.version)

    async def _note_appended(self, entry_id: str) -> None:
        """Events up to ``entry_id`` are in the log: every ``snapshot_every``
        events, snapshot the state there (one SET, so resuming folds only the tail)."""
        if self.snapshot_every and self.state.version - self._snapshot_version >= self.snapshot_every:
            self._snapshot_version = self.state.version
            snapshot = encode_snapshot(self.system, self.state, entry_id, self._logged_cursors)
            await self.log.client.execute("SET", snapshot_key(self.log.campaign, self.encounter), snapshot)

    async def _rewind(self, received: _Received) -> None:
        """A GM's rewind: check it, fold the log to the version asked for, and
        append the EncounterRewound that restores it. Answers held for a window
        of the abandoned branch are dropped (the rewind records every seat's
        inbox as handled up to what was read)."""
        command = received.command
        assert isinstance(command, RewindEncounter)
        earlier = await self.log.applied_record(self.encounter, received.key)
        if earlier is not None:
            # Sent before: nothing of the live branch (held answers...) is touched again.
            if earlier[1] and earlier[1] != body_digest(command):
                if await self._may_record_rejection(received.seat, received.inbox_id):
                    await self._refuse_reused_id(received, self._cursor_after(received))
            else:
                await self._answer_repeat(received, earlier[0], rationed=False)
            return
        try:
            ids: list[str] = []
            async for rows in self.log.iter_pages(self.encounter):
                ids.extend(row[1][FIELD_COMMAND].decode() for row in rows)
            points = resting_points(ids)
            self.system.check_rewind(self.state, command, points)
            past = self.system.initial_state()
            past.encounter = self.encounter
            await fold_stream(self.system, past, self.log, self.encounter, upto=command.to_version)
            restore = self.system.rewind_to(self.state, command, past, points)
        except Rejected as rejection:
            if await self._may_record_rejection(received.seat, received.inbox_id):
                await self._refuse(received, reject(command, rejection.reason))
            return
        self._buffer.clear()
        for seat in self._read:
            self._untidy.setdefault(seat, [])  # the answers held are dropped: out of their inboxes
        cursors = format_inbox_cursors({seat: cursor for seat, cursor in self._read.items() if cursor != "0-0"})
        applied = self._apply(restore, in_place=False)
        batch = Batch(entries=applied.entries, command_id=received.key, inbox_cursor=cursors,
                      causation=received.causation, digest=body_digest(command))
        await self._append_batches([batch], applied.state, [applied], self.state.version)

    async def _time_out_turn(self) -> None:
        state = self.state
        self._turn_deadline = None
        if state.active is None or state.window is not None:
            return
        log.info("turn timer ran out", encounter=self.encounter, combatant=state.active)
        combatant, turn = state.active, state.turn_started_at
        then, cause = "", f"deadline:turn-{turn}"
        seat = seat_controlling(state.seats, combatant)
        if seat is not None:
            orders, used = await self._seat_orders(seat.id)
            answer = turn_answer(self.system, state, combatant, seat.id, orders, used, self._union)
            if answer is not None:
                order, doing = answer
                cause = f"order:{seat.id}:{order.id}"
                await note_used(self.log, self.encounter, seat.id, order.id)
                if isinstance(doing, str):
                    then = doing
                else:
                    # The order's action, as the seat's own command; then the turn ends.
                    action = msgspec.structs.replace(doing, command_id=f"order-{order.id}-t{turn}")
                    await self._commit(_Received(seat.id, "", action, cause=cause), "", in_place=True)
                    if self.state.active != combatant or self.state.window is not None or self.state.ended:
                        return
                    then = "end_turn"
        timeout = TimeOutTurn(command_id=f"timeout-{turn}", actor=SEQUENCER, combatant=combatant, then=then)
        await self._commit(_Received(SEQUENCER, "", timeout, cause=cause), "", in_place=True)

    def _track_turn(self) -> None:
        state = self.state
        if state.turn_deadline_ms is None or state.active is None or state.ended:
            self._turn_deadline = None
            self._turn_seen = None
        elif state.turn_started_at != self._turn_seen:
            self._turn_seen = state.turn_started_at
            self._turn_deadline = trio.current_time() + state.turn_deadline_ms / 1000
            self._deadlines_to_record["turn"] = f"{state.turn_started_at}:{self.wall_clock() + state.turn_deadline_ms}"

    def _track_window(self) -> None:
        self._track_turn()
        window = self.state.window
        if window is None:
            self._window_deadline = None
            self._window_seen = None
        elif self.state.time_up == f"window-{window.window}":
            self._window_deadline = None  # its time is up and the GM is asked: the GM closes it
            self._window_seen = window.window
        elif window.window != self._window_seen:
            self._window_seen = window.window
            self._window_deadline = trio.current_time() + window.deadline_ms / 1000
            self._deadlines_to_record["window"] = f"{window.window}:{self.wall_clock() + window.deadline_ms}"

    async def _publish_seat_views(self) -> None:
        """Have each seat's options (SeatOptions: what the engine awaits, what
        the seat may do now) written to its own stream, which only that seat's
        Redis user (and the engine) may read: a bot on Redis decides from it.
        Asked when the engine goes to wait for the seats (not while its own
        players play on, so a fight the engine plays alone costs nothing) and
        something other than refusals and repeats was written since the last
        time (a flood of refused commands costs no views). The options of an
        awaited seat take tens of milliseconds (every move with its threats),
        so they are computed from a copy of the state in a worker thread by
        `_write_seat_views`, while the engine goes on reading the inboxes."""
        state = self.state
        if not self.publish_seat_views or not state.started or not self._views_stale:
            return
        self._views_stale = False
        self._views_pending = copy_state(state)  # a newer state replaces one not yet taken up
        self._views_asked += 1
        self._views_wanted.set()

    async def _write_seat_views(self) -> None:
        """The one writer of the seats' view streams (so they are written in
        order), for as long as the sequencer runs."""
        while True:
            await self._views_wanted.wait()
            self._views_wanted = trio.Event()
            state, self._views_pending = self._views_pending, None
            asked = self._views_asked
            if state is not None and not self._views_checked:
                self._views_checked = True
                if await self._views_published(state):
                    state = None  # a restarted engine: the seats' views of this version are there already
            if state is not None:
                try:
                    views = await trio.to_thread.run_sync(self._seat_views, state, abandon_on_cancel=True,
                                                          limiter=_views_threads())
                    replies = await self.log.client.pipeline(
                        [("XADD", self.log.options_key(self.encounter, seat), "MAXLEN", str(SEAT_VIEWS_KEPT), "*",
                          "n", str(state.version), "o", view) for seat, view in views])
                    for reply in replies:
                        if isinstance(reply, RedisError):
                            log.warning("cannot write a seat's options", encounter=self.encounter, error=str(reply)[:200])
                except (RedisError, OSError) as exc:  # Redis away: the next wait writes them again
                    log.warning("cannot write the seats' options", encounter=self.encounter, error=str(exc)[:200])
                    self._views_stale = True
            self._views_done = asked
            self._views_progress.set()

    def _seat_views(self, state: EncounterState) -> list[tuple[str, bytes]]:
        """(seat, its options as JSON) for every seat of ``state`` (a copy no one changes)."""
        views = []
        for seat in state.seats:
            try:
                views.append((seat.id, msgspec.json.encode(self.system.options(state, seat.id))))
            except Exception as exc:  # noqa: BLE001 - a view that fails never stops the fight
                log.warning("cannot compute a seat's options", encounter=self.encounter, seat=seat.id,
                            error=repr(exc)[:200])
        return views

    async def _views_written(self, within_s: float = 5.0) -> None:
        """Wait (a while at most) until the views asked for so far are written."""
        with trio.move_on_after(within_s):
            while self._views_done < self._views_asked:
                # Woken by the writer, not by polling: a sleep would never end
                # under a stopped clock (a test's MockClock) even once they are written.
                self._views_progress = trio.Event()
                await self._views_progress.wait()

    async def _views_published(self, state: EncounterState) -> bool:
        """Whether every seat's view stream already ends with this version's view."""
        try:
            replies = await self.log.client.pipeline(
                [("XREVRANGE", self.log.options_key(self.encounter, seat.id), "+", "-", "COUNT", 1) for seat in state.seats])
        except (RedisError, OSError):
            return False  # written again, then
        for reply in replies:
            if not isinstance(reply, list) or not reply:
                return False
            fields = reply[0][1]
            if dict(zip(fields[::2], fields[1::2])).get(b"n") != str(state.version).encode():
                return False
        return True

    async def _finish(self) -> None:
        """The encounter has ended: close its inboxes (the API refuses from
        now on, the seats' Redis users may only read the log), answer what
        they still hold (refused: the encounter has ended), delete them, and
        only then reveal the seed. So every command a seat got an inbox entry
        for is answered, and none is taken once the reveal is readable. Safe
        to repeat from any point (a restart comes here again)."""
        await self._publish_seat_views()  # "ended": nothing more is awaited
        await self._views_written()
        if self.state.seed_revealed:
            if not await self.log.inboxes_closed(self.encounter):  # ended by an older engine, which revealed first
                await self._close_seats(answer_first=False)
            return
        await self._close_seats(answer_first=True)
        await self._reveal_seed()

    async def _close_seats(self, *, answer_first: bool) -> None:
        """Nothing reads an ended encounter's inboxes: close them, and let its
        seats' Redis users read the log only."""
        seats = default_seats(await encounter_setup(self.log, self.encounter))
        digests = await seat_token_digests(self.log, self.encounter)
        if answer_first:
            await self.log.mark_inboxes_closed(self.encounter)
            await provision_seat_users(self.log, self.encounter, seats, digests, writes=False)
            await self._answer_after_end()
        await close_seats(self.log, self.encounter, seats, digests)

    async def _answer_after_end(self) -> None:
        """Refuse, with the reason, every command still in the (closed) inboxes
        (and a window answer still held, were there one: its window is gone)."""
        held = [b for b in self._buffer.values() if b.inbox_id]
        self._buffer.clear()
        for received in held:
            if await self._may_record_rejection(received.seat, received.inbox_id):
                await self._refuse(received, reject(received.command, ENDED_REASON))
        while True:
            entries = await self.log.read_inboxes(self.encounter, dict(self._read), count=READ_BATCH)
            if not entries:
                break
            full = {seat for seat in {e.seat for e in entries} if sum(e.seat == seat for e in entries) >= READ_BATCH}
            for entry in entries:
                self._read[entry.seat] = entry.entry_id
                if not await self._may_record_rejection(entry.seat, entry.entry_id):
                    continue
                checked = self._check_entry(entry)
                if isinstance(checked, str):
                    await self._append_rejection(entry, ENDED_REASON)
                else:
                    await self._refuse(_Received(entry.seat, entry.entry_id, checked), reject(checked, ENDED_REASON))
            for seat in full - {ENGINE_SEAT}:
                await self._skip_backlog(seat)
        for seat in list(self._dropped):
            await self._report_dropped(seat)

    async def _reveal_seed(self) -> None:
        if self.state.seed_revealed:
            return
        # Before the reveal, so an engine restarted in between (which finds the
        # seed unrevealed and comes here again) still writes it; once per encounter.
        await record_aftermath(self.log, self.encounter, self.state)
        await self._append([SeedRevealed(seed=self.seed.hex())], command_key(SEQUENCER, "reveal-seed"), "",
                           causation="encounter-ended")
