"""Area templates on the square grid (firelane.engine.templates): pure geometry."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from firelane.engine.grid import Grid, distance
from firelane.engine.templates import (
    COMPASS,
    D8_DIRECTIONS,
    TemplateError,
    burst_squares,
    cone_squares,
    direction_vector,
    draw,
    drift,
    feet_to_squares,
    has_line_of_effect,
    line_squares,
    open_squares,
    split_by_line_of_effect,
)
from firelane.events.schemas import Terrain, Wall


def grid_with(walls: list[tuple[int, int]] = (), width: int = 12, height: int = 12) -> Grid:  # type: ignore[assignment]
    return Grid(Terrain(width=width, height=height, walls=[Wall(x, y) for x, y in walls]))


def test_feet_convert_to_whole_squares() -> None:
    assert feet_to_squares(10) == 2
    assert feet_to_squares(15) == 3
    assert feet_to_squares(12) == 2
    assert feet_to_squares(10, square_size=2) == 5
    with pytest.raises(TemplateError):
        feet_to_squares(10, square_size=0)


def test_burst_covers_every_square_within_the_radius() -> None:
    """BB-CMB-28: a 10-ft burst (2 squares) is the 5x5 block around its point."""
    squares = burst_squares((5, 5), 2)
    assert len(squares) == 25
    assert set(squares) == {(x, y) for x in range(3, 8) for y in range(3, 8)}
    assert burst_squares((1, 1), 0) == [(1, 1)]
    with pytest.raises(TemplateError):
        burst_squares((0, 0), -1)


def test_cone_along_an_axis_widens_one_square_each_side_every_other_step() -> None:
    """BB-CMB-28: a 15-ft flamer cone east is 1 + 3 + 3 squares."""
    assert cone_squares((0, 5), 3, COMPASS["E"]) == [
        (2, 4), (3, 4),
        (1, 5), (2, 5), (3, 5),
        (2, 6), (3, 6),
    ]
    north = cone_squares((5, 5), 3, COMPASS["N"])
    assert set(north) == {(5, 4), (4, 3), (5, 3), (6, 3), (4, 2), (5, 2), (6, 2)}
    assert (5, 5) not in north


def test_diagonal_cone_is_a_wedge_between_the_axes() -> None:
    assert set(cone_squares((0, 0), 3, COMPASS["SE"])) == {
        (1, 1), (2, 1), (1, 2), (2, 2), (3, 1), (1, 3), (3, 2), (2, 3), (3, 3),
    }
    assert set(cone_squares((0, 0), 2, COMPASS["SE"])) == {(1, 1), (2, 1), (1, 2), (2, 2)}


def test_cone_towards_a_point_aims_at_that_point() -> None:
    template = draw("cone", (5, 5), 3, (8, 4))
    assert template.aim == (3, -1)
    assert (8, 4) in template.squares
    assert set(template.squares) == {(8, 2), (7, 3), (8, 3), (6, 4), (7, 4), (8, 4), (6, 5), (7, 5), (8, 5)}
    with pytest.raises(TemplateError, match="aim point is the origin"):
        draw("cone", (5, 5), 3, (5, 5))


def test_cone_by_compass_direction() -> None:
    template = draw("cone", (5, 5), 3, "W", towards_is_point=False)  # type: ignore[arg-type]
    assert set(template.squares) == {(4, 5), (3, 4), (3, 5), (3, 6), (2, 4), (2, 5), (2, 6)}
    with pytest.raises(TemplateError, match="unknown direction"):
        direction_vector("UP")
    with pytest.raises(TemplateError, match="not one of the eight"):
        direction_vector((2, 0))


def test_line_runs_through_the_aim_point_to_its_full_length() -> None:
    assert line_squares((0, 0), (1, 0), 4) == [(1, 0), (2, 0), (3, 0), (4, 0)]
    assert line_squares((0, 0), (1, 1), 2) == [(1, 1), (2, 2)]
    template = draw("line", (2, 2), 3, (2, 8))
    assert template.squares == [(2, 3), (2, 4), (2, 5)]


def test_unknown_shape_is_refused() -> None:
    with pytest.raises(TemplateError, match="unknown template shape 'blob'"):
        draw("blob", (0, 0), 1)
    assert draw("single", (3, 3), 0).squares == [(3, 3)]


def test_walls_and_off_map_squares_are_never_part_of_an_effect() -> None:
    grid = grid_with([(1, 1)], width=3, height=3)
    assert open_squares(grid, burst_squares((0, 0), 1)) == [(0, 0), (1, 0), (0, 1)]


def test_blast_is_blocked_by_a_wall_between_point_and_square() -> None:
    """BB-CMB-27: a wall between the burst point and a square shields that square."""
    grid = grid_with([(6, 4), (6, 5), (6, 6)])
    reached, shielded = split_by_line_of_effect(grid, (5, 5), burst_squares((5, 5), 2))
    # Everything east of the wall: the lines to (6,3) and (6,7) clip the wall's end squares.
    assert shielded == [(6, 3), (7, 3), (7, 4), (7, 5), (7, 6), (6, 7), (7, 7)]
    assert not set(reached) & {(6, 4), (6, 5), (6, 6)}
    assert len(reached) == 25 - 3 - 7
    # A single wall square shields the three squares in its shadow; the far corners stay open.
    reached, shielded = split_by_line_of_effect(grid_with([(6, 5)]), (5, 5), burst_squares((5, 5), 2))
    assert shielded == [(7, 4), (7, 5), (7, 6)]
    assert has_line_of_effect(grid, (5, 5), (4, 5))
    assert not has_line_of_effect(grid, (5, 5), (7, 5))


def test_single_wall_corner_does_not_block_but_a_closed_corner_does() -> None:
    assert has_line_of_effect(grid_with([(1, 0)]), (0, 0), (1, 1))
    assert not has_line_of_effect(grid_with([(1, 0), (0, 1)]), (0, 0), (1, 1))


def test_drift_moves_along_the_d8_direction() -> None:
    """BB-CMB-25: d8 = 3 is east; a drift of 4 squares from (2,2) lands on (6,2)."""
    assert D8_DIRECTIONS[0] == (0, -1) and D8_DIRECTIONS[2] == (1, 0) and D8_DIRECTIONS[7] == (-1, -1)
    assert drift(grid_with(), (2, 2), D8_DIRECTIONS[2], 4) == (6, 2)
    assert drift(grid_with(), (5, 5), D8_DIRECTIONS[5], 2) == (3, 7)


def test_drift_stops_before_walls_and_the_map_edge() -> None:
    """BB-CMB-25: a drifting grenade stops on the last open square before a wall or the edge."""
    assert drift(grid_with([(5, 2)]), (2, 2), (1, 0), 6) == (4, 2)
    assert drift(grid_with(width=8, height=8), (5, 5), (1, 1), 6) == (7, 7)
    assert drift(grid_with([(3, 2), (2, 3)]), (2, 2), (1, 1), 3) == (2, 2)


@given(
    st.tuples(st.integers(-20, 20), st.integers(-20, 20)),
    st.integers(1, 8),
    st.sampled_from(list(COMPASS.values())),
)
def test_cone_squares_stay_within_length_and_in_front(origin: tuple[int, int], length: int, aim: tuple[int, int]) -> None:
    squares = cone_squares(origin, length, aim)
    assert squares and origin not in squares
    for square in squares:
        assert 1 <= distance(origin, square) <= length
        assert (square[0] - origin[0]) * aim[0] + (square[1] - origin[1]) * aim[1] > 0
    # The square straight down the aim line at every distance is always covered.
    for step in range(1, length + 1):
        assert (origin[0] + aim[0] * step, origin[1] + aim[1] * step) in squares


@given(st.tuples(st.integers(0, 11), st.integers(0, 11)), st.integers(0, 4))
def test_open_burst_reaches_everything_it_covers(center: tuple[int, int], radius: int) -> None:
    grid = grid_with()
    reached, shielded = split_by_line_of_effect(grid, center, burst_squares(center, radius))
    assert shielded == []
    assert set(reached) == {s for s in burst_squares(center, radius) if grid.in_bounds(s)}
