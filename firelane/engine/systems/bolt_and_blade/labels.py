"""Bolt & Blade's words for people (engine/labels.py)."""

from __future__ import annotations

from firelane.engine.labels import labels

LABELS = labels(
    reactions={
        "dive_for_cover": "Dive for Cover", "return_fire": "Return Fire", "opportunity_strike": "Opportunity Strike",
        "reactive_fire": "Reactive Fire", "continue": "keep moving", "stop": "stop and go to ground",
    },
    actions={"tactical": "a tactical move", "dash": "a dash", "evade": "an evasive move"},
    conditions={
        "pinned": "pinned", "aiming": "aiming", "overwatch": "on overwatch", "evading": "evading",
        "disengaged": "disengaged", "helped": "helped", "las_overheated": "overheated las weapon",
        "overheated": "overheated", "stunned": "stunned",
    },
)
