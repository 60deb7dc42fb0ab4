"""Bolt & Blade sample data: the catalogue in ``firelane/engine/systems/bolt_and_blade/sample_data.json``
(weapons, armour, combatant templates) and the demo encounter built from it.

The file is package data read once; the engine only sees plain dicts and the
setup structs built here, so the rules stay free of I/O.
"""

from __future__ import annotations

import copy
import json
from functools import lru_cache
from importlib import resources
from typing import Any

import msgspec

from firelane.events.schemas import CombatantSetup, EncounterSetup, Terrain


@lru_cache(maxsize=1)
def _catalogue() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("sample_data.json").read_text(encoding="utf-8")
    return json.loads(text)  # type: ignore[no-any-return]


def load_data() -> dict[str, Any]:
    """The catalogue: ``{"weapons": {name: record}, "armour": {...}, "templates": {...}, "demo": {...}}``.

    Returns the cached copy; callers must not modify it (use `copy.deepcopy`).
    """
    return _catalogue()


def sheet_from_template(template: str, **overrides: Any) -> dict[str, Any]:
    """A combatant sheet from a named template, with any fields overridden."""
    templates = load_data()["templates"]
    if template not in templates:
        raise KeyError(f"unknown Bolt & Blade template {template!r}; known: {', '.join(sorted(templates))}")
    sheet = copy.deepcopy(templates[template])
    sheet.update(overrides)
    return sheet  # type: ignore[no-any-return]


def terrain_from_data(data: dict[str, Any]) -> Terrain:
    """The map of the sample data (lists as JSON has them; msgspec checks every field)."""
    return msgspec.convert({"square_size": 5.0, "unit": "ft", **data}, Terrain)


def demo_setup(**settings: Any) -> EncounterSetup:
    """The demo encounter: Ash Street, an open street between ruined hab-blocks
    with barricades on both ends, an Imperial Guard squad against a cult squad."""
    demo = load_data()["demo"]
    combatants = []
    for side, members in demo["sides"].items():
        for member in members:
            combatants.append(
                CombatantSetup(
                    id=member["id"],
                    name=member["name"],
                    side=side,
                    position=(int(member["position"][0]), int(member["position"][1])),
                    sheet=sheet_from_template(member["template"], **member.get("sheet", {})),
                    policy="ai",
                )
            )
    return EncounterSetup(
        system="bolt-and-blade",
        combatants=combatants,
        terrain=terrain_from_data(demo["terrain"]),
        settings={**demo.get("settings", {}), **settings},
        name=demo.get("name", "Bolt & Blade demo"),
    )
