"""The d100-zones AI: a deterministic function of the state (no dice, no randomness).

In a free-attack window it takes its free attack. On its turn it:
1. makes a second attack (multi-attack option) after its first one, when the target still stands;
2. gives first aid to an unconscious, dying ally beside it when no enemy is engaged with it;
3. attacks the weakest enemy engaged with it, with its melee weapon or fists;
4. otherwise shoots: Suppressive Fire into a zone holding three or more enemies
   and none of its allies (when that option is on), an Aimed Shot when its chance is poor and it has
   not moved, or a plain attack on the weakest enemy it can hit;
5. otherwise moves towards a square to attack from: up to one zone for free,
   or up to two zones (spending the action) when the way is longer.
It returns None when it has nothing useful left, and the driver ends its turn.
"""

from __future__ import annotations

from firelane.engine.core import BaseRuleSystem, Rejected, next_command_id
from firelane.engine.grid import Grid, Square, distance
from firelane.engine.systems.d100_zones import actions, rules
from firelane.engine.systems.d100_zones.state import MELEE, UNARMED, D100ZCombatant, D100ZState, ZWeapon
from firelane.engine.occupancy import trim_to_free_end
from firelane.engine.systems.percentile import body_squares, occupied_squares, step_path
from firelane.engine.systems.d100_zones.schemas import (
    D100ZAimedShot,
    D100ZAttack,
    D100ZFirstAid,
    D100ZMove,
    D100ZSuppressiveFire,
)
from firelane.events.schemas import ClaimReaction, Command

SUPPRESS_WHEN_CAUGHT = 3
AIM_WHEN_CHANCE_AT_MOST = 30


def choose(system: BaseRuleSystem, state: D100ZState, combatant_id: str) -> Command | None:
    me = state.combatants[combatant_id]
    command_id = next_command_id(state, combatant_id)
    if state.window is not None:
        reactor = state.window.eligible(combatant_id)
        if reactor is None or state.window.answered(combatant_id) or actions.FREE_ATTACK not in reactor.reactions:
            return None
        return ClaimReaction(command_id=command_id, actor=combatant_id, window=state.window.window, reaction=actions.FREE_ATTACK)
    if state.active != combatant_id or me.out_of_fight or me.position is None:
        return None
    enemies = _enemies(state, me)
    if not enemies:
        return None

    if me.attacks:
        return _second_attack(state, me, command_id)
    if me.action_used:
        return None

    engaged_foes = [e for e in enemies if actions.engaged(state, me, e)]
    if not engaged_foes:
        patient = _patient(state, me)
        if patient is not None:
            return D100ZFirstAid(command_id=command_id, actor=me.id, target=patient.id)
    if engaged_foes:
        weapon = actions.close_weapon(state, me)
        return D100ZAttack(command_id=command_id, actor=me.id, target=engaged_foes[0].id, weapon=weapon.name)

    gun = actions.first_ranged(me)
    if gun is not None:
        shot = _shoot(state, me, gun, enemies, command_id)
        if shot is not None:
            return shot

    if me.moved_m == 0 and not me.aimed_this_turn:
        return _approach(state, me, gun, enemies, command_id)
    return None


def _enemies(state: D100ZState, me: D100ZCombatant) -> list[D100ZCombatant]:
    """Standing enemies, weakest (fewest HP) first, then nearest, then by ID."""
    here = actions.position(me)
    return sorted(actions.enemies_of(state, me), key=lambda c: (c.hp, distance(here, actions.position(c)), c.id))


def _can_attack(state: D100ZState, me: D100ZCombatant, target: D100ZCombatant, weapon: ZWeapon) -> bool:
    try:
        actions.check_reach(state, me, target, weapon)
    except Rejected:
        return False
    return True


