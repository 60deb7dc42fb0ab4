"""Every system's character form (engine/forms.py): its sheet fields, its
catalogues and its bestiary, whose sheets name weapons and armour by id and
are taken by the system's own start (the checks `firelane create` makes)."""

from __future__ import annotations

import importlib
import re

import msgspec
import pytest

from firelane.engine.core import BASE_SETTING_RANGES
from firelane.engine.forms import bestiary, character_form, settings_form
from firelane.engine.registry import get_system, system_names
from firelane.engine.setup_check import check_setup
from firelane.events.schemas import CombatantSetup, EncounterSetup, Terrain

SYSTEMS = ["bolt-and-blade", "d100-degrees", "d100-zones", "rond6"]


def fight(system: str, sheet: dict) -> EncounterSetup:
    return EncounterSetup(system=system, terrain=Terrain(width=10, height=10), combatants=[
        CombatantSetup(id="a", name="A", side="red", position=(0, 0), sheet=sheet),
        CombatantSetup(id="b", name="B", side="blue", position=(5, 5), sheet=sheet)])


@pytest.mark.parametrize("system", SYSTEMS)
def test_every_archetype_of_the_bestiary_starts_a_fight(system: str) -> None:
    rules = get_system(system)
    found = bestiary(rules)
    assert len(found) >= 5
    for archetype in found:
        started = check_setup(rules, fight(system, archetype["sheet"]))
        weapons = started.combatants[0].sheet.get("weapons", [])
        assert all(isinstance(w, dict) for w in weapons), archetype["id"]  # spelled out in the log


@pytest.mark.parametrize("system", SYSTEMS)
def test_the_form_names_its_catalogue_fields_and_every_label_is_words(system: str) -> None:
    form = character_form(get_system(system))
    kinds = {f["path"]: f["kind"] for f in form["fields"]}
    assert kinds["armour"] == "catalogue" and kinds["weapons"] == "catalogue_list"
    assert {e["id"] for e in form["catalogues"]["armour"]} and {e["id"] for e in form["catalogues"]["weapons"]}
    for field in form["fields"] + form["settings"]:
        assert "_" not in field["label"] and field["label"][0].isupper(), field
    assert system in system_names()


def test_d100_degrees_takes_armour_by_name_as_its_points() -> None:
    """The issue's refusal: `"armour": "flak_vest"` said "expected int, got str"."""
    sheet = {"weapon_skill": 40, "ballistic_skill": 40, "agility": 30, "wounds": 12, "armour": "flak_vest",
             "weapons": ["lasgun"]}
    started = check_setup(get_system("d100-degrees"), fight("d100-degrees", sheet))
    kept = started.combatants[0].sheet
    assert kept["armour"] == 3 and kept["armour_name"] == "flak_vest" and kept["weapons"][0]["name"] == "lasgun"


def test_zones_and_rond6_take_armour_where_their_sheets_want_dr_and_armor() -> None:
    zones = check_setup(get_system("d100-zones"), fight("d100-zones", {"armour": "kevlar_vest"})).combatants[0].sheet
    assert "armour" not in zones and zones["armour_name"] == "kevlar_vest" and zones["dr"] > 0
    rond6 = check_setup(get_system("rond6"), fight("rond6", {"armour": "tactical_vest", "weapons": ["pistol"]}))
    sheet = rond6.combatants[0].sheet
    assert "armour" not in sheet and sheet["armor_name"] == "tactical_vest" and sheet["weapons"][0]["id"] == "pistol"
    assert msgspec.json.encode(sheet)  # plain JSON, as the log keeps it


def test_the_settings_form_names_every_number_in_words_with_its_unit_and_range() -> None:
    from firelane.engine.forms import settings_form

    settings = {entry["path"]: entry for entry in settings_form(get_system("rond6"))}
    assert settings["turn_timer_ms"] == {"path": "turn_timer_ms", "label": "Turn timer", "kind": "number", "low": 0,
                                         "high": 30 * 86_400_000, "whole": True, "nullable": False, "unit": "milliseconds",
                                         "note": "0: no timer", "default": 0}
    assert settings["max_rounds"]["label"] == "Most rounds" and settings["max_rounds"]["unit"] == "rounds"
    assert [c["value"] for c in settings["on_turn_timeout"]["choices"]] == ["end_turn", "ai", "gm"]
    assert not any("*" in path for path in settings)  # tables stay in the setup JSON
    zones = {entry["path"]: entry["label"] for entry in settings_form(get_system("d100-zones"))}
    assert zones["square_metres"] == "Square size" and zones["death_at_hp"] == "Dead at this many hit points"


# Words no setting's label may use: pieces of keys, short forms a person must decode.
_ABBREVIATED = re.compile(r"\b(bb|ft|ms|dc|hp|min|max|pts|def|init|num|cfg)\b", re.IGNORECASE)


@pytest.mark.parametrize("system", SYSTEMS)
def test_every_setting_has_a_human_label_and_unit_from_its_system(system: str) -> None:
    """Each system's own settings are named in its forms.py (SETTING_LABELS), in words, each with its unit;
    a label made from the key (snake_case with its underscores turned to spaces) or one with a short form fails."""
    found = get_system(system)
    own = importlib.import_module(f"{type(found).__module__.rpartition('.')[0]}.forms").SETTING_LABELS
    numbers = [e for e in settings_form(found) if e["kind"] == "number"]
    assert numbers
    for entry in numbers:
        path, label = entry["path"], entry["label"]
        assert path in own or path in BASE_SETTING_RANGES, f"{system}: {path} has no label of its own"
        assert entry.get("unit"), f"{system}: {path} has no unit"
        # Written by hand: the key with its underscores turned to spaces is not a label (a plain-English
        # key such as initiative_die may give the same words, which SETTING_LABELS then says on purpose).
        assert label.lower() != path.replace("_", " ").lower() or path in own, f"{system}: {path} is labelled from its key"
        assert "_" not in label and not _ABBREVIATED.search(label), f"{system}: {path}: {label!r}"
        assert label[:1].isupper(), f"{system}: {path}: {label!r}"
    assert set(own) <= {e["path"] for e in numbers}, f"{system}: labels for settings it does not have"
