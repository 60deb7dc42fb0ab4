"""Shared builders for the d100-zones tests: small encounters with fixed dice (2 m squares)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from firelane.engine.core import SEQUENCER
from firelane.engine.dice import FixedDice
from firelane.engine.systems.d100_zones import SYSTEM
from firelane.engine.systems.d100_zones.state import D100ZState
from firelane.events.schemas import (
    CombatantSetup,
    Command,
    CoverFeature,
    EncounterSetup,
    EndTurn,
    Event,
    StartEncounter,
    Terrain,
    Wall,
)

# of_type, one and rejection are shared with the other percentile system; its tests import them from here.
from ..percentile_helpers import act_with, of_type, one, rejection  # noqa: F401

RIFLE = {"name": "rifle", "kind": "ranged", "damage": "2d6+1", "range_m": 100, "hands": 2}
PISTOL = {"name": "pistol", "kind": "ranged", "damage": "1d8+1", "range_m": 40, "hands": 1}
KNIFE = {"name": "knife", "kind": "melee", "damage": "1d6+1", "hands": 1}
HATCHET = {"name": "hatchet", "kind": "melee", "damage": "1d6", "hands": 1}
MAUL = {"name": "maul", "kind": "melee", "damage": "2d6+2", "hands": 2}
KNUCKLES = {"name": "knuckles", "kind": "unarmed", "damage": "1d4+1", "hands": 1}


def sheet(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "strength": 50, "dexterity": 40, "intelligence": 60, "speed": 0,
        "melee": 60, "ranged": 55, "brawling": 50, "medicine": 70,
        "hp": 15, "dr": 0, "weapons": [RIFLE, KNIFE],
    }
    base.update(overrides)
    return base


def fighter(cid: str, side: str, position: tuple[int, int], **overrides: Any) -> CombatantSetup:
    return CombatantSetup(id=cid, name=cid.upper(), side=side, position=position, sheet=sheet(**overrides))


def make_setup(
    combatants: Sequence[CombatantSetup],
    *,
    walls: Sequence[tuple[int, int]] = (),
    cover: Sequence[CoverFeature] = (),
    **settings: Any,
) -> EncounterSetup:
    terrain = Terrain(width=30, height=20, square_size=2.0, unit="m", walls=[Wall(x, y) for x, y in walls], cover=list(cover))
    return EncounterSetup(system="d100-zones", combatants=list(combatants), terrain=terrain, settings=settings)


def default_initiative(ids_in_setup_order: Sequence[str]) -> list[int]:
    """d100 faces in ID order: the first combatant of the setup rolls 80, the rest 20."""
    first = ids_in_setup_order[0]
    return [80 if cid == first else 20 for cid in sorted(ids_in_setup_order)]


def start_logged(setup: EncounterSetup, initiative: Sequence[int] | None = None) -> tuple[D100ZState, list[Event]]:
    """Start the encounter; ``initiative`` are the d100 faces in combatant-ID order."""
    state = SYSTEM.initial_state()
    faces = initiative if initiative is not None else default_initiative([c.id for c in setup.combatants])
    command = StartEncounter(command_id="start", actor=SEQUENCER, setup=setup, seed_commitment="test")
    events = SYSTEM.decide(state, command, FixedDice(faces))
    for event in events:
        SYSTEM.evolve(state, event)
    return state, events  # type: ignore[return-value]


def start(setup: EncounterSetup, initiative: Sequence[int] | None = None) -> D100ZState:
    return start_logged(setup, initiative)[0]


def act(state: D100ZState, command: Command, faces: Sequence[int] = ()) -> list[Event]:
    """Decide (or reject) with fixed faces, apply the events, and check every face was used."""
    return act_with(SYSTEM, state, command, faces)


def end_turn(state: D100ZState, faces: Sequence[int] = ()) -> list[Event]:
    assert state.active is not None
    return act(state, EndTurn(command_id=f"end-{state.version}", actor=state.active), faces)


def mods(roll: Any) -> list[tuple[str, str, int]]:
    return [(m.source, m.rule, m.value) for m in roll.modifiers]
