"""Bolt & Blade actions on your turn (BB-CORE-16, -17; BB-CMB-09, -13, -18..23, -30).

Attack, Dash / Evade / Tactical Move (`movement`), Disengage, Take Cover, Aim
(Bonus Action), Overwatch, Suppress, Rally, Ready, Reload (Interact), Help,
Search, Mark (Bonus Action); Use Wargear is the areas module's grenades and
flamers. Use Power is not implemented: this data set has no psychic powers.
"""

from __future__ import annotations

from firelane.engine.core import Decision, Rejected, require
from firelane.engine.dice import Dice
from firelane.engine.grid import COVER_ORDER, Square, cover_rank, distance
from firelane.engine.state import EncounterState
from firelane.engine.systems.bolt_and_blade import combat
from firelane.engine.systems.bolt_and_blade.combat import grid_of
from firelane.engine.systems.bolt_and_blade.constants import (
    AIMING,
    DISENGAGED,
    EVADING,
    HELPED,
    LAS_OVERHEATED,
    MARK_PREFIX,
    OVERWATCH,
    PINNED,
)
from firelane.engine.systems.bolt_and_blade.movement import start_move
from firelane.engine.systems.bolt_and_blade.reactions import resolve_declared_attack, return_fire_problem
from firelane.engine.systems.bolt_and_blade.rules import improved_cover
from firelane.engine.systems.bolt_and_blade.combat import AttackPlan
from firelane.engine.systems.bolt_and_blade.state import BoltAndBladeCombatant, Weapon
from firelane.engine.systems.bolt_and_blade.schemas import (
    BBAim,
    BBAttack,
    BBDisengage,
    BBHelp,
    BBMark,
    BBMarkMoved,
    BBMove,
    BBOverwatch,
    BBRally,
    BBReady,
    BBReload,
    BBSearch,
    BBSuppress,
    BBTakeCover,
)
from firelane.events.options_schemas import AreaPreview
from firelane.events.schemas import Command, ConditionApplied, ConditionRemoved, EligibleReactor, StateAdjusted


def decide_action(decision: Decision, command: Command, dice: Dice) -> None:
    handler = _HANDLERS.get(type(command))
    if handler is None:
        raise Rejected(f"{type(command).__name__} is not a {decision.system.title} command")
    handler(decision, command, dice)


def _acting(decision: Decision, command: Command) -> BoltAndBladeCombatant:
    return combat.require_turn(decision.state, command.actor)


# ---------------------------------------------------------------- attack


def _attack(decision: Decision, command: BBAttack, dice: Dice) -> None:
    """BB-CORE-07: d20 + attack bonus vs Defense. A ranged attack on a target
    that can answer opens a Return Fire window first (BB-CMB-14)."""
    state = decision.state
    plan = declared_attack_plan(state, command.actor, command.target, command.weapon)
    attacker, weapon = combat.combatant(state, command.actor), plan.weapon
    combat.spend_action(decision, attacker.id, action="attack", rule="BB-CORE-07", details={"weapon": weapon.name, "target": command.target})
    if weapon.is_ranged and return_fire_problem(decision.state, command.target, attacker.id) is None:
        opened = decision.system.open_window(
            decision,
            trigger="ranged_attack",
            actor=attacker.id,
            reactors=[EligibleReactor(combatant=command.target, reactions=["return_fire"])],
            continuation={"kind": "attack", "attacker": attacker.id, "target": command.target, "weapon": weapon.name},
            rule="BB-CMB-14",
        )
        if opened:
            return
    resolve_declared_attack(decision, plan, dice)


def attack_weapons(me: BoltAndBladeCombatant) -> list[Weapon]:
    """The weapons a `BBAttack` may use: every melee weapon carried, and the
    ready weapon if it is an ordinary ranged one (not thrown, no template)."""
    return [w for w in me.weapons if w.kind != "thrown" and w.template is None and (w.is_melee or (w.is_ranged and w.name == me.ready_weapon))]


