"""The d100-degrees AI: a deterministic function of the state (no dice, no randomness).

In a window it claims its best Evasion. On its turn, with actions left, it:
1. attacks an enemy within melee reach (All Out Attack with a whole turn left,
   else Basic Attack), chaining further enemies within 2 m (D100D-04);
2. otherwise fires at the weakest enemy in range and sight: Suppressing Fire
   when a whole turn is left and three or more enemies stand in the arc,
   Controlled Fire at the selected maximum rate of fire otherwise;
3. otherwise clears a jam, or moves (a Half Action) towards a square from
   which it can attack.
It returns None when it has nothing useful left, and the driver ends its turn.
"""

from __future__ import annotations

from firelane.engine.core import BaseRuleSystem, next_command_id
from firelane.engine.grid import Grid, Square, distance
from firelane.engine.systems.d100_degrees import actions, rules
from firelane.engine.systems.d100_degrees.state import D100DCombatant, D100DState, Weapon
from firelane.engine.occupancy import trim_to_free_end
from firelane.engine.systems.percentile import body_squares, occupied_squares, step_path
from firelane.engine.systems.d100_degrees.schemas import (
    ChainLink,
    D100DAllOutAttack,
    D100DBasicAttack,
    D100DClearJam,
    D100DControlledFire,
    D100DMove,
    D100DSuppressingFire,
)
from firelane.events.schemas import ClaimReaction, Command

SUPPRESS_WHEN_CAUGHT = 3


def choose(system: BaseRuleSystem, state: D100DState, combatant_id: str) -> Command | None:
    me = state.combatants[combatant_id]
    command_id = next_command_id(state, combatant_id)
    if state.window is not None:
        return _evade(state, me, command_id)
    if state.active != combatant_id or me.out_of_fight or me.position is None:
        return None
    halves_left = 2 - me.half_actions_used
    if halves_left <= 0:
        return None
    enemies = _enemies(state, me)
    if not enemies:
        return None
    whole_turn = halves_left == 2 and not (rules.PINNED in me.conditions and state.settings["pinned_blocks_full_actions"])
    here = actions.position(me)

    melee = me.weapon(None, "melee")
    if melee is not None:
        reachable = [e for e in enemies if actions.metres(state, here, actions.position(e)) <= melee.range_m]
        if reachable:
            target = reachable[0]
            extra = _chain(state, me, melee, target, max(1, me.agility // 10))
            kind = D100DAllOutAttack if whole_turn else D100DBasicAttack
            return kind(command_id=command_id, actor=me.id, target=target.id, extra=extra, weapon=melee.name)

    gun = _usable_gun(me)
    if gun is not None:
        grid = Grid(state.terrain)
        visible = [e for e in enemies if _can_shoot(state, grid, here, actions.position(e), gun)]
        if visible:
            target = visible[0]
            if whole_turn:
                caught = actions.killzone(state, me, gun, actions.position(target))
                if len(caught) >= SUPPRESS_WHEN_CAUGHT:
                    return D100DSuppressingFire(command_id=command_id, actor=me.id, toward=actions.position(target), weapon=gun.name, rof=gun.rof)
            extra = _chain(state, me, gun, target, gun.rof)
            return D100DControlledFire(command_id=command_id, actor=me.id, target=target.id, extra=extra, weapon=gun.name, rof=gun.rof)

    if me.jammed and gun is None and any(w.kind == "ranged" for w in me.weapons):
        cost = state.settings["clear_jam_action"]
        if cost == rules.HALF or whole_turn:
            return D100DClearJam(command_id=command_id, actor=me.id, weapon=me.jammed[0])

    path = _approach(state, me, gun if gun is not None else melee)
    if path:
        return D100DMove(command_id=command_id, actor=me.id, path=path)
    return None


def _evade(state: D100DState, me: D100DCombatant, command_id: str) -> Command | None:
    window = state.window
    assert window is not None
    reactor = window.eligible(me.id)
    if reactor is None or window.answered(me.id) or not reactor.reactions:
        return None
    chance = {rules.DODGE: me.agility, rules.PARRY: me.weapon_skill}
    best = max(reactor.reactions, key=lambda r: (chance.get(r, 0), r))
    return ClaimReaction(command_id=command_id, actor=me.id, window=window.window, reaction=best)


def _enemies(state: D100DState, me: D100DCombatant) -> list[D100DCombatant]:
    """Standing enemies, weakest (fewest wounds) first, then nearest, then by ID."""
    here = actions.position(me)
    foes = [c for c in state.combatants.values() if c.side != me.side and not c.out_of_fight and c.position is not None]
    return sorted(foes, key=lambda c: (c.wounds, distance(here, actions.position(c)), c.id))


def _usable_gun(me: D100DCombatant) -> Weapon | None:
    for weapon in me.weapons:
        if weapon.kind == "ranged" and weapon.name not in me.jammed:
            return weapon
    return None


def _can_shoot(state: D100DState, grid: Grid, here: Square, there: Square, gun: Weapon) -> bool:
    return actions.metres(state, here, there) <= gun.range_m and grid.line_of_sight(here, there)


def _chain(state: D100DState, me: D100DCombatant, weapon: Weapon, first: D100DCombatant, max_targets: int) -> list[ChainLink]:
    """Greedily add enemies within the chain step of the previous target (D100D-04)."""
    grid = Grid(state.terrain)
    here = actions.position(me)
    step = float(state.settings["chain_step_metres"])
    chain: list[ChainLink] = []
    used = {first.id}
    previous = actions.position(first)
    while len(used) < max_targets:
        options = [
            e
            for e in _enemies(state, me)
            if e.id not in used
            and actions.metres(state, previous, actions.position(e)) <= step
            and actions.metres(state, here, actions.position(e)) <= weapon.range_m
            and (weapon.kind == "melee" or grid.line_of_sight(here, actions.position(e)))
        ]
        if not options:
            break
        options.sort(key=lambda e: (distance(previous, actions.position(e)), e.id))
        chosen = options[0]
        chain.append(chosen.id)
        used.add(chosen.id)
        previous = actions.position(chosen)
    return chain


def _approach(state: D100DState, me: D100DCombatant, weapon: Weapon | None) -> list[Square] | None:
    """The first Half Action's worth of the shortest path to a square to attack from."""
    grid = Grid(state.terrain)
    here = actions.position(me)
    foes = [actions.position(e) for e in _enemies(state, me)]
    if weapon is not None and weapon.kind == "ranged":
        def goal(square: Square) -> bool:
            return any(_can_shoot(state, grid, square, foe, weapon) for foe in foes)
    else:
        reach = weapon.range_m if weapon is not None else 1.0

        def goal(square: Square) -> bool:
            return any(actions.metres(state, square, foe) <= reach for foe in foes)

    path = step_path(grid, here, goal, occupied_squares(state, ignore=[me.id]), toward=foes[0])
    if not path:
        return None
    squares = int(actions.half_move_metres(state, me) // float(state.settings["square_metres"]))
    # Issue 19 (a rule, kept in step with the engine): no move ends on a body.
    return trim_to_free_end(path[:squares], body_squares(state, ignore=[me.id])) or None
