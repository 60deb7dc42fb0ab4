"""The helpers both percentile systems share: d100 tests, damage codes, grid paths."""

from __future__ import annotations

import pytest

from firelane.engine.dice import FixedDice
from firelane.engine.grid import Grid
from firelane.engine.systems.percentile import (
    DamageCode,
    parse_damage,
    path_error,
    percentile_test,
    roll_damage,
    shortest_path,
    step_path,
    tens_digit,
)
from firelane.events.schemas import Modifier, Terrain, Wall


def test_percentile_test_rolls_under_the_sum_of_its_modifiers() -> None:
    roll = percentile_test(FixedDice([47]), purpose="p", rule="R", modifiers=[Modifier(source="skill", rule="R", value=40), Modifier(source="bonus", rule="R", value=7)])
    assert (roll.total, roll.target, roll.compare, roll.success) == (47, 47, "<=", True)
    assert roll.dice[0].sides == 100 and roll.details["target"].startswith("sum of the modifiers")
    assert percentile_test(FixedDice([48]), purpose="p", rule="R", modifiers=[Modifier(source="s", rule="R", value=47)]).success is False
    assert [tens_digit(v) for v in (0, 5, 47, 100, 125, -3)] == [0, 0, 4, 10, 12, 0]


@pytest.mark.parametrize(("code", "parsed"), [
    ("1d10+3", DamageCode(1, 10, 3)), ("2d6", DamageCode(2, 6, 0)), ("d8", DamageCode(1, 8, 0)),
    ("1d4-1", DamageCode(1, 4, -1)), ("8", DamageCode(0, 0, 8)), (" 3D6 + 2 ", DamageCode(3, 6, 2)),
])
def test_damage_codes_parse(code: str, parsed: DamageCode) -> None:
    assert parse_damage(code) == parsed


@pytest.mark.parametrize("bad", ["", "lots", "0d6", "2d0", "1d6+", "d"])
def test_bad_damage_codes_are_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="bad damage code"):
        parse_damage(bad)


def test_roll_damage_sums_dice_bonus_and_modifiers_never_below_zero() -> None:
    roll, subtotal = roll_damage(FixedDice([4, 5]), parse_damage("2d6+1"), purpose="damage", rule="R", weapon="gun",
                                 modifiers=[Modifier(source="armour", rule="R", value=-3)])
    assert (roll.total, subtotal) == (7, 7) and [m.value for m in roll.modifiers] == [1, -3]
    roll, _ = roll_damage(FixedDice([1]), parse_damage("1d4"), purpose="d", rule="R", weapon="w", modifiers=[Modifier(source="a", rule="R", value=-5)])
    assert roll.total == 0
    roll, _ = roll_damage(FixedDice([]), parse_damage("8"), purpose="d", rule="R", weapon="w")
    assert roll.total == 8 and roll.dice == []


def test_paths_are_checked_and_found_deterministically() -> None:
    grid = Grid(Terrain(width=6, height=4, walls=[Wall(2, 0), Wall(2, 1), Wall(2, 2)]))
    assert path_error(grid, (0, 0), [(1, 0), (2, 0)], set()) == "step 2 to (2, 0) is blocked by a wall"
    assert path_error(grid, (0, 0), [(1, 1)], {(1, 1)}) == "step 1 to (1, 1) is occupied"
    assert path_error(grid, (0, 0), [], set()) == "the path is empty"
    assert path_error(grid, (0, 0), [(1, 1), (1, 2)], set()) is None
    path = shortest_path(grid, (0, 0), (4, 0), set())
    assert path == [(1, 1), (1, 2), (2, 3), (3, 2), (4, 1), (4, 0)]  # round the wall's open end
    assert path == shortest_path(grid, (0, 0), (4, 0), set())
    assert step_path(grid, (0, 0), lambda sq: sq == (0, 0), set()) == []
    assert step_path(grid, (0, 0), lambda sq: sq == (5, 0), {(1, 3), (2, 3)}) is None
