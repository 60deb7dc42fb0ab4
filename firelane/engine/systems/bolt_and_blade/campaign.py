"""Bolt & Blade between fights: what a fight leaves on a character, and rest.

The texts give Vitality and Down (BB-CORE-09: "at 0 the character is Down, out
of the fight until aided") and leave death, injury and recovery to a chapter
they do not include ("Wounds, Scars & Death"). So:

- **Aftermath.** Vitality comes back as the fight left it; at 0 the character
  is Down and cannot join a fight until it has rested. Grenades and other
  thrown weapons come back as spent. House default: ranged weapons are
  reloaded after the fight (the engine's Reload, BB-CORE-17, needs no spare
  magazines, so a half-empty magazine would only cost an action at the start
  of the next fight) and a jam is cleared with that reload.
- **Rest (house default).** A rest of at least ``FULL_REST_DAYS`` (1) day that
  is not strenuous restores Vitality to its maximum, and a Down character is
  back on its feet; a strenuous one restores nothing. No dice are rolled.
- **Resupply.** Every weapon with a magazine is filled again, grenades too.
- **The GM's adjustments** (``firelane character adjust``) are checked with full
  Vitality in place of the harm a fight left (a Down character's other fields
  are judged as a fight's start would judge them); the texts have no death, so
  there is no one to revive, only the retired.
"""

from __future__ import annotations

from typing import Any

from firelane.engine.campaign_rules import CountdownPoolRules, builtins
from firelane.engine.state import Combatant

FULL_REST_DAYS = 1
RULE_REST = "house default: Bolt & Blade rest"


def _magazines(sheet: dict[str, Any]) -> dict[str, tuple[str, int]]:
    """Weapon name -> (kind, magazine) for every weapon of a resolved sheet that takes ammunition."""
    return {w["name"]: (w.get("kind", ""), int(w.get("magazine", 0))) for w in sheet.get("weapons", [])
            if isinstance(w, dict) and int(w.get("magazine", 0)) > 0}


class BoltAndBladeCampaign(CountdownPoolRules):
    system = "bolt-and-blade"
    carried = ("vitality", "ammo")
    pool, pool_max, pool_label = "vitality", "max_vitality", "Vitality"
    down_unfit = "is Down at 0 Vitality (BB-CORE-09); rest first (firelane rest)"
    down_note = "Down at 0 Vitality (BB-CORE-09)"
    rest_rule = RULE_REST

    def normalise(self, sheet: dict[str, Any]) -> dict[str, Any]:
        # Unlike the d100 systems', an explicit maximum is kept even when 0, and
        # a sheet without Vitality gets its maximum.
        normal = dict(sheet)
        normal.setdefault("max_vitality", normal.get("vitality", 10))
        normal.setdefault("vitality", normal["max_vitality"])
        return normal

    def gear_after_fight(self, sheet: dict[str, Any], combatant: Combatant, after: dict[str, Any]) -> list[str]:
        ammo = dict(builtins(getattr(combatant, "ammo")))
        notes = []
        for name, (kind, magazine) in sorted(_magazines(sheet).items()):
            if kind == "ranged" and ammo.get(name, magazine) < magazine:
                notes.append(f"{name} reloaded after the fight ({ammo.get(name, 0)} -> {magazine}; house default)")
                ammo[name] = magazine
        jammed = [w for w in getattr(combatant, "jammed", []) if _magazines(sheet).get(w, ("", 0))[0] == "ranged"]
        if jammed:
            notes.append(f"jam cleared by the reload: {', '.join(jammed)}")
        after["ammo"] = ammo
        return notes

    def recover(self, sheet: dict[str, Any], days: int) -> list[str]:
        vitality, maximum = int(sheet.get("vitality", 0)), int(sheet.get("max_vitality", 0))
        if days < FULL_REST_DAYS or vitality >= maximum:
            return []
        sheet["vitality"] = maximum
        return [f"Vitality {vitality} -> {maximum}: a full day's rest restores it all ({RULE_REST})"
                + ("; back on its feet" if vitality <= 0 else "")]

    def resupply(self, sheet: dict[str, Any]) -> list[str]:
        ammo = dict(sheet.get("ammo", {}))
        notes = []
        for name, (_kind, magazine) in sorted(_magazines(sheet).items()):
            if ammo.get(name, 0) < magazine:
                notes.append(f"resupplied: {name} {ammo.get(name, 0)} -> {magazine}")
                ammo[name] = magazine
        sheet["ammo"] = ammo
        return notes


RULES = BoltAndBladeCampaign()
