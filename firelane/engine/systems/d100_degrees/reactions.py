"""Evasion reactions of d100-degrees (D100D-10): dodge and parry.

A hit opens a reaction window for each target hit that can still evade. House
defaults: one Evasion reaction per round (the engine's one reaction, reset at
the start of each round); an Evasion is a Challenging (+0) test, Agility for a
dodge and Weapon Skill for a parry (parry only against melee attacks and only
with a melee weapon in hand); success cancels every hit of that attack on the
evader. After its own All Out Attack a combatant cannot evade until its next
turn (D100D-05).
"""

from __future__ import annotations

from typing import Any

from firelane.engine.core import Decision
from firelane.engine.dice import Dice
from firelane.engine.state import ReactionWindow
from firelane.engine.systems.d100_degrees import rules
from firelane.engine.systems.d100_degrees.rules import ALL_OUT, DODGE, EVASION_TEST, PARRY
from firelane.engine.systems.d100_degrees.state import D100DCombatant, D100DState
from firelane.events.schemas import ActionTaken, OrderedClaim, TestRolled


def evasion_block(combatant: D100DCombatant) -> str | None:
    """Why this combatant cannot evade now, or None."""
    if combatant.out_of_fight:
        return f"{combatant.id} is out of the fight"
    if ALL_OUT in combatant.conditions:
        return f"{combatant.id} made an All Out Attack and cannot evade until its next turn (D100D-05)"
    if combatant.reaction_used:
        return f"{combatant.id} has already used its Evasion reaction this round (house default: one per round)"
    return None


def evasions_for(combatant: D100DCombatant, attack_kind: str) -> list[str]:
    if evasion_block(combatant) is not None:
        return []
    offered = [DODGE]
    if attack_kind == "melee" and combatant.weapon(None, "melee") is not None:
        offered.append(PARRY)
    return offered


def resolve_evasion(decision: Decision, window: ReactionWindow, claim: OrderedClaim, dice: Dice) -> str | None:
    state: D100DState = decision.state  # type: ignore[assignment]
    evader = state.combatants[claim.combatant]
    blocked = evasion_block(evader)
    if blocked is not None:
        return blocked
    attack: dict[str, Any] = window.continuation["attack"]
    if claim.reaction == PARRY and (attack["kind"] != "melee" or evader.weapon(None, "melee") is None):
        return "a parry needs a melee weapon against a melee attack"
    decision.emit(ActionTaken(combatant=evader.id, action=claim.reaction, slot="reaction", rule="D100D-10"))
    label, field = EVASION_TEST[claim.reaction]
    roll = rules.characteristic_test(
        dice,
        purpose=f"Evasion: {claim.reaction}",
        rule="D100D-10",
        characteristic=label,
        value=int(getattr(evader, field)),
        formula=state.settings["degrees_formula"],
    )
    decision.emit(
        TestRolled(
            combatant=evader.id,
            test=claim.reaction,
            roll=roll,
            success=bool(roll.success),
            details={
                "window": window.window,
                "against": attack["attacker"],
                "weapon": attack["weapon"],
                "effect": "cancels every hit of this attack on the evader" if roll.success else "the hit stands",
            },
        )
    )
    return None


def evaded_in(decision: Decision, window: int) -> set[str]:
    """Who evaded successfully in this window (the window resolves within one decision)."""
    return {
        event.combatant
        for event in decision.events
        if isinstance(event, TestRolled)
        and event.test in EVASION_TEST
        and event.success
        and event.details.get("window") == window
    }
