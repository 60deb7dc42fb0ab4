"""R6-25 breaking objects through the real RonD6 system: R6BreakObject."""

from __future__ import annotations

from firelane.engine.systems.rond6.aux_schemas import R6BreakObject, R6Move, R6ObjectDamaged
from firelane.events.schemas import ActionTaken, StateAdjusted, Terrain, Wall

from tests.systems.rond6.test_aux_support import act, cid, declare, fighter, of_type, rejection, replayed, start

AXE = {"id": "axe", "name": "axe", "kind": "melee", "skill": "melee_weapons", "damage": "STR+1D"}
PISTOL = {"id": "pistol", "name": "pistol", "kind": "ranged", "skill": "firearms", "damage": "4D", "ranges": [5, 10, 20], "capacity": 6}
DOOR = {"id": "door", "name": "oak door", "construction": "tough", "square": [1, 0], "defense": 14}


def axeman(**kw):  # type: ignore[no-untyped-def]
    return fighter("a", "red", (0, 0), weapons=[AXE], skills={"melee_weapons": "4D"}, **kw)


def smash(state, target: str, faces=(), weapon: str = ""):  # type: ignore[no-untyped-def]
    return act(state, R6BreakObject(command_id=cid("x"), actor="a", target=target, weapon=weapon), faces)


def test_r6_25_attack_on_an_object_misses_below_its_defense() -> None:
    """R6-25: the attack test is made against the object's Defense; with two actions declared
    it is 4D - 1D = 3D (R6-05): 4+4+4 = 12 < 14 misses and no damage is rolled."""
    state = start([axeman(), fighter("b", "blue", (20, 10))], objects=[DOOR])
    declare(state, "a", 2)
    events = smash(state, "door", [4, 4, 4])
    damaged = of_type(events, R6ObjectDamaged)[0]
    assert damaged.attack.details["code"] == "3D" and damaged.attack.total == 12 and not damaged.hit
    assert damaged.damage is None and damaged.levels == 0
    assert of_type(events, ActionTaken)[0].action == "break_object"


def test_r6_25_hit_damages_by_result_points() -> None:
    """R6-25: attack 15 vs 14 -> 1 Result Point; damage 12 >= 8: 1 level; running total kept."""
    state = start([axeman(), fighter("b", "blue", (20, 10))], objects=[DOOR])
    declare(state, "a", 1)
    events = smash(state, "door", [4, 4, 4, 3, 3, 3, 3, 3])
    damaged = of_type(events, R6ObjectDamaged)[0]
    assert (damaged.attack.total, damaged.attack.target, damaged.hit) == (15, 14, True)
    assert damaged.damage is not None and damaged.damage.total == 12 and damaged.damage.details["code"] == "4D"
    assert (damaged.resistance, damaged.levels, damaged.total_levels, damaged.destroyed) == (8, 1, 1, False)
    assert damaged.rule == "R6-25"
    assert state.aux["objects"] == {"door": 1}


def test_r6_25_damage_below_the_resistance_total_does_nothing() -> None:
    """R6-25: damage 7 < DR 8: the object is not damaged."""
    state = start([axeman(), fighter("b", "blue", (20, 10))], objects=[DOOR])
    declare(state, "a", 1)
    events = smash(state, "door", [5, 5, 5, 5, 2, 2, 2, 1])
    damaged = of_type(events, R6ObjectDamaged)[0]
    assert damaged.hit and damaged.damage.total == 7 and damaged.levels == 0  # type: ignore[union-attr]
    assert state.aux.get("objects", {}) == {}


def test_r6_25_a_damaging_hit_without_result_points_still_does_one_level() -> None:
    """R6-25 (house default object_min_damage_levels 1): exactly the Defense, damage >= DR: 1 level."""
    state = start([axeman(), fighter("b", "blue", (20, 10))], objects=[DOOR])
    declare(state, "a", 1)
    events = smash(state, "door", [4, 4, 3, 3, 3, 3, 3, 3])
    damaged = of_type(events, R6ObjectDamaged)[0]
    assert damaged.attack.total == 14 and damaged.attack.details["result_points"] == 0 and damaged.levels == 1


def test_r6_25_destroyed_wall_leaves_the_map() -> None:
    """R6-25: a wall Space (Sturdy 3D: DR 12, Defense Very Easy 5): 8 vs 5 is 3 Result Points,
    damage 16 >= 12: 3 levels destroy it (house default); the Space opens up."""
    terrain = Terrain(width=30, height=20, walls=[Wall(1, 0)])
    state = start([axeman(), fighter("b", "blue", (20, 10))], terrain=terrain)
    declare(state, "a", 2)
    events = smash(state, "wall@1,0", [4, 2, 2, 4, 4, 4, 4])
    damaged = of_type(events, R6ObjectDamaged)[0]
    assert (damaged.attack.total, damaged.attack.target) == (8, 5)
    assert (damaged.resistance, damaged.levels, damaged.destroyed, damaged.square) == (12, 3, True, (1, 0))
    assert state.terrain.walls == []
    act(state, R6Move(command_id=cid(), actor="a", path=[(1, 0)]))
    assert state.combatants["a"].position == (1, 0)
    assert rejection(smash(state, "wall@1,0")) == "there is no wall at (1, 0)"


