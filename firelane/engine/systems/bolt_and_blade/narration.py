"""The Bolt & Blade sentences of the narration: its own events, and the
shared events it fills with its own details (``ActionTaken``, ``DamageDealt``,
``StateAdjusted``). The narrator (projections/narration.py) asks these first;
an event without one is shown with its fields. See engine/wording.py for what a
sentence gets.
"""

from __future__ import annotations

import re

from typing import Any

from firelane.engine.state import EncounterState
from firelane.engine.wording import OptionalSentence, Sentence, explain_roll, name_of, squares_text


def _bb_movement_stopped(n: Any, e: Any, s: EncounterState) -> str:
    left = f"; unused path {squares_text(e.unused_path)}" if e.unused_path else ""
    return f"{n.name(s, e.combatant)} stops at ({e.at[0]},{e.at[1]}): {e.reason} ({e.rule}){left}"


def _bb_reactive_fire_choice(n: Any, e: Any, s: EncounterState) -> str:
    what = "keeps moving" if e.choice == "continue" else n.paint("stops and goes to ground", "yellow")
    how = "" if getattr(e, "answered", True) else " — no answer: the move's declared choice"
    return f"{n.name(s, e.combatant)} {what} under {n.name(s, e.attacker)}'s fire ({e.rule}){how}"


def _bb_shot_held(n: Any, e: Any, s: EncounterState) -> str:
    return f"{n.name(s, e.reactor)} holds fire for {n.name(s, e.mover)} at ({e.square[0]},{e.square[1]}) ({e.rule})"


def _bb_exchange(n: Any, e: Any, s: EncounterState) -> str:
    # Each shot is measured against its target's Defense, not against the other
    # shot: say so, then which shots land (a higher total only breaks a double hit).
    def shot(who: str, total: int, would_hit: bool, target: str) -> str:
        verdict = n.paint("would hit", "red") if would_hit else n.paint("would miss", "green")
        return f"{n.name(s, who)}'s shot {total} {verdict} against {name_of(s, target)}'s Defense"

    landed = [name_of(s, who) for who, hits in ((e.attacker, e.attacker_hits), (e.defender, e.defender_hits)) if hits]
    result = f"{' and '.join(landed)} land{'s' if len(landed) == 1 else ''}" if landed else "neither lands"
    tie_break = ""
    if e.attacker_would_hit and e.defender_would_hit:
        tie_break = " (both would hit: the higher total lands, a tie lands both)"
    return (f"exchange of fire ({e.rule}): {shot(e.attacker, e.attacker_total, e.attacker_would_hit, e.defender)}; "
            f"{shot(e.defender, e.defender_total, e.defender_would_hit, e.attacker)} — {result}{tie_break}")


def _bb_attack_recomputed(n: Any, e: Any, s: EncounterState) -> str:
    verdict = n.paint("still hits", "red") if e.hit else n.paint("now misses", "green")
    attack = getattr(e, "attack", None)
    terms = n.paint(f"  {explain_roll(attack, details=n.details, words=n.words)}", "dim") if attack is not None else ""
    defence = n.paint(f"  defence: {explain_roll(e.defense, details=n.details, words=n.words)}", "dim")
    return f"{n.name(s, e.attacker)}'s shot at {n.name(s, e.target)} recomputed after the dive: {e.attack_total} vs Defense {e.defense.total}, {verdict} ({e.rule}){terms}{defence}"


def _bb_thrown(n: Any, e: Any, s: EncounterState) -> str:
    landed = "on target" if e.on_target else n.paint("off target", "yellow")
    roll = n.paint(f"  {explain_roll(e.roll, details=n.details, words=n.words)}", "dim") if e.roll is not None else ""
    return f"{n.name(s, e.combatant)} throws a {e.weapon} at ({e.aimed[0]},{e.aimed[1]}): {landed}{roll}"


def _bb_scattered(n: Any, e: Any, s: EncounterState) -> str:
    way = e.roll.details.get("direction", f"{e.direction}")
    drift = f"{e.distance_ft:g} ft {way}" if e.distance_ft else way
    roll = n.paint(f"  {explain_roll(e.roll, details=n.details, words=n.words)}", "dim")
    return (f"{n.name(s, e.combatant)}'s {e.weapon} scatters {drift}, from ({e.aimed[0]},{e.aimed[1]}) "
            f"to ({e.landed[0]},{e.landed[1]}) ({e.rule}){roll}")


def _bb_area_resolved(n: Any, e: Any, s: EncounterState) -> str:
    caught = ", ".join(n.name(s, c.combatant) for c in e.caught) or "no one"
    blocked = f"; shielded by walls: {', '.join(n.name(s, b) for b in e.blocked)}" if e.blocked else ""
    # The blast's damage is rolled once (BB-CMB-24), caught or not: show it, as the audit does.
    damage = n.paint(f"  {explain_roll(e.damage, details=n.details, words=n.words)}", "dim") if e.damage is not None else ""
    return f"{e.weapon} ({e.shape}) goes off at ({e.origin[0]},{e.origin[1]}), catching {caught}{blocked}{damage}"


# event tag -> its sentence
SENTENCES: dict[str, Sentence] = {
    "BBMovementStopped": _bb_movement_stopped,
    "BBReactiveFireChoice": _bb_reactive_fire_choice,
    "BBShotHeld": _bb_shot_held,
    "BBExchangeResolved": _bb_exchange,
    "BBAttackRecomputed": _bb_attack_recomputed,
    "BBThrown": _bb_thrown,
    "BBScattered": _bb_scattered,
    "BBAreaResolved": _bb_area_resolved,
}

_TOOK_COVER = re.compile(r"took cover: (\w+) -> (\w+)")


def cover_words(level: str) -> str:
    """A cover level as words: "none" -> "no cover", "light" -> "light cover"."""
    return "no cover" if level in ("none", "") else f"{level} cover"


def _bb_adjusted(n: Any, e: Any, s: EncounterState) -> str | None:
    """BB-CMB-30 Take Cover as a sentence ("took cover: none -> light" as the rules write it)."""
    took = _TOOK_COVER.fullmatch(e.reason or "")
    if set(e.changes) != {"taking_cover"} or took is None:
        return None
    return f"{n.name(s, e.combatant)} takes cover: from {cover_words(took.group(1))} to {cover_words(took.group(2))} ({e.rule})"


# shared event tag -> the system's sentence for it (None from it: the shared one)
SHARED_EVENT_SENTENCES: dict[str, OptionalSentence] = {
    "StateAdjusted": _bb_adjusted,
}
