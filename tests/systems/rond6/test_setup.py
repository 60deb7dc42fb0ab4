"""RonD6 encounter setup: bad settings and bad sheets are refused with clear reasons;
house defaults can be changed per encounter."""

from __future__ import annotations

import pytest

from firelane.engine.core import SEQUENCER
from firelane.engine.dice import FixedDice
from firelane.engine.systems.rond6 import SYSTEM, demo_setup
from firelane.events.schemas import CombatantSetup, StartEncounter, Terrain, Wall
from tests.systems.rond6.r6helpers import (
    PISTOL,
    combatant,
    rejection,
    setup,
    sheet,
    start,
)


def start_reason(encounter) -> str:
    state = SYSTEM.initial_state()
    events = SYSTEM.decide_or_reject(state, StartEncounter(command_id="s", actor=SEQUENCER, setup=encounter, seed_commitment=""), FixedDice([]))
    return rejection(events)


TWO = (combatant("a", "red", (0, 0)), combatant("b", "blue", (3, 0)))


@pytest.mark.parametrize(("settings", "reason"), [
    ({"complication_rule": "reroll"}, "invalid rond6 setting: complication_rule must be one of remove, remove_wild, keep, not 'reroll'"),
    # Numbers are checked against the system's declared ranges first, naming the field's whole path.
    ({"heads_down_radius": -1}, "settings.heads_down_radius: must be a whole number from 0 to 1,000, not -1"),
    ({"called_shots": {"eye": {"modifier": "hard"}}}, 'settings.called_shots.eye.modifier: must be a whole number from -1,000 to 1,000, not "hard"'),
    ({"called_shots": {"eye": {"damage_dice": 1}}}, "invalid rond6 setting: called_shots['eye'] needs an integer modifier and damage_dice (a number, or null for no damage)"),
    ({"result_points_to_damage": "yes"}, "invalid rond6 setting: result_points_to_damage must be true or false, not 'yes'"),
])
def test_bad_settings_are_refused(settings: dict, reason: str) -> None:
    """House defaults are configurable, but a wrong value is a clear rejection."""
    assert start_reason(setup(*TWO, **settings)) == reason


def test_unknown_settings_are_refused() -> None:
    assert start_reason(setup(*TWO, fumble_table=True)).startswith("unknown settings for rond6: fumble_table")


RIFLE_NO_RANGES = {"id": "rifle", "kind": "ranged", "damage": "5D", "ranges": [10, 5, 30]}


