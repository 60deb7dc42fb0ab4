"""Bolt & Blade movement: fire lanes, Exposed, Tactical Move, Dash, Evade,
Disengage, entering cover (BB-CMB-02, -03, -05..09, -29)."""

from __future__ import annotations

from firelane.engine.grid import Grid, fire_lane_crossings, in_fire_lane
from firelane.engine.systems.bolt_and_blade.schemas import BBDisengage
from firelane.events.schemas import (
    ActionTaken,
    AttackResolved,
    ConditionApplied,
    ConditionRemoved,
    CoverFeature,
    EligibleReactor,
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


def exposure_arena(m_at: tuple[int, int], order: list[str]):  # type: ignore[no-untyped-def]
    """m (red, knife) at ``m_at``; heavy cover on (4, 5) facing east; w (blue) east at
    (10, 5), n (blue) north at (4, 1), both with lasguns (+2 to hit). m's Defense is 10."""
    setup = arena(
        [fighter("m", "red", m_at, **knife_only()), fighter("w", "blue", (10, 5), **sheet()), fighter("n", "blue", (4, 1), **sheet())],
        cover=[CoverFeature(x=4, y=5, level="heavy", facing=EAST)],
    )
    return start(setup, order)


def exposed_terms(shot: AttackResolved) -> list[tuple[str, str, int]]:
    return [(m.source, m.rule, m.value) for m in shot.roll.modifiers if m.rule == "BB-CMB-05"]


def test_bb_cmb_05_a_creature_placed_in_the_open_is_exposed() -> None:
    """BB-CMB-05: "Exposed when caught in open ground without meaningful cover": m has not
    moved, it stands in the open: ranged attacks gain +2 and it has no cover (3 + 2 + 2 = 7)."""
    state = exposure_arena((4, 8), ["w", "n", "m"])
    shot = one(act(state, attack("w", "m"), [3]), AttackResolved)
    assert exposed_terms(shot) == [("m is Exposed", "BB-CMB-05", 2)] and shot.roll.total == 7
    assert shot.defense.total == 10 and shot.defense.notes == ["no cover facing the attacker: Exposed (BB-CMB-05)"]


def test_bb_cmb_05_still_in_the_open_at_its_turn_start_it_is_still_exposed() -> None:
    """BB-CMB-05: being Exposed is where you stand, not a mark that wears off: m crossed open
    ground in round 1; in round 2, after its turn has started and it stayed put, it is still Exposed."""
    state = exposure_arena((4, 8), ["m", "w", "n"])
    act(state, move("m", (4, 9)))
    act(state, pass_("w", 1))
    act(state, pass_("n", 1))
    for who in ("m", "w", "n", "m"):
        act(state, end(who))
    assert state.round == 2 and state.active == "w"
    shot = one(act(state, attack("w", "m"), [3]), AttackResolved)
    assert exposed_terms(shot) == [("m is Exposed", "BB-CMB-05", 2)] and shot.roll.total == 7 and shot.defense.total == 10


def test_bb_cmb_05_cover_facing_away_from_this_attacker_leaves_you_exposed_to_it() -> None:
    """BB-CMB-05 with BB-CMB-04: Exposed is judged against each attacker: behind heavy cover
    facing east, m is Exposed to n (north: +2, Defense 10) and covered from w (east: no +2, Defense 15)."""
    state = exposure_arena((4, 5), ["n", "w", "m"])
    from_north = one(act(state, attack("n", "m"), [3]), AttackResolved)
    assert exposed_terms(from_north) == [("m is Exposed", "BB-CMB-05", 2)] and from_north.roll.total == 7 and from_north.defense.total == 10
    act(state, end("n"))
    from_east = one(act(state, attack("w", "m"), [3]), AttackResolved)
    assert exposed_terms(from_east) == [] and from_east.roll.total == 5
    assert from_east.defense.total == 15 and from_east.defense.notes == ["heavy cover facing the attacker"]


def test_bb_cmb_06_ending_a_move_in_cover_covers_you_only_from_the_side_it_faces() -> None:
    """BB-CMB-06 with BB-CMB-05: m crosses open ground (Exposed during the move) and ends it
    behind cover facing east: covered from w, still Exposed to n, who shoots from the north."""
    state = exposure_arena((4, 8), ["m", "n", "w"])
    events = act(state, move("m", (4, 7), (4, 6), (4, 5)))
    assert one(events, Moved).exposed and one(events, ReactionWindowOpened).reactors == [EligibleReactor(combatant="n", reactions=["reactive_fire"]), EligibleReactor(combatant="w", reactions=["reactive_fire"])]
    events = act(state, pass_("n", 1)) + act(state, pass_("w", 1))
    assert [m.path for m in of(events, Moved)] == [[(4, 6), (4, 5)]] and state.combatants["m"].position == (4, 5)
    assert not of(events, ConditionApplied) and not of(events, ConditionRemoved)  # no Exposed flag to set or drop
    act(state, end("m"))
    from_north = one(act(state, attack("n", "m"), [3]), AttackResolved)
    assert exposed_terms(from_north) == [("m is Exposed", "BB-CMB-05", 2)] and from_north.defense.total == 10
    act(state, end("n"))
    from_east = one(act(state, attack("w", "m"), [3]), AttackResolved)
    assert exposed_terms(from_east) == [] and from_east.defense.total == 15


def test_tactical_move_cover_to_cover_is_safe_open_ground_exposes() -> None:
    """BB-CMB-06: 30 ft of Movement; cover to cover without a lane is safe; crossing open ground in sight exposes you."""
    cover = [CoverFeature(x=1, y=y, level="light", facing=EAST) for y in (5, 6, 7)]
    state = lane_setup(cover)
    events = act(state, move("m", (1, 6), (1, 7)))
    assert [type(e).__name__ for e in events] == ["Moved"] and not one(events, Moved).exposed
    assert one(events, Moved).cost == 10 and one(events, Moved).rule == "BB-CMB-06"
    events = act(state, move("m", (2, 7), (2, 8)))
    assert one(events, Moved).path == [(2, 7)] and one(events, Moved).exposed  # open ground in w's sight
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
    assert one(events, ActionTaken).action == "dash"
    events = act(state, claim("w", 1, "reactive_fire"), [5])  # one d20: no Disadvantage; 5 + 2 + 2 (Exposed: the cover faces north) < 10
    shot = one(events, AttackResolved)
    assert len(shot.roll.dice) == 1 and shot.roll.details["disadvantage"] == [] and not shot.hit
    spent = [e for e in of(events, ActionTaken) if e.action == "reactive_fire"][0]
    assert spent.details["disadvantage_waived_by"] == ["the target is Dashing (BB-CMB-07)", "the target is Exposed (BB-CMB-11)"]
    assert state.combatants["m"].movement_allowance_ft == 60


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
    assert [e.condition for e in of(events, ConditionApplied)] == ["evading"] and one(events, Moved).exposed
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
