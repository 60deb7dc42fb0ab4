"""Replay: the state at any event, and the narrated sequence of events.

Replay never rolls: the faces are in the events. `stream_frames` and
`state_at_version` read the stored log page by page (bounded memory); the
list functions serve tests and the pure loop.

A GM's rewind leaves the branch it abandons in the log (engine/branches.py):
a replay reads through it, and `undone_spans` says beforehand which events it
holds, so a reader marks them as it goes (a rewind comes after what it undoes).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import aclosing

import msgspec

from firelane.engine.branches import Branches, Span
from firelane.engine.core import BaseRuleSystem
from firelane.engine.state import EncounterState, copy_state
from firelane.events import codec
from firelane.events.envelope import StoredEvent
from firelane.events.log import EventLog
from firelane.events.codec import event_tag
from firelane.events.log import FIELD_DATA, FIELD_TYPE, FIELD_VERSION
from firelane.events.schemas import EncounterRewound, Event
from firelane.projections.snapshots import load_snapshot, snapshot_key
from firelane.projections.turn_state import fold_stream, log_system, system_of


def state_at(system: BaseRuleSystem, events: list[Event], encounter: str, version: int) -> EncounterState:
    """The state after the first ``version`` events (0 = before the first)."""
    if not 0 <= version <= len(events):
        raise ValueError(f"version {version} is outside the log (0..{len(events)})")
    state = system.initial_state()
    state.encounter = encounter
    for event in events[:version]:
        system.evolve(state, event)
    return state


def frames(system: BaseRuleSystem, events: list[Event], encounter: str) -> Iterator[tuple[int, Event, EncounterState]]:
    """(version, event, state after it) for every event; each state is a copy."""
    state = system.initial_state()
    state.encounter = encounter
    for version, event in enumerate(events, start=1):
        system.evolve(state, event)
        yield version, event, copy_state(state)


async def stream_frames(
    event_log: EventLog, encounter: str, *, upto: int | None = None, page: int = 1000
) -> AsyncIterator[tuple[StoredEvent, Event, EncounterState]]:
    """(stored entry, event, state after it) for the first ``upto`` events of
    the log (all if None), streamed page by page in bounded memory. The state
    is the one being folded, not a copy: read it before the next step."""
    system: BaseRuleSystem | None = None
    state: EncounterState | None = None
    async with aclosing(event_log.iter_read(encounter, page=page, count=upto)) as pages:
        async for batch in pages:
            if system is None:
                system = system_of(batch)
                state = system.initial_state()
                state.encounter = encounter
            assert state is not None
            for stored in batch:
                event = codec.decode_event(stored)
                system.evolve(state, event)
                yield stored, event, state


async def state_at_version(event_log: EventLog, encounter: str, version: int) -> EncounterState:
    """The state after the first ``version`` events of the stored log, streamed."""
    length = await event_log.version(encounter)
    if not 0 <= version <= length:
        raise ValueError(f"version {version} is outside the log (0..{length})")
    system = await log_system(event_log, encounter)
    state = system.initial_state()
    state.encounter = encounter
    await fold_stream(system, state, event_log, encounter, upto=version)
    return state


class _RewindTarget(msgspec.Struct):
    to_version: int


_rewind_target = msgspec.json.Decoder(_RewindTarget)


def rewind_target(body: bytes) -> int:
    """The ``to_version`` of an EncounterRewound's JSON body (read without the state it carries)."""
    return _rewind_target.decode(body).to_version


def undone_in(events: list[Event]) -> list[Span]:
    """The undone spans of a log held in memory (events from version 1)."""
    found = Branches()
    for version, event in enumerate(events, start=1):
        if isinstance(event, EncounterRewound):
            found.rewound(version, event.to_version)
    return found.spans


async def undone_spans(event_log: EventLog, encounter: str) -> list[Span]:
    """The undone spans of the stored log: those of the engine's snapshot
    (its state keeps them, `EncounterState.undone`) when there is one that
    matches the log (`load_snapshot`), and the rewinds after it, from one pass
    over the rest of the log that decodes nothing but the rewinds."""
    found, after = Branches(), "0-0"
    resumed, _why = await load_snapshot(event_log, encounter, snapshot_key(event_log.campaign, encounter))
    if resumed is not None:
        found, after = Branches(resumed.state.undone), resumed.entry_id
    rewind = event_tag(EncounterRewound).encode()
    async with aclosing(event_log.iter_pages(encounter, after)) as pages:
        async for rows in pages:
            for _entry_id, fields in rows:
                if fields[FIELD_TYPE] == rewind:
                    found.rewound(int(fields[FIELD_VERSION]), rewind_target(fields[FIELD_DATA]))
    return found.spans
