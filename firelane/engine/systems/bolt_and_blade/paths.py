"""Bolt & Blade paths: what a move costs and may cross, who can react to it,
and how a move ends.

Third floor of the package (see the package docstring), below the reactions
and the walk (`movement`) that both use it:

- costs: a square (5 ft, diagonals too); entering a cover square 5 ft
  (BB-CMB-29); open ground double while Pinned (BB-CMB-19) and in difficult
  terrain;
- legality: every step adjacent and open, no enemy squares, a free last square;
- eligibility: Reactive Fire at a mover in an enemy's fire lane (BB-CMB-02,
  -10) and the Opportunity Strike at a mover leaving reach (BB-CMB-15);
- the end of a move: stopped early (`stop_movement`), and the Reactive Fire
  held for squares it never reached (`lapse_held_shots`).
"""

from __future__ import annotations

import heapq
from typing import Any

import msgspec

from firelane.engine.core import Decision, Rejected, require
from firelane.engine.grid import Square, cover_level_against, distance, has_cover_feature, in_fire_lane, step_allowed
from firelane.engine.occupancy import taken_squares
from firelane.engine.state import EncounterState
from firelane.engine.systems.bolt_and_blade import combat
from firelane.engine.systems.bolt_and_blade.combat import grid_of
from firelane.engine.systems.bolt_and_blade.sight import steps
from firelane.engine.systems.bolt_and_blade.constants import DISENGAGED, OVERWATCH, PINNED, STUNNED
from firelane.engine.systems.bolt_and_blade.state import BoltAndBladeCombatant, HeldShot
from firelane.engine.systems.bolt_and_blade.schemas import BBMovementStopped
from firelane.events.schemas import ReactionDenied


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
    """The standing combatant on a square (the fallen do not block a step), if any."""
    return occupied_squares(state, besides=besides).get(square)


def end_taken(state: EncounterState, *, besides: str = "") -> dict[Square, str]:
    """The squares a move may not end on: anyone's, standing or down
    (`firelane.engine.occupancy`: one combatant to a square; a body is
    stepped over, never ended on)."""
    return taken_squares(state, besides=[besides] if besides else [])


def occupied_squares(state: EncounterState, *, besides: str = "") -> dict[Square, str]:
    """Every square's `occupant`: where several stand on one square, the first by ID."""
    occupied: dict[Square, str] = {}
    for cid in sorted(state.combatants):
        other = state.combatants[cid]
        if cid != besides and not other.out_of_fight and other.position is not None:
            occupied.setdefault(tuple(other.position), cid)  # type: ignore[arg-type]
    return occupied


def path_problem(state: EncounterState, mover: BoltAndBladeCombatant, path: list[Square]) -> str | None:
    """Why a path cannot be walked, or None. Allies (and the fallen) may be
    passed through; standing enemies may not; the last square must be free of
    anyone, standing or down (`end_taken`)."""
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
    blocker = end_taken(state, besides=mover.id).get(tuple(path[-1]))  # type: ignore[arg-type]
    if blocker is not None:
        return f"cannot end the move on {path[-1]}: {blocker} {'lies' if state.combatants[blocker].out_of_fight else 'stands'} there"
    return None


# ---------------------------------------------------------------- the path a move takes


