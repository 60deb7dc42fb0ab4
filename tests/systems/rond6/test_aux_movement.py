"""R6-09 .. R6-12 movement through the real RonD6 system: R6Move, R6Jump, R6HoldBreath."""

from __future__ import annotations

from firelane.engine.systems.rond6.aux_schemas import R6HoldBreath, R6Jump, R6Move, R6Strenuous
from firelane.engine.systems.rond6.schemas import R6ActionDeclared
from firelane.events.schemas import ActionTaken, ConditionApplied, Moved, Terrain, Wall
from firelane.events.schemas import TestRolled as Rolled

from tests.systems.rond6.test_aux_support import act, cid, declare, end_turn, fighter, of_type, rejection, replayed, start


# Plain Athletics 2D+2 and Fortitude 2D keep Move at 5 (R6-09); the specialisations roll 4D.
RUNNER_SKILLS = {"athletics": "2D+2", "fortitude": "2D", "athletics (running)": "4D",
                 "athletics (jumping)": "4D", "athletics (swimming)": "4D"}


def walker(cid_: str, side: str, position, **kw):  # type: ignore[no-untyped-def]
    return fighter(cid_, side, position, skills={**RUNNER_SKILLS, **kw.pop("skills", {})}, **kw)


def line(x0: int, x1: int, y: int = 0) -> list[tuple[int, int]]:
    return [(x, y) for x in range(x0, x1 + 1)]


def move(state, actor: str, path, pace: str = "partial", faces=(), **kw):  # type: ignore[no-untyped-def]
    return act(state, R6Move(command_id=cid("m"), actor=actor, path=path, pace=pace, **kw), faces)


def two() -> list:  # type: ignore[type-arg]
    return [walker("a", "red", (0, 0)), walker("b", "blue", (20, 10))]


# ----------------------------------------------------------------------------- R6-09


def test_r6_09_partial_move_is_half_move_and_an_action() -> None:
    """R6-09: a Partial Move covers half Move (5 -> 2, house default rounded down) and is an Action."""
    state = start(two())
    declare(state, "a", 2)
    events = move(state, "a", line(1, 2))
    assert [type(e).__name__ for e in events] == ["R6ActionDeclared", "ActionTaken", "Moved"]
    taken = of_type(events, ActionTaken)[0]
    assert taken.slot == "action" and taken.rule == "R6-09"
    assert state.combatants["a"].position == (2, 0)
    assert state.combatants["a"].actions_used == 1
    assert rejection(move(state, "a", line(3, 5))) == (
        "a Partial Move covers at most 2 Spaces (half of walk Move 5); the path has 3"
    )


def test_r6_09_full_move_is_the_whole_move_and_a_full_action() -> None:
    """R6-09: a Full Move covers Move (5) and is a Full Action: the round's only action."""
    state = start(two())
    declare(state, "a", 1)
    events = move(state, "a", line(1, 5), pace="full")
    assert of_type(events, ActionTaken)[0].slot == "full"
    assert of_type(events, Moved)[0].path == line(1, 5)
    assert state.combatants["a"].full_action
    assert of_type(events, R6Strenuous)[0].streak == 1  # a Full Move is strenuous (house default)
    state = start(two())
    declare(state, "a", 2)
    assert rejection(move(state, "a", line(1, 5), pace="full")) == (
        "a declared 2 actions; a Full Action must be the round's only action (R6-07)"
    )
    state = start(two())
    declare(state, "a", 1)
    assert rejection(move(state, "a", line(1, 6), pace="full")) == "a Full Move covers at most 5 Spaces (walk Move); the path has 6"


def test_r6_09_move_six_covers_six() -> None:
    """R6-09: a combatant with Move 6 (Athletics 3D+) full-moves 6 Spaces and partial-moves 3."""
    state = start([walker("a", "red", (0, 0), move=6), walker("b", "blue", (20, 10))])
    declare(state, "a", 1)
    move(state, "a", line(1, 6), pace="full")
    assert state.combatants["a"].position == (6, 0)
    state = start([walker("a", "red", (0, 0), move=6), walker("b", "blue", (20, 10))])
    declare(state, "a", 2)
    move(state, "a", line(1, 3))
    assert state.combatants["a"].position == (3, 0)


