"""The encounter sequencer: the single writer of an encounter's log.

It reads commands from the encounter's inbox stream (any frontend may write
there), decides them against the state folded from the log, and appends the
resulting events with an expected-version check and the command's ID, so a
retried command is applied once and a second writer is detected.

Crash safety: every append records the inbox cursor up to which all commands
have been handled; a restarted sequencer folds the log, resumes the inbox from
that cursor, and re-handles what follows (already-applied commands come back as
duplicates and are skipped).

Reaction windows: answers (claims and passes) are checked at once (a bad one is
rejected immediately) but held until every reactor has answered or the
deadline passes, then applied in the order the window lists its reactors. So
the log does not depend on which reactor's message arrived first, and every
reactor answers from the same state. The deadline restarts in full when a
sequencer restarts with a window open.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import msgspec
import trio

from firelane.engine.core import SEQUENCER, BaseRuleSystem, reject
from firelane.engine.dice import SeededDice, commit_seed
from firelane.engine.registry import get_system
from firelane.actors.lease import SequencerLease
from firelane.engine.state import EncounterState, copy_state
from firelane.events import codec
from firelane.events.log import Batch, EventLog, VersionConflict
from firelane.events.schemas import (
    ClaimReaction,
    CloseReactionWindow,
    Command,
    CommandRejected,
    EncounterSetup,
    Event,
    PassReaction,
    SeedRevealed,
    StartEncounter,
)
from firelane.logs import get_logger
from firelane.projections.snapshots import encode_snapshot, load_snapshot, snapshot_key
from firelane.projections.turn_state import fold_stream

log = get_logger("firelane.sequencer")


def seed_key(campaign: str, encounter: str) -> str:
    return f"firelane:{{{campaign}}}:enc:{encounter}:seed"


class EncounterExists(RuntimeError):
    pass


async def create_encounter(event_log: EventLog, encounter: str, setup: EncounterSetup, seed: bytes) -> None:
    """Register an encounter, keep its secret seed, and queue its StartEncounter.

    Refuses an encounter ID that is already taken, so a campaign's history is
    never mixed with a new fight.
    """
    get_system(setup.system)  # an unknown system is refused before anything is stored
    created = await event_log.client.execute("SET", seed_key(event_log.campaign, encounter), seed.hex(), "NX")
    if created is None:
        raise EncounterExists(f"encounter {encounter!r} already exists in campaign {event_log.campaign!r}")
    meta = codec.encode_json({"system": setup.system, "name": setup.name or encounter})
    await event_log.register_encounter(encounter, meta)
    start = StartEncounter(command_id="start", actor=SEQUENCER, setup=setup, seed_commitment=commit_seed(seed))
    await event_log.submit(encounter, codec.encode_command(start))


async def ensure_encounter(event_log: EventLog, encounter: str, setup: EncounterSetup, seed: bytes) -> bytes:
    """Create the encounter if it is new; safe to repeat after a crash at any
    point of creation (the seed is kept once, the start command is idempotent).
    Returns the seed in force (the stored one if the encounter already had one)."""
    get_system(setup.system)
    key = seed_key(event_log.campaign, encounter)
    await event_log.client.execute("SET", key, seed.hex(), "NX")
    stored_seed = bytes.fromhex((await event_log.client.execute("GET", key)).decode())
    meta = codec.encode_json({"system": setup.system, "name": setup.name or encounter})
    await event_log.register_encounter(encounter, meta)
    if await event_log.version(encounter) == 0:
        start = StartEncounter(command_id="start", actor=SEQUENCER, setup=setup, seed_commitment=commit_seed(stored_seed))
        await event_log.submit(encounter, codec.encode_command(start))
    return stored_seed


async def load_seed(event_log: EventLog, encounter: str) -> bytes:
    stored = await event_log.client.execute("GET", seed_key(event_log.campaign, encounter))
    if stored is None:
        raise LookupError(f"no seed for encounter {encounter!r} in campaign {event_log.campaign!r}")
    return bytes.fromhex(stored.decode())


async def fold_log(
    event_log: EventLog, encounter: str, system: BaseRuleSystem, *, use_snapshot: bool = True
) -> tuple[EncounterState, str]:
    """Rebuild state from the log; also return the last recorded inbox cursor.

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
        state, after, cursor = resumed.state, resumed.entry_id, resumed.inbox_cursor or "0-0"
    else:
        state, after, cursor = system.initial_state(), "0-0", "0-0"
        state.encounter = encounter
    end = await fold_stream(system, state, event_log, encounter, after, inbox_cursor=cursor)
    return state, end.inbox_cursor or "0-0"


@dataclass
class _Buffered:
    inbox_id: str
    command: Command