def cheapest_paths(
    state: EncounterState, mover: BoltAndBladeCombatant, budget: float, *, occupied: dict[Square, str] | None = None,
    goal: Square | None = None,
) -> dict[Square, tuple[float, list[Square]]]:
    """The cheapest path (and its cost in feet) from the mover's square to every
    square it can reach within ``budget`` ft: the path a move by destination
    takes, the one its option shows (`move_destinations`, `route`).

    Dijkstra over legal steps (`Grid.steps_from`, as `sight.Steps`: adjacent, on the map, no wall,
    no squeezing between two walls), never through an enemy's square (allies
    may be passed, `path_problem`), each step costing `entry_cost`. It is
    deterministic: squares are settled cheapest first, then by (x, y), and of
    equally cheap paths to a square the one through the square settled first
    is kept; so the path to a square does not depend on the budget, as long as
    it reaches it. Every square reached is listed, the start (with an empty
    path) and those where an ally stands (passed, not ended on) included.
    ``occupied``: `occupied_squares` besides the mover, when the caller has it.
    ``goal``: stop once the path to that square is settled (it is final then;
    the squares not yet settled may be missing or not yet cheapest)."""
    grid = grid_of(state)
    start: Square = (int(mover.position[0]), int(mover.position[1]))  # type: ignore[index]
    held = occupied if occupied is not None else occupied_squares(state, besides=mover.id)
    combatants = state.combatants
    enemy_held = {square for square, cid in held.items() if combatants[cid].side != mover.side}
    kinds: dict[tuple[bool, bool], float] = {}
    costs: dict[Square, float] = {}
    cover_at, difficult, steps_from = grid.cover_at, grid.difficult, steps(state, grid).steps_from  # `Grid.steps_from`, faster
    cheapest: dict[Square, float] = {start: 0.0}
    paths: dict[Square, list[Square]] = {start: []}
    queue: list[tuple[float, Square]] = [(0.0, start)]
    while queue:
        cost, square = heapq.heappop(queue)
        if cost > cheapest[square]:
            continue  # a stale queue entry: the square was reached more cheaply since
        if square == goal:
            break
        path = paths[square]
        for nxt in steps_from(square):
            if nxt in enemy_held:
                continue
            step = costs.get(nxt)
            if step is None:
                kind = (nxt in cover_at, nxt in difficult)
                step = kinds.get(kind)
                if step is None:
                    step = kinds[kind] = ground_cost(state, mover, cover=kind[0], difficult=kind[1])
                costs[nxt] = step
            total = cost + step
            if total > budget:
                continue
            known = cheapest.get(nxt)
            if known is None or total < known:
                cheapest[nxt] = total
                paths[nxt] = path + [nxt]
                heapq.heappush(queue, (total, nxt))
    return {square: (cost, paths[square]) for square, cost in cheapest.items()}


def move_destinations(
    state: EncounterState, mover: BoltAndBladeCombatant, budget: float, *, occupied: dict[Square, str] | None = None,
) -> dict[Square, tuple[float, list[Square]]]:
    """`cheapest_paths` to the squares a move may end on: those no one holds,
    standing or down (`end_taken`), and the start."""
    held = occupied if occupied is not None else occupied_squares(state, besides=mover.id)
    taken = end_taken(state, besides=mover.id)
    start = tuple(mover.position)  # type: ignore[arg-type]
    return {square: found for square, found in cheapest_paths(state, mover, budget, occupied=held).items()
            if square == start or square not in taken}


def route(state: EncounterState, mover: BoltAndBladeCombatant, to: Square, waypoints: list[Square], budget: float, mode: str) -> list[Square]:
    """The path of a move named by its destination ``to`` (and the ``waypoints``
    it passes, in order): the cheapest path to each in turn (`cheapest_paths`),
    within ``budget`` ft in all. Raises Rejected with what is wrong and what is
    allowed instead (the movement left, the nearest squares it can reach)."""
    grid = grid_of(state)
    held = occupied_squares(state, besides=mover.id)
    stops = [*waypoints, to]
    for index, square in enumerate(stops):
        what = "waypoint" if index < len(waypoints) else "destination"
        require(grid.in_bounds(square), f"{what} {square} is off the {state.terrain.width}x{state.terrain.height} map")
        require(square not in grid.walls, f"{what} {square} is a wall")
        blocker = held.get(square)
        if blocker is not None and state.combatants[blocker].side != mover.side:
            raise Rejected(f"{what} {square} is held by the enemy {blocker}")
    blocker = end_taken(state, besides=mover.id).get(to)
    require(blocker is None, f"cannot end the move on {to}: {blocker} {'lies' if blocker and state.combatants[blocker].out_of_fight else 'stands'} there")
    require(to != tuple(mover.position), f"{mover.id} is already on {to}")  # type: ignore[arg-type]
    path: list[Square] = []
    spent = 0.0
    walker = mover
    for index, square in enumerate(stops):
        left = budget - spent
        found = cheapest_paths(state, walker, left, occupied=held, goal=square).get(square)
        if found is None:
            raise Rejected(unreachable_reason(state, walker, square, left, mode, final=index == len(waypoints), held=held))
        cost, leg = found
        path += leg
        spent += cost
        walker = msgspec.structs.replace(walker, position=square)
    return path


