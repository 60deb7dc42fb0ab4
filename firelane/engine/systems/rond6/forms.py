"""RonD6's character form (engine/forms.py): the sheet a person writes
(docs/systems/rond6.md), its catalogues and its bestiary. A sheet names
weapons and armour by catalogue id (``"armour": "tactical_vest"``); the start
spells them out (`resolve_sheet`)."""

from __future__ import annotations

import copy
from typing import Any

from firelane.engine.forms import SheetField
from firelane.engine.systems.rond6 import rules
from firelane.engine.systems.rond6.data import load_data

SHEET_FIELDS = (
    *(SheetField(f"attributes.{name}", "die_code", default="3D", label=name) for name in rules.ATTRIBUTES),
    SheetField("skills", "die_codes", default={}, label="Skills",
               note="skill name -> die code, e.g. firearms: 5D; a specialisation in brackets: persuasion (intimidation)"),
    SheetField("talents.Quickness", "number", 0, 3, default=0, label="Quickness", note="ranks: +1 action each"),
    SheetField("talents.Ambidextrous", "number", 0, 1, default=0, label="Ambidextrous"),
    SheetField("talents.Initiative Priority", "number", 0, 1, default=0, label="Initiative Priority"),
    SheetField("move", "number", 1, 100, default=5, label="Move", note="spaces a round"),
    SheetField("armour", "catalogue", catalogue="armour", default="none", label="Armour"),
    SheetField("weapons", "catalogue_list", catalogue="weapons", default=[], label="Weapons"),
    SheetField("character_points", "number", 0, 1000, default=0, label="Character Points"),
    SheetField("fate_points", "number", 0, 100, default=0, label="Fate Points"),
    SheetField("wounds", "number", 0, 4, default=0, label="Wounds"),
    SheetField("initiative_bonus", "die_code", default="0D", label="Initiative bonus"),
    SheetField("group", "text", default="", label="Initiative group", note="NPCs of one side in one group roll once"),
    SheetField("tactic", "choice", choices=("", "hold"), default="", label="AI tactic",
               note="none: close in and fight; hold: stay put and Wait"),
)


def _words(key: str) -> str:
    text = key.replace("_", " ")
    return text[:1].upper() + text[1:]


def resolve_sheet(sheet: dict[str, Any]) -> dict[str, Any]:
    """A sheet with the catalogue entries it names spelled out (``armour`` ->
    ``armor`` and ``armor_name``; a weapon id -> its profile); a sheet already
    spelled out comes back as it is. ValueError names the field."""
    armour = sheet.get("armour")
    weapons = sheet.get("weapons")
    if armour is None and not (isinstance(weapons, list) and any(isinstance(w, str) for w in weapons)):
        return sheet
    data = load_data()
    resolved = dict(sheet)
    if armour is not None:
        if not isinstance(armour, str) or armour not in data["armour"]:
            raise ValueError(f"sheet field 'armour' names no armour of RonD6: {str(armour)[:64]!r} "
                             f"(known: {', '.join(sorted(data['armour']))}; or give the die code as 'armor')")
        del resolved["armour"]
        resolved["armor"] = data["armour"][armour]
        resolved["armor_name"] = armour
    if isinstance(weapons, list):
        spelled = []
        for index, weapon in enumerate(weapons):
            if isinstance(weapon, str):
                if weapon not in data["weapons"]:
                    raise ValueError(f"sheet field 'weapons[{index}]' names no weapon of RonD6: {weapon[:64]!r} "
                                     f"(known: {', '.join(sorted(data['weapons']))})")
                weapon = {"id": weapon, **copy.deepcopy(data["weapons"][weapon])}
            spelled.append(weapon)
        resolved["weapons"] = spelled
    return resolved


def catalogues() -> dict[str, list[dict[str, Any]]]:
    data = load_data()
    weapons = [{"id": key, "label": _words(w.get("name") or key),
                "summary": ", ".join(p for p in (w.get("kind", ""), f"damage {w['damage']}" if w.get("damage") else "")
                                     if p)} for key, w in data["weapons"].items()]
    armour = [{"id": key, "label": _words(key) if key != "none" else "None", "summary": f"armour {code}"}
              for key, code in data["armour"].items()]
    return {"weapons": weapons, "armour": armour}


def bestiary() -> list[dict[str, Any]]:
    return [{"id": key, "name": _words(key), "sheet": copy.deepcopy(sheet)} for key, sheet in load_data()["templates"].items()]


# Each setting of the system in words, with its unit (engine/forms.py `settings_form`).
SETTING_LABELS: dict[str, tuple[str, str]] = {
    "armor_points_per_die": ("Armour points for each armour die", "points"),
    "fatigue_limit": ("Fatigue levels before falling unconscious", "levels"),
    "heads_down_radius": ("Radius of a Heads Down area", "spaces"),
    "healing_reach": ("Reach of healing", "spaces"),
    "interaction_range": ("Reach of spoken interactions", "spaces"),
    "max_free_actions": ("Free actions a turn", "actions"),
    "move_normal": ("Move", "spaces a turn"),
    "move_strong": ("Move of a strong character", "spaces a turn"),
    "object_min_damage_levels": ("Least damage a hit does to an object", "levels"),
    "object_structure_levels": ("Structure of an object", "levels"),
    "reaction_declares_actions": ("Actions declared at a first reaction", "actions"),
    "surprise_rounds": ("Turns a surprised combatant loses", "rounds"),
}
