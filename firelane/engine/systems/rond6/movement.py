"""RonD6 movement (R6-09 .. R6-12) as decisions: the commands R6Move, R6Jump and
R6HoldBreath, the strenuous-activity count, and path finding for the AI.

The rules themselves, their house defaults and settings are in
`movement_rules` (pure, on the bottom floor); this module validates the
commands against the map, spends the actions and rolls the tests.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import msgspec

from firelane.engine.occupancy import bodies, taken_squares, trim_to_free_end
from firelane.engine.core import SEQUENCER, Decision, Rejected, require
from firelane.engine.seats import GM
from firelane.engine.dice import Dice
from firelane.engine.grid import Grid, adjacent, direction, distance
from firelane.engine.routes import reachable, reachable_summary, route
from firelane.engine.systems.rond6 import combat, rolling, rules
from firelane.engine.systems.rond6.movement_rules import (  # re-exported: callers and tests read them here too
    BASIC_ACTION_MULTIPLE,
    COMBAT_SPACE_METRES,
    JUMP_BASE_SPACES,
    JUMP_MAX_EXTRA_SPACES,
    JUMP_POINTS_PER_SPACE,
    MAX_MOVE_MULTIPLE,
    MODE_SKILL,
    MOVEMENT_DEFAULTS,
    MOVEMENT_TEST_LEVELS,
    MOVE_MODES,
    MOVE_PACES,
    RULE_MOVE,
    RULE_MOVEMENT_TEST,
    RULE_SPECIAL_MOVEMENT,
    RULE_TERRAIN,
    TERRAIN_LEVELS,
    base_move,
    breath_seconds,
    climb_move,
    effective_move,
    halve,
    has_running_start,
    jump_spaces,
    mode_move,
    move_multiple,
    movement_settings,
    movement_test_level,
    partial_move,
    prepared_breath_minutes,
    run_action_kind,
    strenuous_streak,
    strenuous_test_steps,
    swim_move,
    terrain_levels,
)
from firelane.engine.systems.rond6.pools import combatant_store, difficulty
from firelane.engine.systems.rond6.aux_schemas import R6HoldBreath, R6Jump, R6Move, R6Strenuous
from firelane.events.schemas import ActionTaken, Command, Moved, TestRolled

# Commands R6Move, R6Jump and R6HoldBreath are resolved through the main system's
# `spend_action` (declared actions and the multi-action penalty, R6-05/07).


def require_acting(system: Any, state: Any, actor: str) -> Any:
    """The acting combatant: on its own turn, or resolving a Wait interruption
    (R6-08) when the main system says so (``system.interrupting(state, actor)``)."""
    combatant = system.require_combatant(state, actor)
    if state.active != actor:
        interrupting = getattr(system, "interrupting", None)
        require(
            interrupting is not None and bool(interrupting(state, actor)),
            f"it is not {actor}'s turn (active: {state.active}); off its turn it can only act by interrupting from Wait (R6-08)",
        )
    require(not combatant.out_of_fight, f"{actor} is out of the fight")
    require(combatant.position is not None, f"{actor} is not on the map")
    return combatant


MOVEMENT_COMMANDS: tuple[type[Command], ...] = (R6Move, R6Jump, R6HoldBreath)


def _check_path(state: Any, mover: Any, start: tuple[int, int], path: list[tuple[int, int]], what: str) -> None:
    grid = Grid(state.terrain)
    occupied = {
        c.position: c.id for c in state.combatants.values()
        if c.id != mover.id and not c.out_of_fight and c.position is not None
    }
    previous = start
    for square in path:
        square = (int(square[0]), int(square[1]))
        require(adjacent(previous, square), f"{what}: {square} is not adjacent to {previous}")
        require(grid.in_bounds(square), f"{what}: {square} is off the map")
        require(square not in grid.walls, f"{what}: {square} is a wall")
        require(square not in occupied, f"{what}: {square} is occupied by {occupied.get(square)}")
        previous = square
    if path and what == "move":
        end = (int(path[-1][0]), int(path[-1][1]))
        lying = bodies(state, besides=[mover.id])
        require(end not in lying, f"{what}: cannot end on {end}: {lying.get(end)} lies there (a body is stepped over, never ended on)")


def path_terrain_levels(state: Any, path: list[tuple[int, int]], declared: str, extra: int) -> tuple[int, int | None]:
    """R6-10: the worst terrain levels on a path and the index of the first square
    of the map's difficult terrain (None: none on the path)."""
    config = movement_settings(state.settings)
    difficult = {tuple(square) for square in state.terrain.difficult}
    first = next((i for i, square in enumerate(path) if tuple(square) in difficult), None)
    levels = terrain_levels(config["difficult_terrain"]) if first is not None else 0
    if declared:
        levels = max(levels, terrain_levels(declared, extra))
    return levels, first


