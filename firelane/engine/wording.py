"""Words for what the rules wrote: a roll explained die by die, squares, names.

Pure text, shared by the narration (projections/narration.py), the audit, and
each rule system's own sentences (``engine/systems/<name>/narration.py``),
which get a narrator object with ``name(state, combatant)``, ``paint(text,
*styles)`` and ``details`` and return one line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from firelane.engine.state import EncounterState
from firelane.events.schemas import Roll

# (narrator, event, state after the event) -> the sentence; an optional one may
# return None to leave a shared event to the shared sentence.
Sentence = Callable[[Any, Any, EncounterState], str]
OptionalSentence = Callable[[Any, Any, EncounterState], "str | None"]


def explain_roll(roll: Roll, *, details: bool = True) -> str:
    kept = set(roll.counted())
    dice = " ".join(
        f"d{d.sides}:{d.face}" + ("" if i in kept else "(dropped)") for i, d in enumerate(roll.dice)
    )
    head = f"{roll.purpose} [{roll.rule}] {dice or 'no dice'}"
    terms = " ".join(f"{modifier.value:+d} {modifier.source} ({modifier.rule})" for modifier in roll.modifiers)
    if roll.compare == "<=" and roll.target is not None and terms:
        # A roll-under test: the dice are the total, the modifiers make the target (`sum_problem`).
        text = f"{head} = {roll.total} vs {roll.target} = {terms} ({roll.compare})"
    else:
        text = f"{head} {terms}".rstrip() + f" = {roll.total}"
        if roll.target is not None:
            text += f" vs {roll.target} ({roll.compare})"
    if roll.success is not None:
        text += " success" if roll.success else " failure"
    if roll.notes:
        text += f" [{'; '.join(roll.notes)}]"
    if details and roll.details:
        text += " {" + ", ".join(f"{k}={v}" for k, v in roll.details.items()) + "}"
    return text


def squares_text(path: Iterable[Any]) -> str:
    """(1,2) → (1,3) → ..."""
    return " → ".join(f"({x},{y})" for x, y in path)


def roll_text(narrator: Any, roll: Roll | None) -> str:
    """A roll explained, dimmed, after two spaces (nothing when there is no roll)."""
    return narrator.paint(f"  {explain_roll(roll, details=narrator.details)}", "dim") if roll is not None else ""


def names_text(narrator: Any, state: EncounterState, ids: Any) -> str:
    """Combatants' names, or "no one"."""
    return ", ".join(narrator.name(state, c) for c in ids) if ids else "no one"


def weapon_text(name: Any) -> str:
    return str(name).replace("_", " ")
