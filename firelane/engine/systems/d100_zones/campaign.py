"""d100-zones between fights: what a fight leaves on a character, and rest.

The combat text has hit points, First Aid in Combat (D100Z-14: roll <= INT,
once per combat per target; heal 1d10 + floor((skill - 50) / 10); a critical
(<= 10) stabilises an unconscious ally) and points to a chapter on "Healing &
Recovery" for rules outside combat that it does not include. So the downtime
goes as far as the text does, and names its house defaults:

- **Aftermath.** HP come back as the fight left them, with the conditions of
  a character at 0 HP or less (``unconscious``, ``dying``, ``stabilised``,
  ``dead``; the encounter's house default). The "once per combat" of first
  aid ends with the combat.
- **First aid after the fight (D100Z-14).** A rest begins with first aid by
  the healer named for it (``--healer``), once per patient per rest (the
  text's "once per combat per target", read per rest outside combat): the
  healer's INT test, then 1d10 + floor((Medicine - 50) / 10) HP, never above
  the maximum; a critical (<= 10) stabilises a dying patient; a patient above
  0 HP comes to. Dying patients are treated first, then by most HP missing.
- **Bleeding out (house default).** A patient still dying after that first
  aid bleeds out as it would in the fight (it loses HP every round until
  stabilised, down to ``death_at_hp``): it is dead.
- **Natural rest (house default).** Each full day of rest that is not
  strenuous restores ``HP_PER_DAY`` (1) HP to every living patient that is
  not dying, never above its maximum; one healed above 0 HP comes to.
- **The GM's adjustments** are checked with full HP and none of the lasting
  conditions in place of the harm a fight left. HP the GM sets (at least 1, as
  a fight's start wants) end ``unconscious``, ``dying``, ``stabilised`` and
  ``dead`` unless the GM sets the conditions too. Reviving (house default)
  brings a dead character back at 0 HP, unconscious and stabilised: down,
  not dying; rest heals it.
"""

from __future__ import annotations

from typing import Any

import msgspec

from firelane.engine.campaign_rules import (
    DEAD,
    DOWN,
    DYING,
    READY,
    CountdownPoolRules,
    Patient,
    RestRequest,
    RestResult,
    remove_entries,
    set_or_clear,
)
from firelane.engine.dice import Dice
from firelane.engine.state import Combatant
from firelane.engine.systems.d100_zones import rules
from firelane.engine.systems.percentile.damage import never_below_zero
from firelane.engine.systems.percentile.rolls import percentile_test
from firelane.events.schemas import Modifier, Roll

HP_PER_DAY = 1
RULE_FIRST_AID = "D100Z-14"
RULE_REST = "house default: d100-zones rest"
RULE_BLEED = "house default: dying"
# The conditions of a character at 0 HP or less that outlast the fight.
LASTING = ("unconscious", "dying", "stabilised", "dead")


def _conditions(sheet: dict[str, Any]) -> dict[str, str]:
    return dict(sheet.get("conditions", {}))


def _came_to(sheet: dict[str, Any]) -> None:
    remove_entries(sheet, "conditions", ("unconscious", "dying", "stabilised"))


