"""The actions of d100-zones: move, attack (and second attack), aimed shot,
suppressive fire, first aid; the free attacks on leaving Engaged range.

Each handler validates the command (raising `Rejected` with a reason), spends
what it costs with an `ActionTaken` event, rolls through the injected dice and
emits what happened. The per-turn economy (D100Z-03): one move of up to one
zone (15 m) is free; one action (an attack, aiming, first aid, or moving more
than one zone). The optional rules (D100Z-08..13) check their switch in
``settings["options"]`` (D100Z-16).
"""

from __future__ import annotations

from typing import Any

import msgspec

from firelane.engine.core import BaseRuleSystem, Decision, Rejected, require
from firelane.engine.dice import Dice
from firelane.engine.grid import Grid, Square
from firelane.engine.systems.d100_zones import rules
from firelane.engine.systems.d100_zones.state import MELEE, RANGED, UNARMED, D100ZCombatant, D100ZState, ZWeapon
from firelane.engine.systems.percentile import (
    area_fire_candidates,
    body_squares,
    declared_path,
    metres,
    never_below_zero,
    occupied_squares,
    parse_damage,
    path_error,
    percentile_test,
    position,
)
from firelane.engine.systems.d100_zones.schemas import (
    D100ZAimedShot,
    D100ZAttack,
    D100ZFirstAid,
    D100ZFirstAidGiven,
    D100ZMove,
    D100ZRevived,
    D100ZSuppressiveFire,
)
from firelane.events.options_schemas import AreaPreview, CaughtInArea
from firelane.events.schemas import (
    ActionTaken,
    AttackResolved,
    ConditionApplied,
    ConditionRemoved,
    DamageDealt,
    EligibleReactor,
    Modifier,
    Moved,
    Roll,
    StateAdjusted,
    TestRolled,
)

OPTION_LABELS = {
    "str_bonus": "the STR damage bonus",
    "cover": "cover",
    "flanking": "flanking",
    "multi_attack": "a second attack (multi-attack)",
    "aimed_shot": "Aimed Shot",
    "suppressive_fire": "Suppressive Fire",
}
SKILL_LABELS = {MELEE: "Melee", RANGED: "Ranged", UNARMED: "Brawling"}
FREE_ATTACK = "free_attack"
UNCONSCIOUS, DYING, STABILISED, DEAD, SUPPRESSED = "unconscious", "dying", "stabilised", "dead", "suppressed"


# ---------------------------------------------------------------- helpers


def between(state: D100ZState, a: D100ZCombatant, b: D100ZCombatant) -> float:
    return metres(state, position(a), position(b))


def option_on(state: D100ZState, name: str) -> bool:
    return bool(state.settings["options"][name])


def require_option(state: D100ZState, name: str) -> None:
    """D100Z-16: an optional rule must be switched on for this encounter."""
    require(
        option_on(state, name),
        f"{OPTION_LABELS[name]} is an optional rule switched off for this encounter (settings options.{name} = false, D100Z-16)",
    )


def enemies_of(state: D100ZState, me: D100ZCombatant) -> list[D100ZCombatant]:
    return [c for c in state.combatants.values() if c.side != me.side and not c.out_of_fight and c.position is not None]


def engaged(state: D100ZState, a: D100ZCombatant, b: D100ZCombatant) -> bool:
    return rules.zone_of(between(state, a, b)) == "engaged"


def unarmed_weapon(state: D100ZState) -> ZWeapon:
    return ZWeapon(name="unarmed", kind=UNARMED, damage=str(state.settings["unarmed_damage"]), hands=1)


def find_weapon(state: D100ZState, me: D100ZCombatant, name: str) -> ZWeapon:
    weapon = me.weapon(name)
    if weapon is None and name == "unarmed":
        return unarmed_weapon(state)
    if weapon is None:
        have = ", ".join([w.name for w in me.weapons] + ["unarmed"])
        raise Rejected(f"{me.id} has no weapon named {name!r}; has: {have}")
    return weapon


