"""RonD6 breaking objects (R6-25): object Toughness and structural damage.

An object is attacked like any target: an Attack Test against the object's
Defense, then the Damage Total against its Damage Resistance Total. If the
Damage Total equals or exceeds it, the object suffers one level of structural
damage per Result Point of the attack.

House defaults (configurable per encounter via ``EncounterSetup.settings``):

* ``object_toughness_mode`` = ``"static"``: an object's Damage Resistance Total
  is its Toughness die code x 4 (+ pips), the same static rule R6-20 uses for
  characters' Base Toughness; ``"roll"`` rolls the Toughness dice instead
  (without a Wild Die).
* ``object_defense`` = ``"very easy"`` (5): the Defense of an object that does
  not name one (an unattended door or wall does not dodge).
* ``object_min_damage_levels`` = 1: an object that is damaged (Damage Total >=
  DR Total) takes at least one level even if the attack had no Result Points.
* ``object_structure_levels`` = 3: an object with that many levels of
  structural damage is destroyed; a destroyed wall Space is removed from the
  map (it no longer blocks movement or sight). The text leaves the effect of
  each level to the GM; this is the engine's default.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from firelane.engine.systems.rond6.pools import DieCode, as_code

RULE_OBJECTS = "R6-25"

OBJECT_TOUGHNESS: dict[str, DieCode] = {
    "flimsy": DieCode(1),  # thatch, thin wooden door
    "tough": DieCode(2),  # hardwood door, most weapons
    "sturdy": DieCode(3),  # brick wall, reinforced interior door
    "very sturdy": DieCode(4),  # castle gate, heavy metal door
    "reinforced": DieCode(6),  # fortifications, vault door, jail cell
}
TOUGHNESS_MULTIPLIER = 4


class ObjectProfile(msgspec.Struct, frozen=True, kw_only=True):
    """An object on the map that can be attacked: what it is made of and where."""

    id: str
    name: str
    construction: str = "tough"
    square: tuple[int, int] | None = None
    defense: int | None = None  # None: the house default object_defense
    toughness: str | None = None  # a die code overriding the construction's (GM modification)
    structure_levels: int | None = None  # None: the house default object_structure_levels


def object_toughness(construction: str, override: str | None = None) -> DieCode:
    """R6-25: the Toughness of a construction (Flimsy 1D ... Reinforced 6D), or the GM's override."""
    if override:
        return as_code(override)
    key = " ".join(construction.strip().lower().replace("_", " ").replace("-", " ").split())
    if key not in OBJECT_TOUGHNESS:
        raise ValueError(f"unknown construction {construction!r}; known: {', '.join(OBJECT_TOUGHNESS)}")
    return OBJECT_TOUGHNESS[key]


def static_toughness(code: DieCode) -> int:
    """Static Damage Resistance Total of a Toughness code: dice x 4 + pips (house default)."""
    return code.dice * TOUGHNESS_MULTIPLIER + code.pips


def structural_damage(damage_total: int, resistance_total: int, result_points: int, minimum: int = 1) -> int:
    """R6-25: levels of structural damage: none below the DR Total, else one per Result Point
    (at least ``minimum``, the house default 1)."""
    if damage_total < resistance_total:
        return 0
    return max(minimum, result_points)


def object_settings(settings: Mapping[str, Any]) -> dict[str, Any]:
    return {key: settings.get(key, value) for key, value in OBJECT_DEFAULTS.items()}


OBJECT_DEFAULTS: dict[str, Any] = {
    "object_toughness_mode": "static",
    "object_defense": "very easy",
    "object_min_damage_levels": 1,
    "object_structure_levels": 3,
}
