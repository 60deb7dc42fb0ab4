"""The fields a GM may set with GMAdjust, described for a form and checked by
the engine from the same description.

Each rule system describes its adjustable fields in its folder
(``engine/systems/<name>/gm_fields.py``, ``GM_FIELDS``, set as the system's
``gm_field_specs``): a `FieldSpec` per field, with its kind, its group and
its bounds or choices, which may depend on the state (Vitality up to the
combatant's maximum, ammunition up to each weapon's magazine). `describe`
turns a spec into the `GMField` the GM's options carry (its label from the
system's labels); `value_problem` is the check the engine runs on a value
for that field (`BaseRuleSystem._gm_value`), and the page's form runs the
same one (firelane/web/assets/gm.js, `problem`) before it sends anything.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from firelane.engine.labels import Labels
from firelane.engine.state import Combatant, EncounterState
from firelane.events.options_schemas import GMField, GMFieldChoice

KINDS = ("number", "yes_no", "choice", "choices", "counts", "square", "conditions", "revive")

# The groups a form shows, in this order (a system may name others: they come after).
GROUPS = ("Health", "Place", "This turn", "Weapons and ammunition", "Points", "Characteristics", "Conditions")

Bound = float | None | Callable[[EncounterState, Combatant], float | None]
Choices = Callable[[EncounterState, Combatant], list[GMFieldChoice]]


@dataclass(frozen=True)
class FieldSpec:
    """One adjustable field (see `GMField` for the kinds); ``low``, ``high``,
    ``most`` and ``choices`` may be functions of (state, combatant).
    ``vital``: a health field, which a fallen combatant keeps until revived."""

    field: str
    kind: str
    group: str
    low: Bound = None
    high: Bound = None
    whole: bool = True
    choices: Choices | None = None
    most: Bound = None
    nullable: bool = False
    note: str = ""
    vital: bool = False

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"field {self.field!r}: kind {self.kind!r} is not one of {', '.join(KINDS)}")


def _bound(bound: Bound, state: EncounterState, combatant: Combatant) -> float | None:
    return bound(state, combatant) if callable(bound) else bound


def describe(spec: FieldSpec, state: EncounterState, combatant: Combatant, labels: Labels) -> GMField:
    most = _bound(spec.most, state, combatant)
    value = getattr(combatant, spec.field, None)
    if spec.kind == "square" and value is not None:
        value = list(value)
    elif spec.kind == "conditions":
        value = sorted(combatant.conditions)
    elif spec.kind == "revive":
        value = False
    return GMField(
        field=spec.field, label=labels.word("fields", spec.field), kind=spec.kind, group=spec.group, value=value,
        low=_bound(spec.low, state, combatant), high=_bound(spec.high, state, combatant), whole=spec.whole,
        choices=spec.choices(state, combatant) if spec.choices is not None else [],
        most=int(most) if most is not None else None, nullable=spec.nullable, note=spec.note)


def _plain(number: float) -> str:
    return f"{int(number)}" if number == int(number) else f"{number:g}"


def _range(field: GMField) -> str:
    kind = "a whole number" if field.whole else "a number"
    if field.low is not None and field.high is not None:
        return f"{kind} from {_plain(field.low)} to {_plain(field.high)}"
    if field.low is not None:
        return f"{kind} of at least {_plain(field.low)}"
    if field.high is not None:
        return f"{kind} of at most {_plain(field.high)}"
    return kind


def _number_problem(field: GMField, value: Any, high: float | None, what: str) -> str | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return f"{what} must be {_range(field)}"
    if field.whole and value != int(value):
        return f"{what} must be a whole number, not {_plain(value)}"
    if (field.low is not None and value < field.low) or (high is not None and value > high):
        bounded = GMField(field=field.field, label=field.label, kind=field.kind, group=field.group,
                          low=field.low, high=high, whole=field.whole)
        return f"{what} must be {_range(bounded)}, not {_plain(value)}"
    return None


def value_problem(field: GMField, value: Any) -> str | None:
    """Why ``value`` is not one the GM may set for ``field`` (as described
    now), or None. The page's form (gm.js, `problem`) says the same."""
    label = field.label[:1].upper() + field.label[1:]
    values = [choice.value for choice in field.choices]
    if value is None:
        return None if field.nullable else f"{label} must be set"
    if field.kind == "number":
        return _number_problem(field, value, field.high, label)
    if field.kind == "yes_no":
        return None if isinstance(value, bool) else f"{label} must be yes or no (true or false)"
    if field.kind == "choice":
        if value in values:
            return None
        named = ", ".join(c.label for c in field.choices) or "none"
        return f"{label} must be one of {named}" + (" (or none)" if field.nullable else "")
    if field.kind == "choices":
        if not isinstance(value, list) or any(v not in values for v in value):
            return f"{label} must list some of {', '.join(c.label for c in field.choices) or 'none'}"
        if len(set(map(str, value))) != len(value):
            return f"{label} names one twice"
        if field.most is not None and len(value) > field.most:
            return f"{label} lists at most {field.most}"
        return None
    if field.kind == "counts":
        if not isinstance(value, dict):
            return f"{label} must give a number for some of {', '.join(c.label for c in field.choices) or 'none'}"
        by_value = {str(c.value): c for c in field.choices}
        for key, count in value.items():
            choice = by_value.get(str(key))
            if choice is None:
                return f"{label}: {key} is not one of {', '.join(c.label for c in field.choices) or 'none'}"
            high = choice.high if choice.high is not None else field.high
            problem = _number_problem(field, count, high, f"{label} of {choice.label}")
            if problem:
                return problem
        return None
    if field.kind == "revive":
        return None if value is True else f"{label} must be true"
    return None  # "square" and "conditions": the engine's generic checks (they need the map and the combatant)


__all__ = ["GROUPS", "KINDS", "FieldSpec", "describe", "value_problem"]