def close_weapon(state: D100ZState, me: D100ZCombatant) -> ZWeapon:
    """The weapon for an engaged fight: the first melee weapon, else the first unarmed one, else fists."""
    for kind in (MELEE, UNARMED):
        for weapon in me.weapons:
            if weapon.kind == kind:
                return weapon
    return unarmed_weapon(state)


def first_ranged(me: D100ZCombatant) -> ZWeapon | None:
    return next((w for w in me.weapons if w.kind == RANGED), None)


def require_economy(me: D100ZCombatant, what: str) -> None:
    require(not me.action_used, f"{me.id} has already used its action this turn ({me.action_spent_on}); {what} needs it")


# ---------------------------------------------------------------- moving


def plan_move(state: D100ZState, me: D100ZCombatant, path: list[Square]) -> dict[str, Any]:
    """Validate a move and work out what it costs and whom it provokes (D100Z-02/03/13/15)."""
    require(not me.aimed_this_turn, f"{me.id} aimed this turn and cannot move in the same turn (D100Z-12)")
    require(bool(path), "a move needs a path or a destination ('to')")
    grid = Grid(state.terrain)
    start = position(me)
    error = path_error(grid, start, path, occupied_squares(state, ignore=[me.id]), body_squares(state, ignore=[me.id]))
    require(error is None, f"cannot move: {error}")
    return move_plan(state, me, path)


def move_plan(state: D100ZState, me: D100ZCombatant, path: list[Square]) -> dict[str, Any]:
    """What a walkable ``path`` costs and whom it provokes (D100Z-02/03/13/15);
    refused when it is too long or needs an action already spent."""
    walked = len(path) * float(state.settings["square_metres"])
    total = me.moved_m + walked
    require(
        total <= rules.MAX_MOVE_M,
        f"{me.id} would move {total:g} m this turn; beyond {rules.MAX_MOVE_M:g} m is Distant and takes 3+ actions (D100Z-02)",
    )
    costs: list[str] = []
    rule = "D100Z-03"
    if total > rules.FREE_MOVE_M:
        costs.append(f"moving more than one zone ({total:g} m this turn, over {rules.FREE_MOVE_M:g} m)")
    if me.suppressed:
        origin = (int(me.suppressed["origin"][0]), int(me.suppressed["origin"][1]))
        if rules.zone_of(metres(state, origin, path[-1])) != me.suppressed["zone"]:
            costs.append(f"leaving the {me.suppressed['zone']} zone under suppressive fire")
            rule = "D100Z-13" if len(costs) == 1 else rule
    if costs:
        require(not me.action_used, f"{' and '.join(costs)} costs the action, and {me.id} has already used it ({me.action_spent_on}) ({rule})")
    provoked = sorted(
        enemy.id
        for enemy in enemies_of(state, me)
        if engaged(state, me, enemy) and any(rules.zone_of(metres(state, position(enemy), square)) != "engaged" for square in path)
    )
    return {"path": [list(square) for square in path], "metres": walked, "costs": costs, "rule": rule, "provoked": provoked}


def move(system: BaseRuleSystem, decision: Decision, command: D100ZMove, dice: Dice) -> None:
    state: D100ZState = decision.state  # type: ignore[assignment]
    me = state.combatants[command.actor]
    steps = int((rules.MAX_MOVE_M - me.moved_m) / float(state.settings["square_metres"]) + 1e-9)
    path = declared_path(state, me.id, position(me), command.path, command.to, command.waypoints, max(0, steps))
    plan = plan_move(state, me, path)
    if plan["costs"]:
        decision.emit(ActionTaken(combatant=me.id, action="move", slot="action", rule=plan["rule"], details={"because": plan["costs"]}))
    if me.aim_target is not None:
        decision.emit(StateAdjusted(combatant=me.id, changes={"aim_target": None}, reason="moving breaks the aim (house default)", rule="D100Z-12"))
    if plan["provoked"]:
        reactors = [EligibleReactor(combatant=enemy, reactions=[FREE_ATTACK]) for enemy in plan["provoked"]]
        if system.open_window(decision, trigger="leave_engaged", actor=me.id, reactors=reactors, continuation={"move": plan}, rule="D100Z-15"):
            return
    finish_move(decision, me.id, plan)


