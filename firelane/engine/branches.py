"""Which log versions stand, and which a GM's rewind undid.

The log is append-only: a rewind (`EncounterRewound`, at log version R, back
to version T) leaves the events after T in the log and restores the state at
T. Those events, T+1 to R-1, are the undone branch: they happened, the table
saw them, and they no longer count. A rewind may only go to a version that
still stands (`BaseRuleSystem.check_rewind`), so each rewind undoes exactly
the versions from T+1 to R-1 that still stood, and a version once undone
stays undone: whoever follows the log learns every undone version from the
rewinds alone, in order, as they come (`undo`).

An undone stretch is a `Span`: its first and last version and the version of
the rewind that undid it. Spans are kept sorted and never overlap.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

Span = tuple[int, int, int]  # (first version, last version, the rewind's version)


def undo(spans: Sequence[Span], to_version: int, rewind_version: int) -> list[Span]:
    """The spans a rewind at log version ``rewind_version`` back to
    ``to_version`` undoes: every version after ``to_version`` and before the
    rewind that ``spans`` (those undone before it) leave standing."""
    first, last = to_version + 1, rewind_version - 1
    found: list[Span] = []
    start = first
    for low, high, _by in spans:
        if high < start or low > last:
            continue
        if low > start:
            found.append((start, low - 1, rewind_version))
        start = max(start, high + 1)
    if start <= last:
        found.append((start, last, rewind_version))
    return found


def merged(spans: Sequence[Span], new: Sequence[Span]) -> list[Span]:
    return sorted([*spans, *new])


def undone_by(spans: Sequence[Span], version: int) -> int | None:
    """The version of the rewind that undid ``version``, or None if it stands."""
    index = bisect.bisect_right(spans, (version, float("inf"), float("inf"))) - 1
    if index >= 0:
        low, high, by = spans[index]
        if low <= version <= high:
            return by
    return None


def undone_by_rewind(spans: Sequence[Span], rewind_version: int) -> list[tuple[int, int]]:
    """The versions the rewind at ``rewind_version`` undid, as (first, last) ranges."""
    return [(low, high) for low, high, by in spans if by == rewind_version]


class Branches:
    """The undone spans of a log read in order: tell it each rewind as it comes
    (`rewound`) and ask of any version read so far (`undone_by`)."""

    def __init__(self, spans: Sequence[Span] = ()) -> None:
        self.spans: list[Span] = list(spans)

    def rewound(self, rewind_version: int, to_version: int) -> list[Span]:
        """Record the rewind at ``rewind_version`` back to ``to_version``; the spans it undoes."""
        new = undo(self.spans, to_version, rewind_version)
        self.spans = merged(self.spans, new)
        return new

    def undone_by(self, version: int) -> int | None:
        return undone_by(self.spans, version) if self.spans else None


__all__ = ["Branches", "Span", "merged", "undo", "undone_by", "undone_by_rewind"]
