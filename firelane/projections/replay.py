"""Replay: the state at any event, and the narrated sequence of events.

Replay never rolls: the faces are in the events.
"""

from __future__ import annotations

from collections.abc import Iterator

from firelane.engine.core import BaseRuleSystem
from firelane.engine.state import EncounterState, copy_state
from firelane.events.schemas import Event


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
