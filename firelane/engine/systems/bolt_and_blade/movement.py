"""Bolt & Blade movement: Tactical Move, Dash, Evade, costs, exposure and fire lanes.

A move is validated whole (every step legal, the cost within the Movement
left), then walked square by square (BB-CMB-06):

- before a step leaves an enemy's melee reach, that enemy may make an
  Opportunity Strike (BB-CMB-15) unless the mover Disengaged (BB-CMB-09);
- entering open ground (a square with no cover on it) that an enemy sees
  makes the mover Exposed (BB-CMB-05, -06) until it reaches cover, takes
  cover, or its next turn starts;
- entering a square of an enemy's fire lane (open line of sight, within the
  maximum range of its loaded ready ranged weapon, no cover on the square
  facing it, BB-CMB-02) offers that enemy Reactive Fire if it still has its
  Reaction (BB-CMB-03, -10). Each enemy is offered Reactive Fire once per move
  (house default: the text warns against "ten extra attacks"); an enemy on
  Overwatch is offered again when the mover enters its watched area (BB-CMB-13).

A window's continuation holds the rest of the path, so after the reactions
the walk resumes where it was — or not, if the mover stopped or went down.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from firelane.engine.core import Decision, require
from firelane.engine.dice import Dice
from firelane.engine.grid import Square, cover_level_against, distance, has_cover_feature, in_fire_lane, step_allowed
from firelane.engine.state import EncounterState
from firelane.engine.systems.bolt_and_blade import areas
from firelane.engine.systems.bolt_and_blade.system import DISENGAGED, EVADING, EXPOSED, OVERWATCH, PINNED, STUNNED, grid_of
from firelane.events.bolt_and_blade_schemas import BBMove, BBMovementStopped
from firelane.events.schemas import ConditionApplied, ConditionRemoved, EligibleReactor, Moved

if TYPE_CHECKING:
    from firelane.engine.systems.bolt_and_blade.state import BoltAndBladeCombatant
    from firelane.engine.systems.bolt_and_blade.system import BoltAndBladeSystem

MOVE_MODES = ("tactical", "dash", "evade")
FIRE_CHOICES = ("continue", "stop")
MODE_RULES = {"tactical": "BB-CMB-06", "dash": "BB-CMB-07", "evade": "BB-CMB-08"}


# ---------------------------------------------------------------- costs


def step_cost(state: EncounterState, mover: BoltAndBladeCombatant, frm: Square, to: Square) -> float:
    """Feet one step costs: a square (5 ft, diagonals too); entering a cover
    square costs 5 ft flat (BB-CMB-29); open ground costs double while Pinned
    (BB-CMB-19) and in difficult terrain."""
    return entry_cost(state, mover, to)


def entry_cost(state: EncounterState, mover: BoltAndBladeCombatant, square: Square) -> float:
    """What stepping onto ``square`` costs the mover (`step_cost`): the square
    entered alone sets the cost, wherever the step comes from."""
    grid = grid_of(state)
    return ground_cost(state, mover, cover=has_cover_feature(grid, square), difficult=tuple(square) in grid.difficult)


def ground_cost(state: EncounterState, mover: BoltAndBladeCombatant, *, cover: bool, difficult: bool) -> float:
    """What entering a square costs the mover, by the kind of ground: with
    cover on it, difficult or not (`entry_cost`)."""
    settings = state.settings
    square_ft = float(state.terrain.square_size)
    if cover:
        return float(settings.get("enter_cover_cost_ft", 5))
    cost = square_ft
    if PINNED in mover.conditions:
        cost *= float(settings.get("pinned_move_multiplier", 2))
    if difficult:
        cost *= float(settings.get("difficult_move_multiplier", 2))
    return cost


def path_cost(state: EncounterState, mover: BoltAndBladeCombatant, start: Square, path: list[Square]) -> float:
    total = 0.0
    here = start
    for square in path:
        total += step_cost(state, mover, here, square)
        here = square
    return total


def movement_left(mover: BoltAndBladeCombatant) -> float:
    return mover.movement_allowance_ft - mover.movement_used_ft


def occupant(state: EncounterState, square: Square, *, besides: str = "") -> str | None:
    """The standing combatant on a square (the fallen do not block), if any."""
    return occupied_squares(state, besides=besides).get(square)


def occupied_squares(state: EncounterState, *, besides: str = "") -> dict[Square, str]:
    """Every square's `occupant`: where several stand on one square, the first by ID."""
    occupied: dict[Square, str] = {}
    for cid in sorted(state.combatants):
        other = state.combatants[cid]
        if cid != besides and not other.out_of_fight and other.position is not None:
            occupied.setdefault(tuple(other.position), cid)  # type: ignore[arg-type]
    return occupied


