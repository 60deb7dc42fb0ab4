"""Weapon damage codes: ``"1d10+3"``, ``"2d6"``, ``"1d4-1"`` or a flat ``"8"``."""

from __future__ import annotations

from functools import lru_cache

import re

import msgspec

from firelane.engine.dice import Dice
from firelane.events.schemas import Die, Modifier, Roll

_CODE = re.compile(r"^\s*(?:(\d*)\s*[dD]\s*(\d+))?\s*(?:([+-])\s*(\d+))?\s*$")


class DamageCode(msgspec.Struct, frozen=True):
    count: int
    sides: int
    bonus: int = 0

    def __str__(self) -> str:
        dice = f"{self.count}d{self.sides}" if self.count else ""
        if not self.bonus:
            return dice or "0"
        sign = "+" if self.bonus > 0 else "-"
        return f"{dice}{sign}{abs(self.bonus)}" if dice else str(self.bonus)


def parse_damage(code: str) -> DamageCode:
    """Parse a damage code; raises ValueError with the offending text."""
    text = code.strip()
    if text.lstrip("+-").isdigit():
        return DamageCode(0, 0, int(text))
    match = _CODE.match(text)
    if not match or match.group(2) is None:
        raise ValueError(f"bad damage code {code!r}; expected e.g. '1d10+3', '2d6' or '8'")
    count = int(match.group(1) or 1)
    sides = int(match.group(2))
    if count < 1 or sides < 1:
        raise ValueError(f"bad damage code {code!r}: dice count and sides must be at least 1")
    bonus = int(match.group(4) or 0) * (-1 if match.group(3) == "-" else 1)
    return DamageCode(count, sides, bonus)


def never_below_zero(subtotal: int, rule: str, what: str = "damage") -> list[Modifier]:
    """The term that lifts a negative total to 0 (armour can stop a hit, never
    heal it), so the roll still adds up from its listed parts."""
    return [Modifier(source=f"{what} never below 0", rule=rule, value=-subtotal)] if subtotal < 0 else []


def roll_damage(
    dice: Dice,
    code: DamageCode,
    *,
    purpose: str,
    rule: str,
    weapon: str,
    modifiers: list[Modifier] | None = None,
    floor_rule: str = "house default: damage never below 0",
    notes: list[str] | None = None,
) -> tuple[Roll, int]:
    """Roll ``code`` and add its flat bonus and ``modifiers``; never below 0.

    Returns the `Roll` and the sum before the floor at 0. The code's own bonus
    shows as a modifier named after the weapon, and the lift to 0 (if any) as a
    modifier under ``floor_rule``, so the audit log can account for every point.
    """
    faces: list[Die] = dice.roll_many(code.count, code.sides) if code.count else []
    terms = list(modifiers or [])
    if code.bonus:
        terms.insert(0, Modifier(source=f"{weapon} damage bonus ({code})", rule=rule, value=code.bonus))
    subtotal = sum(d.face for d in faces) + sum(m.value for m in terms)
    terms += never_below_zero(subtotal, floor_rule)
    total = max(0, subtotal)
    details = {"code": str(code), "subtotal": subtotal}
    roll = Roll(purpose=purpose, rule=rule, dice=faces, modifiers=terms, total=total, notes=list(notes or []), details=details)
    return roll, subtotal


# ---------------------------------------------------------------- what a hit is worth (the AIs' scoring, issue 9)


@lru_cache(maxsize=1024)
def dice_sums(count: int, sides: int) -> tuple[tuple[int, float], ...]:
    """Every total of ``count`` d``sides`` with its exact chance."""
    sums = {0: 1.0}
    for _ in range(count):
        following: dict[int, float] = {}
        for total, chance in sums.items():
            for face in range(1, sides + 1):
                following[total + face] = following.get(total + face, 0.0) + chance / sides
        sums = following
    return tuple(sorted(sums.items()))


@lru_cache(maxsize=16384)
def hit_worth(damage: str, flat: int, left: int, down_bonus: float, multiple: int = 1, less: int = 0) -> float:
    """A hit of ``damage`` dice plus ``flat``, times ``multiple`` (a critical's
    doubling), less ``less`` (armour taken off after it), never below 0, on a
    target with ``left`` wounds or HP: the expected share of them it takes,
    plus ``down_bonus`` times the chance it takes them all."""
    code = parse_damage(damage)
    left = max(1, left)
    worth = 0.0
    for total, chance in dice_sums(code.count, code.sides):
        dealt = max(0, (total + code.bonus + flat) * multiple - less)
        worth += chance * (min(dealt, left) / left + (down_bonus if dealt >= left else 0.0))
    return worth


def mean_damage(damage: str) -> float:
    code = parse_damage(damage)
    return code.count * (code.sides + 1) / 2 + code.bonus
