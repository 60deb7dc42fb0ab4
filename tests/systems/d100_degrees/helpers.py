"""Shared builders for the d100-degrees tests: small encounters with fixed dice."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from firelane.engine.core import SEQUENCER
from firelane.engine.dice import FixedDice
from firelane.engine.systems.d100_degrees import SYSTEM
from firelane.engine.systems.d100_degrees.state import D100DState
from firelane.events.schemas import CombatantSetup, Command, EncounterSetup, Event, StartEncounter, Terrain, Wall

# of_type, one and rejection are shared with the other percentile system; its tests import them from here.
from ..percentile_helpers import act_with, of_type, one, rejection  # noqa: F401

GUN = {"name": "lasgun", "kind": "ranged", "damage": "1d10+3", "multiplier": 2, "range_m": 30, "rof": 3, "automatic": True}
PISTOL = {"name": "revolver", "kind": "ranged", "damage": "1d10+3", "multiplier": 2, "range_m": 20, "rof": 1, "automatic": False}
SWORD = {"name": "sword", "kind": "melee", "damage": "1d10+2", "multiplier": 2, "range_m": 1}

TERRAIN = Terrain(width=20, height=12, square_size=1.0, unit="m")


def sheet(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "weapon_skill": 45,
        "ballistic_skill": 40,
        "agility": 34,
        "willpower": 30,
        "wounds": 12,
        "armour": 0,
        "weapons": [GUN, SWORD],
    }
    base.update(overrides)
    return base


def fighter(cid: str, side: str, position: tuple[int, int], **overrides: Any) -> CombatantSetup:
    return CombatantSetup(id=cid, name=cid.upper(), side=side, position=position, sheet=sheet(**overrides))


def make_setup(combatants: Sequence[CombatantSetup], walls: Sequence[tuple[int, int]] = (), **settings: Any) -> EncounterSetup:
    terrain = Terrain(
        width=TERRAIN.width, height=TERRAIN.height, square_size=1.0, unit="m", walls=[Wall(x, y) for x, y in walls]
    )
    return EncounterSetup(system="d100-degrees", combatants=list(combatants), terrain=terrain, settings=settings)


def start(setup: EncounterSetup, initiative: Sequence[int] | None = None) -> D100DState:
    """Start the encounter; ``initiative`` are the d10 faces in combatant-ID order
    (default: the first ID in the setup's order rolls 10, the others 1)."""
    state = SYSTEM.initial_state()
    if initiative is None:
        ids = sorted(c.id for c in setup.combatants)
        first = setup.combatants[0].id
        initiative = [10 if cid == first else 1 for cid in ids]
    command = StartEncounter(command_id="start", actor=SEQUENCER, setup=setup, seed_commitment="test")
    for event in SYSTEM.decide(state, command, FixedDice(initiative)):
        SYSTEM.evolve(state, event)
    return state  # type: ignore[return-value]


def act(state: D100DState, command: Command, faces: Sequence[int] = ()) -> list[Event]:
    """Decide (or reject) with fixed faces, apply the events, and check every face was used."""
    return act_with(SYSTEM, state, command, faces)
