"""The d100-zones sentences of the narration: its own events, and the
shared events it fills with its own details (``ActionTaken``, ``DamageDealt``,
``StateAdjusted``). The narrator (projections/narration.py) asks these first;
an event without one is shown with its fields. See engine/wording.py for what a
sentence gets.
"""

from __future__ import annotations

from typing import Any

from firelane.engine.state import EncounterState
from firelane.engine.wording import OptionalSentence, Sentence, names_text, weapon_text


def _d100z_first_aid(n: Any, e: Any, s: EncounterState) -> str:
    return f"{n.name(s, e.healer)} gives first aid to {n.name(s, e.target)}: +{e.healed} HP (now {e.hp}){' — critical' if e.critical else ''} ({e.rule})"


def _d100z_revived(n: Any, e: Any, s: EncounterState) -> str:
    return f"{n.name(s, e.combatant)} is back in the fight with {e.hp} HP{f': {e.reason}' if e.reason else ''}"


def _d100z_action(n: Any, e: Any, s: EncounterState) -> str | None:
    d, who = e.details, n.name(s, e.combatant)
    weapon = weapon_text(d.get("weapon", ""))
    target = n.name(s, d["target"]) if d.get("target") in s.combatants else ""
    if e.action == "attack":
        return f"{who} attacks {target} with {weapon} (the turn's action, D100Z-04)"
    if e.action == "second_attack":
        return f"{who} attacks {target} again with {weapon} (a second attack at {d.get('penalty', 0):+d}, D100Z-11)"
    if e.action == "move":
        because = " and ".join(d.get("because", [])) or "the move"
        return f"{who}'s move takes the action: {because} ({e.rule})"
    if e.action == "aimed_shot":
        return f"{who} aims {weapon} at {target}: the whole turn, +20 on the next attack at it (D100Z-12)"
    if e.action == "first_aid":
        return f"{who} gives first aid to {target} (the turn's action, D100Z-14)"
    if e.action == "suppressive_fire":
        return (f"{who} lays Suppressive Fire with {weapon} into the {d.get('zone', '?')} zone, catching "
                f"{names_text(n, s, d.get('caught'))} (the turn's action, D100Z-13)")
    return None


def _d100z_adjusted(n: Any, e: Any, s: EncounterState) -> str | None:
    if set(e.changes) != {"hp"} or not e.reason.startswith("dying"):
        return None
    return n.paint(f"  {n.name(s, e.combatant)} is dying and {e.reason.removeprefix('dying: ')}: {e.changes['hp']} HP ({e.rule})", "dim")


# event tag -> its sentence
SENTENCES: dict[str, Sentence] = {
    "D100ZFirstAidGiven": _d100z_first_aid,
    "D100ZRevived": _d100z_revived,
}

# shared event tag -> the system's sentence for it (None from it: the shared one)
SHARED_EVENT_SENTENCES: dict[str, OptionalSentence] = {
    "StateAdjusted": _d100z_adjusted,
    "ActionTaken": _d100z_action,
}
