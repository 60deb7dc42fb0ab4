"""Rolling RonD6 tests and damage for a combatant, with every penalty named.

A test's die code is the skill (or attribute) code adjusted by dice modifiers:
the multiple-action penalty (R6-05, actions only), Wounds (R6-21, all tests),
Stunned and Fatigued (R6-21/22, physical tests), and the option bonuses
(All-Out Attack +2D ...). The net adjustment never takes a code below 1D
(R6-05). Flat modifiers (range, prone, Confused -5 ...) are `Modifier`s added
to the total. Each dice modifier is listed in ``Roll.details["dice_modifiers"]``
with its source and rule ID, and as a note, so the audit log explains it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import msgspec

from firelane.engine.dice import Dice
from firelane.engine.systems.rond6 import rules
from firelane.engine.systems.rond6.pools import DieCode, as_code, roll_pool
from firelane.engine.systems.rond6.state import RonD6Combatant, Weapon
from firelane.events.schemas import Modifier, Roll


class DiceMod(NamedTuple):
    """A change to a roll's number of dice (negative: a penalty)."""

    source: str
    rule: str
    dice: int

    def as_dict(self) -> dict[str, Any]:
        return {"source": self.source, "rule": self.rule, "dice": self.dice}


def dice_mods_from(raw: Sequence[Any]) -> list[DiceMod]:
    """Dice modifiers back from a continuation (lists or dicts)."""
    mods = []
    for item in raw:
        if isinstance(item, Mapping):
            mods.append(DiceMod(item["source"], item["rule"], int(item["dice"])))
        else:
            mods.append(DiceMod(str(item[0]), str(item[1]), int(item[2])))
    return mods


def flat_mods_from(raw: Sequence[Any]) -> list[Modifier]:
    return [m if isinstance(m, Modifier) else msgspec.convert(m, Modifier) for m in raw]


def condition_dice_mods(combatant: RonD6Combatant, skill: str, *, action_penalty: int = 0) -> list[DiceMod]:
    """The dice penalties a combatant's state puts on a test of ``skill``."""
    mods: list[DiceMod] = []
    if action_penalty > 0:
        mods.append(DiceMod(f"multiple actions ({action_penalty + 1} declared)", rules.R_MULTI, -action_penalty))
    conscious_incapacitated = "incapacitated" in combatant.conditions
    wound_dice = rules.wound_penalty_dice(combatant.wounds, conscious_incapacitated)
    if wound_dice:
        label = "Incapacitated" if wound_dice == 3 else f"{combatant.wounds} Wound{'s' if combatant.wounds > 1 else ''}"
        mods.append(DiceMod(label, rules.R_INJURY, -wound_dice))
    if rules.is_physical(skill):
        if "stunned" in combatant.conditions:
            mods.append(DiceMod("Stunned (physical test)", rules.R_CONDITIONS, -1))
        if combatant.fatigue > 0:
            mods.append(DiceMod(f"Fatigued x{combatant.fatigue} (physical test)", rules.R_CONDITIONS, -combatant.fatigue))
    return mods


def condition_flat_mods(combatant: RonD6Combatant) -> list[Modifier]:
    if "confused" in combatant.conditions:
        return [Modifier(source="Confused", rule=rules.R_CONDITIONS, value=-5)]
    return []


def adjusted(code: DieCode, mods: Sequence[DiceMod]) -> DieCode:
    """The code after the net dice adjustment, never below 1D for a penalty (R6-05)."""
    return rules.reduce_code(code, -sum(m.dice for m in mods))


def _annotate(roll: Roll, base: DieCode, mods: Sequence[DiceMod], extra: Mapping[str, Any]) -> Roll:
    details = dict(roll.details)
    details["base_code"] = str(base)
    details["dice_modifiers"] = [m.as_dict() for m in mods]
    details.update(extra)
    notes = list(roll.notes)
    for m in mods:
        notes.append(f"{m.dice:+d}D {m.source} ({m.rule})")
    floored = as_code(details["code"])
    if mods and floored.total_pips() > base.total_pips() + sum(m.dice for m in mods) * 3:
        notes.append(f"never below 1D ({rules.R_MULTI}): rolled {floored}")
    return msgspec.structs.replace(roll, details=details, notes=notes)


def roll_test(
    dice: Dice,
    settings: Mapping[str, Any],
    combatant: RonD6Combatant,
    skill: str,
    *,
    purpose: str,
    rule: str,
    target: int | None = None,
    action_penalty: int = 0,
    dice_mods: Sequence[DiceMod] = (),
    flat: Sequence[Modifier] = (),
    extra_wild_dice: int = 0,
    details: Mapping[str, Any] | None = None,
) -> Roll:
    """Roll a skill (or attribute) test for ``combatant`` with all its penalties."""
    base, source = rules.skill_code(
        combatant.attributes, combatant.skills, skill, untrained="untrained" in combatant.conditions
    )
    mods = [*condition_dice_mods(combatant, skill, action_penalty=action_penalty), *dice_mods]
    modifiers = [*flat, *condition_flat_mods(combatant)]
    notes = ["Untrained (R6-22): attribute only"] if "untrained" in combatant.conditions and source.startswith("attribute") else []
    roll = roll_pool(
        dice,
        adjusted(base, mods),
        purpose=purpose,
        rule=rule,
        stymied="stymied" in combatant.conditions,
        modifiers=modifiers,
        complication_rule=settings.get("complication_rule", "remove"),
        target=target,
        extra_wild_dice=extra_wild_dice,
        notes=notes,
    )
    return _annotate(roll, base, mods, {"skill": skill, "from": source, **(details or {})})


def weapon_damage_code(combatant: RonD6Combatant, weapon: Weapon) -> DieCode:
    """A weapon's damage code; ``STR+1D`` adds the wielder's Strength code."""
    text = weapon.damage.replace(" ", "").upper()
    if text.startswith("STR"):
        strength = as_code(combatant.attributes.get("Strength", "2D"))
        rest = text[3:]
        if not rest:
            return strength
        sign = -1 if rest[0] == "-" else 1
        bonus = as_code(rest.lstrip("+-"))
        return strength.add_pips(sign * bonus.total_pips())
    return as_code(text)


def roll_damage(
    dice: Dice,
    settings: Mapping[str, Any],
    combatant: RonD6Combatant,
    weapon: Weapon,
    *,
    dice_mods: Sequence[DiceMod] = (),
    flat: Sequence[Modifier] = (),
    rule: str = rules.R_DAMAGE,
) -> Roll:
    """A damage roll: never reduced by multiple actions or Wounds (R6-05), but
    by the option penalties (Sweep -3D ...), never below 1D."""
    base = weapon_damage_code(combatant, weapon)
    roll = roll_pool(
        dice,
        adjusted(base, dice_mods),
        purpose=f"damage ({weapon.name or weapon.id})",
        rule=rule,
        wild=bool(settings.get("wild_die_on_damage", True)),
        stymied="stymied" in combatant.conditions,
        modifiers=flat,
        complication_rule=settings.get("complication_rule", "remove"),
    )
    return _annotate(roll, base, dice_mods, {"weapon": weapon.id})
