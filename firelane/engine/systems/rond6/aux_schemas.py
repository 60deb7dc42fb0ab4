"""RonD6 commands and events for the rules outside the attack core: movement
(R6-09..12), breaking objects (R6-25), area attacks (R6-40/41) and healing
(R6-42/43). Tags are prefixed ``R6`` so they stay globally unique.

Generic events carry most facts: `Moved` (the squares entered), `TestRolled`
(movement, terrain, jump, fatigue, breath tests), `ActionTaken` (actions
spent, free actions), `AttackResolved` (each target of an area attack). The
types here carry what the generic ones cannot.

Imports nothing from the project but the generic schemas (layering rule).
"""

from __future__ import annotations

from typing import Any

from firelane.events.schemas import Command, Event, Roll

# --------------------------------------------------------------------------- commands


class R6Move(Command):
    """R6-09/10/11/12: move along ``path`` (the Spaces entered, in order, each
    adjacent to the one before).

    ``mode``: "walk", "swim" (half Move rounded up) or "climb" (Move with the
    Athletics (Climbing) specialisation, else half). ``pace``: "partial" (half
    of the mode's Move, an Action), "full" (the mode's Move, a Full Action) or
    "run" (farther than the mode's Move with a movement test: up to 2x is an
    Action, farther a Full Action; on a failure only the mode's Move is
    covered). ``terrain`` is the GM's call on the worst terrain on the way
    ("" = only the map's difficult squares); ``terrain_extra`` adds levels to
    Extreme terrain ("+5 or more").
    """

    path: list[tuple[int, int]] = []
    mode: str = "walk"
    pace: str = "partial"
    terrain: str = ""
    terrain_extra: int = 0
    # Or only the destination (with optional waypoints): the engine takes the
    # path its options show (`firelane.engine.routes`).
    to: tuple[int, int] | None = None
    waypoints: list[tuple[int, int]] = []


class R6Jump(Command):
    """R6-12: a Strength: Athletics (Jumping) test; ``path`` is the straight
    line of Spaces jumped over/into (the last is the landing Space);
    ``run_up`` the Spaces run first (at least half Move: running start, +1D).
    An Action, or a Full Action with a run-up (house default)."""

    path: list[tuple[int, int]]
    run_up: list[tuple[int, int]] = []


class R6HoldBreath(Command):
    """R6-12: hold breath (a Free Action). Unprepared: 10 x Stamina: Fortitude
    dice seconds, no roll; ``prepared``: 5 x a Fortitude test's result minutes."""

    prepared: bool = False


class R6BreakObject(Command):
    """R6-25: attack an object: ``target`` is an object ID from the encounter's
    ``objects`` setting, or ``"wall@x,y"`` for a wall Space of the map."""

    target: str
    weapon: str = ""


class R6AreaAttack(Command):
    """R6-40/41: an attack with an area weapon. ``center``: the burst's target
    Space; ``facing``: the cone's direction ("n", "ne", ... or towards
    ``center`` when empty). The weapon's profile names its area shape and size."""

    weapon: str = ""
    center: tuple[int, int] | None = None
    facing: str = ""


class R6Heal(Command):
    """R6-42/43: ``kind`` "assisted" (a Medicine test by ``healer``, or by the
    actor when it is a combatant: an Action, the patient within 1 Space) or
    "natural" (the patient's Stamina: Fortitude test after its recovery time;
    the GM/sequencer says how long it ``rested_minutes`` and whether it
    ``rested`` or kept active)."""

    patient: str
    kind: str = "assisted"
    healer: str = ""
    rested_minutes: int = 0
    rested: bool = True


R6_AUX_COMMANDS: tuple[type[Command], ...] = (R6Move, R6Jump, R6HoldBreath, R6BreakObject, R6AreaAttack, R6Heal)

# --------------------------------------------------------------------------- events


class R6Strenuous(Event):
    """R6-12: a round of strenuous activity (a Full Move, a run, swimming,
    climbing, a jump); ``streak`` is how many rounds in a row it has lasted.
    Past ``free_rounds`` (the Stamina: Fortitude dice) ``roll`` is that round's
    Fortitude test; ``fatigued`` says it failed: the character becomes
    Fatigued and stops strenuous activity for the rest of the round."""

    combatant: str
    round: int
    streak: int
    activity: str
    free_rounds: int = 0
    roll: Roll | None = None
    fatigued: bool = False
    rule: str = "R6-12"


class R6ObjectDamaged(Event):
    """R6-25: an attack on an object, resolved: the attack test against the
    object's Defense, the Damage Total against its Damage Resistance Total,
    the levels of structural damage it took and its running total."""

    attacker: str
    target: str
    name: str
    weapon: str
    attack: Roll
    hit: bool
    damage: Roll | None = None
    resistance: int = 0
    resistance_roll: Roll | None = None
    levels: int = 0
    total_levels: int = 0
    structure_levels: int = 0
    destroyed: bool = False
    square: tuple[int, int] | None = None
    rule: str = "R6-25"


class R6AreaTargeted(Event):
    """R6-40/41: the area an attack covers and whom it catches (the attacker
    never by its own cone). Each target's result follows as `AttackResolved`."""

    attacker: str
    weapon: str
    shape: str  # "burst" or "cone"
    size: str
    squares: list[tuple[int, int]]
    targets: list[str]
    center: tuple[int, int] | None = None
    facing: str = ""
    rule: str = "R6-40"


class R6Healed(Event):
    """R6-42/43: a healing test and its effect on the patient: the Wounds
    before and after, whether Stunned was removed, and (assisted healing) how
    many of the remaining Wounds count as treated (once per injury)."""

    patient: str
    kind: str  # "natural" or "assisted"
    roll: Roll
    wounds_before: int
    wounds_after: int
    healer: str = ""
    stunned_removed: bool = False
    treated_wounds: int = 0
    critical_failure: bool = False
    revived: bool = False
    details: dict[str, Any] = {}
    rule: str = "R6-43"


R6_AUX_EVENTS: tuple[type[Event], ...] = (R6Strenuous, R6ObjectDamaged, R6AreaTargeted, R6Healed)
