"""The toy's sentences: its reactions, said as a person would ("Bo ducks")."""

from __future__ import annotations

from typing import Any

from firelane.engine.state import EncounterState
from firelane.engine.wording import OptionalSentence, Sentence

_REACTION_WORDS = {"duck": "ducks", "snap": "snaps a shot back", "brace": "braces against the blow"}


def _reaction_taken(n: Any, e: Any, s: EncounterState) -> str | None:
    if e.slot != "reaction" or e.action not in _REACTION_WORDS:
        return None
    return f"  {n.name(s, e.combatant)} {_REACTION_WORDS[e.action]} (TOY-2)"


SENTENCES: dict[str, Sentence] = {}

SHARED_EVENT_SENTENCES: dict[str, OptionalSentence] = {
    "ActionTaken": _reaction_taken,
}
