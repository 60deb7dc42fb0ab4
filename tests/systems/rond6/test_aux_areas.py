"""R6-40 burst areas and R6-41 cone areas: the pure geometry."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from firelane.engine.grid import Grid, distance
from firelane.engine.systems.rond6.areas import (
    CONE_LENGTH,
    FACINGS,
    affected_burst,
    affected_cone,
    burst_squares,
    cone_rows,
    cone_squares,
    cone_width,
    facing_towards,
    facing_vector,
)
from firelane.events.schemas import Terrain, Wall


@pytest.mark.parametrize(("size", "radius"), [("small", 1), ("medium", 3), ("large", 6), ("huge", 12)])
def test_r6_40_burst_radius_includes_the_target_space(size: str, radius: int) -> None:
    """R6-40: Small 1, Medium 3, Large 6, Huge 12 Spaces radius, target Space included."""
    squares = burst_squares((20, 20), size)
    assert (20, 20) in squares
    assert len(squares) == (2 * radius + 1) ** 2
    assert max(distance((20, 20), s) for s in squares) == radius
    assert (20 + radius + 1, 20) not in squares


def test_r6_40_small_burst_is_the_three_by_three_block() -> None:
    """R6-40: a Small Burst at (5,5) covers (4..6, 4..6)."""
    assert sorted(burst_squares((5, 5), "small")) == sorted((x, y) for x in range(4, 7) for y in range(4, 7))


def test_r6_40_burst_is_clipped_by_the_map_and_blocked_by_walls() -> None:
    """R6-40 (house default area_walls_block): wall Spaces and Spaces behind walls are not affected."""
    terrain = Terrain(width=10, height=10, walls=[Wall(2, 0), Wall(2, 1), Wall(2, 2)])
    grid = Grid(terrain)
    squares = affected_burst(grid, (0, 1), "medium")
    assert (0, 1) in squares and (1, 1) in squares
    assert (2, 1) not in squares  # the wall itself
    assert (3, 1) not in squares  # behind the wall
    assert all(0 <= x < 10 and 0 <= y < 10 for x, y in squares)
    assert (3, 4) in squares  # around the end of the wall
    unblocked = affected_burst(grid, (0, 1), "medium", walls_block=False)
    assert (3, 1) in unblocked and (2, 1) not in unblocked


def test_r6_41_cone_widths_by_distance() -> None:
    """R6-41: rows 1-3 are 3 wide, 4-6 5, 7-9 7, 10-12 9."""
    assert [cone_width(r) for r in range(1, 13)] == [3, 3, 3, 5, 5, 5, 7, 7, 7, 9, 9, 9]
    with pytest.raises(ValueError):
        cone_width(13)


@pytest.mark.parametrize(("size", "length", "count"), [
    ("small", 3, 9), ("medium", 6, 24), ("large", 9, 45), ("huge", 12, 72),
])
def test_r6_41_cone_lengths_and_sizes(size: str, length: int, count: int) -> None:
    """R6-41: Small 3, Medium 6, Large 9, Huge 12 Spaces long; Space counts follow the width table."""
    assert CONE_LENGTH[size] == length
    for facing in FACINGS:
        rows = cone_rows((30, 30), facing, size)
        assert len(rows) == length
        squares = [s for row in rows for s in row]
        assert len(squares) == len(set(squares)) == count
        assert [distance((30, 30), s) for s in rows[-1]] == [length] * len(rows[-1])


def test_r6_41_small_cone_east_exact_spaces() -> None:
    """R6-41: a Small Cone facing east from (0,5) starts in the adjacent column."""
    assert cone_rows((0, 5), "e", "small") == [
        [(1, 4), (1, 5), (1, 6)],
        [(2, 4), (2, 5), (2, 6)],
        [(3, 4), (3, 5), (3, 6)],
    ]


def test_r6_41_medium_cone_north_widens_at_row_four() -> None:
    """R6-41: a Medium Cone facing north (-y) is 5 wide at rows 4-6."""
    rows = cone_rows((10, 10), "north", "medium")
    assert rows[0] == [(9, 9), (10, 9), (11, 9)]
    assert rows[3] == [(8, 6), (9, 6), (10, 6), (11, 6), (12, 6)]


def test_r6_41_diagonal_cone_rows_are_l_shaped() -> None:
    """R6-41: facing south-east, row 1 is the corner Space and its two neighbours along the arms."""
    rows = cone_rows((0, 0), "se", "medium")
    assert rows[0] == sorted([(1, 1), (0, 1), (1, 0)])
    assert rows[3] == sorted([(4, 4), (3, 4), (2, 4), (4, 3), (4, 2)])


def test_r6_41_the_attacker_is_never_in_its_cone() -> None:
    """R6-41: the cone starts adjacent to the attacker and never covers its Space."""
    for facing in FACINGS:
        assert (7, 7) not in cone_squares((7, 7), facing, "huge")


def test_r6_41_cone_is_clipped_and_blocked() -> None:
    """R6-41: walls block the cone beyond them (house default); off-map Spaces drop."""
    grid = Grid(Terrain(width=8, height=8, walls=[Wall(3, 3)]))
    squares = affected_cone(grid, (0, 3), "e", "medium")
    assert (3, 3) not in squares and (4, 3) not in squares
    assert (3, 2) in squares and (5, 1) in squares
    assert all(x < 8 for x, _ in squares)


def test_r6_41_facings_eight_directions() -> None:
    """R6-41: facing in 8 directions, by name or towards a square."""
    assert facing_vector("NE") == (1, -1)
    assert facing_vector((0, 1)) == (0, 1)
    assert facing_towards((0, 0), (5, 2)) == "se"
    assert facing_towards((4, 4), (4, 0)) == "n"
    with pytest.raises(ValueError, match="unknown facing 'up'"):
        facing_vector("up")
    with pytest.raises(ValueError, match="facing vector"):
        facing_vector((2, 0))


@given(x=st.integers(-5, 5), y=st.integers(-5, 5), facing=st.sampled_from(sorted(FACINGS)),
       size=st.sampled_from(sorted(CONE_LENGTH)))
def test_r6_41_property_every_cone_space_lies_ahead(x: int, y: int, facing: str, size: str) -> None:
    """R6-41 property: every Space of a cone lies on the facing's side of the attacker, within its length."""
    fx, fy = FACINGS[facing]
    for sx, sy in cone_squares((x, y), facing, size):
        assert (sx - x) * fx + (sy - y) * fy > 0
        assert 1 <= distance((x, y), (sx, sy)) <= CONE_LENGTH[size]
