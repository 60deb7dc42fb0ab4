"""Bolt & Blade typed state: weapons, combatants and the encounter.

A combatant's sheet (``CombatantSetup.sheet``) names its weapons and armour by
their catalogue names (``firelane/engine/systems/bolt_and_blade/sample_data.json``) or gives whole
records; `build_sheet` resolves them so the state always holds full profiles
and replay never depends on the catalogue file changing.
"""

from __future__ import annotations

from typing import Any

import msgspec

from firelane.engine.state import Combatant, EncounterState
from firelane.engine.systems.bolt_and_blade.rules import ATTRIBUTES, attribute_modifier, parse_dice
from firelane.engine.systems.bolt_and_blade.zones import PersistentZone

Square = tuple[int, int]


class WeaponTemplate(msgspec.Struct, frozen=True, kw_only=True):
    shape: str  # "burst" or "cone"
    size_ft: int


class WeaponSave(msgspec.Struct, frozen=True, kw_only=True):
    attribute: str
    dc: int
    half: bool = True


class Weapon(msgspec.Struct, frozen=True, kw_only=True):
    """A weapon profile. ``range`` is [normal, maximum] in feet (melee: reach);
    ``magazine`` is rounds, charges or grenades per load (0 = no ammunition)."""

    name: str
    kind: str  # "ranged", "melee", "thrown"
    category: str = ""  # proficiency group: "pistol", "basic", "heavy", "melee", "grenade"
    range: tuple[int, int] = (5, 5)
    damage: str = ""
    traits: list[str] = []
    magazine: int = 0
    template: WeaponTemplate | None = None
    save: WeaponSave | None = None
    persistent_rounds: int = 0
    blocks_sight: bool = False
    attribute: str = ""  # overrides Agility (ranged/thrown) or Strength (melee)

    @property
    def is_ranged(self) -> bool:
        return self.kind == "ranged"

    @property
    def is_melee(self) -> bool:
        return self.kind == "melee"

    def has(self, trait: str) -> bool:
        return trait in self.traits

    @property
    def attack_attribute(self) -> str:
        if self.attribute:
            return self.attribute
        return "strength" if self.is_melee else "agility"


class DefenseSource(msgspec.Struct, frozen=True, kw_only=True):
    """A named Defense term from the sheet (shield, wargear, feature...) (BB-CORE-08)."""

    source: str
    value: int
    kind: str = "wargear"


class BoltAndBladeCombatant(Combatant):
    # --- the sheet
    level: int = 1
    attributes: dict[str, int] = {}
    save_proficiencies: list[str] = []
    save_bonuses: dict[str, int] = {}
    proficiencies: list[str] = []
    weapon_proficiencies: list[str] = []
    max_vitality: int = 10
    vitality: int = 10
    armour: str = "none"
    armour_defense: int = 0
    defense_sources: list[DefenseSource] = []
    weapons: list[Weapon] = []
    ready_weapon: str = ""
    ammo: dict[str, int] = {}
    movement_ft: int = 30
    features: list[str] = []
    # --- per-turn economy (reset when the combatant's turn starts)
    movement_allowance_ft: float = 0.0
    movement_used_ft: float = 0.0
    action_used: bool = False
    bonus_used: bool = False
    attacked_this_turn: bool = False
    movement_halted: bool = False
    # --- the Reaction (BB-CMB-01, -03): ``reaction_used`` (the engine's flag)
    # is regained at the start of the combatant's own turn, but a Reaction is
    # usable once per round: one spent earlier in the same round keeps it used
    # until the next round starts (``reaction_back_next_round``).
    reaction_round: int = 0  # the round the last Reaction was spent in (0: never)
    reaction_window: int = 0  # the reaction window it was spent in (0: none)
    reaction_back_next_round: bool = False
    # --- lasting state
    taking_cover: bool = False
    overwatch_area: list[Square] = []
    jammed: list[str] = []
    marks: dict[str, str] = {}  # mark name -> bearer, for marks this combatant placed

    def modifier(self, attribute: str) -> int:
        return attribute_modifier(self.attributes.get(attribute, 10))

    def weapon(self, name: str) -> Weapon | None:
        for weapon in self.weapons:
            if weapon.name == name:
                return weapon
        return None

    @property
    def ready(self) -> Weapon | None:
        return self.weapon(self.ready_weapon)

    @property
    def moved_this_turn(self) -> bool:
        return self.movement_used_ft > 0


class HeldShot(msgspec.Struct, frozen=True, kw_only=True):
    """A Reactive Fire claimed for a square ahead on the mover's path (BB-CMB-10):
    it resolves when the mover reaches the square (`BBShotHeld`)."""

    reactor: str
    mover: str
    square: tuple[int, int]
    window: int  # the fire-lane window it was claimed in


