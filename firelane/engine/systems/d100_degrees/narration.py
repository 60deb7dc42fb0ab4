"""The d100-degrees sentences of the narration: its own events, and the
shared events it fills with its own details (``ActionTaken``, ``DamageDealt``,
``StateAdjusted``). The narrator (projections/narration.py) asks these first;
an event without one is shown with its fields. See engine/wording.py for what a
sentence gets.
"""

from __future__ import annotations

from typing import Any

from firelane.engine.state import EncounterState
from firelane.engine.systems.d100_degrees.labels import LABELS
from firelane.engine.wording import OptionalSentence, Sentence, roll_text, names_text, weapon_text




def _d100d_action(n: Any, e: Any, s: EncounterState) -> str | None:
    d, who, slot = e.details, n.name(s, e.combatant), LABELS.word("actions", e.slot)
    weapon = weapon_text(d.get("weapon", ""))
    if e.action == "controlled_fire":
        return (f"{who} fires {weapon} at {names_text(n, s, d.get('targets'))} (Controlled Fire, RoF {d.get('rof')}, "
                f"{slot}, D100D-07)")
    if e.action in ("basic_attack", "all_out_attack"):
        what, rule = ("an All Out Attack", "D100D-05") if e.action == "all_out_attack" else ("a Basic Attack", "D100D-06")
        return f"{who} makes {what} with {weapon} on {names_text(n, s, d.get('targets'))} ({slot}, {rule})"
    if e.action == "suppressing_fire":
        toward = d.get("toward") or ("?", "?")
        return f"{who} lays Suppressing Fire with {weapon} toward ({toward[0]},{toward[1]}) (RoF {d.get('rof')}, {slot}, D100D-09)"
    if e.action == "clear_jam":
        return f"{who} clears the jam of {weapon} ({slot}, D100D-08)"
    if e.action == "move":
        return f"{who} moves {d.get('metres', 0):g} m of {d.get('allowance_m', 0):g} m ({slot}, D100D-02)"
    if e.action in ("dodge", "parry"):
        return f"{who} tries to {e.action} ({slot}, D100D-10)"
    return None


def _d100d_suppressing_resolved(n: Any, e: Any, s: EncounterState) -> str:
    hits = names_text(n, s, e.hits) if e.hits else "no hits"
    jam = n.paint(" — the weapon jams", "yellow") if e.jammed else ""
    return (f"{n.name(s, e.attacker)}'s Suppressing Fire with {weapon_text(e.weapon)} toward ({e.toward[0]},{e.toward[1]}): "
            f"in the killzone {names_text(n, s, e.in_arc)}; hits: {hits} (D100D-09){jam}{roll_text(n, e.roll)}")


def _d100d_adjusted(n: Any, e: Any, s: EncounterState) -> str | None:
    if set(e.changes) != {"jammed"} or "jammed:" not in e.reason:
        return None
    who = n.name(s, e.combatant)
    if not e.changes["jammed"]:
        return None
    return n.paint(f"{who}'s {e.reason.replace('_', ' ')} ({e.rule})", "yellow")


# event tag -> its sentence
SENTENCES: dict[str, Sentence] = {
    "D100DSuppressingFireResolved": _d100d_suppressing_resolved,
}

# shared event tag -> the system's sentence for it (None from it: the shared one)
SHARED_EVENT_SENTENCES: dict[str, OptionalSentence] = {
    "StateAdjusted": _d100d_adjusted,
    "ActionTaken": _d100d_action,
}
