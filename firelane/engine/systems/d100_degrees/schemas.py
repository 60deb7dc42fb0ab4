"""Commands and events of the d100-degrees rule system (percentile, degrees of success).

Imports only the shared schema module (layering rule in DESIGN.md). Tags carry
the ``D100D`` prefix so they stay unique across rule systems.

An attack's ``target`` is the first combatant hit; ``extra`` continues the
chain of D100D-04: each link is another combatant ID, or an empty square
``[x, y]`` the attack is "walked" through, and each link must lie within 2 m of
the one before it.
"""

from __future__ import annotations

from firelane.events.schemas import Command, Event, Roll

ChainLink = str | tuple[int, int]


class D100DMove(Command):
    """Half Action: move along ``path`` (squares entered, in order), or name only
    the destination ``to`` (with optional ``waypoints`` on the way): the engine
    then takes the path its options show (`firelane.engine.routes`)."""

    path: list[tuple[int, int]] = []
    to: tuple[int, int] | None = None
    waypoints: list[tuple[int, int]] = []


class D100DBasicAttack(Command):
    """Half Action melee attack, Weapon Skill +0 (D100D-06)."""

    target: str
    extra: list[ChainLink] = []
    weapon: str | None = None


class D100DAllOutAttack(Command):
    """Full Action melee attack, Weapon Skill +5 x Agility Bonus; no Evasion until the next turn (D100D-05)."""

    target: str
    extra: list[ChainLink] = []
    weapon: str | None = None


class D100DControlledFire(Command):
    """Half Action ranged attack, Ballistic Skill +0, +5 x RoF on automatic fire (D100D-07).

    ``rof`` is the selected rate of fire (1 .. the weapon's RoF; default its maximum).
    """

    target: str
    extra: list[ChainLink] = []
    weapon: str | None = None
    rof: int | None = None


class D100DSuppressingFire(Command):
    """Full Action: fire into the 30 degree arc centred on the square ``toward`` (D100D-09)."""

    toward: tuple[int, int]
    weapon: str | None = None
    rof: int | None = None


class D100DClearJam(Command):
    """Clear a jammed weapon (house default: a Full Action)."""

    weapon: str | None = None


class D100DSuppressingFireResolved(Event):
    """The Ballistic Skill test of Suppressing Fire (D100D-09) and what it hit.

    ``in_arc`` lists the candidates in the killzone, sorted by ID. Each hit was
    chosen by one die in ``selection_rolls`` (face n picks the n-th candidate;
    no die is rolled when there is a single candidate). ``hits`` may name a
    target more than once; ``leftover_degrees`` are the degrees of success not
    spent on hits, each adding the weapon's Multiplier to every hit's damage.
    """

    attacker: str
    weapon: str
    toward: tuple[int, int]
    in_arc: list[str]
    roll: Roll
    selection_rolls: list[Roll] = []
    hits: list[str] = []
    leftover_degrees: int = 0
    jammed: bool = False
    rule: str = "D100D-09"


D100D_COMMANDS: tuple[type[Command], ...] = (
    D100DMove,
    D100DBasicAttack,
    D100DAllOutAttack,
    D100DControlledFire,
    D100DSuppressingFire,
    D100DClearJam,
)

D100D_EVENTS: tuple[type[Event], ...] = (D100DSuppressingFireResolved,)
