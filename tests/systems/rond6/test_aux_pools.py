"""R6-01 dice pools: die codes, the Wild Die, complications, Stymied, the difficulty ladder."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from firelane.engine.dice import FixedDice
from firelane.engine.systems.rond6.pools import (
    DIFFICULTY_LADDER,
    DieCode,
    as_code,
    difficulty,
    result_points,
    roll_pool,
)
from firelane.events.schemas import Modifier


# ----------------------------------------------------------------- die codes


def test_r6_01_die_code_parse_and_print() -> None:
    """R6-01: die codes like 3D+2; three pips make a die."""
    assert DieCode.parse("3D+2") == DieCode(3, 2)
    assert str(DieCode.parse("3D+2")) == "3D+2"
    assert DieCode.parse("4d") == DieCode(4, 0)
    assert str(DieCode(4)) == "4D"
    assert DieCode.parse(" 2D + 1 ") == DieCode(2, 1)
    # Out-of-range pips are normalised: 4D-1 is 3D+2, 2D+4 is 3D+1.
    assert DieCode.parse("4D-1") == DieCode(3, 2)
    assert DieCode.parse("2D+4") == DieCode(3, 1)
    assert DieCode.parse("0D+2") == DieCode(0, 2)


@pytest.mark.parametrize("bad", ["", "3", "D+2", "3D+", "3X", "three dice", "0D-1", "-1D"])
def test_r6_01_bad_die_codes_are_refused_clearly(bad: str) -> None:
    """R6-01: a malformed die code raises ValueError naming the text."""
    with pytest.raises(ValueError, match="die code|less than 0D"):
        DieCode.parse(bad)


def test_r6_01_unnormalised_struct_is_refused() -> None:
    """R6-01: a DieCode keeps 0..2 pips; more is refused with a hint."""
    with pytest.raises(ValueError, match="0..2 pips"):
        DieCode(3, 3)
    with pytest.raises(ValueError, match="negative"):
        DieCode(-1, 0)


def test_r6_01_pip_arithmetic_three_pips_make_a_die() -> None:
    """R6-01: adding pips carries into dice; taking them away borrows."""
    assert DieCode(3, 2).add_pips(1) == DieCode(4, 0)
    assert DieCode(3, 2).add_pips(2) == DieCode(4, 1)
    assert DieCode(4, 0).add_pips(-1) == DieCode(3, 2)
    assert DieCode(2, 1).add_dice(2) == DieCode(4, 1)
    assert DieCode(3, 2).total_pips() == 11
    assert DieCode.from_pips(11) == DieCode(3, 2)
    assert as_code("2D+1") == DieCode(2, 1) and as_code(3) == DieCode(3) and as_code(DieCode(1)) == DieCode(1)


def test_r6_01_minus_dice_never_below_one_die() -> None:
    """R6-01/R6-05: penalties in dice never take a pool below 1D."""
    assert DieCode(4, 1).minus_dice(2) == DieCode(2, 1)
    assert DieCode(2, 2).minus_dice(1) == DieCode(1, 2)
    assert DieCode(2, 2).minus_dice(2) == DieCode(1, 0)
    assert DieCode(3, 0).minus_dice(5) == DieCode(1, 0)
    assert DieCode(3, 0).minus_dice(5, floor=0) == DieCode(0, 0)
    # A pool already under the floor is not raised by a penalty.
    assert DieCode(0, 2).minus_dice(1) == DieCode(0, 2)


# ----------------------------------------------------------------- rolling


def test_r6_01_plain_roll_adds_dice_and_pips() -> None:
    """R6-01: 3D+2 with faces 4 (wild), 2, 5 totals 13; the pips are a Modifier with rule R6-01."""
    roll = roll_pool(FixedDice([4, 2, 5]), DieCode(3, 2), purpose="test", rule="R6-01")
    assert roll.total == 13
    assert [d.face for d in roll.dice] == [4, 2, 5]
    assert roll.kept == [0, 1, 2]
    assert roll.modifiers == [Modifier(source="pips (3D+2)", rule="R6-01", value=2)]
    assert roll.details["wild_index"] == 0
    assert roll.details["wild_die"] == [4]
    assert roll.details["exploded"] == 0
    assert roll.details["complication"] is False
    assert roll.success is None


def test_r6_01_wild_die_six_explodes_and_chains() -> None:
    """R6-01: the Wild Die (first die) shows 6: rerolled and added, again on each 6."""
    # 3D+2: wild 6, normal 4 and 2, then the explosion rerolls 6 and 5.
    roll = roll_pool(FixedDice([6, 4, 2, 6, 5]), "3D+2", purpose="test", rule="R6-01", target=15)
    assert roll.total == 6 + 4 + 2 + 6 + 5 + 2 == 25
    assert roll.details["wild_die"] == [6, 6, 5]
    assert roll.details["exploded"] == 2
    assert roll.kept == [0, 1, 2, 3, 4]
    assert roll.success is True and roll.target == 15
    assert roll.details["result_points"] == 10 == result_points(roll)


def test_r6_01_a_six_on_a_normal_die_does_not_explode() -> None:
    """R6-01: only the Wild Die explodes."""
    roll = roll_pool(FixedDice([3, 6, 6]), "3D", purpose="test", rule="R6-01")
    assert roll.total == 15 and len(roll.dice) == 3 and roll.details["exploded"] == 0


def test_r6_01_complication_removes_the_one_and_the_highest_other_die() -> None:
    """R6-01 (house default "remove"): a 1 on the Wild Die removes it and the highest other die."""
    roll = roll_pool(FixedDice([1, 4, 5, 2]), "4D+1", purpose="test", rule="R6-01", target=10)
    assert roll.details["complication"] is True
    assert roll.details["removed"] == [0, 2]
    assert roll.kept == [1, 3]
    assert roll.total == 4 + 2 + 1 == 7
    assert roll.success is False and roll.details["result_points"] == 0


def test_r6_01_complication_ties_remove_the_first_highest() -> None:
    """R6-01: with two equal highest dice, only one (the earlier) is removed."""
    roll = roll_pool(FixedDice([1, 5, 5]), "3D", purpose="test", rule="R6-01")
    assert roll.details["removed"] == [0, 1] and roll.total == 5


def test_r6_01_complication_on_a_single_die_removes_only_the_wild_die() -> None:
    """R6-01: 1D+2 whose Wild Die shows 1 keeps only the pips."""
    roll = roll_pool(FixedDice([1]), "1D+2", purpose="test", rule="R6-01")
    assert roll.total == 2 and roll.kept == [] and roll.details["removed"] == [0]


def test_r6_01_complication_rule_keep_only_flags() -> None:
    """R6-01 setting complication_rule="keep": every die counts, the complication is flagged."""
    roll = roll_pool(FixedDice([1, 4, 5]), "3D", purpose="test", rule="R6-01", complication_rule="keep")
    assert roll.total == 10 and roll.details["complication"] is True and roll.details["removed"] == []


def test_r6_01_complication_rule_remove_wild() -> None:
    """R6-01 setting complication_rule="remove_wild": only the 1 is removed."""
    roll = roll_pool(FixedDice([1, 4, 5]), "3D", purpose="test", rule="R6-01", complication_rule="remove_wild")
    assert roll.total == 9 and roll.details["removed"] == [0]


def test_r6_01_unknown_complication_rule_is_refused() -> None:
    """R6-01: a misspelt complication rule is an error, not a silent default."""
    with pytest.raises(ValueError, match="unknown complication rule 'drop'"):
        roll_pool(FixedDice([3]), "1D", purpose="t", rule="R6-01", complication_rule="drop")


def test_r6_01_a_one_on_an_explosion_reroll_is_no_complication() -> None:
    """R6-01: only the Wild Die's first face can be a complication."""
    roll = roll_pool(FixedDice([6, 3, 1]), "2D", purpose="test", rule="R6-01")
    assert roll.total == 10 and roll.details["complication"] is False and roll.details["wild_die"] == [6, 1]


