"""Where combatants stand on the square grid of the percentile systems.

Both systems measure in metres through the ``square_metres`` setting and
Chebyshev distance, and both fire at an area (Suppressing Fire, Suppressive
Fire) whose possible victims are picked the same way; only the shape of the
area differs, so that test stays with each system.
"""

from __future__ import annotations

from collections.abc import Iterator

from firelane.engine.core import Rejected
from firelane.engine.grid import Square, distance
from firelane.engine.state import Combatant, EncounterState


def metres(state: EncounterState, a: Square, b: Square) -> float:
    return distance(a, b) * float(state.settings["square_metres"])


def position(combatant: Combatant) -> Square:
    if combatant.position is None:
        raise Rejected(f"{combatant.id} is not on the map")
    return (int(combatant.position[0]), int(combatant.position[1]))


def area_fire_candidates(state: EncounterState, shooter: Combatant, *, allies_too: bool) -> Iterator[Combatant]:
    """Standing combatants on the map other than the shooter, in the state's
    order; the shooter's allies only when ``allies_too``."""
    for other in state.combatants.values():
        if other.id == shooter.id or other.out_of_fight or other.position is None:
            continue
        if other.side == shooter.side and not allies_too:
            continue
        yield other
