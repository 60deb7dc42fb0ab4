"""Bolt & Blade sheets are validated in full when an encounter starts: one line naming
the combatant and the field (BB-CORE-02, -03, -09 and the weapon data of BB-CORE-07, -11)."""

from __future__ import annotations

from typing import Any

import pytest

from firelane.engine.core import SEQUENCER
from firelane.engine.dice import FixedDice
from firelane.engine.systems.bolt_and_blade import SYSTEM, demo_setup, load_data, sheet_from_template
from firelane.events.schemas import CommandRejected, EncounterStarted, StartEncounter

from .helpers import arena, fighter, knife_only, sheet

LASGUN = load_data()["weapons"]["lasgun"]


def start_with(a1_sheet: dict[str, Any]) -> list[Any]:
    setup = arena([fighter("a1", "red", (1, 1), **a1_sheet), fighter("b1", "blue", (5, 1), **knife_only())])
    return SYSTEM.decide_or_reject(SYSTEM.initial_state(), StartEncounter(command_id="s", actor=SEQUENCER, setup=setup, seed_commitment=""), FixedDice([10, 10]))


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"vitality": -5}, "combatant 'a1': sheet field 'vitality' must be at least 1 (got -5)"),
        ({"vitality": 0}, "combatant 'a1': sheet field 'vitality' must be at least 1 (got 0)"),
        ({"vitality": 12, "max_vitality": 10}, "combatant 'a1': sheet field 'vitality' must not exceed max_vitality 10 (got 12)"),
        ({"vitality": "many"}, "combatant 'a1': sheet field 'vitality': expected `int`, got `str`"),
        ({"level": 0}, "combatant 'a1': sheet field 'level' must be from 1 to 20 (got 0)"),
        ({"attributes": {"agility": 0}}, "combatant 'a1': sheet field 'attributes.agility' must be from 1 to 30 (got 0)"),
        ({"attributes": {"strength": 31}}, "combatant 'a1': sheet field 'attributes.strength' must be from 1 to 30 (got 31)"),
        ({"save_proficiencies": ["luck"]}, "combatant 'a1': sheet field 'save_proficiencies' names 'luck', not an attribute; known: strength, agility, toughness, intellect, willpower, presence"),
        ({"ammo": {"lasgun": -1}}, "combatant 'a1': sheet field 'ammo.lasgun' must be from 0 to 30 (got -1)"),
        ({"ammo": {"lasgun": 31}}, "combatant 'a1': sheet field 'ammo.lasgun' must be from 0 to 30 (got 31)"),
        ({"ammo": {"plasma gun": 3}}, "combatant 'a1': sheet field 'ammo.plasma gun' is for a weapon not carried; carried: lasgun, combat knife"),
        ({"ammo": {"combat knife": 1}}, "combatant 'a1': sheet field 'ammo.combat knife' is for combat knife, which takes no ammunition"),
        ({"ready_weapon": "bolt pistol"}, "combatant 'a1': sheet field 'ready_weapon' names 'bolt pistol', which is not carried; carried: lasgun, combat knife"),
        ({"movement_ft": -5}, "combatant 'a1': sheet field 'movement_ft' must be at least 0 (got -5)"),
        ({"armour": "none", "armour_defense": -2}, "combatant 'a1': sheet field 'armour_defense' must be from 0 to 30 (got -2)"),
        ({"reaction_round": 3}, "combatant 'a1': sheet field 'reaction_round' is not a sheet field; known: level, attributes, save_proficiencies, save_bonuses, proficiencies, weapon_proficiencies, max_vitality, vitality, armour, armour_defense, defense_sources, weapons, ready_weapon, ammo, movement_ft, features"),
        ({"weapons": ["lasgun", "lasgun"]}, "combatant 'a1': sheet field 'weapons[1].name' 'lasgun' is carried twice"),
        ({"weapons": [{**LASGUN, "range": [60, 30]}]}, "combatant 'a1': sheet field 'weapons[0].range' must be [normal, maximum] with maximum >= normal (got [60, 30])"),
        ({"weapons": [{**LASGUN, "kind": "laser"}]}, "combatant 'a1': sheet field 'weapons[0].kind' must be one of ranged, melee, thrown, power (got 'laser')"),
        ({"weapons": [{**LASGUN, "damage": "lots"}]}, "combatant 'a1': sheet field 'weapons[0].damage' not a dice expression: 'lots' (expected e.g. '2d6+3')"),
        ({"weapons": [{**LASGUN, "magazine": -3}]}, "combatant 'a1': sheet field 'weapons[0].magazine' must be at least 0 (got -3)"),
        ({"weapons": [{**LASGUN, "zone": {"kind": "fire"}}]}, "combatant 'a1': sheet field 'weapons[0].zone' is not a weapon field; known: attribute, blocks_sight, category, damage, kind, magazine, name, persistent_rounds, range, save, template, traits"),
        ({"weapons": [{**LASGUN, "range": "far"}]}, "combatant 'a1': sheet field 'weapons[0].range': expected `array`, got `str`"),
    ],
)
def test_a_bad_sheet_is_refused_in_one_line_naming_the_combatant_and_the_field(fields: dict[str, Any], reason: str) -> None:
    events = start_with(sheet(**fields))
    assert len(events) == 1 and isinstance(events[0], CommandRejected)
    assert events[0].reason == reason and "\n" not in events[0].reason


def test_an_unknown_weapon_name_is_refused_naming_it() -> None:
    """Catalogue names are resolved as the encounter starts; an unknown one names the combatant."""
    events = start_with(sheet(weapons=["lasgun", "plasma cannon"]))
    assert events[0].reason == "combatant 'a1' has an invalid sheet: unknown weapon 'plasma cannon'"


def test_the_sample_sheets_and_the_demo_pass() -> None:
    """Every template of the sample data, and the demo setup, is a valid sheet."""
    for template in load_data()["templates"]:
        events = start_with(sheet_from_template(template))
        assert not isinstance(events[0], CommandRejected), (template, events[0])
    events = SYSTEM.decide_or_reject(SYSTEM.initial_state(), StartEncounter(command_id="s", actor=SEQUENCER, setup=demo_setup(), seed_commitment=""), FixedDice([10] * 8))
    assert isinstance(events[0], EncounterStarted)
