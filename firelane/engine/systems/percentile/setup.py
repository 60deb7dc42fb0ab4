"""Checks both percentile systems make as an encounter starts: the grid scale
in settings, and each combatant's sheet in full (`SheetCheck`): known fields
of the right types, values in range, damage codes that parse, weapon names
that exist, each refusal one line naming the combatant and the field."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, NoReturn

import msgspec

from firelane.engine.core import Rejected
from firelane.engine.grid import Grid
from firelane.engine.state import Combatant
from firelane.engine.systems.percentile.damage import parse_damage
from firelane.events.schemas import CombatantSetup, EncounterSetup


def settle_square_metres(settings: dict[str, Any], setup: EncounterSetup) -> None:
    """A terrain measured in metres sets ``square_metres`` from its square size
    unless the encounter's settings name one; the scale must be positive."""
    if "square_metres" not in setup.settings and setup.terrain.unit == "m":
        settings["square_metres"] = float(setup.terrain.square_size)
    if float(settings["square_metres"]) <= 0:
        raise Rejected("square_metres must be positive")


def require_free_squares(setup: EncounterSetup) -> None:
    """Every combatant placed on the map stands inside it, not in a wall, and
    alone on its square (movement and area fire assume one per square)."""
    grid = Grid(setup.terrain)
    taken: dict[tuple[int, int], str] = {}
    for combatant in setup.combatants:
        if combatant.position is None:
            continue
        square = (int(combatant.position[0]), int(combatant.position[1]))
        if not grid.in_bounds(square):
            raise Rejected(
                f"combatant {combatant.id!r}: position {square} is off the map ({setup.terrain.width} x {setup.terrain.height} squares)"
            )
        if not grid.passable(square):
            raise Rejected(f"combatant {combatant.id!r}: position {square} is a wall")
        if square in taken:
            raise Rejected(f"combatant {combatant.id!r}: position {square} is already taken by {taken[square]!r}")
        taken[square] = combatant.id


def require_square(combatant: Combatant, setup: CombatantSetup) -> None:
    """Every combatant stands on the map; its position is stored as whole squares."""
    if combatant.position is None:
        raise Rejected(f"combatant {setup.id!r} needs a position on the map")
    combatant.position = (int(combatant.position[0]), int(combatant.position[1]))


# A percentile characteristic or skill: a d100 test succeeds at or under it (0: never).
PERCENT = (0, 100)
# Fields of a combatant that come from its setup, not from its sheet.
SETUP_FIELDS = frozenset({"id", "name", "side", "position", "policy"})
_MISSING = re.compile(r"^Object missing required field `(?P<field>[^`]+)`(?: - at `\$(?P<at>[^`]*)`)?$")
_AT = re.compile(r"^(?P<problem>.*) - at `\$(?P<at>[^`]*)`$")


class SheetCheck:
    """Checking one combatant's sheet; every failure raises `Rejected` with one
    line: "combatant 'a1': sheet field 'wounds' must be at least 1 (got -5)"."""

    def __init__(self, setup: CombatantSetup, sheet_fields: Iterable[str] = ()) -> None:
        self.setup = setup
        self.sheet_fields = tuple(sheet_fields)  # what a refusal lists: the fields a person writes

    def fail(self, field: str, problem: str) -> NoReturn:
        raise Rejected(f"combatant {self.setup.id!r}: sheet field {field!r} {problem}")

    def convert(self, combatant_type: type[Any], nested: Mapping[str, type[Any]]) -> Any:
        """The typed combatant: unknown fields are refused (a typo would silently
        fall back to a default), and so are values of the wrong type. ``nested``
        names the list fields whose items are Structs (``{"weapons": Weapon}``)."""
        self.known_fields("", self.setup.sheet, set(combatant_type.__struct_fields__) - SETUP_FIELDS)
        for field, item_type in nested.items():
            items = self.setup.sheet.get(field)
            if isinstance(items, list):
                for index, item in enumerate(items):
                    if isinstance(item, dict):
                        self.known_fields(f"{field}[{index}].", item, set(item_type.__struct_fields__))
        body = {**self.setup.sheet, "id": self.setup.id, "name": self.setup.name, "side": self.setup.side,
                "position": self.setup.position, "policy": self.setup.policy}
        try:
            return msgspec.convert(body, combatant_type)
        except msgspec.ValidationError as error:
            self.type_error(str(error))

    def known_fields(self, prefix: str, given: Mapping[str, Any], known: set[str]) -> None:
        # A sheet may carry the fight's own state (a campaign character's), but a refusal
        # lists only what a person writes on a sheet.
        listed = sorted(f for f in self.sheet_fields if f in known) if not prefix and self.sheet_fields else sorted(known)
        for field in sorted(set(given) - known):
            raise Rejected(
                f"combatant {self.setup.id!r}: unknown sheet field {prefix + field!r} (known: {', '.join(listed)})"
            )

    def type_error(self, message: str) -> NoReturn:
        missing = _MISSING.match(message)
        if missing:
            at = missing.group("at") or ""
            self.fail(f"{at.lstrip('.')}.{missing.group('field')}".lstrip("."), "is missing")
        located = _AT.match(message)
        if located:
            problem = located.group("problem")
            self.fail(located.group("at").lstrip("."), f"has the wrong type: {problem[0].lower()}{problem[1:]}")
        raise Rejected(f"combatant {self.setup.id!r} has an invalid sheet: {message}")

    def between(self, field: str, value: float, low: float, high: float) -> None:
        if not low <= value <= high:
            self.fail(field, f"must be between {low:g} and {high:g} (got {value:g})")

    def at_least(self, field: str, value: float, low: float) -> None:
        if value < low:
            self.fail(field, f"must be at least {low:g} (got {value:g})")

    def above(self, field: str, value: float, low: float) -> None:
        if value <= low:
            self.fail(field, f"must be more than {low:g} (got {value:g})")

    def one_of(self, field: str, value: Any, allowed: Iterable[Any]) -> None:
        options = list(allowed)
        if value not in options:
            self.fail(field, f"must be one of {', '.join(repr(o) for o in options)} (got {value!r})")

    def unique_names(self, field: str, names: list[str]) -> None:
        for index, name in enumerate(names):
            if not name.strip():
                self.fail(f"{field}[{index}].name", "must not be empty")
            if name in names[:index]:
                self.fail(f"{field}[{index}].name", f"repeats the weapon name {name!r}: commands pick weapons by name")

    def names_weapons(self, field: str, names: Iterable[str], known: Iterable[str]) -> None:
        have = list(known)
        for index, name in enumerate(names):
            if name not in have:
                self.fail(f"{field}[{index}]", f"names no weapon of this combatant: {name!r} (weapons: {', '.join(have) or 'none'})")

    def damage_code(self, field: str, code: str) -> None:
        try:
            parse_damage(code)
        except ValueError as exc:
            self.fail(field, f"is invalid: {exc}")