def test_r6_01_r6_22_stymied_loses_the_wild_die_reroll() -> None:
    """R6-01 / R6-22 Stymied: a 6 on the Wild Die is a plain 6, not rerolled."""
    dice = FixedDice([6, 4, 2, 6])
    roll = roll_pool(dice, "3D+2", purpose="test", rule="R6-01", stymied=True)
    assert roll.total == 6 + 4 + 2 + 2 == 14
    assert dice.remaining == 1  # the reroll was never made
    assert roll.details["exploded"] == 0 and roll.details["stymied"] is True
    assert any("Stymied" in note for note in roll.notes)


def test_r6_01_without_wild_die_nothing_explodes_or_complicates() -> None:
    """R6-01: wild=False rolls plain dice."""
    roll = roll_pool(FixedDice([6, 1]), "2D", purpose="damage", rule="R6-19", wild=False)
    assert roll.total == 7 and roll.details["wild_index"] is None and roll.details["complication"] is False


def test_r6_01_modifiers_add_to_the_total() -> None:
    """R6-01: modifiers add with their source and rule ID."""
    bonus = Modifier(source="point blank", rule="R6-14", value=5)
    roll = roll_pool(FixedDice([3, 3]), "2D+1", purpose="attack", rule="R6-13", modifiers=[bonus], target=15)
    assert roll.total == 3 + 3 + 1 + 5 == 12
    assert roll.modifiers[1] == bonus
    assert roll.success is False


