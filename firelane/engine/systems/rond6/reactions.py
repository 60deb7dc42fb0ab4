"""RonD6 reaction windows.

* ``wait`` (R6-08): a declared action gives every Waiting combatant with an
  unused declared action the chance to interrupt. A claim carries the
  interrupting action as ``options["command"]`` (a command object without
  ``actor``/``command_id``); claimed interruptions resolve, in the arbiter's
  order, before the declared action. An interrupting action does not itself
  open a Wait window (house default: no interrupting an interruption).
* ``defend`` (R6-16): an attack declared against a combatant who can still
  spend an action offers the Active Defenses that work against it (dodge,
  parry, block; resolve / maneuver / acrobatics against interactions). The
  claim spends an action (a combatant who has not declared yet this round
  declares ``options["declare"]`` actions, default the
  ``reaction_declares_actions`` setting) and rolls the defense with the
  multiple-action penalty; the total stands until the start of its next turn.
* ``resist`` (R6-20): a hit on a combatant with Character or Fate Points lets
  it spend them (``options``: ``character_points``, ``fate_point``) before
  the Damage Resistance Total is compared.

What follows a window once it closes is `combat.after_window`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from firelane.engine.core import Decision, Rejected, require
from firelane.engine.dice import Dice
from firelane.engine.state import ReactionWindow
from firelane.engine.systems.rond6 import actions, rules
from firelane.engine.systems.rond6.contract import SystemContract
from firelane.engine.systems.rond6.pools import DieCode, roll_pool
from firelane.engine.systems.rond6.rules import DEFENSE_REACTIONS, INTERRUPT, RESIST
from firelane.engine.systems.rond6.state import RonD6Combatant, RonD6State
from firelane.engine.systems.rond6.schemas import (
    R6InterruptQueued,
    R6ResistanceBoosted,
    R6Wait,
)
from firelane.events.schemas import ClaimReaction, EligibleReactor, OrderedClaim

Queue = list[dict[str, Any]]


# --------------------------------------------------------------------------- opening windows


def open_wait_window(system: SystemContract, decision: Decision, actor: str, queue: Queue) -> bool:
    state: RonD6State = decision.state  # type: ignore[assignment]
    reactors = [
        EligibleReactor(combatant=cid, reactions=[INTERRUPT])
        for cid, combatant in sorted(state.combatants.items())
        if cid != actor and combatant.waiting and system.action_unavailable(state, combatant) is None
    ]
    return system.open_window(
        decision, trigger="action_declared", actor=actor, reactors=reactors,
        continuation={"kind": "wait", "queue": queue}, rule=rules.R_WAIT,
    )


def can_spend_reaction_action(system: SystemContract, state: RonD6State, combatant: RonD6Combatant) -> bool:
    """An unused declared action, or none declared yet and its turn still to come."""
    if combatant.out_of_fight:
        return False
    if combatant.declared_actions == 0:
        return combatant.id not in state.acted_this_round and state.active != combatant.id
    return system.action_unavailable(state, combatant) is None


def defense_options(system: SystemContract, state: RonD6State, combatant: RonD6Combatant, attack_kind: str) -> list[str]:
    """The Active Defense reactions this combatant may claim against an attack of this kind."""
    covering = rules.defenses_against(attack_kind)
    if any(skill in combatant.active_defense for skill in covering):
        return []  # a standing Active Defense already covers it (R6-16)
    if not can_spend_reaction_action(system, state, combatant):
        return []
    return [
        name for name, skill in DEFENSE_REACTIONS.items()
        if skill in covering and actions.defense_blocked(system, state, combatant, skill) is None
    ]


def open_defense_window(system: SystemContract, decision: Decision, step: dict[str, Any], queue: Queue) -> bool:
    state: RonD6State = decision.state  # type: ignore[assignment]
    reactors = []
    for target_id in step["targets"]:
        target = state.combatants.get(target_id)
        if target is None or target.out_of_fight:
            continue
        offered = defense_options(system, state, target, step["attack_kind"])
        if offered:
            reactors.append(EligibleReactor(combatant=target_id, reactions=offered))
    return system.open_window(
        decision, trigger="attack_declared", actor=step["attacker"], reactors=reactors,
        continuation={"kind": "defend", "attack_kind": step["attack_kind"], "queue": queue}, rule=rules.R_ACTIVE,
    )


def can_resist(state: RonD6State, target: RonD6Combatant) -> bool:
    """Whether a hit target gets the Damage Resistance window (R6-20)."""
    if not state.settings.get("resistance_window", True):
        return False
    return not (target.out_of_fight or "confused" in target.conditions or (target.character_points <= 0 and target.fate_points <= 0))


def open_resist_window(system: SystemContract, decision: Decision, hit: dict[str, Any], queue: Queue) -> bool:
    state: RonD6State = decision.state  # type: ignore[assignment]
    target = state.combatants[hit["target"]]
    if not can_resist(state, target):
        return False
    return system.open_window(
        decision, trigger="hit", actor=hit["attacker"], reactors=[EligibleReactor(combatant=target.id, reactions=[RESIST])],
        continuation={"kind": "resist", "hit": hit, "queue": queue}, rule=rules.R_DR,
    )


# --------------------------------------------------------------------------- claims


def interrupt_payload(claimant: str, window: int, options: dict[str, Any]) -> dict[str, Any]:
    raw = options.get("command")
    if not isinstance(raw, dict) or "type" not in raw:
        raise Rejected('an interruption needs options["command"]: the action to take, e.g. {"type": "R6Attack", "target": "x"}')
    return {**raw, "actor": claimant, "command_id": str(raw.get("command_id") or f"{claimant}@interrupt{window}")}


def check_interrupt(system: SystemContract, state: RonD6State, claimant: str, window: int, options: dict[str, Any]) -> dict[str, Any]:
    payload = interrupt_payload(claimant, window, options)
    try:
        command = system.parse_command(payload)
    except Exception as exc:  # msgspec.ValidationError: a malformed command
        raise Rejected(f"the interrupting command is invalid: {exc}") from None
    require(not isinstance(command, R6Wait), "waiting again is not an interruption (R6-08)")
    system.check_command(state, claimant, command, interrupt=True)
    return payload


def resist_options(combatant: RonD6Combatant, options: dict[str, Any]) -> tuple[int, bool]:
    points = options.get("character_points", 0)
    fate = options.get("fate_point", False)
    require(isinstance(points, int) and not isinstance(points, bool) and points >= 0, f"character_points must be a whole number >= 0, not {points!r}")
    require(isinstance(fate, bool), f"fate_point must be true or false, not {fate!r}")
    require(points <= combatant.character_points, f"{combatant.id} has {combatant.character_points} Character Points, not {points} (R6-20)")
    require(not fate or combatant.fate_points > 0, f"{combatant.id} has no Fate Point (R6-20)")
    require(points > 0 or fate, "spend at least one Character Point or a Fate Point, or pass")
    require("confused" not in combatant.conditions, f"{combatant.id} is Confused and cannot spend Character or Fate Points (R6-22)")
    return points, fate


def declare_count(system: SystemContract, state: RonD6State, combatant: RonD6Combatant, options: dict[str, Any]) -> int:
    """How many actions an undeclared defender declares for the round."""
    limit = system.action_limit(state, combatant)
    count = options.get("declare")
    if count is None:
        return max(1, min(int(state.settings.get("reaction_declares_actions", 2)), limit))
    require(isinstance(count, int) and not isinstance(count, bool), f"declare must be a whole number, not {count!r}")
    return count


def validate_claim(system: SystemContract, state: RonD6State, window: ReactionWindow, claim: ClaimReaction) -> None:
    combatant = state.combatants[claim.actor]
    if claim.reaction == INTERRUPT:
        check_interrupt(system, state, claim.actor, window.window, claim.options)
    elif claim.reaction == RESIST:
        resist_options(combatant, claim.options)
    elif claim.reaction in DEFENSE_REACTIONS and combatant.declared_actions == 0:
        count = declare_count(system, state, combatant, claim.options)
        limit = system.action_limit(state, combatant)
        require(1 <= count <= limit, f"{claim.actor} can declare 1 to {limit} actions, not {count} (R6-05/06)")


# --------------------------------------------------------------------------- resolving claims


class RefusedAfterEvents(RuntimeError):
    """A transaction run on the decision itself was refused after it had
    emitted events: half of it is applied. A bug in the rules (its checks must
    all come before its first event), raised as an internal error, never kept
    (the live sequencer rejects the command and refolds the state from its log)."""


def transaction(
    system: SystemContract, decision: Decision, body: Callable[[Decision], None], *, in_place: bool = False,
    interrupting: str = "",
) -> str | None:
    """Run ``body`` and keep its events only if it is not rejected; returns the
    rejection's reason, or None.

    By default on a trial copy of the state. ``in_place``: on the decision
    itself, nothing copied, for a body that refuses only before its first
    event (so a refusal has nothing to undo); a refusal after an event raises
    `RefusedAfterEvents`. Either way the body sees what a trial decision
    shows: no claim being resolved (``Decision.resolving``), and
    ``interrupting`` (a combatant acting off its turn as a Wait interruption,
    R6-08) set on the state meanwhile."""
    if not in_place:
        trial = Decision(system, decision.state)
        if interrupting:
            trial.state.interrupting = interrupting  # type: ignore[attr-defined]
        try:
            body(trial)
        except Rejected as denied:
            return denied.reason
        for event in trial.events:
            decision.emit(event)
        return None
    state: RonD6State = decision.state  # type: ignore[assignment]
    emitted = len(decision.events)
    resolving, decision.resolving = decision.resolving, None
    was_interrupting = state.interrupting
    if interrupting:
        state.interrupting = interrupting
    try:
        body(decision)
    except Rejected as denied:
        if len(decision.events) > emitted:
            raise RefusedAfterEvents(f"refused after {len(decision.events) - emitted} of its events were applied: {denied.reason}") from denied
        return denied.reason
    finally:
        decision.resolving = resolving
        state.interrupting = was_interrupting
    return None


def resolve_reaction(system: SystemContract, decision: Decision, window: ReactionWindow, claim: OrderedClaim, dice: Dice) -> str | None:
    state: RonD6State = decision.state  # type: ignore[assignment]
    combatant = state.combatants[claim.combatant]
    if combatant.out_of_fight:
        return f"{claim.combatant} is out of the fight"

    if claim.reaction == INTERRUPT:
        if not combatant.waiting:
            return f"{claim.combatant} is no longer waiting"

        def interrupt(trial: Decision) -> None:
            payload = check_interrupt(system, trial.state, claim.combatant, window.window, claim.options)  # type: ignore[arg-type]
            trial.emit(R6InterruptQueued(window=window.window, combatant=claim.combatant, command=payload))

        return transaction(system, decision, interrupt, in_place=True)

    if claim.reaction in DEFENSE_REACTIONS:
        skill = DEFENSE_REACTIONS[claim.reaction]

        def defend(trial: Decision) -> None:
            now: RonD6State = trial.state  # type: ignore[assignment]
            defender = now.combatants[claim.combatant]
            offered = defense_options(system, now, defender, window.continuation.get("attack_kind", ""))
            require(claim.reaction in offered, f"{claim.combatant} can no longer use {claim.reaction} against this attack")
            if defender.declared_actions == 0:
                system.declare_actions(trial, claim.combatant, declare_count(system, now, defender, claim.options), off_turn=True)
            penalty = system.spend_action(trial, claim.combatant, action=f"active defense ({claim.reaction})", rule=rules.R_ACTIVE)
            actions.roll_active_defense(system, trial, claim.combatant, skill, penalty, dice, full=False, against=window.actor)

        # A defender who declares its actions here may find none left to spend
        # after the declaration (its lost actions take them): on a trial copy.
        # Otherwise every check comes before the one spend and the roll.
        return transaction(system, decision, defend, in_place=combatant.declared_actions > 0)

    if claim.reaction == RESIST:
        def resist(trial: Decision) -> None:
            defender = trial.state.combatants[claim.combatant]
            points, fate = resist_options(defender, claim.options)  # type: ignore[arg-type]
            roll = None
            if points:
                roll = roll_pool(dice, DieCode(0), purpose="Character Points: Wild Dice added to Damage Resistance", rule=rules.R_DR,
                                 stymied="stymied" in defender.conditions, extra_wild_dice=points,
                                 complication_rule=trial.state.settings.get("complication_rule", "remove"))
            trial.emit(R6ResistanceBoosted(combatant=claim.combatant, window=window.window, character_points=points, fate_point=fate, roll=roll))

        return transaction(system, decision, resist, in_place=True)
    return f"unknown reaction {claim.reaction!r}"
