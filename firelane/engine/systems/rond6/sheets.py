"""Checking a RonD6 sheet in full when an encounter starts.

Every field of `state.RonD6Combatant` a sheet may give is checked: known
names, the right types, die codes that parse, values in the ranges the rules
allow, weapon IDs that exist. Each refusal is one line naming the combatant
and the field, e.g. "combatant 'a': sheet field 'wounds' must be between 0
and 4 (got 7)". Pure: no dice, no state.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, NoReturn

import msgspec

from firelane.engine.core import Rejected
from firelane.engine.grid import Grid
from firelane.engine.systems.rond6 import rules
from firelane.engine.systems.rond6.pools import DieCode, as_code
from firelane.engine.systems.rond6.state import UNARMED, RonD6Combatant, Weapon
from firelane.events.schemas import CombatantSetup, EncounterSetup

# The fields a person writes on a sheet (a refusal lists these; the rest is the fight's own state).
SHEET_FIELD_NAMES = ("ammo", "armor", "armor_name", "attributes", "character_points", "dr_bonus", "fate_points",
                     "fatigue", "group", "initiative_bonus", "move", "passive_defense_bonus", "readied", "reloads",
                     "skills", "surprised", "tactic", "talents", "weapons", "wounds")
# Fields of a combatant that come from its setup, not from its sheet.
SETUP_FIELDS = frozenset({"id", "name", "side", "position", "policy"})
WEAPON_KINDS = ("ranged", "thrown", "melee", "unarmed")
FIRE_MODES = ("BF", "FA", "SA")  # burst fire, full auto, semi-automatic (R6-26, R6-31, R6-36)
TALENTS = ("Quickness", "Ambidextrous", "Initiative Priority")  # the ones the engine models
MAX_QUICKNESS = 3  # R6-06: "Each Rank of Quickness grants +1 additional Action, up to 3"
MAX_WOUNDS_ALIVE = 4  # R6-21: 5 Wounds kill
TACTICS = ("", "hold")

_MISSING = re.compile(r"^Object missing required field `(?P<field>[^`]+)`(?: - at `\$(?P<at>[^`]*)`)?$")
_AT = re.compile(r"^(?P<problem>.*) - at `\$(?P<at>[^`]*)`$")


class SheetError:
    """Raising the one-line refusal for one combatant's sheet."""

    def __init__(self, setup: CombatantSetup) -> None:
        self.setup = setup

    def fail(self, field: str, problem: str) -> NoReturn:
        raise Rejected(f"combatant {self.setup.id!r}: sheet field {field!r} {problem}")

    def unknown(self, prefix: str, given: Iterable[str], known: Iterable[str], listed: Iterable[str] | None = None) -> None:
        allowed = sorted(known)
        shown = sorted(listed) if listed is not None else allowed  # a sheet's own fields, not the fight's state
        for name in sorted(set(given) - set(allowed)):
            raise Rejected(f"combatant {self.setup.id!r}: unknown sheet field {prefix + name!r} (known: {', '.join(shown)})")

    def between(self, field: str, value: int, low: int, high: int) -> None:
        if not low <= value <= high:
            self.fail(field, f"must be between {low} and {high} (got {value})")

    def at_least(self, field: str, value: int, low: int) -> None:
        if value < low:
            self.fail(field, f"must be at least {low} (got {value})")

    def code(self, field: str, text: str, *, at_least: int = 0) -> DieCode:
        try:
            code = as_code(text)
        except ValueError as exc:
            self.fail(field, f"is invalid: {exc}")
        if code.dice < at_least:
            self.fail(field, f"must be at least {at_least}D (got {code})")
        return code

    def type_error(self, message: str) -> NoReturn:
        missing = _MISSING.match(message)
        if missing:
            at = (missing.group("at") or "").lstrip(".")
            self.fail(f"{at}.{missing.group('field')}".lstrip("."), "is missing")
        located = _AT.match(message)
        if located:
            problem = located.group("problem")
            self.fail(located.group("at").lstrip("."), f"has the wrong type: {problem[0].lower()}{problem[1:]}")
        raise Rejected(f"combatant {self.setup.id!r} has an invalid sheet: {message}")


