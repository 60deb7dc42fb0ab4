"""RonD6 movement (R6-09 .. R6-12): Move, partial/full moves, terrain, movement
tests, swimming, climbing, jumping, holding breath and fatigue.

Rules (rond6-combat.txt, "Movement"):

* R6-09: distances in Combat Spaces (1 Space = 2 m); Move 5, or 6 with
  Strength: Athletics or Stamina: Fortitude at 3D or more. A Partial Move
  (half Move) is an Action; a Full Move (the whole Move) is a Full Action.
* R6-10: terrain raises a test's difficulty: Easy +0, Moderate +1, Rough +2,
  Very Rough +3, Hazardous +4, Extreme +5 (or more) Difficulty Levels.
* R6-11: running farther than Move needs a Strength: Athletics test: up to 2x
  Move Easy, 3x Standard, 4x Moderate, 5x Difficult, 6x Very Difficult; up to
  2x Move is a basic Action, farther a Full Action; on a failure the character
  moves only its normal Move.
* R6-12: swimming Move is half Move rounded up; climbing is at Move with the
  Athletics (Climbing) specialisation, else half Move; a jump (Athletics
  (Jumping)) covers 1 Space plus 1 per 2 Result Points (at most +6), +1D with a
  running start of at least half Move; breath is held for 10 x Fortitude dice
  seconds (or, prepared, 5 x a Fortitude test's result minutes); strenuous
  activity lasts Fortitude-dice rounds, then a Fortitude test each round, one
  Difficulty Level harder each further round; failure: Fatigued and stop.

House defaults (configurable per encounter via ``EncounterSetup.settings``;
see `MOVEMENT_DEFAULTS` and docs/systems/rond6-aux.md):

* ``partial_move_rounding`` = "down": a Partial Move is half Move rounded down
  (the text rounds the free half move down too).
* ``climb_half_rounding`` = "up": half-Move climbing rounds up like swimming.
* ``move_normal`` 5 / ``move_strong`` 6 / ``move_strong_threshold`` "3D";
  ``move_from_skills`` = True: a sheet's Move below what R6-09 gives for its
  Athletics/Fortitude is raised to it (a higher sheet Move stands).
* ``difficult_terrain`` = "moderate": squares listed in ``Terrain.difficult``
  are Moderate terrain (+1 level). A move's terrain is the worst of those
  squares and the terrain the command declares (the GM's call: "rough",
  "hazardous", ...).
* ``terrain_check_base`` = "very easy": a move that needs no movement test but
  enters terrain worse than Easy still needs a Strength: Athletics test at
  Very Easy + the terrain's levels; on a failure the character stops in the
  last Space before the first such square ("" disables these checks).
* ``jump_difficulty`` = "easy": the jump test's Result Points are counted from
  Easy (10); a failed jump covers no distance (the character stays put). A jump
  is an Action; with a run-up (up to Move Spaces, straight or not, before the
  jump) it is a Full Action.
* ``strenuous_test_base`` = "easy": the first fatigue test after the free
  rounds is Easy, +1 level each further round. Strenuous activity: a Full
  Move, a run with a movement test, swimming, climbing or jumping; a round
  without any ends the streak.
* Holding breath uses the dice of the Fortitude code (pips ignored).
* Diagonal steps cost one Space (the grid's house default).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from firelane.engine.core import SEQUENCER, Decision, Rejected, require
from firelane.engine.dice import Dice
from firelane.engine.grid import Grid, adjacent, direction, distance
from firelane.engine.systems.rond6 import combat, rolling, rules
from firelane.engine.systems.rond6.pools import DieCode, as_code, combatant_store, difficulty
from firelane.events.rond6_aux_schemas import R6HoldBreath, R6Jump, R6Move, R6Strenuous
from firelane.events.schemas import ActionTaken, Command, Moved, TestRolled

RULE_MOVE = "R6-09"
RULE_TERRAIN = "R6-10"
RULE_MOVEMENT_TEST = "R6-11"
RULE_SPECIAL_MOVEMENT = "R6-12"

COMBAT_SPACE_METRES = 2

TERRAIN_LEVELS: dict[str, int] = {
    "easy": 0,  # flat ground, calm water, ladder
    "moderate": 1,  # uneven ground, small obstacles, tree climbing
    "rough": 2,  # rubble, strong current, rough wall
    "very rough": 3,  # dense obstacles, storm conditions
    "hazardous": 4,  # minefield, narrow ledge, smooth wall
    "extreme": 5,  # falling debris, hurricane, complete darkness (5 or more)
}

# Multiple of Move -> difficulty of the movement test (R6-11).
MOVEMENT_TEST_LEVELS: dict[int, str] = {
    2: "easy",
    3: "standard",
    4: "moderate",
    5: "difficult",
    6: "very difficult",
}
MAX_MOVE_MULTIPLE = 6
BASIC_ACTION_MULTIPLE = 2

JUMP_BASE_SPACES = 1
JUMP_MAX_EXTRA_SPACES = 6
JUMP_POINTS_PER_SPACE = 2

MOVEMENT_DEFAULTS: dict[str, Any] = {
    "move_from_skills": True,
    "move_normal": 5,
    "move_strong": 6,
    "move_strong_threshold": "3D",
    "partial_move_rounding": "down",
    "climb_half_rounding": "up",
    "difficult_terrain": "moderate",
    "terrain_check_base": "very easy",
    "jump_difficulty": "easy",
    "strenuous_test_base": "easy",
}


def movement_settings(settings: Mapping[str, Any]) -> dict[str, Any]:
    return {key: settings.get(key, value) for key, value in MOVEMENT_DEFAULTS.items()}


def _half(value: int, rounding: str) -> int:
    if rounding == "up":
        return math.ceil(value / 2)
    if rounding == "down":
        return value // 2
    raise ValueError(f"rounding is 'up' or 'down', not {rounding!r}")


# ----------------------------------------------------------------------- R6-09


def base_move(
    athletics: DieCode | str | None,
    fortitude: DieCode | str | None,
    settings: Mapping[str, Any] | None = None,
) -> int:
    """R6-09: Move 5, or 6 with Strength: Athletics or Stamina: Fortitude at 3D or more."""
    config = movement_settings(settings or {})
    threshold = as_code(config["move_strong_threshold"]).total_pips()
    strong = any(code is not None and as_code(code).total_pips() >= threshold for code in (athletics, fortitude))
    return int(config["move_strong"] if strong else config["move_normal"])


def partial_move(move: int, rounding: str = "down") -> int:
    """R6-09: a Partial Move covers half Move (house default rounded down)."""
    return _half(move, rounding)


def swim_move(move: int) -> int:
    """R6-12: swimming Move is half Move, rounded up."""
    return math.ceil(move / 2)


def climb_move(move: int, specialised: bool, rounding: str = "up") -> int:
    """R6-12: climbing at Move with Athletics (Climbing), else half Move (house default rounded up)."""
    return move if specialised else _half(move, rounding)


# ----------------------------------------------------------------------- R6-10


def terrain_levels(terrain: str, extra: int = 0) -> int:
    """R6-10: Difficulty Levels a terrain adds (Easy 0 ... Extreme 5; ``extra`` for "5+")."""
    key = " ".join(terrain.strip().lower().replace("_", " ").replace("-", " ").split())
    if key not in TERRAIN_LEVELS:
        raise ValueError(f"unknown terrain {terrain!r}; known: {', '.join(TERRAIN_LEVELS)}")
    if extra < 0:
        raise ValueError(f"extra terrain levels cannot be negative ({extra})")
    if extra and key != "extreme":
        raise ValueError("only Extreme terrain takes extra levels (+5 or more)")
    return TERRAIN_LEVELS[key] + extra


# ----------------------------------------------------------------------- R6-11


def move_multiple(distance: int, move: int) -> int:
    """How many multiples of Move a distance needs (1 up to Move, 2 up to 2x Move ...)."""
    if move <= 0:
        raise ValueError(f"a Move of {move} cannot cover any distance")
    return max(1, math.ceil(distance / move))


def movement_test_level(distance: int, move: int) -> str | None:
    """R6-11: the ladder level of the movement test for a distance (None: no test needed).

    Raises ValueError beyond 6x Move.
    """
    multiple = move_multiple(distance, move)
    if multiple <= 1:
        return None
    if multiple > MAX_MOVE_MULTIPLE:
        raise ValueError(
            f"{distance} Spaces is more than {MAX_MOVE_MULTIPLE}x Move ({MAX_MOVE_MULTIPLE * move} Spaces)"
        )
    return MOVEMENT_TEST_LEVELS[multiple]


def run_action_kind(distance: int, move: int) -> str:
    """R6-11: running up to 2x Move is a basic Action, farther a Full Action."""
    return "action" if distance <= BASIC_ACTION_MULTIPLE * move else "full"


# ----------------------------------------------------------------------- R6-12


def jump_spaces(success: bool, result_points: int) -> int:
    """R6-12: 1 Space, +1 per 2 Result Points (at most +6); a failed jump covers nothing (house default)."""
    if not success:
        return 0
    return JUMP_BASE_SPACES + min(JUMP_MAX_EXTRA_SPACES, max(0, result_points) // JUMP_POINTS_PER_SPACE)


def has_running_start(run_up_spaces: int, move: int) -> bool:
    """R6-12: a run-up of at least half Move gives +1D to the jump."""
    return 2 * run_up_spaces >= move


def breath_seconds(fortitude: DieCode | str) -> int:
    """R6-12: unprepared, breath is held 10 x the Stamina: Fortitude dice seconds."""
    return 10 * as_code(fortitude).dice


def prepared_breath_minutes(fortitude_test_total: int) -> int:
    """R6-12: prepared, breath is held 5 x the Stamina: Fortitude test's result minutes."""
    return 5 * max(0, fortitude_test_total)


