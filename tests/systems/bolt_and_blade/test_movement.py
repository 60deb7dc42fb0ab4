"""Bolt & Blade movement: fire lanes, Exposed, Tactical Move, Dash, Evade,
Disengage, entering cover (BB-CMB-02, -03, -05..09, -29)."""

from __future__ import annotations

from firelane.engine.grid import Grid, fire_lane_crossings, in_fire_lane
from firelane.events.bolt_and_blade_schemas import BBDisengage, BBMovementStopped
from firelane.events.schemas import (
    ActionTaken,
    AttackResolved,
    ConditionApplied,
    ConditionRemoved,
    CoverFeature,
    Moved,
    ReactionWindowOpened,
    Terrain,
    Wall,
)

from .helpers import act, arena, attack, claim, end, fighter, knife_only, move, of, one, pass_, rejected, sheet, start

EAST = [(1, 0)]
NORTH = [(0, -1)]


def lane_setup(cover: list[CoverFeature] = (), **settings) -> object:  # type: ignore[assignment]
    """m (red) at (1, 5) moves first; w (blue, lasgun) watches from (10, 5)."""
    setup = arena([fighter("m", "red", (1, 5), **knife_only()), fighter("w", "blue", (10, 5), **sheet())], cover=list(cover), **settings)
    return start(setup, ["m", "w"])


def test_fire_lane_geometry() -> None:
    """BB-CMB-02: a fire lane is open line of sight within the weapon's reach, no cover facing the shooter."""
    grid = Grid(Terrain(width=20, height=10, walls=[Wall(5, 3)], cover=[CoverFeature(x=4, y=5, level="light", facing=EAST), CoverFeature(x=4, y=6, level="light", facing=NORTH)]))
    watcher = (10, 5)
    assert in_fire_lane(grid, (3, 5), watcher, 12)
    assert not in_fire_lane(grid, (4, 5), watcher, 12)  # cover facing the watcher
    assert in_fire_lane(grid, (4, 6), watcher, 12)  # cover facing north does not stop fire from the east
    assert not in_fire_lane(grid, (1, 5), watcher, 8)  # beyond the weapon's reach
    assert not in_fire_lane(grid, (0, 1), watcher, 12)  # the wall at (5, 3) blocks the sight line
    assert fire_lane_crossings(grid, [(3, 5), (4, 5), (4, 6)], watcher, 12) == [0, 2]


def test_crossing_a_lane_opens_a_window_with_the_rest_of_the_path() -> None:
    """BB-CMB-02: moving through open ground while an enemy sees you with a ready ranged weapon crosses a fire lane."""
    state = lane_setup()
    events = act(state, move("m", (1, 6), (1, 7), (1, 8)))
    assert one(events, Moved).path == [(1, 6)] and state.combatants["m"].position == (1, 6)
    window = one(events, ReactionWindowOpened)
    assert window.trigger == "fire_lane" and window.rule == "BB-CMB-02"
    assert [(r.combatant, r.reactions) for r in window.reactors] == [("w", ["reactive_fire"])]
    assert window.continuation["rest"] == [[1, 7], [1, 8]]


def test_fire_lanes_make_no_automatic_attacks_and_offer_once_per_move() -> None:
    """BB-CMB-03: a lane only offers a Reaction; passing makes no attack; one offer per move, one Reaction per round."""
    state = lane_setup()
    act(state, move("m", (1, 6), (1, 7), (1, 8)))
    events = act(state, pass_("w", 1))
    assert not of(events, AttackResolved) and not of(events, ReactionWindowOpened)
    assert one(events, Moved).path == [(1, 7), (1, 8)] and state.combatants["m"].position == (1, 8)
    assert not state.combatants["w"].reaction_used
    # Dash on: w is offered again on a new move, claims, and then has no Reaction left this round.
    act(state, move("m", (1, 9), mode="dash"))
    act(state, claim("w", 2, "reactive_fire"), [2])  # a miss
    assert state.combatants["w"].reaction_used
    events = act(state, move("m", (1, 10), (1, 11)))
    assert not of(events, ReactionWindowOpened) and state.combatants["m"].position == (1, 11)


def test_exposed_gives_plus_two_and_no_cover() -> None:
    """BB-CMB-05: ranged attacks against an Exposed target gain +2 and it cannot benefit from cover."""
    setup = arena(
        [fighter("w", "blue", (10, 5), **sheet()), fighter("m", "red", (4, 5), **knife_only())],
        cover=[CoverFeature(x=4, y=5, level="heavy", facing=EAST)],
    )
    state = start(setup, ["w", "m"])
    state.combatants["m"].conditions["exposed"] = "start_of_turn:m"
    events = act(state, attack("w", "m"), [6, 3])
    hit = one(events, AttackResolved)
    assert ("m is Exposed", "BB-CMB-05", 2) in [(m.source, m.rule, m.value) for m in hit.roll.modifiers]
    assert hit.defense.total == 10 and "exposed: cannot benefit from cover" in hit.defense.notes
    assert hit.roll.total == 10 and hit.hit


