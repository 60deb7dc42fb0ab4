"""Checks both percentile systems make as an encounter starts: the grid scale
in settings, and each combatant's square and weapon damage codes."""

from __future__ import annotations

from typing import Any, Protocol

from firelane.engine.core import Rejected
from firelane.engine.state import Combatant
from firelane.engine.systems.percentile.damage import parse_damage
from firelane.events.schemas import CombatantSetup, EncounterSetup


class NamedWeapon(Protocol):
    name: str
    damage: str


def settle_square_metres(settings: dict[str, Any], setup: EncounterSetup) -> None:
    """A terrain measured in metres sets ``square_metres`` from its square size
    unless the encounter's settings name one; the scale must be positive."""
    if "square_metres" not in setup.settings and setup.terrain.unit == "m":
        settings["square_metres"] = float(setup.terrain.square_size)
    if float(settings["square_metres"]) <= 0:
        raise Rejected("square_metres must be positive")


def require_square(combatant: Combatant, setup: CombatantSetup) -> None:
    """Every combatant stands on the map; its position is stored as whole squares."""
    if combatant.position is None:
        raise Rejected(f"combatant {setup.id!r} needs a position on the map")
    combatant.position = (int(combatant.position[0]), int(combatant.position[1]))


def require_damage_code(setup: CombatantSetup, weapon: NamedWeapon) -> None:
    """A weapon's damage must parse now, so no attack fails on it mid-encounter."""
    try:
        parse_damage(weapon.damage)
    except ValueError as exc:
        raise Rejected(f"combatant {setup.id!r}: weapon {weapon.name!r}: {exc}") from None
