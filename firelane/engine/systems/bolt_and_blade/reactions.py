"""Bolt & Blade reactions: Reactive Fire, Return Fire, Opportunity Strike, Dive
for Cover, and the choice a mover makes under fire.

Fourth floor of the package (see the package docstring): above `paths`, below
the walk of a move (`movement`), which fires the shots held for the squares it
reaches, and the system class, which resumes a move after a window.

Windows this system opens (``ReactionWindowOpened.trigger``):

- ``fire_lane``: a mover entered an enemy's fire lane (BB-CMB-02, -10); offers
  ``reactive_fire``, once per enemy per move. ``continuation["fire_squares"]``
  lists, for each reactor, the squares of the path from here on that it sees
  and has in range: a claim names one (``options={"square": [x, y]}``; none
  named: the square the mover is on). A shot at that square resolves now; one
  at a square ahead is held (`BBShotHeld`) and resolves when the mover gets
  there, or is denied if the move ends first. Continuation: the rest of the move.
- ``leaving_reach``: a mover is about to leave an enemy's melee reach
  (BB-CMB-15); offers ``opportunity_strike``. Continuation: the rest of the move.
- ``ranged_attack``: a ranged attack is about to be rolled against a target that
  sees the attacker and has a ready ranged weapon and its Reaction (BB-CMB-14);
  offers ``return_fire``. Continuation kind ``attack`` (an attack declared on the
  attacker's turn) or ``reactive_attack`` (a Reactive Fire or Overwatch shot,
  whose target is the mover: it may answer with its own).
- ``ranged_hit``: a ranged attack hit a target with cover within 5 ft and its
  Reaction left (BB-CMB-17); offers ``dive_for_cover``. Continuation kind
  ``hit`` (damage waits), or ``reactive_hit`` (the hit was Reactive Fire at a
  mover: the move's fate waits too). A shooter hit by Return Fire may dive too.
- ``reactive_fire_choice``: Reactive Fire damaged the mover (BB-CMB-12); one
  reactor, the mover, offered ``continue`` and ``stop`` (stop at once and be
  Pinned). Answering spends no Reaction; a pass or the deadline keeps the
  choice its move declared (``continuation["default"]``).

Windows opened while another is being resolved are nested in it (the core's
reactions-to-reactions): a Return Fire window in a fire-lane window, a dive in
a Return Fire window, the choice after a hit. Every claim is re-validated
against the state the earlier ones produced; a reaction made pointless or
impossible (target down, already stopped, out of sight, weapon empty) is
denied with the reason. One Reaction per round (BB-CMB-03) keeps the chains
short: whoever has reacted cannot react again, so an exchange of fire is
answered by a dive only from the one who has not.
"""

from __future__ import annotations

from typing import Any

import msgspec

from firelane.engine.core import Decision, Rejected, require
from firelane.engine.systems.bolt_and_blade.state import Weapon
from firelane.engine.dice import Dice
from firelane.engine.grid import Square, cover_level_against, cover_rank, step_allowed
from firelane.engine.state import EncounterState, ReactionWindow
from firelane.engine.systems.bolt_and_blade import combat
from firelane.engine.systems.bolt_and_blade.combat import AttackOutcome, AttackPlan, grid_of
from firelane.engine.systems.bolt_and_blade.constants import EVADING, FIRE_CHOICES, PINNED, STUNNED
from firelane.engine.systems.bolt_and_blade.paths import (
    end_taken,
    on_overwatch_over,
    opportunity_problem,
    reactive_fire_problem,
    stop_movement,
)
from firelane.engine.systems.bolt_and_blade.rules import exchange_outcome
from firelane.engine.systems.bolt_and_blade.schemas import BBAttackRecomputed, BBExchangeResolved, BBReactiveFireChoice, BBShotHeld
from firelane.events.schemas import (
    ActionTaken,
    ClaimReaction,
    ConditionApplied,
    EligibleReactor,
    Modifier,
    Moved,
    OrderedClaim,
    ReactionsOrdered,
    Roll,
)

MOVE_KEYS = ("kind", "mover", "rest", "mode", "choice", "offered_rf", "offered_os", "back_to")


def move_of(continuation: dict[str, Any]) -> dict[str, Any]:
    """The move a window interrupted, without the window's own notes (its offers)."""
    return {key: continuation[key] for key in MOVE_KEYS if key in continuation}


