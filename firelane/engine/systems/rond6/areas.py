"""RonD6 area shapes (R6-40 bursts, R6-41 cones): pure geometry on the square grid.

* Burst (R6-40): the target Space and every Space within the radius: Small 1,
  Medium 3, Large 6, Huge 12. **House default:** "within" uses the grid's
  distance (diagonals count one Space, `firelane.engine.grid.distance`), so a
  Small Burst is the 3x3 block around the target Space.
* Cone (R6-41): starts in the Space adjacent to the attacker in the chosen
  facing (one of 8 directions) and extends Small 3, Medium 6, Large 9, Huge 12
  Spaces. Its row at distance ``d`` from the attacker is 3 Spaces wide for
  d 1-3, 5 for 4-6, 7 for 7-9 and 9 for 10-12, centred on the facing's axis. For
  a diagonal facing the row is the L-shaped run of Spaces at grid distance
  ``d`` centred on the diagonal Space, so every row has exactly the table's
  width (**house default** template). The attacker's own Space is never in it.
* **House default** (``area_walls_block``): walls block area effects — a Space
  is affected only when the burst's centre (or the cone's attacker) has line of
  sight to it (`Grid.line_of_sight`); wall Spaces themselves are never affected.
  Spaces off the map are dropped.

Facing names: ``n``/``north`` is -y (the top of the map), ``s`` +y, ``e`` +x,
``w`` -x, and the diagonals ``ne``, ``se``, ``sw``, ``nw``.
"""

from __future__ import annotations

from firelane.engine.grid import Grid, Square, direction, distance

RULE_BURST = "R6-40"
RULE_CONE = "R6-41"

BURST_RADIUS: dict[str, int] = {"small": 1, "medium": 3, "large": 6, "huge": 12}
CONE_LENGTH: dict[str, int] = {"small": 3, "medium": 6, "large": 9, "huge": 12}
# Width of a cone's row by distance band: rows 1-3, 4-6, 7-9, 10-12.
CONE_WIDTHS: tuple[int, ...] = (3, 5, 7, 9)

FACINGS: dict[str, tuple[int, int]] = {
    "n": (0, -1),
    "ne": (1, -1),
    "e": (1, 0),
    "se": (1, 1),
    "s": (0, 1),
    "sw": (-1, 1),
    "w": (-1, 0),
    "nw": (-1, -1),
}
_FACING_ALIASES = {
    "north": "n", "northeast": "ne", "north-east": "ne", "east": "e", "southeast": "se",
    "south-east": "se", "south": "s", "southwest": "sw", "south-west": "sw", "west": "w",
    "northwest": "nw", "north-west": "nw",
}


def area_size(size: str, table: dict[str, int]) -> int:
    key = size.strip().lower()
    if key not in table:
        raise ValueError(f"unknown area size {size!r}; known: {', '.join(table)}")
    return table[key]


def facing_vector(facing: str | tuple[int, int] | list[int]) -> tuple[int, int]:
    """The unit grid vector of a facing name (``"ne"``, ``"north"``) or vector."""
    if isinstance(facing, str):
        key = facing.strip().lower()
        key = _FACING_ALIASES.get(key, key)
        if key not in FACINGS:
            raise ValueError(f"unknown facing {facing!r}; use one of {', '.join(FACINGS)}")
        return FACINGS[key]
    vector = (int(facing[0]), int(facing[1]))
    if vector == (0, 0) or max(abs(vector[0]), abs(vector[1])) != 1:
        raise ValueError(f"a facing vector has components -1, 0 or 1 and is not (0, 0): {facing!r}")
    return vector


def facing_name(vector: tuple[int, int]) -> str:
    for name, value in FACINGS.items():
        if value == vector:
            return name
    raise ValueError(f"not a facing vector: {vector!r}")


def facing_towards(origin: Square, square: Square) -> str:
    """The facing (of the 8) that points from ``origin`` towards ``square``."""
    if origin == square:
        raise ValueError("a facing needs a square other than the origin")
    return facing_name(direction(origin, square))


def cone_width(row: int) -> int:
    """R6-41: the width of the cone's row at ``row`` Spaces from the attacker (1-based)."""
    if row < 1:
        raise ValueError(f"cone rows start at 1, not {row}")
    band = (row - 1) // 3
    if band >= len(CONE_WIDTHS):
        raise ValueError(f"the largest cone is {3 * len(CONE_WIDTHS)} Spaces long; no row {row}")
    return CONE_WIDTHS[band]


def burst_squares(centre: Square, size: str) -> list[Square]:
    """R6-40: the target Space and every Space within the burst's radius (unclipped)."""
    radius = area_size(size, BURST_RADIUS)
    cx, cy = centre
    return [
        (cx + dx, cy + dy)
        for dy in range(-radius, radius + 1)
        for dx in range(-radius, radius + 1)
    ]


def cone_rows(attacker: Square, facing: str | tuple[int, int], size: str) -> list[list[Square]]:
    """R6-41: the cone's Spaces row by row, nearest row first (unclipped)."""
    length = area_size(size, CONE_LENGTH)
    fx, fy = facing_vector(facing)
    ax, ay = attacker
    rows: list[list[Square]] = []
    for row in range(1, length + 1):
        half = cone_width(row) // 2
        if fx == 0 or fy == 0:
            # Orthogonal: a straight row across the axis.
            px, py = -fy, fx  # perpendicular
            cx, cy = ax + fx * row, ay + fy * row
            rows.append([(cx + px * k, cy + py * k) for k in range(-half, half + 1)])
        else:
            # Diagonal: the corner Space at (row, row) and ``half`` Spaces along each arm.
            corner = (ax + fx * row, ay + fy * row)
            squares = [corner]
            for k in range(1, half + 1):
                squares.append((corner[0] - fx * k, corner[1]))
                squares.append((corner[0], corner[1] - fy * k))
            rows.append(sorted(squares))
    return rows


def cone_squares(attacker: Square, facing: str | tuple[int, int], size: str) -> list[Square]:
    """R6-41: every Space of the cone (unclipped); never the attacker's own Space."""
    return [square for row in cone_rows(attacker, facing, size) for square in row]


def clip_to_grid(squares: list[Square], grid: Grid, origin: Square, walls_block: bool) -> list[Square]:
    """Drop Spaces off the map, wall Spaces and (if ``walls_block``) Spaces the
    origin cannot see; keeps the order given."""
    kept = []
    for square in squares:
        if not grid.passable(square):
            continue
        if walls_block and square != origin and not grid.line_of_sight(origin, square):
            continue
        kept.append(square)
    return kept


def affected_burst(grid: Grid, centre: Square, size: str, *, walls_block: bool = True) -> list[Square]:
    return clip_to_grid(burst_squares(centre, size), grid, centre, walls_block)


def affected_cone(
    grid: Grid, attacker: Square, facing: str | tuple[int, int], size: str, *, walls_block: bool = True
) -> list[Square]:
    return clip_to_grid(cone_squares(attacker, facing, size), grid, attacker, walls_block)


def burst_radius_contains(centre: Square, size: str, square: Square) -> bool:
    return distance(centre, square) <= area_size(size, BURST_RADIUS)
