"""Square-grid movement helpers: validating a declared path and finding one.

A path is the list of squares entered, in order (like `Moved.path`). Each step
goes to a neighbouring square (diagonals allowed, Chebyshev metric as in
`firelane.engine.grid`), inside the map, not a wall and not a square another
standing combatant occupies.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable

from firelane.engine.core import Rejected
from firelane.engine.grid import Grid, Square, adjacent
from firelane.engine.occupancy import bodies
from firelane.engine.routes import reachable, reachable_summary, route
from firelane.engine.state import EncounterState


def occupied_squares(state: EncounterState, *, ignore: Iterable[str] = ()) -> set[Square]:
    """Squares held by standing combatants (fallen ones can be stepped over)."""
    skip = set(ignore)
    return {
        tuple(c.position)  # type: ignore[misc]
        for c in state.combatants.values()
        if c.position is not None and not c.out_of_fight and c.id not in skip
    }


def body_squares(state: EncounterState, *, ignore: Iterable[str] = ()) -> dict[Square, str]:
    """Squares where only a fallen combatant lies: stepped over, never the end
    of a move (`firelane.engine.occupancy`: one combatant to a square)."""
    return bodies(state, besides=ignore)


def path_error(grid: Grid, start: Square, path: list[Square], blocked: set[Square], lying: dict[Square, str] | None = None) -> str | None:
    """Why ``path`` (squares entered, from ``start``) cannot be walked, or None.
    ``lying``: the squares of the fallen (`body_squares`), which it may cross but not end on."""
    if not path:
        return "the path is empty"
    previous = start
    for index, square in enumerate(path):
        square = (int(square[0]), int(square[1]))
        if not adjacent(previous, square):
            return f"step {index + 1} from {previous} to {square} is not to a neighbouring square"
        if not grid.in_bounds(square):
            return f"step {index + 1} to {square} leaves the map"
        if not grid.passable(square):
            return f"step {index + 1} to {square} is blocked by a wall"
        if square in blocked:
            return f"step {index + 1} to {square} is occupied"
        previous = square
    end = (int(path[-1][0]), int(path[-1][1]))
    if lying and end in lying:
        return f"the move cannot end on {end}: {lying[end]} lies there"
    return None


def step_path(
    grid: Grid,
    start: Square,
    goal: Callable[[Square], bool],
    blocked: set[Square],
    *,
    toward: Square | None = None,
    limit: int = 4096,
) -> list[Square] | None:
    """Breadth-first search for the shortest path to any square where ``goal`` holds.

    Neighbours are explored in a fixed order (those nearer ``toward`` first, by
    straight-line distance, when it is given), so the result is deterministic
    and, among equally short paths, heads straight for ``toward``.
    Returns the squares entered (empty if ``start`` is already a goal) or None.
    """
    if goal(start):
        return []
    came_from: dict[Square, Square] = {start: start}
    frontier: deque[Square] = deque([start])
    while frontier and len(came_from) < limit:
        current = frontier.popleft()
        neighbours = list(grid.neighbours(current))
        if toward is not None:
            neighbours.sort(key=lambda sq: ((sq[0] - toward[0]) ** 2 + (sq[1] - toward[1]) ** 2, sq))
        for neighbour in neighbours:
            if neighbour in came_from or neighbour in blocked:
                continue
            came_from[neighbour] = current
            if goal(neighbour):
                path = [neighbour]
                while came_from[path[-1]] != start:
                    path.append(came_from[path[-1]])
                return path[::-1]
            frontier.append(neighbour)
    return None


def shortest_path(grid: Grid, start: Square, goal: Square, blocked: set[Square]) -> list[Square] | None:
    return step_path(grid, start, lambda square: square == goal, blocked - {goal}, toward=goal)


def declared_path(
    state: EncounterState,
    mover: str,
    start: Square,
    path: list[tuple[int, int]],
    to: tuple[int, int] | None,
    waypoints: list[tuple[int, int]],
    max_steps: int,
) -> list[Square]:
    """The squares a move command walks: its ``path`` as given, or (a move by
    destination) the path `firelane.engine.routes` shows to ``to`` through
    ``waypoints``. Refused with what is reachable when there is none."""
    squares = [(int(x), int(y)) for x, y in path]
    if to is None:
        if waypoints:
            raise Rejected("waypoints need a destination: give 'to' as well")
        return squares
    goal = (int(to[0]), int(to[1]))
    if squares:
        if squares[-1] != goal:
            raise Rejected(f"the path ends at {squares[-1]}, not at the destination {goal}: give one or the other")
        return squares
    grid = Grid(state.terrain)
    blocked = occupied_squares(state, ignore=[mover])
    found = route(grid, start, goal, list(waypoints), blocked, max_steps)
    if isinstance(found, str):
        options = reachable(grid, start, blocked, max_steps)
        raise Rejected(f"cannot move to {goal}: {found}; within {max_steps} step{'s' if max_steps != 1 else ''}, {reachable_summary(options)}")
    return found
