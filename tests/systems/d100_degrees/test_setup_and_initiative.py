"""Encounter setup, settings validation and the house-default initiative of d100-degrees."""

from __future__ import annotations

from firelane.engine.core import SEQUENCER
from firelane.engine.dice import FixedDice
from firelane.engine.registry import get_system
from firelane.engine.systems.d100_degrees import SYSTEM
from firelane.events.schemas import CombatantSetup, EncounterSetup, InitiativeRolled, StartEncounter, Terrain

from .helpers import fighter, make_setup, rejection, start


def _start_events(setup: EncounterSetup, faces: list[int]) -> list:
    return SYSTEM.decide_or_reject(SYSTEM.initial_state(), StartEncounter(command_id="s", actor=SEQUENCER, setup=setup, seed_commitment="x"), FixedDice(faces))


def test_registry_finds_the_system() -> None:
    assert get_system("d100-degrees") is SYSTEM


def test_initiative_is_d10_plus_agility_bonus_ties_by_agility_then_id() -> None:
    """House default initiative: 1d10 + Agility Bonus, once; ties: higher Agility, then ID."""
    setup = make_setup([
        fighter("a1", "red", (1, 1), agility=34),
        fighter("a2", "red", (1, 2), agility=41),
        fighter("b1", "blue", (9, 1), agility=47),
        fighter("b2", "blue", (9, 2), agility=47),
    ])
    events = _start_events(setup, [7, 6, 5, 5])  # a1 7+3=10, a2 6+4=10, b1 5+4=9, b2 5+4=9
    rolled = next(e for e in events if isinstance(e, InitiativeRolled))
    assert {e.combatant: e.total for e in rolled.entries} == {"a1": 10, "a2": 10, "b1": 9, "b2": 9}
    assert rolled.order == ["a2", "a1", "b1", "b2"]
    assert rolled.entries[0].roll.modifiers[0].source == "Agility Bonus"


def test_unknown_and_bad_settings_are_rejected() -> None:
    combatants = [fighter("a1", "red", (1, 1)), fighter("b1", "blue", (5, 5))]
    assert "unknown settings for d100-degrees: bogus" in rejection(_start_events(make_setup(combatants, bogus=1), []))
    assert "degrees_formula must be one of tens_digits, per_full_10" in rejection(_start_events(make_setup(combatants, degrees_formula="x"), []))
    assert "clear_jam_action must be 'half' or 'full'" in rejection(_start_events(make_setup(combatants, clear_jam_action="never"), []))


def test_bad_sheets_are_rejected_with_the_reason() -> None:
    good = fighter("b1", "blue", (5, 5))
    no_position = CombatantSetup(id="a1", name="A", side="red", sheet=fighter("a1", "red", (0, 0)).sheet)
    assert "combatant 'a1' needs a position" in rejection(_start_events(make_setup([no_position, good]), []))
    bad_weapon = fighter("a1", "red", (1, 1), weapons=[{"name": "x", "kind": "melee", "damage": "lots"}])
    assert rejection(_start_events(make_setup([bad_weapon, good]), [])) == (
        "combatant 'a1': sheet field 'weapons[0].damage' is invalid: bad damage code 'lots'; expected e.g. '1d10+3', '2d6' or '8'")
    bad_kind = fighter("a1", "red", (1, 1), weapons=[{"name": "x", "kind": "thrown", "damage": "1d5"}])
    assert rejection(_start_events(make_setup([bad_kind, good]), [])) == (
        "combatant 'a1': sheet field 'weapons[0].kind' must be one of 'melee', 'ranged' (got 'thrown')")
    wrong_type = fighter("a1", "red", (1, 1), weapon_skill="high")
    assert rejection(_start_events(make_setup([wrong_type, good]), [])) == (
        "combatant 'a1': sheet field 'weapon_skill' has the wrong type: expected `int`, got `str`")


def _sheet_problem(**sheet: object) -> str:
    """The one-line reason a sheet with these fields is refused when the encounter starts."""
    reason = rejection(_start_events(make_setup([fighter("a1", "red", (1, 1), **sheet), fighter("b1", "blue", (5, 5))]), []))
    assert "\n" not in reason
    return reason


