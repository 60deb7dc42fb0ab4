"""What the two percentile systems' forms share (engine/forms.py): their
catalogues and bestiary from the sample data (sheets naming weapons and
armour by id, which `PercentileSystem.resolve_setup` spells out)."""

from __future__ import annotations

from typing import Any


def _words(key: str) -> str:
    text = key.replace("_", " ")
    return text[:1].upper() + text[1:]


def catalogues(sample: Any) -> dict[str, list[dict[str, Any]]]:
    data = sample.load_data()
    weapons = []
    for key, weapon in data["weapons"].items():
        parts = [weapon.get("kind", ""), f"damage {weapon['damage']}" if weapon.get("damage") else "",
                 f"range {weapon['range_m']} m" if weapon.get("range_m") else ""]
        weapons.append({"id": key, "label": _words(key), "summary": ", ".join(p for p in parts if p)})
    armour = [{"id": key, "label": _words(key) if key != "none" else "None",
               "summary": f"{points} {'armour points' if sample.armour_field == 'armour' else 'damage reduction'}"}
              for key, points in data["armour"].items()]
    return {"weapons": weapons, "armour": armour}


def bestiary(sample: Any) -> list[dict[str, Any]]:
    data = sample.load_data()
    return [{"id": key, "name": _words(key), "sheet": dict(sheet)} for key, sheet in data["templates"].items()]
