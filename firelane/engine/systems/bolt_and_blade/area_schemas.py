"""Bolt & Blade area-effect commands and events (BB-CMB-24..28).

Imports nothing from the project except the generic schemas (layering rule).
Tags are prefixed ``BB`` so they stay globally unique.
"""

from __future__ import annotations

from typing import Any, ClassVar

import msgspec

from firelane.events.schemas import Command, Event, Roll


# --------------------------------------------------------------------------- commands


class BBThrow(Command):
    """Throw a grenade (frag, smoke, krak...) at a square."""

    target: tuple[int, int]
    weapon: str
    confirm_friendly_fire: bool = False


class BBAreaAttack(Command):
    """Use an area weapon or power (flamer cone, psychic burst) at a point or direction."""

    weapon: str
    target: tuple[int, int] | None = None
    direction: tuple[int, int] | None = None
    confirm_friendly_fire: bool = False


class BBPreviewArea(Command):
    """Ask who an area effect would catch, without spending anything."""

    weapon: str
    target: tuple[int, int] | None = None
    direction: tuple[int, int] | None = None


# --------------------------------------------------------------------------- events


class CaughtCombatant(msgspec.Struct, frozen=True, kw_only=True):
    combatant: str
    square: tuple[int, int]
    relation: str  # "enemy", "ally", "neutral", "self"


class BBAreaPreviewed(Event):
    """Who an area effect would catch (BB-CMB-24). Changes nothing."""

    combatant: str
    weapon: str
    shape: str
    origin: tuple[int, int]
    squares: list[tuple[int, int]]
    caught: list[CaughtCombatant]
    allies_caught: list[str] = []
    neutrals_caught: list[str] = []
    blocked: list[str] = []
    rule: str = "BB-CMB-24"


class BBThrown(Event):
    """A thrown explosive was released at ``aimed``; the throw roll decides scatter."""

    combatant: str
    weapon: str
    aimed: tuple[int, int]
    roll: Roll | None = None
    on_target: bool = True
    allies_caught: list[str] = []
    neutrals_caught: list[str] = []
    rule: str = "BB-CMB-25"


class BBScattered(Event):
    """A poor throw drifted from ``aimed`` to ``landed`` (BB-CMB-25).

    ``roll`` is the drift: its distance dice (kept) and the direction d8 (not
    counted), its total the number of drift steps (dice plus the expression's
    bonus, a modifier); ``distance_ft`` is those steps in feet (steps x
    ``bb_scatter_step_ft``), ``distance_squares`` how far it actually went
    (a wall or the map edge may stop it short). Schema 2: schema 1 recorded
    the distance in feet as the roll's total, which did not add up from its
    parts (upcast by the Bolt & Blade system)."""

    schema_version: ClassVar[int] = 2

    combatant: str
    weapon: str
    aimed: tuple[int, int]
    landed: tuple[int, int]
    direction: tuple[int, int]
    distance_squares: int
    roll: Roll
    distance_ft: float = 0.0
    rule: str = "BB-CMB-25"


class BBAreaResolved(Event):
    """An area effect went off: its template, who it caught and who was shielded."""

    combatant: str
    weapon: str
    shape: str
    origin: tuple[int, int]
    squares: list[tuple[int, int]]
    caught: list[CaughtCombatant]
    blocked: list[str] = []
    damage: Roll | None = None
    allies_caught: list[str] = []
    neutrals_caught: list[str] = []
    rule: str = "BB-CMB-24"
    details: dict[str, Any] = {}


class BBZoneCreated(Event):
    """A persistent zone (smoke, fire, gas) now covers ``squares`` (BB-CMB-26)."""

    zone: str
    kind: str
    squares: list[tuple[int, int]]
    rounds_left: int
    creator: str
    blocks_sight: bool = False
    damage: str = ""
    save_attribute: str = ""
    save_dc: int = 0
    save_half: bool = True
    source: str = ""
    rule: str = "BB-CMB-26"


class BBZoneTicked(Event):
    zone: str
    rounds_left: int
    rule: str = "BB-CMB-26"


class BBZoneExpired(Event):
    zone: str
    reason: str = "duration over"
    rule: str = "BB-CMB-26"


class BBZoneEntered(Event):
    """A combatant is affected by a zone (entered it, or started its turn in it).

    ``turn`` names the turn it happened in ("r<round>:<active>"): a zone affects
    a combatant at most once per turn."""

    zone: str
    combatant: str
    trigger: str  # "enter" or "turn_start"
    turn: str = ""
    rule: str = "BB-CMB-26"


BB_AREA_COMMANDS: tuple[type[Command], ...] = (BBThrow, BBAreaAttack, BBPreviewArea)
BB_AREA_EVENTS: tuple[type[Event], ...] = (
    BBAreaPreviewed,
    BBThrown,
    BBScattered,
    BBAreaResolved,
    BBZoneCreated,
    BBZoneTicked,
    BBZoneExpired,
    BBZoneEntered,
)
