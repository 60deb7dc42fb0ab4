"""RonD6 attack resolution and injuries: the steps an attack queues, Defense
values, damage against the Damage Resistance Total, injury levels, conditions
and what the start and end of a turn do to them.

Steps (JSON-able dicts kept in window continuations, see `system.run_steps`):

* ``defend``: offer the targets an Active Defense window (R6-16);
* ``strike``: one attack roll against one target's Defense (R6-13), then its
  effect: damage (R6-19, possibly via a Damage Resistance window, R6-20), a
  disarm (Called Shot, R6-27), a grapple (R6-30) or interaction effects (R6-18);
* ``heads_down``: suppressive fire on an area (R6-32).
"""

from __future__ import annotations

from typing import Any

import msgspec

from firelane.engine.core import Decision
from firelane.engine.dice import Dice
from firelane.engine.grid import distance
from firelane.engine.systems.rond6 import actions, reactions, rules
from firelane.engine.systems.rond6.contract import SystemContract
from firelane.engine.systems.rond6.pools import as_code, difficulty, roll_pool
from firelane.engine.systems.rond6.rolling import (
    dice_mods_from,
    flat_mods_from,
    roll_damage,
    roll_test,
)
from firelane.engine.state import ReactionWindow
from firelane.engine.systems.rond6.state import RonD6Combatant, RonD6State, Weapon
from firelane.events.options_schemas import AreaPreview, CaughtInArea
from firelane.engine.systems.rond6.schemas import R6ActionLost, R6DamageRolled, R6HeadsDown, R6InterruptsBegun
from firelane.events.schemas import (
    AttackResolved,
    ConditionApplied,
    ConditionRemoved,
    DamageDealt,
    Modifier,
    Roll,
    StateAdjusted,
    TestRolled,
)

Queue = list[dict[str, Any]]


# --------------------------------------------------------------------------- defense values (R6-15/16)


def defense_value(
    system: SystemContract, state: RonD6State, attacker: RonD6Combatant, target: RonD6Combatant, attack_kind: str, band: str
) -> tuple[int, dict[str, Any]]:
    """The number an attack must reach: a standing Active Defense that covers
    this kind of attack (R6-16/17), else Passive Defense (R6-15) with its
    modifiers. Returns (value, explanation)."""
    surprised = target.surprised and not target.surprise_spent
    standing = sorted(((total, skill) for skill, total in target.active_defense.items() if attack_kind in rules.DEFENSE_COVERS.get(skill, ())), reverse=True)
    if standing and not surprised:
        total, skill = standing[0]
        return total, {"kind": "active", "skill": skill, "value": total, "rule": rules.R_ACTIVE}
    standard = system.standard(state)
    parts: list[Modifier] = [Modifier(source="Standard difficulty", rule=rules.R_PASSIVE, value=standard)]
    if attack_kind in rules.INTERACTIONS:
        defense_skill = rules.INTERACTIONS[attack_kind][1]
        code, _ = rules.skill_code(target.attributes, target.skills, defense_skill)
        # House default: the interaction's passive defense uses its defense skill like Passive Agility.
        parts.append(Modifier(source=f"{defense_skill} {code} dice - 2", rule=rules.R_INTERACTION, value=code.dice - 2))
    else:
        agility = as_code(target.attributes.get("Agility", "2D"))
        parts.append(Modifier(source=f"Passive Agility ({agility.dice}) - 2", rule=rules.R_PASSIVE, value=agility.dice - 2))
        if target.passive_defense_bonus:
            parts.append(Modifier(source="equipment and talents", rule=rules.R_PASSIVE, value=target.passive_defense_bonus))
        if "charging" in target.conditions:
            parts.append(Modifier(source="charging", rule=rules.R_CHARGE, value=-1))
        if target.defense_bonus:
            parts.append(Modifier(source="Active Defense result points", rule=rules.R_ACTIVE, value=target.defense_bonus))
        if attack_kind in ("ranged", "thrown") and attacker.position is not None and target.position is not None:
            level = actions.cover_level(state, tuple(target.position), tuple(attacker.position))  # type: ignore[arg-type]
            cover = state.settings.get("cover_defense", {})
            if level in cover:
                parts.append(Modifier(source=f"{level} cover", rule=rules.R_ATTACK, value=int(cover[level])))
    value = sum(p.value for p in parts)
    info = {"kind": "passive", "value": value, "parts": [msgspec.to_builtins(p) for p in parts], "rule": rules.R_PASSIVE}
    if surprised:
        info["surprised"] = True
    return value, info


