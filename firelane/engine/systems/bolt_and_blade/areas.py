"""Bolt & Blade area effects: templates, friendly fire, scatter, zones, line of effect.

Rule IDs BB-CMB-24..28. The main Bolt & Blade system plugs this module in:
its state holds ``zones: list[PersistentZone]`` and it dispatches the commands
in ``AREA_COMMANDS`` to ``decide_area_command``.
"""

from __future__ import annotations

import msgspec

from firelane.events.bolt_and_blade_area_schemas import BB_AREA_COMMANDS, BB_AREA_EVENTS


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


AREA_COMMANDS = BB_AREA_COMMANDS
AREA_EVENTS = BB_AREA_EVENTS
