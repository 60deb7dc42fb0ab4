"""RonD6 combat-core commands and events (the non-turn rules live in
``aux_schemas``). Tags are prefixed ``R6`` so they stay globally unique.

Most facts use the generic events (ActionTaken spends an action with
``slot="action"`` or ``"full"``; AttackResolved, DamageDealt, TestRolled,
ConditionApplied/Removed, StateAdjusted, CombatantDown). The types here carry
what the generic ones cannot: the declared number of actions, a declared
action awaiting resolution (the Wait trigger), standing Active Defense rolls
and Damage Resistance boosts.

Imports nothing from the project but the generic schemas (layering rule).
"""

from __future__ import annotations

from typing import Any, ClassVar

from firelane.events.schemas import Command, Event, ReactionOptions, Roll

# --------------------------------------------------------------------------- commands


class R6DeclareActions(Command):
    """R6-05/06: declare how many actions this round, before any roll.
    ``fate_point`` spends a Fate Point to double the Multi-Action Limit."""

    count: int
    fate_point: bool = False


class R6Attack(Command):
    """R6-13: attack ``target`` with ``weapon`` (default: the weapon in hand).

    ``option``: "normal", "all_out" (R6-24), "full_auto" (R6-31), "sweep"
    (R6-39), "burst_single" (R6-26), "lunge" (R6-33). ``shots`` > 1 is Rapid
    Fire (R6-36). ``called_shot`` names a Called Shot location (R6-27).
    ``off_hand_weapon`` adds a second attack with the other hand (R6-34).
    ``coordinate_with`` lists allies who spend a held action to attack the same
    target in a Coordinated Attack (R6-29).
    """

    target: str
    weapon: str = ""
    option: str = "normal"
    shots: int = 1
    called_shot: str = ""
    off_hand_weapon: str = ""
    coordinate_with: list[str] = []


class R6Charge(Command):
    """R6-28: Full Action: run straight at ``target`` and make one melee attack."""

    target: str
    weapon: str = ""


class R6Interact(Command):
    """R6-18: an interaction attack; ``effects`` lists the result-point costs
    (1..6) to buy, or empty to let the house rule choose."""

    target: str
    interaction: str
    effects: list[int] = []


class R6HeadsDown(Command):
    """R6-32: Full Action: suppressive fire on the area around ``center``."""

    center: tuple[int, int]
    weapon: str = ""


class R6Defend(Command):
    """R6-16 (``full`` False: an Action) or R6-17 (``full`` True: Full Defense,
    a Full Action with +2D): roll an Active Defense now; it stands until the
    start of the defender's next turn."""

    skill: str = "dodge"
    full: bool = False


class R6Wait(Command):
    """R6-08: spend an action to wait for a chance to interrupt."""


class R6Ready(Command):
    """R6-37: draw, reload or retrieve a weapon (an action)."""

    weapon: str
    reload: bool = False


class R6Stand(Command):
    """R6-35: stand up from prone (an action)."""


class R6DropProne(Command):
    """R6-35: drop prone (a Free Action, house default)."""


class R6FreeAction(Command):
    """R6-07: a Free Action (speak, drop an item, look around, shout)."""

    action: str
    text: str = ""


class R6Grapple(Command):
    """Grab an adjacent target (an unarmed attack with Strength: Fighting)."""

    target: str


class R6Escape(Command):
    """R6-30: try to break a grapple (an action; opposed Strength: Fighting)."""


class R6SetWeapon(Command):
    """R6-28: set a weapon against a charge until the start of your next turn (an action)."""

    weapon: str = ""


class R6RecoverStun(Command):
    """R6-21/22: a Standard Stamina: Fortitude test to shake off Stunned (an action)."""


class R6MortalWoundCheck(Command):
    """R6-21: the GM rolls a Mortally Wounded combatant's Strength at the end of
    a minute; less than the minutes elapsed and the character dies. Only the GM
    seat sends it (actor "gm"); the engine's own actor is accepted too."""

    authority: ClassVar[str] = "gm"

    combatant: str


