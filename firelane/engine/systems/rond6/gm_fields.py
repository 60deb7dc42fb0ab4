"""RonD6's fields a GM may set mid-fight, described for the GM's form
(engine/gm_fields.py); the engine checks a GMAdjust against the same, then
against the system's own rules (`check_gm_change`). The sheet (attributes,
skills, weapons, talents) stays as built."""

from __future__ import annotations

from typing import Any

from firelane.engine.gm_fields import FieldSpec
from firelane.engine.systems.rond6 import rules
from firelane.events.options_schemas import GMFieldChoice


def _weapons(state: Any, me: Any) -> list[GMFieldChoice]:
    return [GMFieldChoice(value=w.id, label=w.name or w.id) for w in me.weapons]


def _magazines(state: Any, me: Any) -> list[GMFieldChoice]:
    return [GMFieldChoice(value=w.id, label=w.name or w.id, high=w.capacity) for w in me.weapons if w.capacity]


def _fatigue_limit(state: Any, me: Any) -> int:
    return int(state.settings.get("fatigue_limit", 3)) + 1


def _action_limit(state: Any, me: Any) -> int:
    """The most actions it may declare, with a Fate Point (`RonD6System.action_limit`: R6-06, R6-23)."""
    if "massive_damage" in me.conditions:
        return 1
    return rules.multi_action_limit(me.attributes.get("Agility", "2D"), me.talents.get("Quickness", 0), True)


GM_FIELDS = (
    FieldSpec("wounds", "number", "Health", low=0, high=lambda s, me: 4 if me.out_of_fight else 3, vital=True,
              note="R6-21: 1-2 wounded, 3 incapacitated; 4 (mortally wounded) and 5 (death) take it out: "
                   "use Out of the fight"),
    FieldSpec("fatigue", "number", "Health", low=0, high=_fatigue_limit),
    FieldSpec("declared_actions", "number", "This turn", low=0, high=_action_limit, note="0: not declared yet this round"),
    FieldSpec("actions_used", "number", "This turn", low=0, high=lambda s, me: me.declared_actions),
    FieldSpec("actions_lost", "number", "This turn", low=0, high=9),
    FieldSpec("defense_bonus", "number", "This turn", low=0, high=99),
    FieldSpec("readied", "choices", "Weapons and ammunition", choices=_weapons, most=2),
    FieldSpec("ammo", "counts", "Weapons and ammunition", low=0, choices=_magazines),
    FieldSpec("reloads", "counts", "Weapons and ammunition", low=0, high=99, choices=_weapons),
    FieldSpec("character_points", "number", "Points", low=0, high=999),
    FieldSpec("fate_points", "number", "Points", low=0, high=99),
)