def _test(
    system: Any, decision: Decision, dice: Dice, combatant: Any, skill: str, *, purpose: str, rule: str,
    target: int, penalty: int, bonus_dice: int = 0, details: dict[str, Any] | None = None,
) -> TestRolled:
    mods = [rolling.DiceMod("running start", RULE_SPECIAL_MOVEMENT, bonus_dice)] if bonus_dice else []
    roll = rolling.roll_test(
        dice, decision.state.settings, combatant, skill, purpose=purpose, rule=rule,
        target=target, action_penalty=penalty, dice_mods=mods, details=details,
    )
    event = TestRolled(combatant=combatant.id, test=purpose, roll=roll, success=bool(roll.success), details=details or {})
    decision.emit(event)
    return event


class StrenuousPlan(NamedTuple):
    """What counting this round as strenuous takes (R6-12): the streak, the
    free rounds (Fortitude dice) and the fatigue test's difficulty (None: no test)."""

    streak: int
    free_rounds: int
    target: int | None


def strenuous_plan(state: Any, combatant: Any) -> StrenuousPlan | None:
    """This round's strenuous count for ``combatant`` (R6-12), or None when the
    round already counted (and any test was passed). Worked out before the
    action is spent: every number it takes from the settings is checked before
    the decision's first event (the main system validates a declaration by
    probing up to its first roll or event)."""
    store = combatant_store(combatant)
    if store.get("strenuous_round") == state.round:
        return None
    streak = strenuous_streak(int(store.get("strenuous_streak", 0)), int(store.get("strenuous_round", 0)), state.round)
    fortitude, _ = rules.skill_code(combatant.attributes, combatant.skills, "fortitude")
    steps = strenuous_test_steps(streak, fortitude)
    target = None
    if steps is not None:
        base = movement_settings(state.settings)["strenuous_test_base"]
        target = difficulty(base, steps, settings=state.settings)
    return StrenuousPlan(streak=streak, free_rounds=fortitude.dice, target=target)


def strenuous_round(system: Any, decision: Decision, dice: Dice, combatant_id: str, activity: str,
                    plan: StrenuousPlan | None) -> bool:
    """R6-12: count this round as strenuous (once per round, as ``plan``, from
    `strenuous_plan`, says); past the Fortitude dice, a Fortitude test one level
    harder each further round. On a failure the character becomes Fatigued and
    stops: returns False."""
    if plan is None:
        return True  # this round already counted (and any test was passed)
    state = decision.state
    combatant = state.combatants[combatant_id]
    roll = None
    if plan.target is not None:
        roll = rolling.roll_test(
            dice, state.settings, combatant, "fortitude", purpose="strenuous activity (fatigue test)",
            rule=RULE_SPECIAL_MOVEMENT, target=plan.target,
            details={"streak": plan.streak, "free_rounds": plan.free_rounds, "activity": activity},
        )
    fatigued = roll is not None and not roll.success
    decision.emit(R6Strenuous(
        combatant=combatant_id, round=state.round, streak=plan.streak, activity=activity,
        free_rounds=plan.free_rounds, roll=roll, fatigued=fatigued,
    ))
    if fatigued:
        combat.add_fatigue(system, decision, combatant_id, RULE_SPECIAL_MOVEMENT, {"source": f"strenuous activity: {activity}"})
    return not fatigued


def require_not_exhausted(state: Any, combatant: Any) -> None:
    """R6-12: a character who failed this round's fatigue test has stopped strenuous activity."""
    require(
        combatant_store(combatant).get("stopped_round") != state.round,
        f"{combatant.id} failed its fatigue test and must stop strenuous activity this round (R6-12)",
    )


def pace_steps(mover: Any, mode: str, pace: str, settings: Any) -> int:
    """The most Spaces a move at this pace may cover: half the mode's Move (partial),
    the Move (full), or up to 6x Move with a movement test (run), R6-09/11."""
    allowed = mode_move(mover, mode, settings)
    if pace == "partial":
        return halve(allowed, movement_settings(settings)["partial_move_rounding"])
    if pace == "full":
        return allowed
    return allowed * MAX_MOVE_MULTIPLE


