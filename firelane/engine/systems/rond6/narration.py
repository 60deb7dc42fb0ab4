"""The RonD6 sentences of the narration: its own events, and the
shared events it fills with its own details (``ActionTaken``, ``DamageDealt``,
``StateAdjusted``). The narrator (projections/narration.py) asks these first;
an event without one is shown with its fields. See engine/wording.py for what a
sentence gets.
"""

from __future__ import annotations

import re

from typing import Any

from firelane.engine.state import EncounterState
from firelane.engine.systems.rond6.labels import LABELS
from firelane.engine.wording import OptionalSentence, Sentence, counted, explain_roll, name_of, names_text, roll_text, weapon_text


def _r6_actions_declared(n: Any, e: Any, s: EncounterState) -> str:
    penalty = f", -{e.penalty_dice}D to each ({e.rule})" if e.penalty_dice else ""
    return n.paint(f"  {name_of(s, e.combatant)} declares {e.count} action{'s' if e.count != 1 else ''} (limit {e.limit}){penalty}", "dim")


def _r6_action_declared(n: Any, e: Any, s: EncounterState) -> str:
    command = dict(e.command)
    target = command.get("target")
    aim = f" at {n.name(s, target)}" if isinstance(target, str) and target in s.combatants else ""
    interrupt = n.paint(" (interrupting)", "yellow") if e.interrupt else ""
    return f"{n.name(s, e.combatant)} declares {e.action.removeprefix('R6').lower()}{aim}{interrupt}"


def _r6_damage_rolled(n: Any, e: Any, s: EncounterState) -> str:
    return f"{n.name(s, e.attacker)}'s {e.weapon} rolls {n.paint(str(e.roll.total), 'red', 'bold')} damage against {n.name(s, e.target)}  " + n.paint(
        explain_roll(e.roll, details=n.details, words=n.words), "dim")


def _r6_resistance_boosted(n: Any, e: Any, s: EncounterState) -> str:
    spent = [f"{e.character_points} Character Point{'s' if e.character_points != 1 else ''}"] if e.character_points else []
    if e.fate_point:
        spent.append("a Fate Point")
    added = f" (+{e.roll.total})" if e.roll is not None else ""
    text = f"{n.name(s, e.combatant)} spends {' and '.join(spent) or 'nothing'} to resist{added} ({e.rule})"
    if e.roll is not None:  # the Wild Dice: explosions, and a 1 that a complication removed (R6-20)
        text += "  " + n.paint(explain_roll(e.roll, details=n.details, words=n.words), "dim")
    return text




def _r6_action(n: Any, e: Any, s: EncounterState) -> str | None:
    d = e.details
    if "action_number" not in d:
        return None
    what = LABELS.word("actions", e.action)
    full = " — a Full Action" if e.slot == "full" else ""
    penalty = f", -{d['penalty_dice']}D for multiple actions" if d.get("penalty_dice") else ""
    return n.paint(f"  {n.name(s, e.combatant)}: action {d['action_number']} of {d['declared']}: {what}{full}{penalty} ({e.rule})", "dim")


def _wound_level(details: dict[str, Any]) -> str:
    """R6-21: "Incapacitated (3 Wounds)"."""
    total = int(details["wounds_total"])
    return f"{str(details.get('injury', '')).capitalize()} ({total} Wound{'s' if total != 1 else ''}, R6-21)"


def _r6_damage(n: Any, e: Any, s: EncounterState) -> str | None:
    d = e.details
    if "wounds_total" not in d:
        return None
    who = n.name(s, e.target)
    if not d.get("stunned"):
        verdict = n.paint("no effect", "green")
    elif e.amount:
        wounds = f"{e.amount} Wound{'s' if e.amount != 1 else ''}"
        verdict = n.paint(f"Stunned and {wounds}", "red", "bold") + f": now {_wound_level(d)}"
    else:
        verdict = n.paint("Stunned", "yellow") + (f" (still {_wound_level(d)})" if d["wounds_total"] else "")
    stun = " (Stun Damage)" if d.get("stun_damage") else ""
    return (f"{who}: damage {d['damage_total']} against Damage Resistance {d['resistance_total']}{stun}: {verdict} "
            f"({e.rule or 'R6-19'}){roll_text(n, e.roll)}")