# --------------------------------------------------------------------------- steps


def lose(decision: Decision, actor: str, action: str, reason: str, rule: str = rules.R_WAIT) -> None:
    decision.emit(R6ActionLost(combatant=actor, action=action, reason=reason, rule=rule))


def defend_step(system: SystemContract, decision: Decision, step: dict[str, Any], queue: Queue, dice: Dice) -> None:
    reactions.open_defense_window(system, decision, step, queue)


def strike_weapon(system: SystemContract, attacker: RonD6Combatant, step: dict[str, Any]) -> Weapon:
    if step["effect"] == "interaction":
        return Weapon(id=step["interaction"], name=step["interaction"], kind="interaction", skill=step["skill"])
    if step["effect"] == "grapple":
        return Weapon(id="unarmed", name="grapple", kind="unarmed", skill="fighting", damage="STR")
    return system.weapon(attacker, step["weapon"])


def strike_terms(
    system: SystemContract, state: RonD6State, attacker: RonD6Combatant, target: RonD6Combatant, step: dict[str, Any]
) -> tuple[Weapon, str, list[Modifier]] | str:
    """The weapon, range band and flat terms of one strike's attack roll (the
    step's own, range R6-14, prone R6-35), or why the strike can no longer be made.
    The options (`options`) preview an attack's odds with these same terms."""
    weapon = strike_weapon(system, attacker, step)
    band = ""
    flat = flat_mods_from(step["attack_flat"])
    if weapon.kind != "interaction":
        if weapon.kind != "unarmed" and weapon.id not in attacker.readied:
            return f"{attacker.id}'s {weapon.name or weapon.id} is no longer in hand"
        problem, band = actions.reach_problem(system, state, attacker, target, weapon, lunge=bool(step["lunge"]))
        if problem is not None:
            return problem
        if band in rules.RANGE_MODIFIER and rules.RANGE_MODIFIER[band]:
            flat.append(Modifier(source=f"range: {band.replace('_', ' ')}", rule=rules.R_RANGE, value=rules.RANGE_MODIFIER[band]))
        if "prone" in target.conditions:
            if weapon.kind in ("melee", "unarmed"):
                flat.append(Modifier(source="target prone (melee)", rule=rules.R_PRONE, value=5))
            elif band != "point_blank":
                flat.append(Modifier(source="target prone (ranged)", rule=rules.R_PRONE, value=-5))
    return weapon, band, flat