def with_route(state: Any, command: R6Move) -> R6Move:
    """A move by destination (``to``, optional ``waypoints``) with the path the
    options show (`firelane.engine.routes`) filled in; a move with a path as is."""
    if command.to is None:
        require(not command.waypoints, "waypoints need a destination: give 'to' as well")
        return command
    goal = (int(command.to[0]), int(command.to[1]))
    if command.path:
        last = (int(command.path[-1][0]), int(command.path[-1][1]))
        require(last == goal, f"the path ends at {last}, not at the destination {goal}: give one or the other")
        return command
    mover = state.combatants[command.actor]
    require(mover.position is not None, f"{command.actor} is not on the map")
    require(command.mode in MOVE_MODES, f"unknown movement mode {command.mode!r}; use one of {', '.join(MOVE_MODES)}")
    require(command.pace in MOVE_PACES, f"unknown pace {command.pace!r}; use one of {', '.join(MOVE_PACES)}")
    start = (int(mover.position[0]), int(mover.position[1]))
    grid = Grid(state.terrain)
    blocked = {(int(c.position[0]), int(c.position[1])) for c in state.combatants.values()
               if c.id != mover.id and not c.out_of_fight and c.position is not None}
    steps = pace_steps(mover, command.mode, command.pace, state.settings)
    found = route(grid, start, goal, list(command.waypoints), blocked, steps)
    if isinstance(found, str):
        raise Rejected(f"cannot move to {goal}: {found}; at a {command.pace} {command.mode} ({steps} Spaces), "
                       f"{reachable_summary(reachable(grid, start, blocked, steps))}")
    return msgspec.structs.replace(command, path=found)


def decide_move(system: Any, decision: Decision, command: R6Move, dice: Dice) -> None:
    state = decision.state
    mover = require_acting(system, state, command.actor)
    require(command.mode in MOVE_MODES, f"unknown movement mode {command.mode!r}; use one of {', '.join(MOVE_MODES)}")
    require(command.pace in MOVE_PACES, f"unknown pace {command.pace!r}; use one of {', '.join(MOVE_PACES)}")
    command = with_route(state, command)
    require(bool(command.path), "a move needs at least one Space in its path")
    path = [(int(x), int(y)) for x, y in command.path]
    _check_path(state, mover, mover.position, path, "move")
    try:
        levels, first_rough = path_terrain_levels(state, path, command.terrain, command.terrain_extra)
    except ValueError as error:
        raise Rejected(str(error)) from None
    config = movement_settings(state.settings)
    allowed = mode_move(mover, command.mode, state.settings)
    distance = len(path)
    test_level: str | None = None
    if command.pace == "partial":
        allowed = halve(allowed, config["partial_move_rounding"])
        require(distance <= allowed, f"a Partial Move covers at most {allowed} Spaces (half of {command.mode} Move {mode_move(mover, command.mode, state.settings)}); the path has {distance}")
        kind, rule = "action", RULE_MOVE
    elif command.pace == "full":
        require(distance <= allowed, f"a Full Move covers at most {allowed} Spaces ({command.mode} Move); the path has {distance}")
        kind, rule = "full", RULE_MOVE
    else:
        require(distance > allowed, f"{distance} Spaces is within {command.mode} Move {allowed}: no movement test needed (use pace 'partial' or 'full')")
        try:
            test_level = movement_test_level(distance, allowed)
        except ValueError as error:
            raise Rejected(f"cannot run that far: {error}") from None
        kind, rule = run_action_kind(distance, allowed), RULE_MOVEMENT_TEST
    if command.mode != "walk":
        rule = RULE_SPECIAL_MOVEMENT
    # Every number from the settings is worked out before the first event (the
    # main system validates a declaration by probing up to its first roll or event).
    run_target = difficulty(test_level, levels, settings=state.settings) if test_level is not None else None
    check_target = (
        difficulty(config["terrain_check_base"], levels, settings=state.settings)
        if test_level is None and levels > 0 and config["terrain_check_base"] else None
    )
    strenuous = command.pace != "partial" or command.mode != "walk"
    plan = None
    if strenuous:
        require_not_exhausted(state, mover)
        plan = strenuous_plan(state, mover)
    penalty = system.spend_action(decision, mover.id, kind, action=f"{command.mode}_{command.pace}", rule=rule)
    if strenuous and not strenuous_round(system, decision, dice, mover.id, f"{command.mode} ({command.pace})", plan):
        return
    mover = decision.state.combatants[mover.id]
    moved = path
    skill = MODE_SKILL[command.mode]
    if run_target is not None:
        test = _test(
            system, decision, dice, mover, skill, purpose=f"movement test ({command.mode} {distance} Spaces)",
            rule=RULE_MOVEMENT_TEST, target=run_target, penalty=penalty,
            details={"distance": distance, "move": allowed, "level": test_level, "terrain_levels": levels},
        )
        if not test.success:
            moved = path[:allowed]  # R6-11: a failure moves only the normal Move
    elif check_target is not None:
        test = _test(
            system, decision, dice, mover, skill, purpose=f"terrain check ({command.mode})",
            rule=RULE_TERRAIN, target=check_target, penalty=penalty,
            details={"terrain_levels": levels, "declared": command.terrain},
        )
        if not test.success:
            # Stop before the first rough square; terrain declared for the whole way stops the move.
            moved = [] if command.terrain else path[: first_rough or 0]
    # A move cut short stops on the last Space of its path it may end on (a body is stepped over).
    moved = trim_to_free_end(moved, bodies(decision.state, besides=[mover.id]))
    if moved:
        decision.emit(Moved(combatant=mover.id, path=moved, mode=command.mode, cost=float(len(moved)), rule=rule))