def finish_move(decision: Decision, mover: str, plan: dict[str, Any]) -> None:
    path = [(int(x), int(y)) for x, y in plan["path"]]
    decision.emit(Moved(combatant=mover, path=path, cost=float(plan["metres"]), rule="D100Z-03"))


# ---------------------------------------------------------------- attacking


def attack(system: BaseRuleSystem, decision: Decision, command: D100ZAttack, dice: Dice) -> None:
    state: D100ZState = decision.state  # type: ignore[assignment]
    me = state.combatants[command.actor]
    target = require_target(state, me, command.target)
    weapon = pick_attack_weapon(state, me, target, command.weapon)
    extra: list[Modifier] = []
    if not me.attacks:
        require_economy(me, "an attack")
        spend = ActionTaken(combatant=me.id, action="attack", slot="action", rule="D100Z-04", details={"weapon": weapon.name, "target": target.id})
    else:
        require_option(state, "multi_attack")
        require(len(me.attacks) < 2, f"{me.id} has already attacked twice this turn (D100Z-11)")
        first = me.attacks[0]
        first_weapon = me.weapon(first)
        two_weapons = (
            first_weapon is not None and first != weapon.name and first_weapon.hands == 1 and weapon.hands == 1
            and UNARMED not in (first_weapon.kind, weapon.kind)
        )
        penalty = -10 if two_weapons else -20
        source = "second attack, other hand" if two_weapons else "second attack, same weapon"
        extra.append(Modifier(source=source, rule="D100Z-11", value=penalty))
        spend = ActionTaken(combatant=me.id, action="second_attack", slot="free", rule="D100Z-11", details={"weapon": weapon.name, "target": target.id, "penalty": penalty})
    attack_mods, dodge_mods, aimed = targeting_modifiers(state, me, target, weapon)
    decision.emit(spend)
    if me.aim_target is not None:
        decision.emit(StateAdjusted(combatant=me.id, changes={"aim_target": None}, reason="the aim is spent on this attack", rule="D100Z-12"))
    resolve_attack(decision, me.id, target.id, weapon, "attack", attack_mods + extra, dodge_mods, dice, aimed=aimed)


def require_target(state: D100ZState, me: D100ZCombatant, target_id: str) -> D100ZCombatant:
    target = state.combatants.get(target_id)
    require(target is not None, f"unknown target {target_id!r}")
    assert target is not None
    require(target.id != me.id, f"{me.id} cannot attack itself")
    require(not target.out_of_fight, f"{target.id} is already out of the fight")
    position(target)
    return target


def pick_attack_weapon(state: D100ZState, me: D100ZCombatant, target: D100ZCombatant, name: str | None) -> ZWeapon:
    if name is not None:
        weapon = find_weapon(state, me, name)
    elif engaged(state, me, target):
        weapon = close_weapon(state, me)
    else:
        weapon = first_ranged(me) or close_weapon(state, me)
    check_reach(state, me, target, weapon)
    return weapon


def check_reach(state: D100ZState, me: D100ZCombatant, target: D100ZCombatant, weapon: ZWeapon) -> None:
    away = between(state, me, target)
    if weapon.kind == RANGED:
        require(away <= weapon.range_m, f"{target.id} is {away:g} m away, out of range of {weapon.name} ({weapon.range_m:g} m)")
        require(Grid(state.terrain).line_of_sight(position(me), position(target)), f"{me.id} has no line of sight to {target.id}")
        if option_on(state, "cover"):
            cover = rules.cover_between(Grid(state.terrain).cover_at, position(me), position(target))
            require(
                cover is None or cover.level != "heavy",
                f"{target.id} is behind heavy cover and cannot be targeted directly (D100Z-09)",
            )
    else:
        require(
            rules.zone_of(away) == "engaged",
            f"{target.id} is {away:g} m away ({rules.zone_of(away)}); {weapon.kind} attacks need the target Engaged (0-2 m) (D100Z-04)",
        )


