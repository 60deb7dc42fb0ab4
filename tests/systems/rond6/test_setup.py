"""RonD6 encounter setup: bad settings and bad sheets are refused with clear reasons;
house defaults can be changed per encounter."""

from __future__ import annotations

import pytest

from firelane.engine.core import SEQUENCER
from firelane.engine.dice import FixedDice
from firelane.engine.systems.rond6 import SYSTEM
from firelane.events.schemas import CombatantSetup, StartEncounter
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
    ({"heads_down_radius": -1}, "invalid rond6 setting: heads_down_radius must be a whole number >= 0, not -1"),
    ({"called_shots": {"eye": {"modifier": "hard"}}}, "invalid rond6 setting: called_shots['eye'] needs an integer modifier and damage_dice (a number, or null for no damage)"),
    ({"result_points_to_damage": "yes"}, "invalid rond6 setting: result_points_to_damage must be true or false, not 'yes'"),
])
def test_bad_settings_are_refused(settings: dict, reason: str) -> None:
    """House defaults are configurable, but a wrong value is a clear rejection."""
    assert start_reason(setup(*TWO, **settings)) == reason


def test_unknown_settings_are_refused() -> None:
    assert start_reason(setup(*TWO, fumble_table=True)).startswith("unknown settings for rond6: fumble_table")


@pytest.mark.parametrize(("overrides", "reason"), [
    ({"attributes": {"Agility": "lots"}}, "not a die code: 'lots'"),
    ({"skills": {"hacking": "3D"}}, "unknown skill 'hacking'"),
    ({"weapons": [{**PISTOL, "ranges": [5]}]}, "a ranged weapon lists Short, Medium and Long ranges, not [5]"),
    ({"weapons": [PISTOL, PISTOL]}, "weapon IDs must be unique"),
    ({"readied": ["rifle"]}, "readied weapon 'rifle' is not among the weapons"),
    ({"weapons": [{**PISTOL, "damage": "loud"}]}, "not a die code: 'LOUD'"),
])
def test_bad_sheets_are_refused(overrides: dict, reason: str) -> None:
    """Every sheet is checked up front."""
    bad = CombatantSetup(id="a", name="A", side="red", position=(0, 0), sheet=sheet(**overrides))
    message = start_reason(setup(bad, combatant("b", "blue", (3, 0))))
    assert message.startswith("combatant 'a' has an invalid sheet: ") and reason in message


def test_settings_change_house_defaults_per_encounter() -> None:
    """One called-shot entry can be changed and the rest kept (dict settings merge one level down)."""
    state = start(setup(*TWO, called_shots={"head": {"modifier": -5, "damage_dice": 2, "effect": "headshot"}}), [4, 4, 4, 2, 2, 2])
    assert state.settings["called_shots"]["head"]["modifier"] == -5
    assert state.settings["called_shots"]["limb"]["modifier"] == -5
    assert state.settings["complication_rule"] == "remove" and state.settings["result_points_to_damage"] is True
