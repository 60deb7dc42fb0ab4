"""The actions of d100-degrees: move, the four attack actions, clearing a jam.

Each handler validates the command (raising `Rejected` with a reason), spends
its Half or Full Action with an `ActionTaken` event (D100D-02), rolls through
the injected dice and emits what happened. A hit opens an Evasion reaction
window for its target (D100D-10, see `reactions`); the damage is dealt after
that window, by `finish_attack`.
"""

from __future__ import annotations

from typing import Any

import msgspec

from firelane.engine.core import BaseRuleSystem, Decision, Rejected, require
from firelane.engine.dice import Dice
from firelane.engine.grid import Grid, Square
from firelane.engine.systems.d100_degrees import reactions, rules
from firelane.engine.systems.d100_degrees.rules import ACTION_LABELS, ALL_OUT, FULL, HALF, PINNED
from firelane.engine.systems.d100_degrees.state import D100DCombatant, D100DState, Weapon
from firelane.engine.systems.percentile import (
    area_fire_candidates,
    body_squares,
    declared_path,
    metres,
    occupied_squares,
    parse_damage,
    path_error,
    position,
    roll_damage,
)
from firelane.engine.systems.d100_degrees.schemas import (
    ChainLink,
    D100DAllOutAttack,
    D100DBasicAttack,
    D100DClearJam,
    D100DControlledFire,
    D100DMove,
    D100DSuppressingFire,
    D100DSuppressingFireResolved,
)
from firelane.events.options_schemas import AreaPreview, CaughtInArea
from firelane.events.schemas import (
    ActionTaken,
    AttackResolved,
    ConditionApplied,
    DamageDealt,
    EligibleReactor,
    Modifier,
    Moved,
    Roll,
    StateAdjusted,
    TestRolled,
)

# ---------------------------------------------------------------- small helpers


def require_action(state: D100DState, actor: D100DCombatant, action: str, cost: str) -> None:
    """D100D-02: a turn holds one Full Action or two Half Actions."""
    label = ACTION_LABELS[action]
    used = actor.half_actions_used
    if cost == FULL:
        require(
            used == 0,
            f"{label} is a Full Action and {actor.id} has already used {used} Half Action{'s' if used != 1 else ''} this turn (D100D-02)",
        )
        if state.settings["pinned_blocks_full_actions"]:
            require(PINNED not in actor.conditions, f"{actor.id} is Pinned and cannot take Full Actions such as {label} (house default)")
    else:
        require(used < 2, f"{actor.id} has already used its whole turn (two Half Actions or one Full Action, D100D-02)")


def spend(decision: Decision, actor: str, action: str, cost: str, rule: str, details: dict[str, Any] | None = None) -> None:
    decision.emit(ActionTaken(combatant=actor, action=action, slot=cost, rule=rule, details=details or {}))


def pick_weapon(actor: D100DCombatant, name: str | None, kind: str) -> Weapon:
    weapon = actor.weapon(name)
    if name is not None and weapon is None:
        raise Rejected(f"{actor.id} has no weapon named {name!r}; has: {', '.join(w.name for w in actor.weapons) or 'none'}")
    if name is None:
        weapon = actor.weapon(None, kind)
        require(weapon is not None, f"{actor.id} has no {kind} weapon")
    assert weapon is not None
    require(weapon.kind == kind, f"{weapon.name} is a {weapon.kind} weapon, not a {kind} one")
    return weapon


def pick_rof(weapon: Weapon, rof: int | None) -> int:
    selected = weapon.rof if rof is None else rof
    require(1 <= selected <= weapon.rof, f"rate of fire {selected} is not available on {weapon.name} (1 to {weapon.rof})")
    return selected


def require_not_jammed(actor: D100DCombatant, weapon: Weapon) -> None:
    require(
        weapon.name not in actor.jammed,
        f"{weapon.name} is jammed; clear it first (D100DClearJam) (D100D-08)",
    )


def pinned_modifiers(state: D100DState, actor: D100DCombatant) -> list[Modifier]:
    penalty = int(state.settings["pinned_attack_penalty"])
    if PINNED in actor.conditions and penalty:
        return [Modifier(source="Pinned", rule="house default: Pinned", value=penalty)]
    return []