def targeting_modifiers(
    state: D100ZState, me: D100ZCombatant, target: D100ZCombatant, weapon: ZWeapon
) -> tuple[list[Modifier], list[Modifier], bool]:
    """Cover (D100Z-09), aimed shot (D100Z-12) and flanking (D100Z-10) for this attack:
    modifiers to the attack's target number, to the defender's dodge, and whether the aim applies."""
    attack_mods: list[Modifier] = []
    dodge_mods: list[Modifier] = []
    aimed = weapon.kind == RANGED and me.aim_target == target.id and option_on(state, "aimed_shot")
    if aimed:
        attack_mods.append(Modifier(source="aimed shot", rule="D100Z-12", value=20))
    if weapon.kind == RANGED and option_on(state, "cover"):
        cover = rules.cover_between(Grid(state.terrain).cover_at, position(me), position(target))
        if cover is not None and cover.level in rules.COVER_MODIFIERS and not (aimed and cover.level == "soft"):
            value = rules.COVER_MODIFIERS[cover.level]
            if state.settings["cover_applies_to"] == "attack":
                attack_mods.append(Modifier(source=f"{cover.level} cover", rule="D100Z-09", value=value))
            else:
                dodge_mods.append(Modifier(source=f"{cover.level} cover", rule="D100Z-09", value=-value))
    if option_on(state, "flanking"):
        partner = flanking_partner(state, me, target)
        if partner is not None:
            attack_mods.append(Modifier(source=f"flanking with {partner}", rule="D100Z-10", value=rules.FLANKING_BONUS))
    return attack_mods, dodge_mods, aimed


def flanking_partner(state: D100ZState, me: D100ZCombatant, target: D100ZCombatant) -> str | None:
    """D100Z-10: when the attacker is engaged with the enemy, an ally engaged with
    the same enemy from the opposite side (first by ID). "Each flanker gets +10 to
    attack rolls against that enemy": any attack roll, melee, unarmed or ranged
    (a shot fired from Engaged range), the second attack and the free attack too."""
    if not engaged(state, me, target):
        return None
    min_angle = float(state.settings["flanking_min_angle"])
    for ally in sorted(state.combatants.values(), key=lambda c: c.id):
        if ally.id == me.id or ally.side != me.side or ally.out_of_fight or ally.position is None:
            continue
        if engaged(state, ally, target) and rules.opposite_sides(position(target), position(me), position(ally), min_angle):
            return ally.id
    return None


