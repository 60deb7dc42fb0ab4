"""The pure arithmetic of d100-zones: zones, initiative order, attack results,
damage bonuses, first-aid healing, flanking and cover geometry.

Nothing here touches the encounter state; the action modules call these and
turn the results into events.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from firelane.engine.dice import Dice
from firelane.engine.grid import Square, direction, supercover_line
from firelane.engine.systems.percentile import DamageCode, never_below_zero
from firelane.events.schemas import CoverFeature, Die, InitiativeEntry, Modifier, Roll

# D100Z-02: zone bands by distance in metres (upper bounds, inclusive).
ZONES: tuple[tuple[str, float], ...] = (("engaged", 2.0), ("close", 15.0), ("far", 50.0), ("distant", math.inf))
ZONE_NAMES = tuple(name for name, _ in ZONES)
FREE_MOVE_M = 15.0   # D100Z-03: moving one zone (up to the Close band) comes with the attack
MAX_MOVE_M = 50.0    # D100Z-02: Far (2 actions: the free move and the action); Distant takes 3+

CRITICAL_AT_MOST = 10  # D100Z-04
FUMBLE_AT_LEAST = 90   # D100Z-04 / D100Z-05
INITIATIVE_LAST_AT = 90  # D100Z-01

COVER_MODIFIERS = {"soft": -10, "hard": -20}  # D100Z-09; "heavy" cannot be targeted
COVER_RANK = {"soft": 1, "hard": 2, "heavy": 3}
FLANKING_BONUS = 10  # D100Z-10, never more


def zone_of(metres: float) -> str:
    """D100Z-02: Engaged 0-2 m, Close 3-15 m, Far 16-50 m, Distant 51 m+."""
    for name, limit in ZONES:
        if metres <= limit:
            return name
    return "distant"  # pragma: no cover - the last band is unbounded


def zone_moves(metres: float) -> int:
    """How many zone moves a walk of ``metres`` takes: 0 within Engaged, 1 up to
    Close (15 m), 2 up to Far (50 m), 3 or more beyond (D100Z-02)."""
    if metres <= ZONES[0][1]:
        return 0
    if metres <= FREE_MOVE_M:
        return 1
    if metres <= MAX_MOVE_M:
        return 2
    return 3


# ---------------------------------------------------------------- initiative


def initiative_order(entries: Iterable[InitiativeEntry], speeds: dict[str, int]) -> list[str]:
    """D100Z-01: highest total first; a natural 90+ acts after everyone else.
    House default ties: higher SPD, then ID."""
    def key(entry: InitiativeEntry) -> tuple[int, int, int, str]:
        natural = entry.roll.dice[0].face if entry.roll and entry.roll.dice else 0
        return (natural >= INITIATIVE_LAST_AT, -entry.total, -speeds.get(entry.combatant, 0), entry.combatant)

    return [e.combatant for e in sorted(entries, key=key)]


# ---------------------------------------------------------------- attacks


def attack_outcome(face: int, target: int) -> str:
    """D100Z-04: "critical" (<= 10: auto-hit), "fumble" (90+: auto-miss with a
    complication), else "hit" when the face is at most the target, or "miss"."""
    if face <= CRITICAL_AT_MOST:
        return "critical"
    if face >= FUMBLE_AT_LEAST:
        return "fumble"
    return "hit" if face <= target else "miss"


def dodge_succeeds(face: int, target: int) -> bool:
    """D100Z-05: the dodge works on a roll <= DEX (with modifiers) that is not 90+."""
    return face <= target and face < FUMBLE_AT_LEAST


def brawling_bonus(skill: int) -> int:
    """D100Z-07: unarmed damage bonus: 50-69 +0, 70-89 +1, 90-100 +2 (below 50: +0, house default)."""
    if skill >= 90:
        return 2
    if skill >= 70:
        return 1
    return 0


def strength_bonus(strength: int) -> int:
    """D100Z-08 option: +1 melee/unarmed damage per full 10 STR above 50."""
    return max(0, (strength - 50) // 10)


def damage_roll(
    dice: Dice,
    code: DamageCode,
    *,
    weapon: str,
    bonuses: list[Modifier],
    critical: bool,
    dr: int,
    armour_name: str = "",
    purpose: str = "damage",
    rule: str = "D100Z-06",
) -> Roll:
    """D100Z-06: weapon dice + bonuses - DR; a critical doubles dice and bonuses
    before DR comes off (D100Z-04, D100Z-08). Never below 0."""
    faces: list[Die] = dice.roll_many(code.count, code.sides) if code.count else []
    terms: list[Modifier] = []
    if code.bonus:
        terms.append(Modifier(source=f"{weapon} ({code})", rule="D100Z-06", value=code.bonus))
    terms.extend(bonuses)
    before_doubling = sum(d.face for d in faces) + sum(m.value for m in terms)
    doubled = before_doubling * 2 if critical else before_doubling
    modifiers = list(terms)
    if critical:
        modifiers.append(Modifier(source="critical hit: double damage", rule="D100Z-04", value=doubled - before_doubling))
    if dr:
        modifiers.append(Modifier(source=f"armour DR {armour_name}".strip(), rule="D100Z-06", value=-dr))
    modifiers += never_below_zero(doubled - dr, "house default: damage never below 0")
    total = max(0, doubled - dr)
    details = {
        "code": str(code),
        "before_doubling": before_doubling,
        "after_doubling": doubled,
        "dr": dr,
        "formula": "(dice + bonuses) x 2 - DR" if critical else "dice + bonuses - DR",
    }
    return Roll(purpose=purpose, rule=rule, dice=faces, modifiers=modifiers, total=total, details=details)


# ---------------------------------------------------------------- first aid


def first_aid_skill_modifier(skill: int) -> int:
    """D100Z-14: heal = 1d10 + floor((skill - 50) / 10)."""
    return (skill - 50) // 10


# ---------------------------------------------------------------- geometry


def angle_at(centre: Square, a: Square, b: Square) -> float:
    """The angle in degrees at ``centre`` between the directions to ``a`` and to ``b``."""
    ax, ay = a[0] - centre[0], a[1] - centre[1]
    bx, by = b[0] - centre[0], b[1] - centre[1]
    return abs(math.degrees(math.atan2(ax * by - ay * bx, ax * bx + ay * by)))


def opposite_sides(target: Square, attacker: Square, ally: Square, min_angle: float) -> bool:
    """D100Z-10 house default: two engaged allies flank when the angle between them,
    seen from the target, is at least ``min_angle`` (135 degrees)."""
    return angle_at(target, attacker, ally) >= min_angle - 1e-9


def protects(feature: CoverFeature, cover_square: Square, attacker: Square) -> bool:
    """Whether a cover feature faces the attacker: no facing means every direction;
    otherwise one facing vector must point within 90 degrees of the attacker."""
    if not feature.facing:
        return True
    towards = direction(cover_square, attacker)
    return any(fx * towards[0] + fy * towards[1] > 0 for fx, fy in feature.facing)


def cover_between(cover_at: dict[Square, list[CoverFeature]], attacker: Square, target: Square) -> CoverFeature | None:
    """D100Z-09 house default geometry: the best cover feature on the target's
    square, or on a square next to the target that the line of fire crosses,
    that faces the attacker."""
    squares: list[Square] = [target]
    for step in supercover_line(target, attacker):
        pair = step if isinstance(step[0], tuple) else (step,)
        for square in pair:  # type: ignore[union-attr]
            if square != target and max(abs(square[0] - target[0]), abs(square[1] - target[1])) == 1:
                squares.append(square)  # type: ignore[arg-type]
    best: CoverFeature | None = None
    for square in squares:
        for feature in cover_at.get(square, []):
            if feature.level in COVER_RANK and protects(feature, square, attacker):
                if best is None or COVER_RANK[feature.level] > COVER_RANK[best.level]:
                    best = feature
    return best
