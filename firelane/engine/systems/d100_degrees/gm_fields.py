"""d100-degrees' fields a GM may set mid-fight, described for the GM's form
(engine/gm_fields.py); the engine checks a GMAdjust against the same, then
against the system's own rules (`check_gm_change`)."""

from __future__ import annotations

from typing import Any

from firelane.engine.gm_fields import FieldSpec
from firelane.events.options_schemas import GMFieldChoice


def _guns(state: Any, me: Any) -> list[GMFieldChoice]:
    return [GMFieldChoice(value=w.name, label=w.name) for w in me.weapons if w.kind == "ranged"]


GM_FIELDS = (
    FieldSpec("wounds", "number", "Health", low=lambda s, me: 0 if me.out_of_fight else 1, high=lambda s, me: me.max_wounds, vital=True,
              note="at 0 a combatant is down: take it out of the fight instead"),
    FieldSpec("max_wounds", "number", "Health", low=lambda s, me: max(1, me.wounds), high=999),
    FieldSpec("armour", "number", "Health", low=0, high=99),
    FieldSpec("half_actions_used", "number", "This turn", low=0, high=2, note="two Half Actions a turn (D100D-02)"),
    FieldSpec("jammed", "choices", "Weapons and ammunition", choices=_guns),
    *(FieldSpec(name, "number", "Characteristics", low=0, high=100)
      for name in ("weapon_skill", "ballistic_skill", "agility", "willpower")),
)
