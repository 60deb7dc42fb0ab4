"""Reactions of d100-zones: the free attacks on leaving Engaged range (D100Z-15).

When a combatant moves out of Engaged range (0-2 m) of enemies, each of them
may make one free attack before the move goes on, through a reaction window.
Claims all have the same priority, so the engine orders them by initiative
(highest first), then by ID: "in initiative order". The free attack is a
melee or unarmed attack (option ``{"weapon": name}``; default: the first melee
weapon, else fists) and the mover's dodge against it is at -20. It does not
use up anything: ``ActionTaken(slot="free")``.
"""

from __future__ import annotations

from typing import Any

from firelane.engine.core import Decision, Rejected, require
from firelane.engine.dice import Dice
from firelane.engine.systems.d100_zones.actions import (
    FREE_ATTACK,
    close_weapon,
    engaged,
    find_weapon,
    resolve_attack,
    targeting_modifiers,
)
from firelane.engine.systems.d100_zones.state import MELEE, UNARMED, D100ZCombatant, D100ZState, ZWeapon
from firelane.events.schemas import ActionTaken, Modifier


def free_attack_weapon(state: D100ZState, me: D100ZCombatant, name: str | None) -> ZWeapon:
    if name is None:
        return close_weapon(state, me)
    weapon = find_weapon(state, me, name)
    require(weapon.kind in (MELEE, UNARMED), f"a free attack is a melee or unarmed attack; {weapon.name} is {weapon.kind}")
    return weapon


def resolve_free_attack(decision: Decision, mover_id: str, claimant: str, options: dict[str, Any], dice: Dice) -> str | None:
    """D100Z-15: one free attack as the mover disengages; the mover dodges at -20."""
    state: D100ZState = decision.state  # type: ignore[assignment]
    me = state.combatants[claimant]
    mover = state.combatants[mover_id]
    if me.out_of_fight:
        return f"{claimant} is out of the fight"
    if mover.out_of_fight:
        return f"{mover_id} is already down"
    if not engaged(state, me, mover):
        return f"{mover_id} is no longer engaged with {claimant}"
    try:
        weapon = free_attack_weapon(state, me, options.get("weapon"))
    except Rejected as rejected:
        return rejected.reason
    attack_mods, _, _ = targeting_modifiers(state, me, mover, weapon)
    decision.emit(ActionTaken(combatant=claimant, action=FREE_ATTACK, slot="free", rule="D100Z-15", details={"weapon": weapon.name, "target": mover_id}))
    dodge_penalty = [Modifier(source="dodging while leaving Engaged range", rule="D100Z-15", value=-20)]
    resolve_attack(decision, claimant, mover_id, weapon, FREE_ATTACK, attack_mods, dodge_penalty, dice)
    return None