def resolve_attack(
    decision: Decision,
    attacker_id: str,
    target_id: str,
    weapon: ZWeapon,
    kind: str,
    attack_mods: list[Modifier],
    dodge_mods: list[Modifier],
    dice: Dice,
    *,
    aimed: bool = False,
) -> None:
    """D100Z-04/05/06: roll the attack, let the defender dodge a plain hit, deal damage."""
    state: D100ZState = decision.state  # type: ignore[assignment]
    attacker = state.combatants[attacker_id]
    target = state.combatants[target_id]
    skill = attacker.skill_for(weapon)
    terms = [Modifier(source=f"{SKILL_LABELS[weapon.kind]} skill", rule="D100Z-04", value=skill), *attack_mods]
    roll = percentile_test(dice, purpose=f"{kind.replace('_', ' ')} with {weapon.name}", rule="D100Z-04", modifiers=terms)
    assert roll.target is not None
    outcome = rules.attack_outcome(roll.total, roll.target)
    notes = list(roll.notes)
    details: dict[str, Any] = {**roll.details, "outcome": outcome}
    if outcome == "critical":
        notes.append("critical (<= 10): automatic hit, double damage, no dodge (D100Z-04)")
    elif outcome == "fumble":
        notes.append("90+: automatic miss and a complication; the GM decides what goes wrong (D100Z-04)")
        details["complication"] = True
    if aimed:
        notes.append("aimed shot: +20 and soft cover ignored (D100Z-12)")
    roll = msgspec.structs.replace(roll, success=outcome in ("critical", "hit"), notes=notes, details=details)

    defense: Roll | None = None
    landed = outcome == "critical"
    if outcome == "hit":
        dodge_terms = [Modifier(source="DEX", rule="D100Z-05", value=target.dexterity), *dodge_mods]
        defense = percentile_test(dice, purpose="dodge", rule="D100Z-05", modifiers=dodge_terms)
        assert defense.target is not None
        dodged = rules.dodge_succeeds(defense.total, defense.target)
        dodge_notes = ["90+: the dodge fails (D100Z-05)"] if defense.total >= rules.FUMBLE_AT_LEAST else []
        defense = msgspec.structs.replace(defense, success=dodged, notes=dodge_notes, details={**defense.details, "automatic": "house default: every plain hit is dodged automatically"})
        landed = not dodged
    decision.emit(
        AttackResolved(
            attacker=attacker_id,
            target=target_id,
            weapon=weapon.name,
            roll=roll,
            hit=landed,
            critical=outcome == "critical",
            kind=kind,
            defense=defense,
            details={"outcome": outcome, "dodged": outcome == "hit" and not landed},
        )
    )
    if landed:
        damage = damage_for(state, attacker, target, weapon, critical=outcome == "critical", dice=dice)
        deal_damage(decision, attacker_id, target_id, damage, "D100Z-06")


def damage_for(state: D100ZState, attacker: D100ZCombatant, target: D100ZCombatant, weapon: ZWeapon, *, critical: bool, dice: Dice) -> Roll:
    bonuses: list[Modifier] = []
    if weapon.kind == UNARMED:
        bonuses.append(Modifier(source=f"Brawling {attacker.brawling}", rule="D100Z-07", value=rules.brawling_bonus(attacker.brawling)))
    if weapon.kind in (MELEE, UNARMED) and option_on(state, "str_bonus"):
        bonus = rules.strength_bonus(attacker.strength)
        if bonus:
            bonuses.append(Modifier(source=f"STR {attacker.strength}", rule="D100Z-08", value=bonus))
    return rules.damage_roll(dice, parse_damage(weapon.damage), weapon=weapon.name, bonuses=bonuses, critical=critical, dr=target.dr, armour_name=target.armour_name)


def deal_damage(decision: Decision, source: str, target_id: str, damage: Roll, rule: str) -> None:
    state: D100ZState = decision.state  # type: ignore[assignment]
    target = state.combatants[target_id]
    remaining = target.hp - damage.total
    decision.emit(DamageDealt(target=target_id, source=source, amount=damage.total, roll=damage, rule=rule, remaining=remaining))
    if remaining <= 0 and not target.out_of_fight:
        knock_out(decision, target_id)


def knock_out(decision: Decision, target_id: str) -> None:
    """House default: at 0 HP or less a combatant falls unconscious and is dying."""
    decision.system.down(decision, target_id, "unconscious at 0 HP", rule="house default: 0 HP")
    decision.emit(ConditionApplied(combatant=target_id, condition=UNCONSCIOUS, rule="house default: 0 HP"))
    decision.emit(ConditionApplied(combatant=target_id, condition=DYING, rule="house default: dying"))


# ---------------------------------------------------------------- aimed shot (D100Z-12)


