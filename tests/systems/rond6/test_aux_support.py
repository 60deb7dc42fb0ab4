"""Helpers for the RonD6 aux integration tests (no tests of its own but one smoke test).

Encounters are started through the real `SYSTEM` with fixed dice: every sheet
has Perception 1D, so initiative takes one die per combatant (in ID order).
"""

from __future__ import annotations

from typing import Any

from firelane.engine.core import SEQUENCER
from firelane.engine.dice import FixedDice
from firelane.engine.systems.rond6 import SYSTEM
from firelane.engine.systems.rond6.state import RonD6State
from firelane.engine.systems.rond6.schemas import R6DeclareActions
from firelane.events.schemas import (
    CombatantSetup,
    Command,
    CommandRejected,
    EncounterSetup,
    EndTurn,
    Event,
    StartEncounter,
    Terrain,
)


def sheet(**overrides: Any) -> dict[str, Any]:
    """A plain human: Agility 3D (Passive Defense 16), Strength 3D, Move 5."""
    base: dict[str, Any] = {
        "attributes": {"Agility": "3D", "Strength": "3D", "Perception": "1D", "Stamina": "2D",
                       "Knowledge": "2D", "Will Power": "2D", "Presence": "2D"},
        "skills": {"athletics": "4D", "fortitude": "3D"},
        "move": 5,
    }
    for key, value in overrides.items():
        if key in ("attributes", "skills") and isinstance(value, dict):
            base[key] = {**base[key], **value}
        else:
            base[key] = value
    return base


def fighter(cid: str, side: str, position: tuple[int, int] | None, **overrides: Any) -> CombatantSetup:
    return CombatantSetup(id=cid, name=cid.upper(), side=side, position=position, sheet=sheet(**overrides))


def start(
    combatants: list[CombatantSetup],
    initiative: list[int] | None = None,
    *,
    terrain: Terrain | None = None,
    **settings: Any,
) -> RonD6State:
    """Start an encounter; ``initiative`` is one face per standing combatant in ID
    order (default: descending in list order, so the first listed acts first)."""
    if initiative is None:
        ids = sorted(c.id for c in combatants)
        order = [c.id for c in combatants]
        initiative = [5 - min(order.index(cid), 3) for cid in ids]
    setup = EncounterSetup(system="rond6", combatants=combatants, terrain=terrain or Terrain(width=30, height=20), settings=settings)
    state: RonD6State = SYSTEM.initial_state()  # type: ignore[assignment]
    state.encounter = "test"
    events = SYSTEM.decide(state, StartEncounter(command_id="start", actor=SEQUENCER, setup=setup, seed_commitment="x"), FixedDice(initiative))
    for event in events:
        SYSTEM.evolve(state, event)
    return state


_counter = [0]


def act(state: RonD6State, command: Command, faces: list[int] | tuple[int, ...] = ()) -> list[Event]:
    """Decide (rejections become CommandRejected) and apply; every fixed face must be used."""
    dice = FixedDice(faces)
    events = SYSTEM.decide_or_reject(state, command, dice)
    for event in events:
        SYSTEM.evolve(state, event)
    assert dice.remaining == 0 or any(isinstance(e, CommandRejected) for e in events), f"{dice.remaining} fixed faces unused"
    return events


def cid(prefix: str = "c") -> str:
    _counter[0] += 1
    return f"{prefix}{_counter[0]}"


def declare(state: RonD6State, actor: str, count: int = 1) -> list[Event]:
    return act(state, R6DeclareActions(command_id=cid("d"), actor=actor, count=count))


def end_turn(state: RonD6State, actor: str, faces: list[int] | tuple[int, ...] = ()) -> list[Event]:
    return act(state, EndTurn(command_id=cid("e"), actor=actor), faces)


def of_type(events: list[Event], kind: type) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def rejection(events: list[Event]) -> str:
    assert len(events) == 1 and isinstance(events[0], CommandRejected), events
    return events[0].reason


def replayed(events: list[Event]) -> RonD6State:
    state: RonD6State = SYSTEM.initial_state()  # type: ignore[assignment]
    state.encounter = "test"
    for event in events:
        SYSTEM.evolve(state, event)
    return state


def test_support_starts_with_the_first_listed_acting_first() -> None:
    """Smoke test of the helpers: initiative 5 beats 4."""
    state = start([fighter("a", "red", (0, 0)), fighter("b", "blue", (5, 0))])
    assert state.turn_order == ["a", "b"] and state.active == "a"