R6_COMMANDS: tuple[type[Command], ...] = (
    R6DeclareActions,
    R6Attack,
    R6Charge,
    R6Interact,
    R6HeadsDown,
    R6Defend,
    R6Wait,
    R6Ready,
    R6Stand,
    R6DropProne,
    R6FreeAction,
    R6Grapple,
    R6Escape,
    R6SetWeapon,
    R6RecoverStun,
    R6MortalWoundCheck,
)

# --------------------------------------------------------------------------- events


class R6ActionsDeclared(Event):
    """A combatant declared its number of actions for the round (R6-05).

    ``penalty_dice`` is the multiple-action penalty for every action this
    round; ``lost`` actions were forfeited at once (interaction effects);
    ``fate_point`` says a Fate Point doubled the limit (R6-06).
    """

    combatant: str
    round: int
    count: int
    limit: int
    penalty_dice: int
    fate_point: bool = False
    lost: int = 0
    off_turn: bool = False
    rule: str = "R6-05"


class R6ActionDeclared(Event):
    """An action was declared and awaits resolution (the trigger for Wait, R6-08).
    ``command`` is the command as JSON builtins; ``interrupt`` marks an action
    performed as a Wait interruption."""

    combatant: str
    action: str
    command: dict[str, Any]
    interrupt: bool = False
    rule: str = "R6-08"


class R6ActionLost(Event):
    """A declared action could not be carried out (its actor or target fell to an interruption)."""

    combatant: str
    action: str
    reason: str
    rule: str = "R6-08"


class R6InterruptQueued(Event):
    """A waiting combatant claimed an interruption; its action resolves before the declared one."""

    window: int
    combatant: str
    command: dict[str, Any]
    rule: str = "R6-08"


class R6InterruptsBegun(Event):
    """The queued interruptions of a window start resolving (clears the queue)."""

    window: int
    count: int


class R6DefenseRolled(Event):
    """An Active Defense (R6-16) or Full Defense (R6-17) roll; its total stands
    against attacks it covers until the start of the defender's next turn."""

    combatant: str
    skill: str
    roll: Roll
    full: bool = False
    against: str = ""
    rule: str = "R6-16"


class R6DamageRolled(Event):
    """A hit's damage roll, recorded when it is rolled because the target may
    still spend Character/Fate Points (R6-20) before it is applied: the
    `DamageDealt` that follows the window compares its total with the DR."""

    attacker: str
    target: str
    weapon: str
    roll: Roll
    rule: str = "R6-19"


class R6ResistanceBoosted(Event):
    """A hit combatant spent Character Points (extra Wild Dice on its Damage
    Resistance Total) and/or a Fate Point (Toughness and armour doubled), R6-20."""

    combatant: str
    window: int
    character_points: int = 0
    fate_point: bool = False
    roll: Roll | None = None
    rule: str = "R6-20"


R6_EVENTS: tuple[type[Event], ...] = (
    R6ActionsDeclared,
    R6ActionDeclared,
    R6ActionLost,
    R6InterruptQueued,
    R6InterruptsBegun,
    R6DefenseRolled,
    R6DamageRolled,
    R6ResistanceBoosted,
)


# --------------------------------------------------------------------------- window answers


class R6DefenseOptions(ReactionOptions):
    """An Active Defense (dodge, parry, block, resolve, maneuver, acrobatics;
    R6-16, R6-18): ``declare``, how many actions a defender who has not
    declared this round declares now (1 to its limit; none: the setting
    ``reaction_declares_actions``, default 2). One who has declared sends ``{}``."""

    declare: int | None = None


class R6InterruptOptions(ReactionOptions):
    """An interruption from Wait (R6-08): ``command``, the action to take now,
    as a command of the system without ``actor`` and ``command_id`` (e.g.
    ``{"type": "R6Attack", "target": "x", "weapon": "pistol"}``)."""

    command: dict[str, Any]


class R6ResistOptions(ReactionOptions):
    """Spending points against a hit (R6-20): Character Points and/or one Fate
    Point (at least one of them)."""

    character_points: int = 0
    fate_point: bool = False