def aimed_shot(system: BaseRuleSystem, decision: Decision, command: D100ZAimedShot, dice: Dice) -> None:
    state: D100ZState = decision.state  # type: ignore[assignment]
    me = state.combatants[command.actor]
    require_option(state, "aimed_shot")
    require(me.moved_m == 0, f"Aimed Shot takes the whole turn and {me.id} has already moved this turn (D100Z-12)")
    require(not me.action_used and not me.attacks, f"Aimed Shot takes the whole turn and {me.id} has already used its action ({me.action_spent_on}) (D100Z-12)")
    target = require_target(state, me, command.target)
    weapon = find_weapon(state, me, command.weapon) if command.weapon else first_ranged(me)
    require(weapon is not None and weapon.kind == RANGED, f"{me.id} needs a ranged weapon to aim")
    assert weapon is not None
    check_reach(state, me, target, weapon)
    decision.emit(
        ActionTaken(
            combatant=me.id,
            action="aimed_shot",
            slot="action",
            rule="D100Z-12",
            details={"target": target.id, "weapon": weapon.name, "whole_turn": True},
        )
    )


# ---------------------------------------------------------------- suppressive fire (D100Z-13)


def suppressive_fire(system: BaseRuleSystem, decision: Decision, command: D100ZSuppressiveFire, dice: Dice) -> None:
    state: D100ZState = decision.state  # type: ignore[assignment]
    me = state.combatants[command.actor]
    weapon, caught = suppressive_fire_plan(state, me, command)
    origin = position(me)
    decision.emit(
        ActionTaken(
            combatant=me.id,
            action="suppressive_fire",
            slot="action",
            rule="D100Z-13",
            details={"weapon": weapon.name, "zone": command.zone, "caught": caught},
        )
    )
    code = parse_damage(weapon.damage)
    for target_id in caught:
        target = state.combatants[target_id]
        roll = percentile_test(
            dice,
            purpose="DEX against suppressive fire",
            rule="D100Z-13",
            modifiers=[Modifier(source="DEX", rule="D100Z-13", value=target.dexterity)],
        )
        assert roll.target is not None
        passed = rules.dodge_succeeds(roll.total, roll.target)
        roll = msgspec.structs.replace(roll, success=passed)
        decision.emit(
            TestRolled(
                combatant=target_id,
                test="suppressive_fire",
                roll=roll,
                success=passed,
                details={"by": me.id, "zone": command.zone, "effect": "pinned in the zone" if passed else "takes the weapon's base damage"},
            )
        )
        if passed:
            decision.emit(
                ConditionApplied(
                    combatant=target_id,
                    condition=SUPPRESSED,
                    rule="D100Z-13",
                    until=f"end_of_turn:{target_id}",
                    details={"by": me.id, "origin": list(origin), "zone": command.zone},
                )
            )
        else:
            damage = rules.damage_roll(
                dice, code, weapon=weapon.name, bonuses=[], critical=False, dr=target.dr,
                armour_name=target.armour_name, purpose="suppressive fire: base damage", rule="D100Z-13",
            )
            deal_damage(decision, me.id, target_id, damage, "D100Z-13")


def suppressive_fire_plan(state: D100ZState, me: D100ZCombatant, command: D100ZSuppressiveFire) -> tuple[ZWeapon, list[str]]:
    """The checks of D100Z-13 before any roll: the weapon fired and who the zone's fire catches."""
    require_option(state, "suppressive_fire")
    require(command.zone in rules.ZONE_NAMES, f"unknown zone {command.zone!r}; zones: {', '.join(rules.ZONE_NAMES)}")
    require(not me.attacks, f"{me.id} has already attacked this turn; Suppressive Fire takes the action")
    require_economy(me, "Suppressive Fire")
    weapon = find_weapon(state, me, command.weapon) if command.weapon else first_ranged(me)
    require(weapon is not None and weapon.kind == RANGED, f"{me.id} needs a ranged weapon for Suppressive Fire")
    assert weapon is not None
    caught = suppressed_targets(state, me, weapon, command.zone)
    require(caught, f"no one to suppress in the {command.zone} zone within range and sight of {weapon.name}")
    return weapon, caught


