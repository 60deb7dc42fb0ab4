"""The AI's fast sight, cover and steps answer exactly as the terrain's Grid does.

`sight.WallSight`, `sight.CoverLookup` and `sight.Steps` stand in for
`Grid.line_of_sight`, `Grid.cover_facing` and `Grid.steps_from` where the AI
asks thousands of times per decision; on random terrains (walls, cover of every
level and facing) every answer is the Grid's.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from firelane.engine.grid import Grid
from firelane.engine.systems.bolt_and_blade.sight import CoverLookup, Steps, WallSight
from firelane.events.schemas import CoverFeature, Terrain, Wall

DIRECTIONS = [(1, 0), (0, 1), (-1, 0), (0, -1), (1, 1), (-1, 1), (1, -1), (-1, -1)]


@st.composite
def terrains(draw: st.DrawFn) -> Terrain:
    width, height = draw(st.integers(2, 14)), draw(st.integers(2, 14))
    square = st.tuples(st.integers(0, width - 1), st.integers(0, height - 1))
    walls = draw(st.sets(square, max_size=width * height // 2))
    cover = draw(st.lists(st.builds(lambda at, level, facing: CoverFeature(x=at[0], y=at[1], level=level, facing=facing),
                                    square, st.sampled_from(["light", "heavy", "heavy_tall"]),
                                    st.lists(st.sampled_from(DIRECTIONS), max_size=3, unique=True)), max_size=12))
    return Terrain(width=width, height=height, walls=[Wall(x, y) for x, y in walls], cover=cover)


@settings(max_examples=40, deadline=None)
@given(terrains(), st.data())
def test_wall_sight_cover_lookup_and_steps_equal_the_grid(terrain: Terrain, data: st.DataObject) -> None:
    grid, reference = Grid(terrain), Grid(terrain)
    sight, cover, steps = WallSight(grid), CoverLookup(grid), Steps(grid)
    square = st.tuples(st.integers(0, terrain.width - 1), st.integers(0, terrain.height - 1))
    for _ in range(40):
        a, b = data.draw(square), data.draw(square)
        assert sight.clear(a, b) == reference.line_of_sight(a, b), (a, b)
        assert cover.facing(a, b) == reference.cover_facing(a, b), (a, b)
        assert steps.steps_from(a) == reference.steps_from(a), a


def test_wall_sight_answers_every_pair_of_a_walled_map() -> None:
    """Every pair of squares of a 12 x 9 map with a wall stub, a corner pair and an L."""
    walls = [(4, 2), (4, 3), (4, 4), (6, 6), (7, 7), (9, 1), (10, 1), (10, 2)]
    terrain = Terrain(width=12, height=9, walls=[Wall(x, y) for x, y in walls])
    grid, reference = Grid(terrain), Grid(terrain)
    sight = WallSight(grid)
    squares = [(x, y) for x in range(12) for y in range(9)]
    assert all(sight.clear(a, b) == reference.line_of_sight(a, b) for a in squares for b in squares)