def strike_step(system: SystemContract, decision: Decision, step: dict[str, Any], queue: Queue, dice: Dice) -> None:
    """One attack roll against one target (R6-13) and its effect."""
    state: RonD6State = decision.state  # type: ignore[assignment]
    attacker = state.combatants[step["attacker"]]
    target = state.combatants[step["target"]]
    label = step["kind"]
    if attacker.out_of_fight:
        lose(decision, attacker.id, label, f"{attacker.id} is out of the fight before its attack resolves")
        return
    if target.out_of_fight:
        lose(decision, attacker.id, label, f"{target.id} is already out of the fight")
        return
    terms = strike_terms(system, state, attacker, target, step)
    if isinstance(terms, str):
        lose(decision, attacker.id, label, terms)
        return
    weapon, band, flat = terms
    defense, defense_info = defense_value(system, state, attacker, target, step["attack_kind"], band)
    roll = roll_test(
        dice, state.settings, attacker, step["skill"],
        purpose=f"{label}: {attacker.id} -> {target.id} ({weapon.name or weapon.id})",
        rule=step["rule"], target=defense, action_penalty=system.penalty_dice(attacker),
        dice_mods=dice_mods_from(step["attack_dice"]), flat=flat,
    )
    hit = bool(roll.success)
    result_points = roll.total - defense if hit else 0
    details: dict[str, Any] = {"result_points": result_points, "defense": defense_info, "option": step["option"], "effect": step["effect"]}
    if band:
        details["range_band"] = band
    if step["called_shot"]:
        details["called_shot"] = step["called_shot"]
    if target.surprised and not target.surprise_spent:
        details["surprise_spent"] = True
    decision.emit(AttackResolved(attacker=attacker.id, target=target.id, weapon=weapon.id, roll=roll, hit=hit, kind=label, details=details))
    if not hit:
        if defense_info["kind"] == "active":
            won_by = defense - roll.total
            if won_by > target.defense_bonus:
                decision.emit(StateAdjusted(combatant=target.id, changes={"defense_bonus": won_by},
                                            reason=f"won the opposed defense by {won_by}: added to Passive Defense until its next turn",
                                            rule=rules.R_ACTIVE))
        return
    effect = step["effect"]
    if effect == "damage":
        damage_dice = dice_mods_from(step["damage_dice"])
        extra = [Modifier(source="result points", rule=rules.R_ATTACK, value=result_points)] if state.settings.get("result_points_to_damage") and result_points else []
        damage = roll_damage(dice, state.settings, attacker, weapon, dice_mods=damage_dice, flat=extra)
        deliver_hit(system, decision, attacker.id, target.id, weapon, damage, queue, dice)
    elif effect == "disarm":
        decision.emit(StateAdjusted(combatant=target.id, changes={"readied": []}, reason=f"{attacker.id}'s Called Shot knocked the held item away", rule=rules.R_CALLED))
    elif effect == "grapple":
        decision.emit(ConditionApplied(combatant=target.id, condition="grappled", rule=rules.R_ESCAPE, details={"by": attacker.id}))
    elif effect == "interaction":
        apply_interaction(system, decision, attacker.id, target.id, result_points, step["effects"], step["interaction"], dice)


def deliver_hit(
    system: SystemContract, decision: Decision, attacker: str, target_id: str, weapon: Weapon, damage: Roll, queue: Queue, dice: Dice
) -> None:
    """Damage reaches the target: if it may spend Character/Fate Points (R6-20),
    record the damage roll now (it was rolled in this decision) and open the
    window; the damage applies when the window closes. Else apply it at once."""
    state: RonD6State = decision.state  # type: ignore[assignment]
    if reactions.can_resist(state, state.combatants[target_id]):
        decision.emit(R6DamageRolled(attacker=attacker, target=target_id, weapon=weapon.id, roll=damage, rule=rules.R_DAMAGE))
        hit = {"attacker": attacker, "target": target_id, "weapon": weapon.id, "damage_total": damage.total, "stun": weapon.stun, "rule": rules.R_DAMAGE}
        reactions.open_resist_window(system, decision, hit, queue)
        return
    apply_damage_total(system, decision, target_id, damage.total, source=attacker, roll=damage, rule=rules.R_DAMAGE, stun=weapon.stun, dice=dice)


def heads_down_radius(state: RonD6State) -> int:
    return int(state.settings.get("heads_down_radius", 1))


def heads_down_caught(state: RonD6State, attacker: str, center: tuple[int, int]) -> list[str]:
    """R6-32: everyone standing within the house radius of ``center`` but the
    attacker, by ID (allies too: the area does not choose)."""
    radius = heads_down_radius(state)
    return sorted(
        c.id for c in state.combatants.values()
        if c.id != attacker and not c.out_of_fight and c.position is not None and distance(tuple(c.position), center) <= radius  # type: ignore[arg-type]
    )