def test_tactical_move_cover_to_cover_is_safe_open_ground_exposes() -> None:
    """BB-CMB-06: 30 ft of Movement; cover to cover without a lane is safe; crossing open ground in sight exposes you."""
    cover = [CoverFeature(x=1, y=y, level="light", facing=EAST) for y in (5, 6, 7)]
    state = lane_setup(cover)
    events = act(state, move("m", (1, 6), (1, 7)))
    assert [type(e).__name__ for e in events] == ["Moved"] and "exposed" not in state.combatants["m"].conditions
    assert one(events, Moved).cost == 10 and one(events, Moved).rule == "BB-CMB-06"
    events = act(state, move("m", (2, 7), (2, 8)))
    exposed = one(events, ConditionApplied)
    assert exposed.condition == "exposed" and exposed.until == "start_of_turn:m"
    assert one(events, ReactionWindowOpened).continuation["rest"] == [[2, 8]]
    assert rejected(act(state, move("m", (3, 8)))) == "waiting for reactions in window 1 (w); BBMove must wait"


def test_tactical_move_is_limited_to_movement() -> None:
    """BB-CMB-06: Movement 30 ft on 5-ft squares (house default); diagonals cost one square."""
    setup = arena([fighter("m", "red", (1, 1), **knife_only()), fighter("e", "blue", (20, 18), **knife_only())], walls=[(3, 3)])
    state = start(setup, ["m", "e"])
    assert rejected(act(state, move("m", *[(1 + i, 1 + i) for i in range(1, 8)]))).startswith("illegal path: (3, 3) is a wall")
    assert rejected(act(state, move("m", *[(1 + i, 1) for i in range(1, 8)]))) == "the path costs 35 ft but m has only 30 ft of movement left"
    assert rejected(act(state, move("m", (3, 1)))) == "illegal path: (3, 1) is not adjacent to (1, 1)"
    act(state, move("m", (2, 2), (3, 2), (4, 3)))
    act(state, move("m", (5, 4), (6, 5), (7, 6)))
    assert state.combatants["m"].movement_used_ft == 30 and state.combatants["m"].position == (7, 6)
    assert rejected(act(state, move("m", (8, 6)))) == "the path costs 5 ft but m has only 0 ft of movement left"


def test_dash_moves_movement_again_and_removes_reactive_fire_disadvantage() -> None:
    """BB-CMB-07: Dash (Action) moves Movement again; Reactive Fire against a Dashing mover has no Disadvantage."""
    flank = [CoverFeature(x=x, y=5, level="light", facing=NORTH) for x in range(1, 15)]
    state = lane_setup(flank)
    events = act(state, move("m", (2, 5), mode="dash"))
    assert one(events, ActionTaken).action == "dash" and "exposed" not in state.combatants["m"].conditions
    events = act(state, claim("w", 1, "reactive_fire"), [7])  # one d20: Dashing, so no Disadvantage; 7 + 2 < 10
    shot = one(events, AttackResolved)
    assert len(shot.roll.dice) == 1 and shot.roll.details["disadvantage"] == [] and not shot.hit
    assert state.combatants["m"].movement_allowance_ft == 60
    # Tactical move through the same kind of square: Disadvantage (two d20, lower kept).
    state = lane_setup(flank)
    act(state, move("m", (2, 5)))
    shot = one(act(state, claim("w", 1, "reactive_fire"), [15, 4]), AttackResolved)
    assert len(shot.roll.dice) == 2 and shot.roll.kept == [1] and shot.roll.details["disadvantage"] == ["Reactive Fire (BB-CMB-11)"]


def test_dash_allows_sixty_feet() -> None:
    """BB-CMB-07: a Dash adds the Movement again: 12 squares in one turn."""
    setup = arena([fighter("m", "red", (1, 1), **knife_only()), fighter("e", "blue", (25, 18), **knife_only())])
    state = start(setup, ["m", "e"])
    act(state, move("m", *[(1 + i, 1) for i in range(1, 13)], mode="dash"))
    assert state.combatants["m"].position == (13, 1) and state.combatants["m"].movement_used_ft == 60
    assert rejected(act(state, move("m", (14, 1), mode="dash"))) == "m has already used its Action this turn; Dash needs it"


