"""Persistent zones as state, and the sight they block (BB-CMB-26, BB-CORE-05).

Bottom floor of the package: the zone record the encounter state holds and
the pure questions about it (which squares block sight, whether a line passes
through them), asked by `combat` (sight and attacks) and `areas` (placement).
Works on any state with a ``zones`` list (the area module's stand-in host too).
"""

from __future__ import annotations

import msgspec

from firelane.engine.grid import Square, supercover_line
from firelane.engine.state import EncounterState


class PersistentZone(msgspec.Struct, kw_only=True):
    """A lingering area (smoke, fire, gas) on the grid (BB-CMB-26)."""

    id: str
    kind: str  # "smoke", "fire", "gas"
    squares: list[tuple[int, int]]
    rounds_left: int
    creator: str
    blocks_sight: bool = False
    damage: str = ""  # dice expression dealt to those inside, "" = none
    save_attribute: str = ""
    save_dc: int = 0
    save_half: bool = True
    source: str = ""  # weapon or power that made it
    # combatant -> the turn ("r<round>:<active>") the zone last affected it in:
    # a zone affects a combatant at most once per turn (BB-CMB-26).
    affected: dict[str, str] = {}


def sight_blocking_squares(state: EncounterState) -> set[Square]:
    """The squares of every sight-blocking zone (smoke)."""
    zones: list[PersistentZone] = getattr(state, "zones", [])
    return {tuple(square) for zone in zones if zone.blocks_sight for square in zone.squares}  # type: ignore[misc]


def line_touches(squares: set[Square], a: Square, b: Square) -> bool:
    """Whether the line from ``a`` to ``b`` passes through one of ``squares``,
    its two ends included (at an exact corner crossing: both squares beside it)."""
    for step in supercover_line(a, b):
        if isinstance(step[0], tuple):
            first, second = step  # type: ignore[misc]
            if first in squares and second in squares:
                return True
        elif step in squares:
            return True
    return False


def sight_blocked_by_zones(state: EncounterState, a: Square, b: Square) -> bool:
    """Whether a sight-blocking zone (smoke) lies on the line from ``a`` to ``b``.

    Every square the line passes through counts, its two ends included: one
    cannot see into, out of or through smoke. At an exact corner crossing the
    line is blocked only when both squares beside the corner are smoke, as with
    walls in `Grid.line_of_sight`.
    """
    smoke = sight_blocking_squares(state)
    return bool(smoke) and line_touches(smoke, a, b)
