"""Turn state: the encounter state folded from the log, with checkpoints.

Folding streams the log page by page (`fold_stream`), so memory does not grow
with the log's length. A checkpoint (see `projections/snapshots.py`) stores
the folded state with the version and entry ID it reflects, so a projection
over a long campaign resumes from there instead of refolding every event. A
checkpoint written by another rule system or under other schemas is ignored
and the fold starts over.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import aclosing

import msgspec

from firelane.engine.core import BaseRuleSystem
from firelane.engine.registry import get_system
from firelane.engine.state import EncounterState
from firelane.events import codec
from firelane.events.envelope import StoredEvent, parse_inbox_cursors
from firelane.events.log import EventLog, LogTampered, VersionSequence
from firelane.events.schemas import EncounterStarted, Event
from firelane.projections.snapshots import load_snapshot, save_snapshot


def checkpoint_key(campaign: str, encounter: str) -> str:
    return f"firelane:{{{campaign}}}:enc:{encounter}:checkpoint:turn_state"


def system_of(stored_events: list[StoredEvent]) -> BaseRuleSystem:
    """The rule system named by the log's first event (EncounterStarted)."""
    if not stored_events:
        raise LookupError("the encounter's log is empty")
    first = codec.decode_event(stored_events[0])
    if not isinstance(first, EncounterStarted):
        raise ValueError(f"the log does not begin with EncounterStarted but {type(first).__name__}")
    return get_system(first.setup.system)


async def log_system(event_log: EventLog, encounter: str) -> BaseRuleSystem:
    """The rule system of a stored encounter, from its first event (LookupError if the log is empty)."""
    return system_of(await event_log.read(encounter, count=1))


def fold(system: BaseRuleSystem, events: list[Event], encounter: str, *, upto: int | None = None) -> EncounterState:
    """Fold events from the start; with ``upto``, stop after that many events (the state at version ``upto``)."""
    state = system.initial_state()
    state.encounter = encounter
    for event in events if upto is None else events[:upto]:
        system.evolve(state, event)
    return state


class FoldEnd(msgspec.Struct, frozen=True):
    """Where a `fold_stream` stopped: the last entry folded and, for each seat,
    the last inbox cursor recorded (how far its inbox is handled)."""

    entry_id: str
    inbox_cursors: dict[str, str]


async def fold_stream(
    system: BaseRuleSystem,
    state: EncounterState,
    event_log: EventLog,
    encounter: str,
    after: str = "0-0",
    *,
    upto: int | None = None,
    page: int = 1000,
    inbox_cursors: dict[str, str] | None = None,
    on_page: Callable[[FoldEnd], object] | None = None,
) -> FoldEnd:
    """Fold the log's events after entry ``after`` into ``state`` (in place), page by page.

    Holds one page of raw entries at a time and builds no `StoredEvent`: each
    body goes straight from Redis's reply to its type's reused msgspec decoder
    and into ``evolve``, then is dropped. ``upto``: stop at that version.
    ``inbox_cursors``: the cursors in force before ``after`` (kept for each seat
    no later entry records one). Only entries the log can vouch for are folded
    (see ``EventLog.iter_pages``), and each must be the next version of
    ``state``: a copy of an entry or a gap raises `LogTampered`. ``on_page`` is called after each page with where the fold is.
    """
    # (type, schema) -> its decoder and evolver, or None for a type evolve does
    # not read (counted, not decoded: a body no fold reads need not be parsed).
    folds: dict[tuple[bytes, bytes], tuple[Callable[[bytes], Event], Callable[[EncounterState, Event], None]] | None] = {}
    evolve_without_reading = system.evolve_without_reading
    last_id = after
    cursors = dict(inbox_cursors or {})
    count = None if upto is None else upto - state.version
    if count is not None and count <= 0:
        return FoldEnd(last_id, cursors)
    async with aclosing(event_log.iter_pages(encounter, after, page=page, count=count)) as pages:
        async for rows in pages:
            for raw_id, fields in rows:
                if int(fields[1]) != state.version + 1:
                    # A genuine entry (its MAC matches) out of its place: folding
                    # it would count it twice, or fold past what is missing.
                    problem = VersionSequence(state.version + 1).problem(int(fields[1]))
                    raise LogTampered(f"{problem}; at entry {raw_id.decode('ascii', 'replace')}")
                key = (fields[3], fields[5])
                try:
                    fold_one = folds[key]
                except KeyError:
                    fold_one = folds[key] = _fold_of(system, fields[3].decode(), int(fields[5]))
                if fold_one is None:
                    evolve_without_reading(state)
                else:
                    decode, evolve = fold_one
                    evolve(state, decode(fields[7]))
                if fields[13]:
                    cursors.update(parse_inbox_cursors(fields[13].decode()))
            last_id = rows[-1][0].decode("ascii")
            if on_page is not None:
                on_page(FoldEnd(last_id, dict(cursors)))
    return FoldEnd(last_id, cursors)


