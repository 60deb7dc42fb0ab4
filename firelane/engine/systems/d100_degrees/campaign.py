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

from firelane.engine.campaign_rules import CountdownPoolRules
from firelane.engine.state import Combatant

WOUNDS_PER_DAY = 1
RULE_REST = "house default: d100-degrees rest"


class D100DegreesCampaign(CountdownPoolRules):
    system = "d100-degrees"
    carried = ("wounds",)
    pool, pool_max, pool_label, pool_default = "wounds", "max_wounds", "wounds", 10
    down_unfit = "is down with no wounds left; rest first (firelane rest)"
    down_note = "down with no wounds left (house default: 0 wounds)"
    rest_rule = RULE_REST
    rest_per_day = WOUNDS_PER_DAY

    def gear_after_fight(self, sheet: dict[str, Any], combatant: Combatant, after: dict[str, Any]) -> list[str]:
        jammed = list(getattr(combatant, "jammed", []))
        return [f"jam cleared after the fight ({RULE_REST}): {', '.join(jammed)}"] if jammed else []


RULES = D100DegreesCampaign()
