"""Area templates on the square grid: bursts, cones and lines, line of effect, drift.

System-agnostic and pure (no I/O, no dice: callers pass the rolled numbers in).
Squares are (x, y) pairs with y growing "south" (down the map), as in
`firelane.engine.grid`.

Shapes (sizes in squares; a system converts its feet with ``feet_to_squares``):

- **burst** of radius r around a point: every square within grid distance r of
  it. Grid distance is the grid module's house default (Chebyshev: a diagonal
  step costs one square), so a burst is a (2r+1) x (2r+1) block of squares.
- **cone** of length L from an origin towards a direction or point: every square
  (other than the origin) within grid distance L whose centre lies within the
  cone's half-angle of the aim line. The half-angle is atan(1/2) (about 26.6
  degrees): the cone is as wide as it is long, the usual tabletop cone. Along an
  axis this gives 1, 3, 3, 5, 5, ... squares per step; along a diagonal a wedge.
  The test is exact integer arithmetic: ``5 * dot^2 >= 4 * |v|^2 * |aim|^2``.
- **line** of length L from an origin towards a point: the supercover squares
  of the segment, origin excluded, up to L squares away.

Line of effect: a square is reached from the template's source point when no
wall stands between them, by the same supercover rule that `Grid.line_of_sight`
uses (a corner is blocked only when both squares beside it are walls). Wall
squares and squares off the map are never part of an effect.

Drift (scatter): a point moves a number of squares in one of eight directions,
stopping on the last open square before a wall or the map edge.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import msgspec

from firelane.engine.grid import Grid, Square, distance, supercover_line

# The eight compass directions as unit grid vectors; y grows southwards.
COMPASS: dict[str, tuple[int, int]] = {
    "N": (0, -1),
    "NE": (1, -1),
    "E": (1, 0),
    "SE": (1, 1),
    "S": (0, 1),
    "SW": (-1, 1),
    "W": (-1, 0),
    "NW": (-1, -1),
}
# A d8 names a direction clockwise from north: 1 = N, 2 = NE, ... 8 = NW.
D8_DIRECTIONS: tuple[tuple[int, int], ...] = tuple(COMPASS.values())
COMPASS_NAMES: dict[tuple[int, int], str] = {vector: name for name, vector in COMPASS.items()}

SHAPES = ("burst", "cone", "line", "single")


class TemplateError(ValueError):
    """A template cannot be drawn as asked (zero-length aim, unknown shape...)."""


class Template(msgspec.Struct, frozen=True, kw_only=True):
    """A drawn template: its shape, where its effect comes from and the squares it covers.

    ``source`` is the point line of effect is traced from: the centre of a burst,
    the attacker's square for a cone or a line.
    """

    shape: str
    source: Square
    size: int
    squares: list[Square]
    aim: tuple[int, int] | None = None


def feet_to_squares(feet: float, square_size: float = 5.0) -> int:
    """Whole squares a distance in feet spans (10 ft on 5-ft squares is 2)."""
    if square_size <= 0:
        raise TemplateError(f"square size must be positive, not {square_size}")
    return int(math.floor(feet / square_size + 1e-9))


def direction_vector(name_or_vector: str | tuple[int, int]) -> tuple[int, int]:
    """A compass name ("NE") or a vector, checked to be one of the eight unit directions."""
    if isinstance(name_or_vector, str):
        try:
            return COMPASS[name_or_vector.upper()]
        except KeyError:
            raise TemplateError(f"unknown direction {name_or_vector!r}; use one of {', '.join(COMPASS)}") from None
    vector = (int(name_or_vector[0]), int(name_or_vector[1]))
    if vector not in COMPASS_NAMES:
        raise TemplateError(f"direction {vector} is not one of the eight grid directions")
    return vector


def burst_squares(center: Square, radius: int) -> list[Square]:
    """Every square within grid distance ``radius`` of ``center`` (row by row)."""
    if radius < 0:
        raise TemplateError(f"a burst radius cannot be negative ({radius})")
    cx, cy = center
    return [(x, y) for y in range(cy - radius, cy + radius + 1) for x in range(cx - radius, cx + radius + 1)]


def in_cone(origin: Square, aim: tuple[int, int], length: int, square: Square) -> bool:
    """Whether ``square`` lies in the cone of ``length`` from ``origin`` along vector ``aim``."""
    vx, vy = square[0] - origin[0], square[1] - origin[1]
    if (vx, vy) == (0, 0) or distance(origin, square) > length:
        return False
    dot = vx * aim[0] + vy * aim[1]
    if dot <= 0:
        return False
    return 5 * dot * dot >= 4 * (vx * vx + vy * vy) * (aim[0] * aim[0] + aim[1] * aim[1])


def cone_squares(origin: Square, length: int, aim: tuple[int, int]) -> list[Square]:
    """The squares of a cone of ``length`` squares from ``origin`` along ``aim``.

    ``aim`` is any non-zero vector: a compass direction, or a target point minus
    the origin (aiming at a point rather than a compass direction).
    """
    if aim == (0, 0):
        raise TemplateError("a cone needs a direction: the aim point is the origin itself")
    if length < 1:
        raise TemplateError(f"a cone must be at least one square long ({length})")
    ox, oy = origin
    return [
        (x, y)
        for y in range(oy - length, oy + length + 1)
        for x in range(ox - length, ox + length + 1)
        if in_cone(origin, aim, length, (x, y))
    ]


def line_squares(origin: Square, towards: Square, length: int) -> list[Square]:
    """Squares of a line from ``origin`` through ``towards`` up to ``length`` squares away.

    The segment is extended past ``towards`` to the full length. Where it
    only touches a grid corner, the two squares beside the corner are not
    covered (a diagonal line is one square wide).
    """
    dx, dy = towards[0] - origin[0], towards[1] - origin[1]
    if (dx, dy) == (0, 0):
        raise TemplateError("a line needs a direction: the aim point is the origin itself")
    reach = max(abs(dx), abs(dy))
    # Scale the aim so the segment's far end is `length` squares away (rounded to a square).
    end = (origin[0] + round(dx * length / reach), origin[1] + round(dy * length / reach))
    squares: list[Square] = []
    for step in supercover_line(origin, end):
        if isinstance(step[0], tuple):
            continue  # a corner touch
        square: Square = step  # type: ignore[assignment]
        if square != origin and distance(origin, square) <= length:
            squares.append(square)
    return squares


def draw(shape: str, source: Square, size: int, towards: Square | tuple[int, int] | None = None, *, towards_is_point: bool = True) -> Template:
    """Draw a template. For cones and lines, ``towards`` is a point (default) or a
    direction vector (``towards_is_point=False``)."""
    if shape == "burst":
        return Template(shape=shape, source=source, size=size, squares=burst_squares(source, size))
    if shape == "single":
        return Template(shape=shape, source=source, size=0, squares=[source])
    if shape in ("cone", "line"):
        if towards is None:
            raise TemplateError(f"a {shape} needs a target point or a direction")
        aim = (towards[0] - source[0], towards[1] - source[1]) if towards_is_point else direction_vector(towards)  # type: ignore[arg-type]
        if shape == "cone":
            return Template(shape=shape, source=source, size=size, squares=cone_squares(source, size, aim), aim=aim)
        far = (source[0] + aim[0], source[1] + aim[1])
        return Template(shape=shape, source=source, size=size, squares=line_squares(source, far, size), aim=aim)
    raise TemplateError(f"unknown template shape {shape!r}; known: {', '.join(SHAPES)}")


def open_squares(grid: Grid, squares: Iterable[Square]) -> list[Square]:
    """The squares that are on the map and not walls (an effect never fills a wall)."""
    return [square for square in squares if grid.passable(square)]


def has_line_of_effect(grid: Grid, source: Square, square: Square) -> bool:
    """Whether an effect from ``source`` reaches ``square`` without a wall between (BB-CMB-27)."""
    return grid.line_of_sight(source, square)


def split_by_line_of_effect(grid: Grid, source: Square, squares: Iterable[Square]) -> tuple[list[Square], list[Square]]:
    """(reached, shielded): open template squares the effect reaches, and those a wall shields."""
    reached: list[Square] = []
    shielded: list[Square] = []
    for square in open_squares(grid, squares):
        (reached if has_line_of_effect(grid, source, square) else shielded).append(square)
    return reached, shielded


def drift(grid: Grid, start: Square, direction: tuple[int, int], squares: int) -> Square:
    """Where a point ends after drifting ``squares`` steps in ``direction``.

    It stops on the last open square before a wall or the map edge (a grenade
    bounces off the wall and drops there). A diagonal step squeezing between
    two walls at a corner is blocked too.
    """
    walls = grid.walls
    x, y = start
    dx, dy = direction
    for _ in range(squares):
        nxt = (x + dx, y + dy)
        if not grid.passable(nxt):
            break
        if dx and dy and (x + dx, y) in walls and (x, y + dy) in walls:
            break
        x, y = nxt
    return (x, y)
