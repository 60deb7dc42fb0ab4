"""An encounter's log carries the full sheets: replay never reads the sample data file."""

from __future__ import annotations

import pytest

from firelane.engine.core import SEQUENCER
from firelane.engine.dice import FixedDice
from firelane.engine.systems.bolt_and_blade import SYSTEM, data
from firelane.events.schemas import CommandRejected, EncounterStarted, StartEncounter

from .helpers import arena, fighter, sheet


def test_encounter_started_inlines_catalogue_records_and_replays_without_the_catalogue(monkeypatch: pytest.MonkeyPatch) -> None:
    setup = arena([fighter("a", "red", (1, 1), **sheet(armour="flak armour")), fighter("b", "blue", (5, 1), **sheet())])
    assert setup.combatants[0].sheet["weapons"] == ["lasgun", "combat knife"]  # names, as a table writes them
    state = SYSTEM.initial_state()
    events = SYSTEM.decide(state, StartEncounter(command_id="s", actor=SEQUENCER, setup=setup, seed_commitment="x"), FixedDice([10, 5]))
    started = events[0]
    assert isinstance(started, EncounterStarted)
    weapons = started.setup.combatants[0].sheet["weapons"]
    assert [w["name"] for w in weapons] == ["lasgun", "combat knife"] and weapons[0]["range"] == data.load_data()["weapons"]["lasgun"]["range"]
    assert started.setup.combatants[0].sheet["armour_defense"] == data.load_data()["armour"]["flak armour"]["defense"]

    def no_catalogue() -> dict:
        raise AssertionError("replay must not read the sample data")

    monkeypatch.setattr(data, "load_data", no_catalogue)
    replayed = SYSTEM.initial_state()
    for event in events:
        SYSTEM.evolve(replayed, event)
    assert replayed.combatants["a"].weapons[0].name == "lasgun" and replayed.combatants["a"].armour_defense == started.setup.combatants[0].sheet["armour_defense"]


def test_an_unknown_catalogue_name_is_rejected_with_the_name() -> None:
    setup = arena([fighter("a", "red", (1, 1), **sheet(weapons=["plasma cannon"], ready_weapon="plasma cannon")), fighter("b", "blue", (5, 1), **sheet())])
    events = SYSTEM.decide_or_reject(SYSTEM.initial_state(), StartEncounter(command_id="s", actor=SEQUENCER, setup=setup, seed_commitment="x"), FixedDice([]))
    assert isinstance(events[0], CommandRejected)
    assert events[0].reason == "combatant 'a' has an invalid sheet: unknown weapon 'plasma cannon'"