def in_fire_zone(state: D100ZState, grid: Grid, here: Square, weapon: ZWeapon, zone: str, there: Square) -> bool:
    """D100Z-13 with the house defaults: ``there`` is in ``zone`` around the
    shooter at ``here``, within the weapon's range and in the shooter's sight."""
    away = metres(state, here, there)
    return rules.zone_of(away) == zone and away <= weapon.range_m and grid.line_of_sight(here, there)


def suppressive_fire_area(state: D100ZState, command: D100ZSuppressiveFire) -> AreaPreview:
    """D100Z-13 for the table: the squares of the zone a Suppressive Fire
    would sweep (in the weapon's range and the shooter's sight) and everyone it
    would catch (`suppressed_targets`), allies flagged; the action's own checks,
    without the DEX tests."""
    me = state.combatants[command.actor]
    weapon, caught = suppressive_fire_plan(state, me, command)
    here = position(me)
    grid = Grid(state.terrain)
    squares = [(x, y) for y in range(state.terrain.height) for x in range(state.terrain.width)
               if (x, y) != here and (x, y) not in grid.walls and in_fire_zone(state, grid, here, weapon, command.zone, (x, y))]
    relation = {cid: "ally" if state.combatants[cid].side == me.side else "enemy" for cid in caught}
    notes = [f"each caught rolls DEX: a failure takes {weapon.name}'s base damage ({weapon.damage}), a success is Suppressed"]
    return AreaPreview(
        command="D100ZSuppressiveFire", shape="zone", origin=here, squares=squares, rule="D100Z-13",
        caught=[CaughtInArea(combatant=cid, square=position(state.combatants[cid]), relation=relation[cid]) for cid in caught],
        allies_caught=[cid for cid in caught if relation[cid] == "ally"], notes=notes,
    )


def suppressed_targets(state: D100ZState, me: D100ZCombatant, weapon: ZWeapon, zone: str) -> list[str]:
    """D100Z-13 "All creatures in that zone": every standing combatant but the
    shooter in ``zone`` (by distance from the shooter), allies and those behind
    heavy cover included (heavy cover only stops direct targeting, D100Z-09).
    House defaults: the fire reaches only as far as the weapon's range and
    where the shooter has a line of sight. House rules (settings):
    ``suppressive_fire_hits_allies`` false spares the shooter's allies;
    ``heavy_cover_shields_from_suppressive_fire`` true (with the cover option)
    spares those behind heavy cover."""
    grid = Grid(state.terrain)
    here = position(me)
    allies_too = bool(state.settings["suppressive_fire_hits_allies"])
    heavy_shields = option_on(state, "cover") and bool(state.settings["heavy_cover_shields_from_suppressive_fire"])
    caught = []
    for other in area_fire_candidates(state, me, allies_too=allies_too):
        there = position(other)
        if not in_fire_zone(state, grid, here, weapon, zone, there):
            continue
        if heavy_shields:
            cover = rules.cover_between(grid.cover_at, here, there)
            if cover is not None and cover.level == "heavy":
                continue
        caught.append(other.id)
    return sorted(caught)


# ---------------------------------------------------------------- first aid (D100Z-14)


