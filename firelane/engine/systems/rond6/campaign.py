"""RonD6 between fights: what a fight leaves on a character, and the text's
healing outside combat (R6-42 natural healing, R6-43 assisted healing, with
R6-21's injury levels and R6-22's recoveries).

**Aftermath.** Wounds, Fatigue, death, Character and Fate Points, loaded
ammunition and spare reloads come back as the fight left them, with the
lasting injury conditions: ``incapacitated`` (3 Wounds), ``mortally_wounded``
and ``unconscious`` (4), ``dead`` (5). A character at 3 Wounds is Incapacitated
(R6-21: -3D to every test, or unconscious) until a Wound heals, so its status
is "down" and no fight enlists it: the text's recovery is rest (R6-42, 2 weeks
then a Stamina: Fortitude test) or a healer (R6-43); issue 19 item 12. House defaults: Stunned ends in the
minute after the fight (its R6-42 recovery time is 1 minute, R6-22: a round
without actions ends it); an Incapacitated character knocked unconscious
comes to after the fight, conscious at -3D; the Wounds an Assisted Healing
already treated stay treated (R6-43: once per injury).

**Downtime** (``firelane rest``), in this order for each patient:

1. *Mortally Wounded* (R6-21): at the end of each minute the character rolls
   Strength against the minutes since the wound (counting on from the fight)
   and dies on less. A healer (``--healer``) makes an Assisted Healing attempt
   (R6-43) every minute first (house default: one attempt a minute); a
   success heals 1 or 2 Wounds and ends the dying. Without one the rolls go
   on until the character dies.
2. *Assisted healing* (R6-43): the healer's Medicine test, Easy for a Stunned
   patient, Standard for 1 Wound, +1 Difficulty Level per further Wound; a
   success heals 1 Wound, 1 or more Result Points 2; once per injury (the
   Wounds it treated count as treated); the healer is another character; one
   attempt per patient per rest (house default).
3. *Fatigue* (R6-22: "recovers after sufficient rest"): house default, a rest
   of at least a day that is not strenuous ends every Fatigue level.
4. *Natural healing* (R6-42): the days rested add up (across rests, until a
   test or a new fight) towards the recovery time of the worst injury
   (1 or more Wounds: 3 days per Wound; Incapacitated 2 weeks; Mortally
   Wounded 5 weeks); once it is reached, at the end of the rest, a Stamina:
   Fortitude test at Standard (house default, as in healing.py), one
   Difficulty Level higher if the rest was strenuous, +1D if the character
   rested twice the recovery time. Critical Failure (a failure with a
   complication on the Wild Die, house default): one more Wound; Failure:
   none; Success: heal 1 Wound; 2 or more Result Points: heal 2 (never more).
   The count starts again after the test.
5. *Resupply* (``--resupply``): every magazine full, spare reloads back to
   the number the character was created with.

**The GM's adjustments** (``firelane character adjust``: Character and Fate
Points awarded, R6-20, Wounds set...) are checked with no Wounds, Fatigue or
injury in place of the harm a fight left. Wounds the GM sets bring the R6-21
conditions that go with them (Incapacitated at 3, Mortally Wounded and
unconscious at 4, the minutes since the wound counted from 0), unless the GM
sets the conditions too. Reviving (house default) brings a dead character
back at 3 Wounds, Incapacitated: alive, not dying; rest heals it (R6-42).
"""

from __future__ import annotations

from typing import Any

