"""RonD6 sample data (firelane/engine/systems/rond6/sample_data.json): weapons, armour, combatant
templates and the demo encounter.

Templates name their weapons and armour by catalogue key; `sheet_from_template`
expands them into the sheet `RonD6Combatant` reads (full weapon profiles, the
armour's die code).
"""

from __future__ import annotations

import copy
import json
from functools import cache
from importlib import resources
from typing import Any

import msgspec

from firelane.events.schemas import (
    CombatantSetup,
    EncounterSetup,
    Terrain,
)


@cache
def _catalogue() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("sample_data.json").read_text(encoding="utf-8")
    return json.loads(text)  # type: ignore[no-any-return]


def load_data() -> dict[str, Any]:
    """The catalogue ``{"weapons", "armour", "templates", "demo"}`` (a copy; change it freely)."""
    return copy.deepcopy(_catalogue())


def weapon_profile(weapon_id: str) -> dict[str, Any]:
    weapons = _catalogue()["weapons"]
    if weapon_id not in weapons:
        raise KeyError(f"unknown RonD6 weapon {weapon_id!r}; known: {', '.join(sorted(weapons))}")
    return {"id": weapon_id, **copy.deepcopy(weapons[weapon_id])}


def sheet_from_template(template: str, **overrides: Any) -> dict[str, Any]:
    """A combatant sheet from a named template with weapons and armour expanded."""
    catalogue = _catalogue()
    templates = catalogue["templates"]
    if template not in templates:
        raise KeyError(f"unknown RonD6 template {template!r}; known: {', '.join(sorted(templates))}")
    sheet = copy.deepcopy(templates[template])
    sheet.update(copy.deepcopy(overrides))
    sheet["weapons"] = [w if isinstance(w, dict) else weapon_profile(w) for w in sheet.get("weapons", [])]
    armour = sheet.pop("armour", None)
    if armour is not None:
        if armour not in catalogue["armour"]:
            raise KeyError(f"unknown RonD6 armour {armour!r}; known: {', '.join(sorted(catalogue['armour']))}")
        sheet["armor"] = catalogue["armour"][armour]
        sheet["armor_name"] = armour
    return sheet


def terrain_from_data(data: dict[str, Any]) -> Terrain:
    """The map of the sample data (lists as JSON has them; msgspec checks every field)."""
    return msgspec.convert({"square_size": 2.0, "unit": "m", **data}, Terrain)


def demo_setup(**settings: Any) -> EncounterSetup:
    """The demo: a dockside warehouse, four agents against Mags's gang of four
    (the two gangers share one initiative roll as a group of similar NPCs)."""
    demo = _catalogue()["demo"]
    combatants = [
        CombatantSetup(
            id=member["id"],
            name=member["name"],
            side=side,
            position=(int(member["position"][0]), int(member["position"][1])),
            sheet=sheet_from_template(member["template"], **member.get("sheet", {})),
            policy="ai",
        )
        for side, members in demo["sides"].items()
        for member in members
    ]
    return EncounterSetup(
        system="rond6",
        combatants=combatants,
        terrain=terrain_from_data(demo["terrain"]),
        settings={**demo.get("settings", {}), **settings},
        name=demo.get("name", "RonD6 demo"),
    )