def convert_sheet(setup: CombatantSetup) -> RonD6Combatant:
    """The typed combatant of a sheet: unknown fields (a typo would silently
    fall back to a default) and values of the wrong type are refused."""
    error = SheetError(setup)
    error.unknown("", setup.sheet, set(RonD6Combatant.__struct_fields__) - SETUP_FIELDS, SHEET_FIELD_NAMES)
    weapons = setup.sheet.get("weapons")
    if isinstance(weapons, list):
        for index, weapon in enumerate(weapons):
            if isinstance(weapon, dict):
                error.unknown(f"weapons[{index}].", weapon, Weapon.__struct_fields__)
    body = {**setup.sheet, "id": setup.id, "name": setup.name, "side": setup.side, "position": setup.position, "policy": setup.policy}
    try:
        return msgspec.convert(body, RonD6Combatant)
    except msgspec.ValidationError as exc:
        error.type_error(str(exc))


def check_sheet(
    setup: CombatantSetup,
    combatant: RonD6Combatant,
    settings: Mapping[str, Any],
    area_sizes: Mapping[str, Iterable[str]],
    damage_code: Any,
) -> None:
    """Every value of a converted sheet in range. ``area_sizes`` are the known
    burst and cone sizes (R6-40/41) for area weapon modes; ``damage_code``
    reads a weapon's damage code for its wielder (raises ValueError)."""
    error = SheetError(setup)
    for name, text in combatant.attributes.items():
        if name not in rules.ATTRIBUTES:
            error.fail(f"attributes.{name}", f"is not an attribute (attributes: {', '.join(rules.ATTRIBUTES)})")
        # R6-06: the Multi-Action Limit is the Agility dice; every attribute has at least 1D.
        error.code(f"attributes.{name}", text, at_least=1)
    for name, text in combatant.skills.items():
        try:
            rules.skill_attribute(name)
        except ValueError as exc:
            error.fail(f"skills.{name}", f"is not a skill: {exc}")
        error.code(f"skills.{name}", text)
    for name, rank in combatant.talents.items():
        if name not in TALENTS:
            error.fail(f"talents.{name}", f"is not a talent the engine knows (talents: {', '.join(TALENTS)})")
        error.between(f"talents.{name}", rank, 0, MAX_QUICKNESS if name == "Quickness" else 1)
    error.at_least("move", combatant.move, 1)
    error.code("armor", combatant.armor)
    error.code("initiative_bonus", combatant.initiative_bonus)
    error.at_least("character_points", combatant.character_points, 0)
    error.at_least("fate_points", combatant.fate_points, 0)
    ids = [weapon.id for weapon in combatant.weapons]
    for index, weapon in enumerate(combatant.weapons):
        check_weapon(error, f"weapons[{index}]", combatant, weapon, ids[:index], area_sizes, damage_code)
    if len(combatant.readied) > 2:
        error.fail("readied", f"holds at most two weapons, one per hand (got {len(combatant.readied)})")
    for index, weapon_id in enumerate(combatant.readied):
        if weapon_id not in ids:
            error.fail(f"readied[{index}]", f"names no weapon of this combatant: {weapon_id!r} (weapons: {', '.join(ids) or 'none'})")
        if weapon_id in combatant.readied[:index]:
            error.fail(f"readied[{index}]", f"repeats {weapon_id!r}")
    capacity = {weapon.id: weapon.capacity for weapon in combatant.weapons}
    for field, counts in (("ammo", combatant.ammo), ("reloads", combatant.reloads)):
        for weapon_id, count in counts.items():
            if capacity.get(weapon_id, 0) <= 0:
                fed = [w for w, c in capacity.items() if c > 0]
                error.fail(f"{field}.{weapon_id}", f"names no weapon of this combatant that takes ammunition (those: {', '.join(fed) or 'none'})")
            if field == "ammo":
                error.between(f"ammo.{weapon_id}", count, 0, capacity[weapon_id])
            else:
                error.at_least(f"reloads.{weapon_id}", count, 0)
    error.between("wounds", combatant.wounds, 0, MAX_WOUNDS_ALIVE)
    error.between("fatigue", combatant.fatigue, 0, int(settings.get("fatigue_limit", 3)))
    for field in ("declared_actions", "actions_used", "actions_used_last_round", "actions_lost", "free_actions_this_turn",
                  "stunned_round", "mortal_minutes", "action_limit_doubled_round", "defense_bonus"):
        error.at_least(field, getattr(combatant, field), 0)
    if combatant.tactic not in TACTICS:
        error.fail("tactic", f"must be one of {', '.join(repr(t) for t in TACTICS)} (got {combatant.tactic!r})")


