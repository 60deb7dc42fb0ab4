"""RonD6 typed state: the character sheet as the table brings it, plus the
per-round bookkeeping the combat rules need.

A combatant's sheet (``CombatantSetup.sheet``) is converted into
`RonD6Combatant` by the system; everything below the "per-round bookkeeping"
line is state that events change (never set it in a sheet except for tests).

Conventions:

* ``attributes`` maps attribute names (``"Agility"``, ``"Strength"``,
  ``"Perception"``, ``"Stamina"``, ``"Presence"``, ``"Will Power"``,
  ``"Knowledge"``) to die-code strings (``"3D+1"``).
* ``skills`` maps lower-case skill names (``"dodge"``, ``"firearms"``,
  ``"melee_weapons"``, ``"fighting"``, ``"athletics"``, ``"resolve"``,
  ``"persuasion"``, ``"acrobatics"``, ``"fortitude"``, ``"medicine"`` ...) to
  the **total** die code (attribute plus skill dice, as D6 sheets print it).
  A specialisation is written ``"athletics (climbing)"``. A missing skill is
  rolled on its attribute (see `rules.SKILL_ATTRIBUTE`).
* Distances are in Combat Spaces (one grid square, about 2 m).
"""

from __future__ import annotations

from typing import Any

import msgspec

from firelane.engine.state import Combatant, EncounterState


class Weapon(msgspec.Struct, kw_only=True):
    """A weapon profile.

    ``kind``: "melee", "ranged", "unarmed" or "thrown". ``damage`` is a die code
    (``"5D"``) or Strength-based (``"STR+1D"``). ``ranges`` are the Short,
    Medium and Long range limits in Combat Spaces (ranged weapons). ``reach`` is
    the melee reach in spaces (1 = adjacent). ``capacity`` is the magazine
    size (0: no ammunition). ``modes``: "BF" (burst fire), "FA" (full auto),
    "SA" (semi-automatic, rapid fire). ``stun``: Stun Damage (R6-22).
    """

    id: str
    name: str = ""
    kind: str = "ranged"
    skill: str = "firearms"
    damage: str = "3D"
    ranges: list[int] = []
    reach: int = 1
    capacity: int = 0
    modes: list[str] = []
    burst_rounds: int = 3
    auto_rounds: int = 10
    stun: bool = False
    set_vs_charge: bool = False


# Fists: what a combatant fights with when no weapon is in hand (not a sheet entry).
UNARMED = Weapon(id="unarmed", name="unarmed", kind="unarmed", skill="fighting", damage="STR")


class RonD6Combatant(Combatant):
    # ------------------------------------------------------------ the sheet
    attributes: dict[str, str] = {}
    skills: dict[str, str] = {}
    talents: dict[str, int] = {}  # talent name -> rank ("Quickness": 2, "Ambidextrous": 1, "Initiative Priority": 1)
    move: int = 5
    armor: str = "0D"  # armour die code, added to the Damage Resistance Total (R6-20)
    armor_name: str = ""
    dr_bonus: int = 0  # special abilities and other flat DR modifiers (R6-20)
    passive_defense_bonus: int = 0  # shields, talents: flat modifiers to Passive Defense (R6-15)
    initiative_bonus: str = "0D"  # die code added to the Perception initiative roll (R6-02)
    character_points: int = 0
    fate_points: int = 0
    group: str = ""  # NPCs of one side with the same group share one initiative roll (R6-02)
    weapons: list[Weapon] = []
    readied: list[str] = []  # weapon IDs in hand (at most two); empty = the first weapon
    ammo: dict[str, int] = {}  # rounds loaded, by weapon ID (defaults to capacity)
    reloads: dict[str, int] = {}  # spare magazines, by weapon ID
    surprised: bool = False  # caught unaware when the fight starts (R6-38)

    # ------------------------------------------------------------ injuries and conditions
    wounds: int = 0
    fatigue: int = 0
    dead: bool = False
    stunned_round: int = 0  # round in which Stunned was (last) applied (R6-21 recovery)
    mortal_minutes: int = 0  # minutes since Mortally Wounded (R6-21)
    grappled_by: str = ""  # who holds this combatant (R6-30)
    surprise_spent: bool = False  # the first attack against a Surprised combatant happened (R6-38)

    # ------------------------------------------------------------ per-round bookkeeping
    declared_actions: int = 0  # 0: not declared yet this round (R6-05)
    actions_used: int = 0
    actions_used_last_round: int = 0
    full_action: bool = False  # a Full Action was taken this round (R6-07)
    action_limit_doubled_round: int = 0  # round in which a Fate Point doubled the limit (R6-06)
    waiting: bool = False  # declared Wait and has not interrupted yet (R6-08)
    actions_lost: int = 0  # actions to lose at the next declaration (interaction effects, Heads Down)
    free_actions_this_turn: int = 0
    # Active Defense totals standing until the start of the next turn, by defense
    # skill (R6-16/17), and the result-point bonus won to Passive Defense.
    active_defense: dict[str, int] = {}
    defense_bonus: int = 0
    set_weapon: str = ""  # weapon set against a charge until the start of the next turn (R6-28)
    # Character Point dice / Fate Point spent against the hit being resolved (R6-20).
    resistance_boost: dict[str, Any] = {}
    tactic: str = ""  # AI hint from the sheet: "" (close in and fight) or "hold" (stay put, Wait)
    aux: dict[str, Any] = {}  # owned by the aux rules (rond6/aux.py): movement streaks, treated wounds


class RonD6State(EncounterState):
    combatants: dict[str, RonD6Combatant] = {}
    # Interrupting actions claimed in a Wait window, waiting to be resolved
    # before the declared action (R6-08). Each is a command as JSON builtins.
    queued_interrupts: list[dict[str, Any]] = []
    aux: dict[str, Any] = {}  # owned by the aux rules (rond6/aux.py): objects' structural damage
    # Set only while a Wait interruption is checked or resolved, and cleared
    # again at once (never by an event, so always "" between decisions in a
    # live or replayed state).
    interrupting: str = ""
    # What the rules leave to the GM (issue 9): each Wild Die complication
    # (R6-01) and each Setback (R6-18/22), in the order they happened:
    # {"id", "kind", "combatant", "text"}; those without a GMRuled of that id are pending.
    gm_flags: list[dict[str, Any]] = []