def decide_jump(system: Any, decision: Decision, command: R6Jump, dice: Dice) -> None:
    state = decision.state
    jumper = require_acting(system, state, command.actor)
    require(bool(command.path), "a jump needs at least its landing Space")
    run_up = [(int(x), int(y)) for x, y in command.run_up]
    path = [(int(x), int(y)) for x, y in command.path]
    longest = JUMP_BASE_SPACES + JUMP_MAX_EXTRA_SPACES
    require(len(path) <= longest, f"the longest possible jump is {longest} Spaces, not {len(path)}")
    move = effective_move(jumper, state.settings)
    require(len(run_up) <= move, f"a run-up covers at most Move ({move}) Spaces, not {len(run_up)}")
    _check_path(state, jumper, jumper.position, run_up, "run-up")
    take_off = run_up[-1] if run_up else jumper.position
    grid = Grid(state.terrain)
    heading = direction(take_off, path[0])
    previous = take_off
    for square in path:
        require(adjacent(previous, square) and direction(previous, square) == heading, f"a jump goes in a straight line: {square} does not follow {previous}")
        require(grid.passable(square), f"jump: {square} is a wall or off the map")
        previous = square
    require_not_exhausted(state, jumper)
    target = difficulty(movement_settings(state.settings)["jump_difficulty"], settings=state.settings)
    plan = strenuous_plan(state, jumper)
    penalty = system.spend_action(decision, jumper.id, "full" if run_up else "action", action="jump", rule=RULE_SPECIAL_MOVEMENT)
    if not strenuous_round(system, decision, dice, jumper.id, "jump", plan):
        return
    if run_up:
        decision.emit(Moved(combatant=jumper.id, path=run_up, mode="run-up", cost=float(len(run_up)), rule=RULE_SPECIAL_MOVEMENT))
    jumper = decision.state.combatants[jumper.id]
    running = has_running_start(len(run_up), move)
    test = _test(
        system, decision, dice, jumper, "athletics (jumping)", purpose=f"jump ({len(path)} Spaces)",
        rule=RULE_SPECIAL_MOVEMENT, target=target, penalty=penalty, bonus_dice=1 if running else 0,
        details={"declared": len(path), "running_start": running},
    )
    reach = jump_spaces(test.success, int(test.roll.details.get("result_points", 0)))
    occupied = set(taken_squares(decision.state, besides=[jumper.id]))  # standing or down: no one's Space to land on
    landing = min(reach, len(path))
    while landing > 0 and path[landing - 1] in occupied:
        landing -= 1  # cannot land on someone: short of them
    if landing:
        decision.emit(Moved(combatant=jumper.id, path=path[:landing], mode="jump", cost=float(landing), rule=RULE_SPECIAL_MOVEMENT))


def decide_hold_breath(system: Any, decision: Decision, command: R6HoldBreath, dice: Dice) -> None:
    state = decision.state
    require(command.actor not in (SEQUENCER, GM), "the GM/sequencer does not breathe")
    combatant = system.require_combatant(state, command.actor)
    require(not combatant.out_of_fight, f"{combatant.id} is out of the fight")
    fortitude, source = rules.skill_code(combatant.attributes, combatant.skills, "fortitude")
    limit = int(state.settings.get("max_free_actions", 3))
    if state.active == combatant.id and getattr(combatant, "free_actions_this_turn", 0) >= limit:
        raise Rejected(f"{combatant.id} has already taken {limit} Free Actions this turn (R6-07)")
    if not command.prepared:
        seconds = breath_seconds(fortitude)
        decision.emit(ActionTaken(combatant=combatant.id, action="hold_breath", slot="free", rule=RULE_SPECIAL_MOVEMENT,
                                  details={"seconds": seconds, "fortitude": str(fortitude), "from": source}))
        return
    roll = rolling.roll_test(dice, state.settings, combatant, "fortitude", purpose="hold breath (prepared)", rule=RULE_SPECIAL_MOVEMENT)
    minutes = prepared_breath_minutes(roll.total)
    decision.emit(TestRolled(combatant=combatant.id, test="hold breath (prepared)", roll=roll, success=True, details={"minutes": minutes}))
    decision.emit(ActionTaken(combatant=combatant.id, action="hold_breath", slot="free", rule=RULE_SPECIAL_MOVEMENT,
                              details={"minutes": minutes, "prepared": True}))


