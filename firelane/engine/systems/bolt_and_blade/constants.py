"""Bolt & Blade names and house defaults: conditions, move modes, settings.

Bottom floor of the package (see the package docstring): imports nothing of
the package but `rules`.
"""

from __future__ import annotations

from typing import Any

from firelane.engine.systems.bolt_and_blade.rules import DEFAULT_PROFICIENCY_TABLE

# Conditions this system uses (ConditionApplied.condition).
PINNED = "pinned"
AIMING = "aiming"
OVERWATCH = "overwatch"
EVADING = "evading"
DISENGAGED = "disengaged"
HELPED = "helped"
LAS_OVERHEATED = "las_overheated"
OVERHEATED = "overheated"
STUNNED = "stunned"
MARK_PREFIX = "mark:"

# Move modes (BBMove.mode) and the rule each follows.
MOVE_MODES: tuple[str, ...] = ("tactical", "dash", "evade")
MODE_RULES: dict[str, str] = {"tactical": "BB-CMB-06", "dash": "BB-CMB-07", "evade": "BB-CMB-08"}
# What a mover damaged by Reactive Fire does (BB-CMB-12).
FIRE_CHOICES: tuple[str, ...] = ("continue", "stop")

BB_DEFAULT_SETTINGS: dict[str, Any] = {
    "proficiency_table": [list(row) for row in DEFAULT_PROFICIENCY_TABLE],  # BB-CORE-03
    "defense_base": 10,  # BB-CORE-08: Defense = base + armour + Agility + cover + other sources
    "cover_bonus": {"light": 2, "heavy": 5},  # BB-CMB-04; total cover cannot be targeted
    "cover_against_melee": False,  # BB-CMB-04: cover counts against ranged attacks only
    "exposed_attack_bonus": 2,  # BB-CMB-05
    "opposed_tie": "defender",  # BB-CORE-10: the side not acting holds a tie
    "movement_ft": 30,  # BB-CMB-06: Movement when a sheet names none
    "pinned_move_multiplier": 2,  # BB-CMB-19: leaving cover / crossing open ground while Pinned
    "difficult_move_multiplier": 2,  # difficult terrain squares
    "enter_cover_cost_ft": 5,  # BB-CMB-29
    "reactive_fire_choice": "continue",  # BB-CMB-12: a mover's default when Reactive Fire damages it
    "reactive_fire_pin": "attacker_next_turn",  # BB-CMB-12: stopping pins until the attacker's next turn starts
    "overwatch_radius_ft": 10,  # BB-CMB-13: the watched area around the chosen point
    "suppress_area_ft": 10,  # BB-CMB-18: the area fits in a box this wide
    "suppress_ammo": 3,  # BB-CMB-20
    "aim_bonus": 2,  # BB-CMB-21
    "aim_after_minor_move_in_cover": False,  # BB-CMB-21 GM option: Aim after <= 5 ft of movement ending in cover
    "search_dc": 12,  # BB-CORE-17 Search
    "overheat_damage": "1d6",  # BB-CORE-14: an overheating weapon burns its wielder
    "perils_dc": 12,  # BB-CORE-14: Willpower save against Perils
    "perils_damage": "1d6",
    "mark_attack_bonus": 2,  # BB-CMB-23: the marker's attacks against its mark's bearer
}
