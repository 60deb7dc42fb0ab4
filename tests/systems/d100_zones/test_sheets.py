"""d100-zones sheets are validated in full when the encounter starts: one line
naming the combatant and the field (the server shows it to whoever set it up)."""

from __future__ import annotations

from firelane.engine.core import SEQUENCER
from firelane.engine.dice import FixedDice
from firelane.engine.systems.d100_zones import SYSTEM, demo_setup
from firelane.events.schemas import StartEncounter

from .helpers import KNIFE, RIFLE, fighter, make_setup, rejection


def _sheet_problem(**sheet: object) -> str:
    setup = make_setup([fighter("a1", "red", (0, 5), **sheet), fighter("b1", "blue", (5, 5))])
    events = SYSTEM.decide_or_reject(SYSTEM.initial_state(), StartEncounter(command_id="s", actor=SEQUENCER, setup=setup, seed_commitment="x"), FixedDice([]))
    reason = rejection(events)
    assert "\n" not in reason
    return reason


def test_the_demo_sheets_are_valid() -> None:
    for combatant in demo_setup().combatants:
        SYSTEM.build_combatant(combatant, SYSTEM.settings_for(demo_setup()))


def test_attributes_and_skills_are_percentages() -> None:
    assert _sheet_problem(dexterity=120) == "combatant 'a1': sheet field 'dexterity' must be between 0 and 100 (got 120)"
    assert _sheet_problem(brawling=-3) == "combatant 'a1': sheet field 'brawling' must be between 0 and 100 (got -3)"
    assert _sheet_problem(speed=101) == "combatant 'a1': sheet field 'speed' must be between 0 and 100 (got 101)"
    assert _sheet_problem(medicine="good") == "combatant 'a1': sheet field 'medicine' has the wrong type: expected `int`, got `str`"


def test_hit_points_and_armour() -> None:
    assert _sheet_problem(hp=-5) == "combatant 'a1': sheet field 'hp' must be at least 1 (got -5)"
    assert _sheet_problem(hp=12, max_hp=10) == "combatant 'a1': sheet field 'max_hp' must be at least 12 (got 10)"
    assert _sheet_problem(dr=-1) == "combatant 'a1': sheet field 'dr' must be at least 0 (got -1)"
    assert _sheet_problem(hitpoints=12).startswith("combatant 'a1': unknown sheet field 'hitpoints' (known: ")


def test_weapons() -> None:
    assert _sheet_problem(weapons=[{**KNIFE, "damage": "sharp"}]) == (
        "combatant 'a1': sheet field 'weapons[0].damage' is invalid: bad damage code 'sharp'; expected e.g. '1d10+3', '2d6' or '8'")
    assert _sheet_problem(weapons=[{**KNIFE, "kind": "thrown"}]) == (
        "combatant 'a1': sheet field 'weapons[0].kind' must be one of 'melee', 'ranged', 'unarmed' (got 'thrown')")
    assert _sheet_problem(weapons=[RIFLE, {**KNIFE, "hands": 3}]) == "combatant 'a1': sheet field 'weapons[1].hands' must be one of 1, 2 (got 3)"
    assert _sheet_problem(weapons=[{**RIFLE, "range_m": -10}]) == "combatant 'a1': sheet field 'weapons[0].range_m' must be more than 0 (got -10)"
    assert _sheet_problem(weapons=[KNIFE, KNIFE]) == "combatant 'a1': sheet field 'weapons[1].name' repeats the weapon name 'knife': commands pick weapons by name"
    assert _sheet_problem(weapons=[{"name": "knife", "kind": "melee"}]) == "combatant 'a1': sheet field 'weapons[0].damage' is missing"
    assert _sheet_problem(attacks=["spear"]) == (
        "combatant 'a1': sheet field 'attacks[0]' names no weapon of this combatant: 'spear' (weapons: rifle, knife, unarmed)")


def test_positions_are_on_free_squares_of_the_map() -> None:
    def problem(*positions: tuple[int, int], walls: tuple[tuple[int, int], ...] = ()) -> str:
        setup = make_setup([fighter(f"c{i}", "red" if i == 0 else "blue", at) for i, at in enumerate(positions)], walls=walls)
        events = SYSTEM.decide_or_reject(SYSTEM.initial_state(), StartEncounter(command_id="s", actor=SEQUENCER, setup=setup, seed_commitment="x"), FixedDice([]))
        return rejection(events)

    assert problem((0, 5), (30, 5)) == "combatant 'c1': position (30, 5) is off the map (30 x 20 squares)"
    assert problem((0, 5), (3, 3), walls=((3, 3),)) == "combatant 'c1': position (3, 3) is a wall"
    assert problem((0, 5), (0, 5)) == "combatant 'c1': position (0, 5) is already taken by 'c0'"