@pytest.mark.parametrize(("overrides", "reason"), [
    ({"attributes": {"Agility": "lots"}}, "sheet field 'attributes.Agility' is invalid: not a die code: 'lots' (expected e.g. '3D', '3D+2', '4D-1')"),
    ({"attributes": {"Agility": "0D+2"}}, "sheet field 'attributes.Agility' must be at least 1D (got 0D+2)"),
    ({"attributes": {"Luck": "3D"}}, "sheet field 'attributes.Luck' is not an attribute (attributes: Agility, Strength, Perception, Stamina, Presence, Will Power, Knowledge)"),
    ({"skills": {"hacking": "3D"}}, "sheet field 'skills.hacking' is not a skill: unknown skill 'hacking'; known: acrobatics, athletics, dodge, fighting, firearms, fortitude, medicine, melee_weapons, missile_weapons, persuasion, resolve, search, throwing"),
    ({"skills": {"dodge": "4X"}}, "sheet field 'skills.dodge' is invalid: not a die code: '4X' (expected e.g. '3D', '3D+2', '4D-1')"),
    ({"talents": {"Quickness": 4}}, "sheet field 'talents.Quickness' must be between 0 and 3 (got 4)"),
    ({"talents": {"Luck": 1}}, "sheet field 'talents.Luck' is not a talent the engine knows (talents: Quickness, Ambidextrous, Initiative Priority)"),
    ({"move": 0}, "sheet field 'move' must be at least 1 (got 0)"),
    ({"armor": "thick"}, "sheet field 'armor' is invalid: not a die code: 'thick' (expected e.g. '3D', '3D+2', '4D-1')"),
    ({"character_points": -1}, "sheet field 'character_points' must be at least 0 (got -1)"),
    ({"fate_points": -2}, "sheet field 'fate_points' must be at least 0 (got -2)"),
    ({"wounds": -1}, "sheet field 'wounds' must be between 0 and 4 (got -1)"),
    ({"wounds": 5}, "sheet field 'wounds' must be between 0 and 4 (got 5)"),
    ({"fatigue": 4}, "sheet field 'fatigue' must be between 0 and 3 (got 4)"),
    ({"tactic": "flee"}, "sheet field 'tactic' must be one of '', 'hold' (got 'flee')"),
    ({"wounds": "two"}, "sheet field 'wounds' has the wrong type: expected `int`, got `str`"),
    ({"weapons": [{**PISTOL, "ranges": [5]}]}, "sheet field 'weapons[0].ranges' must be Short, Medium and Long in spaces, each at least 1 and none below the one before (got [5])"),
    ({"weapons": [RIFLE_NO_RANGES], "readied": []}, "sheet field 'weapons[0].ranges' must be Short, Medium and Long in spaces, each at least 1 and none below the one before (got [10, 5, 30])"),
    ({"weapons": [PISTOL, PISTOL]}, "sheet field 'weapons[1].id' repeats the weapon ID 'pistol': commands pick weapons by ID"),
    ({"weapons": [{**PISTOL, "id": "unarmed"}], "readied": []}, "sheet field 'weapons[0].id' must not be 'unarmed': that names fists"),
    ({"weapons": [{**PISTOL, "kind": "laser"}]}, "sheet field 'weapons[0].kind' must be one of 'ranged', 'thrown', 'melee', 'unarmed' (got 'laser')"),
    ({"weapons": [{**PISTOL, "skill": "lasers"}]}, "sheet field 'weapons[0].skill' is not a skill: unknown skill 'lasers'; known: acrobatics, athletics, dodge, fighting, firearms, fortitude, medicine, melee_weapons, missile_weapons, persuasion, resolve, search, throwing"),
    ({"weapons": [{**PISTOL, "damage": "loud"}]}, "sheet field 'weapons[0].damage' is invalid: not a die code: 'LOUD' (expected e.g. '3D', '3D+2', '4D-1')"),
    ({"weapons": [{**PISTOL, "capacity": -1}]}, "sheet field 'weapons[0].capacity' must be at least 0 (got -1)"),
    ({"weapons": [{**PISTOL, "modes": ["SA", "burst:giant"]}]}, "sheet field 'weapons[0].modes[1]' must be one of BF, FA, SA or an area (burst:small|medium|large|huge; cone:small|medium|large|huge) (got 'burst:giant')"),
    ({"weapons": [{**PISTOL, "calibre": 9}]}, "unknown sheet field 'weapons[0].calibre' (known: auto_rounds, burst_rounds, capacity, damage, id, kind, modes, name, ranges, reach, set_vs_charge, skill, stun)"),
    ({"readied": ["rifle"]}, "sheet field 'readied[0]' names no weapon of this combatant: 'rifle' (weapons: pistol, knife)"),
    ({"readied": ["pistol", "knife", "pistol"]}, "sheet field 'readied' holds at most two weapons, one per hand (got 3)"),
    ({"ammo": {"pistol": 13}}, "sheet field 'ammo.pistol' must be between 0 and 12 (got 13)"),
    ({"ammo": {"knife": 1}}, "sheet field 'ammo.knife' names no weapon of this combatant that takes ammunition (those: pistol)"),
    ({"reloads": {"pistol": -1}}, "sheet field 'reloads.pistol' must be at least 0 (got -1)"),
    # "armour" names a catalogue entry (forms.py); a die code goes in "armor".
    ({"armour": "2D"}, "sheet field 'armour' names no armour of RonD6: '2D' (known: armoured_jacket, none, riot_armour, "
                       "tactical_vest; or give the die code as 'armor')"),
    ({"armer": "2D"}, "unknown sheet field 'armer' (known: ammo, armor, armor_name, attributes, character_points, "
                      "dr_bonus, fate_points, fatigue, group, initiative_bonus, move, passive_defense_bonus, readied, "
                      "reloads, skills, surprised, tactic, talents, weapons, wounds)"),
])
def test_bad_sheets_are_refused(overrides: dict, reason: str) -> None:
    """Every sheet is checked in full up front; one line names the combatant and the field."""
    bad = CombatantSetup(id="a", name="A", side="red", position=(0, 0), sheet=sheet(**overrides))
    message = start_reason(setup(bad, combatant("b", "blue", (3, 0))))
    assert message.startswith(f"combatant 'a': {reason}") and "\n" not in message
    if not reason.endswith("(known: "):
        assert message == f"combatant 'a': {reason}"


def test_the_demo_sheets_are_valid() -> None:
    encounter = demo_setup()
    for member in encounter.combatants:
        SYSTEM.build_combatant(member, SYSTEM.settings_for(encounter))


def test_positions_are_on_free_spaces_of_the_map() -> None:
    assert start_reason(setup(combatant("a", "red", (0, 0)), combatant("b", "blue", (24, 0)))) == (
        "combatant 'b': position (24, 0) is off the map (24 x 16 Spaces)")
    assert start_reason(setup(combatant("a", "red", (0, 0)), combatant("b", "blue", (2, 2)), terrain=Terrain(walls=[Wall(2, 2)]))) == (
        "combatant 'b': position (2, 2) is a wall")
    assert start_reason(setup(combatant("a", "red", (0, 0)), combatant("b", "blue", (0, 0)))) == (
        "combatant 'b': position (0, 0) is already taken by 'a'")


def test_settings_change_house_defaults_per_encounter() -> None:
    """One called-shot entry can be changed and the rest kept (dict settings merge one level down)."""
    state = start(setup(*TWO, called_shots={"head": {"modifier": -5, "damage_dice": 2, "effect": "headshot"}}), [4, 4, 4, 2, 2, 2])
    assert state.settings["called_shots"]["head"]["modifier"] == -5
    assert state.settings["called_shots"]["limb"]["modifier"] == -5
    assert state.settings["complication_rule"] == "remove" and state.settings["result_points_to_damage"] is True
