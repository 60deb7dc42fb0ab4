"""Bolt & Blade reactions: Reactive Fire, Return Fire, Opportunity Strike, Dive for Cover.

Windows this system opens (``ReactionWindowOpened.trigger``):

- ``fire_lane``: a mover entered an enemy's fire lane (BB-CMB-02, -10);
  offers ``reactive_fire``. Continuation: the rest of the move.
- ``leaving_reach``: a mover is about to leave an enemy's melee reach
  (BB-CMB-15); offers ``opportunity_strike``. Continuation: the rest of the move.
- ``ranged_attack``: a ranged attack was declared against a target that sees
  the attacker and has a ready ranged weapon (BB-CMB-14); offers
  ``return_fire``. Continuation: the declared attack.
- ``ranged_hit``: a ranged attack hit a target with cover within 5 ft
  (BB-CMB-17); offers ``dive_for_cover``. Continuation: the hit awaiting damage.

Every claim is re-validated against the state the earlier claims produced; a
reaction made pointless or impossible (target down, already stopped, out of
sight, weapon empty) is denied with the reason.

A Reactive Fire (or Overwatch) hit may be answered by Dive for Cover: the
``ranged_hit`` window is then nested in the ``fire_lane`` window (continuation
kind ``reactive_hit``), whose remaining claims resume when it closes. A dive in
the middle of a move ends the move in the cover square (house default). Return
Fire shots are one simultaneous exchange and open no further windows, and no
reaction is answered by Return Fire, which keeps exchanges from chaining.
"""

from __future__ import annotations

from typing import Any

import msgspec

from firelane.engine.core import Decision, Rejected, require
from firelane.engine.dice import Dice
from firelane.engine.grid import Square, cover_level_against, cover_rank, step_allowed
from firelane.engine.state import EncounterState, ReactionWindow
from firelane.engine.systems.bolt_and_blade import combat
from firelane.engine.systems.bolt_and_blade.combat import AttackOutcome, AttackPlan, grid_of
from firelane.engine.systems.bolt_and_blade.constants import EVADING, PINNED, STUNNED
from firelane.engine.systems.bolt_and_blade.paths import (
    occupant,
    on_overwatch_over,
    opportunity_problem,
    reactive_fire_problem,
    stop_movement,
)
from firelane.engine.systems.bolt_and_blade.rules import exchange_outcome
from firelane.events.bolt_and_blade_schemas import BBAttackRecomputed, BBExchangeResolved, BBReactiveFireChoice
from firelane.events.schemas import (
    ActionTaken,
    ClaimReaction,
    ConditionApplied,
    ConditionRemoved,
    EligibleReactor,
    Event,
    Moved,
    OrderedClaim,
    ReactionsOrdered,
    Roll,
)


# ---------------------------------------------------------------- eligibility used when opening windows


def return_fire_problem(state: EncounterState, target_id: str, attacker_id: str) -> str | None:
    """Why the target of a ranged attack cannot Return Fire (BB-CMB-14), or None."""
    target = combat.combatant(state, target_id)
    attacker = combat.combatant(state, attacker_id)
    if target.out_of_fight:
        return f"{target_id} is down"
    if target.reaction_used:
        return f"{target_id} has already used its Reaction this round"
    if STUNNED in target.conditions:
        return f"{target_id} is Stunned"
    if attacker.out_of_fight:
        return f"{attacker_id} is down"
    weapon = target.ready
    if weapon is None or not weapon.is_ranged or weapon.template is not None:
        return f"{target_id} has no ranged weapon ready"
    problem = combat.weapon_problem(state, target, weapon)
    if problem is not None:
        return problem
    try:
        combat.plan_attack(state, target_id, attacker_id, weapon, kind="return_fire")
    except Rejected as rejection:
        return rejection.reason
    if not combat.sees(state, target.position, attacker.position):  # type: ignore[arg-type]
        return f"{target_id} cannot see {attacker_id}"  # "a visible enemy" (BB-CMB-14): smoke hides it
    return None


def dive_squares(state: EncounterState, target_id: str, attacker_square: Square) -> list[Square]:
    """Squares within 5 ft (one step) the target can dive into that give it
    better cover against the attacker than it has now, best first (BB-CMB-17)."""
    target = combat.combatant(state, target_id)
    grid = grid_of(state)
    here: Square = target.position  # type: ignore[assignment]
    current = cover_rank(combat.cover_against(state, target, attacker_square)[0])
    options: list[tuple[int, Square]] = []
    for dx in (-1, 0, 1):
        for dy in (-1, 0, 1):
            square = (here[0] + dx, here[1] + dy)
            if square == here or step_allowed(grid, here, square) is not None or occupant(state, square, besides=target_id):
                continue
            rank = cover_rank(cover_level_against(grid, square, attacker_square))
            if rank > current:
                options.append((rank, square))
    options.sort(key=lambda item: (-item[0], item[1][1], item[1][0]))
    return [square for _rank, square in options]


