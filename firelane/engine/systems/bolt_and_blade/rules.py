"""Bolt & Blade rules math: pure functions, no state, no events.

Attribute modifiers (BB-CORE-02), proficiency by level (BB-CORE-03), d20 rolls
with Advantage/Disadvantage cancelling (BB-CORE-05), dice expressions and
critical damage (BB-CORE-12), range bands (BB-CORE-11), cover bonuses
(BB-CMB-04), opposed checks (BB-CORE-10) and the Return Fire exchange
(BB-CMB-14).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import msgspec

from firelane.engine.dice import Dice
from firelane.events.schemas import Die

ATTRIBUTES: tuple[str, ...] = ("strength", "agility", "toughness", "intellect", "willpower", "presence")

# BB-CORE-03 house default: +2 at levels 1-4, +1 every four levels after.
DEFAULT_PROFICIENCY_TABLE: tuple[tuple[int, int], ...] = ((1, 2), (5, 3), (9, 4), (13, 5), (17, 6))


def attribute_modifier(score: int) -> int:
    """BB-CORE-02 house default: floor((score - 10) / 2); scores may exceed 18."""
    return (score - 10) // 2


def proficiency_bonus(level: int, table: Sequence[Sequence[int]] = DEFAULT_PROFICIENCY_TABLE) -> int:
    """BB-CORE-03: the bonus for the highest table row whose level is reached."""
    if level < 1:
        raise ValueError(f"level must be at least 1, not {level}")
    bonus = table[0][1]
    for from_level, row_bonus in table:
        if level >= from_level:
            bonus = row_bonus
    return bonus


# ---------------------------------------------------------------- d20 with advantage


class D20Result(msgspec.Struct, frozen=True, kw_only=True):
    """The d20s rolled for one test and which one counts."""

    dice: list[Die]
    kept: int  # index into dice
    mode: str  # "normal", "advantage", "disadvantage", "cancelled"
    advantage: list[str] = []
    disadvantage: list[str] = []

    @property
    def natural(self) -> int:
        return self.dice[self.kept].face


def d20_mode(advantage: Sequence[str], disadvantage: Sequence[str]) -> str:
    """BB-CORE-05: any number of Advantage sources and any number of
    Disadvantage sources cancel out completely; one side alone decides."""
    if advantage and disadvantage:
        return "cancelled"
    if advantage:
        return "advantage"
    if disadvantage:
        return "disadvantage"
    return "normal"


def roll_d20(dice: Dice, advantage: Sequence[str] = (), disadvantage: Sequence[str] = ()) -> D20Result:
    """Roll one d20, or two keeping the higher (Advantage) or the lower (Disadvantage)."""
    mode = d20_mode(advantage, disadvantage)
    if mode in ("normal", "cancelled"):
        rolled = [dice.roll(20)]
        kept = 0
    else:
        rolled = [dice.roll(20), dice.roll(20)]
        first, second = rolled[0].face, rolled[1].face
        if mode == "advantage":
            kept = 0 if first >= second else 1
        else:
            kept = 0 if first <= second else 1
    return D20Result(dice=rolled, kept=kept, mode=mode, advantage=list(advantage), disadvantage=list(disadvantage))


def d20_notes(result: D20Result) -> list[str]:
    if result.mode == "cancelled":
        return [f"advantage ({', '.join(result.advantage)}) and disadvantage ({', '.join(result.disadvantage)}) cancel: one d20"]
    if result.mode == "advantage":
        return [f"advantage ({', '.join(result.advantage)}): kept the higher d20"]
    if result.mode == "disadvantage":
        return [f"disadvantage ({', '.join(result.disadvantage)}): kept the lower d20"]
    return []


# ---------------------------------------------------------------- dice expressions

_EXPRESSION = re.compile(r"^\s*(?:(\d+)\s*[dD]\s*(\d+))?\s*(?:([+-])\s*(\d+))?\s*$")


class DiceExpression(msgspec.Struct, frozen=True, kw_only=True):
    count: int
    sides: int
    bonus: int

    def __str__(self) -> str:
        text = f"{self.count}d{self.sides}" if self.count else ""
        if self.bonus:
            text += f"{self.bonus:+d}" if text else str(self.bonus)
        return text or "0"


def parse_dice(expression: str) -> DiceExpression:
    """Parse "2d6+3", "1d10", "3d8", "4" or "" (nothing)."""
    if expression.strip().isdigit():
        return DiceExpression(count=0, sides=0, bonus=int(expression))
    match = _EXPRESSION.match(expression)
    if match is None or (expression.strip() and not any(match.groups())):
        raise ValueError(f"not a dice expression: {expression!r} (expected e.g. '2d6+3')")
    count, sides, sign, bonus = match.groups()
    if count is not None and (int(count) < 1 or int(sides) < 1):
        raise ValueError(f"not a dice expression: {expression!r} (needs at least one die of at least one side)")
    value = int(bonus) if bonus else 0
    return DiceExpression(
        count=int(count) if count else 0,
        sides=int(sides) if sides else 0,
        bonus=-value if sign == "-" else value,
    )


def damage_dice_count(expression: DiceExpression, critical: bool) -> int:
    """BB-CORE-12: a Critical Hit rolls the damage dice twice (modifiers once)."""
    return expression.count * 2 if critical else expression.count


# ---------------------------------------------------------------- range, cover


def range_band(distance_ft: float, normal_ft: int, maximum_ft: int) -> str:
    """BB-CORE-11: "normal" within normal range, "long" (Disadvantage) up to the
    maximum, "out" beyond it (no attack)."""
    if distance_ft <= normal_ft:
        return "normal"
    if distance_ft <= maximum_ft:
        return "long"
    return "out"


def cover_bonus(level: str, bonuses: Mapping[str, int]) -> int:
    """BB-CMB-04: the Defense bonus of a cover level (light +2, heavy +5 by default)."""
    if level in ("none", "total"):
        return 0
    return int(bonuses[level])


def improved_cover(level: str, blocks_sight: bool) -> str:
    """BB-CMB-30: Take Cover improves cover one step: none -> light -> heavy, and
    heavy -> total only where the cover fully blocks line of sight."""
    if level == "none":
        return "light"
    if level == "light":
        return "heavy"
    if level == "heavy":
        return "total" if blocks_sight else "heavy"
    return level


# ---------------------------------------------------------------- opposed rolls


def opposed_winner(actor_total: int, defender_total: int, tie_goes_to: str = "defender") -> tuple[str, bool]:
    """BB-CORE-10: the higher total wins; a tie goes to ``tie_goes_to``
    ("defender", the side not acting, by house default, or "actor").
    Returns (winner, tie) with winner "actor" or "defender"."""
    if actor_total > defender_total:
        return "actor", False
    if defender_total > actor_total:
        return "defender", False
    return ("actor" if tie_goes_to == "actor" else "defender"), True


def exchange_outcome(
    attacker_total: int, attacker_hits: bool, defender_total: int, defender_hits: bool
) -> tuple[bool, bool, str]:
    """BB-CMB-14 Opposed Exchange: one hits -> it hits; both miss -> nothing;
    both hit -> the higher total hits, tied totals -> both hit.
    Returns (attacker lands, defender lands, outcome description)."""
    if attacker_hits and not defender_hits:
        return True, False, "only the attacker hits"
    if defender_hits and not attacker_hits:
        return False, True, "only the return fire hits"
    if not attacker_hits and not defender_hits:
        return False, False, "both miss"
    if attacker_total > defender_total:
        return True, False, "both hit: the attacker's higher total wins"
    if defender_total > attacker_total:
        return False, True, "both hit: the return fire's higher total wins"
    return True, True, "both hit with tied totals: both land"