def test_r6_09_athletics_or_fortitude_3d_gives_move_six() -> None:
    """R6-09: Strength: Athletics 3D on a sheet saying Move 5 moves 6 (house default move_from_skills);
    with the setting off the sheet's 5 stands."""
    strong = walker("a", "red", (0, 0), skills={"athletics": "3D"})
    state = start([strong, walker("b", "blue", (20, 10))])
    declare(state, "a", 1)
    move(state, "a", line(1, 6), pace="full")
    assert state.combatants["a"].position == (6, 0)
    state = start([strong, walker("b", "blue", (20, 10))], move_from_skills=False)
    declare(state, "a", 1)
    assert rejection(move(state, "a", line(1, 6), pace="full")) == "a Full Move covers at most 5 Spaces (walk Move); the path has 6"


def test_r6_09_bad_moves_are_rejected_with_reasons() -> None:
    """R6-09: out of turn, undeclared (nothing declared by a refused move), broken paths, walls, occupied Spaces, the map's edge, bad modes."""
    terrain = Terrain(width=30, height=20, walls=[Wall(1, 1)])
    state = start([walker("a", "red", (0, 0)), walker("b", "blue", (2, 0))], terrain=terrain)
    assert rejection(move(state, "b", [(3, 0)])).startswith("it is not b's turn (active: a)")
    # Undeclared, a move declares one action with it (R6-05); a refused one declares nothing.
    assert rejection(move(state, "a", [(2, 2)])) == "move: (2, 2) is not adjacent to (0, 0)"
    assert state.combatants["a"].declared_actions == 0
    declare(state, "a", 2)
    assert rejection(move(state, "a", [(2, 2)])) == "move: (2, 2) is not adjacent to (0, 0)"
    assert rejection(move(state, "a", [(1, 1)])) == "move: (1, 1) is a wall"
    assert rejection(move(state, "a", [(1, 0), (2, 0)])) == "move: (2, 0) is occupied by b"
    assert rejection(move(state, "a", [(-1, 0)])) == "move: (-1, 0) is off the map"
    assert rejection(move(state, "a", [])) == "a move needs at least one Space in its path"
    assert rejection(move(state, "a", [(1, 0)], mode="fly")) == "unknown movement mode 'fly'; use one of walk, swim, climb"
    assert rejection(move(state, "a", [(1, 0)], pace="dash")) == "unknown pace 'dash'; use one of partial, full, run"
    assert state.combatants["a"].position == (0, 0) and state.combatants["a"].actions_used == 0


# ----------------------------------------------------------------------------- R6-10


def test_r6_10_difficult_square_needs_a_terrain_check() -> None:
    """R6-10 (house default): Terrain.difficult squares are Moderate (+1 level): a move into
    them needs Athletics at Very Easy + 1 = Easy (10); a failure stops before them."""
    terrain = Terrain(width=30, height=20, difficult=[(2, 0)])
    state = start(two(), terrain=terrain)
    declare(state, "a", 1)
    events = move(state, "a", line(1, 2), faces=[2, 3, 3, 3])  # 4D = 11 >= 10
    test = of_type(events, Rolled)[0]
    assert test.roll.target == 10 and test.roll.total == 11 and test.success and test.roll.rule == "R6-10"
    assert state.combatants["a"].position == (2, 0)

    state = start(two(), terrain=terrain)
    declare(state, "a", 1)
    events = move(state, "a", line(1, 2), faces=[2, 2, 2, 3])  # 9 < 10
    assert not of_type(events, Rolled)[0].success
    assert of_type(events, Moved)[0].path == [(1, 0)]


def test_r6_10_declared_terrain_raises_the_movement_test() -> None:
    """R6-10: Rough terrain (+2 levels) turns a 2x Move run from Easy (10) into Moderate (20)."""
    state = start(two())
    declare(state, "a", 1)
    events = move(state, "a", line(1, 6), pace="run", terrain="rough", faces=[5, 5, 5, 4])  # 19 < 20
    test = of_type(events, Rolled)[0]
    assert test.roll.target == 20 and not test.success
    assert of_type(events, Moved)[0].path == line(1, 5)  # R6-11: only the normal Move
    state = start(two())
    declare(state, "a", 1)
    events = move(state, "a", line(1, 6), pace="run", terrain="extreme", terrain_extra=1, faces=[5, 5, 5, 5])
    assert of_type(events, Rolled)[0].roll.target == 40  # Easy + 6 levels: Heroic 35 + 5
    assert of_type(events, Moved)[0].path == line(1, 5)
    assert rejection(move(state, "a", line(6, 11), pace="run", terrain="lava")).startswith("unknown terrain 'lava'")