def automatic_modifiers(weapon: Weapon, rof: int, rule: str) -> list[Modifier]:
    """D100D-07: automatic fire adds 5 x the selected rate of fire."""
    if weapon.automatic:
        return [Modifier(source=f"automatic fire: 5 x RoF {rof}", rule=rule, value=5 * rof)]
    return []


# ---------------------------------------------------------------- move


def move(system: BaseRuleSystem, decision: Decision, command: D100DMove, dice: Dice) -> None:
    """House default: a Move is a Half Action of up to Agility Bonus metres."""
    state: D100DState = decision.state  # type: ignore[assignment]
    actor = state.combatants[command.actor]
    require_action(state, actor, "move", HALF)
    allowance = half_move_metres(state, actor)
    path = declared_path(state, actor.id, position(actor), command.path, command.to, command.waypoints,
                         half_move_squares(state, actor))
    require(bool(path), "a move needs a path or a destination ('to')")
    grid = Grid(state.terrain)
    error = path_error(grid, position(actor), path, occupied_squares(state, ignore=[actor.id]), body_squares(state, ignore=[actor.id]))
    require(error is None, f"cannot move: {error}")
    walked = len(path) * float(state.settings["square_metres"])
    require(walked <= allowance, f"{actor.id} can move {allowance:g} m in a Half Action, not {walked:g} m (house default)")
    spend(decision, actor.id, "move", HALF, "D100D-02", {"metres": walked, "allowance_m": allowance})
    decision.emit(Moved(combatant=actor.id, path=path, cost=walked, rule="house default: movement"))


def half_move_squares(state: D100DState, actor: D100DCombatant) -> int:
    """How many squares a Half Action's move covers (house default)."""
    return int(half_move_metres(state, actor) / float(state.settings["square_metres"]) + 1e-9)


def half_move_metres(state: D100DState, actor: D100DCombatant) -> float:
    per_bonus = float(state.settings["half_move_metres_per_agility_bonus"])
    minimum = float(state.settings["minimum_half_move_metres"])
    return max(minimum, rules.agility_bonus(actor.agility) * per_bonus)


# ---------------------------------------------------------------- attacks


def plan_chain(
    state: D100DState,
    actor: D100DCombatant,
    weapon: Weapon,
    target: str,
    extra: list[ChainLink],
    max_targets: int,
    limit_reason: str,
) -> list[str]:
    """D100D-04: check the chain of targets (and walked squares); return the targets in order."""
    grid = Grid(state.terrain)
    origin = position(actor)
    occupied = occupied_squares(state)
    step_limit = float(state.settings["chain_step_metres"])
    ranged = weapon.kind == "ranged"
    targets: list[str] = []
    previous: tuple[str, Square] | None = None
    links: list[ChainLink] = [target, *extra]
    for index, link in enumerate(links):
        if isinstance(link, str):
            other = state.combatants.get(link)
            require(other is not None, f"unknown target {link!r}")
            assert other is not None
            require(link != actor.id, f"{actor.id} cannot attack itself")
            require(not other.out_of_fight, f"{link} is already out of the fight")
            require(link not in targets, f"{link} appears twice in the attack chain")
            square, name = position(other), link
        else:
            square = (int(link[0]), int(link[1]))
            name = f"square {square}"
            require(index > 0, "an attack's first link must be a combatant")
            require(grid.passable(square), f"chain {name} is a wall or off the map")
            require(square not in occupied, f"chain {name} is not empty; only empty spaces can be walked through (D100D-04)")
        away = metres(state, origin, square)
        require(away <= weapon.range_m, f"{name} is {away:g} m away, out of range of {weapon.name} ({weapon.range_m:g} m)")
        if ranged:
            require(grid.line_of_sight(origin, square), f"{actor.id} has no line of sight to {name}")
        if previous is not None:
            gap = metres(state, previous[1], square)
            require(
                gap <= step_limit,
                f"{name} is {gap:g} m from the previous link ({previous[0]}); each link must be within {step_limit:g} m (D100D-04)",
            )
        previous = (name, square)
        if isinstance(link, str):
            targets.append(link)
    require(isinstance(links[-1], str), "an attack chain cannot end in an empty square (D100D-04)")
    require(
        len(targets) <= max_targets,
        f"{len(targets)} targets exceed the limit of {max_targets} ({limit_reason}, D100D-04)",
    )
    return targets