def _r6_strenuous(n: Any, e: Any, s: EncounterState) -> str:
    activity = e.activity.replace("_", " ")
    if e.roll is None:
        left = max(0, e.free_rounds - e.streak)
        return n.paint(f"  {n.name(s, e.combatant)} keeps up strenuous activity, {activity}: round {e.streak} in a row, "
                       f"{left} more before Fortitude tests ({e.rule})", "dim")
    verdict = n.paint("becomes fatigued", "yellow") if e.fatigued else "holds up"
    return f"{n.name(s, e.combatant)} {verdict} after {e.streak} rounds of {activity} ({e.rule}){roll_text(n, e.roll)}"


def _r6_area_targeted(n: Any, e: Any, s: EncounterState) -> str:
    where = f"at ({e.center[0]},{e.center[1]})" if e.center is not None else f"facing {e.facing}"
    return (f"{n.name(s, e.attacker)} targets a {e.size} {e.shape} {where} with {weapon_text(e.weapon)}: "
            f"{len(e.squares)} Spaces, catching {names_text(n, s, e.targets)} ({e.rule})")


def _r6_healed(n: Any, e: Any, s: EncounterState) -> str:
    who = n.name(s, e.patient)
    by = f"{n.name(s, e.healer)} treats {who}" if e.healer else f"{who} heals naturally"
    if e.wounds_after < e.wounds_before:
        result = n.paint(f"{e.wounds_before} → {e.wounds_after} Wounds", "green")
    else:
        result = "no Wound healed" + (n.paint(" (a critical failure)", "red") if e.critical_failure else "")
    extra = "; Stunned removed" if e.stunned_removed else ""
    return f"{by} ({e.kind} healing): {result}{extra} ({e.rule}){roll_text(n, e.roll)}"


def _r6_adjusted(n: Any, e: Any, s: EncounterState) -> str | None:
    if set(e.changes) != {"ammo"} or not e.reason.startswith("fired "):
        return None
    combatant = s.combatants.get(e.combatant)
    names = {w.id: (w.name or w.id) for w in getattr(combatant, "weapons", [])}
    left = ", ".join(f"{names.get(w, w)} {rounds}" for w, rounds in e.changes["ammo"].items())
    fired = e.reason.removeprefix("fired ")
    shot = re.match(r"(\d+) from (\S+)(.*)", fired)  # "3 from marksman_rifle ..." as the rules write it
    if shot is not None:
        weapon = names.get(shot.group(2), weapon_text(shot.group(2), n.words))
        fired = f"{counted(int(shot.group(1)), 'round')} from the {weapon}{shot.group(3)}"
    return n.paint(f"  {n.name(s, e.combatant)} fires {fired} (rounds left: {left}) ({e.rule})", "dim")


# event tag -> its sentence
SENTENCES: dict[str, Sentence] = {
    "R6Strenuous": _r6_strenuous,
    "R6AreaTargeted": _r6_area_targeted,
    "R6Healed": _r6_healed,
    "R6ActionsDeclared": _r6_actions_declared,
    "R6ActionDeclared": _r6_action_declared,
    "R6DamageRolled": _r6_damage_rolled,
    "R6ResistanceBoosted": _r6_resistance_boosted,
}

# shared event tag -> the system's sentence for it (None from it: the shared one)
SHARED_EVENT_SENTENCES: dict[str, OptionalSentence] = {
    "StateAdjusted": _r6_adjusted,
    "ActionTaken": _r6_action,
    "DamageDealt": _r6_damage,
}