def open_window(decision: Decision, **window: Any) -> bool:
    """`BaseRuleSystem.open_window`, recording a window opened after another
    closed while an outer one waits (the choice after a dive, say) as nested in
    that outer one, as it is: the outer window resumes when it closes."""
    state = decision.state
    if decision.resolving is None and state.window is None and state.suspended_windows:
        outer = state.suspended_windows[-1]
        decision.resolving = (outer.window, outer.resume_from)
        try:
            return decision.system.open_window(decision, **window)
        finally:
            decision.resolving = None
    return decision.system.open_window(decision, **window)


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
    if EVADING in target.conditions:
        return f"{target_id} Evaded this turn and cannot attack (BB-CMB-08)"
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
    taken = end_taken(state, besides=target_id)  # a dive ends on no one's square, standing or down
    options: list[tuple[int, Square]] = []
    for dx in (-1, 0, 1):
        for dy in (-1, 0, 1):
            square = (here[0] + dx, here[1] + dy)
            if square == here or step_allowed(grid, here, square) is not None or square in taken:
                continue
            rank = cover_rank(cover_level_against(grid, square, attacker_square))
            if rank > current:
                options.append((rank, square))
    options.sort(key=lambda item: (-item[0], item[1][1], item[1][0]))
    return [square for _rank, square in options]


DIVE_CALL = "dive_for_cover"
DIVE_RULINGS = ("possible", "impossible")


def dive_call(window: int) -> str:
    """The id of the GM call a Dive for Cover window raises (BB-CMB-17)."""
    return f"{DIVE_CALL}:{window}"


def dive_ruling(state: EncounterState, window: int) -> str:
    """The GM's ruling on whether a failed dive still moves into cover (BB-CMB-17):
    "possible" (the house default, when the GM says nothing) or "impossible"."""
    return str(getattr(state, "gm_calls_settled", {}).get(dive_call(window), "possible"))


def pending_gm_calls(state: EncounterState) -> dict[str, str]:
    """Calls the rules leave to the GM, waiting for a ruling: while a Dive for
    Cover window is open, whether a diver whose save fails still moves into
    cover ("if the GM says the movement is physically possible", BB-CMB-17)."""
    calls: dict[str, str] = {}
    for window in [*state.suspended_windows, *([state.window] if state.window is not None else [])]:
        call = dive_call(window.window)
        if window.trigger != "ranged_hit" or call in state.gm_rulings:
            continue
        divers = ", ".join(r.combatant for r in window.reactors)
        calls[call] = (f"Dive for Cover by {divers} (BB-CMB-17): if the Agility save fails, is the move into cover "
                       f"physically possible? Rule 'possible' (the house default) or 'impossible'")
    return calls


def gm_call_rulings(call: str) -> dict[str, Any]:
    """The rulings a call takes (for the GM's options): a dive's, only these."""
    if call.startswith(f"{DIVE_CALL}:"):
        return {"rulings": list(DIVE_RULINGS), "free_text": False}
    return {"rulings": [], "free_text": True}


def check_gm_ruling(call: str, ruling: str) -> str:
    """The ruling, normalised, or Rejected naming the rulings the call takes."""
    if call.startswith(f"{DIVE_CALL}:"):
        normal = ruling.strip().lower()
        require(normal in DIVE_RULINGS, f"the ruling on {call} is one of {', '.join(DIVE_RULINGS)} (BB-CMB-17), not {ruling[:40]!r}")
        return normal
    raise Rejected(f"{call[:64]!r} is not a call Bolt & Blade leaves to the GM")


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


def chosen_square(window: ReactionWindow, reactor_id: str, options: dict[str, Any], here: Square) -> Square:
    """The square a Reactive Fire claim names, or else the first one offered:
    the square the mover stands on as the window opens (``here``)."""
    wanted = options.get("square")
    if wanted is not None:
        return (int(wanted[0]), int(wanted[1]))
    offered = window.continuation.get("fire_squares", {}).get(reactor_id) or []
    return (int(offered[0][0]), int(offered[0][1])) if offered else here


