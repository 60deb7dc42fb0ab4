"""Reading the packaged sample data (``firelane/data/*.json``).

This reads static files shipped inside the package; it is the only I/O in the
percentile systems and it never runs during `decide` or `evolve`.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import msgspec

from firelane.events.schemas import CombatantSetup, EncounterSetup, Terrain

DATA_DIR = Path(__file__).resolve().parents[3] / "data"


@lru_cache(maxsize=None)
def _read(filename: str) -> str:
    return (DATA_DIR / filename).read_text(encoding="utf-8")


def load_json(filename: str) -> dict[str, Any]:
    """A fresh copy of a packaged JSON file (callers may modify it)."""
    return json.loads(_read(filename))


class SampleData:
    """One percentile system's packaged sample data: weapons, armour,
    combatant templates and the demo encounter, with sheets spelled out in full
    (so an encounter's log never depends on the data file)."""

    def __init__(self, system: str, filename: str, *, armour_field: str) -> None:
        self.system = system
        self.filename = filename
        self.armour_field = armour_field  # the sheet field armour becomes ("armour" points, or "dr")

    def load_data(self) -> dict[str, Any]:
        """The sample data: ``weapons``, ``armour``, ``templates`` and ``demo`` (a fresh copy)."""
        return load_json(self.filename)

    def weapon_profile(self, name: str, data: dict[str, Any] | None = None) -> dict[str, Any]:
        data = data or self.load_data()
        try:
            return {"name": name, **data["weapons"][name]}
        except KeyError:
            raise KeyError(f"unknown {self.system} weapon {name!r}; known: {', '.join(sorted(data['weapons']))}") from None

    def sheet(self, template: str, data: dict[str, Any] | None = None, **overrides: Any) -> dict[str, Any]:
        """A combatant sheet from a template, with weapons and armour spelled out."""
        data = data or self.load_data()
        try:
            base = dict(data["templates"][template])
        except KeyError:
            raise KeyError(f"unknown {self.system} template {template!r}; known: {', '.join(sorted(data['templates']))}") from None
        armour_name = base.pop("armour", "none")
        base[self.armour_field] = int(data["armour"][armour_name])
        base["armour_name"] = armour_name
        base["weapons"] = [self.weapon_profile(w, data) for w in base.get("weapons", [])]
        base.update(overrides)
        return base

    def demo_setup(self) -> EncounterSetup:
        data = self.load_data()
        demo = data["demo"]
        combatants = [
            CombatantSetup(
                id=member["id"],
                name=member["name"],
                side=squad["side"],
                position=tuple(member["position"]),
                sheet=self.sheet(member["template"], data),
            )
            for squad in demo["squads"]
            for member in squad["members"]
        ]
        return EncounterSetup(
            system=self.system,
            name=demo["name"],
            combatants=combatants,
            terrain=msgspec.convert(demo["terrain"], Terrain),
            settings=dict(demo.get("settings", {})),
        )