def declared_attack_plan(state: EncounterState, actor: str, target: str, weapon_name: str = "", *, explain: bool = True) -> AttackPlan:
    """The plan of an attack ``actor`` declares on its turn with ``weapon_name``
    (empty: its ready weapon), or Rejected with the reason: one check for the
    command (`BBAttack`) and the options that list it. ``explain``: a refused
    target's reason also names those the weapon can attack (the options,
    which ask about every target, leave it out)."""
    attacker = combat.require_turn(state, actor)
    require(not attacker.action_used, f"{attacker.id} has already used its Action this turn")
    require(EVADING not in attacker.conditions, f"{attacker.id} Evaded this turn and cannot attack (BB-CMB-08)")
    name = weapon_name or attacker.ready_weapon
    weapon = attacker.weapon(name)
    require(weapon is not None, f"{attacker.id} does not carry {name!r}")
    require(weapon.kind != "thrown", f"{weapon.name} is thrown: use BBThrow")  # type: ignore[union-attr]
    require(weapon.template is None, f"{weapon.name} is an area weapon: use BBAreaAttack")  # type: ignore[union-attr]
    if weapon.is_ranged:  # type: ignore[union-attr]
        require(weapon.name == attacker.ready_weapon, f"{weapon.name} is not {attacker.id}'s ready weapon ({attacker.ready_weapon}); Ready it first")  # type: ignore[union-attr]
        problem = combat.weapon_problem(state, attacker, weapon)  # type: ignore[arg-type]
        require(problem is None, problem or "")
    try:
        require(target in state.combatants, f"unknown target {target[:64]!r}")
        return combat.plan_attack(state, attacker.id, target, weapon)  # type: ignore[arg-type]
    except Rejected as rejection:
        if not explain:
            raise
        raise Rejected(f"{rejection.reason}; {attack_targets_text(state, attacker, weapon)}") from None  # type: ignore[arg-type]


def attack_targets(state: EncounterState, attacker: BoltAndBladeCombatant, weapon: Weapon) -> list[str]:
    """The enemies ``weapon`` can attack from where ``attacker`` stands (`plan_attack`
    accepts them), by ID; those out of its reach are skipped before planning."""
    if attacker.position is None:
        return []
    here: Square = tuple(attacker.position)  # type: ignore[assignment]
    reach_ft = weapon.range[0] if weapon.is_melee else weapon.range[1]
    targets = []
    for enemy in combat.standing_enemies(state, attacker.id):
        if distance(here, enemy.position) * state.terrain.square_size > reach_ft:  # type: ignore[arg-type]
            continue  # plan_attack refuses it: beyond reach or maximum range
        try:
            combat.plan_attack(state, attacker.id, enemy.id, weapon)
        except Rejected:
            continue
        targets.append(enemy.id)
    return targets


def attack_targets_text(state: EncounterState, attacker: BoltAndBladeCombatant, weapon: Weapon) -> str:
    targets = attack_targets(state, attacker, weapon)
    return f"{weapon.name} can attack: {', '.join(targets)}" if targets else f"{attacker.id}'s {weapon.name} has no target it can attack from here"


# ---------------------------------------------------------------- movement-related actions


def _move(decision: Decision, command: BBMove, dice: Dice) -> None:
    start_move(decision, command, dice)


def _disengage(decision: Decision, command: BBDisengage, dice: Dice) -> None:
    """BB-CMB-09: leaving melee reach this turn provokes no Opportunity Strike."""
    me = _acting(decision, command)
    combat.spend_action(decision, me.id, action="disengage", rule="BB-CMB-09")
    decision.emit(ConditionApplied(combatant=me.id, condition=DISENGAGED, rule="BB-CMB-09", until=f"end_of_turn:{me.id}"))


def _take_cover(decision: Decision, command: BBTakeCover, dice: Dice) -> None:
    """BB-CMB-30: improve cover one step where the terrain allows it."""
    state = decision.state
    me = _acting(decision, command)
    require(not me.taking_cover, f"{me.id} has already taken cover here")
    gain = take_cover_gain(state, me)
    require(gain is not None, f"the heavy cover at {tuple(me.position)} cannot be improved: it does not fully block line of sight (BB-CMB-30)")  # type: ignore[arg-type]
    level, improved = gain  # type: ignore[misc]
    combat.spend_action(decision, me.id, action="take_cover", rule="BB-CMB-30", details={"from": level, "to": improved})
    decision.emit(StateAdjusted(combatant=me.id, changes={"taking_cover": True}, reason=f"took cover: {level} -> {improved}", rule="BB-CMB-30"))


