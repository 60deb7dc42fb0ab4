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
    fields={
        "wounds": "Wounds", "max_wounds": "most Wounds", "jammed": "jammed weapons", "position": "square",
        "out_of_fight": "out of the fight", "half_actions_used": "Half Actions used", "reaction_used": "reaction used",
        "ballistic_skill": "Ballistic Skill", "weapon_skill": "Weapon Skill", "agility": "Agility", "willpower": "Willpower",
        "armour": "armour", "armour_name": "armour worn",
    },
    modes={"controlled_fire": "Controlled Fire", "basic_attack": "", "all_out_attack": "All Out Attack",
           "rof": "at rate of fire", "suppressing_fire": "Suppressing Fire"},
    triggers={"hit": "a hit"},
    details={
        "target": "", "degrees_formula": "", "degrees_of_success": "degrees of success",
        "degrees_of_failure": "degrees of failure", "jammed": "jammed", "jam_threshold": "jams on", "code": "dice",
        "subtotal": "before armour",
    },
)