class BoltAndBladeState(EncounterState):
    combatants: dict[str, BoltAndBladeCombatant] = {}
    zones: list[PersistentZone] = []
    held_shots: list[HeldShot] = []  # in the order they resolve at a square
    # The GM's rulings on calls the rules leave to the GM, by call id
    # ("dive_for_cover:<window>" -> "possible" / "impossible", BB-CMB-17).
    gm_calls_settled: dict[str, str] = {}


def build_sheet(sheet: dict[str, Any], catalogue: dict[str, Any]) -> dict[str, Any]:
    """Resolve catalogue names in a sheet into full records and fill derived fields.

    Weapons may be names or records; armour may be a name (its Defense comes from
    the catalogue) or a number. Vitality starts at its maximum and ammunition at
    a full magazine unless the sheet says otherwise.
    """
    resolved = dict(sheet)
    weapons = []
    for entry in sheet.get("weapons", []):
        if isinstance(entry, str):
            record = catalogue.get("weapons", {}).get(entry)
            if record is None:
                raise ValueError(f"unknown weapon {entry!r}")
            weapons.append(record)
        else:
            weapons.append(entry)
    resolved["weapons"] = weapons
    armour = sheet.get("armour", "none")
    if isinstance(armour, str) and "armour_defense" not in sheet:
        record = catalogue.get("armour", {}).get(armour)
        if record is None:
            raise ValueError(f"unknown armour {armour!r}")
        resolved["armour"] = armour
        resolved.setdefault("armour_defense", record["defense"])
    if "vitality" in sheet and "max_vitality" not in sheet:
        resolved["max_vitality"] = sheet["vitality"]
    ammo = dict(sheet.get("ammo", {}))
    for record in weapons:
        if record.get("magazine", 0) and record["name"] not in ammo:
            ammo[record["name"]] = record["magazine"]
    resolved["ammo"] = ammo
    if not resolved.get("ready_weapon") and weapons:
        resolved["ready_weapon"] = weapons[0]["name"]
    attributes = dict(sheet.get("attributes", {}))
    unknown = set(attributes) - set(ATTRIBUTES)
    if unknown:
        raise ValueError(f"unknown attributes {sorted(unknown)}; known: {', '.join(ATTRIBUTES)}")
    return resolved


# ---------------------------------------------------------------- validating a sheet

# What a sheet may set (after `build_sheet` has filled in what it derives); the
# rest of `BoltAndBladeCombatant` is play state, which no sheet sets.
SHEET_FIELDS: tuple[str, ...] = (
    "level", "attributes", "save_proficiencies", "save_bonuses", "proficiencies", "weapon_proficiencies",
    "max_vitality", "vitality", "armour", "armour_defense", "defense_sources", "weapons", "ready_weapon",
    "ammo", "movement_ft", "features",
)
WEAPON_FIELDS: frozenset[str] = frozenset(f.name for f in msgspec.structs.fields(Weapon))
WEAPON_KINDS: tuple[str, ...] = ("ranged", "melee", "thrown", "power")
TEMPLATE_SHAPES: tuple[str, ...] = ("burst", "cone", "line")
# BB-CORE-02: "most mortal characters operate in the 8-18 range", and some
# "may exceed normal limits"; the d20 scale runs from 1 to 30 (house bound).
ATTRIBUTE_RANGE = (1, 30)
LEVEL_RANGE = (1, 20)  # BB-CORE-03: the proficiency table's levels
BONUS_LIMIT = 30  # no single sheet bonus (save, Defense source, armour) beyond +/-30


