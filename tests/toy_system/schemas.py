"""The toy's commands (its events are the shared ones of firelane.events.schemas)."""

from __future__ import annotations

from firelane.events.schemas import Command


class Strike(Command):
    target: str


class Step(Command):
    to: tuple[int, int]
