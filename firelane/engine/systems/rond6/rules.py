"""RonD6 combat math: pure functions and tables, no dice, no state changes.

Each function names the inventory rule it implements. The decisions that the
rule text leaves open are **house defaults**, listed in the system module's
``DEFAULT_SETTINGS`` and in docs/systems/rond6.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from firelane.engine.systems.rond6.pools import PIPS_PER_DIE, DieCode, as_code

# --------------------------------------------------------------------------- rule IDs

R_ROUND = "R6-02"
R_TIES = "R6-03"
R_LOSE_TURN = "R6-04"
R_MULTI = "R6-05"
R_LIMIT = "R6-06"
R_ACTION_TYPES = "R6-07"
R_WAIT = "R6-08"
R_ATTACK = "R6-13"
R_RANGE = "R6-14"
R_PASSIVE = "R6-15"
R_ACTIVE = "R6-16"
R_FULL_DEFENSE = "R6-17"
R_INTERACTION = "R6-18"
R_DAMAGE = "R6-19"
R_DR = "R6-20"
R_INJURY = "R6-21"
R_CONDITIONS = "R6-22"
R_MASSIVE = "R6-23"
R_ALL_OUT = "R6-24"
R_BURST_SINGLE = "R6-26"
R_CALLED = "R6-27"
R_CHARGE = "R6-28"
R_COORDINATED = "R6-29"
R_ESCAPE = "R6-30"
R_FULL_AUTO = "R6-31"
R_HEADS_DOWN = "R6-32"
R_LUNGE = "R6-33"
R_MULTI_WEAPON = "R6-34"
R_PRONE = "R6-35"
R_RAPID = "R6-36"
R_READY = "R6-37"
R_SURPRISE = "R6-38"
R_SWEEP = "R6-39"

# --------------------------------------------------------------------------- attributes and skills

ATTRIBUTES = ("Agility", "Strength", "Perception", "Stamina", "Presence", "Will Power", "Knowledge")
# Stunned and Fatigued hinder physical tests (R6-21/22): tests on these attributes.
PHYSICAL_ATTRIBUTES = frozenset({"Agility", "Strength", "Stamina"})

# The attribute a skill belongs to, for untrained rolls and the Untrained condition.
SKILL_ATTRIBUTE: dict[str, str] = {
    "dodge": "Agility",
    "firearms": "Agility",
    "missile_weapons": "Agility",
    "throwing": "Agility",
    "acrobatics": "Agility",
    "melee_weapons": "Strength",
    "fighting": "Strength",
    "athletics": "Strength",
    "fortitude": "Stamina",
    "resolve": "Will Power",
    "persuasion": "Presence",
    "search": "Perception",
    "medicine": "Knowledge",
}
COMBAT_SKILLS = ("firearms", "missile_weapons", "throwing", "melee_weapons", "fighting")


def skill_attribute(skill: str) -> str:
    """The attribute under a skill (``"athletics (climbing)"`` -> Strength)."""
    base = skill.split("(")[0].strip().lower()
    if base in SKILL_ATTRIBUTE:
        return SKILL_ATTRIBUTE[base]
    for attribute in ATTRIBUTES:
        if attribute.lower() == base:
            return attribute
    raise ValueError(f"unknown skill {skill!r}; known: {', '.join(sorted(SKILL_ATTRIBUTE))}")


def skill_code(
    attributes: Mapping[str, str], skills: Mapping[str, str], skill: str, *, untrained: bool = False
) -> tuple[DieCode, str]:
    """The die code a combatant rolls for ``skill`` and where it came from.

    A specialisation (``"athletics (maneuver)"``) falls back to the plain skill,
    then to the attribute. ``untrained`` (the Untrained condition, R6-22) rolls
    the attribute only. Attributes may be named directly (``"Strength"``).
    """
    attribute = skill_attribute(skill)
    if not untrained:
        base = skill.split("(")[0].strip().lower()
        for name in (skill.lower(), base):
            if name in skills:
                return as_code(skills[name]), f"skill {name}"
    return as_code(attributes.get(attribute, "2D")), f"attribute {attribute}"


def is_physical(skill: str) -> bool:
    return skill_attribute(skill) in PHYSICAL_ATTRIBUTES


# --------------------------------------------------------------------------- actions (R6-05..07)


def multi_action_penalty(actions: int) -> int:
    """R6-05: dice taken from every action when ``actions`` are declared (2: -1D ... 6: -5D)."""
    if actions < 1:
        raise ValueError(f"a round has at least one action, not {actions}")
    return actions - 1


def multi_action_limit(agility: DieCode | str, quickness_rank: int = 0, fate_point: bool = False) -> int:
    """R6-06: Agility's dice, +1 per Quickness rank (at most +3), doubled by a Fate Point."""
    limit = as_code(agility).dice + max(0, min(quickness_rank, 3))
    return limit * 2 if fate_point else limit