def unreachable_reason(state: EncounterState, mover: BoltAndBladeCombatant, square: Square, left: float, mode: str, *, final: bool, held: dict[Square, str]) -> str:
    """Why ``square`` cannot be reached with ``left`` ft, and what can be."""
    what = "destination" if final else "waypoint"
    anywhere = cheapest_paths(state, mover, float("inf"), occupied=held).get(square)
    if anywhere is None:
        why = f"no path leads there from {tuple(mover.position)}"  # type: ignore[arg-type]
    else:
        why = f"the cheapest path costs {anywhere[0]:g} ft but {mover.id} has {left:g} ft of movement left ({mode})"
    near = move_destinations(state, mover, left, occupied=held) if final else cheapest_paths(state, mover, left, occupied=held)
    start = tuple(mover.position)  # type: ignore[arg-type]
    nearest = sorted((s for s in near if s != start),
                     key=lambda s: (distance(s, square), (s[0] - square[0]) ** 2 + (s[1] - square[1]) ** 2, near[s][0], s[1], s[0]))[:3]
    offer = ", ".join(f"{s} ({near[s][0]:g} ft)" for s in nearest) if nearest else "none"
    return f"{what} {square} is not reachable: {why}; nearest reachable: {offer}"


# ---------------------------------------------------------------- eligibility


def fire_lane_problem(state: EncounterState, reactor_id: str, mover_id: str, square: Square) -> str | None:
    """Why ``mover_id`` entering ``square`` does not offer ``reactor_id`` Reactive
    Fire (BB-CMB-02, -10), or None: the square must be in the reactor's fire lane
    (no cover on it facing the reactor) and the reactor able to fire there."""
    problem = reactive_fire_problem(state, reactor_id, mover_id, square)
    if problem is not None:
        return problem
    reactor = combat.combatant(state, reactor_id)
    if cover_level_against(grid_of(state), square, reactor.position) != "none":  # type: ignore[arg-type]
        return f"{mover_id} is in cover from {reactor_id}, not in its fire lane"
    return None


def fire_squares(state: EncounterState, reactor_id: str, squares: list[Square]) -> list[Square]:
    """The squares of a path (from the one the mover stands on) where ``reactor_id``
    may resolve its Reactive Fire: those it sees and has in its weapon's range,
    in path order, each once (BB-CMB-10: the reactor chooses where along its
    lane). A square whose cover against the reactor is total is left out: no
    attack can target a creature there (BB-CMB-04)."""
    reactor = combat.combatant(state, reactor_id)
    weapon = reactor.ready
    if weapon is None or reactor.position is None:
        return []
    here: Square = reactor.position  # type: ignore[assignment]
    reach_ft = weapon.range[1]
    sees = combat.sight_test(state)
    grid = grid_of(state)
    chosen: list[Square] = []
    for square in squares:
        if (
            square not in chosen
            and distance(here, square) * state.terrain.square_size <= reach_ft
            and sees(here, square)
            and cover_level_against(grid, square, here) != "total"
        ):
            chosen.append(square)
    return chosen