def heads_down_area(system: SystemContract, state: RonD6State, command: R6HeadsDown) -> AreaPreview:
    """R6-32 for the table: the squares a Heads Down at ``command.center``
    covers and whom it would make test (`heads_down_caught`), allies flagged;
    the action's own checks (`check_heads_down`), without the rolls."""
    plan = actions.check_heads_down(system, state, command.actor, command)
    attacker = state.combatants[command.actor]
    center = (int(plan["center"][0]), int(plan["center"][1]))
    radius = heads_down_radius(state)
    squares = [(x, y) for y in range(max(0, center[1] - radius), min(state.terrain.height, center[1] + radius + 1))
               for x in range(max(0, center[0] - radius), min(state.terrain.width, center[0] + radius + 1))]
    caught = heads_down_caught(state, attacker.id, center)
    relation = {cid: "ally" if state.combatants[cid].side == attacker.side else "enemy" for cid in caught}
    return AreaPreview(
        command="R6HeadsDown", shape="burst", origin=center, squares=squares, rule=rules.R_HEADS_DOWN,
        caught=[CaughtInArea(combatant=cid, square=tuple(state.combatants[cid].position), relation=relation[cid])  # type: ignore[arg-type]
                for cid in caught],
        allies_caught=[cid for cid in caught if relation[cid] == "ally"],
        notes=["each one caught tests Will Power against the attack: one who fails drops prone, loses its next action "
               "and suffers the Intimidation effects the result points buy"],
    )


def heads_down_step(system: SystemContract, decision: Decision, step: dict[str, Any], queue: Queue, dice: Dice) -> None:
    """R6-32: one attack test as an Intimidation against everyone in the area;
    each target's opposed Will Power test fails -> it seeks cover (drops
    prone, house default), loses its next action, and suffers the
    Intimidation effects its result points buy."""
    state: RonD6State = decision.state  # type: ignore[assignment]
    attacker = state.combatants[step["attacker"]]
    if attacker.out_of_fight:
        lose(decision, attacker.id, "heads_down", f"{attacker.id} is out of the fight")
        return
    weapon = system.weapon(attacker, step["weapon"])
    center = tuple(step["center"])
    radius = heads_down_radius(state)
    caught = heads_down_caught(state, attacker.id, center)  # type: ignore[arg-type]
    attack = roll_test(dice, state.settings, attacker, weapon.skill, purpose=f"Heads Down ({weapon.name or weapon.id}) as Intimidation",
                       rule=rules.R_HEADS_DOWN, details={"center": list(center), "radius": radius, "targets": caught})
    for target_id in caught:
        target = state.combatants[target_id]
        if target.out_of_fight:
            continue
        resist = roll_test(dice, state.settings, target, "resolve", purpose="Heads Down: opposed Will Power", rule=rules.R_HEADS_DOWN)
        pinned = attack.total >= resist.total
        points = attack.total - resist.total if pinned else 0
        decision.emit(AttackResolved(attacker=attacker.id, target=target_id, weapon=weapon.id, roll=attack, hit=pinned, kind="heads_down",
                                     defense=resist, details={"result_points": points, "effect": "interaction"}))
        if not pinned:
            continue
        if "prone" not in target.conditions:
            decision.emit(ConditionApplied(combatant=target_id, condition="prone", rule=rules.R_HEADS_DOWN, details={"reason": "dived for cover"}))
        lose_next_action(decision, target_id, rules.R_HEADS_DOWN)
        apply_interaction(system, decision, attacker.id, target_id, points, [], "intimidation", dice, allow_lose_action=False)


STEPS = {"defend": defend_step, "strike": strike_step, "heads_down": heads_down_step}


# --------------------------------------------------------------------------- interaction effects (R6-18)


def lose_next_action(decision: Decision, target_id: str, rule: str) -> None:
    """The target loses its next action: an unused declared one now, else the
    first one it declares next."""
    target: RonD6Combatant = decision.state.combatants[target_id]  # type: ignore[assignment]
    if target.declared_actions and target.actions_used < target.declared_actions and not target.full_action:
        decision.emit(StateAdjusted(combatant=target_id, changes={"actions_used": target.actions_used + 1}, reason="loses its next action", rule=rule))
    else:
        decision.emit(StateAdjusted(combatant=target_id, changes={"actions_lost": target.actions_lost + 1}, reason="will lose its next action", rule=rule))