def test_r6_25_already_destroyed_objects_and_bad_targets_are_refused() -> None:
    """R6-25: unknown objects, walls that are not there, targets out of reach, destroyed objects."""
    far_door = {**DOOR, "id": "far", "square": [3, 0]}
    state = start([axeman(), fighter("b", "blue", (20, 10))], objects=[DOOR, far_door])
    declare(state, "a", 1)
    assert rejection(smash(state, "gate")) == "unknown object 'gate'; objects here: door, far, or wall@x,y"
    assert rejection(smash(state, "wall@5,5")) == "there is no wall at (5, 5)"
    assert rejection(smash(state, "wall@x")) == "a wall target is written 'wall@x,y', not 'wall@x'"
    assert rejection(smash(state, "far")) == "oak door is 3 Spaces away, beyond axe's reach (1)"
    state.aux["objects"] = {"door": 3}
    assert rejection(smash(state, "door")) == "oak door is already destroyed"


def test_r6_25_toughness_can_be_rolled() -> None:
    """R6-25 setting object_toughness_mode "roll": the Tough 2D is rolled (no Wild Die): 3 + 4 = 7."""
    state = start([axeman(), fighter("b", "blue", (20, 10))], objects=[DOOR], object_toughness_mode="roll")
    declare(state, "a", 1)
    events = smash(state, "door", [4, 4, 4, 3, 2, 2, 2, 2, 3, 4])
    damaged = of_type(events, R6ObjectDamaged)[0]
    assert damaged.resistance_roll is not None and damaged.resistance == 7
    assert damaged.damage.total == 8 and damaged.levels == 1  # type: ignore[union-attr]


def test_r6_25_shooting_an_object_uses_range_and_ammunition() -> None:
    """R6-25 with R6-14: a pistol at 4 Spaces (Short, no modifier) uses one round."""
    door = {**DOOR, "square": [4, 0], "defense": 10}
    state = start([fighter("a", "red", (0, 0), weapons=[PISTOL], skills={"firearms": "3D"}), fighter("b", "blue", (20, 10))], objects=[door])
    declare(state, "a", 1)
    events = smash(state, "door", [4, 4, 4, 3, 3, 3, 3])
    assert of_type(events, StateAdjusted)[0].changes == {"ammo": {"pistol": 5}}
    damaged = of_type(events, R6ObjectDamaged)[0]
    assert damaged.attack.total == 12 and damaged.attack.modifiers == [] and damaged.levels == 2
    assert state.combatants["a"].ammo["pistol"] == 5


def test_r6_25_replay_rebuilds_object_damage_and_the_map() -> None:
    """R6-25: structural damage and removed walls are rebuilt from the events alone."""
    from firelane.engine.core import SEQUENCER
    from firelane.engine.dice import FixedDice
    from firelane.engine.systems.rond6 import SYSTEM
    from firelane.events.schemas import EncounterSetup, StartEncounter

    terrain = Terrain(width=30, height=20, walls=[Wall(1, 0), Wall(1, 1)])
    setup = EncounterSetup(system="rond6", combatants=[axeman(), fighter("b", "blue", (20, 10))], terrain=terrain, settings={"objects": [DOOR]})
    state = SYSTEM.initial_state()
    state.encounter = "test"
    log = SYSTEM.decide(state, StartEncounter(command_id="s", actor=SEQUENCER, setup=setup, seed_commitment="x"), FixedDice([5, 4]))
    for event in log:
        SYSTEM.evolve(state, event)
    log += declare(state, "a", 1)  # type: ignore[arg-type]
    log += smash(state, "wall@1,0", [4, 4, 4, 4, 4, 4, 4, 4])
    assert state.terrain.walls == [Wall(1, 1)]
    assert replayed(log) == state


def test_r6_25_bad_object_data_is_a_clear_rejection() -> None:
    """R6-25: an object with an unknown construction in the encounter's data is refused, not a crash."""
    bad = {**DOOR, "construction": "cardboard"}
    state = start([axeman(), fighter("b", "blue", (20, 10))], objects=[bad])
    declare(state, "a", 1)
    assert rejection(smash(state, "door", [5, 5, 5, 5, 4, 4, 4, 4])) == (
        "R6BreakObject: unknown construction 'cardboard'; known: flimsy, tough, sturdy, very sturdy, reinforced"
    )