def first_aid(system: BaseRuleSystem, decision: Decision, command: D100ZFirstAid, dice: Dice) -> None:
    state: D100ZState = decision.state  # type: ignore[assignment]
    me = state.combatants[command.actor]
    patient = state.combatants.get(command.target)
    require(patient is not None, f"unknown target {command.target!r}")
    assert patient is not None
    require(patient.side == me.side, f"{patient.id} is not an ally of {me.id}")
    require(DEAD not in patient.conditions, f"{patient.id} is dead")
    if patient.id != me.id:
        away = between(state, me, patient)
        require(rules.zone_of(away) == "engaged", f"{patient.id} is {away:g} m away; first aid needs the patient Engaged (0-2 m)")
    require(not patient.first_aid_received, f"{patient.id} has already received first aid this combat (D100Z-14)")
    require(patient.out_of_fight or patient.hp < patient.max_hp, f"{patient.id} is not hurt")
    require_economy(me, "first aid")
    decision.emit(ActionTaken(combatant=me.id, action="first_aid", slot="action", rule="D100Z-14", details={"target": patient.id}))

    roll = percentile_test(dice, purpose="first aid", rule="D100Z-14", modifiers=[Modifier(source="INT", rule="D100Z-14", value=me.intelligence)])
    critical = roll.total <= rules.CRITICAL_AT_MOST
    success = bool(roll.success) or critical
    notes = ["critical (<= 10): stabilises an unconscious ally (D100Z-14)"] if critical else []
    roll = msgspec.structs.replace(roll, success=success, notes=notes, details={**roll.details, "critical": critical})
    heal: Roll | None = None
    healed = 0
    if success:
        bonus = rules.first_aid_skill_modifier(me.medicine)
        die = dice.roll(10)
        amount = max(0, die.face + bonus)
        healed = max(0, min(amount, patient.max_hp - patient.hp))
        heal = Roll(
            purpose="first aid healing",
            rule="D100Z-14",
            dice=[die],
            modifiers=[
                Modifier(source=f"Medicine {me.medicine}: floor((skill - 50) / 10)", rule="D100Z-14", value=bonus),
                *never_below_zero(die.face + bonus, "house default: first aid", "healing"),
            ],
            total=amount,
            details={"healed": healed, "capped_at_max_hp": healed < amount},
        )
    hp = patient.hp + healed
    decision.emit(D100ZFirstAidGiven(healer=me.id, target=patient.id, roll=roll, heal=heal, healed=healed, hp=hp, critical=critical))
    if critical and DYING in patient.conditions:
        decision.emit(ConditionRemoved(combatant=patient.id, condition=DYING, reason="stabilised by a critical first aid roll", rule="D100Z-14"))
        decision.emit(ConditionApplied(combatant=patient.id, condition=STABILISED, rule="D100Z-14"))
    if patient.out_of_fight and hp >= 1:
        for condition in (UNCONSCIOUS, DYING, STABILISED):
            if condition in decision.state.combatants[patient.id].conditions:
                decision.emit(ConditionRemoved(combatant=patient.id, condition=condition, reason="came to", rule="D100Z-14"))
        decision.emit(D100ZRevived(combatant=patient.id, hp=hp, reason=f"healed to {hp} HP by {me.id}"))


# ---------------------------------------------------------------- dying (house default)


def bleed(decision: Decision) -> None:
    """House default: at the start of each round every dying combatant loses
    ``dying_hp_loss_per_round`` HP; at ``death_at_hp`` or below it is dead."""
    state: D100ZState = decision.state  # type: ignore[assignment]
    loss = int(state.settings["dying_hp_loss_per_round"])
    if loss <= 0:
        return
    death_at = int(state.settings["death_at_hp"])
    for combatant_id in sorted(state.combatants):
        combatant = state.combatants[combatant_id]
        if DYING not in combatant.conditions:
            continue
        hp = combatant.hp - loss
        decision.emit(StateAdjusted(combatant=combatant_id, changes={"hp": hp}, reason=f"dying: loses {loss} HP", rule="house default: dying"))
        if hp <= death_at:
            decision.emit(ConditionRemoved(combatant=combatant_id, condition=DYING, reason="died", rule="house default: dying"))
            decision.emit(ConditionApplied(combatant=combatant_id, condition=DEAD, rule="house default: dying"))


# A turn's actions, by command (the system's decide_action dispatches on these).
ACTIONS = {
    D100ZMove: move,
    D100ZAttack: attack,
    D100ZAimedShot: aimed_shot,
    D100ZSuppressiveFire: suppressive_fire,
    D100ZFirstAid: first_aid,
}
