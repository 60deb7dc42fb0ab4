"""RonD6's words for people (engine/labels.py)."""

from __future__ import annotations

from firelane.engine.labels import labels

LABELS = labels(
    reactions={
        "interrupt": "Interrupt (Wait)",
        "dodge": "Dodge", "parry": "Parry", "block": "Block", "resolve": "Resolve (willpower)",
        "maneuver": "Maneuver", "acrobatics": "Acrobatics",
        "resist": "Spend points to resist",
    },
    actions={
        "attack": "attack", "charge": "charge", "ready": "ready a weapon", "reload": "reload", "stand": "stand up",
        "walk_partial": "walk (partial move)", "walk_full": "walk (full move)", "walk_run": "run",
        "area_burst": "throw at an area", "area_cone": "attack a cone", "assisted_healing": "treat a wound",
        "wait": "wait", "escape": "break free", "grapple": "grapple", "heads_down": "lay down covering fire",
    },
    conditions={
        "mortally_wounded": "mortally wounded", "incapacitated": "incapacitated", "unconscious": "unconscious",
        "stunned": "stunned", "prone": "prone", "fatigued": "fatigued", "grappled": "grappled",
        "no_active_defense": "no active defence left", "dead": "dead",
    },
)
