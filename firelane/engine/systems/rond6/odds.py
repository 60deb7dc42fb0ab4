"""Exact odds of a RonD6 pool (R6-01), as `pools.roll_pool` rolls it: the Wild
Die first, exploding on each 6 (not when Stymied), a 1 on its first face a
complication handled by the ``complication_rule`` ("remove": it and the
highest other die are removed; "remove_wild": only it; "keep": it counts),
the other dice plain d6, each extra Wild Die (Character Points) a pool of its
own; pips and flat modifiers added.

The distribution is computed, not sampled: the plain dice by convolution, the
"sum less the highest die" of a complication by a walk over (sum, highest),
the explosion chain as a geometric series cut where what is left of it is
below `TRUNCATION` (1e-12): the chance of 16 sixes in a row. Opposed rolls
convolve both sides.

Pure, bottom floor: imports only `pools`.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping
from functools import lru_cache

from firelane.engine.systems.rond6.pools import DieCode

Distribution = dict[int, float]

TRUNCATION = 1e-12
TRUNCATION_NOTE = "exact from the dice; the Wild Die's explosions cut where less than 1e-12 of the chance is left"


def _convolve(a: Mapping[int, float], b: Mapping[int, float]) -> Distribution:
    out: Distribution = {}
    for x, p in a.items():
        for y, q in b.items():
            out[x + y] = out.get(x + y, 0.0) + p * q
    return out


def plain_dice(count: int) -> Distribution:
    """The sum of ``count`` plain d6."""
    total: Distribution = {0: 1.0}
    die = {face: 1 / 6 for face in range(1, 7)}
    for _ in range(count):
        total = _convolve(total, die)
    return total


def sum_less_highest(count: int) -> Distribution:
    """The sum of ``count`` plain d6 less the highest of them (0 for no dice)."""
    if count == 0:
        return {0: 1.0}
    states: dict[tuple[int, int], float] = {(0, 0): 1.0}
    for _ in range(count):
        following: dict[tuple[int, int], float] = {}
        for (total, highest), p in states.items():
            for face in range(1, 7):
                key = (total + face, max(highest, face))
                following[key] = following.get(key, 0.0) + p / 6
        states = following
    out: Distribution = {}
    for (total, highest), p in states.items():
        out[total - highest] = out.get(total - highest, 0.0) + p
    return out


def explosion_chain() -> Distribution:
    """What a Wild Die that showed 6 adds on top of it: rerolls while they show 6."""
    out: Distribution = {}
    sixes, weight = 0, 1.0
    while weight >= TRUNCATION:
        for face in range(1, 6):
            out[6 * sixes + face] = out.get(6 * sixes + face, 0.0) + weight / 6
        sixes, weight = sixes + 1, weight / 6
    return out


def wild_alone(stymied: bool, complication_rule: str) -> Distribution:
    """One Wild Die in a pool of its own (an extra Wild Die from a Character Point)."""
    out: Distribution = {face: 1 / 6 for face in range(2, 6)}
    out[1 if complication_rule == "keep" else 0] = out.get(1 if complication_rule == "keep" else 0, 0.0) + 1 / 6
    if stymied:
        out[6] = out.get(6, 0.0) + 1 / 6
    else:
        for extra, p in explosion_chain().items():
            out[6 + extra] = out.get(6 + extra, 0.0) + p / 6
    return out


def pool_faces(dice: int, *, wild: bool = True, stymied: bool = False, complication_rule: str = "remove",
               extra_wild_dice: int = 0) -> Distribution:
    """The sum of the kept faces of a pool of ``dice`` d6 (pips and modifiers not included)."""
    return dict(_pool_faces(dice, wild, stymied, complication_rule, extra_wild_dice))


@lru_cache(maxsize=512)
def _pool_faces(dice: int, wild: bool, stymied: bool, complication_rule: str, extra_wild_dice: int) -> tuple[tuple[int, float], ...]:
    # Computed once for each kind of pool: the AI and the options ask for the same few pools again and again.
    if dice == 0 or not wild:
        total = plain_dice(dice)
    else:
        others = dice - 1
        rest = plain_dice(others)
        total = {}
        for face in range(2, 6):
            for value, p in rest.items():
                total[face + value] = total.get(face + value, 0.0) + p / 6
        six = {6: 1.0} if stymied else {6 + e: p for e, p in explosion_chain().items()}
        for value, p in _convolve(six, rest).items():
            total[value] = total.get(value, 0.0) + p / 6
        if complication_rule == "keep":
            one = {1 + v: p for v, p in rest.items()}
        elif complication_rule == "remove_wild":
            one = dict(rest)
        else:
            one = sum_less_highest(others)
        for value, p in one.items():
            total[value] = total.get(value, 0.0) + p / 6
    for _ in range(extra_wild_dice):
        total = _convolve(total, wild_alone(stymied, complication_rule))
    return tuple(sorted(total.items()))


def pool_total(code: DieCode, constant: int = 0, **pool: object) -> Distribution:
    """A pool's total: its kept faces, its pips and ``constant`` (the flat modifiers)."""
    shift = code.pips + constant
    return {value + shift: p for value, p in pool_faces(code.dice, **pool).items()}  # type: ignore[arg-type]


def chance_at_least(distribution: Mapping[int, float], target: int) -> float:
    """The chance of a total of at least ``target`` (how a RonD6 test succeeds)."""
    return min(1.0, sum(p for value, p in distribution.items() if value >= target))


def opposed_chance(attack: Mapping[int, float], defense: Mapping[int, float]) -> float:
    """The chance the attack's total reaches the defense's rolled total (ties go to the attacker)."""
    ordered = sorted(attack.items())
    # at_least[i]: the chance of a total of at least ordered[i]'s value (a running sum from the top).
    at_least = [0.0] * (len(ordered) + 1)
    for index in range(len(ordered) - 1, -1, -1):
        at_least[index] = at_least[index + 1] + ordered[index][1]
    values = [value for value, _p in ordered]
    chance = 0.0
    for target, q in defense.items():
        chance += q * at_least[bisect_left(values, target)]
    return min(1.0, chance)
