"""R6-42 natural healing and R6-43 assisted healing: the pure rules."""

from __future__ import annotations

import pytest

from firelane.engine.systems.rond6.healing import (
    DAY,
    WEEK,
    assisted_healing_outcome,
    assisted_healing_steps,
    natural_healing_outcome,
    natural_healing_plan,
    recovery_time,
)


def test_r6_42_recovery_times() -> None:
    """R6-42: Stunned 1 minute, 3 days per Wound, Incapacitated 2 weeks, Mortally Wounded 5 weeks."""
    assert recovery_time(0, stunned=False) is None
    assert recovery_time(0, stunned=True).minutes == 1  # type: ignore[union-attr]
    assert recovery_time(1).minutes == 3 * DAY  # type: ignore[union-attr]
    assert recovery_time(2).minutes == 6 * DAY  # type: ignore[union-attr]
    assert recovery_time(3).minutes == 2 * WEEK  # type: ignore[union-attr]
    assert recovery_time(4).minutes == 5 * WEEK  # type: ignore[union-attr]
    assert recovery_time(2).text == "6 days (2 Wound(s) x 3 days)"  # type: ignore[union-attr]


def test_r6_42_plan_needs_the_recovery_time_and_adjusts_for_rest() -> None:
    """R6-42: not before the recovery time; +1 level without rest; +1D for twice the time."""
    two_wounds = recovery_time(2)
    assert two_wounds is not None
    early = natural_healing_plan(two_wounds, rested_minutes=5 * DAY)
    assert not early.ready and "needs 6 days" in early.reason
    plain = natural_healing_plan(two_wounds, rested_minutes=6 * DAY)
    assert plain.ready and plain.extra_steps == 0 and plain.bonus_dice == 0
    restless = natural_healing_plan(two_wounds, rested_minutes=20 * DAY, rested=False)
    assert restless.extra_steps == 1 and restless.bonus_dice == 0
    long_rest = natural_healing_plan(two_wounds, rested_minutes=12 * DAY)
    assert long_rest.bonus_dice == 1


def test_r6_42_results_table_never_more_than_two() -> None:
    """R6-42: critical failure +1 Wound, failure none, success -1, 2+ Result Points -2 (max 2)."""
    assert natural_healing_outcome(False, 0, critical_failure=True) == 1
    assert natural_healing_outcome(False, 0, critical_failure=False) == 0
    assert natural_healing_outcome(True, 0, critical_failure=False) == -1
    assert natural_healing_outcome(True, 1, critical_failure=False) == -1
    assert natural_healing_outcome(True, 2, critical_failure=False) == -2
    assert natural_healing_outcome(True, 15, critical_failure=False) == -2


def test_r6_43_medicine_difficulty_by_injury() -> None:
    """R6-43: Stunned Easy, 1 Wound Standard, +1 level per further Wound."""
    assert assisted_healing_steps(0, stunned=True) == ("easy", 0)
    assert assisted_healing_steps(1, stunned=False) == ("standard", 0)
    assert assisted_healing_steps(3, stunned=True) == ("standard", 2)
    with pytest.raises(ValueError, match="neither stunned nor wounded"):
        assisted_healing_steps(0, stunned=False)


def test_r6_43_heals_one_or_two_with_result_points() -> None:
    """R6-43: a success heals 1; 1 or more Result Points heal 2."""
    assert assisted_healing_outcome(False, 0) == 0
    assert assisted_healing_outcome(True, 0) == 1
    assert assisted_healing_outcome(True, 1) == 2
    assert assisted_healing_outcome(True, 9) == 2