def test_r6_10_terrain_checks_can_be_switched_off() -> None:
    """R6-10: setting terrain_check_base "" lets normal moves through difficult squares untested."""
    terrain = Terrain(width=30, height=20, difficult=[(1, 0)])
    state = start(two(), terrain=terrain, terrain_check_base="")
    declare(state, "a", 1)
    events = move(state, "a", line(1, 2))
    assert not of_type(events, Rolled) and state.combatants["a"].position == (2, 0)


# ----------------------------------------------------------------------------- R6-11


def test_r6_11_run_up_to_twice_move_is_an_easy_test_and_an_action() -> None:
    """R6-11: 6 Spaces with Move 5 is 2x Move: Easy (10), a basic Action."""
    state = start(two())
    declare(state, "a", 1)
    events = move(state, "a", line(1, 6), pace="run", faces=[3, 3, 2, 2])
    test = of_type(events, Rolled)[0]
    assert (test.roll.total, test.roll.target, test.success, test.roll.rule) == (10, 10, True, "R6-11")
    assert test.roll.details["skill"] == "athletics (running)" and test.roll.details["from"] == "skill athletics (running)"
    assert of_type(events, ActionTaken)[0].slot == "action"
    assert state.combatants["a"].position == (6, 0)


def test_r6_11_failure_moves_only_the_normal_move() -> None:
    """R6-11: a failed movement test moves only Move; the multi-action penalty applies (-1D)."""
    state = start(two())
    declare(state, "a", 2)
    events = move(state, "a", line(1, 6), pace="run", faces=[3, 3, 3])
    test = of_type(events, Rolled)[0]
    assert test.roll.details["code"] == "3D" and test.roll.total == 9 and not test.success
    assert state.combatants["a"].position == (5, 0)


def test_r6_11_farther_than_twice_move_is_a_full_action_at_standard() -> None:
    """R6-11: 11 Spaces is 3x Move: Standard (15) and a Full Action."""
    state = start(two())
    declare(state, "a", 1)
    events = move(state, "a", line(1, 11), pace="run", faces=[4, 4, 4, 3])
    assert of_type(events, ActionTaken)[0].slot == "full"
    test = of_type(events, Rolled)[0]
    assert test.roll.target == 15 and test.success
    assert state.combatants["a"].position == (11, 0)


def test_r6_11_run_limits() -> None:
    """R6-11: no test within Move; nothing beyond 6x Move."""
    state = start(two(), terrain=Terrain(width=40, height=20))
    declare(state, "a", 1)
    assert rejection(move(state, "a", line(1, 4), pace="run")) == (
        "4 Spaces is within walk Move 5: no movement test needed (use pace 'partial' or 'full')"
    )
    assert rejection(move(state, "a", line(1, 31), pace="run")) == (
        "cannot run that far: 31 Spaces is more than 6x Move (30 Spaces)"
    )


# ----------------------------------------------------------------------------- R6-12


def test_r6_12_swimming_is_half_move_rounded_up() -> None:
    """R6-12: swimming Move 3 (of 5); farther needs an Athletics (Swimming) test."""
    state = start(two())
    declare(state, "a", 1)
    assert rejection(move(state, "a", line(1, 4), pace="full", mode="swim")) == (
        "a Full Move covers at most 3 Spaces (swim Move); the path has 4"
    )
    events = move(state, "a", line(1, 3), pace="full", mode="swim")
    assert of_type(events, Moved)[0].mode == "swim" and of_type(events, Moved)[0].rule == "R6-12"
    state = start(two())
    declare(state, "a", 1)
    events = move(state, "a", line(1, 4), pace="run", mode="swim", faces=[3, 3, 2, 2])
    test = of_type(events, Rolled)[0]
    assert test.roll.target == 10 and test.roll.details["skill"] == "athletics (swimming)"
    assert state.combatants["a"].position == (4, 0)


