"""Schemas for commands and events shared by every rule system.

Events are facts, named in the past tense; commands are requests, named in the
imperative. Both are frozen, keyword-only, tagged msgspec Structs so that one JSON
object names its own type (``{"type": "Moved", ...}``) and any frontend, in any
language, can produce or read them.

Every roll is a `Roll`: the faces of each die with their position in the
encounter's dice sequence, every modifier with its source and rule ID, the total
and what it was compared against. The audit projection finds rolls in any event
by type, so a rule system's own events only need to carry `Roll` fields.

This module imports nothing else from the project (layering rule in DESIGN.md).
Rule systems may add their own event and command types in ``firelane/events/``
modules that import only this one; they register them with the codec.
"""

from __future__ import annotations

from typing import Any, ClassVar

import msgspec


# --------------------------------------------------------------------------- rolls


class Die(msgspec.Struct, frozen=True, kw_only=True, array_like=True):
    """One die: its size, the face shown and where it sits in the dice sequence.

    ``at`` is the log version the decision was made at and ``k`` the die's index
    within that decision, so ``face`` can be recomputed from the revealed seed.
    Fixed test dice use ``at == -1``.
    """

    sides: int
    face: int
    at: int = -1
    k: int = 0


class Modifier(msgspec.Struct, frozen=True, kw_only=True):
    """One term of a roll's total, with where it came from and the rule that grants it."""

    source: str
    rule: str
    value: int


class Roll(msgspec.Struct, frozen=True, kw_only=True):
    """A resolved roll, complete enough for the audit log to explain every number.

    ``kept`` lists the indices into ``dice`` that count towards the total (all of
    them when empty, unless ``none_kept``: then no die counts, as when a
    complication removed every one; `counted` reads the two together);
    ``target`` is the number the total was compared against
    (DC, Defense, skill) with ``compare`` saying how ('>=' or '<='); ``success``
    is None for rolls that are not tests (damage, initiative).
    ``details`` holds system-specific derived numbers (degrees of success,
    result points, wild-die explosions) so they show in the audit log.
    """

    purpose: str
    rule: str
    dice: list[Die]
    modifiers: list[Modifier] = []
    total: int = 0
    kept: list[int] = []
    target: int | None = None
    compare: str = ">="
    success: bool | None = None
    notes: list[str] = []
    details: dict[str, Any] = {}
    # Added after ``kept`` meant "all of them when empty"; a log written before
    # decodes with False, which keeps that meaning.
    none_kept: bool = False

    def counted(self) -> list[int]:
        """The indices into ``dice`` that count towards the total."""
        if self.none_kept:
            return []
        return list(self.kept) if self.kept else list(range(len(self.dice)))


# --------------------------------------------------------------------------- setup


class Wall(msgspec.Struct, frozen=True, array_like=True):
    """A wall filling one grid square."""

    x: int
    y: int


class CoverFeature(msgspec.Struct, frozen=True, kw_only=True):
    """A piece of cover on a square. ``facing`` lists the directions (unit grid
    vectors pointing from the cover towards the threat) it protects against;
    empty means every direction."""

    x: int
    y: int
    level: str  # "light", "heavy", "total" (system-specific names allowed)
    facing: list[tuple[int, int]] = []


class Terrain(msgspec.Struct, frozen=True, kw_only=True):
    width: int = 24
    height: int = 16
    square_size: float = 5.0
    unit: str = "ft"
    walls: list[Wall] = []
    cover: list[CoverFeature] = []
    difficult: list[tuple[int, int]] = []


class CombatantSetup(msgspec.Struct, frozen=True, kw_only=True):
    """A combatant as the table brings it: identity, side, place and its sheet.

    ``sheet`` is the rule system's own character data (attributes, skills,
    weapons); the system validates it and turns it into typed state.
    """

    id: str
    name: str
    side: str
    position: tuple[int, int] | None = None
    sheet: dict[str, Any] = {}
    policy: str = "ai"


class EncounterSetup(msgspec.Struct, frozen=True, kw_only=True):
    system: str
    combatants: list[CombatantSetup]
    terrain: Terrain = Terrain()
    settings: dict[str, Any] = {}
    name: str = ""


# --------------------------------------------------------------------------- events


class Event(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag=True):
    """Base of every event. ``schema_version`` is bumped when a field changes
    meaning; the codec's upcasters lift stored older versions."""

    schema_version: ClassVar[int] = 1


class EncounterStarted(Event):
    encounter: str
    setup: EncounterSetup
    seed_commitment: str  # hex blake2b of the secret seed, revealed in SeedRevealed


class RoundStarted(Event):
    round: int


class InitiativeEntry(msgspec.Struct, frozen=True, kw_only=True):
    combatant: str
    total: int
    roll: Roll | None = None
    tiebreak: list[int] = []


class InitiativeRolled(Event):
    round: int
    entries: list[InitiativeEntry]
    order: list[str]
    rule: str = ""


class TurnStarted(Event):
    round: int
    combatant: str


class TurnSkipped(Event):
    round: int
    combatant: str
    reason: str
    rule: str = ""


class TurnEnded(Event):
    round: int
    combatant: str


class Moved(Event):
    """A combatant moved along ``path`` (squares entered, in order)."""

    combatant: str
    path: list[tuple[int, int]]
    mode: str = "move"
    cost: float = 0.0
    exposed: bool = False
    rule: str = ""


