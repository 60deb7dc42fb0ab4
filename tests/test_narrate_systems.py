"""Sentences for the shared events each percentile/RonD6 system fills with its
own details (issue 9): names, rule IDs, no field dumps."""

from __future__ import annotations

import pytest

from firelane.engine.registry import demo_setup, get_system
from firelane.engine.simulate import run_headless
from firelane.events.schemas import ActionTaken, DamageDealt, Roll
from firelane.projections.narration import Narrator


def narrated(system_name: str, seed: bytes) -> list[tuple[object, str]]:
    system = get_system(system_name)
    narrator = Narrator(colour=False)
    state = system.initial_state()
    state.encounter = "headless"
    out = []
    for _c, events, _s in run_headless(system, demo_setup(system_name), seed):
        for event in events:
            system.evolve(state, event)
            out.append((event, narrator.line(state.version, event, state)))
    return out


@pytest.mark.parametrize(("system_name", "rule_prefix"), [("d100-degrees", "D100D-"), ("d100-zones", "D100Z-"), ("rond6", "R6-")])
def test_actions_taken_read_as_sentences_with_their_rule(system_name: str, rule_prefix: str) -> None:
    lines = [line for event, line in narrated(system_name, b"a" * 32) if isinstance(event, ActionTaken)]
    assert len(lines) > 10
    for line in lines:
        assert " uses " not in line and "penalty dice" not in line and "action number" not in line, line
        assert rule_prefix in line, line


def test_rond6_damage_says_the_wound_level_not_an_amount_of_damage() -> None:
    """R6-19/R6-21: a RonD6 hit is Stunned, Wounds (with the injury level) or no effect."""
    lines = [(event, line) for event, line in narrated("rond6", b"a" * 32) if isinstance(event, DamageDealt)]
    assert lines
    for event, line in lines:
        assert " takes " not in line and " damage (" not in line.split("  ")[0], line
        details = event.details  # type: ignore[attr-defined]
        assert f"damage {details['damage_total']} against Damage Resistance {details['resistance_total']}" in line
        if details["stunned"] and event.amount:  # type: ignore[attr-defined]
            assert f"now {details['injury'].capitalize()} ({details['wounds_total']} Wound" in line and "R6-21" in line


def test_rond6_wound_sentence_for_fixed_numbers() -> None:
    """R6-21: 2 Wounds on top of 1 make 3: Incapacitated."""
    system = get_system("rond6")
    state = system.initial_state()
    for _c, _events, st in run_headless(system, demo_setup("rond6"), b"a" * 32):
        state = st
        break
    target = next(iter(state.combatants))
    event = DamageDealt(target=target, source="x", amount=2, rule="R6-19", roll=Roll(purpose="damage", rule="R6-19", dice=[], total=30),
                        details={"damage_total": 30, "resistance_total": 18, "stunned": True, "wounds_total": 3,
                                 "injury": "incapacitated", "stun_damage": False})
    line = Narrator(colour=False).line(9, event, state)
    name = state.combatants[target].name
    assert f"{name}: damage 30 against Damage Resistance 18: Stunned and 2 Wounds: now Incapacitated (3 Wounds, R6-21)" in line


@pytest.mark.parametrize(("system_name", "needle"), [("d100-degrees", "jammed: roll"), ("d100-zones", "is dying and loses"),
                                                    ("rond6", "rounds from the")])
def test_frequent_state_adjustments_read_as_sentences(system_name: str, needle: str) -> None:
    """Jams (D100D-08), bleeding out (d100-zones house default) and ammunition spent (RonD6) as sentences with their rule."""
    lines = [line for seed in (b"a" * 32, b"b" * 32, b"c" * 32) for event, line in narrated(system_name, seed)
             if type(event).__name__ == "StateAdjusted" and needle in line]
    assert lines
    for line in lines:
        assert " — " not in line and line.rstrip().endswith(")"), line  # no field dump; the rule last
