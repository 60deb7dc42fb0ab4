"""R6-09 .. R6-12 movement: the pure rules (Move, terrain, test table, swim/climb/jump, breath, fatigue)."""

from __future__ import annotations

import pytest

from firelane.engine.systems.rond6.movement import (
    base_move,
    breath_seconds,
    climb_move,
    has_running_start,
    jump_spaces,
    movement_test_level,
    partial_move,
    prepared_breath_minutes,
    run_action_kind,
    strenuous_streak,
    strenuous_test_steps,
    swim_move,
    terrain_levels,
)
from firelane.engine.systems.rond6.pools import DieCode


def test_r6_09_move_five_or_six_with_athletics_or_fortitude_3d() -> None:
    """R6-09: Move 5; 6 with Strength: Athletics or Stamina: Fortitude at 3D or more."""
    assert base_move("2D+2", "2D+2") == 5
    assert base_move("3D", None) == 6
    assert base_move(None, DieCode(4)) == 6
    assert base_move(None, None) == 5
    assert base_move("3D", "1D", {"move_strong": 7}) == 7


def test_r6_09_partial_move_is_half_move() -> None:
    """R6-09: a Partial Move is half Move (house default rounded down)."""
    assert partial_move(5) == 2
    assert partial_move(6) == 3
    assert partial_move(5, "up") == 3


def test_r6_10_terrain_levels() -> None:
    """R6-10: Easy +0, Moderate +1, Rough +2, Very Rough +3, Hazardous +4, Extreme +5 (or more)."""
    assert [terrain_levels(t) for t in ("easy", "moderate", "rough", "very rough", "hazardous", "extreme")] == [0, 1, 2, 3, 4, 5]
    assert terrain_levels("Extreme", extra=2) == 7
    with pytest.raises(ValueError, match="unknown terrain 'lava'"):
        terrain_levels("lava")
    with pytest.raises(ValueError, match="only Extreme"):
        terrain_levels("rough", extra=1)


def test_r6_11_movement_test_table() -> None:
    """R6-11: up to Move no test; 2x Easy, 3x Standard, 4x Moderate, 5x Difficult, 6x Very Difficult."""
    move = 5
    assert movement_test_level(5, move) is None
    assert movement_test_level(6, move) == "easy"
    assert movement_test_level(10, move) == "easy"
    assert movement_test_level(11, move) == "standard"
    assert movement_test_level(20, move) == "moderate"
    assert movement_test_level(25, move) == "difficult"
    assert movement_test_level(30, move) == "very difficult"
    with pytest.raises(ValueError, match="more than 6x Move"):
        movement_test_level(31, move)


def test_r6_11_running_up_to_twice_move_is_a_basic_action() -> None:
    """R6-11: up to 2x Move is a basic Action, farther a Full Action."""
    assert run_action_kind(10, 5) == "action"
    assert run_action_kind(11, 5) == "full"


def test_r6_12_swimming_and_climbing_moves() -> None:
    """R6-12: swim at half Move rounded up; climb at Move with the specialisation, else half."""
    assert swim_move(5) == 3 and swim_move(6) == 3
    assert climb_move(5, specialised=True) == 5
    assert climb_move(5, specialised=False) == 3
    assert climb_move(5, specialised=False, rounding="down") == 2


def test_r6_12_jump_distance() -> None:
    """R6-12: 1 Space + 1 per 2 Result Points, at most +6; running start of half Move."""
    assert jump_spaces(True, 0) == 1
    assert jump_spaces(True, 3) == 2
    assert jump_spaces(True, 4) == 3
    assert jump_spaces(True, 40) == 7
    assert jump_spaces(False, 0) == 0
    assert has_running_start(3, 5) and has_running_start(3, 6) and not has_running_start(2, 5)


def test_r6_12_holding_breath() -> None:
    """R6-12: 10 x Fortitude dice seconds; prepared 5 x the test's result minutes."""
    assert breath_seconds("3D+2") == 30
    assert prepared_breath_minutes(14) == 70


def test_r6_12_strenuous_rounds() -> None:
    """R6-12: Fortitude-dice rounds free, then a test each round one level harder."""
    assert strenuous_streak(0, 0, 1) == 1
    assert strenuous_streak(1, 1, 2) == 2
    assert strenuous_streak(2, 2, 2) == 2
    assert strenuous_streak(3, 1, 3) == 1
    assert strenuous_test_steps(3, "3D") is None
    assert strenuous_test_steps(4, "3D+1") == 0
    assert strenuous_test_steps(6, "3D") == 2