def decide_movement_command(system: Any, decision: Decision, command: Command, dice: Dice) -> None:
    if isinstance(command, R6Move):
        decide_move(system, decision, command, dice)
    elif isinstance(command, R6Jump):
        decide_jump(system, decision, command, dice)
    elif isinstance(command, R6HoldBreath):
        decide_hold_breath(system, decision, command, dice)
    else:  # pragma: no cover
        raise TypeError(f"{type(command).__name__} is not a movement command")


# ----------------------------------------------------------------------- AI helpers


def _bfs(grid: Grid, sources: list[tuple[int, int]], blocked: set[tuple[int, int]]) -> dict[tuple[int, int], int]:
    """Steps from the nearest source to every reachable free Space (diagonals count 1)."""
    field = {square: 0 for square in sources}
    frontier = list(sources)
    while frontier:
        next_frontier = []
        for square in frontier:
            for step in grid.neighbours(square):
                if step not in field and step not in blocked:
                    field[step] = field[square] + 1
                    next_frontier.append(step)
        frontier = next_frontier
    return field


def path_towards(state: Any, mover_id: str, goal: tuple[int, int], limit: int, *, stop_adjacent: bool = True) -> list[tuple[int, int]]:
    """A deterministic shortest path from the mover towards ``goal``, cut to
    ``limit`` Spaces: the Spaces an `R6Move` would list. It ends next to
    ``goal`` when ``stop_adjacent`` (an occupied goal), else on it. Among equally
    short ways it keeps closest to the straight line; when the goal cannot be
    reached it heads for the reachable Space nearest to it. Empty when already
    there or no Space is closer."""
    mover = state.combatants[mover_id]
    start = (int(mover.position[0]), int(mover.position[1]))
    goal = (int(goal[0]), int(goal[1]))
    grid = Grid(state.terrain)
    blocked = {
        (int(c.position[0]), int(c.position[1])) for c in state.combatants.values()
        if c.id != mover_id and not c.out_of_fight and c.position is not None
    }
    if limit <= 0 or (adjacent(start, goal) if stop_adjacent else start == goal):
        return []
    lying = bodies(state, besides=[mover_id])  # passed, never ended on
    if stop_adjacent:
        targets = [square for square in grid.neighbours(goal) if square not in blocked and square not in lying]
    else:
        targets = [goal] if grid.passable(goal) and goal not in blocked and goal not in lying else []
    if start in targets:
        return []
    field = _bfs(grid, targets, blocked - {start}) if targets else {}
    if start not in field:
        # Unreachable: aim for the reachable Space nearest to the goal instead.
        reachable = _bfs(grid, [start], blocked)
        nearest = min((sq for sq in reachable if sq not in lying), key=lambda sq: (distance(sq, goal), reachable[sq], sq), default=start)
        if nearest == start:
            return []
        field = _bfs(grid, [nearest], blocked - {start})

    def line_gap(square: tuple[int, int]) -> float:
        return (square[0] - goal[0]) ** 2 + (square[1] - goal[1]) ** 2

    path: list[tuple[int, int]] = []
    here = start
    while field.get(here, 0) > 0 and len(path) < limit:
        here = min(
            (step for step in grid.neighbours(here) if step in field and field[step] < field[here]),
            key=lambda step: (field[step], line_gap(step), step),
        )
        path.append(here)
    return trim_to_free_end(path, lying)  # cut to ``limit``: never ending on a body


def _on_strenuous(state: Any, event: R6Strenuous) -> None:
    store = combatant_store(state.combatants[event.combatant])
    store["strenuous_streak"] = event.streak
    store["strenuous_round"] = event.round
    if event.fatigued:
        store["stopped_round"] = event.round


EVOLVERS: dict[type, Any] = {R6Strenuous: _on_strenuous}
