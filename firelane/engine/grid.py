"""Square-grid geometry shared by the rule systems: distance, lines, sight, cover.

Squares are (x, y) integer pairs. Distance is counted in squares with
diagonals costing one square (Chebyshev), the house default; a system converts
squares to its own unit with ``terrain.square_size``.

Line of sight runs between square centres through every square the segment
touches (a "supercover" line); a wall square on the way blocks it. When the
segment passes exactly through a corner, it is blocked only if both squares
beside the corner are walls, so a shot can skim a single wall's corner.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import cached_property

from firelane.events.schemas import CoverFeature, Terrain

Square = tuple[int, int]


def distance(a: Square, b: Square) -> int:
    return max(abs(a[0] - b[0]), abs(a[1] - b[1]))


def adjacent(a: Square, b: Square) -> bool:
    return a != b and distance(a, b) == 1


def direction(frm: Square, to: Square) -> tuple[int, int]:
    """The unit grid vector (each component -1, 0 or 1) pointing from ``frm`` towards ``to``."""
    dx, dy = to[0] - frm[0], to[1] - frm[1]
    return ((dx > 0) - (dx < 0), (dy > 0) - (dy < 0))


def supercover_line(a: Square, b: Square) -> Iterator[Square | tuple[Square, Square]]:
    """Squares the centre-to-centre segment a->b passes through, in order.

    Where the segment crosses exactly through a grid corner it yields the pair
    of squares beside that corner as a tuple (either may be passed).
    """
    x, y = a
    dx, dy = b[0] - a[0], b[1] - a[1]
    nx, ny = abs(dx), abs(dy)
    sx, sy = (dx > 0) - (dx < 0), (dy > 0) - (dy < 0)
    ix = iy = 0
    yield (x, y)
    while ix < nx or iy < ny:
        # Compare (0.5 + ix) / nx with (0.5 + iy) / ny without fractions.
        decision = (1 + 2 * ix) * ny - (1 + 2 * iy) * nx
        if decision == 0:
            yield ((x + sx, y), (x, y + sy))
            x += sx
            y += sy
            ix += 1
            iy += 1
        elif decision < 0:
            x += sx
            ix += 1
        else:
            y += sy
            iy += 1
        yield (x, y)


class Grid:
    """A terrain's squares, walls and cover, indexed for fast look-ups."""

    def __init__(self, terrain: Terrain) -> None:
        self.terrain = terrain

    @cached_property
    def walls(self) -> frozenset[Square]:
        return frozenset((w.x, w.y) for w in self.terrain.walls)

    @cached_property
    def cover_at(self) -> dict[Square, list[CoverFeature]]:
        index: dict[Square, list[CoverFeature]] = {}
        for feature in self.terrain.cover:
            index.setdefault((feature.x, feature.y), []).append(feature)
        return index

    def in_bounds(self, square: Square) -> bool:
        return 0 <= square[0] < self.terrain.width and 0 <= square[1] < self.terrain.height

    def passable(self, square: Square) -> bool:
        return self.in_bounds(square) and square not in self.walls

    def line_of_sight(self, a: Square, b: Square) -> bool:
        walls = self.walls
        for step in supercover_line(a, b):
            if isinstance(step[0], tuple):
                first, second = step  # type: ignore[misc]
                if first in walls and second in walls:
                    return False
            elif step != a and step != b and step in walls:
                return False
        return True

    def feet(self, squares: int) -> float:
        return squares * self.terrain.square_size

    def distance_units(self, a: Square, b: Square) -> float:
        return self.feet(distance(a, b))

    def neighbours(self, square: Square) -> Iterable[Square]:
        x, y = square
        for dx in (-1, 0, 1):
            for dy in (-1, 0, 1):
                if dx or dy:
                    candidate = (x + dx, y + dy)
                    if self.passable(candidate):
                        yield candidate
