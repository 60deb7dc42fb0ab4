"""d100-degrees between fights: what a fight leaves on a character, and rest.

The combat text tracks wounds (the number a character can still take; at 0 it
is out of the fight, house default) and says nothing about recovery. So:

- **Aftermath.** ``wounds`` comes back as the fight left it; at 0 the
  character is down and cannot join a fight until it has rested. A jammed
  weapon is cleared after the fight (house default: clearing it costs an
  action in a fight, nothing between fights).
- **Rest (house default).** Each full day of rest that is not strenuous
  restores ``WOUNDS_PER_DAY`` (1) wound, never above ``max_wounds``; a down
  character at 1 wound or more can fight again. No dice are rolled.
- **The GM's adjustments** are checked with ``wounds`` at ``max_wounds`` in
  place of the harm a fight left; the text has no death, so no one to revive.
"""

from __future__ import annotations

from typing import Any

from firelane.engine.campaign_rules import DOWN, HURT, READY, CampaignRules, Patient, RestRequest, RestResult
from firelane.engine.dice import Dice
from firelane.engine.state import Combatant

WOUNDS_PER_DAY = 1
RULE_REST = "house default: d100-degrees rest"


class D100DegreesCampaign(CampaignRules):
    system = "d100-degrees"
    carried = ("wounds",)

    def normalise(self, sheet: dict[str, Any]) -> dict[str, Any]:
        normal = dict(sheet)
        if not normal.get("max_wounds"):
            normal["max_wounds"] = int(normal.get("wounds", 10))
        return normal

    def status(self, sheet: dict[str, Any]) -> str:
        wounds = int(sheet.get("wounds", 1))
        if wounds <= 0:
            return DOWN
        return HURT if wounds < int(sheet.get("max_wounds", wounds)) else READY

    def vitals(self, sheet: dict[str, Any]) -> list[str]:
        return [f"wounds {sheet.get('wounds')}/{sheet.get('max_wounds')}"]

    def unfit(self, sheet: dict[str, Any]) -> str | None:
        if self.status(sheet) == DOWN:
            return "is down with no wounds left; rest first (firelane rest)"
        return None

    def fit(self, sheet: dict[str, Any]) -> dict[str, Any]:
        fit = super().fit(sheet)
        if "max_wounds" in fit:
            fit["wounds"] = fit["max_wounds"]
        return fit

    def aftermath(self, sheet: dict[str, Any], combatant: Combatant) -> tuple[dict[str, Any], list[str]]:
        after = dict(sheet)
        after["wounds"] = max(0, int(getattr(combatant, "wounds")))
        notes = []
        jammed = list(getattr(combatant, "jammed", []))
        if jammed:
            notes.append(f"jam cleared after the fight ({RULE_REST}): {', '.join(jammed)}")
        if after["wounds"] == 0:
            notes.append("down with no wounds left (house default: 0 wounds)")
        return after, notes

    def rest(self, patients: list[Patient], request: RestRequest, dice: Dice) -> list[RestResult]:
        results = []
        for patient in patients:
            sheet = dict(patient.sheet)
            notes: list[str] = []
            wounds, maximum = int(sheet.get("wounds", 0)), int(sheet.get("max_wounds", 0))
            if request.strenuous:
                notes.append(f"a strenuous {request.days} day(s) restore no wounds ({RULE_REST})")
            elif wounds < maximum:
                restored = min(maximum, wounds + WOUNDS_PER_DAY * request.days)
                sheet["wounds"] = restored
                notes.append(f"wounds {wounds} -> {restored}: {WOUNDS_PER_DAY} per full day of rest ({RULE_REST})")
            results.append(RestResult(character=patient.character, sheet=sheet, notes=notes))
        return results


RULES = D100DegreesCampaign()
