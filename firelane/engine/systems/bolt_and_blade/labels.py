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
    fields={
        "vitality": "Vitality", "max_vitality": "most Vitality", "ammo": "ammunition", "jammed": "jammed weapons",
        "taking_cover": "taking cover", "ready_weapon": "weapon in hand", "position": "square", "conditions": "conditions",
        "out_of_fight": "out of the fight", "movement_used_ft": "movement used (ft)", "movement_ft": "movement (ft)",
        "action_used": "action used", "bonus_used": "bonus action used", "reaction_used": "reaction used",
        "overwatch_area": "overwatch area", "marks": "marks", "armour": "armour", "level": "level",
    },
    modes={"normal": "", "long": "long range", "reactive_fire": "Reactive Fire", "return_fire": "Return Fire",
           "opportunity_strike": "Opportunity Strike", "attack": ""},
    triggers={
        "fire_lane": "a move through a fire lane", "ranged_attack": "a ranged attack", "ranged_hit": "a ranged hit",
        "reactive_fire_choice": "a choice on being fired at", "melee_reach": "leaving melee reach",
    },
    details={
        "natural": "natural", "mode": "", "advantage": "Advantage from", "disadvantage": "Disadvantage from",
        "range_band": "range", "critical": "critical", "fumble": "fumble", "expression": "dice", "dc": "DC",
        "best_outcome": "best outcome", "complication": "complication",
    },
)
