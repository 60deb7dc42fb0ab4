"""The d100-zones AI: a deterministic function of the state (no dice, no randomness).

It picks from the options a player sees (`options`, issue 9):

* in a free-attack window it takes the listed free attack (one per close
  weapon) worth most (D100Z-15);
* on its turn, after its first attack, the listed second attack worth most
  (multi-attack option, D100Z-11);
* first aid (the listed choice) to an unconscious, dying ally beside it when
  no enemy is engaged with it (D100Z-14);
* otherwise the listed attack, Suppressive Fire or Aimed Shot worth most:
  an attack's worth is its exact chance to land (options: critical, plain hit
  less the dodge), times the share of the target's HP the damage is expected
  to take (a critical doubles it, DR comes off; D100Z-04..08), plus a bonus for
  dropping it, weighed by how much harm the target does a turn. Suppressive
  Fire is worth the base damage each enemy caught takes when its DEX test
  fails (never fired into a zone with an ally in it, D100Z-13); an Aimed Shot
  half the worth of next turn's attack at +20 (D100Z-12);
* otherwise, before it has moved, the move onto the shortest way to a square
  to attack from: up to one zone for free, or two zones (spending the action)
  when the way is longer.

The options are computed once per decision and only the parts it uses: the
attacks and actions each turn, and the move only for the one destination the
path search picks (`options.move_option`, the same builder `move_options`
runs for every reachable square: listing all of them costs some 500 paths a
decision, and the AI needs one). Attacks on allies (listed, flagged
`options.ALLY_NOTE`) are never taken.
It returns None when it has nothing useful left, and the driver ends its turn.
"""

from __future__ import annotations

from typing import Any

from firelane.engine.core import BaseRuleSystem, Rejected, next_command_id
from firelane.engine.grid import Grid, Square, distance
from firelane.engine.routes import route
from firelane.engine.systems.d100_zones import actions, options, rules
from firelane.engine.systems.d100_zones.state import MELEE, RANGED, UNARMED, D100ZCombatant, D100ZState, ZWeapon
from firelane.engine.occupancy import trim_to_free_end
from firelane.engine.systems.percentile import body_squares, occupied_squares, step_path
from firelane.engine.systems.percentile.damage import hit_worth, mean_damage
from firelane.engine.systems.percentile.probe import as_command
from firelane.events.options_schemas import AttackOption
from firelane.events.schemas import Command

# Dropping an enemy is worth this much on top of the share of its HP taken.
DOWN_BONUS = 1.0
# Below this worth an attack is not worth making.
WORTH_ATTACKING = 0.001


def choose(system: BaseRuleSystem, state: D100ZState, combatant_id: str) -> Command | None:
    me = state.combatants[combatant_id]
    command_id = next_command_id(state, combatant_id)
    if state.window is not None:
        return _free_attack(system, state, me, command_id)
    if state.active != combatant_id or me.out_of_fight or me.position is None:
        return None
    enemies = _enemies(state, me)
    if not enemies:
        return None

    if me.attacks:
        best = _best(state, me, options.attack_options(state, me), [])
        return as_command(system, best, command_id) if best is not None else None
    if me.action_used:
        return None

    listed_actions = options.other_actions(system, state, me)
    engaged_foes = [e for e in enemies if actions.engaged(state, me, e)]
    if not engaged_foes:
        patient = _patient(state, me)
        if patient is not None:
            for action in listed_actions:
                for choice in action.choices:
                    if action.action == "D100ZFirstAid" and choice.command["target"] == patient.id:
                        return as_command(system, choice.command, command_id)
    best = _best(state, me, options.attack_options(state, me), listed_actions)
    if best is not None:
        return as_command(system, best, command_id)
    if me.moved_m == 0 and not me.aimed_this_turn:
        move = _approach(state, me, actions.first_ranged(me), enemies)
        return as_command(system, move, command_id) if move is not None else None
    return None


def _enemies(state: D100ZState, me: D100ZCombatant) -> list[D100ZCombatant]:
    """Standing enemies, weakest (fewest HP) first, then nearest, then by ID."""
    here = actions.position(me)
    return sorted(actions.enemies_of(state, me), key=lambda c: (c.hp, distance(here, actions.position(c)), c.id))


def _patient(state: D100ZState, me: D100ZCombatant) -> D100ZCombatant | None:
    for ally in sorted(state.combatants.values(), key=lambda c: c.id):
        if (
            ally.side == me.side and ally.id != me.id and ally.out_of_fight and actions.DYING in ally.conditions
            and not ally.first_aid_received and ally.position is not None and actions.engaged(state, me, ally)
        ):
            return ally
    return None


# ---------------------------------------------------------------- scoring


def threat(target: D100ZCombatant) -> float:
    """How much harm ``target`` does a turn, roughly: its best weapon's mean damage times its skill with it."""
    best = max((mean_damage(w.damage) * min(95, max(5, target.skill_for(w))) / 100 for w in target.weapons), default=0.0)
    return max(best, 1.0)


def damage_bonus(state: D100ZState, attacker: D100ZCombatant, weapon: ZWeapon) -> int:
    """D100Z-07/08: Brawling and STR bonuses, as `actions.damage_for` adds them."""
    bonus = rules.brawling_bonus(attacker.brawling) if weapon.kind == UNARMED else 0
    if weapon.kind in (MELEE, UNARMED) and actions.option_on(state, "str_bonus"):
        bonus += rules.strength_bonus(attacker.strength)
    return bonus