def dive_problem(state: EncounterState, target_id: str, attacker_square: Square) -> str | None:
    target = combat.combatant(state, target_id)
    if target.out_of_fight:
        return f"{target_id} is down"
    if target.reaction_used:
        return f"{target_id} has already used its Reaction this round"
    if STUNNED in target.conditions:
        return f"{target_id} is Stunned"
    if not dive_squares(state, target_id, attacker_square):
        return f"no cover within 5 ft of {target_id}"
    return None


# ---------------------------------------------------------------- claims


def validate_claim(state: EncounterState, window: ReactionWindow, claim: ClaimReaction) -> None:
    if claim.reaction == "dive_for_cover" and "to" in claim.options:
        to = claim.options["to"]
        require(isinstance(to, (list, tuple)) and len(to) == 2, "dive_for_cover option 'to' must be a square [x, y]")
        attacker_square: Square = tuple(window.continuation["attacker_square"])  # type: ignore[assignment]
        options = dive_squares(state, claim.actor, attacker_square)
        require(tuple(to) in options, f"{tuple(to)} is not cover within 5 ft of {claim.actor}; options: {options}")


def resolve_reaction(decision: Decision, window: ReactionWindow, claim: OrderedClaim, dice: Dice) -> str | None:
    handler = _HANDLERS.get(claim.reaction)
    if handler is None:
        return f"unknown reaction {claim.reaction!r}"
    return handler(decision, window, claim, dice)


def _reactive_fire(decision: Decision, window: ReactionWindow, claim: OrderedClaim, dice: Dice) -> str | None:
    """BB-CMB-10..13: a ranged attack at a mover crossing a fire lane."""
    state = decision.state
    mover_id = window.actor
    reactor_id = claim.combatant
    mover = combat.combatant(state, mover_id)
    if mover.out_of_fight:
        return f"{mover_id} is already down"
    if mover.movement_halted:
        return f"{mover_id} has already stopped"
    square: Square = tuple(mover.position)  # type: ignore[assignment]
    problem = reactive_fire_problem(state, reactor_id, mover_id, square)
    if problem is not None:
        return problem
    reactor = combat.combatant(state, reactor_id)
    weapon = reactor.ready
    try:
        plan = combat.plan_attack(state, reactor_id, mover_id, weapon, kind="reactive_fire")  # type: ignore[arg-type]
    except Rejected as rejection:
        return rejection.reason
    overwatch = on_overwatch_over(reactor, square)
    continuation = window.continuation
    disadvantage = list(plan.disadvantage)
    waived = []
    if overwatch:
        waived.append("on Overwatch (BB-CMB-13)")
    if continuation.get("mode") == "dash":
        waived.append("the target is Dashing (BB-CMB-07)")
    if combat.exposed_to(state, mover, reactor.position):  # type: ignore[arg-type]
        waived.append("the target is Exposed (BB-CMB-11)")
    if not waived:
        disadvantage.append("Reactive Fire (BB-CMB-11)")
    if EVADING in mover.conditions:
        disadvantage.append("the target is Evading (BB-CMB-08)")
    plan = msgspec.structs.replace(plan, disadvantage=disadvantage)
    decision.emit(ActionTaken(combatant=reactor_id, action="reactive_fire", slot="reaction", rule="BB-CMB-10", details={"overwatch": overwatch, "disadvantage_waived_by": waived}))
    outcome = combat.roll_attack(decision, plan, dice, rule="BB-CMB-10", purpose=f"Reactive Fire with {weapon.name} at {mover_id}")  # type: ignore[union-attr]
    combat.emit_attack(decision, outcome, hit=outcome.would_hit, kind="reactive_fire", details={"overwatch": overwatch})
    combat.dangerous_consequences(decision, outcome, dice)
    if not outcome.would_hit:
        return None
    # BB-CMB-17: the mover is hit by a ranged attack, so it may Dive for Cover:
    # a window nested in this one; the hit's damage and the move's fate wait for it.
    reactor_square: Square = tuple(reactor.position)  # type: ignore[assignment]
    offer = dive_offer(state, mover_id, reactor_square)
    if offer and decision.system.open_window(
        decision,
        trigger="ranged_hit",
        actor=reactor_id,
        reactors=offer,
        continuation={
            **hit_continuation(reactor_id, mover_id, weapon.name, reactor_square, outcome),  # type: ignore[union-attr]
            "kind": "reactive_hit",
            "overwatch": overwatch,
            "move": continuation,
        },
        rule="BB-CMB-17",
    ):
        return None
    damage = combat.deal_attack_damage(decision, outcome, dice)
    after_reactive_hit(decision, reactor_id, mover_id, continuation, overwatch=overwatch, attack_total=outcome.roll.total, damage=damage, dice=dice)
    return None