from firelane.engine.campaign_rules import (
    DEAD,
    DOWN,
    DYING,
    HURT,
    READY,
    CampaignRules,
    Patient,
    RestRequest,
    RestResult,
    builtins,
    remove_entries,
    set_or_clear,
)
from firelane.engine.dice import Dice
from firelane.engine.state import Combatant
from firelane.engine.systems.rond6 import rules
from firelane.engine.systems.rond6.healing import (
    DAY,
    HEALING_DEFAULTS,
    RULE_ASSISTED,
    RULE_NATURAL,
    assisted_healing_outcome,
    assisted_healing_steps,
    natural_healing_outcome,
    natural_healing_plan,
    recovery_time,
)
from firelane.engine.systems.rond6.pools import as_code, difficulty, roll_pool
from firelane.engine.systems.rond6.rolling import DiceMod, roll_test
from firelane.engine.systems.rond6.sheets import convert_sheet
from firelane.engine.systems.rond6.state import RonD6Combatant
from firelane.events.schemas import CombatantSetup, Roll

SETTINGS: dict[str, Any] = dict(HEALING_DEFAULTS)
# House default: a Mortally Wounded character still alive after a day of
# minutes is dead (the R6-21 roll against the minutes makes that certain long before).
MORTAL_MINUTES_LIMIT = 24 * 60
INJURY_CONDITIONS = ("incapacitated", "mortally_wounded", "unconscious", "dead")


def combatant_of(character: str, name: str, sheet: dict[str, Any]) -> RonD6Combatant:
    """The typed character of a campaign sheet, for rolling its tests."""
    return convert_sheet(CombatantSetup(id=character, name=name or character, side="campaign", sheet=sheet))


def injury_conditions(wounds: int) -> dict[str, str]:
    """R6-21: the lasting conditions of a Wound count between fights."""
    if wounds >= 5:
        return {"dead": ""}
    if wounds == 4:
        return {"mortally_wounded": "", "unconscious": ""}
    if wounds == 3:
        return {"incapacitated": ""}
    return {}


def _set_wounds(sheet: dict[str, Any], wounds: int) -> None:
    """Wounds and the injury conditions and flags that go with them."""
    was_mortal = int(sheet.get("wounds", 0)) >= 4
    if wounds or "wounds" in sheet:
        sheet["wounds"] = wounds
    others = {k: v for k, v in dict(sheet.get("conditions", {})).items() if k not in INJURY_CONDITIONS}
    set_or_clear(sheet, "conditions", {**others, **injury_conditions(wounds)})
    if wounds >= 5:
        sheet["dead"] = True
    if wounds < 4 or not was_mortal:
        sheet.pop("mortal_minutes", None)
    treated = _treated(sheet)
    if treated > wounds:
        _set_treated(sheet, wounds)


def _treated(sheet: dict[str, Any]) -> int:
    return int(dict(sheet.get("aux", {})).get("treated_wounds", 0))


def _set_treated(sheet: dict[str, Any], treated: int) -> None:
    aux = {k: v for k, v in dict(sheet.get("aux", {})).items() if k != "treated_wounds"}
    if treated:
        aux["treated_wounds"] = treated
    set_or_clear(sheet, "aux", aux)


