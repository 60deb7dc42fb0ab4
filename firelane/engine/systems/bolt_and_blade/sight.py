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

from firelane.engine.grid import Grid
from firelane.engine.state import EncounterState


@lru_cache(maxsize=64)
def _grid_for(terrain_json: bytes) -> Grid:
    from firelane.events.schemas import Terrain

    return Grid(msgspec.json.decode(terrain_json, type=Terrain))


_last_grid: list[Any] = [None, None]


def grid_of(state: EncounterState) -> Grid:
    """A Grid for the state's terrain, cached: terrain never changes in an encounter."""
    if _last_grid[0] is state.terrain:
        return _last_grid[1]  # type: ignore[no-any-return]
    grid = _grid_for(msgspec.json.encode(state.terrain))
    _last_grid[0], _last_grid[1] = state.terrain, grid
    return grid
