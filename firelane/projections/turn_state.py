"""Turn state: the encounter state folded from the log, with checkpoints.

A checkpoint stores the folded state (msgpack) with the version and entry ID it
reflects, so a projection over a long campaign resumes from there instead of
refolding every event. A checkpoint written by another rule system or an
incompatible schema is ignored and the fold starts over.
"""

from __future__ import annotations

import msgspec

from firelane.engine.core import BaseRuleSystem
from firelane.engine.registry import get_system
from firelane.engine.state import EncounterState
from firelane.events import codec
from firelane.events.envelope import StoredEvent
from firelane.events.log import EventLog
from firelane.events.schemas import EncounterStarted, Event


class Checkpoint(msgspec.Struct, kw_only=True):
    system: str
    version: int
    entry_id: str
    state: bytes  # msgpack of the system's state type


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


def fold(system: BaseRuleSystem, events: list[Event], encounter: str, *, upto: int | None = None) -> EncounterState:
    """Fold events from the start; with ``upto``, stop after that many events (the state at version ``upto``)."""
    state = system.initial_state()
    state.encounter = encounter
    for event in events if upto is None else events[:upto]:
        system.evolve(state, event)
    return state


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

    async def load_checkpoint(self) -> bool:
        raw = await self.log.client.execute("GET", checkpoint_key(self.log.campaign, self.encounter))
        if raw is None:
            return False
        try:
            checkpoint = msgspec.msgpack.decode(raw, type=Checkpoint)
            system = get_system(checkpoint.system)
            state = msgspec.msgpack.decode(checkpoint.state, type=system.state_type)
        except (msgspec.DecodeError, msgspec.ValidationError, KeyError):
            return False  # stale or foreign checkpoint: refold from the start
        if state.version != checkpoint.version:
            return False
        self.system, self.state, self.cursor = system, state, checkpoint.entry_id
        return True

    async def save_checkpoint(self) -> None:
        if self.system is None or self.state is None:
            return
        checkpoint = Checkpoint(
            system=self.system.name, version=self.state.version, entry_id=self.cursor,
            state=msgspec.msgpack.encode(self.state),
        )
        await self.log.client.execute(
            "SET", checkpoint_key(self.log.campaign, self.encounter), msgspec.msgpack.encode(checkpoint)
        )
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
        while True:
            batch = await self.log.read(self.encounter, self.cursor, count=self.checkpoint_every)
            if not batch:
                break
            self.apply(batch)
            if self._since_checkpoint >= self.checkpoint_every:
                await self.save_checkpoint()
        if self.state is None:
            raise LookupError(f"encounter {self.encounter!r} has no events")
        return self.state