class RonD6Campaign(CampaignRules):
    system = "rond6"
    carried = ("wounds", "fatigue", "dead", "character_points", "fate_points", "ammo", "reloads")
    heals = True

    def status(self, sheet: dict[str, Any]) -> str:
        wounds = int(sheet.get("wounds", 0))
        if sheet.get("dead") or wounds >= 5:
            return DEAD
        if wounds >= 4:
            return DYING
        if wounds == 3:
            # R6-21: Incapacitated (-3D to everything, or unconscious) until rest or a
            # healer takes a Wound off (R6-42: 2 weeks; R6-43): not fit to fight.
            return DOWN
        if wounds or int(sheet.get("fatigue", 0)) or "stunned" in dict(sheet.get("conditions", {})):
            return HURT
        return READY

    def vitals(self, sheet: dict[str, Any]) -> list[str]:
        parts = [f"Wounds {int(sheet.get('wounds', 0))}"]
        if sheet.get("fatigue"):
            parts.append(f"Fatigue {sheet['fatigue']}")
        parts.append(f"CP {int(sheet.get('character_points', 0))}, FP {int(sheet.get('fate_points', 0))}")
        if sheet.get("reloads"):
            parts.append("reloads " + ", ".join(f"{k} {v}" for k, v in sorted(dict(sheet["reloads"]).items())))
        return parts

    def unfit(self, sheet: dict[str, Any]) -> str | None:
        status = self.status(sheet)
        if status == DEAD:
            return "is dead (R6-21)"
        if status == DYING:
            return "is Mortally Wounded (R6-21); only a healer can save it (firelane rest --healer)"
        if status == DOWN:
            return ("is Incapacitated at 3 Wounds (R6-21); rest first: a healer's Medicine test heals a Wound "
                    "(R6-43, firelane rest --healer), or 2 weeks' rest and a Stamina: Fortitude test (R6-42, firelane rest --days 14)")
        return None

    def fit(self, sheet: dict[str, Any]) -> dict[str, Any]:
        fit = super().fit(sheet)
        fit.pop("dead", None)
        fit.pop("mortal_minutes", None)
        if "fatigue" in fit:
            fit["fatigue"] = 0
        _set_wounds(fit, 0)
        return fit

    def settle(self, before: dict[str, Any], after: dict[str, Any], touched: set[str]) -> list[str]:
        if "wounds" not in touched or "conditions" in touched:
            return []
        wounds = int(after.get("wounds", 0))
        after["wounds"] = int(before.get("wounds", 0))  # what _set_wounds measures the change from
        _set_wounds(after, wounds)
        if "dead" not in touched and wounds < 5:
            after.pop("dead", None)
        if wounds == 4 and "mortal_minutes" not in after and "mortal_minutes" not in touched:
            after["mortal_minutes"] = 0
            return ["Mortally Wounded at 4 Wounds (R6-21): dying, 0 minutes since the wound"]
        if wounds == 3:
            return ["Incapacitated at 3 Wounds (R6-21)"]
        return []

    def revive(self, sheet: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
        revived = super().revive(sheet)[0]
        if not (revived.get("dead") or int(revived.get("wounds", 0)) >= 5):
            return revived, []
        revived.pop("dead", None)
        _set_wounds(revived, 3)
        return revived, ["revived at 3 Wounds, Incapacitated (house default; R6-21): alive, not dying; rest heals it"]

    def aftermath(self, sheet: dict[str, Any], combatant: Combatant) -> tuple[dict[str, Any], list[str]]:
        after = dict(sheet)
        for field in self.carried:  # type: ignore[union-attr]
            value = builtins(getattr(combatant, field))
            if field in sheet or value not in (0, False, {}, []):  # no empty default added to a sheet
                after[field] = value
        wounds = int(after.get("wounds", 0))
        notes = []
        conditions = dict(combatant.conditions)
        if "stunned" in conditions:
            notes.append("Stunned ends in the minute after the fight (R6-42 recovery time, R6-22)")
        if wounds == 3 and "unconscious" in conditions:
            notes.append("Incapacitated: comes to after the fight, conscious at -3D (house default, R6-21)")
        after.pop("conditions", None)
        after.pop("mortal_minutes", None)
        _set_treated(after, 0)
        _set_wounds(after, wounds)
        if wounds == 4 and not after.get("dead"):
            after["mortal_minutes"] = int(getattr(combatant, "mortal_minutes", 0))
            notes.append(f"Mortally Wounded, {after['mortal_minutes']} minute(s) since the wound (R6-21): dying")
        treated = int(dict(getattr(combatant, "aux", {})).get("treated_wounds", 0))
        if treated and wounds < 5:
            _set_treated(after, min(treated, wounds))
        if not after.get("dead"):
            after.pop("dead", None)
        return after, notes

    # ------------------------------------------------------------ downtime

    def rest(self, patients: list[Patient], request: RestRequest, dice: Dice) -> list[RestResult]:
        healer = request.healer
        self.refuse_unfit_healer(healer)
        results = []
        for patient in patients:
            result = RestResult(character=patient.character, sheet=dict(patient.sheet), rested_days=patient.rested_days)
            sheet = result.sheet
            if self.status(sheet) == DEAD:
                result.notes.append("dead: no rest helps (R6-21)")
                results.append(result)
                continue
            if "stunned" in dict(sheet.get("conditions", {})):
                remove_entries(sheet, "conditions", ("stunned",))
                result.notes.append("Stunned ends: a round without actions (R6-22)")
            other_healer = healer if healer is not None and healer.character != patient.character else None
            if self.status(sheet) == DYING:
                self._mortal_minutes(patient, other_healer, result, dice)
            elif other_healer is not None and int(sheet.get("wounds", 0)) > _treated(sheet):
                self._assisted(patient, other_healer, result, dice)
            if self.status(sheet) == DEAD:
                results.append(result)
                continue
            if int(sheet.get("fatigue", 0)) and request.days >= 1 and not request.strenuous:
                result.notes.append(f"Fatigue {sheet['fatigue']} -> 0: a day's rest (R6-22 'sufficient rest', house default)")
                sheet["fatigue"] = 0
            self._natural(patient, request, result, dice)
            if request.resupply:
                self._resupply(patient, result)
            results.append(result)
        return results

    def _assisted_roll(self, healer: Patient, patient: Patient, wounds: int, dice: Dice) -> tuple[Roll, int]:
        """R6-43: the healer's Medicine test for a patient with ``wounds``; the Wounds it heals."""
        level, steps = assisted_healing_steps(wounds, False)
        target = difficulty(level, steps, settings=SETTINGS)
        roll = roll_test(dice, SETTINGS, combatant_of(healer.character, healer.name, healer.sheet), "medicine",
                         purpose=f"assisted healing of {patient.character} by {healer.character}", rule=RULE_ASSISTED,
                         target=target, details={"patient_wounds": wounds, "level": level, "steps": steps})
        return roll, assisted_healing_outcome(bool(roll.success), int(roll.details.get("result_points", 0)))

    def _assisted(self, patient: Patient, healer: Patient, result: RestResult, dice: Dice) -> None:
        sheet = result.sheet
        wounds = int(sheet["wounds"])
        roll, healed = self._assisted_roll(healer, patient, wounds, dice)
        result.rolls.append(roll)
        if not healed:
            result.notes.append(f"assisted healing by {healer.character} failed (R6-43)")
            return
        _set_wounds(sheet, max(0, wounds - healed))
        _set_treated(sheet, int(sheet["wounds"]))
        result.notes.append(f"assisted healing by {healer.character}: Wounds {wounds} -> {sheet['wounds']} (R6-43)")

    def _mortal_minutes(self, patient: Patient, healer: Patient | None, result: RestResult, dice: Dice) -> None:
        """R6-21 minute by minute, with the healer's R6-43 attempt before each roll."""
        sheet = result.sheet
        strength = as_code(dict(sheet.get("attributes", {})).get("Strength", "2D"))
        minute = int(sheet.get("mortal_minutes", 0))
        while minute < MORTAL_MINUTES_LIMIT:
            minute += 1
            if healer is not None:
                roll, healed = self._assisted_roll(healer, patient, 4, dice)
                result.rolls.append(roll)
                if healed:
                    _set_wounds(sheet, 4 - healed)
                    _set_treated(sheet, int(sheet["wounds"]))
                    result.notes.append(f"minute {minute}: assisted healing by {healer.character} saves it: "
                                        f"Wounds 4 -> {sheet['wounds']} (R6-43, R6-21)")
                    return
            roll = roll_pool(dice, strength, purpose=f"Mortally Wounded: minute {minute} (Strength)", rule=rules.R_INJURY,
                             target=minute, complication_rule=str(SETTINGS.get("complication_rule", "remove")))
            result.rolls.append(roll)
            if not roll.success:
                _set_wounds(sheet, 5)
                sheet.pop("mortal_minutes", None)
                result.notes.append(f"died of the mortal wound at minute {minute}: Strength {roll.total} < {minute} (R6-21)")
                return
            sheet["mortal_minutes"] = minute
        _set_wounds(sheet, 5)
        sheet.pop("mortal_minutes", None)
        result.notes.append(f"died of the mortal wound: still Mortally Wounded after {MORTAL_MINUTES_LIMIT} minutes (house default)")

    def _natural(self, patient: Patient, request: RestRequest, result: RestResult, dice: Dice) -> None:
        sheet = result.sheet
        wounds = int(sheet.get("wounds", 0))
        if wounds <= 0:
            result.rested_days = 0
            return
        result.rested_days += request.days
        recovery = recovery_time(wounds, False)
        assert recovery is not None
        plan = natural_healing_plan(recovery, result.rested_days * DAY, rested=not request.strenuous)
        if not plan.ready:
            result.notes.append(f"natural healing: {recovery.injury} needs {recovery.text} of rest, "
                                f"{result.rested_days} day(s) so far (R6-42)")
            return
        level = str(SETTINGS["natural_healing_difficulty"])
        target = difficulty(level, plan.extra_steps, settings=SETTINGS)
        mods = [DiceMod("rested twice the recovery time", RULE_NATURAL, plan.bonus_dice)] if plan.bonus_dice else []
        roll = roll_test(dice, SETTINGS, combatant_of(patient.character, patient.name, sheet), "fortitude",
                         purpose=f"natural healing of {patient.character}", rule=RULE_NATURAL, target=target, dice_mods=mods,
                         details={"recovery": recovery.text, "rested_days": result.rested_days, "rested": not request.strenuous})
        result.rolls.append(roll)
        critical = (not roll.success and SETTINGS.get("critical_failure") == "complication"
                    and bool(roll.details.get("complication")))
        change = natural_healing_outcome(bool(roll.success), int(roll.details.get("result_points", 0)), critical)
        after = max(0, wounds + change)
        _set_wounds(sheet, after)
        if after >= 4 and wounds < 4:
            sheet["mortal_minutes"] = 0
        result.rested_days = 0
        outcome = ("a Critical Failure: one more Wound" if change > 0 else "no recovery" if change == 0
                   else f"healed {-change} Wound{'s' if change < -1 else ''}")
        result.notes.append(f"natural healing after {recovery.text}"
                            + (" (+1D: rested twice as long)" if plan.bonus_dice else "")
                            + (" (one Difficulty Level higher: strenuous)" if plan.extra_steps else "")
                            + f": {outcome}, Wounds {wounds} -> {after} (R6-42)")

    def _resupply(self, patient: Patient, result: RestResult) -> None:
        sheet = result.sheet
        ammo, reloads = dict(sheet.get("ammo", {})), dict(sheet.get("reloads", {}))
        base_reloads = dict(patient.base_sheet.get("reloads", {}))
        refilled = []
        for weapon in sheet.get("weapons", []):
            weapon_id, capacity = weapon.get("id", ""), int(weapon.get("capacity", 0))
            if capacity and ammo.get(weapon_id, capacity) < capacity:
                refilled.append(f"{weapon_id} {ammo.get(weapon_id)} -> {capacity}")
                ammo[weapon_id] = capacity
            if int(base_reloads.get(weapon_id, 0)) > int(reloads.get(weapon_id, 0)):
                refilled.append(f"{weapon_id} reloads {reloads.get(weapon_id, 0)} -> {base_reloads[weapon_id]}")
                reloads[weapon_id] = int(base_reloads[weapon_id])
        if ammo:
            sheet["ammo"] = ammo
        if reloads:
            sheet["reloads"] = reloads
        if refilled:
            result.notes.append("resupplied: " + "; ".join(refilled))


RULES = RonD6Campaign()
