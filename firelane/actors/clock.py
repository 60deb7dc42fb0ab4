"""The wall clock the long deadlines are kept on.

The sequencer waits on trio's clock (so a test can drive it with trio's
`MockClock`), and records each running turn's and window's deadline as a
wall-clock time in Redis (`deadlines_key`), so an engine started again hours
or days later times them out when they were due. A `WallClock` is any
function giving milliseconds since the epoch: the system's by default; in
tests, `trio_wall_clock` follows trio's clock from a fixed origin, so three
days of play pass in a second and a restart in the middle keeps every
deadline.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import trio

WallClock = Callable[[], int]


def system_wall_clock() -> int:
    return int(time.time() * 1000)


def trio_wall_clock(origin_ms: int) -> WallClock:
    """A wall clock that reads ``origin_ms`` plus trio's clock (a MockClock's jumps included)."""
    return lambda: origin_ms + int(trio.current_time() * 1000)


def deadlines_key(campaign: str, encounter: str) -> str:
    """Hash "turn" -> "<TurnStarted version>:<due, wall-clock ms>", "window" -> "<window>:<due ms>"."""
    return f"firelane:{{{campaign}}}:enc:{encounter}:deadlines"