def _reaction_problem(state: EncounterState, reactor_id: str, mover_id: str) -> str | None:
    """Why ``reactor_id`` cannot react to ``mover_id`` at all now (down, on its
    side, its Reaction used this round), or None: what both Reactive Fire and
    the Opportunity Strike ask first."""
    reactor = combat.combatant(state, reactor_id)
    mover = combat.combatant(state, mover_id)
    if reactor.out_of_fight:
        return f"{reactor_id} is down"
    if reactor.side == mover.side:
        return f"{mover_id} is on {reactor_id}'s side"
    if reactor.reaction_used:
        return f"{reactor_id} has already used its Reaction this round"
    return None


def reactive_fire_problem(state: EncounterState, reactor_id: str, mover_id: str, square: Square) -> str | None:
    """Why ``reactor_id`` cannot Reactive Fire at ``mover_id`` on ``square`` now (BB-CMB-10), or None."""
    problem = _reaction_problem(state, reactor_id, mover_id)
    if problem is not None:
        return problem
    reactor = combat.combatant(state, reactor_id)
    if PINNED in reactor.conditions:
        return f"{reactor_id} is Pinned and cannot use Reactive Fire (BB-CMB-19)"
    if STUNNED in reactor.conditions:
        return f"{reactor_id} is Stunned"
    weapon = reactor.ready
    if weapon is None or not weapon.is_ranged or weapon.template is not None:
        return f"{reactor_id} has no ranged weapon ready"
    problem = combat.weapon_problem(state, reactor, weapon, reactive=True)
    if problem is not None:
        return problem
    if weapon.has("heavy") and combat.engaged(state, reactor_id):
        return f"{weapon.name} cannot fire while {reactor_id} is engaged (BB-CMB-16)"
    here: Square = reactor.position  # type: ignore[assignment]
    if distance(here, square) * state.terrain.square_size > weapon.range[1]:
        return f"{mover_id} is beyond the range of {reactor_id}'s {weapon.name}"
    if not combat.sees(state, here, square):
        return f"{reactor_id} cannot see {mover_id}"
    return None


def on_overwatch_over(reactor: BoltAndBladeCombatant, square: Square) -> bool:
    return OVERWATCH in reactor.conditions and square in {tuple(s) for s in reactor.overwatch_area}


def opportunity_problem(state: EncounterState, reactor_id: str, mover_id: str, frm: Square, to: Square) -> str | None:
    """Why ``reactor_id`` gets no Opportunity Strike as ``mover_id`` steps frm -> to (BB-CMB-15)."""
    problem = _reaction_problem(state, reactor_id, mover_id)
    if problem is not None:
        return problem
    reactor = combat.combatant(state, reactor_id)
    mover = combat.combatant(state, mover_id)
    if STUNNED in reactor.conditions:
        return f"{reactor_id} is Stunned"
    if combat.best_melee_weapon(reactor) is None:
        return f"{reactor_id} has no melee weapon"
    if DISENGAGED in mover.conditions:
        return f"{mover_id} Disengaged (BB-CMB-09)"
    reach = combat.melee_reach_squares(state, reactor)
    here: Square = reactor.position  # type: ignore[assignment]
    if distance(here, frm) > reach:
        return f"{mover_id} is not within {reactor_id}'s reach"
    if distance(here, to) <= reach:
        return f"{mover_id} does not leave {reactor_id}'s reach"
    return None


def exposed_to_enemy_sight(state: EncounterState, mover_id: str, square: Square) -> bool:
    """Whether a mover on ``square`` is in open ground in some enemy's sight:
    Exposed to that enemy (BB-CMB-05, -06; a mover has given up Take Cover)."""
    grid = grid_of(state)
    return any(
        combat.sees(state, e.position, square) and cover_level_against(grid, square, e.position) == "none"  # type: ignore[arg-type]
        for e in combat.standing_enemies(state, mover_id)
    )


# ---------------------------------------------------------------- the end of a move


