"""Bolt & Blade movement: Tactical Move, Dash, Evade, and the walk through fire lanes.

A move is validated whole (every step legal, the cost within the Movement
left), then walked square by square (BB-CMB-06):

- before a step leaves an enemy's melee reach, that enemy may make an
  Opportunity Strike (BB-CMB-15) unless the mover Disengaged (BB-CMB-09);
- on open ground in an enemy's sight the mover is Exposed to that enemy
  (BB-CMB-05, -06): not a state it carries, but what each attack finds where
  it stands (`combat.exposed_to`); ``Moved.exposed`` says a stretch of the
  move was so;
- entering a square of an enemy's fire lane (open line of sight, within the
  maximum range of its loaded ready ranged weapon, no cover on the square
  facing it, BB-CMB-02) offers that enemy Reactive Fire if it still has its
  Reaction (BB-CMB-03, -10). Each enemy is offered Reactive Fire once per move
  (house default: the text warns against "ten extra attacks"), and names
  where along the path it fires: now, or at a square ahead, where the walk
  fires the held shot as the mover gets there (`fire_held_shots`), after any
  window that square opens itself. A move that ends first lapses it.

A window's continuation holds the rest of the path, so after the reactions
the walk resumes where it was — or not, if the mover stopped or went down.

Fifth floor of the package (see the package docstring): above `paths` and
`reactions`, below `actions` and the system class.
"""

from __future__ import annotations

from typing import Any

import msgspec

from firelane.engine.core import Decision, Rejected, require
from firelane.engine.dice import Dice
from firelane.engine.grid import Square, distance
from firelane.engine.state import EncounterState
from firelane.engine.systems.bolt_and_blade import areas, combat
from firelane.engine.systems.bolt_and_blade.constants import EVADING, FIRE_CHOICES, MODE_RULES, MOVE_MODES
from firelane.engine.systems.bolt_and_blade.paths import (
    exposed_to_enemy_sight,
    fire_lane_problem,
    fire_squares,
    held_shots_at,
    lapse_held_shots,
    movement_left,
    on_overwatch_over,
    opportunity_problem,
    path_cost,
    end_taken,
    path_problem,
    route,
    stop_movement,
    step_cost,
)
from firelane.engine.systems.bolt_and_blade.reactions import fire_reactive_shot, move_of, plan_reactive_fire
from firelane.engine.systems.bolt_and_blade.state import BoltAndBladeCombatant
from firelane.engine.systems.bolt_and_blade.schemas import BBMove
from firelane.events.options_schemas import Threat
from firelane.events.schemas import ConditionApplied, EligibleReactor, Moved, ReactionDenied


# ---------------------------------------------------------------- starting a move


def start_move(decision: Decision, command: BBMove, dice: Dice) -> None:
    """Validate a move whole and walk it. A move names its destination (``to``,
    with optional ``waypoints``): its path is the cheapest one (`paths.route`,
    the path its option shows); or it gives the full ``path`` (old commands)."""
    state = decision.state
    mover = combat.combatant(state, combat.require_turn(state, command.actor).id)
    require(command.mode in MOVE_MODES, f"unknown move mode {command.mode!r}; use one of {', '.join(MOVE_MODES)}")
    choice = command.on_reactive_fire or str(state.settings.get("reactive_fire_choice", "continue"))
    require(choice in FIRE_CHOICES, f"on_reactive_fire must be 'continue' or 'stop', not {choice!r}")
    require(not (command.path and command.to is not None), "a move gives its destination (to, with optional waypoints) or its full path, not both")
    require(not command.waypoints or command.to is not None, "waypoints need a destination (to)")
    require(bool(command.path) or command.to is not None, "a move needs a destination (to) or at least one square of path")
    require(mover.position is not None, f"{mover.id} is not on the map")
    require(not mover.movement_halted, f"{mover.id}'s movement was stopped this turn")
    allowance = move_allowance(mover, command.mode)
    if command.mode in ("dash", "evade"):
        require(not mover.action_used, f"{mover.id} has already used its Action this turn; {command.mode.title()} needs it")
    # BB-CMB-08: an Evade moves "up to your Movement": the turn's Movement, not more.
    if command.mode == "evade":
        require(not mover.attacked_this_turn, f"{mover.id} attacked this turn and cannot Evade (BB-CMB-08)")
    if command.to is not None:
        to: Square = (int(command.to[0]), int(command.to[1]))
        path = route(state, mover, to, [(int(s[0]), int(s[1])) for s in command.waypoints], allowance, command.mode)
    else:
        path = [(int(s[0]), int(s[1])) for s in command.path]
        problem = path_problem(state, mover, path)
        require(problem is None, f"illegal path: {problem}")
    cost = path_cost(state, mover, mover.position, path)  # type: ignore[arg-type]
    require(cost <= allowance, f"the path costs {cost:g} ft but {mover.id} has only {allowance:g} ft of movement left")
    if command.mode in ("dash", "evade"):
        combat.spend_action(decision, mover.id, action=command.mode, rule=MODE_RULES[command.mode])
    if command.mode == "evade":
        decision.emit(ConditionApplied(combatant=mover.id, condition=EVADING, rule="BB-CMB-08", until=f"end_of_turn:{mover.id}"))
    walk(decision, {"kind": "move", "mover": mover.id, "rest": [list(s) for s in path], "mode": command.mode, "choice": choice, "offered_rf": [], "offered_os": []}, dice)


