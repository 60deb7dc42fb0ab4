"""Builders for RonD6 tests: sheets, setups, and driving commands with fixed dice."""

from __future__ import annotations

import itertools
from typing import Any

from firelane.engine.core import SEQUENCER
from firelane.engine.dice import FixedDice
from firelane.engine.systems.rond6 import SYSTEM
from firelane.engine.systems.rond6.state import RonD6State
from firelane.events.schemas import (
    CombatantSetup,
    Command,
    CommandRejected,
    EncounterSetup,
    Event,
    StartEncounter,
    Terrain,
)

PISTOL = {"id": "pistol", "name": "pistol", "kind": "ranged", "skill": "firearms", "damage": "5D",
          "ranges": [5, 15, 30], "capacity": 12, "modes": ["SA"]}
RIFLE = {"id": "rifle", "name": "assault rifle", "kind": "ranged", "skill": "firearms", "damage": "6D",
         "ranges": [10, 40, 80], "capacity": 30, "modes": ["BF", "FA"], "burst_rounds": 3, "auto_rounds": 10}
KNIFE = {"id": "knife", "name": "knife", "kind": "melee", "skill": "melee_weapons", "damage": "STR+1D"}
SPEAR = {"id": "spear", "name": "spear", "kind": "melee", "skill": "melee_weapons", "damage": "STR+2D", "reach": 2,
         "set_vs_charge": True}
STUNNER = {"id": "stunner", "name": "stun baton", "kind": "melee", "skill": "melee_weapons", "damage": "5D", "stun": True}

_ids = itertools.count()


def sheet(**overrides: Any) -> dict[str, Any]:
    """An average human: all attributes 3D (Presence, Will Power, Knowledge 2D), a pistol in hand and a knife."""
    base: dict[str, Any] = {
        "attributes": {"Agility": "3D", "Strength": "3D", "Perception": "3D", "Stamina": "3D",
                       "Presence": "2D", "Will Power": "2D", "Knowledge": "2D"},
        "skills": {"dodge": "4D", "firearms": "4D", "melee_weapons": "4D", "fighting": "3D+1", "resolve": "3D"},
        "weapons": [PISTOL, KNIFE],
        "readied": ["pistol"],
    }
    for key, value in overrides.items():
        if key in ("attributes", "skills") and isinstance(value, dict):
            base[key] = {**base[key], **value}
        else:
            base[key] = value
    return base


def combatant(cid: str, side: str, position: tuple[int, int], **overrides: Any) -> CombatantSetup:
    return CombatantSetup(id=cid, name=cid.title(), side=side, position=position, sheet=sheet(**overrides))


def setup(*combatants: CombatantSetup, terrain: Terrain | None = None, **settings: Any) -> EncounterSetup:
    return EncounterSetup(system="rond6", combatants=list(combatants), terrain=terrain or Terrain(), settings=settings)


def start(encounter: EncounterSetup, faces: list[int]) -> RonD6State:
    """Start the encounter; ``faces`` are the initiative dice (one 3D Perception roll per combatant, by ID)."""
    state = SYSTEM.initial_state()
    dice = FixedDice(faces)
    events = SYSTEM.decide(state, StartEncounter(command_id="start", actor=SEQUENCER, setup=encounter, seed_commitment="c"), dice)
    for event in events:
        SYSTEM.evolve(state, event)
    assert dice.remaining == 0, f"{dice.remaining} fixed initiative faces were not rolled"
    return state  # type: ignore[return-value]


def act(state: RonD6State, command: Command, faces: list[int] | tuple[int, ...] = (), *, exact: bool = True) -> list[Event]:
    """Decide (rejections become CommandRejected) and apply; every fixed face must be used when ``exact``."""
    dice = FixedDice(faces)
    events = SYSTEM.decide_or_reject(state, command, dice)
    for event in events:
        SYSTEM.evolve(state, event)
    if exact:
        assert dice.remaining == 0, f"{dice.remaining} fixed faces were not rolled: {events}"
    return events


def cmd(kind: type[Command], actor: str, **fields: Any) -> Command:
    return kind(command_id=f"{actor}-{next(_ids)}", actor=actor, **fields)


def rejection(events: list[Event]) -> str:
    assert len(events) == 1 and isinstance(events[0], CommandRejected), f"expected a rejection, got {events}"
    return events[0].reason


def of_type(events: list[Event], kind: type) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def one(events: list[Event], kind: type) -> Any:
    found = of_type(events, kind)
    assert len(found) == 1, f"expected one {kind.__name__}, got {found}"
    return found[0]
