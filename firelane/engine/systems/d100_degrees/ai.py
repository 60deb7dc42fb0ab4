"""The d100-degrees AI: a deterministic function of the state (no dice, no randomness).

It picks from the options a player sees (`options`, issue 9), computed once
per decision:

* in an Evasion window it claims the listed Evasion with the best chance;
* on its turn it scores every listed attack on an enemy (each weapon, RoF,
  Basic or All Out, every chain of targets, D100D-04..07) and every
  Suppressing Fire choice (D100D-09) by the damage it is expected to deal per
  Half Action it costs: over the d100 faces (`options.chain_outcomes`: which
  links are hit, the degrees left for damage, jams), times the chance each
  target fails its best Evasion, the weapon's mean damage plus the leftover
  degrees times its Multiplier, less armour, capped by the wounds the target
  has left, with a bonus for taking it down. It takes the best, when that is
  worth anything;
* otherwise it clears a jam (when it has no gun left to fire), or takes the
  listed move onto the shortest way to a square it can attack from (the way
  `step_path` finds; the destination must be a listed move).

Not from the options: nothing (a move's destination is chosen with a path
search the options do not make, then looked up among the listed moves).
Attacks on allies (listed, flagged `options.ALLY_NOTE`) are never taken.
It returns None when it has nothing useful left, and the driver ends its turn.
"""

from __future__ import annotations

from typing import Any

from firelane.engine.core import BaseRuleSystem, TurnOptions, next_command_id
from firelane.engine.grid import Grid, Square
from firelane.engine.systems.d100_degrees import actions, options, reactions, rules
from firelane.engine.systems.d100_degrees.state import D100DCombatant, D100DState, Weapon
from firelane.engine.occupancy import trim_to_free_end
from firelane.engine.systems.percentile import body_squares, chance_at_most, occupied_squares, position, step_path
from firelane.engine.systems.percentile.damage import hit_worth, mean_damage
from firelane.engine.systems.percentile.probe import as_command
from firelane.events.options_schemas import AttackOption, Choice
from firelane.events.schemas import Command

# Damage is worth the share of the target's remaining wounds it takes away;
# taking the target down is worth this much more (one enemy fewer shooting back).
DOWN_BONUS = 1.0
# A Pinned enemy (D100D-09) is worth this share of an enemy's wounds.
PIN_VALUE = 0.15
# Below this worth per Half Action an attack is not worth the ammunition.
WORTH_ATTACKING = 0.002


def choose(system: BaseRuleSystem, state: D100DState, combatant_id: str) -> Command | None:
    me = state.combatants[combatant_id]
    command_id = next_command_id(state, combatant_id)
    if state.window is not None:
        return _evade(system, state, me, command_id)
    if state.active != combatant_id or me.out_of_fight or me.position is None or me.half_actions_used >= 2:
        return None
    if not options.enemies(state, me):
        return None
    # The options of this decision, but the moves: those only when it comes to moving.
    turn = TurnOptions(attacks=options.melee_options(state, me) + options.ranged_options(state, me),
                       actions=options.other_actions(state, me))
    best = _best_attack(state, me, turn)
    if best is not None:
        return as_command(system, best, command_id)
    if me.jammed and _usable_gun(me) is None:
        for action in turn.actions:
            if action.action == "D100DClearJam":
                return as_command(system, action.choices[0].command, command_id)
    turn.moves = options.move_options(state, me)
    move = _approach(state, me, turn)
    return as_command(system, move, command_id) if move is not None else None


def _evade(system: BaseRuleSystem, state: D100DState, me: D100DCombatant, command_id: str) -> Command | None:
    window = state.window
    assert window is not None
    if window.answered(me.id):
        return None
    listed = [(option.choices[0].hit_chance or 0.0, option.reaction, option.choices[0].command)
              for option in options.reaction_options(state, window, me.id) if option.choices]
    if not listed:
        return None
    _chance, _reaction, command = max(listed, key=lambda item: (item[0], item[1]))
    return as_command(system, command, command_id)


# ---------------------------------------------------------------- scoring


def evade_chance(target: D100DCombatant, kind: str) -> float:
    offered = reactions.evasions_for(target, kind)
    return max((options.evasion_chance(target, r) for r in offered), default=0.0)


def threat(target: D100DCombatant) -> float:
    """How much harm ``target`` does a turn, roughly: its best weapon's mean
    damage times its chance with it (and two shots or blows a turn)."""
    best = 0.0
    for weapon in target.weapons:
        mean = mean_damage(weapon.damage)
        skill = target.ballistic_skill + (5 * weapon.rof if weapon.automatic else 0) if weapon.kind == "ranged" else target.weapon_skill
        best = max(best, mean * min(95, max(5, skill)) / 100 * (1 + min(weapon.rof, 3) / 3 if weapon.kind == "ranged" else 1))
    return max(best, 1.0)


def hit_value(state: D100DState, weapon: Weapon, target: D100DCombatant, leftover: int, threats: dict[str, float] | None = None) -> float:
    armour = target.armour if state.settings["armour_reduces_damage"] else 0
    harm = threats[target.id] if threats is not None and target.id in threats else threat(target)
    return harm * hit_worth(weapon.damage, leftover * weapon.multiplier - armour, target.wounds, DOWN_BONUS)


