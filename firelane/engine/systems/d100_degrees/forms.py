"""d100-degrees' character form (engine/forms.py): the sheet a person writes
(docs/systems/d100-degrees.md), its catalogues and its bestiary."""

from __future__ import annotations

from typing import Any

from firelane.engine.forms import SheetField
from firelane.engine.systems.d100_degrees.data import SAMPLE
from firelane.engine.systems.percentile import forms as shared

SHEET_FIELDS = (
    SheetField("weapon_skill", "number", 0, 100, default=35, label="Weapon Skill"),
    SheetField("ballistic_skill", "number", 0, 100, default=35, label="Ballistic Skill"),
    SheetField("agility", "number", 0, 100, default=35, label="Agility"),
    SheetField("willpower", "number", 0, 100, default=30, label="Willpower"),
    SheetField("wounds", "number", 1, 100, default=10, label="Wounds"),
    SheetField("max_wounds", "number", 0, 100, default=0, label="Most wounds", note="0: the same as Wounds"),
    SheetField("armour", "catalogue", catalogue="armour", default="none", label="Armour"),
    SheetField("weapons", "catalogue_list", catalogue="weapons", default=[], label="Weapons"),
)


def catalogues() -> dict[str, list[dict[str, Any]]]:
    return shared.catalogues(SAMPLE)


def bestiary() -> list[dict[str, Any]]:
    return shared.bestiary(SAMPLE)


# Each setting of the system in words, with its unit (engine/forms.py `settings_form`).
SETTING_LABELS: dict[str, tuple[str, str]] = {
    "square_metres": ("Square size", "metres"),
    "chain_step_metres": ("Greatest gap between the targets of a chain", "metres"),
    "half_move_metres_per_agility_bonus": ("Half move for each point of Agility Bonus", "metres"),
    "initiative_die": ("Initiative die", "sides"),
    "minimum_half_move_metres": ("Shortest half move", "metres"),
    "pinned_attack_penalty": ("Attack modifier while pinned", "percentage points"),
}