def reduce_code(code: DieCode, penalty_dice: int) -> DieCode:
    """Apply a dice penalty; never below 1D (R6-05) — and a bonus when negative."""
    if penalty_dice <= 0:
        return code.add_dice(-penalty_dice)
    return code.minus_dice(penalty_dice, floor=1)


# --------------------------------------------------------------------------- initiative (R6-02/03)


def initiative_tiebreak(
    talents: Mapping[str, int], agility: DieCode | str, best_combat_skill: DieCode | str
) -> list[int]:
    """R6-03: the tie-break values, highest first: Initiative Priority talent,
    Agility (in pips), best combat skill (in pips). The GM's last word is the
    house default fallback: combatant ID order."""
    priority = 1 if talents.get("Initiative Priority", 0) > 0 else 0
    return [priority, as_code(agility).total_pips(), as_code(best_combat_skill).total_pips()]


def initiative_order(entries: Sequence[tuple[str, int, Sequence[int]]]) -> list[str]:
    """Order (combatant, total, tiebreak) entries: highest total, then the
    tie-break values, then combatant ID (R6-03)."""
    ranked = sorted(entries, key=lambda e: (-e[1], [-v for v in e[2]], e[0]))
    return [combatant for combatant, _total, _tiebreak in ranked]


# --------------------------------------------------------------------------- defense (R6-14..17)

RANGE_BANDS = ("point_blank", "short", "medium", "long")
RANGE_MODIFIER: dict[str, int] = {"point_blank": 5, "short": 0, "medium": -5, "long": -10}


def range_band(distance: int, ranges: Sequence[int]) -> str | None:
    """R6-14: the band a target at ``distance`` spaces is in, or None beyond Long.

    Point Blank is 1 space (adjacent, or the same square); Short, Medium and
    Long run up to the weapon's three range values."""
    if distance <= 1:
        return "point_blank"
    if len(ranges) != 3:
        raise ValueError(f"a ranged weapon lists Short, Medium and Long ranges, not {list(ranges)}")
    for band, limit in zip(("short", "medium", "long"), ranges, strict=True):
        if distance <= limit:
            return band
    return None


def passive_defense(standard: int, passive_agility: int, bonus: int = 0) -> int:
    """R6-15: Standard difficulty + (Passive Agility - 2) + modifiers.
    Passive Agility is the Agility die code's number of dice (house default)."""
    return standard + passive_agility - 2 + bonus


# Which active defense skills cover which kind of attack (R6-16, R6-18).
DEFENSE_COVERS: dict[str, frozenset[str]] = {
    "dodge": frozenset({"ranged", "thrown", "melee", "unarmed"}),
    "melee_weapons": frozenset({"melee"}),  # Parry
    "fighting": frozenset({"unarmed"}),  # Block
    "resolve": frozenset({"intimidation", "taunt", "trick"}),
    "athletics (maneuver)": frozenset({"maneuver"}),
    "acrobatics (trick)": frozenset({"acrobatic_trick"}),
}
DEFENSE_NAMES: dict[str, str] = {"dodge": "dodge", "parry": "melee_weapons", "block": "fighting"}

# The reactions offered in windows: an Active Defense (R6-16, R6-18) by name and
# the skill it rolls; a Wait interruption (R6-08); spending Character or Fate
# Points against a hit (R6-20).
DEFENSE_REACTIONS: dict[str, str] = {
    "dodge": "dodge",
    "parry": "melee_weapons",
    "block": "fighting",
    "resolve": "resolve",
    "maneuver": "athletics (maneuver)",
    "acrobatics": "acrobatics (trick)",
}
INTERRUPT = "interrupt"
RESIST = "resist"


def defense_skill(name: str) -> str:
    """The skill behind a defense name: "dodge", "parry" (melee weapons),
    "block" (fighting), or a skill named directly."""
    key = name.strip().lower()
    skill = DEFENSE_NAMES.get(key, key)
    if skill not in DEFENSE_COVERS:
        raise ValueError(f"unknown defense {name!r}; known: dodge, parry, block, resolve, athletics (maneuver), acrobatics (trick)")
    return skill


def defenses_against(attack_kind: str) -> list[str]:
    """The active defense skills that work against an attack of this kind."""
    return [skill for skill, kinds in DEFENSE_COVERS.items() if attack_kind in kinds]


# --------------------------------------------------------------------------- damage (R6-19..21)


def static_value(code: DieCode | str, per_die: int = 4) -> int:
    """A die code as a static number: ``per_die`` per die plus pips (R6-20's
    "x 4"; pips add one each: house default)."""
    code = as_code(code)
    return code.dice * per_die + code.pips