def validate_claim(state: EncounterState, window: ReactionWindow, claim: ClaimReaction) -> None:
    if claim.reaction == "dive_for_cover" and "to" in claim.options:
        to = claim.options["to"]
        require(isinstance(to, (list, tuple)) and len(to) == 2, "dive_for_cover option 'to' must be a square [x, y]")
        attacker_square: Square = tuple(window.continuation["attacker_square"])  # type: ignore[assignment]
        options = dive_squares(state, claim.actor, attacker_square)
        require(tuple(to) in options, f"{tuple(to)} is not cover within 5 ft of {claim.actor}; options: {options}")
    if claim.reaction == "reactive_fire" and "square" in claim.options:
        wanted = claim.options["square"]
        require(
            isinstance(wanted, (list, tuple)) and len(wanted) == 2 and all(isinstance(v, int) and not isinstance(v, bool) for v in wanted),
            "reactive_fire option 'square' must be a square [x, y]",
        )
        offered = [tuple(s) for s in window.continuation.get("fire_squares", {}).get(claim.actor, [])]
        require(
            tuple(wanted) in offered,
            f"{tuple(wanted)} is not a square of the move that {claim.actor} may fire at; offered: {', '.join(str(s) for s in offered)} (BB-CMB-10)",
        )


def resolve_reaction(decision: Decision, window: ReactionWindow, claim: OrderedClaim, dice: Dice) -> str | None:
    handler = _HANDLERS.get(claim.reaction)
    if handler is None:
        return f"unknown reaction {claim.reaction!r}"
    return handler(decision, window, claim, dice)


# ---------------------------------------------------------------- Reactive Fire


def plan_reactive_fire(state: EncounterState, reactor_id: str, mover_id: str, square: Square, mode: str) -> tuple[AttackPlan, bool, list[str]]:
    """(plan, on Overwatch, what waived the Disadvantage) of a Reactive Fire at
    ``mover_id`` standing on ``square`` (it need not be there yet: the AI asks
    about the squares it may choose). BB-CMB-11: Disadvantage unless the reactor
    is on Overwatch over the square, the mover Dashes, or it is Exposed to the
    reactor there; an Evading mover imposes it regardless (BB-CMB-08). Raises
    Rejected if the shot cannot be made."""
    mover = combat.combatant(state, mover_id)
    if tuple(mover.position) != tuple(square):  # type: ignore[arg-type]
        mover = msgspec.structs.replace(mover, position=tuple(square))
        state = msgspec.structs.replace(state, combatants={**state.combatants, mover_id: mover})
    reactor = combat.combatant(state, reactor_id)
    weapon = reactor.ready
    require(weapon is not None, f"{reactor_id} has no ranged weapon ready")
    plan = combat.plan_attack(state, reactor_id, mover_id, weapon, kind="reactive_fire")  # type: ignore[arg-type]
    overwatch = on_overwatch_over(reactor, square)
    waived = []
    if overwatch:
        waived.append("on Overwatch (BB-CMB-13)")
    if mode == "dash":
        waived.append("the target is Dashing (BB-CMB-07)")
    if combat.exposed_to(state, mover, reactor.position):  # type: ignore[arg-type]
        waived.append("the target is Exposed (BB-CMB-11)")
    disadvantage = list(plan.disadvantage)
    if not waived:
        disadvantage.append("Reactive Fire (BB-CMB-11)")
    if EVADING in mover.conditions:
        disadvantage.append("the target is Evading (BB-CMB-08)")
    return msgspec.structs.replace(plan, disadvantage=disadvantage), overwatch, waived


def _reactive_fire(decision: Decision, window: ReactionWindow, claim: OrderedClaim, dice: Dice) -> str | None:
    """BB-CMB-10: the claim names where along the path the shot is taken: here and
    now, or held for a square ahead (`BBShotHeld`, fired by the walk)."""
    state = decision.state
    mover_id = window.actor
    mover = combat.combatant(state, mover_id)
    if mover.out_of_fight:
        return f"{mover_id} is already down"
    if mover.movement_halted:
        return f"{mover_id} has already stopped"
    here: Square = tuple(mover.position)  # type: ignore[assignment]
    square = chosen_square(window, claim.combatant, claim.options, here)
    if square != here:
        decision.emit(BBShotHeld(reactor=claim.combatant, mover=mover_id, square=square, window=window.window))
        return None
    return fire_reactive_shot(decision, claim.combatant, mover_id, move_of(window.continuation), dice)


