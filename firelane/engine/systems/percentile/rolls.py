"""A percentile test: roll 1d100 and compare it, lower is better, with a target
built from named modifiers.

In both percentile systems the dice never change: a d100 shows 1..100 and the
modifiers move the *target* (the skill or characteristic), not the roll. So a
test's `Roll` lists the characteristic itself as its first modifier and every
bonus or penalty after it; ``target`` is their sum, ``total`` is the face shown
and ``compare`` is ``"<="``. ``details["target"]`` says so in words for the
audit log.
"""

from __future__ import annotations

from functools import lru_cache

from collections.abc import Callable, Iterable
from typing import Any

from firelane.engine.dice import Dice
from firelane.events.schemas import Modifier, Roll

D100 = 100


def tens_digit(value: int) -> int:
    """The tens digit of a roll or target: 47 -> 4, 5 -> 0, 100 -> 10.

    Targets above 100 keep counting (a target of 125 has tens digit 12), so a
    very high skill still earns more degrees of success.
    """
    return max(value, 0) // 10


def target_of(modifiers: Iterable[Modifier]) -> int:
    return sum(modifier.value for modifier in modifiers)


def percentile_test(
    dice: Dice,
    *,
    purpose: str,
    rule: str,
    modifiers: list[Modifier],
    notes: list[str] | None = None,
    details: dict[str, Any] | None = None,
) -> Roll:
    """Roll 1d100 against the sum of ``modifiers``; success when the face is <= it."""
    die = dice.roll(D100)
    target = target_of(modifiers)
    return Roll(
        purpose=purpose,
        rule=rule,
        dice=[die],
        modifiers=list(modifiers),
        total=die.face,
        target=target,
        compare="<=",
        success=die.face <= target,
        notes=list(notes or []),
        details={"target": "sum of the modifiers (characteristic first)", **(details or {})},
    )


def d100_chance(succeeds: Callable[[int], bool]) -> float:
    """The exact chance that a d100 face satisfies ``succeeds``: the faces 1..100
    that do, counted, over 100 (no sampling)."""
    return sum(1 for face in range(1, D100 + 1) if succeeds(face)) / D100


@lru_cache(maxsize=1024)
def chance_at_most(target: int) -> float:
    """The chance of a d100 face at or under ``target`` (a plain percentile test)."""
    return d100_chance(lambda face: face <= target)