def strenuous_streak(previous_streak: int, last_round: int, current_round: int) -> int:
    """The length of a strenuous streak once this round counts (unchanged when it already did)."""
    if last_round == current_round:
        return previous_streak
    if last_round == current_round - 1:
        return previous_streak + 1
    return 1


def strenuous_test_steps(streak: int, fortitude: DieCode | str) -> int | None:
    """R6-12: None while the streak is within the Fortitude dice; else how many
    levels above the base difficulty this round's fatigue test is (0 for the first)."""
    free_rounds = as_code(fortitude).dice
    if streak <= free_rounds:
        return None
    return streak - free_rounds - 1


# ======================================================================= decisions
# Commands R6Move, R6Jump and R6HoldBreath, resolved through the main system's
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


MOVE_MODES = ("walk", "swim", "climb")
MOVE_PACES = ("partial", "full", "run")
MOVEMENT_COMMANDS: tuple[type[Command], ...] = (R6Move, R6Jump, R6HoldBreath)
# The Athletics specialisation each mode's tests use (R6-11/12).
MODE_SKILL = {"walk": "athletics (running)", "swim": "athletics (swimming)", "climb": "athletics (climbing)"}


def effective_move(combatant: Any, settings: Mapping[str, Any]) -> int:
    """R6-09: the sheet's Move, raised to 6 when Strength: Athletics or Stamina:
    Fortitude is 3D or more (house default ``move_from_skills``: a lower sheet
    Move is raised to the rule's value; a higher one — talents, species — stands)."""
    move = int(combatant.move)
    if not movement_settings(settings)["move_from_skills"]:
        return move
    athletics, _ = rules.skill_code(combatant.attributes, combatant.skills, "athletics")
    fortitude, _ = rules.skill_code(combatant.attributes, combatant.skills, "fortitude")
    return max(move, base_move(athletics, fortitude, settings))