def melee_attack(system: BaseRuleSystem, decision: Decision, command: D100DBasicAttack | D100DAllOutAttack, dice: Dice) -> None:
    state: D100DState = decision.state  # type: ignore[assignment]
    actor = state.combatants[command.actor]
    all_out = isinstance(command, D100DAllOutAttack)
    action, cost, rule = ("all_out_attack", FULL, "D100D-05") if all_out else ("basic_attack", HALF, "D100D-06")
    require_action(state, actor, action, cost)
    weapon = pick_weapon(actor, command.weapon, "melee")
    bonus = rules.agility_bonus(actor.agility)
    targets = plan_chain(state, actor, weapon, command.target, command.extra, max(1, bonus), f"Agility Bonus {bonus}")
    spend(decision, actor.id, action, cost, "D100D-02", {"weapon": weapon.name, "targets": targets})
    modifiers = pinned_modifiers(state, actor)
    if all_out:
        modifiers.insert(0, Modifier(source=f"All Out Attack: 5 x Agility Bonus {bonus}", rule="D100D-05", value=5 * bonus))
        # D100D-05: hit or miss, no Evasion reactions until the attacker's next turn.
        decision.emit(ConditionApplied(combatant=actor.id, condition=ALL_OUT, rule="D100D-05", until=f"start_of_turn:{actor.id}"))
    roll = rules.characteristic_test(
        dice,
        purpose=ACTION_LABELS[action],
        rule=rule,
        characteristic="Weapon Skill",
        value=actor.weapon_skill,
        modifiers=modifiers,
        formula=state.settings["degrees_formula"],
    )
    resolve_chain(system, decision, actor, weapon, targets, roll, action, rule, dice)


def controlled_fire(system: BaseRuleSystem, decision: Decision, command: D100DControlledFire, dice: Dice) -> None:
    state: D100DState = decision.state  # type: ignore[assignment]
    actor = state.combatants[command.actor]
    weapon, rof = ready_ranged_weapon(state, actor, "controlled_fire", HALF, command.weapon, command.rof)
    targets = plan_chain(state, actor, weapon, command.target, command.extra, rof, f"selected rate of fire {rof}")
    spend(decision, actor.id, "controlled_fire", HALF, "D100D-02", {"weapon": weapon.name, "rof": rof, "targets": targets})
    roll = shooting_test(decision, actor, weapon, rof, purpose="Controlled Fire", rule="D100D-07", dice=dice)
    resolve_chain(system, decision, actor, weapon, targets, roll, "controlled_fire", "D100D-07", dice)


def ready_ranged_weapon(
    state: D100DState, actor: D100DCombatant, action: str, cost: str, weapon_name: str | None, rof: int | None
) -> tuple[Weapon, int]:
    """The action's cost can be paid and the named (or first) ranged weapon is
    not jammed and fires at the asked rate of fire: return it and that rate."""
    require_action(state, actor, action, cost)
    weapon = pick_weapon(actor, weapon_name, "ranged")
    require_not_jammed(actor, weapon)
    return weapon, pick_rof(weapon, rof)


def shooting_test(
    decision: Decision,
    actor: D100DCombatant,
    weapon: Weapon,
    rof: int,
    *,
    purpose: str,
    rule: str,
    dice: Dice,
    difficulty: str = "challenging",
) -> Roll:
    """A Ballistic Skill test for a shot at ``rof`` (automatic fire and Pinned
    modify it, D100D-07), then the jam check of D100D-08."""
    state: D100DState = decision.state  # type: ignore[assignment]
    roll = rules.characteristic_test(
        dice,
        purpose=purpose,
        rule=rule,
        characteristic="Ballistic Skill",
        value=actor.ballistic_skill,
        difficulty=difficulty,
        modifiers=automatic_modifiers(weapon, rof, rule) + pinned_modifiers(state, actor),
        formula=state.settings["degrees_formula"],
    )
    return check_jam(decision, actor, weapon, rof, roll)