def attack_value(state: D100DState, me: D100DCombatant, option: AttackOption, threats: dict[str, float] | None = None) -> float:
    """Expected worth of a listed attack (see the module doc)."""
    weapon = me.weapon(option.weapon)
    assert weapon is not None and option.target_number is not None
    targets = [state.combatants[option.target], *(state.combatants[str(t)] for t in option.command.get("extra", []))]
    rof = option.command.get("rof") if weapon.kind == "ranged" else None
    outcomes = options.chain_outcomes(option.target_number, rof, bool(state.settings["jam_misses"]),
                                      state.settings["degrees_formula"], len(targets) - 1)
    evades = [evade_chance(t, weapon.kind) for t in targets]
    total = 0.0
    for hit, left, chance in outcomes:
        for index in range(hit + 1):
            total += chance * (1 - evades[index]) * hit_value(state, weapon, targets[index], left, threats)
    return total


def suppressing_value(state: D100DState, me: D100DCombatant, choice: Choice, threats: dict[str, float] | None = None,
                      zones: dict[tuple[str, tuple[int, int]], list[str]] | None = None) -> float:
    """D100D-09: one random hit in the killzone per degree (up to RoF), and the
    Willpower tests that may Pin everyone caught (an ally caught counts against).
    ``threats`` and ``zones`` (killzones by weapon and square): what one decision already knows."""
    command = choice.command
    weapon = me.weapon(command["weapon"])
    assert weapon is not None
    toward = (int(command["toward"][0]), int(command["toward"][1]))
    zones = {} if zones is None else zones
    if (weapon.name, toward) not in zones:
        zones[(weapon.name, toward)] = actions.killzone(state, me, weapon, toward)
    caught = [state.combatants[cid] for cid in zones[(weapon.name, toward)]]
    if not caught:
        return 0.0
    target = me.ballistic_skill + rules.DIFFICULTIES["hard"] + sum(m.value for m in actions.automatic_modifiers(weapon, int(command["rof"]), "")
                                                                   + actions.pinned_modifiers(state, me))
    rof = int(command["rof"])
    outcomes = options.chain_outcomes(target, rof, bool(state.settings["jam_misses"]), state.settings["degrees_formula"], 0)
    side = [1.0 if c.side != me.side else -1.0 for c in caught]
    value = 0.0
    for _hit, left, chance in outcomes:
        won = left + 1
        hits = min(won, rof)
        per_hit = sum(s * (1 - evade_chance(c, "ranged")) * hit_value(state, weapon, c, won - hits, threats)
                      for s, c in zip(side, caught, strict=True)) / len(caught)
        value += chance * hits * per_hit
    success = chance_at_most(target)
    for s, c in zip(side, caught, strict=True):
        pinned = success * (1 - chance_at_most(c.willpower - 20)) + (1 - success) * (1 - chance_at_most(c.willpower - 10))
        value += s * pinned * PIN_VALUE
    return value


def _best_attack(state: D100DState, me: D100DCombatant, turn: TurnOptions) -> dict[str, Any] | None:
    scored: list[tuple[float, int, dict[str, Any]]] = []
    threats = {c.id: threat(c) for c in state.combatants.values() if not c.out_of_fight}
    zones: dict[tuple[str, tuple[int, int]], list[str]] = {}
    for index, attack in enumerate(turn.attacks):
        if options.ALLY_NOTE in attack.notes:
            continue
        halves = 2 if attack.mode == "all_out_attack" else 1
        scored.append((attack_value(state, me, attack, threats) / halves, -index, attack.command))
    for action in turn.actions:
        if action.action == "D100DSuppressingFire":
            for index, choice in enumerate(action.choices):
                scored.append((suppressing_value(state, me, choice, threats, zones) / 2, -(len(turn.attacks) + index), choice.command))
    if not scored:
        return None
    value, _order, command = max(scored, key=lambda item: (item[0], item[1]))
    return command if value >= WORTH_ATTACKING else None


# ---------------------------------------------------------------- moving


def _usable_gun(me: D100DCombatant) -> Weapon | None:
    for weapon in me.weapons:
        if weapon.kind == "ranged" and weapon.name not in me.jammed:
            return weapon
    return None


def _approach(state: D100DState, me: D100DCombatant, turn: TurnOptions) -> dict[str, Any] | None:
    """The listed move that ends where a Half Action's worth of the shortest way
    to a square to attack from ends."""
    gun = _usable_gun(me)
    weapon = gun if gun is not None else me.weapon(None, "melee")
    grid = Grid(state.terrain)
    here = position(me)
    foes = [position(e) for e in sorted(options.enemies(state, me), key=lambda c: (c.wounds, max(abs(position(c)[0] - here[0]), abs(position(c)[1] - here[1])), c.id))]
    if weapon is not None and weapon.kind == "ranged":
        def goal(square: Square) -> bool:
            return any(actions.metres(state, square, foe) <= weapon.range_m and grid.line_of_sight(square, foe) for foe in foes)
    else:
        reach = weapon.range_m if weapon is not None else 1.0

        def goal(square: Square) -> bool:
            return any(actions.metres(state, square, foe) <= reach for foe in foes)

    lying = body_squares(state, ignore=[me.id])  # passed, never ended on
    path = step_path(grid, here, lambda square: square not in lying and goal(square), occupied_squares(state, ignore=[me.id]), toward=foes[0])
    if not path:
        return None
    squares = int(actions.half_move_metres(state, me) // float(state.settings["square_metres"]))
    walked = trim_to_free_end(path[:squares], lying)  # cut short: never ending on a body
    if not walked:
        return None
    end = walked[-1]
    return next((m.command for m in turn.moves if tuple(m.to) == end), None)