def _second_attack(state: D100ZState, me: D100ZCombatant, command_id: str) -> Command | None:
    if len(me.attacks) >= 2 or not actions.option_on(state, "multi_attack"):
        return None
    first = me.weapon(me.attacks[0]) or actions.unarmed_weapon(state)
    # A one-handed weapon in the other hand attacks at -10 instead of -20.
    offhand = [w for w in me.weapons if w.name != first.name and w.kind == first.kind and w.hands == 1 and first.hands == 1 and w.kind != UNARMED]
    for weapon in [*offhand, first]:
        for target in _enemies(state, me):
            if _can_attack(state, me, target, weapon):
                return D100ZAttack(command_id=command_id, actor=me.id, target=target.id, weapon=weapon.name)
    return None


def _patient(state: D100ZState, me: D100ZCombatant) -> D100ZCombatant | None:
    for ally in sorted(state.combatants.values(), key=lambda c: c.id):
        if (
            ally.side == me.side and ally.id != me.id and ally.out_of_fight and actions.DYING in ally.conditions
            and not ally.first_aid_received and ally.position is not None and actions.engaged(state, me, ally)
        ):
            return ally
    return None


def _shoot(state: D100ZState, me: D100ZCombatant, gun: ZWeapon, enemies: list[D100ZCombatant], command_id: str) -> Command | None:
    targets = [e for e in enemies if _can_attack(state, me, e, gun)]
    if not targets:
        return None
    if actions.option_on(state, "suppressive_fire"):
        for zone in ("close", "far", "distant"):
            caught = [state.combatants[cid] for cid in actions.suppressed_targets(state, me, gun, zone)]
            # Everyone in the zone rolls DEX (D100Z-13), so never a zone with an ally in it.
            if all(c.side != me.side for c in caught) and len(caught) >= SUPPRESS_WHEN_CAUGHT:
                return D100ZSuppressiveFire(command_id=command_id, actor=me.id, zone=zone, weapon=gun.name)
    target = targets[0]
    attack_mods, _, aimed = actions.targeting_modifiers(state, me, target, gun)
    chance = me.ranged + sum(m.value for m in attack_mods)
    if actions.option_on(state, "aimed_shot") and not aimed and me.moved_m == 0 and chance <= AIM_WHEN_CHANCE_AT_MOST:
        return D100ZAimedShot(command_id=command_id, actor=me.id, target=target.id, weapon=gun.name)
    return D100ZAttack(command_id=command_id, actor=me.id, target=target.id, weapon=gun.name)


def _approach(state: D100ZState, me: D100ZCombatant, gun: ZWeapon | None, enemies: list[D100ZCombatant], command_id: str) -> Command | None:
    grid = Grid(state.terrain)
    square_m = float(state.settings["square_metres"])
    closing_in = gun is None or (any(w.kind == MELEE for w in me.weapons) and me.melee > me.ranged)
    foes = [actions.position(e) for e in enemies]

    if closing_in:
        def goal(square: Square) -> bool:
            return any(rules.zone_of(distance(square, foe) * square_m) == "engaged" for foe in foes)
    else:
        assert gun is not None

        def goal(square: Square) -> bool:
            return any(distance(square, foe) * square_m <= gun.range_m and grid.line_of_sight(square, foe) for foe in foes)

    path = step_path(grid, actions.position(me), goal, occupied_squares(state, ignore=[me.id]), toward=foes[0])
    if not path:
        return None
    free = int(rules.FREE_MOVE_M // square_m)
    most = int(rules.MAX_MOVE_M // square_m)
    # The whole way if it fits the free move; else as far as two zones go (spending
    # the action), or just the free move if the action cannot be spent.
    lengths = [len(path)] if len(path) <= free else [min(len(path), most), free]
    for steps in lengths:
        candidate = trim_to_free_end(path[:steps], body_squares(state, ignore=[me.id]))  # issue 19: no move ends on a body
        if not candidate:
            continue
        try:
            actions.plan_move(state, me, candidate)
        except Rejected:
            continue
        return D100ZMove(command_id=command_id, actor=me.id, path=candidate)
    return None