def check_jam(decision: Decision, actor: D100DCombatant, weapon: Weapon, rof: int, roll: Roll) -> Roll:
    """D100D-08: a roll >= 100 - RoF jams the weapon; house default: the jammed shot misses."""
    threshold = rules.jam_threshold(rof)
    if not rules.jams(roll.total, rof):
        return roll
    decision.emit(
        StateAdjusted(
            combatant=actor.id,
            changes={"jammed": sorted({*actor.jammed, weapon.name})},
            reason=f"{weapon.name} jammed: roll {roll.total} >= 100 - RoF {rof} = {threshold}",
            rule="D100D-08",
        )
    )
    details = {**roll.details, "jammed": True, "jam_threshold": threshold}
    notes = [*roll.notes, f"jam: {roll.total} >= {threshold} (D100D-08)"]
    if decision.state.settings["jam_misses"] and roll.success:
        details["degrees_lost_to_jam"] = details.pop("degrees_of_success", 0)
        notes.append("the jammed shot misses (house default)")
        return msgspec.structs.replace(roll, success=False, details=details, notes=notes)
    return msgspec.structs.replace(roll, details=details, notes=notes)


def attack_record(actor: D100DCombatant, weapon: Weapon, action: str, rule: str, hits: list[str], leftover: int) -> dict[str, Any]:
    """What the Evasion window carries to `finish_attack`: who hit whom with what,
    and the degrees left over for damage (stored in the window, so plain data)."""
    return {
        "attacker": actor.id,
        "weapon": weapon.name,
        "kind": weapon.kind,
        "action": action,
        "rule": rule,
        "hits": hits,
        "leftover_degrees": leftover,
    }


def resolve_chain(
    system: BaseRuleSystem,
    decision: Decision,
    actor: D100DCombatant,
    weapon: Weapon,
    targets: list[str],
    roll: Roll,
    action: str,
    rule: str,
    dice: Dice,
) -> None:
    """Emit the attack's outcome for each target of the chain, then let the hit targets evade."""
    won = rules.degrees(roll) if roll.success else 0
    extra_hit, leftover = rules.trade_degrees_for_targets(won, len(targets) - 1) if won else (0, 0)
    hit_targets = targets[: 1 + extra_hit] if won else []
    for index, target in enumerate(targets):
        details: dict[str, Any] = {"chain_position": index + 1, "degrees_of_success": won}
        if won:
            details.update(extra_targets_hit=extra_hit, degrees_for_damage=leftover)
            if target not in hit_targets:
                details["missed_because"] = "too few degrees of success to reach this link (two per extra target, D100D-04)"
        decision.emit(
            AttackResolved(
                attacker=actor.id,
                target=target,
                weapon=weapon.name,
                roll=roll,
                hit=target in hit_targets,
                kind=action,
                details=details,
            )
        )
    start_evasion(system, decision, attack_record(actor, weapon, action, rule, list(hit_targets), leftover), dice)


def suppressing_fire(system: BaseRuleSystem, decision: Decision, command: D100DSuppressingFire, dice: Dice) -> None:
    state: D100DState = decision.state  # type: ignore[assignment]
    actor = state.combatants[command.actor]
    weapon, rof = ready_ranged_weapon(state, actor, "suppressing_fire", FULL, command.weapon, command.rof)
    origin = position(actor)
    toward = (int(command.toward[0]), int(command.toward[1]))
    require(toward != origin, "Suppressing Fire needs a direction: 'toward' must differ from the shooter's square")
    candidates = killzone(state, actor, weapon, toward)
    spend(decision, actor.id, "suppressing_fire", FULL, "D100D-02", {"weapon": weapon.name, "rof": rof, "toward": list(toward)})
    roll = shooting_test(decision, actor, weapon, rof, purpose="Suppressing Fire", rule="D100D-09", dice=dice, difficulty="hard")
    jammed = bool(roll.details.get("jammed"))
    won = rules.degrees(roll) if roll.success else 0
    hits: list[str] = []
    selection: list[Roll] = []
    leftover = 0
    if won and candidates:
        for number in range(min(won, rof)):
            if len(candidates) == 1:
                hits.append(candidates[0])
                continue
            die = dice.roll(len(candidates))
            picked = candidates[die.face - 1]
            hits.append(picked)
            selection.append(
                Roll(
                    purpose=f"Suppressing Fire: random target {number + 1}",
                    rule="D100D-09",
                    dice=[die],
                    total=die.face,
                    details={"candidates": candidates, "picked": picked},
                )
            )
        leftover = won - len(hits)
    decision.emit(
        D100DSuppressingFireResolved(
            attacker=actor.id,
            weapon=weapon.name,
            toward=toward,
            in_arc=candidates,
            roll=roll,
            selection_rolls=selection,
            hits=hits,
            leftover_degrees=leftover,
            jammed=jammed,
        )
    )
    pinning_tests(decision, candidates, rules.test_succeeded(roll), dice)
    start_evasion(system, decision, attack_record(actor, weapon, "suppressing_fire", "D100D-09", hits, leftover), dice)


