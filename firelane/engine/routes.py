"""Routes on the square grid: where a mover can get to, and the path it takes.

One function answers both questions a system asks about a move, so the path
an option shows is the path the engine walks when a move names only its
destination (issue 9, "moves by destination"):

* `reachable(grid, start, blocked, max_steps)`: every square reachable in at
  most ``max_steps`` steps, each with its path;
* `route(grid, start, to, waypoints, blocked, max_steps)`: the path through
  the waypoints to ``to`` (each leg the path `reachable` shows from the leg's
  start), or the reason it cannot be walked.

A step goes to one of the eight neighbouring squares (Chebyshev metric, as in
`firelane.engine.grid`), inside the map, not into a wall and not into a
``blocked`` square (standing combatants). Among equally short paths the one
kept hugs the straight line from its start to its end, then the lowest
squares: deterministic, and what a player would draw.

Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable

from firelane.engine.grid import Grid, Square


def step_counts(grid: Grid, start: Square, blocked: set[Square], max_steps: int) -> dict[Square, int]:
    """Breadth-first: the fewest steps to every square within ``max_steps``."""
    counts = {start: 0}
    frontier = [start]
    for steps in range(1, max_steps + 1):
        following: list[Square] = []
        for square in frontier:
            for neighbour in grid.neighbours(square):
                if neighbour not in counts and neighbour not in blocked:
                    counts[neighbour] = steps
                    following.append(neighbour)
        if not following:
            break
        frontier = following
    return counts


def nearer_squares(counts: dict[Square, int]) -> dict[Square, list[Square]]:
    """For each square ``counts`` holds past the start, its neighbours one step
    nearer the start (the squares a path to it may come from)."""
    found: dict[Square, list[Square]] = {}
    get = counts.get
    for (x, y), steps in counts.items():
        if steps:
            nearer = steps - 1
            found[(x, y)] = [square for square in ((x - 1, y - 1), (x - 1, y), (x - 1, y + 1), (x, y - 1), (x, y + 1),
                                                   (x + 1, y - 1), (x + 1, y), (x + 1, y + 1)) if get(square) == nearer]
    return found


def path_from(grid: Grid, counts: dict[Square, int], start: Square, goal: Square,
              nearer: dict[Square, list[Square]] | None = None) -> list[Square]:
    """The squares entered from ``start`` to ``goal`` (which ``counts`` must hold),
    walking back from the goal through squares one step nearer the start
    (``nearer``: `nearer_squares` of ``counts``, when many paths are wanted)."""
    if nearer is None:
        nearer = nearer_squares({sq: n for sq, n in counts.items() if n <= counts[goal]})
    path = [goal]
    here = goal
    sx, sy = start
    ax, ay = goal[0] - sx, goal[1] - sy
    while here != start:
        candidates = nearer[here]
        if len(candidates) == 1:
            here = candidates[0]
        else:
            # Hug the straight line from start to goal, then the lowest square.
            best: tuple[int, int, int] | None = None
            for x, y in candidates:
                key = ((ax * (y - sy) - ay * (x - sx)) ** 2, x, y)
                if best is None or key < best:
                    best = key
            assert best is not None
            here = (best[1], best[2])
        path.append(here)
    path.pop()  # the start itself is not entered
    return path[::-1]


def reachable(grid: Grid, start: Square, blocked: Iterable[Square], max_steps: int) -> dict[Square, list[Square]]:
    """Every square other than ``start`` reachable in at most ``max_steps`` steps,
    with the path taken to it (in a stable order: by steps, then square)."""
    counts = step_counts(grid, start, set(blocked) - {start}, max(0, max_steps))
    ordered = sorted((sq for sq in counts if sq != start), key=lambda sq: (counts[sq], sq))
    nearer = nearer_squares(counts)
    return {square: path_from(grid, counts, start, square, nearer) for square in ordered}


def route(
    grid: Grid,
    start: Square,
    to: Square,
    waypoints: Iterable[Square],
    blocked: Iterable[Square],
    max_steps: int,
) -> list[Square] | str:
    """The path from ``start`` through ``waypoints`` to ``to`` in at most
    ``max_steps`` steps, or a one-line reason why there is none."""
    blocked_set = set(blocked) - {start}
    legs = [(int(w[0]), int(w[1])) for w in waypoints] + [(int(to[0]), int(to[1]))]
    path: list[Square] = []
    here = start
    for index, goal in enumerate(legs):
        what = f"waypoint {goal}" if index < len(legs) - 1 else f"destination {goal}"
        if not grid.in_bounds(goal):
            return f"{what} is off the map"
        if not grid.passable(goal):
            return f"{what} is a wall"
        if goal in blocked_set:
            return f"{what} is occupied"
        if goal == here:
            return f"{what} is where the mover already stands"
        left = max_steps - len(path)
        counts = step_counts(grid, here, blocked_set, max(0, left))
        if goal not in counts:
            unlimited = step_counts(grid, here, blocked_set, grid.terrain.width * grid.terrain.height)
            if goal not in unlimited:
                return f"{what} cannot be reached (walls or combatants close every way)"
            return f"{what} is {unlimited[goal]} steps away from {here}, and only {left} are left"
        path += path_from(grid, counts, here, goal)
        here = goal
    return path


def reachable_summary(options: dict[Square, list[Square]], limit: int = 8) -> str:
    """A short list of reachable squares for a rejection message."""
    if not options:
        return "no square is reachable"
    squares = list(options)
    shown = ", ".join(f"({x}, {y})" for x, y in squares[:limit])
    more = f" and {len(squares) - limit} more" if len(squares) > limit else ""
    return f"reachable: {shown}{more}"