def test_r6_12_climbing_with_and_without_the_specialisation() -> None:
    """R6-12: climbing at Move with Athletics (Climbing), else half Move (house default rounded up: 3)."""
    state = start(two())
    declare(state, "a", 1)
    assert rejection(move(state, "a", line(1, 4), pace="full", mode="climb")) == (
        "a Full Move covers at most 3 Spaces (climb Move); the path has 4"
    )
    climber = walker("a", "red", (0, 0), skills={"athletics (climbing)": "5D"})
    state = start([climber, walker("b", "blue", (20, 10))])
    declare(state, "a", 1)
    move(state, "a", line(1, 5), pace="full", mode="climb")
    assert state.combatants["a"].position == (5, 0)
    state = start([climber, walker("b", "blue", (20, 10))])
    declare(state, "a", 1)
    events = move(state, "a", line(1, 6), pace="run", mode="climb", faces=[2, 2, 2, 2, 1])
    test = of_type(events, Rolled)[0]
    assert test.roll.details["code"] == "5D" and test.roll.details["from"] == "skill athletics (climbing)"
    assert test.roll.total == 9 and not test.success
    assert state.combatants["a"].position == (5, 0)


def test_r6_12_prone_crawls_at_half_move() -> None:
    """R6-12/R6-35: a Prone walker crawls at half Move (2 of 5)."""
    state = start(two())
    state.combatants["a"].conditions["prone"] = ""
    declare(state, "a", 1)
    assert rejection(move(state, "a", line(1, 3), pace="full")) == "a Full Move covers at most 2 Spaces (walk Move); the path has 3"


def jump(state, actor: str, path, run_up=(), faces=()):  # type: ignore[no-untyped-def]
    return act(state, R6Jump(command_id=cid("j"), actor=actor, path=list(path), run_up=list(run_up)), faces)


def test_r6_12_standing_jump_covers_one_space() -> None:
    """R6-12: a bare success (Easy 10, 0 Result Points) jumps 1 Space; an Action."""
    state = start(two())
    declare(state, "a", 1)
    events = jump(state, "a", line(1, 3), faces=[3, 3, 2, 2])
    test = of_type(events, Rolled)[0]
    assert (test.roll.total, test.roll.target, test.roll.details["result_points"]) == (10, 10, 0)
    assert test.roll.details["skill"] == "athletics (jumping)"
    assert of_type(events, ActionTaken)[0].slot == "action"
    assert of_type(events, Moved)[0].path == [(1, 0)] and of_type(events, Moved)[0].mode == "jump"


def test_r6_12_every_two_result_points_add_a_space() -> None:
    """R6-12: 14 vs Easy is 4 Result Points: 1 + 2 = 3 Spaces; 12 (2 points): 2 Spaces."""
    state = start(two())
    declare(state, "a", 1)
    jump(state, "a", line(1, 3), faces=[4, 4, 3, 3])
    assert state.combatants["a"].position == (3, 0)
    state = start(two())
    declare(state, "a", 1)
    jump(state, "a", line(1, 3), faces=[3, 3, 3, 3])
    assert state.combatants["a"].position == (2, 0)


def test_r6_12_failed_jump_goes_nowhere() -> None:
    """R6-12 (house default): a failed jump test covers no distance."""
    state = start(two())
    declare(state, "a", 1)
    events = jump(state, "a", line(1, 2), faces=[2, 2, 2, 2])
    assert not of_type(events, Moved) and state.combatants["a"].position == (0, 0)


def test_r6_12_running_start_gives_one_die_and_is_a_full_action() -> None:
    """R6-12: a run-up of half Move (3 of 5) gives +1D (5D); with a run-up the jump is a Full Action."""
    state = start(two())
    declare(state, "a", 1)
    events = jump(state, "a", line(4, 6), run_up=line(1, 3), faces=[3, 3, 3, 3, 3])
    assert of_type(events, ActionTaken)[0].slot == "full"
    test = of_type(events, Rolled)[0]
    assert test.roll.details["code"] == "5D" and test.roll.total == 15
    assert {"source": "running start", "rule": "R6-12", "dice": 1} in test.roll.details["dice_modifiers"]
    moves = of_type(events, Moved)
    assert [m.mode for m in moves] == ["run-up", "jump"]
    assert moves[1].path == line(4, 6)  # 5 points: 1 + 2 = 3 Spaces
    # A run-up shorter than half Move gives no bonus die.
    state = start(two())
    declare(state, "a", 1)
    events = jump(state, "a", line(3, 3), run_up=line(1, 2), faces=[3, 3, 2, 2])
    assert of_type(events, Rolled)[0].roll.details["code"] == "4D"