def move_allowance(mover: BoltAndBladeCombatant, mode: str) -> float:
    """Feet a move in ``mode`` may cost: the Movement left, and a Dash adds the
    Movement again (BB-CMB-07: "move up to your Movement again"); an Evade moves
    "up to your Movement" (BB-CMB-08), the turn's Movement, no more."""
    allowance = movement_left(mover)
    if mode == "dash":
        allowance += mover.movement_ft
    return allowance


# ---------------------------------------------------------------- the walk


def walk(decision: Decision, continuation: dict[str, Any], dice: Dice) -> None:
    """Walk the rest of a move until it ends, or a reaction window interrupts it.

    ``continuation`` is the move (`reactions.MOVE_KEYS`): the mover, the squares
    still to enter, the mode, its declared choice under fire, and the enemies
    already offered a Reactive Fire or an Opportunity Strike during it.
    """
    state = decision.state
    move = move_of(continuation)
    mover_id: str = move["mover"]
    mode: str = move["mode"]
    rest: list[Square] = [(int(s[0]), int(s[1])) for s in move["rest"]]
    offered_rf: list[str] = list(move["offered_rf"])
    offered_os: list[str] = list(move["offered_os"])
    segment: list[Square] = []
    segment_cost = 0.0
    # The last square walked that the mover may end on (no one else's): where
    # a stop part-way leaves it while it passes an ally (`paths.stop_square`).
    taken = end_taken(state, besides=mover_id)
    last_free: Square = tuple(move["back_to"]) if move.get("back_to") else tuple(combat.combatant(state, mover_id).position)  # type: ignore[assignment,arg-type]
    zone_squares = {tuple(s) for zone in getattr(state, "zones", []) for s in zone.squares}

    def flush() -> None:
        nonlocal segment, segment_cost
        if not segment:
            return
        exposed = any(exposed_to_enemy_sight(state, mover_id, square) for square in segment)
        decision.emit(Moved(combatant=mover_id, path=list(segment), mode=mode, cost=segment_cost, exposed=exposed, rule=MODE_RULES[mode]))
        entered = list(segment)
        segment, segment_cost = [], 0.0
        areas.on_enter_squares(decision.system, decision, mover_id, entered, dice)  # type: ignore[arg-type]

    def move_from(remaining: list[Square]) -> dict[str, Any]:
        found = {**move, "rest": [list(s) for s in remaining], "offered_rf": list(offered_rf), "offered_os": list(offered_os)}
        found.pop("back_to", None)
        if tuple(combat.combatant(state, mover_id).position) != last_free:  # type: ignore[arg-type]
            found["back_to"] = list(last_free)  # on another's square: where a stop here leaves it
        return found

    def pause(trigger: str, reactors: list[EligibleReactor], remaining: list[Square], rule: str, **notes: Any) -> bool:
        return decision.system.open_window(decision, trigger=trigger, actor=mover_id, reactors=reactors, continuation={**move_from(remaining), **notes}, rule=rule)

    def over() -> bool:
        """The move cannot go on: the mover fell (what it held for lapses) or stopped."""
        mover_now = combat.combatant(state, mover_id)
        if mover_now.out_of_fight:
            fallen_mid_move(decision, mover_id, move_from([]))
        return mover_now.out_of_fight or mover_now.movement_halted

    # Shots held for the square the mover stands on, if a window there came first.
    if fire_held_shots(decision, mover_id, move_from(rest), dice) or over():
        return
    for index, square in enumerate(rest):
        mover = combat.combatant(state, mover_id)
        here: Square = segment[-1] if segment else mover.position  # type: ignore[assignment]
        strikers = [
            e.id for e in combat.standing_enemies(state, mover_id)
            if e.id not in offered_os and opportunity_problem(state, e.id, mover_id, here, square) is None
        ]
        if strikers:
            flush()
            if over():
                return
            offered_os.extend(strikers)
            if pause("leaving_reach", [EligibleReactor(combatant=s, reactions=["opportunity_strike"]) for s in strikers], rest[index:], "BB-CMB-15"):
                return
        segment_cost += step_cost(state, mover, here, square)
        segment.append(square)
        if square not in taken:
            last_free = square
        if square in zone_squares:
            flush()
        if over():
            return
        # BB-CMB-10: entering an enemy's fire lane offers it Reactive Fire, once
        # per move; it names where along the path it fires (`fire_squares`).
        offers: list[EligibleReactor] = []
        squares: dict[str, list[list[int]]] = {}
        for enemy in combat.standing_enemies(state, mover_id):
            if enemy.id not in offered_rf and fire_lane_problem(state, enemy.id, mover_id, square) is None:
                offers.append(EligibleReactor(combatant=enemy.id, reactions=["reactive_fire"]))
                squares[enemy.id] = [list(s) for s in fire_squares(state, enemy.id, [square, *rest[index + 1:]])]
                offered_rf.append(enemy.id)
        if offers:
            flush()
            if pause("fire_lane", offers, rest[index + 1:], "BB-CMB-02", fire_squares=squares):
                return
        if held_shots_at(state, mover_id, square):
            flush()
            if fire_held_shots(decision, mover_id, move_from(rest[index + 1:]), dice) or over():
                return
    flush()
    lapse_held_shots(decision, mover_id, f"{mover_id}'s move ended")