def hit_continuation(attacker_id: str, target_id: str, weapon: str, attacker_square: Square, outcome: AttackOutcome) -> dict[str, Any]:
    """What a Dive for Cover window needs to know of the hit it answers."""
    return {
        "kind": "hit",
        "attacker": attacker_id,
        "target": target_id,
        "weapon": weapon,
        "attacker_square": list(attacker_square),
        "total": outcome.roll.total,
        "natural": outcome.natural,
        "critical": outcome.critical,
        "exposed_bonus": outcome.plan.exposed_bonus,
    }


def after_reactive_hit(
    decision: Decision, reactor_id: str, mover_id: str, move: dict[str, Any], *,
    overwatch: bool, attack_total: int, damage: int, dice: Dice,
) -> None:
    """A Reactive Fire hit landed: Overwatch may stop the mover (BB-CMB-13); damage
    lets it choose to go on or stop Pinned (BB-CMB-12)."""
    state = decision.state
    mover = combat.combatant(state, mover_id)
    if mover.out_of_fight or mover.movement_halted:
        return  # nothing left to stop (a dive already ended the move)
    if overwatch:
        save = combat.roll_save(decision, mover_id, "agility", attack_total, dice, rule="BB-CMB-13", purpose=f"Agility save against {reactor_id}'s Overwatch hit")
        if not save.success:
            stop_movement(decision, mover_id, move, f"hit by {reactor_id}'s Overwatch fire and failed the Agility save", "BB-CMB-13")
            return
    if damage > 0:
        choice = str(move.get("choice", "continue"))
        decision.emit(BBReactiveFireChoice(combatant=mover_id, choice=choice, attacker=reactor_id))
        if choice == "stop":
            until = f"start_of_turn:{reactor_id}" if state.settings.get("reactive_fire_pin", "attacker_next_turn") == "attacker_next_turn" else f"start_of_turn:{mover_id}"
            decision.emit(ConditionApplied(combatant=mover_id, condition=PINNED, rule="BB-CMB-12", until=until, details={"by": reactor_id}))
            stop_movement(decision, mover_id, move, f"stopped under {reactor_id}'s fire and became Pinned", "BB-CMB-12")


def _opportunity_strike(decision: Decision, window: ReactionWindow, claim: OrderedClaim, dice: Dice) -> str | None:
    """BB-CMB-15: one melee attack at a creature leaving your reach."""
    state = decision.state
    mover_id = window.actor
    reactor_id = claim.combatant
    mover = combat.combatant(state, mover_id)
    if mover.out_of_fight:
        return f"{mover_id} is already down"
    if mover.movement_halted:
        return f"{mover_id} has stopped and no longer leaves {reactor_id}'s reach"
    rest = window.continuation.get("rest", [])
    if not rest:
        return f"{mover_id} is not leaving"
    problem = opportunity_problem(state, reactor_id, mover_id, tuple(mover.position), tuple(rest[0]))  # type: ignore[arg-type]
    if problem is not None:
        return problem
    reactor = combat.combatant(state, reactor_id)
    weapon = combat.best_melee_weapon(reactor)
    try:
        plan = combat.plan_attack(state, reactor_id, mover_id, weapon, kind="opportunity_strike")  # type: ignore[arg-type]
    except Rejected as rejection:
        return rejection.reason
    decision.emit(ActionTaken(combatant=reactor_id, action="opportunity_strike", slot="reaction", rule="BB-CMB-15"))
    outcome = combat.roll_attack(decision, plan, dice, rule="BB-CMB-15", purpose=f"Opportunity Strike with {weapon.name} at {mover_id}")  # type: ignore[union-attr]
    combat.emit_attack(decision, outcome, hit=outcome.would_hit, kind="opportunity_strike")
    if outcome.would_hit:
        combat.deal_attack_damage(decision, outcome, dice)
    combat.dangerous_consequences(decision, outcome, dice)
    return None