def take_cover_gain(state: EncounterState, me: BoltAndBladeCombatant) -> tuple[str, str] | None:
    """(from, to) cover levels Take Cover would give here, judged by the best
    cover on the square whatever its facing; None if it cannot improve."""
    if me.taking_cover or me.position is None:
        return None
    features = grid_of(state).cover_at.get(tuple(me.position), [])  # type: ignore[arg-type]
    best = max(features, key=lambda f: cover_rank(f.level), default=None)
    level = COVER_ORDER[cover_rank(best.level)] if best else "none"
    improved = improved_cover(level, blocks_sight=best is not None and best.level == "heavy_tall")
    return None if improved == level else (level, improved)


# ---------------------------------------------------------------- aim, overwatch, suppress, rally


def _aim(decision: Decision, command: BBAim, dice: Dice) -> None:
    """BB-CMB-21: Bonus Action, only if you have not moved; +2 on the next ranged attack this turn."""
    state = decision.state
    me = _acting(decision, command)
    problem = aim_problem(state, me)
    require(problem is None, problem or "")
    combat.spend_action(decision, me.id, "bonus", action="aim", rule="BB-CMB-21")
    decision.emit(ConditionApplied(combatant=me.id, condition=AIMING, rule="BB-CMB-21", until=f"end_of_turn:{me.id}", details={"bonus": int(state.settings.get("aim_bonus", 2))}))


def aim_problem(state: EncounterState, me: BoltAndBladeCombatant) -> str | None:
    """Why ``me`` cannot Aim now (BB-CMB-21), or None (the Bonus Action is `spend_action`'s to check)."""
    if me.moved_this_turn:
        minor_allowed = bool(state.settings.get("aim_after_minor_move_in_cover", False))
        in_cover = bool(grid_of(state).cover_at.get(tuple(me.position)))  # type: ignore[arg-type]
        if not (minor_allowed and in_cover and me.movement_used_ft <= state.terrain.square_size):
            return f"{me.id} has moved this turn and cannot Aim (BB-CMB-21)"
    weapon = me.ready
    if weapon is None or not weapon.is_ranged:
        return f"{me.id} has no ranged weapon ready to Aim"
    if AIMING in me.conditions:
        return f"{me.id} is already aiming"
    return None


def _overwatch(decision: Decision, command: BBOverwatch, dice: Dice) -> None:
    """BB-CMB-13: watch a visible area until the start of your next turn."""
    state = decision.state
    me = _acting(decision, command)
    problem = overwatch_problem(state, me)
    require(problem is None, problem or "")
    grid = grid_of(state)
    center: Square = (int(command.center[0]), int(command.center[1]))
    problem = overwatch_center_problem(state, me, center)
    require(problem is None, problem or "")
    area = overwatch_area(state, me, command)
    combat.spend_action(decision, me.id, action="overwatch", rule="BB-CMB-13", details={"center": list(center), "area": [list(s) for s in area]})
    decision.emit(StateAdjusted(combatant=me.id, changes={"overwatch_area": [list(s) for s in area]}, reason="Overwatch area", rule="BB-CMB-13"))
    decision.emit(ConditionApplied(combatant=me.id, condition=OVERWATCH, rule="BB-CMB-13", until=f"start_of_turn:{me.id}", details={"center": list(center)}))