class Sequencer:
    def __init__(self, event_log: EventLog, encounter: str, system: BaseRuleSystem, seed: bytes, *, lease_wait_s: float = 6.0,
                 snapshot_every: int = 1000) -> None:
        self.lease_wait_s = lease_wait_s
        self.snapshot_every = snapshot_every  # events between snapshots (0: none)
        self._snapshot_version = 0
        self._logged_cursor = "0-0"  # the last inbox cursor recorded in the log
        self.log = event_log
        self.encounter = encounter
        self.system = system
        self.seed = seed
        self.state: EncounterState = system.initial_state()
        self._union = codec.command_union(system.command_types)
        self._read_cursor = "0-0"  # last inbox entry read
        self._safe_cursor = "0-0"  # every inbox entry up to here is handled
        self._buffer: dict[str, _Buffered] = {}
        self._window_deadline: float | None = None
        self._window_seen: int | None = None
        self.commands_handled = 0

    async def load(self) -> None:
        self.state, cursor = await fold_log(self.log, self.encounter, self.system)
        self._read_cursor = self._safe_cursor = self._logged_cursor = cursor
        self._snapshot_version = self.state.version
        self._buffer.clear()
        self._window_seen = None
        self._track_window()

    async def run(self, *, stop_when_ended: bool = True) -> EncounterState:
        """Serve the encounter until it has ended (and its seed is revealed),
        holding the encounter's lease so no other engine writes meanwhile."""
        lease = SequencerLease(self.log, self.encounter, wait_s=self.lease_wait_s)
        await lease.acquire()
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(lease.keep)
                state = await self._serve(stop_when_ended=stop_when_ended)
                nursery.cancel_scope.cancel()
            return state
        finally:
            await lease.release()

    async def _serve(self, *, stop_when_ended: bool) -> EncounterState:
        await self.load()
        log.info("sequencer started", encounter=self.encounter, version=self.state.version)
        while True:
            if self.state.ended:
                await self._reveal_seed()
                if stop_when_ended:
                    return self.state
            if self._window_deadline is not None and trio.current_time() >= self._window_deadline:
                await self._close_window_on_deadline()
                continue
            entries: list[tuple[str, bytes]] = []
            # The deadline is a trio deadline (not Redis's BLOCK timeout), so it
            # follows trio's clock (MockClock in tests); cancelling the blocked
            # read is safe: the client drops that connection.
            with trio.move_on_at(self._window_deadline if self._window_deadline is not None else math.inf):
                entries = await self.log.read_inbox(self.encounter, self._read_cursor, block_ms=1000, count=256)
            for inbox_id, payload in entries:
                self._read_cursor = inbox_id
                await self._handle(inbox_id, payload)

    # ------------------------------------------------------------ handling

    async def _handle(self, inbox_id: str, payload: bytes) -> None:
        self.commands_handled += 1
        try:
            command = codec.decode_command(payload, self._union)
        except codec.CommandDecodeError as exc:
            await self._append_rejection(inbox_id, payload, str(exc))
            return
        window = self.state.window
        if isinstance(command, (ClaimReaction, PassReaction)) and command.actor in self._buffer:
            if self._buffer[command.actor].command.command_id == command.command_id:
                return  # the same answer again (a restarted actor re-sent it)
            rejection = reject(command, f"{command.actor} has already answered window {command.window}")
            await self._append([rejection], command.command_id, self._cursor_after(inbox_id), causation=f"inbox:{inbox_id}")
            return
        if (
            isinstance(command, (ClaimReaction, PassReaction))
            and window is not None
            and command.window == window.window
            and command.actor in window.unanswered()
        ):
            dry_run = self.system.decide_or_reject(self.state, command, SeededDice(self.seed, self.state.version))
            if dry_run and isinstance(dry_run[0], CommandRejected):
                await self._apply(command, inbox_id, causation=f"inbox:{inbox_id}")  # the rejection, recorded at once
                return
            self._buffer[command.actor] = _Buffered(inbox_id, command)
            if set(window.unanswered()) <= set(self._buffer):
                await self._flush_window_answers()
            return
        await self._apply(command, self._cursor_after(inbox_id), causation=f"inbox:{inbox_id}")

    def _cursor_after(self, inbox_id: str) -> str:
        """The cursor an append may record: all entries up to it are handled
        unless some are still buffered for a window."""
        return self._safe_cursor if self._buffer else inbox_id

    async def _flush_window_answers(self) -> None:
        """Apply the held answers in the window's reactor order, as one atomic
        multi-batch append (one round trip, one wake-up for every follower)."""
        window = self.state.window
        order = [r.combatant for r in window.reactors] if window is not None else []
        order += sorted(c for c in self._buffer if c not in order)
        held = [self._buffer.pop(c) for c in order if c in self._buffer]
        if not held:
            return
        scratch = copy_state(self.state)
        batches = []
        for index, buffered in enumerate(held):
            events = self._decide(scratch, buffered.command)
            for event in events:
                self.system.evolve(scratch, event)
            cursor = self._read_cursor if index == len(held) - 1 else self._safe_cursor
            batches.append(Batch(entries=[codec.encode_event(e) for e in events],
                                 command_id=buffered.command.command_id, inbox_cursor=cursor,
                                 causation=f"inbox:{buffered.inbox_id}"))
        try:
            results = await self.log.append_batches(self.encounter, self.state.version, batches)
        except VersionConflict:
            log.warning("version conflict, reloading", encounter=self.encounter, version=self.state.version)
            await self.load()
            raise
        if len(results) == len(batches) and not any(r.duplicate for r in results):
            self.state = scratch
            self._safe_cursor = self._read_cursor
            self._track_window()
            written = [(r.entry_ids[-1], b.inbox_cursor) for r, b in zip(results, batches) if r.entry_ids]
            if written:
                await self._note_appended(written[-1][0], next((c for _, c in reversed(written) if c), ""))
        else:
            # Some answers were already in the log (a restart re-read them):
            # refold and re-read the inbox from the recorded cursor.
            await self.load()

    async def _close_window_on_deadline(self) -> None:
        window = self.state.window
        assert window is not None
        log.info("reaction window deadline", encounter=self.encounter, window=window.window, waiting=window.unanswered())
        await self._flush_window_answers()
        if self.state.window is not None and self.state.window.window == window.window:
            close = CloseReactionWindow(command_id=f"close-window-{window.window}", actor=SEQUENCER, window=window.window)
            await self._apply(close, self._cursor_after(self._read_cursor), causation=f"deadline:window-{window.window}")

    def _decide(self, state: EncounterState, command: Command) -> list[Event]:
        try:
            return self.system.decide_or_reject(state, command, SeededDice(self.seed, state.version))
        except Exception as exc:  # a bug in a rule system must not stop the encounter
            log.exception("decide failed", encounter=self.encounter, command=type(command).__name__)
            return [CommandRejected(command_id=command.command_id, actor=command.actor,
                                    command_type=type(command).__name__, reason=f"internal error: {exc!r}")]

    async def _apply(self, command: Command, inbox_cursor: str, *, causation: str = "") -> None:
        await self._append(self._decide(self.state, command), command.command_id, inbox_cursor, causation=causation)

    async def _append_rejection(self, inbox_id: str, payload: bytes, reason: str) -> None:
        actor = ""
        try:
            raw = msgspec.json.decode(payload)
            if isinstance(raw, dict) and isinstance(raw.get("actor"), str):
                actor = raw["actor"]
        except msgspec.DecodeError:
            pass
        rejection = CommandRejected(command_id=f"inbox:{inbox_id}", actor=actor, command_type="?", reason=reason)
        await self._append([rejection], rejection.command_id, self._cursor_after(inbox_id), causation=f"inbox:{inbox_id}")

    async def _append(self, events: list[Event], command_id: str, inbox_cursor: str, *, causation: str = "") -> None:
        entries = [codec.encode_event(e) for e in events]
        try:
            result = await self.log.append(
                self.encounter, self.state.version, entries, command_id=command_id, inbox_cursor=inbox_cursor,
                causation=causation,
            )
        except VersionConflict:
            # Another writer appended: our state is stale. Rebuild and let the
            # command be handled again (it is a duplicate if the other applied it).
            log.warning("version conflict, reloading", encounter=self.encounter, version=self.state.version)
            await self.load()
            raise
        if result.duplicate:
            return
        for event in events:
            self.system.evolve(self.state, event)
        if inbox_cursor and not self._buffer:
            self._safe_cursor = inbox_cursor
        self._track_window()
        if result.entry_ids:
            await self._note_appended(result.entry_ids[-1], inbox_cursor)

    async def _note_appended(self, entry_id: str, inbox_cursor: str) -> None:
        """Events up to ``entry_id`` are in the log: every ``snapshot_every``
        events, snapshot the state there (one SET, so resuming folds only the tail)."""
        if inbox_cursor:
            self._logged_cursor = inbox_cursor
        if self.snapshot_every and self.state.version - self._snapshot_version >= self.snapshot_every:
            self._snapshot_version = self.state.version
            snapshot = encode_snapshot(self.system, self.state, entry_id, self._logged_cursor)
            await self.log.client.execute("SET", snapshot_key(self.log.campaign, self.encounter), snapshot)

    def _track_window(self) -> None:
        window = self.state.window
        if window is None:
            self._window_deadline = None
            self._window_seen = None
        elif window.window != self._window_seen:
            self._window_seen = window.window
            self._window_deadline = trio.current_time() + window.deadline_ms / 1000

    async def _reveal_seed(self) -> None:
        if self.state.seed_revealed:
            return
        await self._append([SeedRevealed(seed=self.seed.hex())], "reveal-seed", self._read_cursor, causation="encounter-ended")
