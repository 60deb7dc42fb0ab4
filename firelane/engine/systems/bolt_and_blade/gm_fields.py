"""Bolt & Blade's fields a GM may set mid-fight, described for the GM's form
(engine/gm_fields.py); the engine checks a GMAdjust against the same, then
against the sheet's rules (`gm_change_problem`). The sheet itself (level,
attributes, proficiencies, weapons) stays as built: the API still takes
those fields, the form leaves them out."""

from __future__ import annotations

from typing import Any

from firelane.engine.gm_fields import FieldSpec
from firelane.events.options_schemas import GMFieldChoice


def _carried(state: Any, me: Any) -> list[GMFieldChoice]:
    return [GMFieldChoice(value=w.name, label=w.name) for w in me.weapons]


def _loaded(state: Any, me: Any) -> list[GMFieldChoice]:
    return [GMFieldChoice(value=w.name, label=w.name, high=w.magazine) for w in me.weapons if w.magazine > 0]


GM_FIELDS = (
    FieldSpec("vitality", "number", "Health", low=lambda s, me: 0 if me.out_of_fight else 1, high=lambda s, me: me.max_vitality, vital=True,
              note="at 0 a combatant is Down (BB-CORE-09): take it out of the fight instead"),
    FieldSpec("max_vitality", "number", "Health", low=lambda s, me: max(1, me.vitality), high=999),
    FieldSpec("movement_used_ft", "number", "This turn", low=0, high=lambda s, me: max(me.movement_allowance_ft, me.movement_ft * 2),
              whole=False),
    FieldSpec("action_used", "yes_no", "This turn"),
    FieldSpec("bonus_used", "yes_no", "This turn"),
    FieldSpec("ready_weapon", "choice", "Weapons and ammunition", choices=_carried),
    FieldSpec("ammo", "counts", "Weapons and ammunition", low=0, choices=_loaded),
    FieldSpec("jammed", "choices", "Weapons and ammunition", choices=_carried),
    FieldSpec("taking_cover", "yes_no", "Conditions"),
)
