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
    fields={
        "hp": "HP", "max_hp": "most HP", "dr": "DR", "position": "square", "out_of_fight": "out of the fight",
        "action_used": "action used", "reaction_used": "reaction used", "moved_m": "moved (m)",
        "first_aid_received": "first aid received", "aim_target": "aiming at", "armour_name": "armour worn",
    },
    modes={"attack": "", "second_attack": "second attack", "aimed_shot": "aimed shot", "free_attack": "free attack"},
    triggers={"free_attack": "a move away", "move_away": "a move away"},
    details={
        "target": "", "outcome": "outcome", "automatic": "", "complication": "complication", "code": "dice",
        "before_doubling": "before doubling", "after_doubling": "after doubling", "dr": "DR", "formula": "",
        "acts_last": "acts last",
    },
)
