"""Test helpers the two percentile systems' tests share (d100-degrees, d100-zones):
acting with fixed dice, picking events out of a list, and whole AI fights
replayed from their log. Each system's ``helpers`` binds them to its SYSTEM."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from firelane.engine.core import BaseRuleSystem
from firelane.engine.dice import FixedDice
from firelane.engine.simulate import run_headless
from firelane.engine.state import EncounterState
from firelane.events.schemas import Command, EncounterSetup, Event


def act_with(system: BaseRuleSystem, state: EncounterState, command: Command, faces: Sequence[int] = ()) -> list[Event]:
    """Decide (or reject) with fixed faces, apply the events, and check every face was used."""
    dice = FixedDice(faces)
    events = system.decide_or_reject(state, command, dice)
    for event in events:
        system.evolve(state, event)
    assert dice.remaining == 0 or type(events[0]).__name__ == "CommandRejected", f"{dice.remaining} fixed faces unused"
    return events


def of_type(events: Sequence[Event], kind: type) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def one(events: Sequence[Event], kind: type) -> Any:
    found = of_type(events, kind)
    assert len(found) == 1, f"expected one {kind.__name__}, got {len(found)}: {events}"
    return found[0]


def rejection(events: Sequence[Event]) -> str:
    assert len(events) == 1 and type(events[0]).__name__ == "CommandRejected", events
    return events[0].reason  # type: ignore[attr-defined]


def fight_and_replay(system: BaseRuleSystem, setup: EncounterSetup, seed: bytes) -> tuple[Any, Any, list[Event]]:
    """Run an AI-only fight to its end; return the live final state, the state
    rebuilt by folding the log from scratch, and the log."""
    log: list[Event] = []
    final = None
    for _command, events, state in run_headless(system, setup, seed):
        log.extend(events)
        final = state
    assert final is not None
    rebuilt = system.initial_state()
    rebuilt.encounter = "headless"
    for event in log:
        system.evolve(rebuilt, event)
    return final, rebuilt, log