def apply_interaction(
    system: SystemContract, decision: Decision, attacker: str, target_id: str, points: int, chosen: list[int], interaction: str,
    dice: Dice, *, allow_lose_action: bool = True,
) -> None:
    """Buy effects with the result points: the chosen ones in order while
    affordable, or the house choice (dearest first); each effect once."""
    if chosen:
        costs: list[int] = []
        for cost in chosen:
            if rules.validate_effects([*costs, cost], points) is None:
                costs.append(cost)
    else:
        costs = rules.choose_effects(points) if allow_lose_action else _choose_without_lose_action(points)
    state: RonD6State = decision.state  # type: ignore[assignment]
    for cost in costs:
        for effect in rules.INTERACTION_EFFECTS[cost]:
            target = state.combatants[target_id]
            if target.out_of_fight:
                return
            details = {"cost": cost, "by": attacker, "interaction": interaction}
            if effect in ("stymied", "untrained"):
                decision.emit(ConditionApplied(combatant=target_id, condition=effect, rule=rules.R_INTERACTION, until="end_of_next_turn", details=details))
            elif effect == "fatigued":
                add_fatigue(system, decision, target_id, rules.R_INTERACTION, details)
            elif effect == "setback":
                decision.emit(ConditionApplied(combatant=target_id, condition="setback", rule=rules.R_INTERACTION, until="end_of_next_turn", details=details))
                if target.readied:
                    # House default for the GM's complication: the target drops what it holds.
                    decision.emit(StateAdjusted(combatant=target_id, changes={"readied": []}, reason="Setback: dropped its weapon", rule=rules.R_CONDITIONS))
            elif effect == "lose_action":
                lose_next_action(decision, target_id, rules.R_INTERACTION)


def _choose_without_lose_action(points: int) -> list[int]:
    chosen: list[int] = []
    for cost in (4, 3, 2, 1):
        if cost <= points - sum(chosen):
            chosen.append(cost)
    return chosen


def add_fatigue(system: SystemContract, decision: Decision, target_id: str, rule: str, details: dict[str, Any] | None = None) -> None:
    """One more Fatigue condition; beyond the limit (3) the character falls unconscious (R6-22)."""
    state: RonD6State = decision.state  # type: ignore[assignment]
    target = state.combatants[target_id]
    level = target.fatigue + 1
    decision.emit(ConditionApplied(combatant=target_id, condition="fatigued", rule=rule, details={**(details or {}), "level": level}))
    if level > int(state.settings.get("fatigue_limit", 3)):
        decision.emit(ConditionApplied(combatant=target_id, condition="unconscious", rule=rules.R_CONDITIONS, details={"reason": "exhausted"}))
        system.down(decision, target_id, f"unconscious from Fatigue ({level} levels)", rules.R_CONDITIONS)


# --------------------------------------------------------------------------- damage and injuries (R6-19..23)


def apply_damage_total(
    system: SystemContract, decision: Decision, target_id: str, damage_total: int, *, source: str, roll: Any = None,
    rule: str = rules.R_DAMAGE, stun: bool = False, dice: Dice | None = None,
) -> None:
    state: RonD6State = decision.state  # type: ignore[assignment]
    target = system.combatant(state, target_id)
    boost = target.resistance_boost or {}
    resistance, parts = rules.damage_resistance(
        target.attributes.get("Strength", "2D"), target.armor, bonus=target.dr_bonus,
        fate_point=bool(boost.get("fate_point")), character_point_dice=int(boost.get("dice", 0)),
        armor_per_die=int(state.settings.get("armor_points_per_die", 4)),
    )
    stunned, wounds = rules.damage_outcome(damage_total, resistance)
    margin = damage_total - resistance
    if stun:
        wounds = rules.stun_damage_wounds(wounds)
    before = target.wounds
    after = before + wounds
    outcome = "no effect" if not stunned else ("Stunned" if not wounds else f"Stunned and {wounds} Wound{'s' if wounds > 1 else ''}")
    damage_roll = roll if roll is None or isinstance(roll, Roll) else msgspec.convert(roll, Roll)
    decision.emit(DamageDealt(
        target=target_id, source=source, amount=wounds, roll=damage_roll, rule=rule,
        details={"damage_total": damage_total, "resistance_total": resistance, "resistance": parts, "margin": margin,
                 "stunned": stunned, "wounds_before": before, "wounds_total": after, "stun_damage": stun, "outcome": outcome,
                 "injury": rules.injury_level(after), "boost": dict(boost)},
    ))
    if not stunned:
        return
    decision.emit(ConditionApplied(combatant=target_id, condition="stunned", rule=rules.R_DAMAGE, details={"margin": margin}))
    if stun and margin > 0:
        decision.emit(ConditionApplied(combatant=target_id, condition="unconscious", rule=rules.R_CONDITIONS, until=f"minutes:{margin}",
                                       details={"minutes": margin, "reason": "Stun Damage"}))
        system.down(decision, target_id, f"knocked out by Stun Damage for {margin} minutes", rules.R_CONDITIONS)
    injure(system, decision, target_id, before, after, dice)


