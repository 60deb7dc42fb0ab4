"""Bolt & Blade's character form (engine/forms.py): the sheet a person writes
(docs/systems/bolt-and-blade.md), its catalogues and its bestiary (sheets name
weapons and armour by catalogue name, which its start spells out)."""

from __future__ import annotations

import copy
from typing import Any

from firelane.engine.forms import SheetField
from firelane.engine.systems.bolt_and_blade.data import load_data

ATTRIBUTES = ("strength", "agility", "toughness", "intellect", "willpower", "presence")

SHEET_FIELDS = (
    SheetField("level", "number", 1, 20, default=1, label="Level"),
    *(SheetField(f"attributes.{name}", "number", 1, 30, default=10, label=name.capitalize()) for name in ATTRIBUTES),
    SheetField("vitality", "number", 1, 500, default=10, label="Vitality"),
    SheetField("armour", "catalogue", catalogue="armour", default="none", label="Armour"),
    SheetField("weapons", "catalogue_list", catalogue="weapons", default=[], label="Weapons"),
    SheetField("ready_weapon", "text", default="", label="Weapon in hand", note="one of the weapons' names"),
    SheetField("movement_ft", "number", 0, 200, default=30, label="Movement", note="feet a turn"),
)


def _words(key: str) -> str:
    return key[:1].upper() + key[1:]


def catalogues() -> dict[str, list[dict[str, Any]]]:
    data = load_data()
    weapons = [{"id": key, "label": _words(key),
                "summary": ", ".join(p for p in (w.get("category", ""), f"damage {w['damage']}" if w.get("damage") else "")
                                     if p)} for key, w in data["weapons"].items()]
    armour = [{"id": key, "label": _words(key), "summary": f"defense +{a.get('defense', 0)}"}
              for key, a in data["armour"].items()]
    return {"weapons": weapons, "armour": armour}


def bestiary() -> list[dict[str, Any]]:
    return [{"id": key.replace(" ", "-"), "name": _words(key), "sheet": copy.deepcopy(sheet)}
            for key, sheet in load_data()["templates"].items()]


# Each setting of the system in words, with its unit (engine/forms.py `settings_form`).
SETTING_LABELS: dict[str, tuple[str, str]] = {
    "aim_bonus": ("Bonus for aiming", "points on the attack roll"),
    "bb_scatter_step_ft": ("How far a missed throw drifts each step", "feet"),
    "bb_throw_dc": ("Difficulty of a throw at a square", "difficulty class"),
    "defense_base": ("Base defense", "points"),
    "difficult_move_multiplier": ("Movement cost on difficult ground", "times the normal cost"),
    "enter_cover_cost_ft": ("Movement spent to enter cover", "feet"),
    "exposed_attack_bonus": ("Bonus against a target in the open", "points on the attack roll"),
    "mark_attack_bonus": ("Bonus against a marked target", "points on the attack roll"),
    "movement_ft": ("Movement a turn", "feet"),
    "overwatch_radius_ft": ("Radius of an Overwatch area", "feet"),
    "perils_dc": ("Difficulty of resisting perils", "difficulty class"),
    "pinned_move_multiplier": ("Movement cost while pinned", "times the normal cost"),
    "search_dc": ("Difficulty of a search", "difficulty class"),
    "suppress_ammo": ("Ammunition a suppressing burst uses", "shots"),
    "suppress_area_ft": ("Size of a suppressed area", "feet"),
}
