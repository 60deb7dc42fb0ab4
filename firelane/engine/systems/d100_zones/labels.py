"""d100-zones' words for people (engine/labels.py)."""

from __future__ import annotations

from firelane.engine.labels import labels

LABELS = labels(
    reactions={"free_attack": "Free attack"},
    actions={
        "attack": "attack", "second_attack": "a second attack", "move": "move", "aimed_shot": "an aimed shot",
        "first_aid": "first aid", "suppressive_fire": "Suppressive Fire",
    },
    conditions={"dying": "dying", "stabilised": "stabilised", "suppressed": "suppressed"},
)
