"""Commands and events of the d100-zones rule system (percentile combat with zones).

Imports only the shared schema module (layering rule in DESIGN.md). Tags carry
the ``D100Z`` prefix so they stay unique across rule systems.
"""

from __future__ import annotations

from firelane.events.schemas import Command, Event, ReactionOptions, Roll


class D100ZMove(Command):
    """Move along ``path`` (squares entered, in order). Up to one zone (15 m) a
    turn is free; up to 50 m costs the action (D100Z-02/03). A move may name
    only its destination ``to`` (with optional ``waypoints``): the engine then
    takes the path its options show (`firelane.engine.routes`)."""

    path: list[tuple[int, int]] = []
    to: tuple[int, int] | None = None
    waypoints: list[tuple[int, int]] = []


class D100ZAttack(Command):
    """Attack ``target`` with ``weapon`` (a melee, ranged or unarmed weapon;
    default: the first melee weapon when engaged, else the first ranged one).
    The first attack of a turn takes the action; a second one is the multi-attack
    option (D100Z-11)."""

    target: str
    weapon: str | None = None


class D100ZAimedShot(Command):
    """Option D100Z-12: spend the whole turn aiming at ``target``."""

    target: str
    weapon: str | None = None


class D100ZSuppressiveFire(Command):
    """Option D100Z-13: fire into a zone (engaged, close, far or distant) around the shooter."""

    zone: str
    weapon: str | None = None


class D100ZFirstAid(Command):
    """D100Z-14: first aid on an engaged ally (or oneself)."""

    target: str


class D100ZFirstAidGiven(Event):
    """D100Z-14: the INT test, the healing roll (on a success) and the result.
    ``hp`` is the target's hit points afterwards; the target cannot receive
    first aid again this combat, whatever the outcome."""

    healer: str
    target: str
    roll: Roll
    heal: Roll | None = None
    healed: int = 0
    hp: int = 0
    critical: bool = False
    rule: str = "D100Z-14"


class D100ZRevived(Event):
    """An unconscious combatant healed above 0 HP comes to and rejoins the fight (house default)."""

    combatant: str
    hp: int
    reason: str = ""
    rule: str = "D100Z-14"


D100Z_COMMANDS: tuple[type[Command], ...] = (
    D100ZMove,
    D100ZAttack,
    D100ZAimedShot,
    D100ZSuppressiveFire,
    D100ZFirstAid,
)

D100Z_EVENTS: tuple[type[Event], ...] = (D100ZFirstAidGiven, D100ZRevived)


# --------------------------------------------------------------------------- window answers


class D100ZFreeAttackOptions(ReactionOptions):
    """A free attack on one leaving Engaged range (D100Z-15): ``weapon``, the
    melee weapon's name (none: the best one at hand)."""

    weapon: str | None = None
