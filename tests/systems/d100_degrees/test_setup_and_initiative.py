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
    assert "weapon 'x': bad damage code 'lots'" in rejection(_start_events(make_setup([bad_weapon, good]), []))
    bad_kind = fighter("a1", "red", (1, 1), weapons=[{"name": "x", "kind": "thrown", "damage": "1d5"}])
    assert "kind must be 'melee' or 'ranged'" in rejection(_start_events(make_setup([bad_kind, good]), []))
    missing = fighter("a1", "red", (1, 1), weapon_skill="high")
    assert "combatant 'a1' has an invalid sheet" in rejection(_start_events(make_setup([missing, good]), []))


def test_square_size_follows_a_metric_terrain_unless_set() -> None:
    setup = EncounterSetup(system="d100-degrees", combatants=[fighter("a1", "red", (1, 1)), fighter("b1", "blue", (5, 5))],
                           terrain=Terrain(width=10, height=10, square_size=2.0, unit="m"))
    assert SYSTEM.settings_for(setup)["square_metres"] == 2.0
    assert start(make_setup([fighter("a1", "red", (1, 1)), fighter("b1", "blue", (5, 5))])).settings["square_metres"] == 1.0
    assert start(make_setup([fighter("a1", "red", (1, 1)), fighter("b1", "blue", (5, 5))], square_metres=1.5)).settings["square_metres"] == 1.5
    state = start(make_setup([fighter("a1", "red", (1, 1), wounds=9), fighter("b1", "blue", (5, 5))]))
    assert state.combatants["a1"].max_wounds == 9
