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
    fields={
        "wounds": "Wounds", "ammo": "ammunition", "reloads": "reloads", "fatigue": "Fatigue", "dead": "dead",
        "character_points": "Character Points", "fate_points": "Fate Points", "position": "square",
        "out_of_fight": "out of the fight", "declared_actions": "actions declared", "actions_used": "actions used",
        "active_defense": "Active Defense", "mortal_minutes": "minutes mortally wounded", "readied": "weapon readied",
        "armor": "armor", "armor_name": "armor worn", "resistance_boost": "resistance boost",
    },
    modes={"attack": "", "normal": "", "burst_single": "short burst", "full_auto": "full auto", "sweep": "sweep",
           "held_item": "held item", "area_burst": "thrown at an area", "area_cone": "cone"},
    triggers={"attack_declared": "an attack declared", "hit": "a hit", "move": "a move"},
    details={
        "code": "dice", "wild_index": "", "wild_die": "Wild Die", "exploded": "Wild Die explosions",
        "complication": "complication", "complication_rule": "", "removed": "", "stymied": "stymied",
        "result_points": "result points", "base_code": "dice before modifiers", "dice_modifiers": "",
        "skill": "skill", "from": "", "weapon": "weapon", "extra_wild_dice": "extra Wild Dice",
        "extra_wild_complications": "extra Wild Die complications", "group": "group", "level": "difficulty",
        "patient_wounds": "patient's Wounds", "shape": "shape", "size": "size", "steps": "steps",
    },
)
