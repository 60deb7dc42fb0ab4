"""Reading a percentile system's packaged sample data (``sample_data.json`` in its own folder).

This reads static files shipped inside the package; it is the only I/O in the
percentile systems and it never runs during `decide` or `evolve`.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

import msgspec

from firelane.events.schemas import CombatantSetup, EncounterSetup, Terrain

SAMPLE_FILE = "sample_data.json"  # in each system's own folder


@lru_cache(maxsize=None)
def _read(package: str) -> str:
    return resources.files(package).joinpath(SAMPLE_FILE).read_text(encoding="utf-8")


def load_json(package: str) -> dict[str, Any]:
    """A fresh copy of a system package's sample data (callers may modify it)."""
    return json.loads(_read(package))


class SampleData:
    """One percentile system's packaged sample data: weapons, armour,
    combatant templates and the demo encounter, with sheets spelled out in full
    (so an encounter's log never depends on the data file)."""

    def __init__(self, system: str, package: str, *, armour_field: str) -> None:
        self.system = system
        self.package = package  # the system's folder, which holds its sample_data.json
        self.armour_field = armour_field  # the sheet field armour becomes ("armour" points, or "dr")

    def load_data(self) -> dict[str, Any]:
        """The sample data: ``weapons``, ``armour``, ``templates`` and ``demo`` (a fresh copy)."""
        return load_json(self.package)

    def weapon_profile(self, name: str, data: dict[str, Any] | None = None) -> dict[str, Any]:
        data = data or self.load_data()
        try:
            return {"name": name, **data["weapons"][name]}
        except KeyError:
            raise KeyError(f"unknown {self.system} weapon {name!r}; known: {', '.join(sorted(data['weapons']))}") from None

    def resolve_sheet(self, sheet: dict[str, Any], data: dict[str, Any] | None = None) -> dict[str, Any]:
        """A sheet with the catalogue's entries it names spelled out: ``"armour":
        "flak_vest"`` becomes the armour's points (in ``armour_field``) and its
        name, each weapon named by a string its profile. A sheet already spelled
        out comes back as it is. ValueError names the field and the known names."""
        armour = sheet.get("armour")
        weapons = sheet.get("weapons")
        if not isinstance(armour, str) and not (isinstance(weapons, list) and any(isinstance(w, str) for w in weapons)):
            return sheet
        data = data or self.load_data()
        resolved = dict(sheet)
        if isinstance(armour, str):
            if armour not in data["armour"]:
                raise ValueError(f"sheet field 'armour' names no armour of {self.system}: {armour[:64]!r} "
                                 f"(known: {', '.join(sorted(data['armour']))})")
            del resolved["armour"]
            resolved[self.armour_field] = int(data["armour"][armour])
            resolved["armour_name"] = armour
        if isinstance(weapons, list):
            spelled = []
            for index, weapon in enumerate(weapons):
                if isinstance(weapon, str):
                    if weapon not in data["weapons"]:
                        raise ValueError(f"sheet field 'weapons[{index}]' names no weapon of {self.system}: "
                                         f"{weapon[:64]!r} (known: {', '.join(sorted(data['weapons']))})")
                    weapon = self.weapon_profile(weapon, data)
                spelled.append(weapon)
            resolved["weapons"] = spelled
        return resolved

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