def fire_held_shots(decision: Decision, mover_id: str, move: dict[str, Any], dice: Dice) -> bool:
    """Resolve the Reactive Fire held for the square the mover stands on, in
    the order it was claimed (BB-CMB-10); returns whether one opened a window
    (which resumes the move when it is done)."""
    state = decision.state
    for shot in held_shots_at(state, mover_id, tuple(combat.combatant(state, mover_id).position)):  # type: ignore[arg-type]
        reason = fire_reactive_shot(decision, shot.reactor, mover_id, move, dice)
        if reason is not None:
            decision.emit(ReactionDenied(window=shot.window, combatant=shot.reactor, reaction="reactive_fire", reason=reason))
        if state.window is not None:
            return True
        mover = combat.combatant(state, mover_id)
        if mover.out_of_fight or mover.movement_halted or state.ended:
            return False
    return False


def resume_move(decision: Decision, continuation: dict[str, Any], dice: Dice) -> None:
    """After a window that interrupted a move: walk on, unless the mover fell or
    stopped (whatever it still held for lapses then)."""
    mover = combat.combatant(decision.state, continuation["mover"])
    if mover.out_of_fight:
        fallen_mid_move(decision, mover.id, move_of(continuation))
        return
    if mover.movement_halted:
        return
    walk(decision, continuation, dice)


def fallen_mid_move(decision: Decision, mover_id: str, move: dict[str, Any]) -> None:
    """The mover went down part-way: what it held for lapses; and if it fell on
    a square it was passing (an ally's, a body's), it lies on the last square of its path it
    could end on instead (one combatant to a square, `firelane.engine.occupancy`)."""
    mover = combat.combatant(decision.state, mover_id)
    if move.get("back_to") and mover.position is not None and tuple(mover.position) in end_taken(decision.state, besides=mover_id):
        stop_movement(decision, mover_id, move, "went down", "BB-CORE-09")
        return
    lapse_held_shots(decision, mover_id, f"{mover_id} fell", here=f"{mover_id} is already down")