def mode_move(combatant: Any, mode: str, settings: Mapping[str, Any]) -> int:
    """The Move a combatant has in a mode (R6-09/12); prone walkers crawl at half (R6-35)."""
    config = movement_settings(settings)
    move = effective_move(combatant, settings)
    if mode == "swim":
        return swim_move(move)
    if mode == "climb":
        return climb_move(move, "athletics (climbing)" in combatant.skills, config["climb_half_rounding"])
    if "prone" in combatant.conditions:
        return _half(move, config["partial_move_rounding"])
    return move


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


def strenuous_round(system: Any, decision: Decision, dice: Dice, combatant_id: str, activity: str) -> bool:
    """R6-12: count this round as strenuous (once per round); past the
    Fortitude dice, a Fortitude test one level harder each further round. On a
    failure the character becomes Fatigued and stops: returns False."""
    state = decision.state
    combatant = state.combatants[combatant_id]
    store = combatant_store(combatant)
    if store.get("strenuous_round") == state.round:
        return True  # this round already counted (and any test was passed)
    streak = strenuous_streak(int(store.get("strenuous_streak", 0)), int(store.get("strenuous_round", 0)), state.round)
    fortitude, _ = rules.skill_code(combatant.attributes, combatant.skills, "fortitude")
    steps = strenuous_test_steps(streak, fortitude)
    roll = None
    if steps is not None:
        base = movement_settings(state.settings)["strenuous_test_base"]
        roll = rolling.roll_test(
            dice, state.settings, combatant, "fortitude", purpose="strenuous activity (fatigue test)",
            rule=RULE_SPECIAL_MOVEMENT, target=difficulty(base, steps, settings=state.settings),
            details={"streak": streak, "free_rounds": fortitude.dice, "activity": activity},
        )
    fatigued = roll is not None and not roll.success
    decision.emit(R6Strenuous(
        combatant=combatant_id, round=state.round, streak=streak, activity=activity,
        free_rounds=fortitude.dice, roll=roll, fatigued=fatigued,
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


def decide_move(system: Any, decision: Decision, command: R6Move, dice: Dice) -> None:
    state = decision.state
    mover = require_acting(system, state, command.actor)
    require(command.mode in MOVE_MODES, f"unknown movement mode {command.mode!r}; use one of {', '.join(MOVE_MODES)}")
    require(command.pace in MOVE_PACES, f"unknown pace {command.pace!r}; use one of {', '.join(MOVE_PACES)}")
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
        allowed = _half(allowed, config["partial_move_rounding"])
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
    # Every number from the settings is worked out before the first roll (the
    # main system validates a declaration by probing up to the first roll).
    run_target = difficulty(test_level, levels, settings=state.settings) if test_level is not None else None
    check_target = (
        difficulty(config["terrain_check_base"], levels, settings=state.settings)
        if test_level is None and levels > 0 and config["terrain_check_base"] else None
    )
    strenuous = command.pace != "partial" or command.mode != "walk"
    if strenuous:
        require_not_exhausted(state, mover)
    penalty = system.spend_action(decision, mover.id, kind, action=f"{command.mode}_{command.pace}", rule=rule)
    if strenuous and not strenuous_round(system, decision, dice, mover.id, f"{command.mode} ({command.pace})"):
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
    penalty = system.spend_action(decision, jumper.id, "full" if run_up else "action", action="jump", rule=RULE_SPECIAL_MOVEMENT)
    if not strenuous_round(system, decision, dice, jumper.id, "jump"):
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
    occupied = {c.position for c in decision.state.combatants.values() if c.id != jumper.id and not c.out_of_fight}
    landing = min(reach, len(path))
    while landing > 0 and path[landing - 1] in occupied:
        landing -= 1  # cannot land on someone: short of them
    if landing:
        decision.emit(Moved(combatant=jumper.id, path=path[:landing], mode="jump", cost=float(landing), rule=RULE_SPECIAL_MOVEMENT))


def decide_hold_breath(system: Any, decision: Decision, command: R6HoldBreath, dice: Dice) -> None:
    state = decision.state
    require(command.actor != SEQUENCER, "the GM/sequencer does not breathe")
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
    if stop_adjacent:
        targets = [square for square in grid.neighbours(goal) if square not in blocked]
    else:
        targets = [goal] if grid.passable(goal) and goal not in blocked else []
    if start in targets:
        return []
    field = _bfs(grid, targets, blocked - {start}) if targets else {}
    if start not in field:
        # Unreachable: aim for the reachable Space nearest to the goal instead.
        reachable = _bfs(grid, [start], blocked)
        nearest = min(reachable, key=lambda sq: (distance(sq, goal), reachable[sq], sq))
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
    return path


def _on_strenuous(state: Any, event: R6Strenuous) -> None:
    store = combatant_store(state.combatants[event.combatant])
    store["strenuous_streak"] = event.streak
    store["strenuous_round"] = event.round
    if event.fatigued:
        store["stopped_round"] = event.round


EVOLVERS: dict[type, Any] = {R6Strenuous: _on_strenuous}