def stop_movement(decision: Decision, mover_id: str, continuation: dict[str, Any], reason: str, rule: str) -> None:
    """End a move early where the mover stands, or, if that square is someone
    else's (an ally it was passing), on the last square of its path it may end
    on (`stop_square`): one combatant to a square (`firelane.engine.occupancy`)."""
    mover = combat.combatant(decision.state, mover_id)
    at, reason = stop_square(decision.state, mover, continuation, reason)
    decision.emit(
        BBMovementStopped(
            combatant=mover_id,
            at=at,
            reason=reason,
            unused_path=[(int(s[0]), int(s[1])) for s in continuation.get("rest", [])],
            rule=rule,
        )
    )
    lapse_held_shots(decision, mover_id, f"{mover_id} stopped at {at}", here=f"{mover_id} has already stopped")


def stop_square(state: EncounterState, mover: BoltAndBladeCombatant, continuation: dict[str, Any], reason: str) -> tuple[Square, str]:
    """Where a move stopped part-way ends, and the reason to record: the
    mover's square, or — when someone else holds it — the last square of the
    path walked that it may end on (``back_to`` of the move, kept by the walk
    while it passes others' squares), with a word on why it stands there."""
    here: Square = (int(mover.position[0]), int(mover.position[1]))  # type: ignore[index]
    holder = end_taken(state, besides=mover.id).get(here)
    back_to = continuation.get("back_to")
    if holder is None or back_to is None:
        return here, reason
    at: Square = (int(back_to[0]), int(back_to[1]))
    name = state.combatants[holder].name or holder
    verb = "lies" if mover.out_of_fight else "stops"
    return at, f"{reason}; {name} holds ({here[0]},{here[1]}), so it {verb} on ({at[0]},{at[1]}), the last square it may end on"


def held_shots_at(state: EncounterState, mover_id: str, square: Square) -> list[HeldShot]:
    """The Reactive Fire held for ``mover_id`` reaching ``square``, in the order it resolves."""
    return [shot for shot in getattr(state, "held_shots", []) if shot.mover == mover_id and tuple(shot.square) == tuple(square)]


def lapse_held_shots(decision: Decision, mover_id: str, why: str, *, here: str = "") -> None:
    """The move is over (stopped, ended, or the mover fell) before reaching the
    squares some reactors held their fire for: those claims are denied, and
    their Reactions stay unspent (BB-CMB-10). A shot held for the square the
    mover stopped or fell on is denied too, with ``here`` as the reason: Reactive
    Fire answers movement, and as in a window a later claim at a mover that has
    stopped is denied."""
    mover = combat.combatant(decision.state, mover_id)
    position = tuple(mover.position) if mover.position is not None else None
    for shot in [s for s in getattr(decision.state, "held_shots", []) if s.mover == mover_id]:
        at_mover = tuple(shot.square) == position
        decision.emit(
            ReactionDenied(
                window=shot.window,
                combatant=shot.reactor,
                reaction="reactive_fire",
                reason=(here or why) if at_mover else f"{why} before reaching {tuple(shot.square)}",
            )
        )


def fire_lane_watchers(state: EncounterState, mover_id: str, square: Square) -> list[str]:
    """Enemies whose fire lane covers ``square`` (whatever their Reaction)."""
    grid = grid_of(state)
    return [
        enemy for enemy, there, reach in fire_lane_shooters(state, mover_id)
        if in_fire_lane(grid, square, there, reach, sees=combat.sees(state, there, square))
    ]


def fire_lane_shooters(state: EncounterState, mover_id: str) -> list[tuple[str, Square, int]]:
    """(enemy, its square, its reach in squares) for each standing enemy of the
    mover with a ranged weapon ready: the enemies that have fire lanes."""
    shooters = []
    for enemy in combat.standing_enemies(state, mover_id):
        weapon = enemy.ready
        if weapon is not None and weapon.is_ranged:
            shooters.append((enemy.id, enemy.position, int(weapon.range[1] // state.terrain.square_size)))
    return shooters  # type: ignore[return-value]

