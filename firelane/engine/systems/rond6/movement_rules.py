"""RonD6 movement rules (R6-09 .. R6-12), the pure part: Move, partial/full
moves, terrain, movement tests, swimming, climbing, jumping, holding breath and
fatigue. No dice, no state changes; `movement` turns them into decisions.

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

This module is on the package's bottom floor (with `pools`, `rules`, `state`,
`rolling`): the action modules above it read a combatant's Move from here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from firelane.engine.systems.rond6 import rules
from firelane.engine.systems.rond6.pools import DieCode, as_code

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
    # R6-12: the map's water and its surfaces to climb (Spaces [x, y]); the
    # shared terrain marks neither, so a table lists them here. Swimming and
    # climbing are offered only on a path that meets them.
    "water_spaces": [],
    "climb_spaces": [],
}


def movement_settings(settings: Mapping[str, Any]) -> dict[str, Any]:
    return {key: settings.get(key, value) for key, value in MOVEMENT_DEFAULTS.items()}


def halve(value: int, rounding: str) -> int:
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
    return halve(move, rounding)


def swim_move(move: int) -> int:
    """R6-12: swimming Move is half Move, rounded up."""
    return math.ceil(move / 2)


def climb_move(move: int, specialised: bool, rounding: str = "up") -> int:
    """R6-12: climbing at Move with Athletics (Climbing), else half Move (house default rounded up)."""
    return move if specialised else halve(move, rounding)


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


# ----------------------------------------------------------------------- modes and a combatant's Move

MOVE_MODES = ("walk", "swim", "climb")
MOVE_PACES = ("partial", "full", "run")
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
        return halve(move, config["partial_move_rounding"])
    return move