def check_weapon(
    error: SheetError,
    field: str,
    combatant: RonD6Combatant,
    weapon: Weapon,
    earlier_ids: list[str],
    area_sizes: Mapping[str, Iterable[str]],
    damage_code: Any,
) -> None:
    if not weapon.id.strip():
        error.fail(f"{field}.id", "must not be empty")
    if weapon.id == UNARMED.id:
        error.fail(f"{field}.id", f"must not be {UNARMED.id!r}: that names fists")
    if weapon.id in earlier_ids:
        error.fail(f"{field}.id", f"repeats the weapon ID {weapon.id!r}: commands pick weapons by ID")
    if weapon.kind not in WEAPON_KINDS:
        error.fail(f"{field}.kind", f"must be one of {', '.join(repr(k) for k in WEAPON_KINDS)} (got {weapon.kind!r})")
    try:
        rules.skill_attribute(weapon.skill)
    except ValueError as exc:
        error.fail(f"{field}.skill", f"is not a skill: {exc}")
    try:
        damage_code(combatant, weapon)
    except ValueError as exc:
        error.fail(f"{field}.damage", f"is invalid: {exc}")
    if weapon.kind in ("ranged", "thrown"):
        ranges = list(weapon.ranges)
        if len(ranges) != 3 or not 1 <= ranges[0] <= ranges[1] <= ranges[2]:
            error.fail(f"{field}.ranges", f"must be Short, Medium and Long in spaces, each at least 1 and none below the one before (got {ranges})")
    error.at_least(f"{field}.reach", weapon.reach, 1)
    error.at_least(f"{field}.capacity", weapon.capacity, 0)
    error.at_least(f"{field}.burst_rounds", weapon.burst_rounds, 1)
    error.at_least(f"{field}.auto_rounds", weapon.auto_rounds, 1)
    for index, mode in enumerate(weapon.modes):
        shape, _, size = mode.lower().partition(":")
        if mode in FIRE_MODES or (shape in area_sizes and size in area_sizes[shape]):
            continue
        areas = "; ".join(f"{s}:{'|'.join(sizes)}" for s, sizes in area_sizes.items())
        error.fail(f"{field}.modes[{index}]", f"must be one of {', '.join(FIRE_MODES)} or an area ({areas}) (got {mode!r})")


def check_positions(setup: EncounterSetup) -> None:
    """Every combatant placed on the map stands inside it, not in a wall, and
    alone in its Space."""
    grid = Grid(setup.terrain)
    taken: dict[tuple[int, int], str] = {}
    for combatant in setup.combatants:
        if combatant.position is None:
            continue
        square = (int(combatant.position[0]), int(combatant.position[1]))
        if not grid.in_bounds(square):
            raise Rejected(
                f"combatant {combatant.id!r}: position {square} is off the map ({setup.terrain.width} x {setup.terrain.height} Spaces)"
            )
        if not grid.passable(square):
            raise Rejected(f"combatant {combatant.id!r}: position {square} is a wall")
        if square in taken:
            raise Rejected(f"combatant {combatant.id!r}: position {square} is already taken by {taken[square]!r}")
        taken[square] = combatant.id
