"""The terrain's `Grid`, cached per terrain, for every module of the package.

Bottom floor (see the package docstring): terrain never changes during an
encounter, and a `Grid` memoises sight, cover and steps, so every module asks
for the one Grid of the state's terrain (`grid_of`) rather than building its
own (which would start with empty caches).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import msgspec

from firelane.engine.grid import STEP_DIRECTIONS, Grid
from firelane.engine.state import EncounterState


@lru_cache(maxsize=64)
def _grid_for(terrain_json: bytes) -> Grid:
    from firelane.events.schemas import Terrain

    return Grid(msgspec.json.decode(terrain_json, type=Terrain))


# The terrain objects last asked about, with their Grid: a decision works on a
# copy of the state (another terrain object, the same terrain), so the live
# state's and the copies' are both kept, and most look-ups are by identity.
_recent: list[tuple[Any, Grid]] = []


def grid_of(state: EncounterState) -> Grid:
    """A Grid for the state's terrain, cached: terrain never changes in an encounter."""
    terrain = state.terrain
    for known, grid in _recent:
        if known is terrain:
            return grid
    grid = _grid_for(msgspec.json.encode(terrain))
    _recent.insert(0, (terrain, grid))
    del _recent[4:]
    return grid


class WallSight:
    """`Grid.line_of_sight` (walls only), the same answer, faster for an AI that
    asks about thousands of lines: a line whose bounding box holds no wall is
    clear at once (a supercover line never leaves the box of its two ends,
    found by a summed-area table of the walls); any other is asked of the Grid
    (which walks it), and every answer is remembered both ways (sight is
    symmetric). The walls leave few lines to walk (about 260 a fight on the
    demo), so a walk of its own, faster by a tenth, was not worth a second copy
    of the supercover rule."""

    def __init__(self, grid: Grid) -> None:
        self.grid = grid
        self.walls = grid.walls
        width, height = grid.terrain.width, grid.terrain.height
        self.width, self.height = width, height
        # table[y + 1][x + 1]: walls in the rectangle (0, 0)..(x, y)
        table = [[0] * (width + 1) for _ in range(height + 1)]
        for y in range(height):
            row, above, running = table[y + 1], table[y], 0
            for x in range(width):
                running += (x, y) in self.walls
                row[x + 1] = above[x + 1] + running
        self.table = table
        self.known: dict[tuple[int, int, int, int], bool] = {}

    def walls_in(self, x0: int, y0: int, x1: int, y1: int) -> int:
        """Walls in the rectangle of squares (x0, y0)..(x1, y1), ends included (x0 <= x1, y0 <= y1)."""
        table = self.table
        return table[y1 + 1][x1 + 1] - table[y0][x1 + 1] - table[y1 + 1][x0] + table[y0][x0]

    def clear(self, a: tuple[int, int], b: tuple[int, int]) -> bool:
        """Whether no wall stands between ``a`` and ``b``: `Grid.line_of_sight`."""
        known = self.known.get((a[0], a[1], b[0], b[1]))
        return self.work_out(a, b) if known is None else known

    def work_out(self, a: tuple[int, int], b: tuple[int, int]) -> bool:
        """`clear`, not yet known: worked out and remembered both ways."""
        ax, ay = a
        bx, by = b
        if not (0 <= ax < self.width and 0 <= ay < self.height and 0 <= bx < self.width and 0 <= by < self.height):
            answer = self.grid.line_of_sight(a, b)
        else:
            x0, x1 = (ax, bx) if ax <= bx else (bx, ax)
            y0, y1 = (ay, by) if ay <= by else (by, ay)
            table = self.table
            inside = table[y1 + 1][x1 + 1] - table[y0][x1 + 1] - table[y1 + 1][x0] + table[y0][x0]
            if inside:  # the ends themselves never block
                walls = self.walls
                inside -= (ax, ay) in walls
                if ax != bx or ay != by:
                    inside -= (bx, by) in walls
            answer = inside <= 0 or self.grid.line_of_sight(a, b)
        self.known[(ax, ay, bx, by)] = self.known[(bx, by, ax, ay)] = answer
        return answer


@lru_cache(maxsize=64)
def _wall_sight_for(grid: Grid) -> WallSight:
    return WallSight(grid)


def wall_sight(state: EncounterState, grid: Grid | None = None) -> WallSight:
    """The `WallSight` of the state's terrain (one per `grid_of` Grid, which may be passed)."""
    return _wall_sight_for(grid or grid_of(state))


class CoverLookup:
    """`Grid.cover_facing` (the strongest cover on a square facing an attacker),
    the same answer, asked once per direction class: whether a feature's facing
    protects against an attacker depends only on the signs of the offset from
    the cover to the attacker and on which of its two sizes is the larger
    (`grid.facing_protects`), so every attacker in one class gets the answer of
    the first asked about."""

    def __init__(self, grid: Grid) -> None:
        self.grid = grid
        self.known: dict[tuple[int, int, int, int, int], tuple[Any, str]] = {}

    def facing(self, square: tuple[int, int], attacker: tuple[int, int]) -> tuple[Any, str]:
        dx, dy = attacker[0] - square[0], attacker[1] - square[1]
        ax, ay = abs(dx), abs(dy)
        key = (square[0], square[1], (dx > 0) - (dx < 0), (dy > 0) - (dy < 0), (ax > ay) - (ax < ay))
        found = self.known.get(key)
        if found is None:
            found = self.known[key] = self.grid.cover_facing(square, attacker)
        return found


@lru_cache(maxsize=64)
def _cover_lookup_for(grid: Grid) -> CoverLookup:
    return CoverLookup(grid)


def cover_lookup(state: EncounterState, grid: Grid | None = None) -> CoverLookup:
    """The `CoverLookup` of the state's terrain (one per `grid_of` Grid, which may be passed)."""
    return _cover_lookup_for(grid or grid_of(state))


class Steps:
    """`Grid.steps_from` (the squares one legal step reaches, in `STEP_DIRECTIONS`
    order), the same answer, worked out without building a reason for each
    illegal step: on the map, not a wall, no squeezing diagonally between two
    walls (`grid.step_allowed`)."""

    def __init__(self, grid: Grid) -> None:
        self.walls = grid.walls
        self.width, self.height = grid.terrain.width, grid.terrain.height
        self.known: dict[tuple[int, int], tuple[tuple[int, int], ...]] = {}

    def steps_from(self, square: tuple[int, int]) -> tuple[tuple[int, int], ...]:
        found = self.known.get(square)
        if found is None:
            x, y = square
            walls, width, height = self.walls, self.width, self.height
            reached = []
            for dx, dy in STEP_DIRECTIONS:
                tx, ty = x + dx, y + dy
                if not (0 <= tx < width and 0 <= ty < height) or (tx, ty) in walls:
                    continue
                if dx and dy and (tx, y) in walls and (x, ty) in walls:
                    continue
                reached.append((tx, ty))
            found = self.known[square] = tuple(reached)
        return found


@lru_cache(maxsize=64)
def _steps_for(grid: Grid) -> Steps:
    return Steps(grid)


def steps(state: EncounterState, grid: Grid | None = None) -> Steps:
    """The `Steps` of the state's terrain (one per `grid_of` Grid, which may be passed)."""
    return _steps_for(grid or grid_of(state))