def path_problem(state: EncounterState, mover: BoltAndBladeCombatant, path: list[Square]) -> str | None:
    """Why a path cannot be walked, or None. Allies may be passed through;
    enemies may not; the last square must be free."""
    grid = grid_of(state)
    here: Square = mover.position  # type: ignore[assignment]
    for square in path:
        problem = step_allowed(grid, here, square)
        if problem is not None:
            return problem
        blocker = occupant(state, square, besides=mover.id)
        if blocker is not None and state.combatants[blocker].side != mover.side:
            return f"{square} is held by the enemy {blocker}"
        here = square
    blocker = occupant(state, path[-1], besides=mover.id)
    if blocker is not None:
        return f"cannot end the move on {path[-1]}: {blocker} stands there"
    return None


# ---------------------------------------------------------------- starting a move


def start_move(system: BoltAndBladeSystem, decision: Decision, command: BBMove, dice: Dice) -> None:
    state = decision.state
    mover = system.combatant(state, system.require_turn(state, command.actor).id)
    require(command.mode in MOVE_MODES, f"unknown move mode {command.mode!r}; use one of {', '.join(MOVE_MODES)}")
    choice = command.on_reactive_fire or str(state.settings.get("reactive_fire_choice", "continue"))
    require(choice in FIRE_CHOICES, f"on_reactive_fire must be 'continue' or 'stop', not {choice!r}")
    require(bool(command.path), "a move needs at least one square")
    require(mover.position is not None, f"{mover.id} is not on the map")
    require(not mover.movement_halted, f"{mover.id}'s movement was stopped this turn")
    path: list[Square] = [(int(s[0]), int(s[1])) for s in command.path]
    problem = path_problem(state, mover, path)
    require(problem is None, f"illegal path: {problem}")
    allowance = movement_left(mover)
    if command.mode in ("dash", "evade"):
        require(not mover.action_used, f"{mover.id} has already used its Action this turn; {command.mode.title()} needs it")
        allowance += mover.movement_ft
    if command.mode == "evade":
        require(not mover.attacked_this_turn, f"{mover.id} attacked this turn and cannot Evade (BB-CMB-08)")
    cost = path_cost(state, mover, mover.position, path)  # type: ignore[arg-type]
    require(cost <= allowance, f"the path costs {cost:g} ft but {mover.id} has only {allowance:g} ft of movement left")
    if command.mode in ("dash", "evade"):
        system.spend_action(decision, mover.id, action=command.mode, rule=MODE_RULES[command.mode])
    if command.mode == "evade":
        decision.emit(ConditionApplied(combatant=mover.id, condition=EVADING, rule="BB-CMB-08", until=f"end_of_turn:{mover.id}"))
    walk(system, decision, {"kind": "move", "mover": mover.id, "rest": [list(s) for s in path], "mode": command.mode, "choice": choice, "offered_rf": [], "offered_ow": [], "offered_os": []}, dice)


# ---------------------------------------------------------------- eligibility


