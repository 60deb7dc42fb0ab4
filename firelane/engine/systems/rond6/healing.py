"""RonD6 healing (R6-42 natural healing, R6-43 assisted healing): the pure rules.

Natural healing (R6-42): after the recovery time (Stunned 1 minute, Wounds 3
days per Wound, Incapacitated 2 weeks, Mortally Wounded 5 weeks) the character
makes a Stamina: Fortitude Test; one Difficulty Level higher if it did not
rest (strenuous activity, travel); +1D if it rested twice the recovery time.

| Result                  | Effect                    |
| Critical Failure        | one additional Wound      |
| Failure                 | no recovery               |
| Success                 | heal 1 Wound              |
| 2 or more Result Points | heal 2 Wounds (never more) |

Assisted healing (R6-43): a Medicine Test at Easy for a Stunned patient,
Standard for 1 Wound, one Difficulty Level more for each further Wound; a
success heals 1 Wound, 1 or more Result Points heal 2. A patient benefits from
one successful Assisted Healing per injury.

House defaults (configurable per encounter via ``EncounterSetup.settings``):

* ``natural_healing_difficulty`` = ``"standard"``: the text names no
  difficulty for the natural-healing test.
* ``critical_failure`` = ``"complication"``: a *Critical Failure* is a failed
  test whose Wild Die showed a 1 (a complication); ``"none"`` disables it.
* A successful healing test also ends Stunned (a Stunned-only character
  "heals" by losing it: it has no Wound to heal).
* Injury levels follow R6-21: 3 Wounds Incapacitated, 4 Mortally Wounded; a
  natural-healing test is timed by the worst current injury.
* "Once per injury" is tracked as a count of *treated Wounds*: after a
  successful assisted healing every Wound the patient still has counts as
  treated, so only a new Wound (or a Stunned state that was not treated) makes
  the patient eligible again.
* Wound penalties (-1D per Wound, R6-21) apply to the patient's own
  natural-healing test as to every test; the healer's Medicine test takes the
  healer's penalties.
"""

from __future__ import annotations

from typing import Any

import msgspec

from firelane.engine.core import SEQUENCER, Decision, next_command_id, require
from firelane.engine.seats import GM
from firelane.engine.dice import Dice
from firelane.engine.grid import distance
from firelane.engine.systems.rond6 import combat, rolling
from firelane.engine.systems.rond6.movement import require_acting
from firelane.engine.systems.rond6.pools import combatant_store, difficulty
from firelane.engine.systems.rond6.aux_schemas import R6Heal, R6Healed
from firelane.events.schemas import ConditionRemoved

RULE_NATURAL = "R6-42"
RULE_ASSISTED = "R6-43"

MINUTE = 1
HOUR = 60 * MINUTE
DAY = 24 * HOUR
WEEK = 7 * DAY

INCAPACITATED_WOUNDS = 3
MORTALLY_WOUNDED_WOUNDS = 4
MAX_WOUNDS_HEALED_PER_TEST = 2


class RecoveryTime(msgspec.Struct, frozen=True, kw_only=True):
    injury: str  # "stunned", "wounded", "incapacitated", "mortally wounded"
    minutes: int
    text: str


def injury_name(wounds: int, stunned: bool) -> str | None:
    if wounds >= MORTALLY_WOUNDED_WOUNDS:
        return "mortally wounded"
    if wounds >= INCAPACITATED_WOUNDS:
        return "incapacitated"
    if wounds >= 1:
        return "wounded"
    if stunned:
        return "stunned"
    return None


def recovery_time(wounds: int, stunned: bool = False) -> RecoveryTime | None:
    """R6-42: how long a character must rest before a natural-healing test (None: nothing to heal)."""
    injury = injury_name(wounds, stunned)
    if injury is None:
        return None
    if injury == "mortally wounded":
        return RecoveryTime(injury=injury, minutes=5 * WEEK, text="5 weeks")
    if injury == "incapacitated":
        return RecoveryTime(injury=injury, minutes=2 * WEEK, text="2 weeks")
    if injury == "wounded":
        return RecoveryTime(injury=injury, minutes=3 * DAY * wounds, text=f"{3 * wounds} days ({wounds} Wound(s) x 3 days)")
    return RecoveryTime(injury=injury, minutes=1 * MINUTE, text="1 minute")


class NaturalHealingPlan(msgspec.Struct, frozen=True, kw_only=True):
    """What a natural-healing test needs: difficulty steps and bonus dice."""

    ready: bool
    reason: str
    extra_steps: int = 0  # +1 Difficulty Level for not resting
    bonus_dice: int = 0  # +1D for resting twice the recovery time


def natural_healing_plan(recovery: RecoveryTime, rested_minutes: int, rested: bool = True) -> NaturalHealingPlan:
    """R6-42: can the test be made after ``rested_minutes``, and with which adjustments."""
    if rested_minutes < recovery.minutes:
        return NaturalHealingPlan(
            ready=False,
            reason=f"{recovery.injury} needs {recovery.text} of recovery ({recovery.minutes} minutes), only {rested_minutes} passed",
        )
    return NaturalHealingPlan(
        ready=True,
        reason="",
        extra_steps=0 if rested else 1,
        bonus_dice=1 if rested and rested_minutes >= 2 * recovery.minutes else 0,
    )