def landing_worth(state: D100ZState, attacker: D100ZCombatant, target: D100ZCombatant, weapon: ZWeapon,
                  attack_target: int, landing: float) -> float:
    """An attack at ``attack_target`` that lands with ``landing``: a critical
    (01-10, no dodge) doubles the damage, the rest of ``landing`` is plain hits."""
    critical = options.outcome_chance(attack_target, "critical")
    flat = damage_bonus(state, attacker, weapon)
    plain = hit_worth(weapon.damage, flat, target.hp, DOWN_BONUS, 1, target.dr)
    doubled = hit_worth(weapon.damage, flat, target.hp, DOWN_BONUS, 2, target.dr)
    return threat(target) * (critical * doubled + max(0.0, landing - critical) * plain)


def attack_worth(state: D100ZState, me: D100ZCombatant, option: AttackOption) -> float:
    target = state.combatants[option.target]
    weapon = actions.find_weapon(state, me, option.weapon)
    assert option.target_number is not None
    return landing_worth(state, me, target, weapon, option.target_number, option.hit_chance)


def suppressive_worth(state: D100ZState, me: D100ZCombatant, command: dict[str, Any]) -> float:
    """D100Z-13: each enemy caught takes the weapon's base damage when its DEX test fails; never a zone with an ally in it."""
    weapon = actions.find_weapon(state, me, command["weapon"])
    caught = [state.combatants[cid] for cid in actions.suppressed_targets(state, me, weapon, command["zone"])]
    if any(c.side == me.side for c in caught):
        return 0.0
    return sum(threat(c) * (1 - options.dodge_chance(c.dexterity)) * hit_worth(weapon.damage, 0, c.hp, DOWN_BONUS, 1, c.dr)
               for c in caught)


def aimed_worth(state: D100ZState, me: D100ZCombatant, command: dict[str, Any]) -> float:
    """D100Z-12: the whole turn now for +20 on next turn's attack: half that attack's worth a turn."""
    if me.moved_m:
        return 0.0
    target = state.combatants[command["target"]]
    weapon = actions.find_weapon(state, me, command["weapon"])
    terms, dodge = options.attack_terms(state, me, target, weapon, [])
    number = sum(t.value for t in terms) + 20
    return landing_worth(state, me, target, weapon, number, options.landing_chance(number, sum(d.value for d in dodge))) / 2


def _best(state: D100ZState, me: D100ZCombatant, attacks: list[AttackOption], listed_actions: list[Any]) -> dict[str, Any] | None:
    scored: list[tuple[float, int, dict[str, Any]]] = []
    for attack in attacks:
        if options.ALLY_NOTE in attack.notes:
            continue
        scored.append((attack_worth(state, me, attack), -len(scored), attack.command))
    for action in listed_actions:
        for choice in action.choices:
            if action.action == "D100ZSuppressiveFire":
                scored.append((suppressive_worth(state, me, choice.command), -len(scored), choice.command))
            elif action.action == "D100ZAimedShot":
                scored.append((aimed_worth(state, me, choice.command), -len(scored), choice.command))
    if not scored:
        return None
    worth, _order, command = max(scored, key=lambda item: (item[0], item[1]))
    return command if worth >= WORTH_ATTACKING else None


# ---------------------------------------------------------------- the free-attack window


def _free_attack(system: BaseRuleSystem, state: D100ZState, me: D100ZCombatant, command_id: str) -> Command | None:
    window = state.window
    assert window is not None
    if window.answered(me.id):
        return None
    mover = state.combatants[window.actor]
    scored = []
    for reaction in options.reaction_options(state, window, me.id):
        for index, choice in enumerate(reaction.choices):
            weapon = actions.find_weapon(state, me, choice.command["options"]["weapon"])
            terms, _dodge = options.attack_terms(state, me, mover, weapon, [])
            worth = landing_worth(state, me, mover, weapon, sum(t.value for t in terms), choice.hit_chance or 0.0)
            scored.append((worth, -index, choice.command))
    if not scored:
        return None
    return as_command(system, max(scored, key=lambda item: (item[0], item[1]))[2], command_id)


# ---------------------------------------------------------------- moving


def _approach(state: D100ZState, me: D100ZCombatant, gun: ZWeapon | None, enemies: list[D100ZCombatant]) -> dict[str, Any] | None:
    """The move (as `options.move_option` lists it) that ends where the free move,
    or two zones spending the action, along the shortest way to a square to attack from ends."""
    grid = Grid(state.terrain)
    square_m = float(state.settings["square_metres"])
    closing_in = gun is None or (any(w.kind == MELEE for w in me.weapons) and me.melee > me.ranged)
    foes = [actions.position(e) for e in enemies]

    if closing_in:
        def goal(square: Square) -> bool:
            return any(rules.zone_of(distance(square, foe) * square_m) == "engaged" for foe in foes)
    else:
        assert gun is not None and gun.kind == RANGED

        def goal(square: Square) -> bool:
            return any(distance(square, foe) * square_m <= gun.range_m and grid.line_of_sight(square, foe) for foe in foes)

    blocked = occupied_squares(state, ignore=[me.id])
    lying = body_squares(state, ignore=[me.id])  # passed, never ended on
    path = step_path(grid, actions.position(me), lambda square: square not in lying and goal(square), blocked, toward=foes[0])
    if not path:
        return None
    free = int(rules.FREE_MOVE_M // square_m)
    most = int(rules.MAX_MOVE_M // square_m)
    lengths = [len(path)] if len(path) <= free else [min(len(path), most), free]
    for steps in lengths:
        walked = trim_to_free_end(path[:steps], lying)  # never ending on a body
        if not walked:
            continue
        steps = len(walked)
        end = walked[-1]
        # The engine's path to ``end`` is no longer than the searched one.
        walk = route(grid, actions.position(me), end, [], blocked, min(steps, options.move_steps(state, me)))
        if isinstance(walk, str):
            continue
        try:
            option = options.move_option(state, me, end, walk)
        except Rejected:
            option = None
        if option is not None:
            return option.command
    return None
