"""Bolt & Blade commands and events (the d20 system's own types).

Imports nothing from the project except the generic schemas (layering rule in
DESIGN.md). Tags are prefixed ``BB`` so they stay globally unique. Everything
the generic events already say (Moved, ActionTaken, AttackResolved,
DamageDealt, TestRolled, ConditionApplied/Removed, StateAdjusted) is said with
them; these types cover what they cannot.
"""

from __future__ import annotations

from typing import Any

from firelane.events.schemas import Command, Event, ReactionOptions, Roll

Square = tuple[int, int]


# --------------------------------------------------------------------------- commands


class BBMove(Command):
    """Move to ``to``, passing the ``waypoints`` in order if given: the engine
    takes the cheapest path there, the one ``options`` shows for that square
    (diagonals cost one square, entering cover 5 ft, never through an enemy's
    square). Or give the whole ``path`` (the squares entered, in order), as
    older commands do; not both.

    ``mode``: "tactical" (Movement, BB-CMB-06), "dash" (spends the Action for
    Movement again, BB-CMB-07) or "evade" (spends the Action, moves up to your
    Movement, Reactive Fire against you has Disadvantage until the end of your
    turn, BB-CMB-08). ``on_reactive_fire``: your choice in advance if Reactive
    Fire damages you during this move (BB-CMB-12): "continue" or "stop" (stop
    at once and become Pinned); empty = the encounter's ``reactive_fire_choice``
    setting. When the damage lands you are asked (a ``reactive_fire_choice``
    window); passing it, or its deadline, keeps this choice.
    """

    path: list[Square] = []
    to: Square | None = None
    waypoints: list[Square] = []
    mode: str = "tactical"
    on_reactive_fire: str = ""


class BBAttack(Command):
    """Attack ``target`` with ``weapon`` (empty = the ready weapon) (BB-CORE-07)."""

    target: str
    weapon: str = ""


class BBAim(Command):
    """Bonus Action: +2 on your next ranged attack this turn (BB-CMB-21)."""


class BBTakeCover(Command):
    """Action: improve your cover one step (BB-CMB-30)."""


class BBOverwatch(Command):
    """Action: watch the squares within ``radius_ft`` (empty = the setting) of
    ``center`` until the start of your next turn (BB-CMB-13)."""

    center: Square
    radius_ft: int | None = None


class BBSuppress(Command):
    """Action: suppress ``area`` (squares fitting in a 10-ft box) with ``weapon``
    (empty = the ready weapon) (BB-CMB-18, BB-CMB-20)."""

    area: list[Square]
    weapon: str = ""


class BBRally(Command):
    """Action: end Pinned (BB-CMB-19)."""


class BBDisengage(Command):
    """Action: leaving melee reach this turn provokes no Opportunity Strike (BB-CMB-09)."""


class BBReady(Command):
    """Action: make another carried weapon your ready weapon (BB-CORE-17 Ready)."""

    weapon: str


class BBReload(Command):
    """Action: reload a weapon to a full magazine and clear a jam (BB-CORE-17 Interact)."""

    weapon: str = ""


class BBHelp(Command):
    """Action: distract an enemy within 5 ft; the next attack an ally of yours
    makes against it has Advantage (BB-CORE-17 Help)."""

    target: str


class BBSearch(Command):
    """Action: an Intellect check with Awareness against the search DC (BB-CORE-17 Search)."""

    dc: int | None = None


class BBMark(Command):
    """Bonus Action: put your single-bearer mark feature on ``target`` (BB-CMB-23)."""

    target: str
    mark: str


# --------------------------------------------------------------------------- events


class BBMovementStopped(Event):
    """A move ended early (the mover chose to stop under fire, an Overwatch hit
    stopped it, it went down). ``unused_path`` is what it did not walk."""

    combatant: str
    at: Square
    reason: str
    unused_path: list[Square] = []
    rule: str = ""


class BBReactiveFireChoice(Event):
    """After Reactive Fire dealt damage, the mover continued or stopped (BB-CMB-12).
    ``answered``: the mover chose when asked; False: it passed or the deadline
    came, and the choice its move declared stood."""

    combatant: str
    choice: str  # "continue" or "stop"
    attacker: str
    rule: str = "BB-CMB-12"
    answered: bool = True


class BBShotHeld(Event):
    """A Reactive Fire claim named a square of the mover's path ahead (BB-CMB-10):
    the shot waits there and resolves when the mover reaches it; if the move ends
    first, the claim is denied and the Reaction stays unspent."""

    reactor: str
    mover: str
    square: Square
    window: int
    rule: str = "BB-CMB-10"


class BBExchangeResolved(Event):
    """An Opposed Exchange (Return Fire) between an attacker and a target (BB-CMB-14)."""

    attacker: str
    defender: str
    attacker_total: int
    defender_total: int
    attacker_would_hit: bool
    defender_would_hit: bool
    attacker_hits: bool
    defender_hits: bool
    outcome: str
    rule: str = "BB-CMB-14"


class BBAttackRecomputed(Event):
    """A hit was checked again after the target dived into cover (BB-CMB-17).
    ``attack`` explains ``attack_total`` (the attack roll, less the Exposed
    bonus the target had where it stood) against the new ``defense``."""

    attacker: str
    target: str
    attack_total: int
    defense: Roll
    hit: bool
    rule: str = "BB-CMB-17"
    details: dict[str, Any] = {}
    attack: Roll | None = None


class BBOpposedCheck(Event):
    """Both sides rolled; the higher total wins, a tie goes to the side that holds (BB-CORE-10)."""

    actor: str
    defender: str
    actor_roll: Roll
    defender_roll: Roll
    winner: str
    tie: bool = False
    rule: str = "BB-CORE-10"


class BBMarkMoved(Event):
    """A single-bearer mark changed bearer (BB-CMB-23); ``previous`` lost it."""

    marker: str
    mark: str
    bearer: str
    previous: str | None = None
    rule: str = "BB-CMB-23"




BB_COMMANDS: tuple[type[Command], ...] = (
    BBMove,
    BBAttack,
    BBAim,
    BBTakeCover,
    BBOverwatch,
    BBSuppress,
    BBRally,
    BBDisengage,
    BBReady,
    BBReload,
    BBHelp,
    BBSearch,
    BBMark,
)

BB_EVENTS: tuple[type[Event], ...] = (
    BBMovementStopped,
    BBReactiveFireChoice,
    BBShotHeld,
    BBExchangeResolved,
    BBAttackRecomputed,
    BBOpposedCheck,
    BBMarkMoved,
)


# --------------------------------------------------------------------------- window answers


class BBReactiveFireOptions(ReactionOptions):
    """Reactive Fire (BB-CMB-10, -13): ``square``, the lane square of the
    mover's path to fire at (the options list those offered); none: the first."""

    square: Square | None = None


class BBDiveForCoverOptions(ReactionOptions):
    """Dive for Cover (BB-CMB-17): ``to``, the square to dive to (one of the
    options' choices); none: the first offered."""

    to: Square | None = None