def _return_fire(decision: Decision, window: ReactionWindow, claim: OrderedClaim, dice: Dice) -> str | None:
    """BB-CMB-14: the Opposed Exchange between a ranged attack and the target's Return Fire."""
    state = decision.state
    continuation = window.continuation
    attacker_id: str = continuation["attacker"]
    target_id = claim.combatant
    problem = return_fire_problem(state, target_id, attacker_id)
    if problem is not None:
        return problem
    attacker = combat.combatant(state, attacker_id)
    weapon = attacker.weapon(continuation["weapon"])
    try:
        attack_plan = combat.plan_attack(state, attacker_id, target_id, weapon, kind="attack")  # type: ignore[arg-type]
    except Rejected as rejection:
        return f"the declared attack can no longer be made: {rejection.reason}"
    target = combat.combatant(state, target_id)
    return_plan = combat.plan_attack(state, target_id, attacker_id, target.ready, kind="return_fire")  # type: ignore[arg-type]
    decision.emit(ActionTaken(combatant=target_id, action="return_fire", slot="reaction", rule="BB-CMB-14"))
    attack = combat.roll_attack(decision, attack_plan, dice, purpose=f"{weapon.name} attack on {target_id}")  # type: ignore[union-attr]
    answer = combat.roll_attack(decision, return_plan, dice, rule="BB-CMB-14", purpose=f"Return Fire with {return_plan.weapon.name} at {attacker_id}")
    attacker_lands, defender_lands, outcome = exchange_outcome(attack.roll.total, attack.would_hit, answer.roll.total, answer.would_hit)
    decision.emit(
        BBExchangeResolved(
            attacker=attacker_id,
            defender=target_id,
            attacker_total=attack.roll.total,
            defender_total=answer.roll.total,
            attacker_would_hit=attack.would_hit,
            defender_would_hit=answer.would_hit,
            attacker_hits=attacker_lands,
            defender_hits=defender_lands,
            outcome=outcome,
        )
    )
    combat.emit_attack(decision, attack, hit=attacker_lands, kind="attack", details={"exchange": outcome, "would_hit": attack.would_hit})
    combat.emit_attack(decision, answer, hit=defender_lands, kind="return_fire", details={"exchange": outcome, "would_hit": answer.would_hit})
    if attacker_lands:
        combat.deal_attack_damage(decision, attack, dice)
    if defender_lands:
        combat.deal_attack_damage(decision, answer, dice)
    combat.dangerous_consequences(decision, attack, dice)
    combat.dangerous_consequences(decision, answer, dice)
    return None


def _dive_for_cover(decision: Decision, window: ReactionWindow, claim: OrderedClaim, dice: Dice) -> str | None:
    """BB-CMB-17: an Agility save against the attack roll; move up to 5 ft into
    cover either way (it is physically possible: the square is free); on a
    success the hit is recomputed with the new cover."""
    state = decision.state
    continuation = window.continuation
    target_id = claim.combatant
    attacker_square: Square = tuple(continuation["attacker_square"])  # type: ignore[assignment]
    problem = dive_problem(state, target_id, attacker_square)
    if problem is not None:
        return problem
    options = dive_squares(state, target_id, attacker_square)
    wanted = claim.options.get("to")
    destination: Square = tuple(wanted) if wanted is not None and tuple(wanted) in options else options[0]  # type: ignore[assignment]
    attack_total = int(continuation["total"])
    decision.emit(ActionTaken(combatant=target_id, action="dive_for_cover", slot="reaction", rule="BB-CMB-17", details={"to": list(destination)}))
    save = combat.roll_save(decision, target_id, "agility", attack_total, dice, rule="BB-CMB-17", purpose=f"Agility save to Dive for Cover (DC = attack roll {attack_total})")
    decision.emit(Moved(combatant=target_id, path=[destination], mode="dive", cost=0.0, rule="BB-CMB-17"))
    if not save.success:
        return None
    target = combat.combatant(state, target_id)
    defense = combat.defense_roll(state, target, attacker_square, ranged=True)
    adjusted = attack_total - int(continuation.get("exposed_bonus", 0))
    critical = bool(continuation.get("critical", False))
    hit = critical or adjusted >= defense.total
    decision.emit(
        BBAttackRecomputed(
            attacker=continuation["attacker"],
            target=target_id,
            attack_total=adjusted,
            defense=defense,
            hit=hit,
            details={"exposed_bonus_removed": int(continuation.get("exposed_bonus", 0)), "critical": critical},
        )
    )
    return None


_HANDLERS = {
    "reactive_fire": _reactive_fire,
    "opportunity_strike": _opportunity_strike,
    "return_fire": _return_fire,
    "dive_for_cover": _dive_for_cover,
}


# ---------------------------------------------------------------- after the window