class ActionTaken(Event):
    """A combatant spent an action on something without its own event type
    (Overwatch, Aim, Take Cover, Rally, Ready, Wait...). ``slot`` says what it
    cost: "action", "bonus", "reaction", "half", "full", "free"."""

    combatant: str
    action: str
    slot: str = "action"
    rule: str = ""
    details: dict[str, Any] = {}


class AttackResolved(Event):
    attacker: str
    target: str
    weapon: str
    roll: Roll
    hit: bool
    critical: bool = False
    kind: str = "attack"  # "attack", "reactive_fire", "return_fire", ...
    defense: Roll | None = None
    details: dict[str, Any] = {}


class DamageDealt(Event):
    target: str
    source: str
    amount: int
    roll: Roll | None = None
    rule: str = ""
    remaining: int | None = None
    details: dict[str, Any] = {}


class TestRolled(Event):
    """A check, save or skill test that is not an attack (saves, pinning tests, first aid)."""

    __test__: ClassVar[bool] = False  # not a pytest test class, despite its name

    combatant: str
    test: str
    roll: Roll
    success: bool
    details: dict[str, Any] = {}


class ConditionApplied(Event):
    combatant: str
    condition: str
    rule: str = ""
    until: str = ""  # e.g. "start_of_turn:<id>", "end_of_turn", "round:3", "" = until removed
    details: dict[str, Any] = {}


class ConditionRemoved(Event):
    combatant: str
    condition: str
    reason: str = ""
    rule: str = ""


class CombatantDown(Event):
    combatant: str
    reason: str
    rule: str = ""


class StateAdjusted(Event):
    """A system-specific change of a combatant's resources (ammo, wounds,
    conditions counters, marks...). ``changes`` maps field name to new value."""

    combatant: str
    changes: dict[str, Any]
    reason: str = ""
    rule: str = ""


class EligibleReactor(msgspec.Struct, frozen=True, kw_only=True):
    combatant: str
    reactions: list[str]


class ReactionWindowOpened(Event):
    """A trigger gives these reactors a chance to react before play continues.

    ``continuation`` is the rule system's note of what happens after the window
    (the rest of a move, the attack awaiting resolution), so a restarted engine
    resumes exactly where it was.
    """

    window: int
    trigger: str
    actor: str
    reactors: list[EligibleReactor]
    deadline_ms: int
    continuation: dict[str, Any] = {}
    rule: str = ""
    # Opened while resolving another window's claims (a reaction to a
    # reaction): that window is suspended and resumes, from claim number
    # ``resume_at`` of its recorded order, when this one has closed.
    nested_in: int | None = None
    resume_at: int = 0


class ReactionWindowResumed(Event):
    """A window suspended by a nested one resumes resolving its remaining claims."""

    window: int


class ReactionClaimed(Event):
    window: int
    combatant: str
    reaction: str
    options: dict[str, Any] = {}


class ReactionPassed(Event):
    window: int
    combatant: str


class OrderedClaim(msgspec.Struct, frozen=True, kw_only=True):
    combatant: str
    reaction: str
    priority: int
    initiative: int
    options: dict[str, Any] = {}


class ReactionsOrdered(Event):
    window: int
    order: list[OrderedClaim]
    timed_out: list[str] = []


class ReactionDenied(Event):
    window: int
    combatant: str
    reaction: str
    reason: str


class ReactionWindowClosed(Event):
    window: int


class CommandRejected(Event):
    command_id: str
    actor: str
    command_type: str
    reason: str


class EncounterEnded(Event):
    winner: str | None
    reason: str


class SeedRevealed(Event):
    seed: str  # hex


# --------------------------------------------------------------------------- commands


class Command(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag=True):
    """Base of every command. ``actor`` is the combatant ID issuing it (or
    "sequencer" for the engine's own housekeeping); ``command_id`` makes a
    retried command apply once."""

    command_id: str
    actor: str


class StartEncounter(Command):
    setup: EncounterSetup
    seed_commitment: str


class EndTurn(Command):
    pass


class ClaimReaction(Command):
    window: int
    reaction: str
    options: dict[str, Any] = {}


class PassReaction(Command):
    window: int


class CloseReactionWindow(Command):
    """Sent by the sequencer when a window's deadline passes."""

    window: int


class EndEncounter(Command):
    reason: str = "ended by the GM"


GENERIC_EVENTS: tuple[type[Event], ...] = (
    EncounterStarted,
    RoundStarted,
    InitiativeRolled,
    TurnStarted,
    TurnSkipped,
    TurnEnded,
    Moved,
    ActionTaken,
    AttackResolved,
    DamageDealt,
    TestRolled,
    ConditionApplied,
    ConditionRemoved,
    CombatantDown,
    StateAdjusted,
    ReactionWindowOpened,
    ReactionWindowResumed,
    ReactionClaimed,
    ReactionPassed,
    ReactionsOrdered,
    ReactionDenied,
    ReactionWindowClosed,
    CommandRejected,
    EncounterEnded,
    SeedRevealed,
)

GENERIC_COMMANDS: tuple[type[Command], ...] = (
    StartEncounter,
    EndTurn,
    ClaimReaction,
    PassReaction,
    CloseReactionWindow,
    EndEncounter,
)