def test_r6_12_bad_jumps_are_rejected() -> None:
    """R6-12: jumps go straight, at most 7 Spaces, run-ups at most Move, never through walls."""
    state = start(two(), terrain=Terrain(width=30, height=20, walls=[Wall(2, 0)]))
    declare(state, "a", 1)
    assert rejection(jump(state, "a", [(1, 0), (2, 1)])) == "a jump goes in a straight line: (2, 1) does not follow (1, 0)"
    assert rejection(jump(state, "a", line(1, 8, y=1))) == "the longest possible jump is 7 Spaces, not 8"
    assert rejection(jump(state, "a", [(7, 1)], run_up=line(1, 6, y=1))) == "a run-up covers at most Move (5) Spaces, not 6"
    assert rejection(jump(state, "a", line(1, 2))) == "jump: (2, 0) is a wall or off the map"


def test_r6_12_jumper_lands_short_of_an_occupied_space() -> None:
    """R6-12: a jump that would land on someone ends in the Space before."""
    state = start([walker("a", "red", (0, 0)), walker("b", "blue", (3, 0))])
    declare(state, "a", 1)
    events = jump(state, "a", line(1, 3), faces=[4, 4, 3, 3])  # 3 Spaces reached
    assert of_type(events, Moved)[0].path == line(1, 2)


def test_r6_12_holding_breath() -> None:
    """R6-12: unprepared 10 x Fortitude dice (3D) = 30 seconds; prepared 5 x a Fortitude test = 60 minutes."""
    state = start([walker("a", "red", (0, 0), skills={"fortitude": "3D"}), walker("b", "blue", (20, 10))])
    events = act(state, R6HoldBreath(command_id=cid(), actor="a"))
    taken = of_type(events, ActionTaken)[0]
    assert taken.slot == "free" and taken.details["seconds"] == 30
    events = act(state, R6HoldBreath(command_id=cid(), actor="a", prepared=True), [4, 4, 4])
    assert of_type(events, Rolled)[0].roll.total == 12
    assert of_type(events, ActionTaken)[0].details["minutes"] == 60
    act(state, R6HoldBreath(command_id=cid(), actor="a"))
    assert rejection(act(state, R6HoldBreath(command_id=cid(), actor="a"))) == "a has already taken 3 Free Actions this turn (R6-07)"


def test_r6_12_fatigue_after_fortitude_rounds_of_strenuous_activity() -> None:
    """R6-12: Fortitude 1D allows 1 strenuous round; the 2nd needs an Easy Fortitude test:
    failed, the character is Fatigued and stops; the 3rd round's test is one level harder."""
    tired = walker("a", "red", (0, 0), skills={"fortitude": "1D"})
    state = start([tired, walker("b", "blue", (20, 10))])
    log = []
    declare(state, "a", 1)
    log += move(state, "a", line(1, 5), pace="full")
    assert of_type(log, R6Strenuous)[0].streak == 1 and of_type(log, R6Strenuous)[0].roll is None
    end_turn(state, "a")
    end_turn(state, "b", [5, 4])  # round 2 initiative
    assert state.round == 2 and state.active == "a"
    declare(state, "a", 2)
    events = move(state, "a", line(6, 11), pace="run", faces=[3])
    strenuous = of_type(events, R6Strenuous)[0]
    assert strenuous.streak == 2 and strenuous.free_rounds == 1
    assert strenuous.roll is not None and strenuous.roll.target == 10 and strenuous.roll.total == 3
    assert strenuous.fatigued
    assert of_type(events, ConditionApplied)[0].condition == "fatigued"
    assert not of_type(events, Moved) and state.combatants["a"].fatigue == 1
    assert rejection(move(state, "a", line(6, 11), pace="run")) == (
        "a failed its fatigue test and must stop strenuous activity this round (R6-12)"
    )
    move(state, "a", line(6, 7))  # a Partial Move is not strenuous
    assert state.combatants["a"].position == (7, 0)
    end_turn(state, "a")
    end_turn(state, "b", [5, 4])
    declare(state, "a", 1)
    events = move(state, "a", line(8, 12), pace="full", faces=[5])
    strenuous = of_type(events, R6Strenuous)[0]
    assert strenuous.streak == 3 and strenuous.roll.target == 15 and strenuous.fatigued  # type: ignore[union-attr]
    assert state.combatants["a"].fatigue == 2


