"""d100-degrees' words for people (engine/labels.py)."""

from __future__ import annotations

from firelane.engine.labels import labels

LABELS = labels(
    reactions={"dodge": "Dodge", "parry": "Parry"},
    actions={
        "half": "a Half Action", "full": "a Full Action", "reaction": "a reaction",
        "controlled_fire": "Controlled Fire", "basic_attack": "a Basic Attack", "all_out_attack": "an All Out Attack",
        "suppressing_fire": "Suppressing Fire", "clear_jam": "clear a jam", "move": "move",
    },
    conditions={"all_out": "all out (no evasion)", "pinned": "pinned", "jammed": "jammed"},
)