def fire_reactive_shot(decision: Decision, reactor_id: str, mover_id: str, move: dict[str, Any], dice: Dice) -> str | None:
    """A Reactive Fire at the mover where it stands (BB-CMB-10..13): spend the
    Reaction; the mover, if it can, may Return Fire first (BB-CMB-14: a
    Reactive Fire is a ranged attack against it), else the shot is rolled.
    Returns a reason to deny it, or None."""
    state = decision.state
    mover = combat.combatant(state, mover_id)
    square: Square = tuple(mover.position)  # type: ignore[assignment]
    problem = reactive_fire_problem(state, reactor_id, mover_id, square)
    if problem is not None:
        return problem
    try:
        plan, overwatch, waived = plan_reactive_fire(state, reactor_id, mover_id, square, str(move.get("mode", "tactical")))
    except Rejected as rejection:
        return rejection.reason
    decision.emit(ActionTaken(combatant=reactor_id, action="reactive_fire", slot="reaction", rule="BB-CMB-10",
                              details={"overwatch": overwatch, "disadvantage_waived_by": waived, "square": list(square)}))
    if return_fire_problem(state, mover_id, reactor_id) is None and open_window(
        decision,
        trigger="ranged_attack",
        actor=reactor_id,
        reactors=[EligibleReactor(combatant=mover_id, reactions=["return_fire"])],
        continuation={"kind": "reactive_attack", "attacker": reactor_id, "target": mover_id, "weapon": plan.weapon.name, "overwatch": overwatch, "move": move},
        rule="BB-CMB-14",
    ):
        return None
    roll_reactive_shot(decision, plan, overwatch, move, dice)
    return None