def reactive_fire_problem(system: BoltAndBladeSystem, state: EncounterState, reactor_id: str, mover_id: str, square: Square) -> str | None:
    """Why ``reactor_id`` cannot Reactive Fire at ``mover_id`` on ``square`` (BB-CMB-10), or None."""
    reactor = system.combatant(state, reactor_id)
    mover = system.combatant(state, mover_id)
    if reactor.out_of_fight:
        return f"{reactor_id} is down"
    if reactor.side == mover.side:
        return f"{mover_id} is on {reactor_id}'s side"
    if reactor.reaction_used:
        return f"{reactor_id} has already used its Reaction this round"
    if PINNED in reactor.conditions:
        return f"{reactor_id} is Pinned and cannot use Reactive Fire (BB-CMB-19)"
    if STUNNED in reactor.conditions:
        return f"{reactor_id} is Stunned"
    weapon = reactor.ready
    if weapon is None or not weapon.is_ranged or weapon.template is not None:
        return f"{reactor_id} has no ranged weapon ready"
    problem = system.weapon_problem(state, reactor, weapon, reactive=True)
    if problem is not None:
        return problem
    if weapon.has("heavy") and system.engaged(state, reactor_id):
        return f"{weapon.name} cannot fire while {reactor_id} is engaged (BB-CMB-16)"
    here: Square = reactor.position  # type: ignore[assignment]
    if distance(here, square) * state.terrain.square_size > weapon.range[1]:
        return f"{mover_id} is beyond the range of {reactor_id}'s {weapon.name}"
    if not system.sees(state, here, square):
        return f"{reactor_id} cannot see {mover_id}"
    if cover_level_against(grid_of(state), square, here) != "none":
        return f"{mover_id} is in cover from {reactor_id}, not in its fire lane"
    return None


def on_overwatch_over(reactor: BoltAndBladeCombatant, square: Square) -> bool:
    return OVERWATCH in reactor.conditions and square in {tuple(s) for s in reactor.overwatch_area}


def opportunity_problem(system: BoltAndBladeSystem, state: EncounterState, reactor_id: str, mover_id: str, frm: Square, to: Square) -> str | None:
    """Why ``reactor_id`` gets no Opportunity Strike as ``mover_id`` steps frm -> to (BB-CMB-15)."""
    reactor = system.combatant(state, reactor_id)
    mover = system.combatant(state, mover_id)
    if reactor.out_of_fight:
        return f"{reactor_id} is down"
    if reactor.side == mover.side:
        return f"{mover_id} is on {reactor_id}'s side"
    if reactor.reaction_used:
        return f"{reactor_id} has already used its Reaction this round"
    if STUNNED in reactor.conditions:
        return f"{reactor_id} is Stunned"
    if system.best_melee_weapon(reactor) is None:
        return f"{reactor_id} has no melee weapon"
    if DISENGAGED in mover.conditions:
        return f"{mover_id} Disengaged (BB-CMB-09)"
    reach = system.melee_reach_squares(state, reactor)
    here: Square = reactor.position  # type: ignore[assignment]
    if distance(here, frm) > reach:
        return f"{mover_id} is not within {reactor_id}'s reach"
    if distance(here, to) <= reach:
        return f"{mover_id} does not leave {reactor_id}'s reach"
    return None


def enemy_sees(system: BoltAndBladeSystem, state: EncounterState, mover_id: str, square: Square) -> bool:
    return any(system.sees(state, e.position, square) for e in system.standing_enemies(state, mover_id))  # type: ignore[arg-type]


# ---------------------------------------------------------------- the walk


