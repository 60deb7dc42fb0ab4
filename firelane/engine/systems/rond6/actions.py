"""RonD6 commands on a combatant's turn: checks (pure validation, no dice) and
performances (spend the action, emit the facts, queue the steps that roll).

Every action command has a `Spec`: ``check`` raises `Rejected` with a reason
when the action is not possible *now* (it is called when the action is
declared and again when it resolves, since a Wait interruption may have
changed things); ``perform`` spends the action and emits the events or queues
the steps (defense window, strikes) that `combat` runs.

A ``perform`` refuses (raises `Rejected`) only before its first event: every
check, every action it will spend (`check_attack` plans them all), every
weapon it names comes first. A declared action resolves on the decision
itself, not on a copy (`system.resolve_step`), so a refusal after an event
would leave half an action; it is caught as an internal error instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import msgspec

from firelane.engine.occupancy import bodies
from firelane.engine.core import Decision, Rejected, require
from firelane.engine.dice import Dice
from firelane.engine.grid import direction, distance
from firelane.engine.systems.rond6 import rules
from firelane.engine.systems.rond6.contract import SystemContract
from firelane.engine.systems.rond6.movement_rules import effective_move
from firelane.engine.systems.rond6.pools import as_code, roll_pool
from firelane.engine.systems.rond6.rolling import DiceMod, roll_test
from firelane.engine.systems.rond6.state import RonD6Combatant, RonD6State, Weapon
from firelane.engine.systems.rond6.schemas import (
    R6Attack,
    R6Charge,
    R6DeclareActions,
    R6Defend,
    R6DefenseRolled,
    R6DropProne,
    R6Escape,
    R6FreeAction,
    R6Grapple,
    R6HeadsDown,
    R6Interact,
    R6MortalWoundCheck,
    R6Ready,
    R6RecoverStun,
    R6SetWeapon,
    R6Stand,
    R6Wait,
)
from firelane.events.schemas import (
    ActionTaken,
    CombatantDown,
    Command,
    ConditionApplied,
    ConditionRemoved,
    Modifier,
    Moved,
    StateAdjusted,
    TestRolled,
)

Queue = list[dict[str, Any]]


class Spec(NamedTuple):
    check: Callable[..., Any]
    perform: Callable[..., None]
    is_action: bool = True
    sequencer_only: bool = False


# --------------------------------------------------------------------------- shared checks


def standing(system: SystemContract, state: RonD6State, combatant_id: str) -> RonD6Combatant:
    combatant = system.combatant(state, combatant_id)
    require(not combatant.out_of_fight, f"{combatant_id} is out of the fight")
    return combatant


def foe(system: SystemContract, state: RonD6State, actor: RonD6Combatant, target_id: str) -> RonD6Combatant:
    target = system.combatant(state, target_id)
    require(target.id != actor.id, f"{actor.id} cannot target itself")
    require(not target.out_of_fight, f"{target_id} is already out of the fight")
    return target


def positions(attacker: RonD6Combatant, target: RonD6Combatant) -> tuple[tuple[int, int], tuple[int, int]]:
    require(attacker.position is not None, f"{attacker.id} has no position on the map")
    require(target.position is not None, f"{target.id} has no position on the map")
    return tuple(attacker.position), tuple(target.position)  # type: ignore[return-value]


def in_hand(combatant: RonD6Combatant, weapon: Weapon) -> None:
    if weapon.kind != "unarmed" and weapon.id not in combatant.readied:
        raise Rejected(f"{combatant.id}'s {weapon.name or weapon.id} is not in hand: Ready it first (R6-37)")


def need_actions(system: SystemContract, state: RonD6State, combatant: RonD6Combatant, kind: str = "action", count: int = 1) -> None:
    reason = system.action_unavailable(state, combatant, kind, count)
    if reason is not None:
        raise Rejected(reason)


def cover_level(state: RonD6State, target_square: tuple[int, int], attacker_square: tuple[int, int]) -> str | None:
    """The best cover protecting ``target_square`` from ``attacker_square`` (house
    default): a feature on the target's square, or on a square next to it that is
    nearer the attacker, whose facing (if any) points towards the attacker's side
    (a positive dot product with the direction to the attacker)."""
    towards = direction(target_square, attacker_square)
    target_distance = distance(target_square, attacker_square)
    best: str | None = None
    order = {"light": 1, "heavy": 2, "total": 3}
    for feature in state.terrain.cover:
        square = (feature.x, feature.y)
        if square == attacker_square:
            continue
        if square != target_square and not (distance(square, target_square) == 1 and distance(square, attacker_square) < target_distance):
            continue
        if feature.facing and not any(fx * towards[0] + fy * towards[1] > 0 for fx, fy in feature.facing):
            continue
        if best is None or order.get(feature.level, 0) > order.get(best, 0):
            best = feature.level
    return best


def reach_problem(
    system: SystemContract, state: RonD6State, attacker: RonD6Combatant, target: RonD6Combatant, weapon: Weapon, *, lunge: bool = False
) -> tuple[str | None, str]:
    """(why the target cannot be attacked with the weapon, range band) — R6-14."""
    if attacker.position is None or target.position is None:
        return f"{attacker.id} or {target.id} has no position on the map", ""
    a, t = tuple(attacker.position), tuple(target.position)
    spaces = distance(a, t)  # type: ignore[arg-type]
    name = weapon.name or weapon.id
    if weapon.kind in ("melee", "unarmed"):
        reach = 1 if weapon.kind == "unarmed" else weapon.reach + (1 if lunge else 0)
        if spaces > reach:
            limit = "unarmed attacks only reach Point Blank (1 space)" if weapon.kind == "unarmed" else f"its reach is {reach}"
            return f"{target.id} is {spaces} spaces from {attacker.id}: out of reach for the {name} ({limit}, R6-14)", ""
        return None, "melee"
    band = rules.range_band(spaces, weapon.ranges)
    if band is None:
        return f"{target.id} is {spaces} spaces away, beyond the {name}'s Long range of {weapon.ranges[2]} (R6-14)", ""
    if not system.grid(state).line_of_sight(a, t):  # type: ignore[arg-type]
        return f"{attacker.id} has no line of sight to {target.id}", ""
    if cover_level(state, t, a) == "total":  # type: ignore[arg-type]
        return f"{target.id} is behind total cover from {attacker.id}", ""
    return None, band


def attack_kind(weapon: Weapon) -> str:
    return weapon.kind


def rounds_loaded(combatant: RonD6Combatant, weapon: Weapon) -> int:
    return combatant.ammo.get(weapon.id, 0) if weapon.capacity else 0


# --------------------------------------------------------------------------- R6-05/06 declare


def check_declare(system: SystemContract, state: RonD6State, actor: str, command: R6DeclareActions) -> None:
    standing(system, state, actor)


def perform_declare(system: SystemContract, decision: Decision, actor: str, command: R6DeclareActions, dice: Dice, queue: Queue) -> None:
    system.declare_actions(decision, actor, command.count, fate_point=command.fate_point)


# --------------------------------------------------------------------------- R6-07 free actions, R6-35 prone

FREE_ACTIONS = ("speak", "shout", "gesture", "drop_item", "look_around")


def _free_action_allowed(system: SystemContract, state: RonD6State, actor: str) -> RonD6Combatant:
    combatant = standing(system, state, actor)
    limit = int(state.settings.get("max_free_actions", 3))
    require(combatant.free_actions_this_turn < limit, f"{actor} has already taken {limit} Free Actions this turn (R6-07)")
    return combatant


def check_free(system: SystemContract, state: RonD6State, actor: str, command: R6FreeAction) -> None:
    _free_action_allowed(system, state, actor)
    require(command.action in FREE_ACTIONS, f"unknown Free Action {command.action!r}; known: {', '.join(FREE_ACTIONS)} (R6-07)")


def perform_free(system: SystemContract, decision: Decision, actor: str, command: R6FreeAction, dice: Dice, queue: Queue) -> None:
    details = {"text": command.text} if command.text else {}
    decision.emit(ActionTaken(combatant=actor, action=command.action, slot="free", rule=rules.R_ACTION_TYPES, details=details))


def check_drop_prone(system: SystemContract, state: RonD6State, actor: str, command: R6DropProne) -> None:
    combatant = _free_action_allowed(system, state, actor)
    require("prone" not in combatant.conditions, f"{actor} is already prone")


def perform_drop_prone(system: SystemContract, decision: Decision, actor: str, command: R6DropProne, dice: Dice, queue: Queue) -> None:
    decision.emit(ActionTaken(combatant=actor, action="drop_prone", slot="free", rule=rules.R_PRONE))
    decision.emit(ConditionApplied(combatant=actor, condition="prone", rule=rules.R_PRONE))


def check_stand(system: SystemContract, state: RonD6State, actor: str, command: R6Stand) -> None:
    combatant = standing(system, state, actor)
    require("prone" in combatant.conditions, f"{actor} is not prone")
    need_actions(system, state, combatant)


def perform_stand(system: SystemContract, decision: Decision, actor: str, command: R6Stand, dice: Dice, queue: Queue) -> None:
    system.spend_action(decision, actor, action="stand", rule=rules.R_PRONE)
    decision.emit(ConditionRemoved(combatant=actor, condition="prone", reason="stood up (an action)", rule=rules.R_PRONE))


# --------------------------------------------------------------------------- R6-08 wait


def check_wait(system: SystemContract, state: RonD6State, actor: str, command: R6Wait) -> None:
    combatant = standing(system, state, actor)
    require(not combatant.waiting, f"{actor} is already waiting")
    need_actions(system, state, combatant)


def perform_wait(system: SystemContract, decision: Decision, actor: str, command: R6Wait, dice: Dice, queue: Queue) -> None:
    system.spend_action(decision, actor, action="wait", rule=rules.R_WAIT)


# --------------------------------------------------------------------------- R6-37 ready


def check_ready(system: SystemContract, state: RonD6State, actor: str, command: R6Ready) -> None:
    combatant = standing(system, state, actor)
    weapon = system.weapon(combatant, command.weapon)
    require(weapon.kind != "unarmed", "fists need no readying")
    if command.reload:
        require(weapon.capacity > 0, f"the {weapon.name or weapon.id} takes no ammunition")
        require(combatant.ammo.get(weapon.id, 0) < weapon.capacity, f"the {weapon.name or weapon.id} is already fully loaded")
        require(combatant.reloads.get(weapon.id, 0) > 0, f"{actor} has no reload left for the {weapon.name or weapon.id}")
    else:
        require(weapon.id not in combatant.readied, f"the {weapon.name or weapon.id} is already in hand")
    need_actions(system, state, combatant)


def perform_ready(system: SystemContract, decision: Decision, actor: str, command: R6Ready, dice: Dice, queue: Queue) -> None:
    combatant: RonD6Combatant = decision.state.combatants[actor]  # type: ignore[assignment]
    weapon = system.weapon(combatant, command.weapon)
    system.spend_action(decision, actor, action="ready", rule=rules.R_READY)
    changes: dict[str, Any] = {}
    if weapon.id not in combatant.readied:
        # Two hands: readying a third weapon puts the older one away.
        changes["readied"] = [*combatant.readied, weapon.id][-2:]
    if command.reload:
        changes["ammo"] = {**combatant.ammo, weapon.id: weapon.capacity}
        changes["reloads"] = {**combatant.reloads, weapon.id: combatant.reloads[weapon.id] - 1}
    what = "reloaded" if command.reload else "drew"
    decision.emit(StateAdjusted(combatant=actor, changes=changes, reason=f"{what} the {weapon.name or weapon.id}", rule=rules.R_READY))
    if "setback" in combatant.conditions:
        decision.emit(ConditionRemoved(combatant=actor, condition="setback", reason="weapon readied again", rule=rules.R_CONDITIONS))


# --------------------------------------------------------------------------- R6-16/17 defend on one's own turn


def check_defend(system: SystemContract, state: RonD6State, actor: str, command: R6Defend) -> str:
    combatant = standing(system, state, actor)
    try:
        skill = rules.defense_skill(command.skill)
    except ValueError as exc:
        raise Rejected(str(exc)) from None
    reason = defense_blocked(system, state, combatant, skill)
    require(reason is None, reason or "")
    need_actions(system, state, combatant, "full" if command.full else "action")
    return skill


def defense_blocked(system: SystemContract, state: RonD6State, combatant: RonD6Combatant, skill: str) -> str | None:
    """Why the combatant cannot use an Active Defense with ``skill`` now."""
    if "no_active_defense" in combatant.conditions:
        return f"{combatant.id} cannot use Active Defense until its next turn (All-Out Attack / Full Auto, R6-24/R6-31)"
    if combatant.surprised and not combatant.surprise_spent:
        return f"{combatant.id} is Surprised: no Active Defense against the first attack (R6-38)"
    if skill == "melee_weapons" and not any(w.kind == "melee" and w.id in combatant.readied for w in combatant.weapons):
        return f"{combatant.id} has no melee weapon in hand to parry with (R6-16)"
    return None


def perform_defend(system: SystemContract, decision: Decision, actor: str, command: R6Defend, dice: Dice, queue: Queue) -> None:
    state: RonD6State = decision.state  # type: ignore[assignment]
    skill = check_defend(system, state, actor, command)
    rule = rules.R_FULL_DEFENSE if command.full else rules.R_ACTIVE
    penalty = system.spend_action(decision, actor, "full" if command.full else "action", action="full_defense" if command.full else "active_defense", rule=rule)
    roll_active_defense(system, decision, actor, skill, penalty, dice, full=command.full)


def roll_active_defense(
    system: SystemContract, decision: Decision, actor: str, skill: str, penalty: int, dice: Dice, *, full: bool, against: str = ""
) -> None:
    state: RonD6State = decision.state  # type: ignore[assignment]
    combatant = state.combatants[actor]
    bonus = [DiceMod("Full Defense", rules.R_FULL_DEFENSE, 2)] if full else []
    roll = roll_test(
        dice, state.settings, combatant, skill,
        purpose=f"{'full' if full else 'active'} defense ({skill})",
        rule=rules.R_FULL_DEFENSE if full else rules.R_ACTIVE,
        action_penalty=penalty, dice_mods=bonus,
    )
    decision.emit(R6DefenseRolled(combatant=actor, skill=skill, roll=roll, full=full, against=against, rule=roll.rule))


# --------------------------------------------------------------------------- R6-13 attacks and their options

ATTACK_OPTIONS = ("normal", "all_out", "full_auto", "sweep", "burst_single", "lunge")


def _strike(
    attacker: str, target: str, weapon: Weapon, *, effect: str = "damage", kind: str = "attack", option: str = "normal",
    attack_dice: list[DiceMod] | None = None, attack_flat: list[Modifier] | None = None, damage_dice: list[DiceMod] | None = None,
    lunge: bool = False, called_shot: str = "", skill: str = "", interaction: str = "", effects: list[int] | None = None,
    rule: str = rules.R_ATTACK,
) -> dict[str, Any]:
    return {
        "step": "strike",
        "attacker": attacker,
        "target": target,
        "weapon": weapon.id,
        "attack_kind": interaction or weapon.kind,
        "skill": skill or weapon.skill,
        "effect": effect,
        "kind": kind,
        "option": option,
        "lunge": lunge,
        "called_shot": called_shot,
        "interaction": interaction,
        "effects": list(effects or []),
        "attack_dice": [m.as_dict() for m in attack_dice or []],
        "attack_flat": [msgspec.to_builtins(m) for m in attack_flat or []],
        "damage_dice": [m.as_dict() for m in damage_dice or []],
        "rule": rule,
    }


def check_attack(system: SystemContract, state: RonD6State, actor: str, command: R6Attack) -> dict[str, Any]:
    """Validate an attack and plan it: actions to spend, ammunition, strikes."""
    attacker = standing(system, state, actor)
    target = foe(system, state, attacker, command.target)
    weapon = system.weapon(attacker, command.weapon)
    in_hand(attacker, weapon)
    option = command.option
    require(option in ATTACK_OPTIONS, f"unknown attack option {option!r}; known: {', '.join(ATTACK_OPTIONS)}")
    name = weapon.name or weapon.id
    kind = "action"
    rounds = (weapon.burst_rounds if "BF" in weapon.modes else 1) if weapon.capacity else 0
    attack_dice: list[DiceMod] = []
    attack_flat: list[Modifier] = []
    damage_dice: list[DiceMod] = []
    rule = rules.R_ATTACK
    no_active_defense = False
    if option == "all_out":
        require(weapon.kind in ("melee", "unarmed"), "an All-Out Attack is a melee attack (R6-24)")
        kind, rule, no_active_defense = "full", rules.R_ALL_OUT, True
        attack_dice.append(DiceMod("All-Out Attack", rules.R_ALL_OUT, 2))
        damage_dice.append(DiceMod("All-Out Attack", rules.R_ALL_OUT, 1))
    elif option == "full_auto":
        require("FA" in weapon.modes, f"the {name} has no Full Auto mode (R6-31)")
        kind, rule, no_active_defense, rounds = "full", rules.R_FULL_AUTO, True, weapon.auto_rounds
        attack_dice.append(DiceMod("Full Auto", rules.R_FULL_AUTO, 1))
        damage_dice.append(DiceMod("Full Auto", rules.R_FULL_AUTO, 2))
    elif option == "sweep":
        require("FA" in weapon.modes or "SA" in weapon.modes, f"a Sweep needs automatic or rapid fire; the {name} has neither (R6-39)")
        kind, rule = "full", rules.R_SWEEP
        rounds = weapon.auto_rounds if "FA" in weapon.modes else weapon.burst_rounds
        attack_dice.append(DiceMod("Sweep", rules.R_SWEEP, 1))
        damage_dice.append(DiceMod("Sweep", rules.R_SWEEP, -3))
    elif option == "burst_single":
        require("BF" in weapon.modes, f"the {name} has no Burst Fire mode to fire as single (R6-26)")
        rounds, rule = 1, rules.R_BURST_SINGLE
        damage_dice.append(DiceMod("Burst Fire as Single", rules.R_BURST_SINGLE, -2))
    elif option == "lunge":
        require(weapon.kind == "melee" and weapon.reach > 1, f"a Lunge needs a melee weapon with Reach; the {name} has none (R6-33)")
        rule = rules.R_LUNGE
        attack_dice.append(DiceMod("Lunge", rules.R_LUNGE, -1))
        damage_dice.append(DiceMod("Lunge", rules.R_LUNGE, -1))
    if command.shots != 1:
        require(command.shots > 1, f"shots must be at least 1, not {command.shots}")
        require("SA" in weapon.modes, f"Rapid Fire needs a semi-automatic weapon; the {name} is not (R6-36)")
        require(option == "normal", "Rapid Fire is its own attack option (R6-36)")
        extra = command.shots - 1
        rounds, rule = command.shots, rules.R_RAPID
        attack_flat.append(Modifier(source=f"Rapid Fire ({extra} extra rounds)", rule=rules.R_RAPID, value=extra))
        damage_dice.append(DiceMod(f"Rapid Fire ({extra} extra rounds)", rules.R_RAPID, extra))
        # A basic action up to half the remaining ammunition, else a Full Action.
        kind = "full" if command.shots * 2 > rounds_loaded(attacker, weapon) else "action"
    effect = "damage"
    if command.called_shot:
        table = state.settings.get("called_shots", rules.CALLED_SHOTS)
        require(command.called_shot in table, f"unknown called shot {command.called_shot!r}; known: {', '.join(table)} (R6-27)")
        require(weapon.kind in ("ranged", "thrown"), "a Called Shot is a ranged attack (R6-27)")
        entry = table[command.called_shot]
        attack_flat.append(Modifier(source=f"Called Shot: {command.called_shot}", rule=rules.R_CALLED, value=int(entry["modifier"])))
        if entry.get("damage_dice") is None:
            effect = "disarm"
        elif entry["damage_dice"]:
            damage_dice.append(DiceMod(f"Called Shot: {command.called_shot}", rules.R_CALLED, int(entry["damage_dice"])))
    if weapon.capacity:
        loaded = rounds_loaded(attacker, weapon)
        require(loaded >= rounds, f"the {name} has {loaded} rounds loaded, needs {rounds}: Ready it to reload (R6-37)")
    problem, _band = reach_problem(system, state, attacker, target, weapon, lunge=option == "lunge")
    require(problem is None, problem or "")

    strikes = [_strike(actor, target.id, weapon, effect=effect, option=option, attack_dice=attack_dice, attack_flat=attack_flat,
                       damage_dice=damage_dice, lunge=option == "lunge", called_shot=command.called_shot, rule=rule)]
    spend = [(actor, kind, "attack", rule)]
    ammo = {actor: {weapon.id: rounds}} if weapon.capacity else {}

    if command.off_hand_weapon:
        require(kind == "action", "a second weapon cannot join a Full Action attack (R6-34)")
        second = system.weapon(attacker, command.off_hand_weapon)
        require(second.id != weapon.id, "the off-hand weapon must be a different weapon (R6-34)")
        in_hand(attacker, second)
        problem, _ = reach_problem(system, state, attacker, target, second)
        require(problem is None, problem or "")
        second_rounds = (second.burst_rounds if "BF" in second.modes else 1) if second.capacity else 0
        if second.capacity:
            require(rounds_loaded(attacker, second) >= second_rounds, f"the {second.name or second.id} is empty: Ready it to reload (R6-37)")
            ammo.setdefault(actor, {})[second.id] = second_rounds
        off_dice = [] if attacker.talents.get("Ambidextrous", 0) > 0 else [DiceMod("off hand", rules.R_MULTI_WEAPON, -1)]
        strikes.append(_strike(actor, target.id, second, attack_dice=off_dice, rule=rules.R_MULTI_WEAPON))
        spend.append((actor, "action", "attack (off hand)", rules.R_MULTI_WEAPON))
        need_actions(system, state, attacker, "action", 2)
    else:
        need_actions(system, state, attacker, kind)

    if command.coordinate_with:
        allies = list(command.coordinate_with)
        require(len(set(allies)) == len(allies), "an ally is named twice in the Coordinated Attack")
        require(len(allies) <= rules.MAX_COORDINATED - 1, f"at most {rules.MAX_COORDINATED} attackers benefit from a Coordinated Attack (R6-29)")
        participants = 1 + len(allies)
        pips = rules.coordinated_bonus_pips(participants)
        for ally_id in allies:
            ally = standing(system, state, ally_id)
            require(ally.id != actor, f"{actor} cannot coordinate with itself")
            require(ally.side == attacker.side, f"{ally_id} is not on {actor}'s side")
            reason = system.action_unavailable(state, ally, "action")
            require(reason is None, f"{ally_id} cannot join the Coordinated Attack: {reason}")
            ally_weapon = system.weapon(ally, "")
            problem, _ = reach_problem(system, state, ally, target, ally_weapon)
            require(problem is None, f"{ally_id} cannot join the Coordinated Attack: {problem}")
            ally_rounds = (ally_weapon.burst_rounds if "BF" in ally_weapon.modes else 1) if ally_weapon.capacity else 0
            if ally_weapon.capacity:
                require(rounds_loaded(ally, ally_weapon) >= ally_rounds, f"{ally_id}'s {ally_weapon.name or ally_weapon.id} is empty")
                ammo[ally_id] = {ally_weapon.id: ally_rounds}
            spend.append((ally_id, "action", "coordinated attack", rules.R_COORDINATED))
            strikes.append(_strike(ally_id, target.id, ally_weapon, rule=rules.R_COORDINATED))
        for strike in strikes:
            if pips >= 3:
                strike["attack_dice"].append(DiceMod(f"Coordinated Attack ({participants} attackers)", rules.R_COORDINATED, 1).as_dict())
            else:
                strike["attack_flat"].append({"source": f"Coordinated Attack ({participants} attackers)", "rule": rules.R_COORDINATED, "value": pips})
    return {"spend": spend, "ammo": ammo, "strikes": strikes, "no_active_defense": no_active_defense, "rule": rule,
            "attack_kind": weapon.kind, "target": target.id}


def spend_ammo(system: SystemContract, decision: Decision, ammo: dict[str, dict[str, int]], rule: str) -> None:
    for cid, used in ammo.items():
        combatant: RonD6Combatant = decision.state.combatants[cid]  # type: ignore[assignment]
        loaded = dict(combatant.ammo)
        for weapon_id, rounds in used.items():
            loaded[weapon_id] = loaded.get(weapon_id, 0) - rounds
        fired = ", ".join(f"{rounds} from {weapon_id}" for weapon_id, rounds in used.items())
        decision.emit(StateAdjusted(combatant=cid, changes={"ammo": loaded}, reason=f"fired {fired}", rule=rule))


def forgo_active_defense(decision: Decision, actor: str, rule: str) -> None:
    """All-Out Attack / Full Auto: no Active Defense until the start of the next turn."""
    combatant: RonD6Combatant = decision.state.combatants[actor]  # type: ignore[assignment]
    decision.emit(ConditionApplied(combatant=actor, condition="no_active_defense", rule=rule, until="start_of_turn"))
    if combatant.active_defense:
        decision.emit(StateAdjusted(combatant=actor, changes={"active_defense": {}}, reason="no Active Defense until the next turn", rule=rule))


def perform_attack(system: SystemContract, decision: Decision, actor: str, command: R6Attack, dice: Dice, queue: Queue) -> None:
    plan = check_attack(system, decision.state, actor, command)  # type: ignore[arg-type]
    for cid, kind, action, rule in plan["spend"]:
        system.spend_action(decision, cid, kind, action=action, rule=rule)
    spend_ammo(system, decision, plan["ammo"], plan["rule"])
    if plan["no_active_defense"]:
        forgo_active_defense(decision, actor, plan["rule"])
    defend = {"step": "defend", "attacker": actor, "targets": [plan["target"]], "attack_kind": plan["attack_kind"]}
    queue[:0] = [defend, *plan["strikes"]]


# --------------------------------------------------------------------------- R6-28 charge


def charge_path(system: SystemContract, state: RonD6State, charger: RonD6Combatant, target: RonD6Combatant, reach: int) -> list[tuple[int, int]]:
    """The straight run at the target: each step heads directly towards it
    until it is within reach; every square must be free."""
    here, there = positions(charger, target)
    grid = system.grid(state)
    occupied = {tuple(c.position) for c in state.combatants.values() if c.position is not None and not c.out_of_fight and c.id != charger.id}
    path: list[tuple[int, int]] = []
    while distance(here, there) > reach:
        dx, dy = direction(here, there)
        step = (here[0] + dx, here[1] + dy)
        require(grid.passable(step) and step not in occupied, f"the charge lane towards {target.id} is blocked at {step} (R6-28)")
        path.append(step)
        here = step
    lying = bodies(state, besides=[charger.id])
    require(not path or path[-1] not in lying, f"the charge at {target.id} would end on {path[-1] if path else ''}, where {lying.get(path[-1]) if path else ''} lies (R6-28)")
    return path


def check_charge(system: SystemContract, state: RonD6State, actor: str, command: R6Charge) -> dict[str, Any]:
    charger = standing(system, state, actor)
    target = foe(system, state, charger, command.target)
    weapon = system.weapon(charger, command.weapon)
    require(weapon.kind in ("melee", "unarmed"), "a Charge ends in a melee attack (R6-28)")
    in_hand(charger, weapon)
    require("prone" not in charger.conditions, f"{actor} is prone: stand up first (R6-35)")
    require(not charger.grappled_by, f"{actor} is grappled by {charger.grappled_by} and cannot charge")
    reach = 1 if weapon.kind == "unarmed" else weapon.reach
    path = charge_path(system, state, charger, target, reach)
    require(len(path) >= 2, f"a Charge needs a run of at least 2 spaces; {target.id} is too close (R6-28)")
    move = effective_move(charger, state.settings)  # R6-09: 6 with Athletics or Fortitude at 3D+, not the sheet's 5
    require(len(path) <= 2 * move, f"{target.id} is beyond {actor}'s charge (up to twice Move {move}: {2 * move} spaces, R6-28)")
    need_actions(system, state, charger, "full")
    return {"path": path, "weapon": weapon, "target": target}


def perform_charge(system: SystemContract, decision: Decision, actor: str, command: R6Charge, dice: Dice, queue: Queue) -> None:
    state: RonD6State = decision.state  # type: ignore[assignment]
    plan = check_charge(system, state, actor, command)
    target: RonD6Combatant = plan["target"]
    weapon: Weapon = plan["weapon"]
    # The target's weapon set against the charge is looked up before anything is
    # emitted: a declared action refuses only before its first event (see `perform`).
    set_weapon = system.weapon(target, target.set_weapon) if target.set_weapon else None
    system.spend_action(decision, actor, "full", action="charge", rule=rules.R_CHARGE)
    decision.emit(Moved(combatant=actor, path=plan["path"], mode="charge", cost=float(len(plan["path"])), rule=rules.R_CHARGE))
    decision.emit(ConditionApplied(combatant=actor, condition="charging", rule=rules.R_CHARGE, until="start_of_turn",
                                   details={"passive_defense": -1}))
    steps: Queue = []
    if set_weapon is not None:
        steps.append(_strike(target.id, actor, set_weapon, kind="set_vs_charge", rule=rules.R_CHARGE,
                             damage_dice=[DiceMod("weapon set against the charge", rules.R_CHARGE, 2)]))
    steps.append({"step": "defend", "attacker": actor, "targets": [target.id], "attack_kind": weapon.kind})
    steps.append(_strike(actor, target.id, weapon, option="charge", rule=rules.R_CHARGE,
                         attack_dice=[DiceMod("Charge", rules.R_CHARGE, 2)]))
    queue[:0] = steps


def check_set_weapon(system: SystemContract, state: RonD6State, actor: str, command: R6SetWeapon) -> Weapon:
    combatant = standing(system, state, actor)
    weapon = system.weapon(combatant, command.weapon)
    require(weapon.set_vs_charge, f"the {weapon.name or weapon.id} cannot be set against a charge (R6-28)")
    in_hand(combatant, weapon)
    need_actions(system, state, combatant)
    return weapon


def perform_set_weapon(system: SystemContract, decision: Decision, actor: str, command: R6SetWeapon, dice: Dice, queue: Queue) -> None:
    weapon = check_set_weapon(system, decision.state, actor, command)  # type: ignore[arg-type]
    system.spend_action(decision, actor, action="set_weapon", rule=rules.R_CHARGE)
    decision.emit(StateAdjusted(combatant=actor, changes={"set_weapon": weapon.id}, reason="weapon set against a charge until the next turn", rule=rules.R_CHARGE))


# --------------------------------------------------------------------------- R6-18 interaction attacks


def check_interact(system: SystemContract, state: RonD6State, actor: str, command: R6Interact) -> None:
    attacker = standing(system, state, actor)
    target = foe(system, state, attacker, command.target)
    require(command.interaction in rules.INTERACTIONS, f"unknown interaction {command.interaction!r}; known: {', '.join(rules.INTERACTIONS)} (R6-18)")
    problem = rules.validate_effects(command.effects, 10**6)
    require(problem is None, f"{problem} (R6-18)")
    a, t = positions(attacker, target)
    spaces = distance(a, t)
    reach = 1 if command.interaction in ("maneuver", "acrobatic_trick") else int(state.settings.get("interaction_range", 10))
    require(spaces <= reach, f"{target.id} is {spaces} spaces away; a {command.interaction} reaches {reach} (R6-18)")
    if reach > 1:
        require(system.grid(state).line_of_sight(a, t), f"{actor} has no line of sight to {target.id}")
    need_actions(system, state, attacker)


def perform_interact(system: SystemContract, decision: Decision, actor: str, command: R6Interact, dice: Dice, queue: Queue) -> None:
    system.spend_action(decision, actor, action=command.interaction, rule=rules.R_INTERACTION)
    skill, _defense = rules.INTERACTIONS[command.interaction]
    queue[:0] = [
        {"step": "defend", "attacker": actor, "targets": [command.target], "attack_kind": command.interaction},
        _strike(actor, command.target, Weapon(id=command.interaction, kind="interaction", skill=skill), effect="interaction",
                kind="interaction", skill=skill, interaction=command.interaction, effects=command.effects, rule=rules.R_INTERACTION),
    ]


# --------------------------------------------------------------------------- R6-32 heads down


def check_heads_down(system: SystemContract, state: RonD6State, actor: str, command: R6HeadsDown) -> dict[str, Any]:
    attacker = standing(system, state, actor)
    weapon = system.weapon(attacker, command.weapon)
    in_hand(attacker, weapon)
    name = weapon.name or weapon.id
    require("FA" in weapon.modes or "SA" in weapon.modes, f"Heads Down needs automatic or rapid fire; the {name} has neither (R6-32)")
    require(attacker.position is not None, f"{actor} has no position on the map")
    center = tuple(command.center)
    grid = system.grid(state)
    require(grid.in_bounds(center), f"{center} is off the map")  # type: ignore[arg-type]
    spaces = distance(tuple(attacker.position), center)  # type: ignore[arg-type]
    require(rules.range_band(spaces, weapon.ranges) is not None, f"{center} is beyond the {name}'s Long range (R6-14)")
    require(grid.line_of_sight(tuple(attacker.position), center), f"{actor} has no line of sight to {center}")  # type: ignore[arg-type]
    rounds = weapon.auto_rounds if "FA" in weapon.modes else weapon.burst_rounds
    if weapon.capacity:
        require(rounds_loaded(attacker, weapon) >= rounds, f"the {name} needs {rounds} rounds for Heads Down: Ready it to reload (R6-37)")
    need_actions(system, state, attacker, "full")
    return {"weapon": weapon, "rounds": rounds if weapon.capacity else 0, "center": center}


def perform_heads_down(system: SystemContract, decision: Decision, actor: str, command: R6HeadsDown, dice: Dice, queue: Queue) -> None:
    plan = check_heads_down(system, decision.state, actor, command)  # type: ignore[arg-type]
    weapon: Weapon = plan["weapon"]
    system.spend_action(decision, actor, "full", action="heads_down", rule=rules.R_HEADS_DOWN)
    if plan["rounds"]:
        spend_ammo(system, decision, {actor: {weapon.id: plan["rounds"]}}, rules.R_HEADS_DOWN)
    queue[:0] = [{"step": "heads_down", "attacker": actor, "weapon": weapon.id, "center": list(plan["center"])}]


# --------------------------------------------------------------------------- grapples (R6-30)


def check_grapple(system: SystemContract, state: RonD6State, actor: str, command: R6Grapple) -> None:
    attacker = standing(system, state, actor)
    target = foe(system, state, attacker, command.target)
    a, t = positions(attacker, target)
    require(distance(a, t) <= 1, f"{target.id} is not within reach to grapple (Point Blank, R6-14)")
    require(target.grappled_by != actor, f"{actor} already holds {target.id}")
    need_actions(system, state, attacker)


def perform_grapple(system: SystemContract, decision: Decision, actor: str, command: R6Grapple, dice: Dice, queue: Queue) -> None:
    system.spend_action(decision, actor, action="grapple", rule=rules.R_ACTION_TYPES)
    grab = Weapon(id="unarmed", name="grapple", kind="unarmed", skill="fighting", damage="STR")
    queue[:0] = [
        {"step": "defend", "attacker": actor, "targets": [command.target], "attack_kind": "unarmed"},
        _strike(actor, command.target, grab, effect="grapple", kind="grapple"),
    ]


def check_escape(system: SystemContract, state: RonD6State, actor: str, command: R6Escape) -> None:
    combatant = standing(system, state, actor)
    require(bool(combatant.grappled_by), f"{actor} is not grappled (R6-30)")
    need_actions(system, state, combatant)


def perform_escape(system: SystemContract, decision: Decision, actor: str, command: R6Escape, dice: Dice, queue: Queue) -> None:
    state: RonD6State = decision.state  # type: ignore[assignment]
    penalty = system.spend_action(decision, actor, action="escape", rule=rules.R_ESCAPE)
    combatant = state.combatants[actor]
    grappler = state.combatants[combatant.grappled_by]
    # The grappler's opposing test is a free defensive roll: no multiple-action penalty.
    hold = roll_test(dice, state.settings, grappler, "fighting", purpose="hold the grapple (Strength: Fighting)", rule=rules.R_ESCAPE)
    decision.emit(TestRolled(combatant=grappler.id, test="hold grapple", roll=hold, success=True, details={"against": actor}))
    escape = roll_test(dice, state.settings, combatant, "fighting", purpose="escape the grapple (Strength: Fighting)",
                       rule=rules.R_ESCAPE, target=hold.total, action_penalty=penalty)
    decision.emit(TestRolled(combatant=actor, test="escape grapple", roll=escape, success=bool(escape.success), details={"grappler": grappler.id}))
    if escape.success:
        decision.emit(ConditionRemoved(combatant=actor, condition="grappled", reason=f"broke free of {grappler.id}", rule=rules.R_ESCAPE))


# --------------------------------------------------------------------------- injuries (R6-21/22)


def check_recover_stun(system: SystemContract, state: RonD6State, actor: str, command: R6RecoverStun) -> None:
    combatant = standing(system, state, actor)
    require("stunned" in combatant.conditions, f"{actor} is not Stunned")
    need_actions(system, state, combatant)


def perform_recover_stun(system: SystemContract, decision: Decision, actor: str, command: R6RecoverStun, dice: Dice, queue: Queue) -> None:
    state: RonD6State = decision.state  # type: ignore[assignment]
    penalty = system.spend_action(decision, actor, action="recover", rule=rules.R_CONDITIONS)
    roll = roll_test(dice, state.settings, state.combatants[actor], "fortitude", purpose="shake off Stunned (Stamina: Fortitude)",
                     rule=rules.R_CONDITIONS, target=system.standard(state), action_penalty=penalty)
    decision.emit(TestRolled(combatant=actor, test="recover from Stunned", roll=roll, success=bool(roll.success)))
    if roll.success:
        decision.emit(ConditionRemoved(combatant=actor, condition="stunned", reason="Standard Stamina: Fortitude test", rule=rules.R_CONDITIONS))


def check_mortal(system: SystemContract, state: RonD6State, actor: str, command: R6MortalWoundCheck) -> None:
    combatant = system.combatant(state, command.combatant)
    require("mortally_wounded" in combatant.conditions, f"{command.combatant} is not Mortally Wounded")
    require(not combatant.dead, f"{command.combatant} is already dead")


def perform_mortal(system: SystemContract, decision: Decision, actor: str, command: R6MortalWoundCheck, dice: Dice, queue: Queue) -> None:
    """R6-21: at the end of each minute roll Strength; less than the minutes
    since the wound and the character dies."""
    state: RonD6State = decision.state  # type: ignore[assignment]
    check_mortal(system, state, actor, command)
    combatant = state.combatants[command.combatant]
    minute = combatant.mortal_minutes + 1
    roll = roll_pool(dice, as_code(combatant.attributes.get("Strength", "2D")), purpose=f"Mortally Wounded: minute {minute} (Strength)",
                     rule=rules.R_INJURY, stymied="stymied" in combatant.conditions, target=minute,
                     complication_rule=state.settings.get("complication_rule", "remove"))
    decision.emit(TestRolled(combatant=combatant.id, test="mortal wound", roll=roll, success=bool(roll.success), details={"minute": minute}))
    decision.emit(StateAdjusted(combatant=combatant.id, changes={"mortal_minutes": minute}, reason=f"minute {minute} since the mortal wound", rule=rules.R_INJURY))
    if not roll.success:
        decision.emit(ConditionApplied(combatant=combatant.id, condition="dead", rule=rules.R_INJURY,
                                       details={"reason": f"Strength {roll.total} < {minute} minutes"}))
        if not combatant.out_of_fight:
            decision.emit(CombatantDown(combatant=combatant.id, reason="died of a mortal wound", rule=rules.R_INJURY))


# --------------------------------------------------------------------------- registry


def _checked(check: Callable[..., Any]) -> Callable[..., None]:
    def run(system: SystemContract, state: RonD6State, actor: str, command: Command) -> None:
        check(system, state, actor, command)

    return run


SPECS: dict[type[Command], Spec] = {
    R6DeclareActions: Spec(check_declare, perform_declare, is_action=False),
    R6FreeAction: Spec(check_free, perform_free, is_action=False),
    R6DropProne: Spec(check_drop_prone, perform_drop_prone, is_action=False),
    R6MortalWoundCheck: Spec(check_mortal, perform_mortal, is_action=False, sequencer_only=True),
    R6Stand: Spec(check_stand, perform_stand),
    R6Wait: Spec(check_wait, perform_wait),
    R6Ready: Spec(check_ready, perform_ready),
    R6Defend: Spec(_checked(check_defend), perform_defend),
    R6Attack: Spec(_checked(check_attack), perform_attack),
    R6Charge: Spec(_checked(check_charge), perform_charge),
    R6SetWeapon: Spec(_checked(check_set_weapon), perform_set_weapon),
    R6Interact: Spec(check_interact, perform_interact),
    R6HeadsDown: Spec(_checked(check_heads_down), perform_heads_down),
    R6Grapple: Spec(check_grapple, perform_grapple),
    R6Escape: Spec(check_escape, perform_escape),
    R6RecoverStun: Spec(check_recover_stun, perform_recover_stun),
}
