"""d100-zones' character form (engine/forms.py): the sheet a person writes
(docs/systems/d100-zones.md), its catalogues and its bestiary."""

from __future__ import annotations

from typing import Any

from firelane.engine.forms import SheetField
from firelane.engine.systems.d100_zones.data import SAMPLE
from firelane.engine.systems.percentile import forms as shared

SHEET_FIELDS = (
    SheetField("strength", "number", 0, 100, default=50, label="Strength"),
    SheetField("dexterity", "number", 0, 100, default=50, label="Dexterity"),
    SheetField("intelligence", "number", 0, 100, default=50, label="Intelligence"),
    SheetField("speed", "number", 0, 100, default=10, label="Speed"),
    SheetField("melee", "number", 0, 100, default=40, label="Melee"),
    SheetField("ranged", "number", 0, 100, default=40, label="Ranged"),
    SheetField("brawling", "number", 0, 100, default=40, label="Brawling"),
    SheetField("medicine", "number", 0, 100, default=40, label="Medicine"),
    SheetField("hp", "number", 1, 200, default=12, label="Hit points"),
    SheetField("max_hp", "number", 0, 200, default=0, label="Most hit points", note="0: the same as Hit points"),
    SheetField("armour", "catalogue", catalogue="armour", default="none", label="Armour",
               note="its damage reduction goes into the sheet's dr"),
    SheetField("dr", "number", 0, 50, default=0, label="Damage reduction", note="set by the armour when one is picked"),
    SheetField("weapons", "catalogue_list", catalogue="weapons", default=[], label="Weapons"),
)


def catalogues() -> dict[str, list[dict[str, Any]]]:
    return shared.catalogues(SAMPLE)


def bestiary() -> list[dict[str, Any]]:
    return shared.bestiary(SAMPLE)


# Each setting of the system in words, with its unit (engine/forms.py `settings_form`).
SETTING_LABELS: dict[str, tuple[str, str]] = {
    "square_metres": ("Square size", "metres"),
    "death_at_hp": ("Dead at this many hit points", "hit points"),
    "dying_hp_loss_per_round": ("Hit points the dying lose each round", "hit points"),
    "flanking_min_angle": ("Smallest angle between attackers that flanks", "degrees"),
}