def test_evade_gives_reactive_fire_disadvantage_even_when_exposed_and_forbids_attacks() -> None:
    """BB-CMB-08: Evade (Action): Reactive Fire has Disadvantage until the end of your turn, even where it otherwise would not; no attack that turn."""
    state = lane_setup()
    events = act(state, move("m", (1, 6), (1, 7), mode="evade"))
    assert [e.condition for e in of(events, ConditionApplied)] == ["evading", "exposed"]
    shot = one(act(state, claim("w", 1, "reactive_fire"), [18, 5]), AttackResolved)
    assert shot.roll.details["disadvantage"] == ["the target is Evading (BB-CMB-08)"] and shot.roll.dice[shot.roll.kept[0]].face == 5 and shot.roll.total == 9
    assert rejected(act(state, attack("m", "w"))) == "m has already used its Action this turn"
    events = act(state, end("m"))
    assert "evading" in [e.condition for e in of(events, ConditionRemoved)]
    # Attacking first rules Evade out.
    setup = arena([fighter("m", "red", (1, 5), **sheet()), fighter("w", "blue", (10, 5), **knife_only())])
    state = start(setup, ["m", "w"])
    act(state, attack("m", "w"), [2])
    assert rejected(act(state, move("m", (1, 6), mode="evade"))) == "m has already used its Action this turn; Evade needs it"


def test_bb_cmb_08_evade_moves_up_to_movement_not_movement_again() -> None:
    """BB-CMB-08: Evade is "move up to your Movement" (a Dash is "your Movement again"):
    with Movement 30 ft a 35 ft Evade is refused, a 30 ft one walks, and the
    Movement a Tactical Move already used is gone for the Evade too."""
    setup = arena([fighter("m", "red", (1, 1), **knife_only()), fighter("e", "blue", (25, 18), **knife_only())])
    state = start(setup, ["m", "e"])
    assert rejected(act(state, move("m", *[(1 + i, 1) for i in range(1, 8)], mode="evade"))) == "the path costs 35 ft but m has only 30 ft of movement left"
    act(state, move("m", *[(1 + i, 1) for i in range(1, 7)], mode="evade"))
    assert state.combatants["m"].position == (7, 1) and state.combatants["m"].movement_allowance_ft == 30
    state = start(setup, ["m", "e"])
    act(state, move("m", (2, 1), (3, 1)))
    assert rejected(act(state, move("m", *[(3 + i, 1) for i in range(1, 6)], mode="evade"))) == "the path costs 25 ft but m has only 20 ft of movement left"
    act(state, move("m", *[(3 + i, 1) for i in range(1, 5)], mode="evade"))
    assert state.combatants["m"].position == (7, 1) and state.combatants["m"].movement_used_ft == 30


def test_disengage_prevents_opportunity_strikes() -> None:
    """BB-CMB-09: after Disengage, leaving melee reach provokes no Opportunity Strike."""
    setup = arena([fighter("m", "red", (2, 5), **knife_only()), fighter("e", "blue", (3, 5), **knife_only())])
    state = start(setup, ["m", "e"])
    events = act(state, move("m", (1, 5)))
    window = one(events, ReactionWindowOpened)
    assert window.trigger == "leaving_reach" and window.reactors[0].reactions == ["opportunity_strike"]
    assert state.combatants["m"].position == (2, 5)  # the strike comes before it leaves
    state = start(setup, ["m", "e"])
    act(state, BBDisengage(command_id="d", actor="m"))
    events = act(state, move("m", (1, 5), (0, 5)))
    assert not of(events, ReactionWindowOpened) and state.combatants["m"].position == (0, 5)


def test_entering_adjacent_cover_costs_five_feet() -> None:
    """BB-CMB-29: entering adjacent cover costs 5 ft, even diagonally and even while Pinned."""
    setup = arena(
        [fighter("m", "red", (2, 5), **knife_only()), fighter("e", "blue", (20, 5), **knife_only())],
        cover=[CoverFeature(x=3, y=6, level="light", facing=EAST)],
    )
    state = start(setup, ["m", "e"])
    state.combatants["m"].conditions["pinned"] = ""
    events = act(state, move("m", (3, 6)))
    assert one(events, Moved).cost == 5
    events = act(state, move("m", (4, 6)))  # back into open ground while Pinned: double
    assert one(events, Moved).cost == 10 and state.combatants["m"].movement_used_ft == 15


def test_reaching_cover_ends_exposed() -> None:
    """BB-CMB-06: Exposed lasts during the crossing; ending the move in cover ends it."""
    state = lane_setup([CoverFeature(x=1, y=8, level="heavy", facing=EAST)])
    act(state, move("m", (1, 6), (1, 7), (1, 8)))
    events = act(state, pass_("w", 1))
    assert one(events, ConditionRemoved).reason == "reached cover" and "exposed" not in state.combatants["m"].conditions
    assert not of(events, BBMovementStopped)
