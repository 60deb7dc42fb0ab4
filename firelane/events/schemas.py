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
    ``character`` names a campaign character instead (docs/campaigns.md):
    when the encounter is created its current sheet (and its name, unless one
    is given) is written in here, so `EncounterStarted` records both the
    character and the sheet it fought with.
    """

    id: str
    name: str = ""
    side: str
    position: tuple[int, int] | None = None
    sheet: dict[str, Any] = {}
    policy: str = "ai"
    character: str = ""


class SeatSetup(msgspec.Struct, frozen=True, kw_only=True):
    """Who sits at the table: the GM, a player (with the combatants that
    player controls) or a spectator. Combatants whose policy is "ai" belong to
    the engine and are in no seat. Each seat gets a secret token when the
    encounter is created; a command's authority comes from the seat it
    arrives through, never from a field of the command."""

    id: str
    role: str = "player"  # "gm", "player" or "spectator"
    name: str = ""
    combatants: list[str] = []


class EncounterSetup(msgspec.Struct, frozen=True, kw_only=True):
    system: str
    combatants: list[CombatantSetup]
    terrain: Terrain = Terrain()
    settings: dict[str, Any] = {}
    name: str = ""
    # Empty: a GM seat "gm", a spectator seat, and one player seat per side
    # with human combatants (named after the side). See engine/seats.py.
    seats: list[SeatSetup] = []


# --------------------------------------------------------------------------- events


class Event(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag=True):
    """Base of every event. ``schema_version`` is bumped when a field changes
    meaning; the codec's upcasters lift stored older versions."""

    schema_version: ClassVar[int] = 1


class EncounterStarted(Event, omit_defaults=True):
    # omit_defaults: only reproducible_dice has a default, so an ordinary start is written as before.
    encounter: str
    setup: EncounterSetup
    seed_commitment: str  # hex blake2b of the secret seed, revealed in SeedRevealed
    # The creator asked for dice reproducible from a seed text (--reproducible-dice):
    # anyone who knows the text can predict every roll.
    reproducible_dice: bool = False
    # The store's Ed25519 public key (64 hex digits) whose signatures the log
    # carries (events/log_signing.py, docs/fairness.md); "" for a log that is not signed.
    log_public_key: str = ""


class ClientSeedAdded(Event):
    """A player seat's contribution to the dice (docs/fairness.md): every die
    drawn after this entry comes from the server's seed mixed with every
    contribution so far, in log order. ``seat`` is the seat the command came
    from (its channel), ``client_seed`` the text as given."""

    seat: str
    client_seed: str


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
    # With a turn timer (setting turn_timer_ms) on a human's turn: how long it
    # has before the engine ends the turn or lets the AI play it.
    deadline_ms: int | None = None


class TurnSkipped(Event):
    """A combatant's turn passed over because it cannot act (down, stunned,
    out of actions...): the engine's, with the reason. A GM's GMSkipTurn is
    not this: it answers GMRuled, then TurnEnded."""

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


class CommandRepeated(Event):
    """The answer to a seat's inbox entry holding a command it sent before
    (same command_id, same body): the command is applied once, and this
    answers the repeat's own entry (its ``k``), pointing at the first answer:
    ``first_version`` is the version of the last event the first answer wrote
    and ``first_cause`` its ``k`` (0 and the first entry's cause while a
    window answer is held for its window). Rationed as refusals are."""

    command_id: str
    actor: str
    command_type: str
    first_version: int
    first_cause: str
    reason: str


class CommandsDropped(Event):
    """A seat's refused commands that were not recorded one by one: a seat
    gets ``REJECTION_BURST`` refusals in a burst, then one a second (the
    live runtime's bound on what a client can make the log hold); the rest
    are counted here, up to its inbox entry ``last_inbox_id``."""

    seat: str
    count: int
    last_inbox_id: str
    reason: str


class EncounterEnded(Event):
    winner: str | None
    reason: str
    by: str = ""  # "gm" when the GM ended it


class TurnTimedOut(Event):
    """A human's turn timer ran out; ``then`` is what the engine did: "end_turn"
    (the turn ends), "ai" (the AI plays the rest of the turn) or "gm" (the GM
    is asked: a GM call ``time-up``; the player may still play meanwhile)."""

    round: int
    combatant: str
    then: str


class WindowTimedOut(Event):
    """A reaction window's deadline ran out while ``waiting`` had not answered
    and their seats chose to have the GM asked (setting ``on_timeout``): the
    window stays open (a late answer still counts) until the GM closes it
    (the GM call ``time-up``). Those whose seats chose otherwise were answered
    for first (passed, or by the AI)."""

    window: int
    waiting: list[str]
    then: str = "gm"


class GMAdjusted(Event):
    """The GM changed a combatant's state: ``changes`` maps each field to its
    new value (generic: position, conditions, out_of_fight; and the system's
    own: vitality, wounds, ammo...). Shown with its reason in audit and replay."""

    combatant: str
    changes: dict[str, Any]
    reason: str


class GMRuled(Event):
    """The GM settled something the rules leave to the GM (a complication, a
    Setback, a consequence, whether a dive is physically possible...)."""

    call: str  # the id of the pending call it settles ("" for a ruling of the GM's own)
    ruling: str
    reason: str = ""
    combatant: str = ""