def damage_resistance(
    strength: DieCode | str,
    armor: DieCode | str,
    *,
    bonus: int = 0,
    fate_point: bool = False,
    character_point_dice: int = 0,
    armor_per_die: int = 4,
) -> tuple[int, dict[str, int]]:
    """R6-20: Base Toughness (Strength x 4) + armour + specials; a Fate Point
    doubles Toughness and armour (not flat modifiers); Character Point Wild
    Dice (their rolled total) add on top. Returns (total, parts)."""
    toughness = static_value(strength, 4)
    armour = static_value(armor, armor_per_die)
    factor = 2 if fate_point else 1
    parts = {
        "toughness": toughness * factor,
        "armor": armour * factor,
        "bonus": bonus,
        "character_points": character_point_dice,
    }
    return sum(parts.values()), parts


def damage_outcome(damage: int, resistance: int) -> tuple[bool, int]:
    """R6-19: (stunned, wounds): less than DR -> nothing; equal or more ->
    Stunned; one Wound per full 6 points over."""
    if damage < resistance:
        return False, 0
    return True, (damage - resistance) // 6


def stun_damage_wounds(wounds: int, reduction: int = 2) -> int:
    """R6-22 Stun Damage: the Wounds are reduced by 2, to a minimum of Stunned (0 Wounds)."""
    return max(0, wounds - reduction)


INJURY_LEVELS = {0: "healthy", 1: "wounded", 2: "wounded", 3: "incapacitated", 4: "mortally wounded"}


def injury_level(wounds: int) -> str:
    """R6-21: the injury level of a Wound count (5 or more: dead)."""
    return INJURY_LEVELS.get(wounds, "dead") if wounds >= 0 else "healthy"


def wound_penalty_dice(wounds: int, incapacitated_conscious: bool = False) -> int:
    """R6-21: -1D per Wound for 1-2 Wounds; a conscious Incapacitated character
    (3 Wounds) has -3D in all (house default: the -3D replaces the per-Wound dice)."""
    if incapacitated_conscious or wounds >= 3:
        return 3
    return max(0, wounds)


# --------------------------------------------------------------------------- options (R6-26..39)


def coordinated_bonus_pips(participants: int) -> int:
    """R6-29: attack bonus for each participant: 2: +1, 3: +2, 4 or more: +1D (3 pips)."""
    if participants < 2:
        return 0
    return min(participants - 1, PIPS_PER_DIE)


MAX_COORDINATED = 4

# Called shot: location -> (attack modifier, extra damage dice, effect) — house
# default scale table (the text leaves the Scale numbers to the GM).
CALLED_SHOTS: dict[str, dict[str, Any]] = {
    "limb": {"modifier": -5, "damage_dice": 0, "effect": "hit on the chosen limb"},
    "head": {"modifier": -10, "damage_dice": 1, "effect": "hit to the head: +1D damage"},
    "vital": {"modifier": -10, "damage_dice": 1, "effect": "hit to a vital area: +1D damage"},
    "held_item": {"modifier": -10, "damage_dice": None, "effect": "the held item is shot from the hand (no damage)"},
}


# --------------------------------------------------------------------------- interaction attacks (R6-18)

# interaction -> (attack skill, defense skill)
INTERACTIONS: dict[str, tuple[str, str]] = {
    "intimidation": ("persuasion (intimidation)", "resolve"),
    "taunt": ("persuasion (taunt)", "resolve"),
    "trick": ("persuasion (trick)", "resolve"),
    "maneuver": ("athletics (maneuver)", "athletics (maneuver)"),
    "acrobatic_trick": ("acrobatics (trick)", "acrobatics (trick)"),
}

# result-point cost -> effects
INTERACTION_EFFECTS: dict[int, tuple[str, ...]] = {
    1: ("stymied",),
    2: ("fatigued",),
    3: ("untrained",),
    4: ("setback",),
    5: ("lose_action",),
    6: ("setback", "lose_action"),
}


def validate_effects(costs: Sequence[int], result_points: int) -> str | None:
    """Why a chosen set of effects is not allowed, or None (R6-18: each effect
    at most once per attack, total cost within the result points)."""
    if any(cost not in INTERACTION_EFFECTS for cost in costs):
        return f"interaction effects cost 1..6, not {list(costs)}"
    named = [name for cost in costs for name in INTERACTION_EFFECTS[cost]]
    if len(named) != len(set(named)):
        return "the same effect may not be applied twice in one interaction attack"
    if sum(costs) > result_points:
        return f"effects cost {sum(costs)} result points but the attack has {result_points}"
    return None


def choose_effects(result_points: int) -> list[int]:
    """House default: buy the dearest affordable effect first, then the dearest
    affordable one that does not repeat an effect, and so on."""
    chosen: list[int] = []
    left = result_points
    for cost in sorted(INTERACTION_EFFECTS, reverse=True):
        if cost <= left and validate_effects([*chosen, cost], result_points) is None:
            chosen.append(cost)
            left -= cost
    return chosen
