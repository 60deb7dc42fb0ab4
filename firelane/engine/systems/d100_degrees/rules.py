"""The pure arithmetic of d100-degrees: tests, degrees of success, damage, jams,
arcs, and the names the other modules share (action costs, conditions, Evasions).

Nothing here touches the encounter state; the action modules call these and
turn the results into events. This is the package's bottom floor with
`state` and `data`: it imports nothing from the floors above.
"""

from __future__ import annotations

import math
from typing import Any

from firelane.engine.dice import Dice
from firelane.engine.grid import Square
from firelane.engine.systems.percentile import percentile_test, tens_digit
from firelane.events.schemas import Modifier, Roll

# D100D-01: the difficulty ladder the text uses.
DIFFICULTIES: dict[str, int] = {"challenging": 0, "difficult": -10, "hard": -20}
DIFFICULTY_LABELS: dict[str, str] = {"challenging": "Challenging (+0)", "difficult": "Difficult (-10)", "hard": "Hard (-20)"}

# House default for D100D-01; "per_full_10" is the alternative some tables use.
DEGREE_FORMULAS: dict[str, str] = {
    "tens_digits": "1 + tens digit of target - tens digit of roll",
    "per_full_10": "1 + floor((target - roll) / 10)",
}

SUPPRESSING_ARC_DEGREES = 30.0  # D100D-09: a forward-facing 30 degree arc

# D100D-02: what an action costs (the `ActionTaken` slot).
HALF, FULL = "half", "full"
ACTION_LABELS: dict[str, str] = {
    "move": "Move",
    "basic_attack": "Basic Attack",
    "all_out_attack": "All Out Attack",
    "controlled_fire": "Controlled Fire",
    "suppressing_fire": "Suppressing Fire",
    "clear_jam": "Clear Jam",
}
# Conditions: Pinned (D100D-09) and the no-Evasion mark of an All Out Attack (D100D-05).
PINNED = "pinned"
ALL_OUT = "all_out_attack"
# D100D-10: the Evasion reactions and the characteristic each one tests (label, sheet field).
DODGE, PARRY = "dodge", "parry"
EVASION_TEST: dict[str, tuple[str, str]] = {DODGE: ("Agility", "agility"), PARRY: ("Weapon Skill", "weapon_skill")}


def agility_bonus(agility: int) -> int:
    """House default: the Agility Bonus is the tens digit of the Agility characteristic (Ag 34 -> 3)."""
    return tens_digit(agility)


def degrees_of_success(roll: int, target: int, formula: str = "tens_digits") -> int:
    """Degrees of success of a successful test (roll <= target); at least 1."""
    if roll > target:
        raise ValueError(f"roll {roll} > target {target} is a failure, it has no degrees of success")
    if formula == "tens_digits":
        return 1 + tens_digit(target) - tens_digit(roll)
    if formula == "per_full_10":
        return 1 + (target - roll) // 10
    raise ValueError(f"unknown degrees formula {formula!r}; known: {', '.join(DEGREE_FORMULAS)}")


def degrees_of_failure(roll: int, target: int, formula: str = "tens_digits") -> int:
    """Degrees of failure of a failed test (roll > target), mirrored; at least 1."""
    if roll <= target:
        raise ValueError(f"roll {roll} <= target {target} is a success")
    if formula == "tens_digits":
        return max(1, 1 + tens_digit(roll) - tens_digit(target))
    if formula == "per_full_10":
        return 1 + (roll - target - 1) // 10
    raise ValueError(f"unknown degrees formula {formula!r}; known: {', '.join(DEGREE_FORMULAS)}")


def characteristic_test(
    dice: Dice,
    *,
    purpose: str,
    rule: str,
    characteristic: str,
    value: int,
    difficulty: str = "challenging",
    modifiers: list[Modifier] | None = None,
    formula: str = "tens_digits",
    details: dict[str, Any] | None = None,
) -> Roll:
    """A D100D-01 test: d100 <= characteristic + difficulty + modifiers, with its
    degrees of success (or failure) and the formula used in ``details``."""
    terms = [
        Modifier(source=characteristic, rule=rule, value=value),
        Modifier(source=DIFFICULTY_LABELS[difficulty], rule="D100D-01", value=DIFFICULTIES[difficulty]),
        *(modifiers or []),
    ]
    roll = percentile_test(dice, purpose=purpose, rule=rule, modifiers=terms, details=details)
    assert roll.target is not None
    extra: dict[str, Any] = {"degrees_formula": DEGREE_FORMULAS[formula]}
    if roll.success:
        extra["degrees_of_success"] = degrees_of_success(roll.total, roll.target, formula)
    else:
        extra["degrees_of_failure"] = degrees_of_failure(roll.total, roll.target, formula)
    return Roll(
        purpose=roll.purpose,
        rule=roll.rule,
        dice=roll.dice,
        modifiers=roll.modifiers,
        total=roll.total,
        target=roll.target,
        compare=roll.compare,
        success=roll.success,
        notes=roll.notes,
        details={**roll.details, **extra},
    )


def test_succeeded(roll: Roll) -> bool:
    """Whether a d100 test rolled at or under its target: the test's own
    success, which a jam (D100D-08, house default ``jam_misses``) does not
    undo even when it makes the shot miss."""
    return roll.target is not None and roll.total <= roll.target


def degrees(roll: Roll) -> int:
    """Degrees of success recorded on a test roll (0 for a failure)."""
    return int(roll.details.get("degrees_of_success", 0))


def jams(roll_face: int, rof: int) -> bool:
    """D100D-08: a Ballistic Skill roll >= 100 - RoF jams the weapon."""
    return roll_face >= 100 - rof


def jam_threshold(rof: int) -> int:
    return 100 - rof


def trade_degrees_for_targets(degrees_won: int, extra_targets_declared: int) -> tuple[int, int]:
    """D100D-04: the first degree makes the hit; each further two degrees may buy
    one more target in the declared chain. Returns (extra targets hit, degrees left for damage)."""
    spare = max(0, degrees_won - 1)
    extra_hit = min(extra_targets_declared, spare // 2)
    return extra_hit, spare - 2 * extra_hit


def in_arc(origin: Square, toward: Square, square: Square, arc_degrees: float = SUPPRESSING_ARC_DEGREES) -> bool:
    """Whether ``square``'s centre lies within the arc of ``arc_degrees`` centred on
    the line from ``origin`` to ``toward`` (boundary included)."""
    if square == origin:
        return False
    ax, ay = toward[0] - origin[0], toward[1] - origin[1]
    bx, by = square[0] - origin[0], square[1] - origin[1]
    angle = abs(math.degrees(math.atan2(ax * by - ay * bx, ax * bx + ay * by)))
    return angle <= arc_degrees / 2 + 1e-9