def roll_reactive_shot(decision: Decision, plan: AttackPlan, overwatch: bool, move: dict[str, Any], dice: Dice) -> None:
    """Roll a Reactive Fire no one answered: a hit may first open Dive for Cover
    (BB-CMB-17, nested; the damage and the move's fate wait for it)."""
    state = decision.state
    reactor_id, mover_id = plan.attacker, plan.target
    outcome = combat.roll_attack(decision, plan, dice, rule="BB-CMB-10", purpose=f"Reactive Fire with {plan.weapon.name} at {mover_id}")
    combat.emit_attack(decision, outcome, hit=outcome.would_hit, kind="reactive_fire", details={"overwatch": overwatch})
    combat.dangerous_consequences(decision, outcome, dice)
    if not outcome.would_hit:
        return
    reactor_square: Square = tuple(combat.combatant(state, reactor_id).position)  # type: ignore[assignment]
    offer = dive_offer(state, mover_id, reactor_square)
    if offer and open_window(
        decision,
        trigger="ranged_hit",
        actor=reactor_id,
        reactors=offer,
        continuation={**hit_continuation(reactor_id, mover_id, plan.weapon.name, reactor_square, outcome), "kind": "reactive_hit", "overwatch": overwatch, "move": move},
        rule="BB-CMB-17",
    ):
        return
    damage = combat.deal_attack_damage(decision, outcome, dice)
    after_reactive_hit(decision, reactor_id, mover_id, move, overwatch=overwatch, attack_total=outcome.roll.total, damage=damage, dice=dice)


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
    asks it to go on or stop Pinned (BB-CMB-12), in a window addressed to it."""
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
        default = str(move.get("choice", state.settings.get("reactive_fire_choice", "continue")))
        open_window(
            decision,
            trigger="reactive_fire_choice",
            actor=reactor_id,
            reactors=[EligibleReactor(combatant=mover_id, reactions=list(FIRE_CHOICES))],
            continuation={"kind": "fire_choice", "attacker": reactor_id, "mover": mover_id, "default": default, "move": move},
            rule="BB-CMB-12",
        )


def apply_fire_choice(decision: Decision, window: ReactionWindow) -> None:
    """BB-CMB-12: the mover's answer to the choice window, or the choice its move
    declared when it passed or the deadline came: go on, or stop Pinned."""
    state = decision.state
    continuation = window.continuation
    mover_id: str = continuation["mover"]
    attacker_id: str = continuation["attacker"]
    answers = [c.reaction for c in window.order if c.combatant == mover_id]
    choice = answers[0] if answers else str(continuation["default"])
    mover = combat.combatant(state, mover_id)
    if mover.out_of_fight or mover.movement_halted:
        return
    decision.emit(BBReactiveFireChoice(combatant=mover_id, choice=choice, attacker=attacker_id, answered=bool(answers)))
    if choice == "stop":
        until = f"start_of_turn:{attacker_id}" if state.settings.get("reactive_fire_pin", "attacker_next_turn") == "attacker_next_turn" else f"start_of_turn:{mover_id}"
        decision.emit(ConditionApplied(combatant=mover_id, condition=PINNED, rule="BB-CMB-12", until=until, details={"by": attacker_id}))
        stop_movement(decision, mover_id, continuation["move"], f"stopped under {attacker_id}'s fire and became Pinned", "BB-CMB-12")


def _fire_choice(decision: Decision, window: ReactionWindow, claim: OrderedClaim, dice: Dice) -> str | None:
    """The mover's answer to the choice window: taken up when the window closes
    (`apply_fire_choice`), whether answered or not. Spends no Reaction."""
    return None


# ---------------------------------------------------------------- Opportunity Strike


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


# ---------------------------------------------------------------- Return Fire


def _return_fire(decision: Decision, window: ReactionWindow, claim: OrderedClaim, dice: Dice) -> str | None:
    """BB-CMB-14: the Opposed Exchange between a ranged attack (declared, or a
    Reactive Fire) and the target's Return Fire. A shot that lands on a creature
    that still has its Reaction and cover within 5 ft may be dived from
    (BB-CMB-17) before its damage."""
    state = decision.state
    continuation = window.continuation
    attacker_id: str = continuation["attacker"]
    target_id = claim.combatant
    reactive = continuation.get("kind") == "reactive_attack"
    problem = return_fire_problem(state, target_id, attacker_id)
    if problem is not None:
        return problem
    attacker = combat.combatant(state, attacker_id)
    target = combat.combatant(state, target_id)
    weapon = attacker.weapon(continuation["weapon"])
    try:
        if reactive:
            move: dict[str, Any] = continuation["move"]
            attack_plan, overwatch, _waived = plan_reactive_fire(state, attacker_id, target_id, tuple(target.position), str(move.get("mode", "tactical")))  # type: ignore[arg-type]
        else:
            attack_plan = combat.plan_attack(state, attacker_id, target_id, weapon, kind="attack")  # type: ignore[arg-type]
    except Rejected as rejection:
        return f"the attack can no longer be made: {rejection.reason}"
    return_plan = combat.plan_attack(state, target_id, attacker_id, target.ready, kind="return_fire")  # type: ignore[arg-type]
    decision.emit(ActionTaken(combatant=target_id, action="return_fire", slot="reaction", rule="BB-CMB-14"))
    if reactive:
        attack = combat.roll_attack(decision, attack_plan, dice, rule="BB-CMB-10", purpose=f"Reactive Fire with {attack_plan.weapon.name} at {target_id}")
    else:
        attack = combat.roll_attack(decision, attack_plan, dice, purpose=f"{attack_plan.weapon.name} attack on {target_id}",
                                    spend_ammo=attack_plan.weapon.kind != "thrown")  # a thrown item was spent as it was thrown
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
    details: dict[str, Any] = {"exchange": outcome, "would_hit": attack.would_hit}
    if reactive:
        details["overwatch"] = overwatch
    combat.emit_attack(decision, attack, hit=attacker_lands, kind="reactive_fire" if reactive else "attack", details=details)
    combat.emit_attack(decision, answer, hit=defender_lands, kind="return_fire", details={"exchange": outcome, "would_hit": answer.would_hit})
    combat.dangerous_consequences(decision, attack, dice)
    combat.dangerous_consequences(decision, answer, dice)
    damage_to_target = combat.deal_attack_damage(decision, attack, dice) if attacker_lands else 0
    if defender_lands:
        # The shooter hit by Return Fire may Dive for Cover if it still has its
        # Reaction (BB-CMB-17); a Reactive Fire shooter has spent it.
        there: Square = tuple(target.position)  # type: ignore[assignment]
        offer = dive_offer(state, attacker_id, there)
        if not (offer and open_window(
            decision,
            trigger="ranged_hit",
            actor=target_id,
            reactors=offer,
            continuation=hit_continuation(target_id, attacker_id, return_plan.weapon.name, there, answer),
            rule="BB-CMB-17",
        )):
            combat.deal_attack_damage(decision, answer, dice)
    if reactive and attacker_lands:
        after_reactive_hit(decision, attacker_id, target_id, continuation["move"], overwatch=overwatch, attack_total=attack.roll.total, damage=damage_to_target, dice=dice)
    return None


# ---------------------------------------------------------------- Dive for Cover


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
    # BB-CMB-17: on a failure "you still move into cover if the GM says the
    # movement is physically possible": possible unless the GM ruled otherwise.
    if save.success or dive_ruling(state, window.window) != "impossible":
        decision.emit(Moved(combatant=target_id, path=[destination], mode="dive", cost=0.0, rule="BB-CMB-17"))
    if not save.success:
        return None
    target = combat.combatant(state, target_id)
    defense = combat.defense_roll(state, target, attacker_square, ranged=True)
    # The attack total loses the Exposed bonus it had where the target stood
    # and gains any it has where it landed (none: it dived into cover facing the shot).
    was_exposed = int(continuation.get("exposed_bonus", 0))
    now_exposed = int(state.settings.get("exposed_attack_bonus", 2)) if combat.exposed_to(state, target, attacker_square) else 0
    adjusted = attack_total - was_exposed + now_exposed
    critical = bool(continuation.get("critical", False))
    hit = critical or adjusted >= defense.total
    terms = [Modifier(source="the attack roll", rule="BB-CORE-07", value=attack_total)]
    if was_exposed != now_exposed:
        terms.append(Modifier(source=f"{target_id} no longer Exposed" if now_exposed < was_exposed else f"{target_id} Exposed", rule="BB-CMB-05", value=now_exposed - was_exposed))
    recomputed = Roll(
        purpose=f"{continuation['attacker']}'s attack on {target_id} after the dive",
        rule="BB-CMB-17",
        dice=[],
        modifiers=terms,
        total=adjusted,
        target=defense.total,
        compare=">=",
        success=hit,
        notes=["natural 20: a Critical Hit still hits (BB-CORE-12)"] if critical else [],
    )
    decision.emit(
        BBAttackRecomputed(
            attacker=continuation["attacker"],
            target=target_id,
            attack_total=adjusted,
            defense=defense,
            hit=hit,
            details={"exposed_bonus_removed": was_exposed - now_exposed, "critical": critical},
            attack=recomputed,
        )
    )
    return None


_HANDLERS = {
    "reactive_fire": _reactive_fire,
    "opportunity_strike": _opportunity_strike,
    "return_fire": _return_fire,
    "dive_for_cover": _dive_for_cover,
    "continue": _fire_choice,
    "stop": _fire_choice,
}


# ---------------------------------------------------------------- after the window


def spent_here(state: EncounterState, combatant_id: str, window: ReactionWindow) -> bool:
    """Whether the combatant spent its Reaction in this window (its claim resolved)."""
    who = combat.combatant(state, combatant_id)
    return who.reaction_window == window.window and who.reaction_round == state.round


def after_window(decision: Decision, window: ReactionWindow, dice: Dice) -> dict[str, Any] | None:
    """What follows a window that did not open on a move's step (those resume the
    walk: `movement.resume_move`). Returns the move this window interrupted,
    if any, for the system to walk on once no window is open or waiting."""
    state = decision.state
    continuation = window.continuation
    kind = continuation.get("kind")
    if kind == "attack":
        if spent_here(state, continuation["target"], window):
            return None  # the exchange of fire resolved the attack
        attacker = combat.combatant(state, continuation["attacker"])
        weapon = attacker.weapon(continuation["weapon"])
        try:
            plan = combat.plan_attack(state, attacker.id, continuation["target"], weapon, kind="attack")  # type: ignore[arg-type]
        except Rejected:
            return None  # the target fell or vanished meanwhile: the Action is spent for nothing
        resolve_declared_attack(decision, plan, dice)
        return None
    if kind == "reactive_attack":
        move = continuation["move"]
        if not spent_here(state, continuation["target"], window):
            mover = combat.combatant(state, continuation["target"])
            try:
                plan, overwatch, _waived = plan_reactive_fire(state, continuation["attacker"], mover.id, tuple(mover.position), str(move.get("mode", "tactical")))  # type: ignore[arg-type]
            except Rejected:
                return move  # the mover fell meanwhile (its own dangerous weapon): the Reaction is spent for nothing
            roll_reactive_shot(decision, plan, overwatch, move, dice)
        return move
    if kind == "fire_choice":
        apply_fire_choice(decision, window)
        return continuation["move"]
    if kind in ("hit", "reactive_hit"):
        target_id: str = continuation["target"]
        dived = spent_here(state, target_id, window)
        if kind == "reactive_hit" and dived:
            # Diving mid-move ends the move where the mover landed (house default):
            # the rest of its path started from the square it left. The square it
            # dived into is reached, so it is not part of the unused path.
            landed = list(combat.combatant(state, target_id).position)  # type: ignore[arg-type]
            move = {**continuation["move"], "rest": [s for s in continuation["move"]["rest"] if list(s) != landed]}
            stop_movement(decision, target_id, move, "dived for cover", "BB-CMB-17")
        recomputed = recomputed_miss(decision, window)
        if not recomputed:
            damage = deal_pending_damage(decision, continuation, dice)
            if kind == "reactive_hit":
                after_reactive_hit(decision, continuation["attacker"], target_id, continuation["move"],
                                   overwatch=bool(continuation["overwatch"]), attack_total=int(continuation["total"]), damage=damage, dice=dice)
        return continuation.get("move")
    return None


def recomputed_miss(decision: Decision, window: ReactionWindow) -> bool:
    """Whether a dive in this window turned the hit into a miss. A window's claims
    resolve in the decision that closes it, so its `BBAttackRecomputed` is among
    this decision's events after the window's `ReactionsOrdered`."""
    for event in reversed(decision.events):
        if isinstance(event, BBAttackRecomputed):
            return not event.hit
        if isinstance(event, ReactionsOrdered) and event.window == window.window:
            return False
    return False


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


def ranged_attack_with(weapon: Weapon) -> bool:
    """Whether an attack roll with ``weapon`` is a ranged attack (BB-CMB-14,
    -17): a ranged weapon's, or a throw's (a krak grenade thrown at one
    creature, BB-CMB-28, is a ranged attack roll)."""
    return weapon.is_ranged or weapon.kind == "thrown"


def declare_thrown_attack(decision: Decision, attacker_id: str, target_id: str, weapon_name: str, dice: Dice) -> None:
    """A thrown single-target item (a krak grenade, BB-CMB-28), its Action and
    the item already spent: a ranged attack against one creature, so, as a
    lasgun shot, the target may Return Fire before the roll (BB-CMB-14) and
    Dive for Cover from a hit (BB-CMB-17). Raises Rejected if the attack
    cannot be made."""
    attacker = combat.combatant(decision.state, attacker_id)
    weapon = attacker.weapon(weapon_name)
    require(weapon is not None, f"{attacker_id} does not carry {weapon_name!r}")
    plan = combat.plan_attack(decision.state, attacker_id, target_id, weapon, kind="attack")  # type: ignore[arg-type]
    if return_fire_problem(decision.state, target_id, attacker_id) is None and open_window(
        decision,
        trigger="ranged_attack",
        actor=attacker_id,
        reactors=[EligibleReactor(combatant=target_id, reactions=["return_fire"])],
        continuation={"kind": "attack", "attacker": attacker_id, "target": target_id, "weapon": weapon.name},  # type: ignore[union-attr]
        rule="BB-CMB-14",
    ):
        return
    resolve_declared_attack(decision, plan, dice)


def resolve_declared_attack(decision: Decision, plan: AttackPlan, dice: Dice) -> None:
    """Roll a declared attack; a ranged hit may first open Dive for Cover
    (BB-CMB-17). A thrown item was spent as it was thrown (`consume_item`):
    the roll spends no round of it."""
    outcome = combat.roll_attack(decision, plan, dice, spend_ammo=plan.weapon.kind != "thrown")
    combat.emit_attack(decision, outcome, hit=outcome.would_hit, kind="attack")
    if outcome.would_hit and ranged_attack_with(plan.weapon):
        attacker_square: Square = tuple(decision.state.combatants[plan.attacker].position)  # type: ignore[assignment]
        offer = dive_offer(decision.state, plan.target, attacker_square)
        if offer and open_window(
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