def test_r6_12_replaying_the_movement_log_rebuilds_the_state() -> None:
    """R6-09..12: the aux bookkeeping (strenuous streaks) is rebuilt from the events alone."""
    from firelane.engine.core import SEQUENCER
    from firelane.engine.dice import FixedDice
    from firelane.engine.systems.rond6 import SYSTEM
    from firelane.events.schemas import EncounterSetup, StartEncounter

    setup = EncounterSetup(system="rond6", combatants=two(), terrain=Terrain(width=30, height=20))
    state = SYSTEM.initial_state()
    state.encounter = "test"
    log = SYSTEM.decide(state, StartEncounter(command_id="s", actor=SEQUENCER, setup=setup, seed_commitment="x"), FixedDice([5, 4]))
    for event in log:
        SYSTEM.evolve(state, event)
    log += declare(state, "a", 1)  # type: ignore[arg-type]
    log += move(state, "a", line(1, 6), pace="run", faces=[3, 3, 2, 2])
    assert state.combatants["a"].aux["strenuous_streak"] == 1
    assert any(isinstance(e, R6ActionDeclared) for e in log)
    assert replayed(log) == state


def test_r6_09_ai_path_helper_is_short_straight_and_stops_next_to_the_goal() -> None:
    """R6-09 AI helper: path_towards gives the Spaces of a shortest move, straight where it can,
    around walls and people, cut to the allowed distance."""
    from firelane.engine.systems.rond6.movement import path_towards

    terrain = Terrain(width=30, height=20, walls=[Wall(3, y) for y in range(0, 4)])
    state = start([walker("a", "red", (0, 1)), walker("b", "blue", (6, 1)), walker("c", "red", (0, 10))], terrain=terrain)
    path = path_towards(state, "a", (6, 1), 20)
    assert path[-1] in {(5, 0), (5, 1), (5, 2)} and (3, 4) in path  # around the end of the wall
    assert all(abs(p[0] - q[0]) <= 1 and abs(p[1] - q[1]) <= 1 for p, q in zip([(0, 1), *path], path))
    assert path == [(1, 2), (2, 3), (3, 4), (4, 3), (5, 2)]  # diagonals count one Space
    assert path_towards(state, "a", (6, 1), 2) == path[:2]
    assert path_towards(state, "c", (0, 16), 5) == [(0, 11), (0, 12), (0, 13), (0, 14), (0, 15)]
    assert path_towards(state, "c", (0, 16), 9, stop_adjacent=False)[-1] == (0, 16)
    assert path_towards(state, "c", (0, 11), 5) == []  # already next to it


def test_r6_09_off_turn_moves_only_as_interruptions() -> None:
    """R6-09 with R6-08: off its turn a combatant moves only when the main system says it is
    resolving a Wait interruption (``system.interrupting(state, actor)``)."""
    from firelane.engine.core import Decision
    from firelane.engine.dice import FixedDice
    from firelane.engine.systems.rond6.aux import decide_aux_command
    from firelane.engine.systems.rond6.system import RonD6System

    class Interrupting(RonD6System):
        def interrupting(self, state, actor):  # type: ignore[no-untyped-def]
            return actor == "b"

    state = start(two())
    state.combatants["b"].declared_actions = 1
    command = R6Move(command_id=cid(), actor="b", path=[(19, 10)])
    decision = Decision(Interrupting(), state)
    decide_aux_command(decision.system, decision, command, FixedDice([]))
    assert of_type(decision.events, Moved)[0].path == [(19, 10)]
    assert rejection(move(state, "b", [(19, 10)])) == (
        "it is not b's turn (active: a); off its turn it can only act by interrupting from Wait (R6-08)"
    )