class SheetProblem(ValueError):
    """One thing wrong with a sheet: the field (a path, ``weapons[1].range``) and what."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"sheet field {field!r} {problem}")
        self.field = field
        self.problem = problem


def unknown_sheet_fields(sheet: dict[str, Any]) -> None:
    """Refuse a sheet field that is not part of a sheet, and unknown weapon-record fields."""
    for key in sheet:
        if key not in SHEET_FIELDS:
            raise SheetProblem(key, f"is not a sheet field; known: {', '.join(SHEET_FIELDS)}")
    for index, record in enumerate(sheet.get("weapons", [])):
        if isinstance(record, dict):
            for key in record:
                if key not in WEAPON_FIELDS:
                    raise SheetProblem(f"weapons[{index}].{key}", f"is not a weapon field; known: {', '.join(sorted(WEAPON_FIELDS))}")


def _at_least(field: str, value: int | float, least: int | float) -> None:
    if value < least:
        raise SheetProblem(field, f"must be at least {least:g} (got {value:g})")


def _within(field: str, value: int, low: int, high: int) -> None:
    if not low <= value <= high:
        raise SheetProblem(field, f"must be from {low} to {high} (got {value})")


def _known_attribute(field: str, name: str) -> None:
    if name not in ATTRIBUTES:
        raise SheetProblem(field, f"names {name!r}, not an attribute; known: {', '.join(ATTRIBUTES)}")


def check_weapon(field: str, weapon: Weapon) -> None:
    """A weapon record's values (BB-CORE-07, -11; BB-CMB-24..28 for area data)."""
    if not weapon.name.strip():
        raise SheetProblem(f"{field}.name", "must not be empty")
    if weapon.kind not in WEAPON_KINDS:
        raise SheetProblem(f"{field}.kind", f"must be one of {', '.join(WEAPON_KINDS)} (got {weapon.kind!r})")
    normal, maximum = weapon.range
    _at_least(f"{field}.range", normal, 1)
    if maximum < normal:
        raise SheetProblem(f"{field}.range", f"must be [normal, maximum] with maximum >= normal (got {[normal, maximum]})")
    try:
        parse_dice(weapon.damage)
    except ValueError as exc:
        raise SheetProblem(f"{field}.damage", str(exc)) from None
    _at_least(f"{field}.magazine", weapon.magazine, 0)
    _at_least(f"{field}.persistent_rounds", weapon.persistent_rounds, 0)
    if weapon.attribute:
        _known_attribute(f"{field}.attribute", weapon.attribute)
    if weapon.template is not None:
        if weapon.template.shape not in TEMPLATE_SHAPES:
            raise SheetProblem(f"{field}.template.shape", f"must be one of {', '.join(TEMPLATE_SHAPES)} (got {weapon.template.shape!r})")
        _at_least(f"{field}.template.size_ft", weapon.template.size_ft, 1)
    if weapon.save is not None:
        _known_attribute(f"{field}.save.attribute", weapon.save.attribute)
        _at_least(f"{field}.save.dc", weapon.save.dc, 1)


def check_sheet(combatant: BoltAndBladeCombatant) -> None:
    """Every value of a typed sheet within what the rules allow; raises `SheetProblem`
    naming the first field that is not (the types were checked by msgspec)."""
    _within("level", combatant.level, *LEVEL_RANGE)
    for name, score in combatant.attributes.items():
        _known_attribute("attributes", name)
        _within(f"attributes.{name}", score, *ATTRIBUTE_RANGE)
    for name in combatant.save_proficiencies:
        _known_attribute("save_proficiencies", name)
    for name, bonus in combatant.save_bonuses.items():
        _known_attribute("save_bonuses", name)
        _within(f"save_bonuses.{name}", bonus, -BONUS_LIMIT, BONUS_LIMIT)
    _at_least("vitality", combatant.vitality, 1)  # BB-CORE-09: at 0 a character is Down, not fighting
    _at_least("max_vitality", combatant.max_vitality, 1)
    if combatant.vitality > combatant.max_vitality:
        raise SheetProblem("vitality", f"must not exceed max_vitality {combatant.max_vitality} (got {combatant.vitality})")
    _within("armour_defense", combatant.armour_defense, 0, BONUS_LIMIT)
    for index, source in enumerate(combatant.defense_sources):
        if not source.source.strip():
            raise SheetProblem(f"defense_sources[{index}].source", "must not be empty")
        _within(f"defense_sources[{index}].value", source.value, -BONUS_LIMIT, BONUS_LIMIT)
    names: list[str] = []
    for index, weapon in enumerate(combatant.weapons):
        check_weapon(f"weapons[{index}]", weapon)
        if weapon.name in names:
            raise SheetProblem(f"weapons[{index}].name", f"{weapon.name!r} is carried twice")
        names.append(weapon.name)
    if combatant.weapons and combatant.weapon(combatant.ready_weapon) is None:
        raise SheetProblem("ready_weapon", f"names {combatant.ready_weapon!r}, which is not carried; carried: {', '.join(names)}")
    if not combatant.weapons and combatant.ready_weapon:
        raise SheetProblem("ready_weapon", f"names {combatant.ready_weapon!r}, but no weapon is carried")
    for name, rounds in combatant.ammo.items():
        weapon = combatant.weapon(name)
        if weapon is None:
            raise SheetProblem(f"ammo.{name}", f"is for a weapon not carried; carried: {', '.join(names) or 'none'}")
        if weapon.magazine == 0:
            raise SheetProblem(f"ammo.{name}", f"is for {name}, which takes no ammunition")
        _within(f"ammo.{name}", rounds, 0, weapon.magazine)
    _at_least("movement_ft", combatant.movement_ft, 0)