def _events_of_window(decision: Decision, window: int) -> list[Event]:
    """This decision's events since the window's claims were ordered."""
    for index in range(len(decision.events) - 1, -1, -1):
        event = decision.events[index]
        if isinstance(event, ReactionsOrdered) and event.window == window:
            return decision.events[index + 1:]
    return []


def after_window(decision: Decision, window: ReactionWindow, dice: Dice) -> None:
    """What follows a window that did not interrupt a move (those resume the walk, `movement.resume_move`)."""
    continuation = window.continuation
    kind = continuation.get("kind")
    if kind == "attack":
        spent = any(isinstance(e, ActionTaken) and e.action == "return_fire" for e in _events_of_window(decision, window.window))
        if spent:
            return
        attacker = combat.combatant(decision.state, continuation["attacker"])
        weapon = attacker.weapon(continuation["weapon"])
        try:
            plan = combat.plan_attack(decision.state, attacker.id, continuation["target"], weapon, kind="attack")  # type: ignore[arg-type]
        except Rejected:
            return  # the target fell or vanished meanwhile: the Action is spent for nothing
        resolve_declared_attack(decision, plan, dice)
    elif kind in ("hit", "reactive_hit"):
        if kind == "reactive_hit" and any(isinstance(e, ActionTaken) and e.action == "dive_for_cover" for e in _events_of_window(decision, window.window)):
            # Diving mid-move ends the move where the mover landed (house default):
            # the rest of its path started from the square it left. The square it
            # dived into is reached, so it is not part of the unused path.
            landed = list(combat.combatant(decision.state, continuation["target"]).position)  # type: ignore[arg-type]
            move = {**continuation["move"], "rest": [s for s in continuation["move"]["rest"] if list(s) != landed]}
            stop_movement(decision, continuation["target"], move, "dived for cover", "BB-CMB-17")
        recomputed = [e for e in _events_of_window(decision, window.window) if isinstance(e, BBAttackRecomputed)]
        if recomputed and not recomputed[-1].hit:
            return
        damage = deal_pending_damage(decision, continuation, dice)
        if kind == "reactive_hit":
            after_reactive_hit(decision, continuation["attacker"], continuation["target"], continuation["move"],
                               overwatch=bool(continuation["overwatch"]), attack_total=int(continuation["total"]), damage=damage, dice=dice)


def deal_pending_damage(decision: Decision, continuation: dict[str, Any], dice: Dice) -> int:
    """Damage for a hit that waited for a Dive for Cover window; returns the amount."""
    state = decision.state
    attacker = combat.combatant(state, continuation["attacker"])
    target = combat.combatant(state, continuation["target"])
    if target.out_of_fight:
        return 0
    weapon = attacker.weapon(continuation["weapon"])
    defense = Roll(purpose="Defense (see the attack)", rule="BB-CORE-08", dice=[])
    plan = AttackPlan(attacker=attacker.id, target=target.id, weapon=weapon, modifiers=[], advantage=[], disadvantage=[], defense=defense, band="", exposed_bonus=0, consumes=[])  # type: ignore[arg-type]
    outcome = AttackOutcome(plan=plan, roll=defense, natural=int(continuation["natural"]), would_hit=True, critical=bool(continuation["critical"]))
    return combat.deal_attack_damage(decision, outcome, dice)


def dive_offer(state: EncounterState, target_id: str, attacker_square: Square) -> list[EligibleReactor]:
    if dive_problem(state, target_id, attacker_square) is None:
        return [EligibleReactor(combatant=target_id, reactions=["dive_for_cover"])]
    return []




# ---------------------------------------------------------------- declared attacks


def resolve_declared_attack(decision: Decision, plan: AttackPlan, dice: Dice) -> None:
    """Roll a declared attack; a ranged hit may first open Dive for Cover (BB-CMB-17)."""
    outcome = combat.roll_attack(decision, plan, dice)
    combat.emit_attack(decision, outcome, hit=outcome.would_hit, kind="attack")
    if outcome.would_hit and plan.weapon.is_ranged:
        attacker_square: Square = tuple(decision.state.combatants[plan.attacker].position)  # type: ignore[assignment]
        offer = dive_offer(decision.state, plan.target, attacker_square)
        if offer and decision.system.open_window(
            decision,
            trigger="ranged_hit",
            actor=plan.attacker,
            reactors=offer,
            continuation=hit_continuation(plan.attacker, plan.target, plan.weapon.name, attacker_square, outcome),
            rule="BB-CMB-17",
        ):
            return
    if outcome.would_hit:
        combat.deal_attack_damage(decision, outcome, dice)
    combat.dangerous_consequences(decision, outcome, dice)
