"""Bolt & Blade typed state: weapons, combatants and the encounter.

A combatant's sheet (``CombatantSetup.sheet``) names its weapons and armour by
their catalogue names (``firelane/data/bolt_and_blade.json``) or gives whole
records; `build_sheet` resolves them so the state always holds full profiles
and replay never depends on the catalogue file changing.
"""

from __future__ import annotations

from typing import Any

import msgspec

from firelane.engine.state import Combatant, EncounterState
from firelane.engine.systems.bolt_and_blade.rules import ATTRIBUTES, attribute_modifier
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
