"""Sentences for the rule systems' own most frequent events.

Keyed by event tag; each takes the narrator, the event and the state after it.
An event without an entry here is shown with its fields (Narrator._generic).
Fields are read by name, so these work on any event carrying them.

`SYSTEM_SENTENCES` is keyed by (system, tag) for the shared events a system
fills with its own details (``ActionTaken``, ``DamageDealt``): the narrator
asks it first; a sentence that returns None leaves the event to the shared one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from firelane.engine.state import EncounterState
from firelane.projections.audit import explain_roll

Sentence = Callable[[Any, Any, EncounterState], str]


def _squares(path: list[Any]) -> str:
    return " → ".join(f"({x},{y})" for x, y in path)


def _bb_movement_stopped(n: Any, e: Any, s: EncounterState) -> str:
    left = f"; unused path {_squares(e.unused_path)}" if e.unused_path else ""
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
        return f"{n.name(s, who)}'s shot {total} {verdict} against {s.combatants[target].name}'s Defense"

    landed = [s.combatants[who].name for who, hits in ((e.attacker, e.attacker_hits), (e.defender, e.defender_hits)) if hits]
    result = f"{' and '.join(landed)} land{'s' if len(landed) == 1 else ''}" if landed else "neither lands"
    tie_break = ""
    if e.attacker_would_hit and e.defender_would_hit:
        tie_break = " (both would hit: the higher total lands, a tie lands both)"
    return (f"exchange of fire ({e.rule}): {shot(e.attacker, e.attacker_total, e.attacker_would_hit, e.defender)}; "
            f"{shot(e.defender, e.defender_total, e.defender_would_hit, e.attacker)} — {result}{tie_break}")


def _bb_attack_recomputed(n: Any, e: Any, s: EncounterState) -> str:
    verdict = n.paint("still hits", "red") if e.hit else n.paint("now misses", "green")
    attack = getattr(e, "attack", None)
    terms = n.paint(f"  {explain_roll(attack, details=n.details)}", "dim") if attack is not None else ""
    defence = n.paint(f"  defence: {explain_roll(e.defense, details=n.details)}", "dim")
    return f"{n.name(s, e.attacker)}'s shot at {n.name(s, e.target)} recomputed after the dive: {e.attack_total} vs Defense {e.defense.total}, {verdict} ({e.rule}){terms}{defence}"


def _bb_thrown(n: Any, e: Any, s: EncounterState) -> str:
    landed = "on target" if e.on_target else n.paint("off target", "yellow")
    roll = n.paint(f"  {explain_roll(e.roll, details=n.details)}", "dim") if e.roll is not None else ""
    return f"{n.name(s, e.combatant)} throws a {e.weapon} at ({e.aimed[0]},{e.aimed[1]}): {landed}{roll}"


def _bb_scattered(n: Any, e: Any, s: EncounterState) -> str:
    way = e.roll.details.get("direction", f"{e.direction}")
    drift = f"{e.distance_ft:g} ft {way}" if e.distance_ft else way
    roll = n.paint(f"  {explain_roll(e.roll, details=n.details)}", "dim")
    return (f"{n.name(s, e.combatant)}'s {e.weapon} scatters {drift}, from ({e.aimed[0]},{e.aimed[1]}) "
            f"to ({e.landed[0]},{e.landed[1]}) ({e.rule}){roll}")


def _bb_area_resolved(n: Any, e: Any, s: EncounterState) -> str:
    caught = ", ".join(n.name(s, c.combatant) for c in e.caught) or "no one"
    blocked = f"; shielded by walls: {', '.join(n.name(s, b) for b in e.blocked)}" if e.blocked else ""
    # The blast's damage is rolled once (BB-CMB-24), caught or not: show it, as the audit does.
    damage = n.paint(f"  {explain_roll(e.damage, details=n.details)}", "dim") if e.damage is not None else ""
    return f"{e.weapon} ({e.shape}) goes off at ({e.origin[0]},{e.origin[1]}), catching {caught}{blocked}{damage}"


def _r6_actions_declared(n: Any, e: Any, s: EncounterState) -> str:
    penalty = f", -{e.penalty_dice}D to each ({e.rule})" if e.penalty_dice else ""
    return n.paint(f"  {s.combatants[e.combatant].name} declares {e.count} action{'s' if e.count != 1 else ''} (limit {e.limit}){penalty}", "dim")


def _r6_action_declared(n: Any, e: Any, s: EncounterState) -> str:
    command = dict(e.command)
    target = command.get("target")
    aim = f" at {n.name(s, target)}" if isinstance(target, str) and target in s.combatants else ""
    interrupt = n.paint(" (interrupting)", "yellow") if e.interrupt else ""
    return f"{n.name(s, e.combatant)} declares {e.action.removeprefix('R6').lower()}{aim}{interrupt}"


def _r6_damage_rolled(n: Any, e: Any, s: EncounterState) -> str:
    return f"{n.name(s, e.attacker)}'s {e.weapon} rolls {n.paint(str(e.roll.total), 'red', 'bold')} damage against {n.name(s, e.target)}  " + n.paint(
        explain_roll(e.roll, details=n.details), "dim")


def _r6_resistance_boosted(n: Any, e: Any, s: EncounterState) -> str:
    spent = [f"{e.character_points} Character Point{'s' if e.character_points != 1 else ''}"] if e.character_points else []
    if e.fate_point:
        spent.append("a Fate Point")
    added = f" (+{e.roll.total})" if e.roll is not None else ""
    text = f"{n.name(s, e.combatant)} spends {' and '.join(spent) or 'nothing'} to resist{added} ({e.rule})"
    if e.roll is not None:  # the Wild Dice: explosions, and a 1 that a complication removed (R6-20)
        text += "  " + n.paint(explain_roll(e.roll, details=n.details), "dim")
    return text


def _d100z_first_aid(n: Any, e: Any, s: EncounterState) -> str:
    return f"{n.name(s, e.healer)} gives first aid to {n.name(s, e.target)}: +{e.healed} HP (now {e.hp}){' — critical' if e.critical else ''} ({e.rule})"


def _d100z_revived(n: Any, e: Any, s: EncounterState) -> str:
    return f"{n.name(s, e.combatant)} is back in the fight with {e.hp} HP{f': {e.reason}' if e.reason else ''}"


# ---------------------------------------------------------------- shared events, per system

OptionalSentence = Callable[[Any, Any, EncounterState], "str | None"]


def _roll_text(n: Any, roll: Any) -> str:
    return n.paint(f"  {explain_roll(roll, details=n.details)}", "dim") if roll is not None else ""


def _names(n: Any, s: EncounterState, ids: Any) -> str:
    return ", ".join(n.name(s, c) for c in ids) if ids else "no one"


def _weapon(name: Any) -> str:
    return str(name).replace("_", " ")


_D100D_SLOTS = {"half": "a Half Action", "full": "a Full Action", "reaction": "a reaction"}


def _d100d_action(n: Any, e: Any, s: EncounterState) -> str | None:
    d, who, slot = e.details, n.name(s, e.combatant), _D100D_SLOTS.get(e.slot, e.slot)
    weapon = _weapon(d.get("weapon", ""))
    if e.action == "controlled_fire":
        return (f"{who} fires {weapon} at {_names(n, s, d.get('targets'))} (Controlled Fire, RoF {d.get('rof')}, "
                f"{slot}, D100D-07)")
    if e.action in ("basic_attack", "all_out_attack"):
        what, rule = ("an All Out Attack", "D100D-05") if e.action == "all_out_attack" else ("a Basic Attack", "D100D-06")
        return f"{who} makes {what} with {weapon} on {_names(n, s, d.get('targets'))} ({slot}, {rule})"
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
    hits = _names(n, s, e.hits) if e.hits else "no hits"
    jam = n.paint(" — the weapon jams", "yellow") if e.jammed else ""
    return (f"{n.name(s, e.attacker)}'s Suppressing Fire with {_weapon(e.weapon)} toward ({e.toward[0]},{e.toward[1]}): "
            f"in the killzone {_names(n, s, e.in_arc)}; hits: {hits} (D100D-09){jam}{_roll_text(n, e.roll)}")


def _d100z_action(n: Any, e: Any, s: EncounterState) -> str | None:
    d, who = e.details, n.name(s, e.combatant)
    weapon = _weapon(d.get("weapon", ""))
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
                f"{_names(n, s, d.get('caught'))} (the turn's action, D100Z-13)")
    return None


_R6_ACTIONS = {
    "attack": "attack", "charge": "charge", "ready": "ready a weapon", "reload": "reload", "stand": "stand up",
    "walk_partial": "walk (partial move)", "walk_full": "walk (full move)", "walk_run": "run",
    "area_burst": "throw at an area", "area_cone": "attack a cone", "assisted_healing": "treat a wound",
    "wait": "wait", "escape": "break free", "grapple": "grapple", "heads_down": "lay down covering fire",
}


def _r6_action(n: Any, e: Any, s: EncounterState) -> str | None:
    d = e.details
    if "action_number" not in d:
        return None
    what = _R6_ACTIONS.get(e.action, e.action.replace("_", " "))
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
            f"({e.rule or 'R6-19'}){_roll_text(n, e.roll)}")


def _r6_strenuous(n: Any, e: Any, s: EncounterState) -> str:
    activity = e.activity.replace("_", " ")
    if e.roll is None:
        left = max(0, e.free_rounds - e.streak)
        return n.paint(f"  {n.name(s, e.combatant)} keeps up strenuous activity, {activity}: round {e.streak} in a row, "
                       f"{left} more before Fortitude tests ({e.rule})", "dim")
    verdict = n.paint("becomes fatigued", "yellow") if e.fatigued else "holds up"
    return f"{n.name(s, e.combatant)} {verdict} after {e.streak} rounds of {activity} ({e.rule}){_roll_text(n, e.roll)}"


def _r6_area_targeted(n: Any, e: Any, s: EncounterState) -> str:
    where = f"at ({e.center[0]},{e.center[1]})" if e.center is not None else f"facing {e.facing}"
    return (f"{n.name(s, e.attacker)} targets a {e.size} {e.shape} {where} with {_weapon(e.weapon)}: "
            f"{len(e.squares)} Spaces, catching {_names(n, s, e.targets)} ({e.rule})")


def _r6_healed(n: Any, e: Any, s: EncounterState) -> str:
    who = n.name(s, e.patient)
    by = f"{n.name(s, e.healer)} treats {who}" if e.healer else f"{who} heals naturally"
    if e.wounds_after < e.wounds_before:
        result = n.paint(f"{e.wounds_before} → {e.wounds_after} Wounds", "green")
    else:
        result = "no Wound healed" + (n.paint(" (a critical failure)", "red") if e.critical_failure else "")
    extra = "; Stunned removed" if e.stunned_removed else ""
    return f"{by} ({e.kind} healing): {result}{extra} ({e.rule}){_roll_text(n, e.roll)}"


def _d100d_adjusted(n: Any, e: Any, s: EncounterState) -> str | None:
    if set(e.changes) != {"jammed"} or "jammed:" not in e.reason:
        return None
    who = n.name(s, e.combatant)
    if not e.changes["jammed"]:
        return None
    return n.paint(f"{who}'s {e.reason.replace('_', ' ')} ({e.rule})", "yellow")


def _d100z_adjusted(n: Any, e: Any, s: EncounterState) -> str | None:
    if set(e.changes) != {"hp"} or not e.reason.startswith("dying"):
        return None
    return n.paint(f"  {n.name(s, e.combatant)} is dying and {e.reason.removeprefix('dying: ')}: {e.changes['hp']} HP ({e.rule})", "dim")


def _r6_adjusted(n: Any, e: Any, s: EncounterState) -> str | None:
    if set(e.changes) != {"ammo"} or not e.reason.startswith("fired "):
        return None
    combatant = s.combatants.get(e.combatant)
    names = {w.id: (w.name or w.id) for w in getattr(combatant, "weapons", [])}
    left = ", ".join(f"{names.get(w, w)} {rounds}" for w, rounds in e.changes["ammo"].items())
    fired = e.reason.removeprefix("fired ")
    for weapon_id, name in names.items():
        fired = fired.replace(f" from {weapon_id}", f" rounds from the {name}")
    return n.paint(f"  {n.name(s, e.combatant)} fires {fired} (rounds left: {left}) ({e.rule})", "dim")


SYSTEM_SENTENCES: dict[tuple[str, str], OptionalSentence] = {
    ("d100-degrees", "StateAdjusted"): _d100d_adjusted,
    ("d100-zones", "StateAdjusted"): _d100z_adjusted,
    ("rond6", "StateAdjusted"): _r6_adjusted,
    ("d100-degrees", "ActionTaken"): _d100d_action,
    ("d100-zones", "ActionTaken"): _d100z_action,
    ("rond6", "ActionTaken"): _r6_action,
    ("rond6", "DamageDealt"): _r6_damage,
}


SENTENCES: dict[str, Sentence] = {
    "D100DSuppressingFireResolved": _d100d_suppressing_resolved,
    "R6Strenuous": _r6_strenuous,
    "R6AreaTargeted": _r6_area_targeted,
    "R6Healed": _r6_healed,
    "BBMovementStopped": _bb_movement_stopped,
    "BBReactiveFireChoice": _bb_reactive_fire_choice,
    "BBShotHeld": _bb_shot_held,
    "BBExchangeResolved": _bb_exchange,
    "BBAttackRecomputed": _bb_attack_recomputed,
    "BBThrown": _bb_thrown,
    "BBScattered": _bb_scattered,
    "BBAreaResolved": _bb_area_resolved,
    "R6ActionsDeclared": _r6_actions_declared,
    "R6ActionDeclared": _r6_action_declared,
    "R6DamageRolled": _r6_damage_rolled,
    "R6ResistanceBoosted": _r6_resistance_boosted,
    "D100ZFirstAidGiven": _d100z_first_aid,
    "D100ZRevived": _d100z_revived,
}