def injure(system: SystemContract, decision: Decision, target_id: str, before: int, after: int, dice: Dice | None) -> None:
    """R6-21 injury levels reached by going from ``before`` to ``after`` Wounds, and R6-23 Massive Damage."""
    state: RonD6State = decision.state  # type: ignore[assignment]
    if after >= 5 > before:
        decision.emit(ConditionApplied(combatant=target_id, condition="dead", rule=rules.R_INJURY, details={"wounds": after}))
        system.down(decision, target_id, f"killed ({after} Wounds)", rules.R_INJURY)
    elif after >= 4 > before:
        decision.emit(ConditionApplied(combatant=target_id, condition="mortally_wounded", rule=rules.R_INJURY, details={"wounds": after}))
        decision.emit(ConditionApplied(combatant=target_id, condition="unconscious", rule=rules.R_INJURY, details={"reason": "Mortally Wounded"}))
        system.down(decision, target_id, "Mortally Wounded (4 Wounds): unconscious", rules.R_INJURY)
    elif after >= 3 > before:
        if dice is None:
            # Damage applied without dice (a caller outside the attack pipeline): the test waits for the next turn.
            decision.emit(ConditionApplied(combatant=target_id, condition="incapacitation_test", rule=rules.R_INJURY))
        else:
            incapacitation_test(system, decision, target_id, dice)
    target = state.combatants[target_id]
    if after - before >= 2 and not target.out_of_fight:
        decision.emit(ConditionApplied(combatant=target_id, condition="massive_damage", rule=rules.R_MASSIVE, until="end_of_next_turn",
                                       details={"wounds": after - before}))


def incapacitation_test(system: SystemContract, decision: Decision, target_id: str, dice: Dice) -> None:
    """R6-21, 3 Wounds: a Standard Stamina or Will Power test (the better of the
    two, house default, not reduced by the Wounds that caused it) or unconscious."""
    state: RonD6State = decision.state  # type: ignore[assignment]
    target = state.combatants[target_id]
    options = [(as_code(target.attributes.get(a, "2D")), a) for a in ("Stamina", "Will Power")]
    code, attribute = max(options, key=lambda o: (o[0].total_pips(), o[1] == "Stamina"))
    roll = roll_pool(dice, code, purpose=f"Incapacitated: stay conscious ({attribute})", rule=rules.R_INJURY,
                     stymied="stymied" in target.conditions, target=difficulty("standard", settings=state.settings),
                     complication_rule=state.settings.get("complication_rule", "remove"))
    decision.emit(TestRolled(combatant=target_id, test="incapacitated", roll=roll, success=bool(roll.success), details={"attribute": attribute}))
    if "incapacitation_test" in target.conditions:
        decision.emit(ConditionRemoved(combatant=target_id, condition="incapacitation_test", reason="rolled", rule=rules.R_INJURY))
    if roll.success:
        decision.emit(ConditionApplied(combatant=target_id, condition="incapacitated", rule=rules.R_INJURY, details={"penalty_dice": 3}))
    else:
        decision.emit(ConditionApplied(combatant=target_id, condition="unconscious", rule=rules.R_INJURY, details={"reason": "Incapacitated"}))
        system.down(decision, target_id, "Incapacitated (3 Wounds): failed to stay conscious", rules.R_INJURY)


# --------------------------------------------------------------------------- turn and round boundaries