def in_killzone(state: D100DState, grid: Grid, origin: Square, toward: Square, weapon: Weapon, square: Square) -> bool:
    """D100D-09: ``square`` lies in the 30 degree arc from ``origin`` toward
    ``toward``, within the weapon's range and in the shooter's sight."""
    return (
        rules.in_arc(origin, toward, square)
        and metres(state, origin, square) <= weapon.range_m
        and grid.line_of_sight(origin, square)
    )


def killzone(state: D100DState, actor: D100DCombatant, weapon: Weapon, toward: Square) -> list[str]:
    """D100D-09: standing combatants in the 30 degree arc, in range and in sight, by ID.
    House default: the shooter's allies are not caught unless the setting says so."""
    grid = Grid(state.terrain)
    origin = position(actor)
    allies_too = bool(state.settings["suppressing_fire_hits_allies"])
    return sorted(other.id for other in area_fire_candidates(state, actor, allies_too=allies_too)
                  if in_killzone(state, grid, origin, toward, weapon, position(other)))


def suppressing_fire_area(state: D100DState, command: D100DSuppressingFire) -> AreaPreview:
    """D100D-09 for the table: the killzone a Suppressing Fire toward
    ``command.toward`` would cover (every square of the arc in range and in
    sight) and who it would catch (`killzone`); the checks of the action
    itself, without the test. An ally in the arc that the house default spares
    (``suppressing_fire_hits_allies`` false) is named in the notes."""
    actor = state.combatants[command.actor]
    weapon, _rof = ready_ranged_weapon(state, actor, "suppressing_fire", FULL, command.weapon, command.rof)
    origin = position(actor)
    toward = (int(command.toward[0]), int(command.toward[1]))
    require(toward != origin, "Suppressing Fire needs a direction: 'toward' must differ from the shooter's square")
    grid = Grid(state.terrain)
    squares = [(x, y) for y in range(state.terrain.height) for x in range(state.terrain.width)
               if (x, y) not in grid.walls and in_killzone(state, grid, origin, toward, weapon, (x, y))]
    caught = killzone(state, actor, weapon, toward)
    inside = set(squares)
    spared = sorted(c.id for c in state.combatants.values() if c.id not in caught and c.id != actor.id and c.side == actor.side
                    and not c.out_of_fight and c.position is not None and position(c) in inside)
    return AreaPreview(
        command="D100DSuppressingFire", shape="arc", origin=origin, squares=squares, rule="D100D-09",
        caught=[CaughtInArea(combatant=cid, square=position(state.combatants[cid]),
                             relation="ally" if state.combatants[cid].side == actor.side else "enemy") for cid in caught],
        allies_caught=[cid for cid in caught if state.combatants[cid].side == actor.side],
        notes=[f"in the arc but spared (suppressing_fire_hits_allies is off): {', '.join(spared)}"] if spared else [],
    )


def pinning_tests(decision: Decision, caught: list[str], test_succeeded: bool, dice: Dice) -> None:
    """D100D-09: everyone in the killzone tests Willpower (house default) at -10,
    or -20 "if the Ballistic Skill test was successful" (``test_succeeded``,
    whether or not the shot then jammed and missed); failure: Pinned until the
    end of its next turn."""
    state: D100DState = decision.state  # type: ignore[assignment]
    difficulty = "hard" if test_succeeded else "difficult"
    for combatant_id in caught:
        target = state.combatants[combatant_id]
        if target.out_of_fight:
            continue
        roll = rules.characteristic_test(
            dice,
            purpose="Pinning test",
            rule="D100D-09",
            characteristic="Willpower (house default for Pinning)",
            value=target.willpower,
            difficulty=difficulty,
            formula=state.settings["degrees_formula"],
        )
        decision.emit(
            TestRolled(
                combatant=combatant_id,
                test="pinning",
                roll=roll,
                success=bool(roll.success),
                details={"difficulty": difficulty, "ballistic_skill_test_succeeded": test_succeeded},
            )
        )
        if not roll.success:
            decision.emit(ConditionApplied(combatant=combatant_id, condition=PINNED, rule="D100D-09", until=f"end_of_turn:{combatant_id}"))