class D100ZonesCampaign(CountdownPoolRules):
    system = "d100-zones"
    carried = ("hp",)
    heals = True
    pool, pool_max, pool_label, pool_default = "hp", "max_hp", "HP", 12
    rest_rule = RULE_REST
    rest_per_day = HP_PER_DAY

    def status(self, sheet: dict[str, Any]) -> str:
        conditions = _conditions(sheet)
        if "dead" in conditions:
            return DEAD
        if "dying" in conditions:
            return DYING
        return super().status(sheet)

    def fit(self, sheet: dict[str, Any]) -> dict[str, Any]:
        fit = super().fit(sheet)
        remove_entries(fit, "conditions", LASTING)
        return fit

    def settle(self, before: dict[str, Any], after: dict[str, Any], touched: set[str]) -> list[str]:
        if "hp" not in touched or "conditions" in touched:
            return []
        lasting = sorted(k for k in _conditions(after) if k in LASTING)
        if not lasting or int(after.get("hp", 0)) <= 0:
            return []
        remove_entries(after, "conditions", LASTING)
        return [f"at {after['hp']} HP: no longer {', '.join(lasting)}"]

    def revive(self, sheet: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
        revived = super().revive(sheet)[0]
        if int(revived.get("hp", 0)) > 0:
            remove_entries(revived, "conditions", LASTING)
            return revived, [f"revived at {revived['hp']} HP"]
        revived["hp"] = 0
        others = {k: v for k, v in _conditions(revived).items() if k not in LASTING}
        revived["conditions"] = {**others, "unconscious": "", "stabilised": ""}
        return revived, ["revived at 0 HP, unconscious and stabilised (house default: rest heals it)"]

    def unfit(self, sheet: dict[str, Any]) -> str | None:
        status = self.status(sheet)
        if status == DEAD:
            return "is dead"
        if status == DYING:
            return f"is dying at {sheet.get('hp')} HP; a healer's first aid may save it (firelane rest --healer)"
        if status == DOWN:
            return f"is unconscious at {sheet.get('hp')} HP; rest first (firelane rest)"
        return None

    def aftermath(self, sheet: dict[str, Any], combatant: Combatant) -> tuple[dict[str, Any], list[str]]:
        after = dict(sheet)
        after["hp"] = int(getattr(combatant, "hp"))
        lasting = {name: "" for name in LASTING if name in combatant.conditions}
        set_or_clear(after, "conditions", lasting)
        notes = [f"{name} at {after['hp']} HP (house default: 0 HP)" for name in lasting]
        return after, notes

    def rest(self, patients: list[Patient], request: RestRequest, dice: Dice) -> list[RestResult]:
        results = {p.character: RestResult(character=p.character, sheet=dict(p.sheet)) for p in patients}
        healer = request.healer
        self.refuse_unfit_healer(healer)
        if healer is not None:
            # The healer's own sheet as it stands now (it may be resting too).
            healer_sheet = results[healer.character].sheet if healer.character in results else healer.sheet

            def urgency(patient: Patient) -> tuple[int, int, str]:
                sheet = results[patient.character].sheet
                return (0 if self.status(sheet) == DYING else 1, -(int(sheet.get("max_hp", 0)) - int(sheet.get("hp", 0))),
                        patient.character)

            for patient in sorted(patients, key=urgency):
                result = results[patient.character]
                if self.status(result.sheet) in (DEAD, READY):
                    continue
                self._first_aid(healer.character, healer_sheet, result, dice)
        for patient in patients:
            result = results[patient.character]
            sheet = result.sheet
            if self.status(sheet) == DYING:
                sheet["conditions"] = {**{k: v for k, v in _conditions(sheet).items() if k != "dying"}, "dead": ""}
                result.notes.append(f"bled out at {sheet.get('hp')} HP: dying and not stabilised ({RULE_BLEED})")
                continue
            if self.status(sheet) == DEAD:
                continue
            result.notes.extend(self.rest_pool(sheet, request))
        return [results[p.character] for p in patients]

    def recover(self, sheet: dict[str, Any], days: int) -> list[str]:
        """HP_PER_DAY a day (a patient healed above 0 HP comes to); a rest of no days notes nothing."""
        if days <= 0:
            return []
        hp = int(sheet.get("hp", 0))
        notes = super().recover(sheet, days)
        if hp <= 0 < int(sheet.get("hp", 0)):
            _came_to(sheet)
            notes.append("came to above 0 HP")
        return notes

    def _first_aid(self, healer: str, healer_sheet: dict[str, Any], result: RestResult, dice: Dice) -> None:
        """D100Z-14 on one patient (the patient's sheet in ``result`` changes in place)."""
        sheet = result.sheet
        intelligence = int(healer_sheet.get("intelligence", 50))
        medicine = int(healer_sheet.get("medicine", 40))
        test = percentile_test(dice, purpose=f"first aid by {healer}", rule=RULE_FIRST_AID,
                               modifiers=[Modifier(source=f"{healer}'s INT", rule=RULE_FIRST_AID, value=intelligence)])
        critical = test.total <= rules.CRITICAL_AT_MOST
        success = bool(test.success) or critical
        test = msgspec.structs.replace(
            test, success=success, details={**test.details, "critical": critical},
            notes=["critical (<= 10): stabilises an unconscious ally (D100Z-14)"] if critical else [])
        result.rolls.append(test)
        hp, maximum = int(sheet.get("hp", 0)), int(sheet.get("max_hp", 0))
        if not success:
            result.notes.append(f"first aid by {healer} failed (D100Z-14)")
            return
        bonus = rules.first_aid_skill_modifier(medicine)
        die = dice.roll(10)
        amount = max(0, die.face + bonus)
        healed = max(0, min(amount, maximum - hp))
        result.rolls.append(Roll(
            purpose=f"first aid healing by {healer}", rule=RULE_FIRST_AID, dice=[die],
            modifiers=[Modifier(source=f"Medicine {medicine}: floor((skill - 50) / 10)", rule=RULE_FIRST_AID, value=bonus),
                       *never_below_zero(die.face + bonus, "house default: first aid", "healing")],
            total=amount, details={"healed": healed, "capped_at_max_hp": healed < amount}))
        sheet["hp"] = hp + healed
        result.notes.append(f"first aid by {healer}: +{healed} HP ({hp} -> {hp + healed}, D100Z-14)")
        if critical and self.status(sheet) == DYING:
            sheet["conditions"] = {**{k: v for k, v in _conditions(sheet).items() if k != "dying"}, "stabilised": ""}
            result.notes.append("stabilised by a critical first aid roll (D100Z-14)")
        if hp + healed >= 1 and hp <= 0:
            _came_to(sheet)
            result.notes.append("came to above 0 HP")


RULES = D100ZonesCampaign()
