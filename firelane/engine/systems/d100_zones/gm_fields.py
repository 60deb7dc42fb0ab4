"""d100-zones' fields a GM may set mid-fight, described for the GM's form
(engine/gm_fields.py); the engine checks a GMAdjust against the same, then
against the system's own rules (`check_gm_change`)."""

from __future__ import annotations

from typing import Any

from firelane.engine.gm_fields import FieldSpec
from firelane.engine.systems.d100_zones import rules
from firelane.events.options_schemas import GMFieldChoice


def _weapons(state: Any, me: Any) -> list[GMFieldChoice]:
    return [*(GMFieldChoice(value=w.name, label=w.name) for w in me.weapons), GMFieldChoice(value="unarmed", label="unarmed")]


def _others(state: Any, me: Any) -> list[GMFieldChoice]:
    return [GMFieldChoice(value=c.id, label=c.name) for c in state.combatants.values() if c.id != me.id and not c.out_of_fight]


GM_FIELDS = (
    FieldSpec("hp", "number", "Health", low=lambda s, me: int(s.settings["death_at_hp"]) if me.out_of_fight else 1, high=lambda s, me: me.max_hp, vital=True,
              note="at 0 or less a combatant is unconscious and dying: take it out of the fight instead"),
    FieldSpec("max_hp", "number", "Health", low=lambda s, me: max(1, me.hp), high=999),
    FieldSpec("dr", "number", "Health", low=0, high=99),
    FieldSpec("action_used", "yes_no", "This turn"),
    FieldSpec("moved_m", "number", "This turn", low=0, high=rules.MAX_MOVE_M, whole=False),
    FieldSpec("attacks", "choices", "This turn", choices=_weapons, most=2, note="the weapons used to attack this turn"),
    FieldSpec("aim_target", "choice", "This turn", choices=_others, nullable=True),
    FieldSpec("first_aid_received", "yes_no", "Health"),
    *(FieldSpec(name, "number", "Characteristics", low=0, high=100)
      for name in ("strength", "dexterity", "intelligence", "speed", "melee", "ranged", "brawling", "medicine")),
)
