"""Sample weapons, armour, combatant templates and the demo encounter of d100-zones."""

from __future__ import annotations

from typing import Any

import msgspec

from firelane.engine.systems.percentile.data import load_json
from firelane.events.schemas import CombatantSetup, EncounterSetup, Terrain

DATA_FILE = "d100_zones.json"


def load_data() -> dict[str, Any]:
    """The sample data: ``weapons``, ``armour``, ``templates`` and ``demo``."""
    return load_json(DATA_FILE)


def weapon_profile(name: str, data: dict[str, Any] | None = None) -> dict[str, Any]:
    data = data or load_data()
    try:
        return {"name": name, **data["weapons"][name]}
    except KeyError:
        raise KeyError(f"unknown d100-zones weapon {name!r}; known: {', '.join(sorted(data['weapons']))}") from None


def sheet(template: str, data: dict[str, Any] | None = None, **overrides: Any) -> dict[str, Any]:
    """A combatant sheet from a template, with weapons and armour (DR) spelled out."""
    data = data or load_data()
    try:
        base = dict(data["templates"][template])
    except KeyError:
        raise KeyError(f"unknown d100-zones template {template!r}; known: {', '.join(sorted(data['templates']))}") from None
    armour_name = base.pop("armour", "none")
    base["dr"] = int(data["armour"][armour_name])
    base["armour_name"] = armour_name
    base["weapons"] = [weapon_profile(w, data) for w in base.get("weapons", [])]
    base.update(overrides)
    return base


def demo_setup() -> EncounterSetup:
    """The demo encounter: two squads of four around a relay station, 2 m squares."""
    data = load_data()
    demo = data["demo"]
    combatants = [
        CombatantSetup(
            id=member["id"],
            name=member["name"],
            side=squad["side"],
            position=tuple(member["position"]),
            sheet=sheet(member["template"], data),
        )
        for squad in demo["squads"]
        for member in squad["members"]
    ]
    return EncounterSetup(
        system="d100-zones",
        name=demo["name"],
        combatants=combatants,
        terrain=msgspec.convert(demo["terrain"], Terrain),
        settings=dict(demo.get("settings", {})),
    )