def _fold_of(system: BaseRuleSystem, tag: str, schema: int) -> tuple[Callable[[bytes], Event], Callable[[EncounterState, Event], None]] | None:
    """How a fold takes events of (``tag``, ``schema``): their decoder and
    evolver, or None when ``evolve`` does not read that type. Raises
    `UnknownEventType` for a type or schema this engine does not know, whether
    it would be read or not."""
    decode = codec.body_decoder(tag, schema)
    evolver = system.evolver(codec.event_type_for(tag))
    return None if evolver is None else (decode, evolver)


class TurnStateProjection:
    """Keeps an encounter's state folded, resuming from and writing checkpoints."""

    def __init__(self, event_log: EventLog, encounter: str, *, checkpoint_every: int = 500) -> None:
        self.log = event_log
        self.encounter = encounter
        self.checkpoint_every = checkpoint_every
        self.system: BaseRuleSystem | None = None
        self.state: EncounterState | None = None
        self.cursor = "0-0"
        self._since_checkpoint = 0

    @property
    def key(self) -> str:
        return checkpoint_key(self.log.campaign, self.encounter)

    async def load_checkpoint(self) -> bool:
        resumed, _why_not = await load_snapshot(self.log, self.encounter, self.key)
        if resumed is None:
            return False  # none, stale or foreign: refold from the start
        self.system, self.state, self.cursor = resumed.system, resumed.state, resumed.entry_id
        return True

    async def save_checkpoint(self) -> None:
        if self.system is None or self.state is None:
            return
        await save_snapshot(self.log, self.key, self.system, self.state, self.cursor)
        self._since_checkpoint = 0

    def apply(self, batch: list[StoredEvent]) -> None:
        for stored in batch:
            if self.state is not None and stored.version <= self.state.version:
                continue
            if self.system is None:
                self.system = system_of([stored])
                self.state = self.system.initial_state()
                self.state.encounter = self.encounter
            assert self.state is not None
            self.system.evolve(self.state, codec.decode_event(stored))
            self.cursor = stored.entry_id
            self._since_checkpoint += 1

    async def catch_up(self) -> EncounterState:
        """Bring the state up to the log's current end (checkpointing as it goes)."""
        if self.state is None:
            await self.load_checkpoint()
        if self.state is None:
            first = await self.log.read(self.encounter, count=1)
            if not first:
                raise LookupError(f"encounter {self.encounter!r} has no events")
            self.apply(first)
        assert self.system is not None and self.state is not None
        while True:
            before = self.state.version
            end = await fold_stream(self.system, self.state, self.log, self.encounter, self.cursor,
                                    upto=before + self.checkpoint_every, page=self.checkpoint_every)
            self.cursor = end.entry_id
            self._since_checkpoint += self.state.version - before
            if self._since_checkpoint >= self.checkpoint_every:
                await self.save_checkpoint()
            if self.state.version - before < self.checkpoint_every:
                return self.state