def overwatch_area(state: EncounterState, me: BoltAndBladeCombatant, command: BBOverwatch) -> list[Square]:
    """The squares an Overwatch watches (BB-CMB-13): every open square within
    the radius (the setting's at most) of the centre that ``me`` sees; the
    command itself and its preview (`preview_overwatch`) both draw it here.
    Raises Rejected for a radius beyond the setting's."""
    grid = grid_of(state)
    center: Square = (int(command.center[0]), int(command.center[1]))
    here: Square = me.position  # type: ignore[assignment]
    radius_ft = command.radius_ft if command.radius_ft is not None else int(state.settings.get("overwatch_radius_ft", 10))
    require(0 <= radius_ft <= int(state.settings.get("overwatch_radius_ft", 10)), f"an Overwatch area is at most {state.settings.get('overwatch_radius_ft', 10)} ft in radius")
    radius = int(radius_ft // state.terrain.square_size)
    return [
        (x, y)
        for y in range(center[1] - radius, center[1] + radius + 1)
        for x in range(center[0] - radius, center[0] + radius + 1)
        if grid.passable((x, y)) and combat.sees(state, here, (x, y))
    ]


def preview_overwatch(state: EncounterState, command: BBOverwatch) -> AreaPreview:
    """The area an Overwatch would watch, checked as the command is (nothing
    changes): for the page to draw on hover (issue 19 item 13)."""
    me = combat.require_turn(state, command.actor)
    problem = overwatch_problem(state, me)
    require(problem is None, problem or "")
    center: Square = (int(command.center[0]), int(command.center[1]))
    problem = overwatch_center_problem(state, me, center)
    require(problem is None, problem or "")
    # No one is "caught": the area is watched, and harms no one by itself.
    return AreaPreview(command="BBOverwatch", shape="overwatch", origin=center, squares=overwatch_area(state, me, command),
                       notes=["watched until the start of its next turn: Reactive Fire without Disadvantage at movement through it"],
                       rule="BB-CMB-13")


def overwatch_problem(state: EncounterState, me: BoltAndBladeCombatant) -> str | None:
    """Why ``me`` cannot go on Overwatch at all (BB-CMB-13), or None."""
    weapon = me.ready
    if weapon is None or not weapon.is_ranged or weapon.template is not None:
        return f"{me.id} has no ranged weapon ready for Overwatch"
    return combat.weapon_problem(state, me, weapon)


def overwatch_center_problem(state: EncounterState, me: BoltAndBladeCombatant, center: Square) -> str | None:
    """Why ``center`` cannot be the point ``me`` watches (BB-CMB-13: visible, within range), or None."""
    weapon = me.ready
    if not grid_of(state).in_bounds(center):
        return f"{center} is off the map"
    if not grid_of(state).passable(center):
        return f"{center} is a wall: an Overwatch watches open ground"
    here: Square = me.position  # type: ignore[assignment]
    if not combat.sees(state, here, center):
        return f"{me.id} cannot see {center}"
    if distance(here, center) * state.terrain.square_size > weapon.range[1]:  # type: ignore[union-attr]
        return f"{center} is beyond {weapon.name}'s maximum range"  # type: ignore[union-attr]
    return None


def suppress_dc(decision: Decision, me: BoltAndBladeCombatant) -> int:
    """BB-CMB-18: DC 8 + proficiency bonus + Agility modifier."""
    return 8 + combat.proficiency(decision.state, me) + me.modifier("agility")


def _suppress(decision: Decision, command: BBSuppress, dice: Dice) -> None:
    """BB-CMB-18, -20: Willpower saves for everyone in the area; failure Pins
    until the start of the suppressor's next turn; 3 rounds from the magazine;
    a las weapon then cannot Reactive Fire until the start of your next turn."""
    state = decision.state
    me = _acting(decision, command)
    require(not me.action_used, f"{me.id} has already used its Action this turn")
    problem = suppress_problem(state, me, command.weapon)
    require(problem is None, problem or "")
    weapon: Weapon = me.weapon(command.weapon or me.ready_weapon)  # type: ignore[assignment]
    cost = int(state.settings.get("suppress_ammo", 3))
    left = me.ammo.get(weapon.name, 0)
    area: list[Square] = sorted({(int(s[0]), int(s[1])) for s in command.area})
    require(bool(area), "Suppress needs an area")
    box = suppress_box(state)
    xs, ys = [s[0] for s in area], [s[1] for s in area]
    require(max(xs) - min(xs) < box and max(ys) - min(ys) < box, f"the area must fit in a {state.settings.get('suppress_area_ft', 10)}-ft box (BB-CMB-18)")
    for square in area:
        problem = suppress_square_problem(state, me, weapon, square)
        require(problem is None, problem or "")
    dc = suppress_dc(decision, me)
    combat.spend_action(decision, me.id, action="suppress", rule="BB-CMB-18", details={"weapon": weapon.name, "area": [list(s) for s in area], "dc": dc})
    if weapon.magazine:
        decision.emit(StateAdjusted(combatant=me.id, changes={"ammo": {**me.ammo, weapon.name: left - cost}}, reason=f"Suppress spends {cost} rounds", rule="BB-CMB-20"))
    if weapon.has("las"):
        decision.emit(ConditionApplied(combatant=me.id, condition=LAS_OVERHEATED, rule="BB-CMB-20", until=f"start_of_turn:{me.id}", details={"weapon": weapon.name}))
    inside = [
        cid for cid in sorted(state.combatants)
        if cid != me.id and not state.combatants[cid].out_of_fight and state.combatants[cid].position is not None
        and tuple(state.combatants[cid].position) in set(area)  # type: ignore[arg-type]
    ]
    for cid in inside:
        save = combat.roll_save(decision, cid, "willpower", dc, dice, rule="BB-CMB-18", purpose=f"Willpower save against {me.id}'s suppression")
        if not save.success:
            decision.emit(ConditionApplied(combatant=cid, condition=PINNED, rule="BB-CMB-18", until=f"start_of_turn:{me.id}", details={"by": me.id}))


def suppress_box(state: EncounterState) -> int:
    """The side of the box a suppressed area fits in, in squares (BB-CMB-18: 10 ft)."""
    return max(1, int(int(state.settings.get("suppress_area_ft", 10)) // state.terrain.square_size))


def suppress_problem(state: EncounterState, me: BoltAndBladeCombatant, weapon_name: str = "") -> str | None:
    """Why ``me`` cannot Suppress with ``weapon_name`` (empty: its ready weapon)
    whatever the area (BB-CMB-16, -18, -20), or None (the Action is `spend_action`'s)."""
    name = weapon_name or me.ready_weapon
    weapon = me.weapon(name)
    if weapon is None or not weapon.is_ranged:
        return f"{me.id} has no ranged weapon {name!r} to Suppress with"
    if not any(weapon.has(t) for t in ("ammo", "burst", "heavy")):
        return f"{weapon.name} has no Ammo, Burst or Heavy trait and cannot Suppress (BB-CMB-18)"
    if weapon.name != me.ready_weapon:
        return f"{weapon.name} is not {me.id}'s ready weapon"
    problem = combat.weapon_problem(state, me, weapon)
    if problem is not None:
        return problem
    cost = int(state.settings.get("suppress_ammo", 3))
    left = me.ammo.get(weapon.name, 0)
    if weapon.magazine and left < cost:
        return f"Suppress needs {cost} rounds; {weapon.name} has {left} (BB-CMB-20)"
    if weapon.has("heavy") and combat.engaged(state, me.id):
        return f"{weapon.name} cannot fire while {me.id} is engaged in melee (BB-CMB-16)"
    return None


def suppress_square_problem(state: EncounterState, me: BoltAndBladeCombatant, weapon: Weapon, square: Square) -> str | None:
    """Why ``square`` cannot be in the area ``me`` suppresses (BB-CMB-18: seen, within normal range), or None."""
    here: Square = me.position  # type: ignore[assignment]
    if not grid_of(state).in_bounds(square):
        return f"{square} is off the map"
    if not combat.sees(state, here, square):
        return f"{me.id} cannot see {square}"
    if distance(here, square) * state.terrain.square_size > weapon.range[0]:
        return f"{square} is beyond {weapon.name}'s normal range of {weapon.range[0]} ft (BB-CMB-18)"
    return None


def _rally(decision: Decision, command: BBRally, dice: Dice) -> None:
    """BB-CMB-19: spend the Action to end Pinned."""
    me = _acting(decision, command)
    require(PINNED in me.conditions, f"{me.id} is not Pinned")
    combat.spend_action(decision, me.id, action="rally", rule="BB-CMB-19")
    decision.emit(ConditionRemoved(combatant=me.id, condition=PINNED, reason="rallied", rule="BB-CMB-19"))


# ---------------------------------------------------------------- ready, reload, help, search, mark


def _ready(decision: Decision, command: BBReady, dice: Dice) -> None:
    me = _acting(decision, command)
    require(me.weapon(command.weapon) is not None, f"{me.id} does not carry {command.weapon!r}; carried: {', '.join(w.name for w in me.weapons)}")
    require(command.weapon != me.ready_weapon, f"{command.weapon} is already ready")
    combat.spend_action(decision, me.id, action="ready", rule="BB-CORE-17", details={"weapon": command.weapon})
    decision.emit(StateAdjusted(combatant=me.id, changes={"ready_weapon": command.weapon}, reason="readied a weapon", rule="BB-CORE-17"))


def _reload(decision: Decision, command: BBReload, dice: Dice) -> None:
    me = _acting(decision, command)
    name = command.weapon or me.ready_weapon
    problem = reload_problem(me, name)
    require(problem is None, problem or "")
    weapon: Weapon = me.weapon(name)  # type: ignore[assignment]
    combat.spend_action(decision, me.id, action="reload", rule="BB-CORE-17", details={"weapon": name})
    decision.emit(StateAdjusted(combatant=me.id, changes={"ammo": {**me.ammo, name: weapon.magazine}, "jammed": [w for w in me.jammed if w != name]}, reason=f"reloaded {name}", rule="BB-CORE-17"))


def reload_problem(me: BoltAndBladeCombatant, name: str) -> str | None:
    """Why ``me`` cannot Reload ``name`` (BB-CORE-17 Interact: a full magazine, a jam cleared), or None."""
    weapon = me.weapon(name)
    if weapon is None:
        return f"{me.id} does not carry {name!r}"
    if not (weapon.is_ranged and weapon.magazine > 0):
        return f"{name} cannot be reloaded"
    if me.ammo.get(name, 0) >= weapon.magazine and name not in me.jammed:
        return f"{name} is already loaded"
    return None


def _help(decision: Decision, command: BBHelp, dice: Dice) -> None:
    """Help (house rule): distract an enemy within 5 ft; the next attack against
    it by an ally of yours before your next turn has Advantage (consumed, BB-CMB-23)."""
    state = decision.state
    me = _acting(decision, command)
    problem = help_problem(state, me, command.target)
    require(problem is None, problem or "")
    combat.spend_action(decision, me.id, action="help", rule="BB-CORE-17", details={"target": command.target})
    decision.emit(ConditionApplied(combatant=command.target, condition=HELPED, rule="BB-CORE-17", until=f"start_of_turn:{me.id}", details={"by": me.id}))


def help_problem(state: EncounterState, me: BoltAndBladeCombatant, target_id: str) -> str | None:
    """Why ``me`` cannot Help against ``target_id`` (an enemy within 5 ft), or None."""
    target = state.combatants.get(target_id)
    if target is None:
        return f"unknown target {target_id[:64]!r}"
    if target.out_of_fight:
        return f"{target_id} is already down"
    if target.side == me.side:
        return f"{target_id} is not an enemy"
    if distance(me.position, target.position) * state.terrain.square_size > 5:  # type: ignore[arg-type]
        return f"{target_id} is not within 5 ft of {me.id}"
    return None


def _search(decision: Decision, command: BBSearch, dice: Dice) -> None:
    """Search: an Intellect check with Awareness (BB-CORE-01, -17)."""
    state = decision.state
    me = _acting(decision, command)
    dc = command.dc if command.dc is not None else int(state.settings.get("search_dc", 12))
    combat.spend_action(decision, me.id, action="search", rule="BB-CORE-17")
    combat.roll_check(decision, me.id, "intellect", "awareness", dc, dice, purpose="Search")


def _mark(decision: Decision, command: BBMark, dice: Dice) -> None:
    """BB-CMB-23: a single-bearer mark; a new application removes the old one."""
    state = decision.state
    me = _acting(decision, command)
    problem = mark_problem(state, me, command.mark, command.target)
    require(problem is None, problem or "")
    previous = me.marks.get(command.mark)
    combat.spend_action(decision, me.id, "bonus", action="mark", rule="BB-CMB-23", details={"mark": command.mark, "target": command.target})
    condition = f"{MARK_PREFIX}{command.mark}"
    if previous is not None and condition in state.combatants[previous].conditions:
        decision.emit(ConditionRemoved(combatant=previous, condition=condition, reason=f"{me.id} marked {command.target} instead", rule="BB-CMB-23"))
    decision.emit(BBMarkMoved(marker=me.id, mark=command.mark, bearer=command.target, previous=previous))
    decision.emit(ConditionApplied(combatant=command.target, condition=condition, rule="BB-CMB-23", details={"by": me.id}))


def mark_problem(state: EncounterState, me: BoltAndBladeCombatant, mark: str, target_id: str) -> str | None:
    """Why ``me`` cannot put ``mark`` on ``target_id`` (BB-CMB-23), or None."""
    if mark not in me.features:
        return f"{me.id} has no {mark!r} feature"
    target = state.combatants.get(target_id)
    if target is None:
        return f"unknown target {target_id[:64]!r}"
    if target.out_of_fight:
        return f"{target_id} is already down"
    if not combat.sees(state, me.position, target.position):  # type: ignore[arg-type]
        return f"{me.id} cannot see {target_id}"
    if me.marks.get(mark) == target_id:
        return f"{target_id} already bears {mark}"
    return None


_HANDLERS = {
    BBAttack: _attack,
    BBMove: _move,
    BBDisengage: _disengage,
    BBTakeCover: _take_cover,
    BBAim: _aim,
    BBOverwatch: _overwatch,
    BBSuppress: _suppress,
    BBRally: _rally,
    BBReady: _ready,
    BBReload: _reload,
    BBHelp: _help,
    BBSearch: _search,
    BBMark: _mark,
}

