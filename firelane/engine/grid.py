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
from functools import cache, cached_property
from typing import NamedTuple

from firelane.events.schemas import CoverFeature, Terrain

Square = tuple[int, int]

# The eight one-square steps, cardinals first (the order `Grid.steps_from` lists them in).
STEP_DIRECTIONS: tuple[tuple[int, int], ...] = ((0, -1), (1, 0), (0, 1), (-1, 0), (1, -1), (1, 1), (-1, 1), (-1, -1))


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


class Sightline(NamedTuple):
    """What the terrain alone says about two squares ``a`` and ``b`` (`Grid.sightline`)."""

    squares: int  # distance(a, b)
    a_sees_b: bool  # line_of_sight(a, b): walls only, a system may add blockers (smoke)
    b_sees_a: bool  # line_of_sight(b, a)
    cover_at_a: str  # cover_level_against(a, b): the cover on a facing b
    cover_at_b: str  # cover_level_against(b, a)
    feature_at_a: str | None  # that cover's feature level as written ("heavy_tall"); None: no feature
    feature_at_b: str | None


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

    @cached_property
    def difficult(self) -> frozenset[Square]:
        return frozenset(tuple(square) for square in self.terrain.difficult)  # type: ignore[misc]

    def in_bounds(self, square: Square) -> bool:
        return 0 <= square[0] < self.terrain.width and 0 <= square[1] < self.terrain.height

    def passable(self, square: Square) -> bool:
        return self.in_bounds(square) and square not in self.walls

    def line_of_sight(self, a: Square, b: Square) -> bool:
        # Memoised: terrain is immutable for a Grid, and sight is asked often.
        key = (a[0], a[1], b[0], b[1])
        cached = self._sight_cache.get(key)
        if cached is None:
            # Sight is symmetric: the line from b to a passes the same squares
            # and corners (supercover_line walks the same crossings backwards),
            # so one walk answers both ways.
            cached = self._line_of_sight((a[0], a[1]), (b[0], b[1]))
            self._sight_cache[key] = self._sight_cache[(b[0], b[1], a[0], a[1])] = cached
        return cached

    def sight_blocker(self, a: Square, b: Square) -> Square | None:
        """The first wall square (from ``a``) that blocks the line from ``a`` to
        ``b`` — one of a pair of walls meeting at a corner it passes — or None
        when the line is clear (`line_of_sight`)."""
        walls = self.walls
        for step in supercover_line(a, b):
            if isinstance(step[0], tuple):
                first, second = step  # type: ignore[misc]
                if first in walls and second in walls:
                    return min((first, second), key=lambda s: (distance(a, s), s))  # type: ignore[no-any-return]
            elif step != a and step != b and step in walls:
                return step  # type: ignore[return-value]
        return None

    @cached_property
    def _sight_cache(self) -> dict[tuple[int, int, int, int], bool]:
        return {}

    def _line_of_sight(self, a: Square, b: Square) -> bool:
        walls = self.walls
        for step in supercover_line(a, b):
            if isinstance(step[0], tuple):
                first, second = step  # type: ignore[misc]
                if first in walls and second in walls:
                    return False
            elif step != a and step != b and step in walls:
                return False
        return True

    def cover_facing(self, square: Square, attacker: Square) -> tuple[CoverFeature | None, str]:
        """(strongest feature, its level) of the cover on ``square`` facing
        ``attacker``; see `best_feature_against`. Memoised like sight: cover
        depends on the terrain alone, and AIs weigh it for many squares."""
        key = (square[0], square[1], attacker[0], attacker[1])
        cached = self._cover_cache.get(key)
        if cached is None:
            feature = _strongest_feature_against(self, square, attacker)
            cached = self._cover_cache[key] = (feature, feature_cover_level(feature.level if feature else None))
        return cached

    @cached_property
    def _cover_cache(self) -> dict[tuple[int, int, int, int], tuple[CoverFeature | None, str]]:
        return {}

    def sightline(self, a: Square, b: Square) -> Sightline:
        """Distance, sight both ways and cover both ways between two squares, in
        one memoised look-up: an AI weighing squares against every enemy asks
        all of these for each pair."""
        a = (a[0], a[1])
        lines = self.sightlines_to(b)
        line = lines.get(a)
        if line is None:
            feature_at_a, cover_at_a = self.cover_facing(a, b)
            feature_at_b, cover_at_b = self.cover_facing(b, a)
            line = lines[a] = Sightline(
                distance(a, b),
                self.line_of_sight(a, b),
                self.line_of_sight(b, a),
                cover_at_a,
                cover_at_b,
                feature_at_a.level if feature_at_a is not None else None,
                feature_at_b.level if feature_at_b is not None else None,
            )
        return line

    def sightlines_to(self, b: Square) -> dict[Square, Sightline]:
        """The memoised `sightline` (a, b) of every square a asked about so far,
        by a: for callers that ask about many squares against one ``b`` (look
        a square up here first, and ask `sightline` when it is missing)."""
        key = (b[0], b[1])
        lines = self._sightlines.get(key)
        if lines is None:
            lines = self._sightlines[key] = {}
        return lines

    @cached_property
    def _sightlines(self) -> dict[Square, dict[Square, Sightline]]:
        return {}

    def steps_from(self, square: Square) -> tuple[Square, ...]:
        """The squares one legal step (`step_allowed`) from ``square`` (an
        (x, y) tuple) reaches, in `STEP_DIRECTIONS` order. Memoised: path
        searches ask it for every square they expand."""
        steps = self._steps_cache.get(square)
        if steps is None:
            candidates = ((square[0] + dx, square[1] + dy) for dx, dy in STEP_DIRECTIONS)
            steps = self._steps_cache[square] = tuple(to for to in candidates if step_allowed(self, square, to) is None)
        return steps

    @cached_property
    def _steps_cache(self) -> dict[Square, tuple[Square, ...]]:
        return {}

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