def test_r6_20_extra_wild_dice_follow_the_normal_wild_die_rules() -> None:
    """R6-01/R6-20: Character Point dice are rolled "applying the normal Wild Die rules":
    each explodes on a 6, and a 1 is a complication. Each is rolled separately, a pool
    of its own, so the complication ("remove", house default) removes that 1 alone:
    2 + 3 + (6 + 4) + (1 removed) = 15."""
    roll = roll_pool(FixedDice([2, 3, 6, 4, 1]), "2D", purpose="dr", rule="R6-20", extra_wild_dice=2)
    assert roll.total == 2 + 3 + 6 + 4 == 15
    assert roll.details["extra_wild_dice"] == [[6, 4], [1]] and roll.details["extra_wild_complications"] == [4]
    assert roll.details["complication"] is True and roll.details["removed"] == [4] and roll.kept == [0, 1, 2, 3]
    assert "complication: extra Wild Die 2 shows 1 and is removed" in roll.notes
    kept = roll_pool(FixedDice([2, 3, 6, 4, 1]), "2D", purpose="dr", rule="R6-20", extra_wild_dice=2, complication_rule="keep")
    assert kept.total == 16 and kept.details["complication"] is True and kept.details["removed"] == []


def test_r6_20_a_one_on_an_extra_wild_dies_explosion_is_no_complication() -> None:
    """R6-01: only a Wild Die's first face can be a complication, an extra one's too."""
    roll = roll_pool(FixedDice([6, 1]), "0D", purpose="dr", rule="R6-20", extra_wild_dice=1)
    assert roll.total == 7 and roll.details["complication"] is False and roll.details["extra_wild_complications"] == []


def test_r6_20_stymied_extra_wild_dice_do_not_explode() -> None:
    """R6-22 Stymied "also applies to any Wild Dice gained from spending Character Points"."""
    roll = roll_pool(FixedDice([6]), "0D", purpose="dr", rule="R6-20", extra_wild_dice=1, stymied=True)
    assert roll.total == 6 and roll.details["extra_wild_dice"] == [[6]]


def test_r6_01_zero_dice_pool_is_just_the_pips() -> None:
    """R6-01: 0D+2 rolls nothing."""
    roll = roll_pool(FixedDice([]), "0D+2", purpose="test", rule="R6-01")
    assert roll.total == 2 and roll.dice == []


@given(
    dice_count=st.integers(min_value=1, max_value=6),
    pips=st.integers(min_value=0, max_value=2),
    faces=st.lists(st.integers(min_value=1, max_value=6), min_size=30, max_size=30),
)
def test_r6_01_total_is_kept_faces_plus_modifiers(dice_count: int, pips: int, faces: list[int]) -> None:
    """R6-01 property: the audit log can explain every total from kept faces and modifiers."""
    faces = [*faces[:dice_count], *(f for f in faces[dice_count:] if f != 6), 1]  # chains end
    roll = roll_pool(FixedDice(faces), DieCode(dice_count, pips), purpose="t", rule="R6-01")
    assert roll.total == sum(roll.dice[i].face for i in roll.kept) + sum(m.value for m in roll.modifiers)
    assert set(roll.kept).isdisjoint(roll.details["removed"])
    assert len(roll.kept) + len(roll.details["removed"]) == len(roll.dice)


# ----------------------------------------------------------------- difficulty


def test_r6_01_difficulty_ladder_defaults() -> None:
    """R6-01: Very Easy 5, Easy 10, Standard 15, Moderate 20, Difficult 25, Very Difficult 30, Heroic 35."""
    assert DIFFICULTY_LADDER == {
        "very easy": 5, "easy": 10, "standard": 15, "moderate": 20,
        "difficult": 25, "very difficult": 30, "heroic": 35,
    }
    assert difficulty("Standard") == 15
    assert difficulty("very_difficult") == 30
    assert difficulty("Very Easy") == 5


def test_r6_01_difficulty_steps_one_level_each() -> None:
    """R6-01: each Difficulty Level is one step; beyond Heroic +5 per step (house default)."""
    assert difficulty("standard", 1) == 20
    assert difficulty("easy", 3) == 25
    assert difficulty("heroic", 1) == 40
    assert difficulty("very difficult", 3) == 45
    assert difficulty("easy", -5) == 5
    assert difficulty(15, 2) == 25
    assert difficulty(17, 1) == 22  # off the ladder: 5 per step


def test_r6_01_difficulty_ladder_is_configurable() -> None:
    """R6-01: a custom ladder (argument or encounter settings) replaces the default."""
    ladder = {"easy": 6, "standard": 12, "hard": 18}
    assert difficulty("standard", 1, ladder) == 18
    assert difficulty("hard", 1, ladder) == 23
    assert difficulty("easy", 1, settings={"difficulty_ladder": ladder}) == 12
    with pytest.raises(ValueError, match="unknown difficulty 'impossible'"):
        difficulty("impossible")
