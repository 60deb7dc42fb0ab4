"""`firelane encounters` as a person reads it (issue 19 item 12): a RonD6
character Incapacitated at 3 Wounds (R6-21) is on its feet in the engine's eyes
but out of action, and the listing says so; an encounter's name is shown, never
a blank."""

from __future__ import annotations

from firelane.engine.registry import demo_setup, get_system
from firelane.engine.simulate import run_headless
from firelane.projections.roster import RosterRow, out_of_action


def test_r6_21_an_incapacitated_combatant_is_listed_as_incapacitated_not_plainly_standing() -> None:
    """R6-21: standing but Incapacitated: the listing names the condition."""
    system = get_system("rond6")
    _command, _events, state = next(iter(run_headless(system, demo_setup("rond6"), b"r".ljust(32, b"-"))))
    vance = state.combatants["vance"]
    vance.conditions["incapacitated"] = ""
    assert out_of_action(state) == {"Agent Vance": "incapacitated"}
    row = RosterRow(encounter="raid", system="rond6", name="Warehouse raid", status="ended", round=3, events=90,
                    winner="agents", standing=["Agent Vance", "Okoro"], down=["Ganger"], out_of_action=out_of_action(state))
    text = row.describe()
    assert '"Warehouse raid"' in text
    assert "standing: Agent Vance (incapacitated), Okoro; down: Ganger" in text


def test_an_encounter_without_a_name_shows_no_blank_name() -> None:
    row = RosterRow(encounter="raid", system="rond6", name="raid", status="running", standing=["A"])
    assert '""' not in row.describe() and "standing: A; down: -" in row.describe()


def test_r6_21_the_replay_state_table_says_incapacitated_and_never_leaves_a_name_blank() -> None:
    """R6-21: `firelane replay`'s state table shows an Incapacitated combatant as such, not
    "up", and a combatant without a name under its id."""
    from firelane.cli.encounters import _state_table

    system = get_system("rond6")
    _command, _events, state = next(iter(run_headless(system, demo_setup("rond6"), b"r".ljust(32, b"-"))))
    state.combatants["vance"].conditions["incapacitated"] = ""
    state.combatants["okoro"].name = ""
    lines = {line.split()[0]: line for line in _state_table(state)[1:]}
    assert " incapacitated " in lines["vance"] and " up " not in lines["vance"]
    assert lines["okoro"].split()[1] == "okoro"