# ---------------------------------------------------------------- directional cover
#
# A `CoverFeature` on a square protects whoever stands on that square. Its
# ``facing`` lists unit vectors pointing from the cover towards the threats it
# stops; an attacker is "on the far side" of the cover when the vector from the
# cover square to the attacker lies within 45 degrees of one of those facings
# (a cardinal facing covers a 90-degree wedge, a diagonal facing the quadrant
# it points into). Flanking, rear and same-square attackers get no cover. An
# empty ``facing`` protects against every direction.

COVER_ORDER: tuple[str, ...] = ("none", "light", "heavy", "total")


@cache  # a pure function of a short string, asked for every square an AI weighs
def cover_rank(level: str) -> int:
    """Position of a cover level on the none < light < heavy < total ladder.

    Unknown names rank as "none"; a name with a suffix (``heavy_tall``) ranks as
    its stem, so systems can mark special features without a new rank.
    """
    stem = level.split("_", 1)[0]
    return COVER_ORDER.index(stem) if stem in COVER_ORDER else 0


def feature_cover_level(feature_level: str | None) -> str:
    """The cover level ("none" < "light" < "heavy" < "total") a feature whose
    level is written ``feature_level`` gives: its `cover_rank`, so "heavy_tall"
    gives heavy cover. None (no feature) gives none."""
    return COVER_ORDER[cover_rank(feature_level)] if feature_level is not None else "none"


def facing_protects(facing: tuple[int, int], cover_square: Square, attacker: Square) -> bool:
    """Whether a facing vector of cover on ``cover_square`` faces ``attacker``."""
    dx, dy = attacker[0] - cover_square[0], attacker[1] - cover_square[1]
    if dx == 0 and dy == 0:
        return False
    fx, fy = facing
    if fx and fy:  # diagonal facing: the attacker's quadrant (axes included)
        return dx * fx >= 0 and dy * fy >= 0 and (dx * fx > 0 or dy * fy > 0)
    if fx:  # east/west: 90-degree wedge around the axis
        return dx * fx > 0 and abs(dy) <= abs(dx)
    return dy * fy > 0 and abs(dx) <= abs(dy)


def feature_protects(feature: CoverFeature, attacker: Square) -> bool:
    square = (feature.x, feature.y)
    if square == attacker:
        return False
    if not feature.facing:
        return True
    return any(facing_protects(tuple(f), square, attacker) for f in feature.facing)  # type: ignore[arg-type]


def best_feature_against(grid: Grid, square: Square, attacker: Square) -> CoverFeature | None:
    """The strongest cover feature on ``square`` that faces ``attacker``, if any."""
    return grid.cover_facing(square, attacker)[0]


def _strongest_feature_against(grid: Grid, square: Square, attacker: Square) -> CoverFeature | None:
    best: CoverFeature | None = None
    for feature in grid.cover_at.get(square, []):
        if feature_protects(feature, attacker) and (best is None or cover_rank(feature.level) > cover_rank(best.level)):
            best = feature
    return best


def cover_level_against(grid: Grid, square: Square, attacker: Square) -> str:
    """The terrain cover ("none", "light", "heavy", "total") a square gives against an attacker."""
    return grid.cover_facing(square, attacker)[1]


def has_cover_feature(grid: Grid, square: Square) -> bool:
    """A square with any cover on it is not open ground (whatever its facing)."""
    return bool(grid.cover_at.get(square))


def is_open_ground(grid: Grid, square: Square) -> bool:
    return not has_cover_feature(grid, square)


# ---------------------------------------------------------------- paths and fire lanes


def step_allowed(grid: Grid, frm: Square, to: Square) -> str | None:
    """Why one step of a walk is illegal, or None. A diagonal step may not
    squeeze between two walls that touch at the corner it crosses."""
    if not adjacent(frm, to):
        return f"{to} is not adjacent to {frm}"
    if not grid.in_bounds(to):
        return f"{to} is off the map"
    if to in grid.walls:
        return f"{to} is a wall"
    if frm[0] != to[0] and frm[1] != to[1]:
        if (to[0], frm[1]) in grid.walls and (frm[0], to[1]) in grid.walls:
            return f"cannot squeeze diagonally from {frm} to {to} between two walls"
    return None


def in_fire_lane(grid: Grid, square: Square, watcher: Square, reach_squares: int, sees: bool | None = None) -> bool:
    """Whether ``square`` lies in a fire lane of a shooter at ``watcher``: open
    line of sight, within ``reach_squares`` and no cover on the square facing
    the shooter (BB-CMB-02). ``sees`` may pass a precomputed sight check that
    also accounts for things the grid does not know (smoke)."""
    line = grid.sightline(square, watcher)
    return sightline_in_fire_lane(line, reach_squares, line.b_sees_a if sees is None else sees)


def sightline_in_fire_lane(line: Sightline, reach_squares: int, sees: bool) -> bool:
    """`in_fire_lane` with the `Grid.sightline` from the square to the shooter at hand."""
    return line.squares <= reach_squares and sees and line.cover_at_a == "none"


def fire_lane_crossings(
    grid: Grid, path: list[Square], watcher: Square, reach_squares: int
) -> list[int]:
    """Indices of the squares of ``path`` that lie in the watcher's fire lane."""
    return [i for i, square in enumerate(path) if in_fire_lane(grid, square, watcher, reach_squares)]