# ---------------------------------------------------------------- who could react to a move (its options)


class _WalkSoFar(msgspec.Struct, frozen=True):
    """What the walk (`walk`) has done by a square of a path if everyone passes:
    the enemies already offered a Reactive Fire or an Opportunity Strike, where
    the mover last stood still for a window (its position in the state as
    fire lanes are asked), whether a `Moved` has been recorded, the zones
    already entered, and the threats met so far."""

    offered_rf: frozenset[str]
    offered_os: frozenset[str]
    flushed: Square
    moved: bool
    zones: frozenset[str]
    threats: tuple[Threat, ...]


def move_threats(
    state: EncounterState, mover_id: str, mode: str, paths: dict[Square, list[Square]], *, lanes: dict[Any, bool] | None = None,
) -> dict[Square, list[Threat]]:
    """Who could react to the mover walking each of ``paths`` (destination ->
    path from the mover's square, a tree as `paths.cheapest_paths` gives it), in
    the order the walk (`walk`) would offer it, had everyone passed before:

    - an Opportunity Strike before a step leaves an enemy's melee reach
      (BB-CMB-15), at the square the mover stands on, with the enemy's chance
      to hit it there;
    - Reactive Fire on entering the first square of an enemy's fire lane
      (BB-CMB-02, -10; "overwatch" when the enemy watches that square,
      BB-CMB-13), at that square, with the enemy's chance to hit it there
      (Disadvantage as BB-CMB-11 and the mode say; the enemy may instead name a
      square further along, `fire_squares`);
    - entering a damaging zone (BB-CMB-26), once per zone.

    The same predicates as the walk decide (`opportunity_problem`,
    `fire_lane_problem`), on the same state: a fire lane is asked with the
    mover where the walk last stopped (its state is updated at windows, not
    every step). ``lanes``: the fire-lane answers of another mode's scan of the
    same state (the mode does not change them), to share."""
    mover = combat.combatant(state, mover_id)
    start: Square = tuple(mover.position)  # type: ignore[assignment]
    # Only an enemy that some square of the paths can be within reach or range of matters.
    radius = max((distance(start, square) for square in paths), default=0)
    enemies = [e for e in combat.standing_enemies(state, mover_id) if distance(start, e.position) <= radius + enemy_reach(state, e)]  # type: ignore[arg-type]
    # The mover as the walk finds it: Evading if it Evades (applied before the
    # first step), and once a stretch of the move is recorded, no longer
    # taking cover (`Moved`).
    if mode == "evade":
        mover = msgspec.structs.replace(mover, conditions={**mover.conditions, EVADING: f"end_of_turn:{mover_id}"})
    walking = msgspec.structs.replace(mover, taking_cover=False)
    square_ft = state.terrain.square_size
    strikers_ok = {e.id: combat.melee_reach_squares(state, e) for e in enemies if combat.best_melee_weapon(e) is not None and not e.reaction_used}
    shooters_ok = {
        e.id: e.ready.range[1]  # type: ignore[union-attr]
        for e in enemies
        if not e.reaction_used and e.ready is not None and e.ready.is_ranged and e.ready.template is None
    }
    positions = {e.id: tuple(e.position) for e in enemies}
    damaging = [(zone.id, {tuple(s) for s in zone.squares}) for zone in getattr(state, "zones", []) if zone.damage and zone.affected.get(mover_id) != areas.current_turn(state)]
    zone_squares = {tuple(s) for zone in getattr(state, "zones", []) for s in zone.squares}
    states: dict[tuple[Square, bool], EncounterState] = {}
    lane_memo: dict[Any, bool] = lanes if lanes is not None else {}
    chance_memo: dict[tuple[str, Square, str, bool], float | None] = {}
    heavy = {e.id for e in enemies if e.ready is not None and e.ready.has("heavy")}

    def standing_at(square: Square, moved: bool) -> EncounterState:
        """The state with the mover on ``square`` (moved: as it walks)."""
        key = (square, moved)
        found = states.get(key)
        if found is None:
            body = msgspec.structs.replace(walking if moved else mover, position=square)
            found = states[key] = msgspec.structs.replace(state, combatants={**state.combatants, mover_id: body})  # type: ignore[arg-type]
        return found

    def chance(reactor: str, square: Square, kind: str, moved: bool) -> float | None:
        key = (reactor, square, kind, moved)
        if key not in chance_memo:
            there = standing_at(square, moved)
            try:
                if kind == "reactive_fire":
                    plan = plan_reactive_fire(there, reactor, mover_id, square, mode)[0]
                else:
                    weapon = combat.best_melee_weapon(combat.combatant(there, reactor))
                    plan = combat.plan_attack(there, reactor, mover_id, weapon, kind="opportunity_strike")  # type: ignore[arg-type]
                chance_memo[key] = combat.plan_hit_chance(plan)
            except Rejected:
                chance_memo[key] = None  # the claim would be denied: no threat
        return chance_memo[key]

    def step(so_far: _WalkSoFar, here: Square, square: Square) -> _WalkSoFar:
        offered_rf, offered_os, flushed, moved, zones = set(so_far.offered_rf), set(so_far.offered_os), so_far.flushed, so_far.moved, set(so_far.zones)
        threats = list(so_far.threats)
        strikers = [
            e for e, reach in strikers_ok.items()
            if e not in offered_os and distance(positions[e], here) <= reach and opportunity_problem(state, e, mover_id, here, square) is None
        ]
        if strikers:
            moved, flushed = moved or here != flushed, here
            offered_os.update(strikers)
            for e in sorted(strikers):
                odds = chance(e, here, "opportunity_strike", moved)
                if odds is not None:
                    threats.append(Threat(reactor=e, reaction="opportunity_strike", at=here, hit_chance=odds, rule="BB-CMB-15"))
        if square in zone_squares:
            moved, flushed = True, square
            for zone_id, inside in damaging:
                if zone_id not in zones and square in inside:
                    zones.add(zone_id)
                    threats.append(Threat(reactor=zone_id, reaction="zone", at=square, rule="BB-CMB-26"))
        offers = []
        for e, reach in shooters_ok.items():
            if e in offered_rf or distance(positions[e], square) * square_ft > reach:  # as `reactive_fire_problem` measures range
                continue
            key = (e, square, flushed if e in heavy else None)
            ok = lane_memo.get(key)
            if ok is None:
                ok = lane_memo[key] = fire_lane_problem(standing_at(flushed, moved), e, mover_id, square) is None
            if ok:
                offers.append(e)
        if offers:
            moved, flushed = True, square
            offered_rf.update(offers)
            for e in sorted(offers):
                odds = chance(e, square, "reactive_fire", True)
                if odds is not None:
                    reactor = combat.combatant(state, e)
                    watching = on_overwatch_over(reactor, square)
                    threats.append(Threat(reactor=e, reaction="overwatch" if watching else "reactive_fire", at=square, hit_chance=odds,
                                          rule="BB-CMB-13" if watching else "BB-CMB-10"))
        return _WalkSoFar(frozenset(offered_rf), frozenset(offered_os), flushed, moved, frozenset(zones), tuple(threats))

    origin = _WalkSoFar(frozenset(), frozenset(), start, False, frozenset(), ())
    walked: dict[Square, _WalkSoFar] = {start: origin}
    for square, path in sorted(paths.items(), key=lambda item: len(item[1])):
        if not path:
            continue
        parent = path[-2] if len(path) > 1 else start
        before = walked.get(parent)
        if before is None:  # not a tree: walk the whole path
            before, here = origin, start
            for previous in path[:-1]:
                before, here = step(before, here, previous), previous
        walked[square] = step(before, parent, square)
    return {square: list(walked[square].threats) for square in paths if square in walked and paths[square]}


def enemy_reach(state: EncounterState, enemy: BoltAndBladeCombatant) -> int:
    """The farthest, in squares, an enemy can react to a mover: its melee reach
    (Opportunity Strike) or its ready ranged weapon's maximum range (Reactive Fire)."""
    reach = combat.melee_reach_squares(state, enemy)
    weapon = enemy.ready
    if weapon is not None and weapon.is_ranged:
        reach = max(reach, int(weapon.range[1] // state.terrain.square_size))
    return reach