class EncounterRewound(Event, omit_defaults=True):
    """The GM took the encounter back to how it stood at log version
    ``to_version``. The log stays append-only: what came after stays in it
    (replay and audit show that branch) and ``state`` is the state at
    ``to_version`` (so every fold restores it without refolding). Dice after a
    rewind are drawn at the branch position ``branch_version``: the same dice the
    first branch met there, so a rewind cannot fish for rolls."""

    to_version: int
    from_version: int
    branch_version: int
    reason: str
    state: dict[str, Any]
    # The reaction windows open on the abandoned branch when it was left (the
    # running one and those it suspended): closed by the rewind, their held
    # answers dropped. A window open in ``state`` is open again, from the rewind
    # (and not listed). omit_defaults: a rewind that closes none is written as before.
    closed_windows: list[int] = []


class SeedRevealed(Event):
    seed: str  # hex


# --------------------------------------------------------------------------- commands


class Command(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag=True):
    """Base of every command. ``actor`` is the combatant ID issuing it, "gm"
    for the GM's commands, or "sequencer" for the engine's own housekeeping;
    ``command_id`` makes a retried command apply once (per seat).

    ``authority`` says who may send a command type: "combatant" (the seat
    controlling ``actor``), "gm" (the GM seat only, actor "gm") or "engine"
    (the engine alone)."""

    authority: ClassVar[str] = "combatant"

    command_id: str
    actor: str


class StartEncounter(Command, omit_defaults=True):
    authority: ClassVar[str] = "engine"

    setup: EncounterSetup
    seed_commitment: str
    reproducible_dice: bool = False  # see EncounterStarted
    log_public_key: str = ""  # see EncounterStarted
    # The client seeds the player seats added in the lobby (docs/fairness.md
    # section 3), [seat, client seed] in seat order: filled in by the engine
    # from the lobby when it takes the start up, never queued with it. The
    # start records each as a ClientSeedAdded right after EncounterStarted,
    # before the opening initiative, whose dice mix them in.
    client_seeds: list[tuple[str, str]] = []


class EndTurn(Command):
    pass


class ClaimReaction(Command):
    """Claim a reaction the open window offers this combatant. ``options``
    depends on ``reaction``: each rule system types it per reaction
    (``reaction_options_types``; the schema of commands says which with
    if/then on ``reaction``); a reaction that takes none takes ``{}``."""

    window: int
    reaction: str
    options: dict[str, Any] = {}


class ReactionOptions(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Base of the ``options`` a ClaimReaction carries for one reaction (each
    system's own subclasses). Unknown fields are refused."""


class NoReactionOptions(ReactionOptions):
    """A reaction that takes no options: ``{}``."""


class PassReaction(Command):
    window: int


class CloseReactionWindow(Command):
    """Sent by the sequencer when a window's deadline passes."""

    authority: ClassVar[str] = "engine"

    window: int


class EndEncounter(Command):
    authority: ClassVar[str] = "gm"

    reason: str = "ended by the GM"
    winner: str | None = None  # a side, or none


class GMAdjust(Command):
    """Change a combatant's state: e.g. {"vitality": 7}, {"position": [3, 4]},
    {"conditions": {"add": ["pinned"], "remove": ["aiming"]}}, {"out_of_fight": true}.
    Which fields a system accepts: see its docs page, or the rejection."""

    authority: ClassVar[str] = "gm"

    combatant: str
    changes: dict[str, Any]
    reason: str


class GMSkipTurn(Command):
    """End the active combatant's turn now (a stalled player...). Answered by
    GMRuled (the skip, with the reason) then TurnEnded and the next TurnStarted;
    while a reaction window is open it closes that window instead: GMRuled, then
    the window's closing (its silent reactors pass). TurnSkipped is not used for it."""

    authority: ClassVar[str] = "gm"

    reason: str


class GMRule(Command):
    """Settle a call the rules leave to the GM (``call``: its id from the GM's
    options, or "" for a ruling of the GM's own)."""

    authority: ClassVar[str] = "gm"

    ruling: str
    call: str = ""
    reason: str = ""


class RewindEncounter(Command):
    """Take the encounter back to log version ``to_version`` (see EncounterRewound)."""

    authority: ClassVar[str] = "gm"

    to_version: int
    reason: str


class RestoreState(Command):
    """The engine's own second half of a rewind: the sequencer has checked the
    GM's RewindEncounter and folded the log to ``to_version``; ``state`` is the
    state there."""

    authority: ClassVar[str] = "engine"

    to_version: int
    from_version: int
    reason: str
    state: dict[str, Any]


class AddClientSeed(Command):
    """A player seat adds its own seed to the dice (docs/fairness.md). The
    ``actor`` is the sending seat's own id: the engine checks it against the
    channel the command came on. One per seat; any text of 1 to 64
    characters (the page offers a random one)."""

    authority: ClassVar[str] = "seat"

    client_seed: str


class TimeOutTurn(Command):
    """Sent by the sequencer when a human's turn timer runs out. ``then``: what
    a seat's standing order says to do ("end_turn", "ai", "gm"); "" for the
    settings' choice."""

    authority: ClassVar[str] = "engine"

    combatant: str
    then: str = ""


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
    CommandsDropped,
    EncounterEnded,
    SeedRevealed,
    TurnTimedOut,
    WindowTimedOut,
    GMAdjusted,
    GMRuled,
    EncounterRewound,
    CommandRepeated,
    ClientSeedAdded,
)

GENERIC_COMMANDS: tuple[type[Command], ...] = (
    StartEncounter,
    EndTurn,
    ClaimReaction,
    PassReaction,
    CloseReactionWindow,
    EndEncounter,
    GMAdjust,
    GMSkipTurn,
    GMRule,
    RewindEncounter,
    RestoreState,
    TimeOutTurn,
    AddClientSeed,
)
