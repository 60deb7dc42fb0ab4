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
* A Stunned-only character "heals" by losing Stunned (it has no Wound).
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

import msgspec

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
