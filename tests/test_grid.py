"""Grid geometry the rule systems and their AIs lean on."""

from __future__ import annotations

import random

from firelane.engine.grid import Grid, Square, supercover_line
from firelane.events.schemas import Terrain, Wall


def crossings(a: Square, b: Square) -> tuple[set[Square], set[frozenset[Square]]]:
    """The squares and the corner pairs the line from a to b passes through."""
    squares: set[Square] = set()
    corners: set[frozenset[Square]] = set()
    for step in supercover_line(a, b):
        if isinstance(step[0], tuple):
            corners.add(frozenset(step))  # type: ignore[arg-type]
        else:
            squares.add(step)  # type: ignore[arg-type]
    return squares, corners


def test_a_line_crosses_the_same_squares_and_corners_both_ways() -> None:
    # Grid.line_of_sight answers both ways from one walk: this is why it may.
    for dx in range(-15, 16):
        for dy in range(-15, 16):
            assert crossings((0, 0), (dx, dy)) == crossings((dx, dy), (0, 0)), (dx, dy)


def test_line_of_sight_is_the_same_both_ways() -> None:
    rng = random.Random(7)
    walls = sorted({(rng.randrange(20), rng.randrange(20)) for _ in range(90)})
    terrain = Terrain(width=20, height=20, walls=[Wall(x, y) for x, y in walls])
    for _ in range(3000):
        a = (rng.randrange(20), rng.randrange(20))
        b = (rng.randrange(20), rng.randrange(20))
        # Fresh grids: each answer is walked, not read back from the other way.
        assert Grid(terrain).line_of_sight(a, b) == Grid(terrain).line_of_sight(b, a), (a, b)
