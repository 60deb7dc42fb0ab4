"""The toy's typed state: a combatant has a speed (added to initiative) and 2 hit points."""

from __future__ import annotations

from firelane.engine.state import Combatant, EncounterState


class ToyCombatant(Combatant):
    speed: int = 0
    hp: int = 2


class ToyState(EncounterState):
    combatants: dict[str, ToyCombatant] = {}