def walk(system: BoltAndBladeSystem, decision: Decision, continuation: dict[str, Any], dice: Dice) -> None:
    """Walk the rest of a move until it ends, or a reaction window interrupts it."""
    state = decision.state
    mover_id: str = continuation["mover"]
    mode: str = continuation["mode"]
    rest: list[Square] = [(int(s[0]), int(s[1])) for s in continuation["rest"]]
    offered_rf: list[str] = list(continuation["offered_rf"])
    offered_ow: list[str] = list(continuation["offered_ow"])
    offered_os: list[str] = list(continuation["offered_os"])
    segment: list[Square] = []
    segment_cost = 0.0
    grid = grid_of(state)
    zone_squares = {tuple(s) for zone in getattr(state, "zones", []) for s in zone.squares}

    def flush() -> None:
        nonlocal segment, segment_cost
        if not segment:
            return
        mover_now = system.combatant(state, mover_id)
        decision.emit(Moved(combatant=mover_id, path=list(segment), mode=mode, cost=segment_cost, exposed=EXPOSED in mover_now.conditions, rule=MODE_RULES[mode]))
        entered = list(segment)
        segment, segment_cost = [], 0.0
        areas.on_enter_squares(system, decision, mover_id, entered, dice)

    def pause(trigger: str, reactors: list[EligibleReactor], remaining: list[Square], rule: str) -> bool:
        return system.open_window(
            decision,
            trigger=trigger,
            actor=mover_id,
            reactors=reactors,
            continuation={**continuation, "rest": [list(s) for s in remaining], "offered_rf": offered_rf, "offered_ow": offered_ow, "offered_os": offered_os},
            rule=rule,
        )

    for index, square in enumerate(rest):
        mover = system.combatant(state, mover_id)
        here: Square = segment[-1] if segment else mover.position  # type: ignore[assignment]
        strikers = [
            e.id for e in system.standing_enemies(state, mover_id)
            if e.id not in offered_os and opportunity_problem(system, state, e.id, mover_id, here, square) is None
        ]
        if strikers:
            flush()
            if system.combatant(state, mover_id).out_of_fight:
                return
            offered_os.extend(strikers)
            if pause("leaving_reach", [EligibleReactor(combatant=s, reactions=["opportunity_strike"]) for s in strikers], rest[index:], "BB-CMB-15"):
                return
        segment_cost += step_cost(state, mover, here, square)
        segment.append(square)
        if not has_cover_feature(grid, square) and EXPOSED not in mover.conditions and enemy_sees(system, state, mover_id, square):
            flush()
            decision.emit(ConditionApplied(combatant=mover_id, condition=EXPOSED, rule="BB-CMB-05", until=f"start_of_turn:{mover_id}", details={"square": list(square), "why": "crossed open ground in enemy sight (BB-CMB-06)"}))
        if square in zone_squares:
            flush()
        if system.combatant(state, mover_id).out_of_fight:
            return
        offers: list[EligibleReactor] = []
        for enemy in system.standing_enemies(state, mover_id):
            watching = on_overwatch_over(enemy, square)
            fresh = enemy.id not in offered_rf or (watching and enemy.id not in offered_ow)
            if fresh and reactive_fire_problem(system, state, enemy.id, mover_id, square) is None:
                offers.append(EligibleReactor(combatant=enemy.id, reactions=["reactive_fire"]))
                if enemy.id not in offered_rf:
                    offered_rf.append(enemy.id)
                if watching:
                    offered_ow.append(enemy.id)
        if offers:
            flush()
            if pause("fire_lane", offers, rest[index + 1:], "BB-CMB-02"):
                return
    flush()
    finish_move(system, decision, mover_id)


def finish_move(system: BoltAndBladeSystem, decision: Decision, mover_id: str) -> None:
    """A mover that ends its move on a cover square is no longer Exposed."""
    mover = system.combatant(decision.state, mover_id)
    if mover.out_of_fight or EXPOSED not in mover.conditions or mover.position is None:
        return
    if has_cover_feature(grid_of(decision.state), tuple(mover.position)):  # type: ignore[arg-type]
        decision.emit(ConditionRemoved(combatant=mover_id, condition=EXPOSED, reason="reached cover", rule="BB-CMB-05"))


def stop_movement(system: BoltAndBladeSystem, decision: Decision, mover_id: str, continuation: dict[str, Any], reason: str, rule: str) -> None:
    mover = system.combatant(decision.state, mover_id)
    decision.emit(
        BBMovementStopped(
            combatant=mover_id,
            at=tuple(mover.position),  # type: ignore[arg-type]
            reason=reason,
            unused_path=[(int(s[0]), int(s[1])) for s in continuation.get("rest", [])],
            rule=rule,
        )
    )
    finish_move(system, decision, mover_id)


def fire_lane_watchers(system: BoltAndBladeSystem, state: EncounterState, mover_id: str, square: Square) -> list[str]:
    """Enemies whose fire lane covers ``square`` (whatever their Reaction)."""
    grid = grid_of(state)
    return [
        enemy for enemy, there, reach in fire_lane_shooters(system, state, mover_id)
        if in_fire_lane(grid, square, there, reach, sees=system.sees(state, there, square))
    ]


def fire_lane_shooters(system: BoltAndBladeSystem, state: EncounterState, mover_id: str) -> list[tuple[str, Square, int]]:
    """(enemy, its square, its reach in squares) for each standing enemy of the
    mover with a ranged weapon ready: the enemies that have fire lanes."""
    shooters = []
    for enemy in system.standing_enemies(state, mover_id):
        weapon = enemy.ready
        if weapon is not None and weapon.is_ranged:
            shooters.append((enemy.id, enemy.position, int(weapon.range[1] // state.terrain.square_size)))
    return shooters  # type: ignore[return-value]