def test_sheets_are_validated_in_full_with_ranges() -> None:
    """Every field of a sheet is checked when the encounter starts; the reason names the combatant and the field."""
    assert _sheet_problem(wounds=-5) == "combatant 'a1': sheet field 'wounds' must be at least 1 (got -5)"
    assert _sheet_problem(wounds=0) == "combatant 'a1': sheet field 'wounds' must be at least 1 (got 0)"
    assert _sheet_problem(ballistic_skill=101) == "combatant 'a1': sheet field 'ballistic_skill' must be between 0 and 100 (got 101)"
    assert _sheet_problem(agility=-1) == "combatant 'a1': sheet field 'agility' must be between 0 and 100 (got -1)"
    assert _sheet_problem(willpower=200) == "combatant 'a1': sheet field 'willpower' must be between 0 and 100 (got 200)"
    assert _sheet_problem(armour=-2) == "combatant 'a1': sheet field 'armour' must be at least 0 (got -2)"
    assert _sheet_problem(wounds=10, max_wounds=8) == "combatant 'a1': sheet field 'max_wounds' must be at least 10 (got 8)"
    assert _sheet_problem(wonds=3).startswith("combatant 'a1': unknown sheet field 'wonds' (known: agility, armour,")
    assert _sheet_problem(weapon_skill=True) == "combatant 'a1': sheet field 'weapon_skill' has the wrong type: expected `int`, got `bool`"
    gun = {"name": "gun", "kind": "ranged", "damage": "1d10"}
    assert _sheet_problem(weapons=[{**gun, "rof": 0}]) == "combatant 'a1': sheet field 'weapons[0].rof' must be at least 1 (got 0)"
    assert _sheet_problem(weapons=[{**gun, "range_m": 0}]) == "combatant 'a1': sheet field 'weapons[0].range_m' must be more than 0 (got 0)"
    assert _sheet_problem(weapons=[{**gun, "multiplier": -1}]) == "combatant 'a1': sheet field 'weapons[0].multiplier' must be at least 0 (got -1)"
    assert _sheet_problem(weapons=[gun, gun]) == "combatant 'a1': sheet field 'weapons[1].name' repeats the weapon name 'gun': commands pick weapons by name"
    assert _sheet_problem(weapons=[{**gun, "dmg": "1d6"}]) == (
        "combatant 'a1': unknown sheet field 'weapons[0].dmg' (known: automatic, damage, kind, multiplier, name, range_m, rof)")
    assert _sheet_problem(weapons=[{"name": "gun", "kind": "ranged"}]) == "combatant 'a1': sheet field 'weapons[0].damage' is missing"
    assert _sheet_problem(jammed=["bolter"]) == "combatant 'a1': sheet field 'jammed[0]' names no weapon of this combatant: 'bolter' (weapons: lasgun)"
    sheet = fighter("a1", "red", (1, 1)).sheet
    del sheet["agility"]
    lacking = CombatantSetup(id="a1", name="A", side="red", position=(1, 1), sheet=sheet)
    assert rejection(_start_events(make_setup([lacking, fighter("b1", "blue", (5, 5))]), [])) == "combatant 'a1': sheet field 'agility' is missing"


def test_square_size_follows_a_metric_terrain_unless_set() -> None:
    setup = EncounterSetup(system="d100-degrees", combatants=[fighter("a1", "red", (1, 1)), fighter("b1", "blue", (5, 5))],
                           terrain=Terrain(width=10, height=10, square_size=2.0, unit="m"))
    assert SYSTEM.settings_for(setup)["square_metres"] == 2.0
    assert start(make_setup([fighter("a1", "red", (1, 1)), fighter("b1", "blue", (5, 5))])).settings["square_metres"] == 1.0
    assert start(make_setup([fighter("a1", "red", (1, 1)), fighter("b1", "blue", (5, 5))], square_metres=1.5)).settings["square_metres"] == 1.5
    state = start(make_setup([fighter("a1", "red", (1, 1), wounds=9), fighter("b1", "blue", (5, 5))]))
    assert state.combatants["a1"].max_wounds == 9


def test_positions_are_on_free_squares_of_the_map() -> None:
    assert rejection(_start_events(make_setup([fighter("a1", "red", (1, 1)), fighter("b1", "blue", (-1, 5))]), [])) == (
        "combatant 'b1': position (-1, 5) is off the map (20 x 12 squares)")
    assert rejection(_start_events(make_setup([fighter("a1", "red", (1, 1)), fighter("b1", "blue", (4, 4))], walls=[(4, 4)]), [])) == (
        "combatant 'b1': position (4, 4) is a wall")
    assert rejection(_start_events(make_setup([fighter("a1", "red", (1, 1)), fighter("b1", "blue", (1, 1))]), [])) == (
        "combatant 'b1': position (1, 1) is already taken by 'a1'")
