"""D100D-01: percentile tests, difficulties and degrees of success."""

from __future__ import annotations

import pytest

from firelane.engine.dice import FixedDice
from firelane.engine.systems.d100_degrees import rules
from firelane.engine.systems.d100_degrees.schemas import D100DBasicAttack
from firelane.events.schemas import AttackResolved, Modifier, PassReaction

from .helpers import act, fighter, make_setup, one, start


def test_D100D_01_success_when_roll_is_at_most_skill_plus_modifier() -> None:
    """D100D-01: d100 <= skill + modifier succeeds; the target is the sum of the listed modifiers."""
    roll = rules.characteristic_test(
        FixedDice([45]), purpose="test", rule="D100D-01", characteristic="Weapon Skill", value=40,
        modifiers=[Modifier(source="aim", rule="X", value=5)],
    )
    assert roll.target == 45 and roll.total == 45 and roll.compare == "<=" and roll.success is True
    assert [m.value for m in roll.modifiers] == [40, 0, 5]
    assert roll.modifiers[1].source == "Challenging (+0)" and roll.modifiers[1].rule == "D100D-01"
    miss = rules.characteristic_test(FixedDice([46]), purpose="test", rule="D100D-01", characteristic="WS", value=45)
    assert miss.success is False and miss.details["degrees_of_failure"] == 1
    assert "degrees_of_success" not in miss.details


@pytest.mark.parametrize(("difficulty", "face", "target", "success"), [
    ("challenging", 45, 45, True),
    ("difficult", 35, 35, True),
    ("difficult", 36, 35, False),
    ("hard", 25, 25, True),
    ("hard", 26, 25, False),
])
def test_D100D_01_difficulties_challenging_difficult_hard(difficulty: str, face: int, target: int, success: bool) -> None:
    """D100D-01: Challenging +0, Difficult -10, Hard -20."""
    roll = rules.characteristic_test(FixedDice([face]), purpose="t", rule="D100D-01", characteristic="Ag", value=45, difficulty=difficulty)
    assert roll.target == target and roll.success is success
    assert roll.modifiers[1].value == rules.DIFFICULTIES[difficulty]


@pytest.mark.parametrize(("face", "target", "degrees"), [(23, 45, 3), (45, 45, 1), (40, 45, 1), (39, 45, 2), (1, 45, 5), (9, 9, 1), (100, 120, 3)])
def test_D100D_01_degrees_of_success_house_default_tens_digits(face: int, target: int, degrees: int) -> None:
    """D100D-01 house default: degrees = 1 + target tens digit - roll tens digit."""
    assert rules.degrees_of_success(face, target) == degrees
    roll = rules.characteristic_test(FixedDice([face]), purpose="t", rule="D100D-01", characteristic="X", value=target)
    assert roll.details["degrees_of_success"] == degrees
    assert roll.details["degrees_formula"] == "1 + tens digit of target - tens digit of roll"


def test_D100D_01_alternative_degree_formula_per_full_ten() -> None:
    """D100D-01: the per_full_10 formula is 1 + floor((target - roll) / 10)."""
    assert rules.degrees_of_success(23, 45, "per_full_10") == 3
    assert rules.degrees_of_success(40, 45, "per_full_10") == 1
    assert rules.degrees_of_success(35, 45, "per_full_10") == 2
    assert rules.degrees_of_failure(56, 45, "per_full_10") == 2
    with pytest.raises(ValueError, match="failure"):
        rules.degrees_of_success(50, 45)
    with pytest.raises(ValueError, match="unknown degrees formula"):
        rules.degrees_of_success(5, 45, "bogus")


def test_D100D_01_degrees_recorded_on_the_attack_roll_in_the_log() -> None:
    """D100D-01: an attack's degrees of success and the formula are in Roll.details of the event."""
    state = start(make_setup([fighter("a1", "red", (5, 5)), fighter("b1", "blue", (6, 5)), fighter("b2", "blue", (15, 5))]))
    events = act(state, D100DBasicAttack(command_id="c", actor="a1", target="b1"), [23])
    attack = one(events, AttackResolved)
    assert attack.hit and attack.roll.details["degrees_of_success"] == 3
    assert attack.roll.details["degrees_formula"] == "1 + tens digit of target - tens digit of roll"
    assert attack.details["degrees_for_damage"] == 2
    # the window is open for b1's evasion; passing deals 1d10+2 + 2 x Multiplier 2
    events = act(state, PassReaction(command_id="p", actor="b1", window=1), [5])
    assert state.combatants["b1"].wounds == 12 - (5 + 2 + 4)


def test_D100D_01_setting_switches_the_formula_for_an_encounter() -> None:
    """D100D-01: degrees_formula is configurable per encounter."""
    setup = make_setup([fighter("a1", "red", (5, 5)), fighter("b1", "blue", (6, 5))], degrees_formula="per_full_10")
    state = start(setup)
    events = act(state, D100DBasicAttack(command_id="c", actor="a1", target="b1"), [40])
    assert one(events, AttackResolved).roll.details["degrees_of_success"] == 1
    assert one(events, AttackResolved).roll.details["degrees_formula"] == "1 + floor((target - roll) / 10)"


def test_agility_bonus_is_the_tens_digit_of_agility() -> None:
    """House default used by D100D-04/05: Agility Bonus = tens digit of Agility."""
    assert [rules.agility_bonus(a) for a in (9, 10, 34, 45, 99)] == [0, 1, 3, 4, 9]
