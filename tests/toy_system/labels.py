"""The toy's words for people (firelane/engine/labels.py)."""

from __future__ import annotations

from firelane.engine.labels import labels

LABELS = labels(
    reactions={"duck": "Duck", "snap": "Snap shot", "brace": "Brace"},
    conditions={"struck": "struck this round"},
    fields={"hp": "hit points", "speed": "speed"},
)