def start_evasion(system: BaseRuleSystem, decision: Decision, attack: dict[str, Any], dice: Dice) -> None:
    """D100D-10: a hit lets each target that can still evade react; then deal damage."""
    state: D100DState = decision.state  # type: ignore[assignment]
    reactors = []
    for target_id in dict.fromkeys(attack["hits"]):
        offered = reactions.evasions_for(state.combatants[target_id], attack["kind"])
        reactors.append(EligibleReactor(combatant=target_id, reactions=offered))
    opened = system.open_window(
        decision,
        trigger=f"hit:{attack['action']}",
        actor=attack["attacker"],
        reactors=reactors,
        continuation={"attack": attack},
        rule="D100D-10",
    )
    if not opened:
        finish_attack(decision, attack, set(), dice)


def finish_attack(decision: Decision, attack: dict[str, Any], evaded: set[str], dice: Dice) -> None:
    """Deal damage for every hit that was not evaded (D100D-03)."""
    state: D100DState = decision.state  # type: ignore[assignment]
    attacker = state.combatants[attack["attacker"]]
    weapon = attacker.weapon(attack["weapon"])
    assert weapon is not None
    code = parse_damage(weapon.damage)
    leftover = int(attack["leftover_degrees"])
    for number, target_id in enumerate(attack["hits"]):
        target = state.combatants[target_id]
        if target_id in evaded or target.out_of_fight:
            continue
        modifiers: list[Modifier] = []
        if leftover:
            modifiers.append(
                Modifier(
                    source=f"{leftover} extra degree{'s' if leftover != 1 else ''} of success x Multiplier {weapon.multiplier}",
                    rule=attack["rule"] if attack["action"] == "suppressing_fire" else "D100D-03",
                    value=leftover * weapon.multiplier,
                )
            )
        if target.armour and state.settings["armour_reduces_damage"]:
            modifiers.append(Modifier(source=f"armour {target.armour_name or ''}".strip(), rule="house default: armour", value=-target.armour))
        roll, _ = roll_damage(dice, code, purpose="damage", rule="D100D-03", weapon=weapon.name, modifiers=modifiers,
                              floor_rule="house default: armour")
        remaining = max(0, target.wounds - roll.total)
        decision.emit(
            DamageDealt(
                target=target_id,
                source=attacker.id,
                amount=roll.total,
                roll=roll,
                rule="D100D-03",
                remaining=remaining,
                details={"weapon": weapon.name, "action": attack["action"], "hit": number + 1},
            )
        )
        if remaining <= 0:
            decision.system.down(decision, target_id, "no wounds left", rule="house default: 0 wounds")


# ---------------------------------------------------------------- clear jam


def clear_jam(system: BaseRuleSystem, decision: Decision, command: D100DClearJam, dice: Dice) -> None:
    """House default: clearing a jammed weapon is a Full Action (setting clear_jam_action), no test."""
    state: D100DState = decision.state  # type: ignore[assignment]
    actor = state.combatants[command.actor]
    require(actor.jammed, f"{actor.id} has no jammed weapon")
    name = command.weapon or actor.jammed[0]
    require(name in actor.jammed, f"{name} is not jammed (jammed: {', '.join(actor.jammed)})")
    cost = state.settings["clear_jam_action"]
    require_action(state, actor, "clear_jam", cost)
    spend(decision, actor.id, "clear_jam", cost, "D100D-08", {"weapon": name})
    decision.emit(
        StateAdjusted(
            combatant=actor.id,
            changes={"jammed": [w for w in actor.jammed if w != name]},
            reason=f"cleared the jam of {name}",
            rule="D100D-08",
        )
    )


# A turn's actions, by command (the system's decide_action dispatches on these).
ACTIONS = {
    D100DMove: move,
    D100DBasicAttack: melee_attack,
    D100DAllOutAttack: melee_attack,
    D100DControlledFire: controlled_fire,
    D100DSuppressingFire: suppressing_fire,
    D100DClearJam: clear_jam,
}
