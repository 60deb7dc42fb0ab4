"""Character forms: what a person writes on a sheet, described for a form.

Each rule system describes its sheet in its own folder
(``engine/systems/<name>/forms.py``): ``SHEET_FIELDS``, a `SheetField` per
field a person writes (not the fight's own state), with its kind and range;
``catalogues()``, the weapons and armour a sheet may name by id (which the
system's start spells out: ``resolve_setup``); and ``bestiary()``, a few
ready-made NPCs built from those catalogues. `character_form` puts these
together with the system's labels and settings for the workshop page
(docs/workshop-api.md). Pure: reading the packaged sample data is all.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from firelane.engine.core import BASE_SETTING_RANGES, BaseRuleSystem

KINDS = ("number", "text", "yes_no", "choice", "catalogue", "catalogue_list", "die_code", "die_codes")


@dataclass(frozen=True)
class SheetField:
    """One field a person writes on a sheet. ``path`` is its place in the sheet
    (``attributes.Agility`` for a part of an object); ``catalogue`` names the
    catalogue a ``catalogue`` or ``catalogue_list`` field picks from."""

    path: str
    kind: str
    low: float | None = None
    high: float | None = None
    whole: bool = True
    default: Any = None
    choices: tuple[str, ...] = ()
    catalogue: str = ""
    note: str = ""
    label: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"sheet field {self.path!r}: kind {self.kind!r} is not one of {', '.join(KINDS)}")


def _forms_module(system: BaseRuleSystem) -> Any:
    package = type(system).__module__.rpartition(".")[0]
    try:
        return importlib.import_module(f"{package}.forms")
    except ModuleNotFoundError:
        return None


def sheet_fields(system: BaseRuleSystem) -> tuple[SheetField, ...]:
    module = _forms_module(system)
    return tuple(module.SHEET_FIELDS) if module is not None else ()


def bestiary(system: BaseRuleSystem) -> list[dict[str, Any]]:
    """The system's ready-made NPCs: ``{"id", "name", "sheet"}`` (sheets naming catalogue entries by id)."""
    module = _forms_module(system)
    return list(module.bestiary()) if module is not None else []


def _words(key: str) -> str:
    text = key.replace("_", " ")
    return text[:1].upper() + text[1:]


def _field(system: BaseRuleSystem, field: SheetField) -> dict[str, Any]:
    label = field.label or system.labels.fields.get(field.path) or _words(field.path.rpartition(".")[2])
    described: dict[str, Any] = {"path": field.path, "label": label, "kind": field.kind}
    if field.kind == "number":
        described.update(low=field.low, high=field.high, whole=field.whole)
    if field.choices:
        described["choices"] = [{"value": c, "label": _words(c) if c else "none"} for c in field.choices]
    if field.catalogue:
        described["catalogue"] = field.catalogue
    if field.default is not None:
        described["default"] = field.default
    if field.note:
        described["note"] = field.note
    return described


_SETTING_UNITS = (("_ms", "milliseconds"), ("_ft", "feet"), ("_metres", "metres"), ("rounds", "rounds"))
# The settings every system has, in words (the systems' own are named in words from their keys).
_BASE_SETTING_LABELS = {"max_rounds": "Most rounds", "reaction_deadline_ms": "Reaction deadline",
                        "turn_timer_ms": "Turn timer", "on_turn_timeout": "When a turn's time runs out",
                        "square_metres": "Square size"}
_BASE_SETTING_NOTES = {"turn_timer_ms": "0: no timer", "reaction_deadline_ms": "how long each reaction prompt waits"}
_WORDS = {"dc": "DC", "hp": "HP", "ai": "AI", "max": "most", "min": "minimum"}


def _setting_label(name: str) -> str:
    if name in _BASE_SETTING_LABELS:
        return _BASE_SETTING_LABELS[name]
    key = name.removeprefix("bb_")
    for suffix, _unit in _SETTING_UNITS[:3]:
        key = key.removesuffix(suffix)
    return _words(" ".join(_WORDS.get(part, part) for part in key.split("_")))


def settings_form(system: BaseRuleSystem) -> list[dict[str, Any]]:
    """The system's settings a form sets: every plain number with its range and
    default (what check_setup holds them to), and what happens when a turn's
    time runs out. Tables (a setting that is an object) are left to the setup JSON."""
    ranges = {**BASE_SETTING_RANGES, **system.setting_ranges}
    defaults = {**system.base_settings, **system.default_settings}
    module = _forms_module(system)
    own: dict[str, tuple[str, str]] = dict(getattr(module, "SETTING_LABELS", {})) if module is not None else {}
    described = []
    for name, spec in sorted(ranges.items()):
        if "*" in name or "." in name:
            continue  # a table's entries
        # The system's own words (SETTING_LABELS in its forms.py), else the common settings'.
        label, unit = own.get(name) or (_setting_label(name), next((u for suffix, u in _SETTING_UNITS if name.endswith(suffix)), ""))
        entry: dict[str, Any] = {"path": name, "label": label, "kind": "number",
                                 "low": spec.low, "high": spec.high, "whole": spec.whole, "nullable": spec.nullable}
        if unit:
            entry["unit"] = unit
        if name in _BASE_SETTING_NOTES:
            entry["note"] = _BASE_SETTING_NOTES[name]
        if name in defaults and isinstance(defaults[name], (int, float, type(None))):
            entry["default"] = defaults[name]
        described.append(entry)
    described.append({"path": "on_turn_timeout", "label": _setting_label("on_turn_timeout"), "kind": "choice",
                      "choices": [{"value": "end_turn", "label": "End the turn"},
                                  {"value": "ai", "label": "Let the AI play the rest of it"},
                                  {"value": "gm", "label": "Ask the GM"}],
                      "default": defaults.get("on_turn_timeout", "end_turn")})
    return described


def character_form(system: BaseRuleSystem) -> dict[str, Any]:
    """The workshop's character form of a system (docs/workshop-api.md)."""
    module = _forms_module(system)
    catalogues = module.catalogues() if module is not None else {}
    return {
        "system": system.name,
        "title": system.title,
        "fields": [_field(system, f) for f in sheet_fields(system)],
        "catalogues": catalogues,
        "archetypes": [{**a, "source": "system"} for a in bestiary(system)],
        "settings": settings_form(system),
    }


__all__ = ["KINDS", "SheetField", "bestiary", "character_form", "settings_form", "sheet_fields"]
