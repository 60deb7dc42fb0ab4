"""R6-25 breaking objects: the Toughness table and structural damage (pure rules)."""

from __future__ import annotations

import pytest

from firelane.engine.systems.rond6.objects import (
    OBJECT_TOUGHNESS,
    object_toughness,
    static_toughness,
    structural_damage,
)
from firelane.engine.systems.rond6.pools import DieCode


def test_r6_25_toughness_table() -> None:
    """R6-25: Flimsy 1D, Tough 2D, Sturdy 3D, Very Sturdy 4D, Reinforced 6D."""
    assert {name: str(code) for name, code in OBJECT_TOUGHNESS.items()} == {
        "flimsy": "1D", "tough": "2D", "sturdy": "3D", "very sturdy": "4D", "reinforced": "6D",
    }
    assert object_toughness("Very_Sturdy") == DieCode(4)
    assert object_toughness("flimsy", override="2D+1") == DieCode(2, 1)
    with pytest.raises(ValueError, match="unknown construction 'paper'"):
        object_toughness("paper")


def test_r6_25_static_toughness_is_dice_times_four() -> None:
    """R6-25 (house default static): DR Total = Toughness dice x 4 + pips."""
    assert static_toughness(DieCode(3)) == 12
    assert static_toughness(DieCode(6)) == 24
    assert static_toughness(DieCode(2, 1)) == 9


def test_r6_25_one_level_per_result_point() -> None:
    """R6-25: damage below the DR Total does nothing; else one level per Result Point (min 1)."""
    assert structural_damage(11, 12, result_points=5) == 0
    assert structural_damage(12, 12, result_points=4) == 4
    assert structural_damage(20, 12, result_points=0) == 1
    assert structural_damage(20, 12, result_points=0, minimum=0) == 0