def recover_stun_by_rest(system: SystemContract, decision: Decision) -> None:
    """R6-21/22: a Stunned character who spent one full round taking no
    actions recovers at the start of the next round."""
    state: RonD6State = decision.state  # type: ignore[assignment]
    for cid in sorted(state.combatants):
        combatant = state.combatants[cid]
        if "stunned" in combatant.conditions and not combatant.out_of_fight and combatant.stunned_round < state.round - 1 and combatant.actions_used_last_round == 0:
            decision.emit(ConditionRemoved(combatant=cid, condition="stunned", reason="a full round without actions", rule=rules.R_INJURY))


def start_of_turn(system: SystemContract, decision: Decision, cid: str, dice: Dice) -> None:
    state: RonD6State = decision.state  # type: ignore[assignment]
    combatant = state.combatants[cid]
    changes: dict[str, Any] = {}
    if combatant.active_defense:
        changes["active_defense"] = {}
    if combatant.defense_bonus:
        changes["defense_bonus"] = 0
    if combatant.set_weapon:
        changes["set_weapon"] = ""
    if changes:
        decision.emit(StateAdjusted(combatant=cid, changes=changes, reason="start of turn: Active Defense, its bonus and a set weapon end", rule=rules.R_ACTIVE))
    if "incapacitation_test" in combatant.conditions:
        incapacitation_test(system, decision, cid, dice)
        if combatant.out_of_fight:
            return
    if "massive_damage" in combatant.conditions:
        roll = roll_test(dice, state.settings, combatant, "fortitude", purpose="Massive Damage: Standard Stamina: Fortitude",
                         rule=rules.R_MASSIVE, target=system.standard(state))
        decision.emit(TestRolled(combatant=cid, test="massive damage", roll=roll, success=bool(roll.success)))
        if roll.success:
            decision.emit(ConditionRemoved(combatant=cid, condition="massive_damage", reason="Standard Stamina: Fortitude test", rule=rules.R_MASSIVE))
    for condition, until in sorted(combatant.conditions.items()):
        if until == "start_of_turn":
            decision.emit(ConditionRemoved(combatant=cid, condition=condition, reason="start of its turn"))
        elif until == "end_of_next_turn":
            decision.emit(ConditionApplied(combatant=cid, condition=condition, until="end_of_turn", rule=rules.R_CONDITIONS))
    if combatant.grappled_by:
        grappler = state.combatants.get(combatant.grappled_by)
        if grappler is None or grappler.out_of_fight or grappler.position is None or combatant.position is None or distance(tuple(grappler.position), tuple(combatant.position)) > 1:  # type: ignore[arg-type]
            decision.emit(ConditionRemoved(combatant=cid, condition="grappled", reason="the grappler let go", rule=rules.R_ESCAPE))


def end_of_turn(system: SystemContract, decision: Decision, cid: str) -> None:
    combatant: RonD6Combatant = decision.state.combatants[cid]  # type: ignore[assignment]
    for condition, until in sorted(combatant.conditions.items()):
        if until == "end_of_turn":
            decision.emit(ConditionRemoved(combatant=cid, condition=condition, reason="end of its turn"))


# --------------------------------------------------------------------------- after a window


def after_window(system: SystemContract, decision: Decision, window: ReactionWindow, dice: Dice) -> None:
    """What follows a window: queue the claimed Wait interruptions before the
    declared action (R6-08), or apply the damage of a hit once its target chose
    whether to spend Character or Fate Points (R6-20); then run the rest of the queue."""
    state: RonD6State = decision.state  # type: ignore[assignment]
    continuation = window.continuation
    kind = continuation.get("kind")
    queue: Queue = list(continuation.get("queue", []))
    if kind == "wait":
        interrupts = list(state.queued_interrupts)
        if interrupts:
            decision.emit(R6InterruptsBegun(window=window.window, count=len(interrupts)))
        queue = [{"step": "resolve", "command": payload, "interrupt": True} for payload in interrupts] + queue
    elif kind == "resist":
        hit = continuation["hit"]
        target = state.combatants[hit["target"]]
        if not target.out_of_fight:
            apply_damage_total(system, decision, hit["target"], hit["damage_total"], source=hit["attacker"], roll=None,
                               rule=hit["rule"], stun=hit["stun"], dice=dice)
    system.run_steps(decision, queue, dice)