def natural_healing_outcome(success: bool, result_points: int, critical_failure: bool) -> int:
    """R6-42: the change in Wounds: +1 on a critical failure, 0 on a failure,
    -1 on a success, -2 with 2 or more Result Points (never more than 2)."""
    if not success:
        return 1 if critical_failure else 0
    return -MAX_WOUNDS_HEALED_PER_TEST if result_points >= 2 else -1


def assisted_healing_steps(wounds: int, stunned: bool) -> tuple[str, int]:
    """R6-43: the Medicine difficulty as (ladder level, extra steps): Stunned Easy,
    1 Wound Standard, +1 level per further Wound."""
    if wounds <= 0:
        if not stunned:
            raise ValueError("the patient is neither stunned nor wounded")
        return ("easy", 0)
    return ("standard", wounds - 1)


def assisted_healing_outcome(success: bool, result_points: int) -> int:
    """R6-43: Wounds healed: 0 on a failure, 1 on a success, 2 with 1 or more Result Points."""
    if not success:
        return 0
    return 2 if result_points >= 1 else 1


# ======================================================================= decisions

HEALING_DEFAULTS: dict[str, Any] = {
    "natural_healing_difficulty": "standard",
    "critical_failure": "complication",
    "healing_revives": True,
    "healing_reach": 1,
}
HEALING_KINDS = ("natural", "assisted")


def _setting(state: Any, key: str) -> Any:
    return state.settings.get(key, HEALING_DEFAULTS[key])


def treated_wounds(patient: Any) -> int:
    return int(combatant_store(patient).get("treated_wounds", 0))


def is_stunned(patient: Any) -> bool:
    return "stunned" in patient.conditions


def decide_heal(system: Any, decision: Decision, command: R6Heal, dice: Dice) -> None:
    state = decision.state
    require(command.kind in HEALING_KINDS, f"unknown healing {command.kind!r}; use 'natural' or 'assisted'")
    patient = system.require_combatant(state, command.patient)
    require(not getattr(patient, "dead", False), f"{patient.id} is dead; healing cannot help")
    require(patient.wounds > 0 or is_stunned(patient), f"{patient.id} is neither stunned nor wounded: nothing to heal")
    if command.kind == "natural":
        _natural(system, decision, command, patient, dice)
    else:
        _assisted(system, decision, command, patient, dice)


def _natural(system: Any, decision: Decision, command: R6Heal, patient: Any, dice: Dice) -> None:
    """R6-42: the patient's Stamina: Fortitude test after its recovery time (the GM's command)."""
    state = decision.state
    require(command.actor in (SEQUENCER, GM), "natural healing takes days: only the GM/sequencer orders it")
    recovery = recovery_time(patient.wounds, is_stunned(patient))
    assert recovery is not None
    plan = natural_healing_plan(recovery, command.rested_minutes, command.rested)
    require(plan.ready, plan.reason)
    target = difficulty(_setting(state, "natural_healing_difficulty"), plan.extra_steps, settings=state.settings)
    mods = [rolling.DiceMod("rested twice the recovery time", RULE_NATURAL, plan.bonus_dice)] if plan.bonus_dice else []
    flat_note = {"recovery": recovery.text, "rested_minutes": command.rested_minutes, "rested": command.rested}
    roll = rolling.roll_test(
        dice, state.settings, patient, "fortitude", purpose="natural healing", rule=RULE_NATURAL,
        target=target, dice_mods=mods, details=flat_note,
    )
    critical = (
        not roll.success
        and _setting(state, "critical_failure") == "complication"
        and bool(roll.details.get("complication"))
    )
    change = natural_healing_outcome(bool(roll.success), int(roll.details.get("result_points", 0)), critical)
    stunned_removed = bool(roll.success) and is_stunned(patient)
    wounds_after = max(0, patient.wounds + change)
    _emit_healed(system, decision, patient, dice, kind="natural", healer="", roll=roll, wounds_after=wounds_after,
                 stunned_removed=stunned_removed, treated=min(treated_wounds(patient), wounds_after),
                 critical=critical, rule=RULE_NATURAL)


