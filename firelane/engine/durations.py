"""Durations in human units: how a setup writes a turn timer or a reaction
deadline ("90s", "45m", "24h", "3d", "1h30m"), and how people read one back.

Pure: no clock here. The engine keeps every duration in milliseconds (the
settings ``turn_timer_ms`` and ``reaction_deadline_ms``, the events'
``deadline_ms``); these are the words a person writes and reads.
"""

from __future__ import annotations

import re
from typing import Any

UNIT_MS = {"ms": 1, "s": 1_000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")
_WHOLE = re.compile(r"(?:\d+(?:\.\d+)?(?:ms|s|m|h|d))+")
EXAMPLES = "e.g. 90s, 45m, 24h, 3d or 1h30m"


class DurationError(ValueError):
    """A duration that cannot be read; the message is one line for a person."""


def parse_duration(value: Any, *, name: str = "duration") -> int:
    """Milliseconds from a duration: a whole number of milliseconds (as
    settings always took), or a text of numbers with units (ms, s, m, h, d),
    such as "24h" or "1h30m". Anything else raises DurationError naming
    ``name`` and what was given."""
    if isinstance(value, bool):
        raise DurationError(f"{name}: must be a duration ({EXAMPLES}), not {str(value).lower()}")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if not isinstance(value, str):
        shown = f"{value:g}" if isinstance(value, float) else type(value).__name__
        raise DurationError(f"{name}: must be a duration ({EXAMPLES}), not {shown}")
    text = value.strip().lower().replace(" ", "")
    if not text or not _WHOLE.fullmatch(text):
        raise DurationError(f"{name}: {value[:40]!r} is not a duration ({EXAMPLES})")
    total = sum(float(number) * UNIT_MS[unit] for number, unit in _PART.findall(text))
    if total != int(total):
        raise DurationError(f"{name}: {value[:40]!r} is not a whole number of milliseconds")
    return int(total)


def describe_duration(ms: int | float) -> str:
    """A duration as a person says it: "90 s", "45 min", "1 h 30 min", "3 d"."""
    ms = int(ms)
    if ms < 1_000:
        return f"{ms} ms"
    if ms < 60_000:
        seconds = ms / 1000
        return f"{seconds:g} s"
    parts = []
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("min", 60_000), ("s", 1_000)):
        count, ms = divmod(ms, size)
        if count:
            parts.append(f"{count} {unit}")
    return " ".join(parts[:2])