def _assisted(system: Any, decision: Decision, command: R6Heal, patient: Any, dice: Dice) -> None:
    """R6-43: a Medicine test by a healer; once per injury."""
    state = decision.state
    in_combat = command.actor not in (SEQUENCER, GM)
    healer_id = command.actor if in_combat else command.healer
    require(bool(healer_id), "the GM/sequencer names the healer of an assisted healing")
    require(not (in_combat and command.healer and command.healer != command.actor),
            "a combatant heals for itself; only the GM/sequencer names another healer")
    healer = system.require_combatant(state, healer_id)
    require(not healer.out_of_fight, f"{healer.id} is out of the fight and cannot treat anyone")
    untreated = patient.wounds > treated_wounds(patient) or (patient.wounds == 0 and is_stunned(patient))
    require(untreated, f"{patient.id} has already had its successful assisted healing for these injuries (R6-43: once per injury)")
    penalty = 0
    if in_combat:
        require_acting(system, state, command.actor)
        reach = int(_setting(state, "healing_reach"))
        require(healer.position is not None and patient.position is not None
                and distance(healer.position, patient.position) <= reach,
                f"{patient.id} is not within {reach} Space(s) of {healer.id}")
    # The difficulty is worked out before the action is spent: every check comes
    # before the first event (the main system probes a declaration up to it).
    level, steps = assisted_healing_steps(patient.wounds, is_stunned(patient))
    target = difficulty(level, steps, settings=state.settings)
    if in_combat:
        penalty = system.spend_action(decision, healer.id, "action", action="assisted_healing", rule=RULE_ASSISTED)
        healer = decision.state.combatants[healer.id]
    roll = rolling.roll_test(
        dice, state.settings, healer, "medicine", purpose=f"assisted healing of {patient.id}", rule=RULE_ASSISTED,
        target=target, action_penalty=penalty, details={"patient_wounds": patient.wounds, "level": level, "steps": steps},
    )
    healed = assisted_healing_outcome(bool(roll.success), int(roll.details.get("result_points", 0)))
    wounds_after = max(0, patient.wounds - healed)
    stunned_removed = bool(roll.success) and is_stunned(patient)
    treated = wounds_after if roll.success else treated_wounds(patient)
    _emit_healed(system, decision, patient, dice, kind="assisted", healer=healer.id, roll=roll, wounds_after=wounds_after,
                 stunned_removed=stunned_removed, treated=treated, critical=False, rule=RULE_ASSISTED)


def _emit_healed(
    system: Any, decision: Decision, patient: Any, dice: Dice, *, kind: str, healer: str, roll: Any, wounds_after: int,
    stunned_removed: bool, treated: int, critical: bool, rule: str,
) -> None:
    state = decision.state
    before = patient.wounds  # `patient` is the live scratch state: read it before emitting
    revived = (
        bool(_setting(state, "healing_revives"))
        and patient.out_of_fight
        and not getattr(patient, "dead", False)
        and before >= INCAPACITATED_WOUNDS > wounds_after
    )
    decision.emit(R6Healed(
        patient=patient.id, kind=kind, healer=healer, roll=roll, wounds_before=before,
        wounds_after=wounds_after, stunned_removed=stunned_removed, treated_wounds=treated,
        critical_failure=critical, revived=revived, rule=rule,
    ))
    if stunned_removed:
        decision.emit(ConditionRemoved(combatant=patient.id, condition="stunned", reason=f"{kind} healing", rule=rule))
    for condition in _conditions_healed(decision.state.combatants[patient.id], wounds_after, revived):
        decision.emit(ConditionRemoved(combatant=patient.id, condition=condition, reason=f"{kind} healing", rule=rule))
    if wounds_after > before:
        # A critical failure's extra Wound reaches injury levels like any Wound (R6-21).
        combat.injure(system, decision, patient.id, before, wounds_after, dice)


def _conditions_healed(patient: Any, wounds_after: int, revived: bool) -> list[str]:
    """Injury conditions that no longer hold at the new Wound count."""
    gone = []
    if wounds_after < INCAPACITATED_WOUNDS and "incapacitated" in patient.conditions:
        gone.append("incapacitated")
    if wounds_after < MORTALLY_WOUNDED_WOUNDS and "mortally_wounded" in patient.conditions:
        gone.append("mortally_wounded")
    if revived and "unconscious" in patient.conditions:
        gone.append("unconscious")
    return gone


def choose_heal(system: Any, state: Any, healer_id: str) -> R6Heal | None:
    """The AI's assisted healing, deterministically: a medic (a ``medicine`` skill
    on its sheet) treats the most wounded untreated ally within reach (lowest
    ID on a tie), or None."""
    healer = state.combatants[healer_id]
    if healer.out_of_fight or healer.position is None or "medicine" not in healer.skills:
        return None
    reach = int(state.settings.get("healing_reach", HEALING_DEFAULTS["healing_reach"]))
    candidates = [
        c for c in state.combatants.values()
        if c.side == healer.side and not getattr(c, "dead", False) and c.position is not None
        and distance(healer.position, c.position) <= reach
        and c.wounds > treated_wounds(c)
    ]
    if not candidates:
        return None
    patient = min(candidates, key=lambda c: (-c.wounds, c.id))
    return R6Heal(command_id=next_command_id(state, healer_id), actor=healer_id, patient=patient.id, kind="assisted")


def _on_healed(state: Any, event: R6Healed) -> None:
    patient = state.combatants[event.patient]
    patient.wounds = event.wounds_after
    combatant_store(patient)["treated_wounds"] = event.treated_wounds
    if event.revived:
        patient.out_of_fight = False


EVOLVERS: dict[type, Any] = {R6Healed: _on_healed}
