"""The rule-system protocol and the machinery every system shares.

A rule system is pure: ``decide(state, command, dice) -> events`` validates a
command against the state and says what happened (rolling only through the
injected dice); ``evolve(state, event) -> state`` applies one event and never
rolls or validates. Both are deterministic, so a log replays to the same state.

`BaseRuleSystem` implements the parts that are the same in every system:
starting an encounter, rounds and turn order, skipping combatants who cannot
act, reaction windows (claims, passes, deadline, priority order, re-validation),
ending the encounter, and rejecting bad commands with a reason. A system fills
in the hooks (initiative, its own actions, which reactions a trigger offers,
how a reaction resolves, what happens after a window) and its AI choices.

``evolve`` mutates the state it is given and returns it; callers that need the
previous state keep a copy (`copy_state`). ``decide`` never mutates its input.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
import math
from typing import Any, ClassVar, NamedTuple, Protocol

import msgspec

from firelane.engine import branches
from firelane.engine.dice import MAX_CLIENT_SEED_CHARS, Dice
from firelane.engine.gm_fields import GROUPS, FieldSpec, describe, value_problem
from firelane.engine.reactions import order_claims
# SEQUENCER (the engine's own actor) and GM (the GM's) are defined with the
# seats, which decide who may use them; re-exported here for the systems.
from firelane.engine.seats import ENGINE_SEAT, GM, RESERVED_ACTORS, SEQUENCER, default_seats, seat_by_id
from firelane.events import codec
from firelane.events.envelope import NewEntry
from firelane.events.limits import bounded
from firelane.events.options_schemas import (
    ActionOption,
    ClientSeedOffer,
    AreaPreview,
    AttackOption,
    Choice,
    CombatantOptions,
    GMCall,
    GMField,
    GMFieldChoice,
    GMOptions,
    MoveOption,
    ReactionOption,
    SeatOptions,
    Untargetable,
    Waiting,
    WindowOptions,
)
from firelane.engine.grid import Grid, Square, distance
from firelane.engine.state import Claim, Combatant, EncounterState, ReactionWindow, copy_state
from firelane.engine.occupancy import taken_squares
from firelane.engine.orders import OrderCatalogue
from firelane.engine.timeouts import (
    AI_PLAYS_THE_TURN,
    CLOSE_THE_WINDOW,
    END_THE_TURN,
    MAX_DEADLINE_MS,
    TIME_UP_CALL,
    TURN_TIMEOUTS,
    SettingsError,
    normalise_timing,
    turn_timeout,
    window_timeout,
)
from firelane.engine.labels import Labels
from firelane.engine.wording import combatant_names, plain_words, with_names, worded_options
from firelane.engine.wording import OptionalSentence, Sentence
from firelane.events.schemas import (
    ActionTaken,
    ClaimReaction,
    CloseReactionWindow,
    CombatantDown,
    CombatantSetup,
    Command,
    CommandRejected,
    CommandsDropped,
    ConditionApplied,
    ConditionRemoved,
    Die,
    EligibleReactor,
    EncounterEnded,
    EncounterSetup,
    EncounterStarted,
    EncounterRewound,
    EndEncounter,
    EndTurn,
    Event,
    GMAdjust,
    GMAdjusted,
    GMRule,
    GMRuled,
    GMSkipTurn,
    InitiativeRolled,
    Moved,
    OrderedClaim,
    PassReaction,
    ReactionClaimed,
    ReactionDenied,
    ReactionPassed,
    ReactionsOrdered,
    ReactionWindowClosed,
    ReactionOptions,
    ReactionWindowOpened,
    ReactionWindowResumed,
    RestoreState,
    RewindEncounter,
    RoundStarted,
    SeedRevealed,
    ClientSeedAdded,
    AddClientSeed,
    StartEncounter,
    TimeOutTurn,
    TurnEnded,
    TurnSkipped,
    TurnStarted,
    TurnTimedOut,
    WindowTimedOut,
)



class SettingRange(NamedTuple):
    """What a numeric setting may be: from ``low`` to ``high``, a whole number
    unless ``whole`` is False, null only if ``nullable``."""

    low: float
    high: float
    whole: bool = True
    nullable: bool = False


# The settings every system has (`BaseRuleSystem.base_settings`). Thirty days
# bound every wait (a play-by-post table waits days): a deadline the engine
# keeps on its clock, not a way to turn it off.
DAY_MS = 86_400_000
BASE_SETTING_RANGES: dict[str, SettingRange] = {
    "max_rounds": SettingRange(1, 10_000),
    "reaction_deadline_ms": SettingRange(1, MAX_DEADLINE_MS),
    "turn_timer_ms": SettingRange(0, MAX_DEADLINE_MS),  # 0: no turn timer
}


def _plain(number: float) -> str:
    return f"{int(number):,}" if math.isfinite(number) and number == int(number) else f"{number:g}"


def setting_problem(name: str, value: Any, ranges: dict[str, SettingRange]) -> str | None:
    """Why setting ``name`` = ``value`` is out of its range, or None. Settings
    nest (tables of numbers): ``ranges`` names every number by its path, with
    ``*`` for any key of a table or item of a list ("cover_bonus.*",
    "called_shots.*.modifier")."""

    def walk(value: Any, pattern: str, path: str) -> str | None:
        bounds = ranges.get(pattern)
        if isinstance(value, dict):
            for key, item in value.items():
                named = f"{pattern}.{key}"  # a field of a record ("called_shots.*.modifier"), else any key
                known = named in ranges or any(r.startswith(f"{named}.") for r in ranges)
                problem = walk(item, named if known else f"{pattern}.*", f"{path}.{key}")
                if problem:
                    return problem
        elif isinstance(value, list):
            for index, item in enumerate(value):
                problem = walk(item, f"{pattern}.*", f"{path}[{index}]")
                if problem:
                    return problem
        if bounds is None:
            return None
        low, high, whole, nullable = bounds
        span = f"from {_plain(low)} to {_plain(high)}"
        number = f"a whole number {span}" if whole else f"a number {span}"
        if value is None and nullable:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            given = msgspec.json.encode(value).decode()[:40] if isinstance(value, (bool, str, type(None))) else type(value).__name__
            return f"settings.{path}: must be {number}{' (or null)' if nullable else ''}, not {given}"
        if not math.isfinite(value) or not low <= value <= high or (whole and value != int(value)):
            return f"settings.{path}: must be {number}, not {_plain(value)}"
        return None

    return walk(value, name, name)


class Rejected(Exception):
    """A command is not allowed; the message is the reason shown to its sender."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Awaiting(msgspec.Struct, frozen=True, kw_only=True):
    """Who the encounter is waiting for."""

    kind: str  # "start", "turn", "reactions", "ended"
    combatants: list[str] = []
    window: int | None = None
    deadline_ms: int | None = None


class RuleSystem(Protocol):
    name: str
    title: str
    command_types: tuple[type[Command], ...]
    event_types: tuple[type[Event], ...]
    state_type: type[EncounterState]

    def initial_state(self) -> EncounterState: ...

    def decide(self, state: EncounterState, command: Command, dice: Dice) -> list[Event]: ...

    def evolve(self, state: EncounterState, event: Event) -> EncounterState: ...

    def awaiting(self, state: EncounterState) -> Awaiting: ...

    def choose_command(self, state: EncounterState, combatant: str) -> Command | None: ...


class Decision:
    """Collects the events of one decision, applying each to the state so
    later steps of the same decision see the state earlier ones produced: a
    scratch copy (``decide``: the input is left alone), or the state itself
    (``apply``: no copy, for the engine's own commands; see there).

    Each event is passed through the codec first, so the decision, the live
    state and a replay all see exactly what the log holds (a tuple inside a
    free-form dict comes back from JSON as a list, for one); the encoded
    entries are kept for the log, so an event is encoded once.
    """

    def __init__(self, system: BaseRuleSystem, state: EncounterState, *, in_place: bool = False) -> None:
        self.system = system
        self.state = state if in_place else copy_state(state)
        self.events: list[Event] = []
        self.entries: list[NewEntry] = []
        # (window, next claim index) while a window's claims are being resolved,
        # so a window opened meanwhile is recorded as nested in it.
        self.resolving: tuple[int, int] | None = None

    def emit(self, event: Event) -> Event:
        entry = codec.encode_event(event)
        event = codec.decode_body(entry.type, entry.schema, entry.data)
        self.events.append(event)
        self.entries.append(entry)
        self.system.evolve(self.state, event)
        return event


class ChecksPassed(Exception):
    """Raised by a `CheckingDecision` at a decision's first event or die: every
    check the decision makes before changing anything has passed."""


class CheckingDecision(Decision):
    """A decision that only runs a command's checks, on the state itself (no
    copy): it stops at the first event, before anything is changed. A
    system's ``decide`` changes its decision's state only through ``emit``
    (the event-sourcing rule: the state is what the events fold to), so the
    state is left exactly as it was."""

    def __init__(self, system: BaseRuleSystem, state: EncounterState) -> None:
        super().__init__(system, state, in_place=True)

    def emit(self, event: Event) -> Event:
        raise ChecksPassed


class _CheckingDice(Dice):
    def roll(self, sides: int) -> Die:
        raise ChecksPassed


class Applied(msgspec.Struct, kw_only=True):
    """What `BaseRuleSystem.apply` did: the events (or the one rejection), their
    encoded log entries, the state after them, and whether a rejection came
    after events had already changed the state in place (``spoiled``: rebuild
    it from the log)."""

    events: list[Event]
    entries: list[NewEntry]
    state: EncounterState
    rejected: bool = False
    spoiled: bool = False


class TurnOptions(msgspec.Struct, kw_only=True):
    """A system's answer to `turn_options`."""

    moves: list[MoveOption] = []
    attacks: list[AttackOption] = []
    actions: list[ActionOption] = []


_field_types: dict[type, dict[str, Any]] = {}


def field_types(struct_type: type) -> dict[str, Any]:
    """A Struct type's fields and their types (looked up once per type: the
    GM's adjustments are applied on every fold)."""
    types = _field_types.get(struct_type)
    if types is None:
        types = _field_types[struct_type] = {f.name: f.type for f in msgspec.structs.fields(struct_type)}
    return types


def resting_points(batch_command_ids: list[str]) -> set[int]:
    """The versions between commands, from the command id of each log entry in
    order (a batch is a run of entries with one id; an entry without one is a
    batch of its own): where a rewind may take an encounter back to."""
    points = set()
    for version, command_id in enumerate(batch_command_ids, start=1):
        following = batch_command_ids[version] if version < len(batch_command_ids) else None
        if not command_id or following != command_id:
            points.add(version)
    return points


def resting_points_of(entries: list[tuple[int, str]]) -> set[int]:
    """`resting_points` of a stretch of the log: (version, command id) of
    consecutive entries; the last entry counts as one (nothing follows it yet)."""
    points = set()
    for index, (version, command_id) in enumerate(entries):
        following = entries[index + 1][1] if index + 1 < len(entries) else None
        if not command_id or following != command_id:
            points.add(version)
    return points


def command_json(command: Command) -> dict[str, Any]:
    """A command as an option shows it: its JSON without ``command_id`` (the sender adds one)."""
    body = msgspec.to_builtins(command)
    body.pop("command_id", None)
    return body


def client_seed_offer(state: EncounterState | None, seat_id: str) -> ClientSeedOffer | None:
    """AddClientSeed for a player seat that has added none yet, while the
    fight runs or waits in its lobby (``state`` None); None once it has, or
    the fight has ended (docs/fairness.md section 3)."""
    if state is not None and (state.ended or any(seat == seat_id for seat, _text in state.client_seeds)):
        return None
    return ClientSeedOffer(command=command_json(AddClientSeed(command_id="", actor=seat_id, client_seed="")),
                           max_chars=MAX_CLIENT_SEED_CHARS)


def client_seed_problem(state: EncounterState, seat_id: str, text: str) -> str | None:
    """Why ``seat_id`` may not add ``text`` as its client seed now, or None."""
    seat = next((s for s in state.seats if s.id == seat_id), None)
    if seat is None or seat.role != "player":
        return f"only a player seat adds a client seed, not {seat_id[:64]!r}"
    if any(added == seat_id for added, _seed in state.client_seeds):
        return "this seat has added its client seed already (one each)"
    if not (1 <= len(text) <= MAX_CLIENT_SEED_CHARS and text.isprintable()):
        return f"a client seed is 1 to {MAX_CLIENT_SEED_CHARS} printable characters"
    return None


def require(condition: bool, reason: str) -> None:
    if not condition:
        raise Rejected(reason)


class BaseRuleSystem:
    """Shared turn, round and reaction-window machinery; see the module doc."""

    name: ClassVar[str] = ""
    title: ClassVar[str] = ""
    command_types: ClassVar[tuple[type[Command], ...]] = ()
    event_types: ClassVar[tuple[type[Event], ...]] = ()
    state_type: ClassVar[type[EncounterState]] = EncounterState
    combatant_type: ClassVar[type[Combatant]] = Combatant
    # Lower numbers resolve first when several reactions claim one window.
    reaction_priority: ClassVar[dict[str, int]] = {}
    # What a ClaimReaction's ``options`` carry, per reaction (a ReactionOptions
    # struct: NoReactionOptions for none). Claims are checked against it before
    # the rules see them; a reaction left out here (a plugin's) is not checked.
    reaction_options_types: ClassVar[Mapping[str, type[ReactionOptions]]] = {}
    # "own_turn": a combatant regains its reaction when its turn starts;
    # "round": everyone regains it when a round starts.
    reaction_resets: ClassVar[str] = "own_turn"
    initiative_each_round: ClassVar[bool] = False
    default_settings: ClassVar[dict[str, Any]] = {}
    base_settings: ClassVar[dict[str, Any]] = {
        "max_rounds": 30,
        "reaction_deadline_ms": 30_000,
        # A human's turn timer (0: none); when it runs out the turn ends
        # ("end_turn"), the AI plays the rest of it ("ai") or the GM is asked
        # ("gm"); per seat, "on_timeout" chooses for its turns and windows.
        # The durations take human units too ("24h"): engine/timeouts.py.
        "turn_timer_ms": 0,
        "on_turn_timeout": "end_turn",
        "on_timeout": {},
    }
    # The range of every numeric setting of the system's own (see `SettingRange`,
    # `setting_problem`); the base settings' are BASE_SETTING_RANGES. A test
    # checks that every number among a system's settings has one.
    setting_ranges: ClassVar[dict[str, SettingRange]] = {}
    # Area commands of the options (by type tag) whose template `preview_area` draws.
    previewable: ClassVar[frozenset[str]] = frozenset()
    # The narration's sentences for the system's own events (tag -> sentence),
    # and for shared events it fills with its own details (a sentence may
    # return None to leave one to the shared sentence). See engine/wording.py.
    sentences: ClassVar[Mapping[str, Sentence]] = {}
    shared_event_sentences: ClassVar[Mapping[str, OptionalSentence]] = {}
    # Its words for people: reactions, actions, conditions, fields (engine/labels.py).
    labels: ClassVar[Labels] = Labels()
    # The standing orders it takes: its window kinds and turn actions (each system's orders.py).
    orders: ClassVar[OrderCatalogue] = OrderCatalogue()
    # Combatant fields the GM may never set with GMAdjust (identity and bookkeeping).
    gm_fixed_fields: ClassVar[frozenset[str]] = frozenset({"id", "name", "side", "policy", "initiative", "reaction_used"})

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # A system's own events must decode wherever the system is used.
        codec.register_events(cls.event_types)

    # ------------------------------------------------------------ protocol

    def initial_state(self) -> EncounterState:
        return self.state_type()

    def settings_for(self, setup: EncounterSetup) -> dict[str, Any]:
        try:
            given = normalise_timing(setup.settings, [seat.id for seat in default_seats(setup)])
        except SettingsError as exc:
            raise Rejected(str(exc)) from None
        unknown = set(given) - set(self.default_settings) - set(self.base_settings)
        if unknown:
            raise Rejected(
                f"unknown settings for {self.name}: {', '.join(sorted(unknown))}; "
                f"known: {', '.join(sorted(set(self.default_settings) | set(self.base_settings)))}"
            )
        merged = {**self.base_settings, **self.default_settings}
        for key, value in given.items():
            # A dict-valued setting (e.g. a table of options) is merged one
            # level down, so a table can switch one option and keep the rest.
            if isinstance(value, dict) and isinstance(merged.get(key), dict):
                merged[key] = {**merged[key], **value}
            else:
                merged[key] = value
        ranges = {**BASE_SETTING_RANGES, **self.setting_ranges}
        for key in given:
            problem = setting_problem(key, merged[key], ranges)
            if problem:
                raise Rejected(problem)
        return merged

    def decide(self, state: EncounterState, command: Command, dice: Dice) -> list[Event]:
        """Validate and decide; raises `Rejected` with a reason (see `decide_or_reject`)."""
        decision = Decision(self, state)
        self._handle(decision, command, dice)
        return decision.events

    def accepts(self, state: EncounterState, command: Command) -> bool:
        """Whether ``decide`` would accept ``command`` in ``state``, judged by
        the checks it makes before its first die or event (a system's checks
        come first), on the state itself: nothing is copied, rolled or changed."""
        try:
            self._handle(CheckingDecision(self, state), command, _CheckingDice())
        except Rejected:
            return False
        except ChecksPassed:
            return True
        return True

    def decide_or_reject(self, state: EncounterState, command: Command, dice: Dice) -> list[Event]:
        try:
            return self.decide(state, command, dice)
        except Rejected as rejection:
            return [reject(command, rejection.reason)]

    def apply(self, state: EncounterState, command: Command, dice: Dice, *, in_place: bool = False) -> Applied:
        """Decide and evolve at once, with the encoded entries for the log.

        ``in_place``: decide on ``state`` itself instead of a copy, so nothing
        is copied (the engine's own AI commands, which are almost never
        refused). A refusal before any event leaves the state as it was (but
        for the rejection count); one after events have been applied spoils it,
        and the caller rebuilds it from its log. Without ``in_place`` the
        input is untouched and ``Applied.state`` is a new state.
        """
        decision = Decision(self, state, in_place=in_place)
        try:
            self._handle(decision, command, dice)
        except Rejected as rejection:
            spoiled = in_place and bool(decision.events)
            rejected = reject(command, rejection.reason)
            entry = codec.encode_event(rejected)
            # The state as it was (a copy is clean unless events were applied to it), plus the rejection.
            after = decision.state if in_place or not decision.events else copy_state(state)
            if not spoiled:
                self.evolve(after, rejected)
            return Applied(events=[rejected], entries=[entry], state=after, rejected=True, spoiled=spoiled)
        return Applied(events=decision.events, entries=decision.entries, state=decision.state)

    def evolve(self, state: EncounterState, event: Event) -> EncounterState:
        state.version += 1
        state.branch_version += 1
        handler = _GENERIC_EVOLVERS.get(type(event))
        if handler is not None:
            handler(self, state, event)
        self.evolve_event(state, event)
        return state

    def evolve_reads(self, event_type: type[Event]) -> bool:
        """Whether ``evolve`` reads events of this type at all; when it does
        not, ``evolve_without_reading`` gives the same state without the event
        (a fold over a long log then need not decode its body)."""
        return self.evolver(event_type) is not None

    def evolver(self, event_type: type[Event]) -> Callable[[EncounterState, Event], None] | None:
        """``evolve`` for the events of one type, with its lookups done once (a
        fold over a long log calls it for every event); None when evolve does
        not read that type (see ``evolve_reads``)."""
        if type(self).evolve is not BaseRuleSystem.evolve:
            evolve = self.evolve  # a system with an evolve of its own: nothing can be skipped
            return lambda state, event: evolve(state, event) and None
        generic = _GENERIC_EVOLVERS.get(event_type)
        own = self.evolve_event if self.evolve_event_reads(event_type) else None
        if generic is None and own is None:
            return None
        system = self

        def evolve_type(state: EncounterState, event: Event) -> None:
            state.version += 1
            state.branch_version += 1
            if generic is not None:
                generic(system, state, event)
            if own is not None:
                own(state, event)
        return evolve_type

    def evolve_without_reading(self, state: EncounterState) -> None:
        """``evolve`` for an event of a type it does not read (see ``evolve_reads``)."""
        state.version += 1
        state.branch_version += 1

    def evolve_event_reads(self, event_type: type[Event]) -> bool:
        """Whether ``evolve_event`` does anything with events of this type. A
        system that says no for a type must really ignore it (it is tested);
        the default, yes, is always right."""
        return True

    def awaiting(self, state: EncounterState) -> Awaiting:
        if not state.started:
            return Awaiting(kind="start")
        if state.ended:
            return Awaiting(kind="ended")
        if state.window is not None:
            return Awaiting(
                kind="reactions",
                combatants=state.window.unanswered(),
                window=state.window.window,
                deadline_ms=state.window.deadline_ms,
            )
        if state.active is not None:
            return Awaiting(kind="turn", combatants=[state.active])
        return Awaiting(kind="ended")

    # ------------------------------------------------------------ hooks for systems

    def resolve_setup(self, setup: EncounterSetup) -> EncounterSetup:
        """Make a setup self-contained as the encounter starts: a system whose
        sheets may name catalogue entries (weapons, armour) inlines the full
        records here, and EncounterStarted carries the result, so the log never
        depends on a data file that may change. Raise Rejected on unknown names;
        must be idempotent. (The catalogue is static data shipped in the package.)"""
        return setup

    def build_combatant(self, setup: CombatantSetup, settings: dict[str, Any]) -> Combatant:
        """Turn a setup's sheet into typed state; raise Rejected on a bad sheet."""
        try:
            return msgspec.convert(
                {**setup.sheet, "id": setup.id, "name": setup.name, "side": setup.side,
                 "position": setup.position, "policy": setup.policy},
                self.combatant_type,
            )
        except msgspec.ValidationError as exc:
            raise Rejected(f"combatant {setup.id!r} has an invalid sheet: {exc}") from None

    def roll_initiative(self, decision: Decision, dice: Dice) -> InitiativeRolled:
        """Every system decides its own initiative (there is no neutral default)."""
        raise NotImplementedError(f"{type(self).__name__} must implement roll_initiative")

    def on_round_start(self, decision: Decision, dice: Dice) -> None:
        """Effects at the start of a round (after RoundStarted, before initiative)."""

    def on_turn_start(self, decision: Decision, combatant: str, dice: Dice) -> None:
        """Effects at the start of a combatant's turn (expiring conditions...)."""

    def on_turn_end(self, decision: Decision, combatant: str, dice: Dice) -> None:
        """Effects at the end of a combatant's turn (before TurnEnded)."""

    def cannot_act_reason(self, state: EncounterState, combatant: Combatant) -> str | None:
        """Why this combatant loses its turn, or None if it acts."""
        if combatant.out_of_fight:
            return "out of the fight"
        return None

    def decide_action(self, decision: Decision, command: Command, dice: Dice) -> None:
        raise Rejected(f"{type(command).__name__} is not a {self.title} command")

    def check_reaction_options(self, claim: ClaimReaction) -> None:
        """Refuse, in one line, a claim whose ``options`` are not of its
        reaction's type (`reaction_options_types`): an unknown field, a wrong type."""
        kind = self.reaction_options_types.get(claim.reaction)
        if kind is None:
            return
        try:
            msgspec.convert(claim.options, kind)
        except msgspec.ValidationError as exc:
            fields = ", ".join(kind.__struct_fields__) or "none: send {}"
            where = str(exc).replace("`$.", "`options.").replace("`$`", "`options`")
            raise Rejected(f"the options of {claim.reaction}: {where} (it takes {fields})") from None

    def validate_claim(self, state: EncounterState, window: ReactionWindow, claim: ClaimReaction) -> None:
        """Check a claim's options when it is made; raise Rejected if they are wrong."""

    def resolve_reaction(
        self, decision: Decision, window: ReactionWindow, claim: OrderedClaim, dice: Dice
    ) -> str | None:
        """Carry out one ordered claim against the current state; return a reason to deny it."""
        return "this rule system has no reactions"

    def after_window(self, decision: Decision, window: ReactionWindow, dice: Dice) -> None:
        """Continue what the window interrupted (the rest of a move, the attack)."""

    def evolve_event(self, state: EncounterState, event: Event) -> None:
        """System-specific effects of an event (after the generic bookkeeping)."""

    def choose_command(self, state: EncounterState, combatant: str) -> Command | None:
        """The AI's next command for this combatant, or None when it has nothing to say."""
        return None

    def turn_options(self, state: EncounterState, combatant: str) -> TurnOptions:
        """What ``combatant`` may do on its turn (it is active, no window is open):
        every legal move, attack and other action, each with its command."""
        return TurnOptions()

    def reaction_options(self, state: EncounterState, window: ReactionWindow, combatant: str) -> list[ReactionOption]:
        """How ``combatant`` may answer the open window. The default offers each
        listed reaction with no options; a system whose claims take options
        (a square, a choice) lists every legal one."""
        reactor = window.eligible(combatant)
        return [
            ReactionOption(reaction=reaction, label=reaction.replace("_", " "), choices=[Choice(
                label=reaction.replace("_", " "),
                command=command_json(ClaimReaction(command_id="", actor=combatant, window=window.window, reaction=reaction)))])
            for reaction in (reactor.reactions if reactor is not None else [])
        ]

    def preview_area(self, state: EncounterState, command: Command) -> AreaPreview:
        """The squares an area command (one of `previewable`) would cover in
        ``state`` and who it would catch, from the rules the command itself
        uses; decides nothing, rolls nothing, leaves ``state`` as it is. Raise
        Rejected when the command could not be taken now."""
        raise Rejected(f"{self.name} previews no {type(command).__name__}")

    def health(self, combatant: Combatant) -> dict[str, Any] | None:
        """What a token shows of a combatant's health: ``{"value", "max",
        "label"}`` (e.g. vitality 7 of 12), or None. This reads the common
        fields (``vitality``/``max_vitality``, ``hp``/``max_hp``,
        ``wounds``/``max_wounds``); a system whose health is told otherwise
        overrides it."""
        for now, most, label in _HEALTH_FIELDS:
            if hasattr(combatant, now) and hasattr(combatant, most):
                value, top = int(getattr(combatant, now)), int(getattr(combatant, most) or getattr(combatant, now))
                return {"value": value, "max": max(top, 1), "label": label}
        return None

    def range_bands(self, state: EncounterState) -> list[dict[str, Any]]:
        """Distance bands the table draws around a focused combatant: ``{"name",
        "metres", "squares"}`` each (Chebyshev radii); none unless the rules
        count ranges in bands."""
        return []

    def check_gm_change(self, state: EncounterState, combatant: Combatant, field: str, value: Any) -> None:
        """Raise Rejected if the GM may not set this system field to ``value``
        (the type is already checked; a system adds its ranges)."""

    def gm_calls(self, state: EncounterState) -> dict[str, str]:
        """Calls the rules leave to the GM that wait for a ruling: id -> what to settle."""
        return {}

    def gm_call_rulings(self, state: EncounterState, call: str) -> dict[str, Any]:
        """The rulings a pending call takes, for its `GMCall`: ``{"rulings":
        [...], "free_text": bool}`` (see there). The default: any words."""
        return {"rulings": [], "free_text": True}

    def settle_gm_call(self, decision: Decision, call: str, ruling: str, dice: Dice) -> None:
        """Carry out a GM ruling on a pending call (after GMRuled is recorded)."""

    def pending_gm_calls(self, state: EncounterState) -> dict[str, str]:
        """Every call waiting for the GM: a deadline whose seat chose to ask
        the GM (``time-up``, engine/timeouts.py), then the rule system's."""
        calls: dict[str, str] = {}
        if state.time_up == "turn" and state.active is not None:
            name = state.combatants[state.active].name or state.active
            calls[TIME_UP_CALL] = f"{name}'s turn ran out of time: end it, or let the AI play it"
        elif state.time_up.startswith("window-") and state.window is not None:
            names = ", ".join(state.combatants[c].name or c for c in state.window.unanswered())
            calls[TIME_UP_CALL] = (f"reaction window {state.window.window} ran out of time waiting for {names}: "
                                   f"close it when you rule (a late answer still counts)")
        return {**calls, **self.gm_calls(state)}

    def _call_rulings(self, state: EncounterState, call: str) -> dict[str, Any]:
        if call == TIME_UP_CALL:
            rulings = [END_THE_TURN, AI_PLAYS_THE_TURN] if state.time_up == "turn" else [CLOSE_THE_WINDOW]
            return {"rulings": rulings, "free_text": False}
        return self.gm_call_rulings(state, call)

    # ------------------------------------------------------------ what a seat may do now

    def options(self, state: EncounterState, seat_id: str) -> SeatOptions:
        """Everything ``seat_id`` may do in ``state``: for each combatant it
        controls, its moves, attacks, actions or window answers (each with the
        command to send); for the GM seat, the GM's commands and pending calls."""
        awaiting = self.awaiting(state)
        waiting = Waiting(kind=awaiting.kind, combatants=awaiting.combatants, window=awaiting.window,
                          deadline_ms=awaiting.deadline_ms if awaiting.window is not None else state.turn_deadline_ms)
        if seat_id == ENGINE_SEAT:
            role, controlled = "engine", [cid for cid, c in state.combatants.items() if c.policy == "ai"]
        else:
            seat = seat_by_id(state.seats, seat_id)
            if seat is None:
                raise Rejected(f"unknown seat {seat_id[:64]!r}")
            role, controlled = seat.role, list(seat.combatants)
        combatants = [self.combatant_options(state, cid) for cid in controlled if cid in state.combatants]
        gm = self.gm_options(state) if role == "gm" else None
        return SeatOptions(seat=seat_id, role=role, version=state.version, waiting=waiting, combatants=combatants, gm=gm,
                           client_seed=client_seed_offer(state, seat_id) if role == "player" else None)

    def combatant_options(self, state: EncounterState, combatant_id: str) -> CombatantOptions:
        """What one combatant may do now, with everything a person reads in words (engine/wording.py)."""
        return worded_options(self._combatant_options(state, combatant_id), state, self.labels)

    def _combatant_options(self, state: EncounterState, combatant_id: str) -> CombatantOptions:
        combatant = state.combatants[combatant_id]
        if not state.started:
            return CombatantOptions(combatant=combatant_id, why_not="the encounter has not started")
        if state.ended:
            return CombatantOptions(combatant=combatant_id, why_not=f"the encounter has ended ({state.end_reason})")
        window = state.window
        if window is not None:
            if combatant_id in window.unanswered():
                return CombatantOptions(combatant=combatant_id, window=WindowOptions(
                    window=window.window, trigger=window.trigger, actor=window.actor, deadline_ms=window.deadline_ms,
                    awaited=window.unanswered(), reactions=self.reaction_options(state, window, combatant_id),
                    pass_command=command_json(PassReaction(command_id="", actor=combatant_id, window=window.window))))
            return CombatantOptions(combatant=combatant_id, why_not=(
                f"reaction window {window.window} waits for {', '.join(window.unanswered())}"))
        if combatant.out_of_fight:
            return CombatantOptions(combatant=combatant_id, why_not="out of the fight")
        if state.active != combatant_id:
            return CombatantOptions(combatant=combatant_id, why_not=f"not its turn (active: {state.active or 'none'})")
        turn = self.turn_options(state, combatant_id)
        return CombatantOptions(
            combatant=combatant_id, its_turn=True, turn_deadline_ms=state.turn_deadline_ms,
            moves=turn.moves, attacks=turn.attacks, actions=turn.actions,
            end_turn=command_json(EndTurn(command_id="", actor=combatant_id)),
            untargetable=self.untargetable(state, combatant_id, turn.attacks))

    # ------------------------------------------------------------ why an enemy cannot be targeted (issue 19 item 10)

    def untargetable(self, state: EncounterState, combatant_id: str, attacks: list[AttackOption]) -> list[Untargetable]:
        """Each standing enemy no listed attack targets for which the map gives
        a reason, nearest first: a wall blocks the line (its square named), it
        is beyond the reach of every weapon the combatant carries
        (`attack_reach_squares`), or cover shields it that no attack passes
        (`blocking_cover`). An enemy passed over for another reason (the
        Action already spent, say) is not listed: that is the turn's, not the
        enemy's."""
        me = state.combatants[combatant_id]
        if me.position is None:
            return []
        here = (int(me.position[0]), int(me.position[1]))
        targeted = {a.target for a in attacks}
        enemies = sorted(
            (c for c in state.combatants.values()
             if c.side != me.side and not c.out_of_fight and c.position is not None and c.id not in targeted),
            key=lambda c: (distance(here, (int(c.position[0]), int(c.position[1]))), c.id))  # type: ignore[index]
        found = []
        for enemy in enemies:
            reason = self.untargetable_reason(state, me, enemy)
            if reason is not None:
                found.append(reason)
        return found

    def untargetable_reason(self, state: EncounterState, me: Combatant, enemy: Combatant) -> Untargetable | None:
        """Why ``me`` cannot target ``enemy`` from where it stands, or None (see `untargetable`)."""
        here = (int(me.position[0]), int(me.position[1]))  # type: ignore[index]
        there = (int(enemy.position[0]), int(enemy.position[1]))  # type: ignore[index]
        mine, theirs = me.name or me.id, enemy.name or enemy.id
        blocker = Grid(state.terrain).sight_blocker(here, there)
        if blocker is not None:
            return Untargetable(combatant=enemy.id, reason_code="no_line_of_sight", blocking_square=blocker,
                                words=f"{theirs}: the wall at ({blocker[0]}, {blocker[1]}) blocks {mine}'s line of sight")
        reach = self.attack_reach_squares(state, me)
        away = distance(here, there)
        if reach is not None and away > reach:
            size, unit = state.terrain.square_size, state.terrain.unit
            return Untargetable(combatant=enemy.id, reason_code="out_of_range",
                                words=f"{theirs}: {away} squares ({away * size:g} {unit}) away, beyond the reach of "
                                      f"{mine}'s weapons ({reach:g} square{'s' if reach != 1 else ''})")
        cover = self.blocking_cover(state, me, enemy)
        if cover is not None:
            level, square, rule = cover
            where = f" at ({square[0]}, {square[1]})" if square is not None else ""
            return Untargetable(combatant=enemy.id, reason_code="full_cover", blocking_square=square, rule=rule,
                                words=f"{theirs}: {level} cover{where} shields them from {mine}; no attack gets through")
        return None

    def attack_reach_squares(self, state: EncounterState, me: Combatant) -> float | None:
        """The farthest, in squares, any weapon ``me`` carries attacks; None: not known here."""
        return None

    def blocking_cover(self, state: EncounterState, me: Combatant, enemy: Combatant) -> tuple[str, Square | None, str] | None:
        """(level in words, the cover's square, rule) of cover that keeps ``me``
        from targeting ``enemy`` at all, or None (the system's own rule)."""
        return None

    def gm_options(self, state: EncounterState) -> GMOptions:
        if not state.started or state.ended:
            return GMOptions(commands=[])
        adjustable = {
            cid: sorted({"position", "conditions", "out_of_fight"}
                        | {f for f in c.__struct_fields__ if f not in self.gm_fixed_fields})
            for cid, c in state.combatants.items()
        }
        names = combatant_names(state)
        calls = [msgspec.structs.replace(GMCall(id=call, text=plain_words(with_names(text, names), self.labels)),
                                         **self._call_rulings(state, call))
                 for call, text in self.pending_gm_calls(state).items()]
        return GMOptions(
            commands=["GMAdjust", "GMSkipTurn", "GMRule", "RewindEncounter", "EndEncounter"],
            calls=calls, adjustable=adjustable, can_skip=state.window is not None or state.active is not None,
            sides=sorted({c.side for c in state.combatants.values()}),
            fields={cid: self.gm_fields(state, c) for cid, c in state.combatants.items()})

    # ------------------------------------------------------------ helpers for systems

    def open_window(
        self,
        decision: Decision,
        *,
        trigger: str,
        actor: str,
        reactors: list[EligibleReactor],
        continuation: dict[str, Any],
        rule: str = "",
    ) -> bool:
        """Open a reaction window if anyone can react; returns whether one opened."""
        reactors = [r for r in reactors if r.reactions]
        if not reactors:
            return False
        state = decision.state
        nested_in, resume_at = decision.resolving if decision.resolving is not None else (None, 0)
        decision.emit(
            ReactionWindowOpened(
                window=state.windows_opened + 1,
                trigger=trigger,
                actor=actor,
                reactors=reactors,
                deadline_ms=int(state.settings.get("reaction_deadline_ms", 30_000)),
                continuation=continuation,
                rule=rule,
                nested_in=nested_in,
                resume_at=resume_at,
            )
        )
        return True

    def require_turn(self, state: EncounterState, actor: str) -> Combatant:
        combatant = self.require_combatant(state, actor)
        require(state.active == actor, f"it is not {actor}'s turn (active: {state.active})")
        return combatant

    def require_free_to_act(self, state: EncounterState, actor: str) -> Combatant:
        """What `decide` checks before any action (for a preview, which decides nothing):
        the actor's turn runs, no window waits, and it is still in the fight."""
        combatant = self.require_turn(state, actor)
        require(state.window is None, f"waiting for reactions in window {state.window.window if state.window else ''}")
        require(not combatant.out_of_fight, f"{actor} is out of the fight")
        return combatant

    def require_combatant(self, state: EncounterState, combatant_id: str) -> Combatant:
        combatant = state.combatants.get(combatant_id)
        if combatant is None:
            raise Rejected(f"unknown combatant {combatant_id!r}")
        return combatant

    def end_turn(self, decision: Decision, dice: Dice) -> None:
        state = decision.state
        if state.active is None:
            return
        combatant = state.active
        self.on_turn_end(decision, combatant, dice)
        decision.emit(TurnEnded(round=state.round, combatant=combatant))
        self.advance(decision, dice)

    def advance(self, decision: Decision, dice: Dice) -> None:
        """Start the next turn, skipping those who cannot act, or the next round."""
        state = decision.state
        for _ in range(len(state.turn_order) * 2 + 2):
            if self.check_end(decision):
                return
            upcoming = [c for c in state.turn_order if c not in state.acted_this_round]
            if not upcoming:
                if state.round >= int(state.settings.get("max_rounds", 30)):
                    decision.emit(EncounterEnded(winner=None, reason=f"round limit ({state.round}) reached"))
                    return
                self.start_round(decision, dice)
                continue
            candidate = upcoming[0]
            reason = self.cannot_act_reason(state, state.combatants[candidate])
            if reason is not None:
                decision.emit(TurnSkipped(round=state.round, combatant=candidate, reason=reason))
                continue
            decision.emit(TurnStarted(round=state.round, combatant=candidate, deadline_ms=self._turn_timer(state, candidate)))
            self.on_turn_start(decision, candidate, dice)
            if state.active == candidate and state.combatants[candidate].out_of_fight:
                self.end_turn(decision, dice)
            return

    def _turn_timer(self, state: EncounterState, combatant: str) -> int | None:
        timer = int(state.settings.get("turn_timer_ms", 0) or 0)
        return timer if timer > 0 and state.combatants[combatant].policy == "human" else None

    def start_round(self, decision: Decision, dice: Dice) -> None:
        state = decision.state
        decision.emit(RoundStarted(round=state.round + 1))
        self.on_round_start(decision, dice)
        if state.round == 1 or self.initiative_each_round:
            decision.emit(self.roll_initiative(decision, dice))

    def check_end(self, decision: Decision) -> bool:
        state = decision.state
        if state.ended:
            return True
        sides = state.standing_sides()
        if len(sides) <= 1:
            winner = next(iter(sides)) if sides else None
            decision.emit(EncounterEnded(winner=winner, reason="last side standing" if winner else "no one left standing"))
            return True
        return False

    def down(self, decision: Decision, combatant: str, reason: str, rule: str = "") -> None:
        if not decision.state.combatants[combatant].out_of_fight:
            decision.emit(CombatantDown(combatant=combatant, reason=reason, rule=rule))

    # ------------------------------------------------------------ command handling

    def _handle(self, decision: Decision, command: Command, dice: Dice) -> None:
        state = decision.state
        if isinstance(command, StartEncounter):
            self._start(decision, command, dice)
            return
        require(state.started, "the encounter has not started")
        require(not state.ended, f"the encounter has ended ({state.end_reason})")
        if isinstance(command, EndEncounter):
            require(command.actor in (SEQUENCER, GM), "only the GM can end an encounter")
            sides = sorted({c.side for c in state.combatants.values()})
            require(command.winner is None or command.winner in sides,
                    f"the winner must be one of the sides ({', '.join(sides)}) or none, not {str(command.winner)[:64]!r}")
            decision.emit(EncounterEnded(winner=command.winner, reason=command.reason,
                                         by="gm" if command.actor == GM else ""))
            return
        if isinstance(command, (GMAdjust, GMSkipTurn, GMRule, RewindEncounter)):
            require(command.actor in (SEQUENCER, GM), f"{type(command).__name__} is the GM's command")
            self._gm_command(decision, command, dice)
            return
        if isinstance(command, RestoreState):
            require(command.actor == SEQUENCER, "only the engine restores a state")
            self._restore(decision, command)
            return
        if isinstance(command, AddClientSeed):
            self._add_client_seed(decision, command)
            return
        if isinstance(command, TimeOutTurn):
            require(command.actor == SEQUENCER, "only the engine times a turn out")
            require(state.active == command.combatant and state.window is None,
                    f"{command.combatant}'s turn is not the one running")
            require(state.time_up == "", "the GM has been asked about this turn already")
            require(command.then in ("", *TURN_TIMEOUTS), f"a turn times out to one of {', '.join(TURN_TIMEOUTS)}")
            then = command.then or turn_timeout(state, command.combatant)
            decision.emit(TurnTimedOut(round=state.round, combatant=command.combatant, then=then))
            if then == "end_turn":
                self.end_turn(decision, dice)
            return
        if isinstance(command, CloseReactionWindow):
            require(command.actor == SEQUENCER, "only the sequencer closes reaction windows")
            window = self._require_window(state, command.window)
            waiting = window.unanswered()
            asking = [c for c in waiting if window_timeout(state, c) == "gm"]
            if asking and state.time_up != f"window-{window.window}":
                # Their seats chose to have the GM asked: the window stays open
                # (a late answer still counts) until the GM closes it.
                decision.emit(WindowTimedOut(window=window.window, waiting=asking, then="gm"))
                return
            self._close_window(decision, dice, timed_out=waiting)
            return
        if command.actor not in (SEQUENCER, GM):  # a system's GM command (authority "gm") names no combatant
            self.require_combatant(state, command.actor)
        if isinstance(command, (ClaimReaction, PassReaction)):
            self._answer_window(decision, command, dice)
            return
        if state.window is not None:
            raise Rejected(
                f"waiting for reactions in window {state.window.window} "
                f"({', '.join(state.window.unanswered())}); {type(command).__name__} must wait"
            )
        if isinstance(command, EndTurn):
            self.require_turn(state, command.actor)
            self.end_turn(decision, dice)
            return
        self.decide_action(decision, command, dice)
        self._settle(decision, dice)

    def _add_client_seed(self, decision: Decision, command: AddClientSeed) -> None:
        """A player seat's seed, mixed into every die drawn after it
        (engine/dice.py `dice_key`). The sequencer has checked that the actor
        is the seat the command came from (engine/seats.py `authorize`)."""
        problem = client_seed_problem(decision.state, command.actor, command.client_seed)
        require(problem is None, problem or "")
        decision.emit(ClientSeedAdded(seat=command.actor, client_seed=command.client_seed))

    # ------------------------------------------------------------ the GM's commands

    def _gm_command(self, decision: Decision, command: Command, dice: Dice) -> None:
        state = decision.state
        if isinstance(command, GMAdjust):
            require(bool(command.reason.strip()), "a GM adjustment needs a reason (it is shown in audit and replay)")
            combatant = self.require_combatant(state, command.combatant)
            changes = self._gm_changes(state, combatant, dict(command.changes))
            decision.emit(GMAdjusted(combatant=combatant.id, changes=changes, reason=command.reason))
            if changes.get("out_of_fight") is True and state.active == combatant.id:
                self.end_turn(decision, dice)
            self._settle(decision, dice)
        elif isinstance(command, GMSkipTurn):
            require(bool(command.reason.strip()), "skipping a turn needs a reason")
            if state.window is not None:
                waiting = state.window.unanswered()
                decision.emit(GMRuled(call="", ruling=f"close reaction window {state.window.window} "
                                                      f"(not answered: {', '.join(waiting) or 'none'})", reason=command.reason))
                self._close_window(decision, dice, timed_out=waiting)
                return
            require(state.active is not None, "there is no turn to skip")
            decision.emit(GMRuled(call="", ruling=f"skip {state.active}'s turn", reason=command.reason, combatant=state.active))
            self.end_turn(decision, dice)
        elif isinstance(command, GMRule):
            require(bool(command.ruling.strip()), "a ruling needs its text")
            if command.call:
                pending = self.pending_gm_calls(state)
                require(command.call in pending,
                        f"no pending GM call {command.call[:64]!r}; pending: {', '.join(pending) or 'none'}")
            if command.call == TIME_UP_CALL:
                rulings = self._call_rulings(state, TIME_UP_CALL)["rulings"]
                require(command.ruling in rulings, f"the ruling on a deadline's end is one of: {'; '.join(rulings)}")
                combatant = state.active if state.time_up == "turn" else ""
                decision.emit(GMRuled(call=command.call, ruling=command.ruling, reason=command.reason,
                                      combatant=combatant or ""))
                if command.ruling == END_THE_TURN:
                    self.end_turn(decision, dice)
                elif command.ruling == CLOSE_THE_WINDOW and state.window is not None:
                    self._close_window(decision, dice, timed_out=state.window.unanswered())
                return
            decision.emit(GMRuled(call=command.call, ruling=command.ruling, reason=command.reason))
            if command.call:
                self.settle_gm_call(decision, command.call, command.ruling, dice)
                self._settle(decision, dice)
        elif isinstance(command, RewindEncounter):
            # The sequencer (or the pure loop) checks the target with
            # `check_rewind`, folds the log there and sends RestoreState.
            raise Rejected("a rewind is carried out by the engine: send RewindEncounter through the GM seat")

    def _gm_changes(self, state: EncounterState, combatant: Combatant, requested: dict[str, Any]) -> dict[str, Any]:
        """A GMAdjust's changes, checked: each value (`_gm_value`), and a fallen
        combatant comes back into the fight only through ``"revive": true``:
        its health fields and ``out_of_fight`` are not set alive by hand, and a
        dead one's not at all (`life`). A revival is the system's
        (`revive_changes`), with the other fields asked for on top of it."""
        name = combatant.name or combatant.id
        revive = requested.pop("revive", None)
        if revive is not None:
            require(revive is True, "revive must be true")
            require(combatant.out_of_fight, f"{name} is in the fight: there is no one to revive")
            revival = self.revive_changes(state, combatant, requested)
            probe = self._probe(combatant, revival)
            checked = {field: self._gm_value(state, probe, field, value) for field, value in requested.items()}
            probe = self._probe(probe, checked)
            require(not probe.out_of_fight and self.life(probe) == "up",
                    f"{name} would not be standing once revived ({self.life(probe)}): choose values of a standing combatant")
            changes = {**revival, **checked}
            if "conditions" in revival and "conditions" in checked:
                changes["conditions"] = {key: list(dict.fromkeys(revival["conditions"].get(key, []) + checked["conditions"].get(key, [])))
                                         for key in ("add", "remove")}
            return changes
        changes = {field: self._gm_value(state, combatant, field, value) for field, value in requested.items()}
        require(bool(changes), "GMAdjust needs at least one change")
        if not combatant.out_of_fight and changes.get("out_of_fight") is not True:
            # Health fields do not take a combatant out by themselves: the fight would go on with it down.
            after = self.life(self._probe(combatant, changes))
            require(after == "up", f"{name} would be {after} but still in the fight: take {name} out with out_of_fight: true")
        if combatant.out_of_fight:
            revive_hint = f'bring {name} back with "revive": true (the GM\'s Revive)'
            require(changes.get("out_of_fight") is not False, f"{name} is out of the fight: {revive_hint}, not out_of_fight: false")
            before = self.life(combatant)
            vital = [field for field in changes if field in self.gm_vital_fields()]
            removed = [c for c in changes.get("conditions", {}).get("remove", []) if c in self.gm_vital_conditions]
            if before == "dead":
                require(not vital and not removed,
                        f"{name} is dead: {', '.join(vital + removed)} cannot change until {name} is revived; {revive_hint}")
            after = self.life(self._probe(combatant, changes))
            require(_LIFE_RANK[after] <= _LIFE_RANK[before],
                    f"{name} is out of the fight ({before}): setting {', '.join(vital + removed) or 'that'} would bring "
                    f"{name} back ({after}); {revive_hint}")
        return changes

    def _probe(self, combatant: Combatant, changes: dict[str, Any]) -> Combatant:
        """A copy of ``combatant`` with checked GM ``changes`` applied (as GMAdjusted's evolve applies them)."""
        probe = msgspec.convert(msgspec.to_builtins(combatant), type(combatant))
        scratch = self.state_type()
        scratch.combatants = {probe.id: probe}
        _on_gm_adjusted(self, scratch, GMAdjusted(combatant=probe.id, changes=changes, reason=""))
        return probe

    # ------------------------------------------------------------ a combatant's life, for the GM's hand

    # Conditions a dead combatant keeps until revived (their removal is a revival).
    gm_vital_conditions: ClassVar[frozenset[str]] = frozenset({"dead"})
    # Conditions a revival ends (`revive_changes`).
    revive_removes: ClassVar[tuple[str, ...]] = ("dead", "unconscious", "dying")

    def gm_vital_fields(self) -> set[str]:
        """The health fields: a fallen combatant's are not set alive by hand
        (the specs marked ``vital``; without specs, the fields `health` reads)."""
        specs = self.gm_field_specs
        if specs:
            return {spec.field for spec in specs if spec.vital}
        return {now for now, _most, _label in _HEALTH_FIELDS if now in self.combatant_type.__struct_fields__}

    def life(self, combatant: Combatant) -> str:
        """How a combatant's health fields read: "up", "down" (out of the fight
        by its injuries) or "dead". The default reads the fields `health` reads
        (down at 0 or less) and a "dead" condition."""
        if "dead" in combatant.conditions:
            return "dead"
        health = self.health(combatant)
        if health is not None and health["value"] <= 0:
            return "down"
        return "up"

    def revive_changes(self, state: EncounterState, combatant: Combatant, requested: dict[str, Any]) -> dict[str, Any]:
        """The changes that bring a fallen ``combatant`` back into the fight,
        given the other changes the GM asks for with it (``requested``, not
        yet checked): the default ends the conditions of `revive_removes`
        ("dead", "unconscious", "dying") and lifts the health field `health` reads to 1
        when it is at 0 or less (unless the GM sets it)."""
        changes: dict[str, Any] = {"out_of_fight": False}
        gone = [c for c in self.revive_removes if c in combatant.conditions]
        if gone:
            changes["conditions"] = {"add": [], "remove": gone}
        for now, _most, _label in _HEALTH_FIELDS:
            if now in combatant.__struct_fields__:
                if now not in requested and int(getattr(combatant, now)) <= 0:
                    changes[now] = 1
                break
        return changes

    # ------------------------------------------------------------ the GM's form

    # The system's adjustable fields, described (engine/gm_fields.py); none: every
    # whole-number and yes/no field of the combatant, unbounded.
    gm_field_specs: ClassVar[tuple[FieldSpec, ...]] = ()

    def gm_specs(self, combatant: Combatant) -> tuple[FieldSpec, ...]:
        """The generic fields and the system's own (or, without specs, the combatant's plain fields)."""
        own = self.gm_field_specs
        if not own:
            types = field_types(type(combatant))
            health = {now for now, _most, _label in _HEALTH_FIELDS}
            own = tuple(
                FieldSpec(field=name, kind="yes_no" if kind is bool else "number", group="Health" if name in health else "Other",
                          low=(lambda s, me: None if me.out_of_fight else 1) if name in health else None, vital=name in health)
                for name, kind in types.items()
                if name not in self.gm_fixed_fields and name not in _GENERIC_GM_FIELDS and kind in (int, bool))
        revive, taken_out, *rest = _GENERIC_GM_SPECS
        return (revive, *own, taken_out, *rest)

    def gm_fields(self, state: EncounterState, combatant: Combatant) -> list[GMField]:
        """The fields the GM's form offers for ``combatant`` now, described: a
        standing one's, or a fallen one's Revive and what is not its health."""
        fallen = combatant.out_of_fight
        vital = self.gm_vital_fields()
        found = []
        for spec in self.gm_specs(combatant):
            if fallen and (spec.field in vital or spec.field == "out_of_fight"):
                continue
            if not fallen and spec.kind == "revive":
                continue
            field = describe(spec, state, combatant, self.labels)
            if field.label == spec.field.replace("_", " ") and spec.field in _GENERIC_GM_LABELS:
                field = msgspec.structs.replace(field, label=_GENERIC_GM_LABELS[spec.field])
            if spec.kind == "conditions":
                known = dict(self.labels.conditions)
                field = msgspec.structs.replace(field, choices=[
                    GMFieldChoice(value=name, label=known.get(name) or name.replace("_", " "))
                    for name in sorted(set(known) | set(combatant.conditions))])
            if spec.kind == "revive":
                field = msgspec.structs.replace(field, note=self.revive_note(state, combatant))
            found.append(field)
        order = {group: index for index, group in enumerate(GROUPS)}
        return sorted(found, key=lambda f: order.get(f.group, len(order)))

    def revive_note(self, state: EncounterState, combatant: Combatant) -> str:
        """What Revive does to ``combatant``, in words (the form shows it)."""
        changes = self.revive_changes(state, combatant, {})
        said = [f"{self.labels.word('fields', k)} {v}" for k, v in changes.items() if k not in ("out_of_fight", "conditions")]
        gone = changes.get("conditions", {}).get("remove", [])
        added = changes.get("conditions", {}).get("add", [])
        return "back in the fight" + (f", {', '.join(said)}" if said else "") + (
            f"; no longer {', '.join(self.labels.word('conditions', c) for c in gone)}" if gone else "") + (
            f"; {', '.join(self.labels.word('conditions', c) for c in added)}" if added else "")

    def _gm_value(self, state: EncounterState, combatant: Combatant, field: str, value: Any) -> Any:
        """The value the GM sets, checked: the generic fields here, the system's
        own by their type, their description (`gm_fields`: the same check the
        GM's form runs) and the system's own rules (`check_gm_change`)."""
        if field == "position":
            square = tuple(value) if isinstance(value, (list, tuple)) else None
            require(square is not None and len(square) == 2 and all(isinstance(v, int) for v in square),
                    "position must be [x, y]")
            x, y = square  # type: ignore[misc]
            terrain = state.terrain
            require(0 <= x < terrain.width and 0 <= y < terrain.height,
                    f"position ({x}, {y}) is outside the {terrain.width}x{terrain.height} map")
            require(not any((w.x, w.y) == (x, y) for w in terrain.walls), f"position ({x}, {y}) is inside a wall")
            # A body holds its square for the end of a move, as the rules' moves do (engine/occupancy.py);
            # web/assets/gmdrag.js `squareProblem` says the same on the page before asking.
            holder = taken_squares(state, besides=[combatant.id]).get((x, y))
            if holder is not None:
                other = state.combatants[holder]
                name = other.name or other.id
                raise Rejected(f"position ({x}, {y}) is where {name} lies: no move ends on a body" if other.out_of_fight
                               else f"position ({x}, {y}) is taken by {name}")
            return [x, y]
        if field == "conditions":
            require(isinstance(value, dict) and set(value) <= {"add", "remove"}
                    and all(isinstance(v, list) and all(isinstance(n, str) and 0 < len(n) <= 40 for n in v) for v in value.values()),
                    'conditions must be {"add": [names], "remove": [names]}')
            missing = [n for n in value.get("remove", []) if n not in combatant.conditions]
            require(not missing, f"{combatant.id} is not {', '.join(missing)}")
            return {"add": list(value.get("add", [])), "remove": list(value.get("remove", []))}
        if field == "out_of_fight":
            require(isinstance(value, bool), "out_of_fight must be true or false")
            return value
        fields = field_types(type(combatant))
        adjustable = sorted(f for f in combatant.__struct_fields__ if f not in self.gm_fixed_fields)
        require(field in fields and field not in self.gm_fixed_fields,
                f"{field[:40]!r} is not a field the GM can set; one of: {', '.join(adjustable)}")
        try:
            converted = msgspec.convert(value, fields[field], strict=False)
        except msgspec.ValidationError as exc:
            raise Rejected(f"{field}: {exc}") from None
        self.check_gm_change(state, combatant, field, converted)
        spec = next((s for s in self.gm_specs(combatant) if s.field == field), None)
        if spec is not None:
            # The value as sent (a form sends typed values: "3" is no number here).
            problem = value_problem(describe(spec, state, combatant, self.labels), value)
            require(problem is None, f"{combatant.name or combatant.id}: {problem}")
        return msgspec.to_builtins(converted)

    def check_rewind(self, state: EncounterState, command: RewindEncounter, resting_points: set[int]) -> None:
        """Raise Rejected unless ``command.to_version`` is a point the encounter
        can be taken back to: one between commands, after its start."""
        require(command.actor in (SEQUENCER, GM), "only the GM rewinds an encounter")
        require(bool(command.reason.strip()), "a rewind needs a reason (it is shown in audit and replay)")
        require(state.started and not state.ended, "only a running encounter can be rewound")
        # Where it can go: a version between two commands, before the log's end, on the branch that stands.
        targets = self.rewind_targets(state, resting_points)
        where = (f"the versions between commands run from {targets[0]} to {targets[-1]}" if targets
                 else "no version between two commands lies before it yet")
        require(0 < command.to_version < state.version,
                f"to_version must be between 1 and {state.version - 1} (the log is at version {state.version}); {where}")
        undone_by = branches.undone_by(state.undone, command.to_version)
        if undone_by is not None:
            before = max((v for v in targets if v < command.to_version), default=None)
            raise Rejected(f"version {command.to_version} was undone by the rewind at version {undone_by}: rewind to a "
                           f"version that stands" + (f", such as {before}" if before is not None else f"; {where}"))
        if command.to_version not in resting_points:
            before = max((v for v in targets if v < command.to_version), default=None)
            after = min((v for v in targets if v > command.to_version), default=None)
            nearest = " and ".join(f"{v} ({side})" for v, side in ((before, "before it"), (after, "after it")) if v is not None)
            raise Rejected(f"version {command.to_version} falls inside a command's events; rewind to a version "
                           f"between commands: " + (f"the nearest are {nearest}" if " and " in nearest else
                                                    f"the nearest is {nearest}" if nearest else f"{where}"))

    def rewind_targets(self, state: EncounterState, resting_points: set[int]) -> list[int]:
        """The versions a rewind may take the encounter back to now, oldest
        first: between two commands (``resting_points``), before the log's
        end, and standing (not undone by an earlier rewind)."""
        if not state.started or state.ended:
            return []
        return sorted(v for v in resting_points
                      if 0 < v < state.version and branches.undone_by(state.undone, v) is None)

    def with_rewind_targets(self, options: SeatOptions, state: EncounterState, resting_points: set[int]) -> SeatOptions:
        """``options`` with the GM's ``rewind_targets`` filled (a GM seat's only)."""
        if options.gm is None:
            return options
        return msgspec.structs.replace(options, gm=msgspec.structs.replace(
            options.gm, rewind_targets=self.rewind_targets(state, resting_points)))

    def rewind_to(self, state: EncounterState, command: RewindEncounter, past: EncounterState,
                  resting_points: set[int]) -> RestoreState:
        """The engine's half of a GM's rewind: check it, and the command that
        restores ``past`` (the state folded to ``command.to_version``)."""
        self.check_rewind(state, command, resting_points)
        if past.version != command.to_version:
            raise Rejected(f"the state given is at version {past.version}, not {command.to_version}")
        return RestoreState(command_id=command.command_id, actor=SEQUENCER, to_version=command.to_version,
                            from_version=state.version, reason=command.reason, state=msgspec.to_builtins(past))

    def _restore(self, decision: Decision, command: RestoreState) -> None:
        state = decision.state
        restored = msgspec.convert(command.state, self.state_type)
        reopened = {w.window for w in (*restored.suspended_windows, *([restored.window] if restored.window else []))}
        left_open = [w.window for w in (*state.suspended_windows, *([state.window] if state.window else []))
                     if w.window not in reopened]
        decision.emit(EncounterRewound(to_version=command.to_version, from_version=command.from_version,
                                       branch_version=restored.branch_version, reason=command.reason,
                                       state=command.state, closed_windows=left_open))
        del state  # the decision's scratch state is now the restored one

    def _settle(self, decision: Decision, dice: Dice) -> None:
        """After an action or a window: end the encounter, or the turn of a fallen actor."""
        state = decision.state
        if self.check_end(decision) or state.window is not None:
            return
        if state.active is not None and state.combatants[state.active].out_of_fight:
            self.end_turn(decision, dice)

    def _start(self, decision: Decision, command: StartEncounter, dice: Dice) -> None:
        state = decision.state
        require(not state.started, "the encounter has already started")
        require(command.actor == SEQUENCER, "only the sequencer starts an encounter")
        require(command.setup.system == self.name, f"setup is for system {command.setup.system!r}, not {self.name!r}")
        setup = self.resolve_setup(command.setup)
        require(len(setup.combatants) >= 2, "an encounter needs at least two combatants")
        ids = [c.id for c in setup.combatants]
        require(len(set(ids)) == len(ids), "combatant IDs must be unique")
        reserved = sorted(RESERVED_ACTORS & set(ids))
        require(not reserved, f"combatant ID {', '.join(map(repr, reserved))} is reserved")
        require(len({c.side for c in setup.combatants}) >= 2, "an encounter needs at least two sides")
        for combatant in setup.combatants:
            require(combatant.policy in ("ai", "human"), f"combatant {combatant.id!r} has policy {combatant.policy!r}; known: ai, human")
        settings = self.settings_for(setup)
        for combatant in setup.combatants:
            self.build_combatant(combatant, settings)  # validates every sheet up front
        # The log records the seats in full (a GM and a spectator seat are always there).
        setup = msgspec.structs.replace(setup, seats=default_seats(setup))
        decision.emit(EncounterStarted(encounter=state.encounter or "", setup=setup, seed_commitment=command.seed_commitment,
                                       reproducible_dice=command.reproducible_dice,
                                       log_public_key=command.log_public_key))
        # The seeds the players added in the lobby, after the commitment and
        # before any die: the engine drew ``dice`` with them mixed in
        # (actors/sequencer.py), so the opening initiative is no longer the
        # server's seed's alone.
        for seat_id, text in command.client_seeds:
            problem = client_seed_problem(state, seat_id, text)
            require(problem is None, f"lobby client seed of {seat_id[:64]!r}: {problem}")
            decision.emit(ClientSeedAdded(seat=seat_id, client_seed=text))
        self.advance(decision, dice)

    def _require_window(self, state: EncounterState, window: int) -> ReactionWindow:
        if state.window is None or state.window.window != window:
            open_now = f"window {state.window.window} is open" if state.window else "no window is open"
            raise Rejected(f"reaction window {window} is not open ({open_now})")
        return state.window

    def _answer_window(self, decision: Decision, command: ClaimReaction | PassReaction, dice: Dice) -> None:
        state = decision.state
        window = self._require_window(state, command.window)
        actor = command.actor
        reactor = window.eligible(actor)
        if reactor is None:
            if state.combatants[actor].reaction_used:
                raise Rejected(f"{actor} has already used its reaction this round")
            raise Rejected(f"{actor} is not eligible to react in window {window.window}")
        require(not window.answered(actor), f"{actor} has already answered window {window.window}")
        if isinstance(command, ClaimReaction):
            require(
                command.reaction in reactor.reactions,
                f"{actor} cannot use {command.reaction!r} here; offered: {', '.join(reactor.reactions)}",
            )
            try:
                self.check_reaction_options(command)
            except Rejected as misshapen:
                try:  # the system's own words, where it checks that shape itself
                    self.validate_claim(state, window, command)
                except Rejected:
                    raise
                except Exception:  # noqa: BLE001 - a shape the system does not check: the typed refusal says it
                    pass
                raise misshapen from None
            self.validate_claim(state, window, command)
            decision.emit(ReactionClaimed(window=window.window, combatant=actor, reaction=command.reaction, options=command.options))
        else:
            decision.emit(ReactionPassed(window=window.window, combatant=actor))
        answered = state.window  # type: ignore[union-attr]
        if len(answered.passed) + len(answered.claims) >= len(answered.reactors) and not answered.unanswered():
            self._close_window(decision, dice, timed_out=[])

    def _close_window(self, decision: Decision, dice: Dice, timed_out: list[str]) -> None:
        state = decision.state
        window = state.window
        assert window is not None
        initiative = {cid: c.initiative for cid, c in state.combatants.items()}
        order = order_claims(window.claims, self.reaction_priority, initiative)
        decision.emit(ReactionsOrdered(window=window.window, order=order, timed_out=timed_out))
        self._resolve_claims(decision, dice, start=0)

    def _resolve_claims(self, decision: Decision, dice: Dice, *, start: int) -> None:
        """Resolve the open window's ordered claims from ``start``; close it, or
        leave it suspended if a claim opened a nested window (a reaction to a
        reaction), which resumes it when it closes."""
        state = decision.state
        window = state.window
        assert window is not None
        snapshot = msgspec.structs.replace(window)
        for index in range(start, len(snapshot.order)):
            if state.ended:
                return
            claim = snapshot.order[index]
            decision.resolving = (snapshot.window, index + 1)
            try:
                reason = self.resolve_reaction(decision, snapshot, claim, dice)
            finally:
                decision.resolving = None
            if reason is not None:
                decision.emit(ReactionDenied(window=snapshot.window, combatant=claim.combatant, reaction=claim.reaction, reason=reason))
            if state.window is not None and state.window.window != snapshot.window:
                return  # suspended until the nested window closes
        if state.ended:
            return
        decision.emit(ReactionWindowClosed(window=snapshot.window))
        if not self.check_end(decision):
            self.after_window(decision, snapshot, dice)
        if state.window is None and state.suspended_windows and not state.ended:
            outer = state.suspended_windows[-1]
            decision.emit(ReactionWindowResumed(window=outer.window))
            self._resolve_claims(decision, dice, start=outer.resume_from)
            return
        self._settle(decision, dice)


def reject(command: Command, reason: str) -> CommandRejected:
    # A reason may quote the command (an unknown target's name...): bounded, so
    # a rejection never carries huge input into the log.
    return CommandRejected(
        command_id=command.command_id,
        actor=command.actor,
        command_type=type(command).__struct_config__.tag,  # type: ignore[arg-type]
        reason=bounded(reason),
    )


# ---------------------------------------------------------------- generic evolve


def _on_started(system: BaseRuleSystem, state: EncounterState, event: EncounterStarted) -> None:
    setup = event.setup
    state.started = True
    state.encounter = event.encounter
    state.system = setup.system
    state.settings = system.settings_for(setup)
    state.terrain = setup.terrain
    state.seats = default_seats(setup)
    state.seed_commitment = event.seed_commitment
    state.reproducible_dice = event.reproducible_dice
    state.combatants = {c.id: system.build_combatant(c, state.settings) for c in setup.combatants}


def _on_round(system: BaseRuleSystem, state: EncounterState, event: RoundStarted) -> None:
    state.round = event.round
    state.acted_this_round = []
    if system.reaction_resets == "round":
        for combatant in state.combatants.values():
            combatant.reaction_used = False


def _on_initiative(system: BaseRuleSystem, state: EncounterState, event: InitiativeRolled) -> None:
    state.turn_order = list(event.order)
    for entry in event.entries:
        state.combatants[entry.combatant].initiative = entry.total


def _on_turn_started(system: BaseRuleSystem, state: EncounterState, event: TurnStarted) -> None:
    state.active = event.combatant
    state.turn_deadline_ms = event.deadline_ms
    state.turn_started_at = state.version
    if system.reaction_resets == "own_turn":
        state.combatants[event.combatant].reaction_used = False


def _on_turn_over(system: BaseRuleSystem, state: EncounterState, event: TurnEnded | TurnSkipped) -> None:
    if state.active == event.combatant:
        state.active = None
        state.turn_deadline_ms = None
    if state.ai_plays == event.combatant:
        state.ai_plays = None
    if state.time_up == "turn" and state.active is None:
        state.time_up = ""  # the late player (or a skip) ended it: nothing left to ask
    state.acted_this_round.append(event.combatant)


def _on_moved(system: BaseRuleSystem, state: EncounterState, event: Moved) -> None:
    if event.path:
        state.combatants[event.combatant].position = tuple(event.path[-1])  # type: ignore[assignment]


def _on_action(system: BaseRuleSystem, state: EncounterState, event: ActionTaken) -> None:
    if event.slot == "reaction":
        state.combatants[event.combatant].reaction_used = True


def _on_condition_applied(system: BaseRuleSystem, state: EncounterState, event: ConditionApplied) -> None:
    state.combatants[event.combatant].conditions[event.condition] = event.until


def _on_condition_removed(system: BaseRuleSystem, state: EncounterState, event: ConditionRemoved) -> None:
    state.combatants[event.combatant].conditions.pop(event.condition, None)


def _on_down(system: BaseRuleSystem, state: EncounterState, event: CombatantDown) -> None:
    state.combatants[event.combatant].out_of_fight = True


def _on_window_opened(system: BaseRuleSystem, state: EncounterState, event: ReactionWindowOpened) -> None:
    state.windows_opened = event.window
    if state.window is not None:
        state.window.resume_from = event.resume_at
        state.suspended_windows.append(state.window)
    state.window = ReactionWindow(
        window=event.window,
        trigger=event.trigger,
        actor=event.actor,
        reactors=list(event.reactors),
        deadline_ms=event.deadline_ms,
        continuation=dict(event.continuation),
        rule=event.rule,
    )


def _on_claimed(system: BaseRuleSystem, state: EncounterState, event: ReactionClaimed) -> None:
    assert state.window is not None
    state.window.claims.append(Claim(combatant=event.combatant, reaction=event.reaction, options=dict(event.options)))


def _on_passed(system: BaseRuleSystem, state: EncounterState, event: ReactionPassed) -> None:
    assert state.window is not None
    state.window.passed.append(event.combatant)


def _on_ordered(system: BaseRuleSystem, state: EncounterState, event: ReactionsOrdered) -> None:
    if state.window is not None and state.window.window == event.window:
        state.window.order = list(event.order)


def _on_window_closed(system: BaseRuleSystem, state: EncounterState, event: ReactionWindowClosed) -> None:
    if state.time_up == f"window-{event.window}":
        state.time_up = ""
    state.window = None


def _on_window_resumed(system: BaseRuleSystem, state: EncounterState, event: ReactionWindowResumed) -> None:
    state.window = state.suspended_windows.pop()


def _on_rejected(system: BaseRuleSystem, state: EncounterState, event: CommandRejected) -> None:
    state.rejected_commands += 1


def _on_dropped(system: BaseRuleSystem, state: EncounterState, event: CommandsDropped) -> None:
    state.rejected_commands += event.count


def _on_ended(system: BaseRuleSystem, state: EncounterState, event: EncounterEnded) -> None:
    state.ended = True
    state.winner = event.winner
    state.end_reason = event.reason
    state.active = None
    state.window = None
    state.suspended_windows = []


def _on_client_seed(system: BaseRuleSystem, state: EncounterState, event: ClientSeedAdded) -> None:
    state.client_seeds = [*state.client_seeds, (event.seat, event.client_seed)]


def _on_seed(system: BaseRuleSystem, state: EncounterState, event: SeedRevealed) -> None:
    state.seed_revealed = event.seed


def _on_turn_timed_out(system: BaseRuleSystem, state: EncounterState, event: TurnTimedOut) -> None:
    state.turn_deadline_ms = None
    if event.then == "ai":
        state.ai_plays = event.combatant
    elif event.then == "gm":
        state.time_up = "turn"


def _on_window_timed_out(system: BaseRuleSystem, state: EncounterState, event: WindowTimedOut) -> None:
    state.time_up = f"window-{event.window}"


def _on_gm_adjusted(system: BaseRuleSystem, state: EncounterState, event: GMAdjusted) -> None:
    combatant = state.combatants[event.combatant]
    for field, value in event.changes.items():
        if field == "position":
            combatant.position = tuple(value)  # type: ignore[assignment]
        elif field == "conditions":
            for name in value.get("remove", []):
                combatant.conditions.pop(name, None)
            for name in value.get("add", []):
                combatant.conditions[name] = ""
        elif field == "out_of_fight":
            combatant.out_of_fight = bool(value)
        else:
            setattr(combatant, field, msgspec.convert(value, field_types(type(combatant))[field], strict=False))


def _on_gm_ruled(system: BaseRuleSystem, state: EncounterState, event: GMRuled) -> None:
    if event.call == TIME_UP_CALL:
        # Settled: a deadline's end is asked about once, not a call to remember.
        if event.ruling == AI_PLAYS_THE_TURN and state.active is not None:
            state.ai_plays = state.active
        state.time_up = ""
        return
    if event.call:
        state.gm_rulings.append(event.call)


def _on_rewound(system: BaseRuleSystem, state: EncounterState, event: EncounterRewound) -> None:
    """Become the state the event carries, keeping the count of log entries
    and adding what the rewind undoes to what earlier ones undid."""
    version, windows_opened, undone = state.version, state.windows_opened, state.undone
    restored = msgspec.convert(event.state, type(state))
    for field in state.__struct_fields__:
        setattr(state, field, getattr(restored, field))
    state.version = version
    state.branch_version = event.branch_version
    # What came after the version rewound to is undone, with what earlier rewinds undid.
    state.undone = branches.merged(undone, branches.undo(undone, event.to_version, version))
    # Window numbers stay unique across branches, so a late answer meant for a
    # window of the abandoned branch can never land in a new one.
    state.windows_opened = max(windows_opened, restored.windows_opened)


_GENERIC_EVOLVERS: dict[type, Any] = {
    EncounterStarted: _on_started,
    RoundStarted: _on_round,
    InitiativeRolled: _on_initiative,
    TurnStarted: _on_turn_started,
    TurnEnded: _on_turn_over,
    TurnSkipped: _on_turn_over,
    Moved: _on_moved,
    ActionTaken: _on_action,
    ConditionApplied: _on_condition_applied,
    ConditionRemoved: _on_condition_removed,
    CombatantDown: _on_down,
    ReactionWindowOpened: _on_window_opened,
    ReactionClaimed: _on_claimed,
    ReactionPassed: _on_passed,
    ReactionsOrdered: _on_ordered,
    ReactionWindowClosed: _on_window_closed,
    ReactionWindowResumed: _on_window_resumed,
    CommandRejected: _on_rejected,
    CommandsDropped: _on_dropped,
    EncounterEnded: _on_ended,
    SeedRevealed: _on_seed,
    ClientSeedAdded: _on_client_seed,
    TurnTimedOut: _on_turn_timed_out,
    WindowTimedOut: _on_window_timed_out,
    GMAdjusted: _on_gm_adjusted,
    GMRuled: _on_gm_ruled,
    EncounterRewound: _on_rewound,
}


# The fields `health` reads: (the value, its maximum, its label).
_HEALTH_FIELDS = (("vitality", "max_vitality", "vitality"), ("hp", "max_hp", "HP"), ("wounds", "max_wounds", "wounds"))
_LIFE_RANK = {"dead": 0, "down": 1, "up": 2}
_GENERIC_GM_FIELDS = frozenset({"position", "conditions", "out_of_fight", "revive"})
_GENERIC_GM_SPECS = (
    FieldSpec(field="revive", kind="revive", group="Health"),
    FieldSpec(field="out_of_fight", kind="yes_no", group="Health", note="taking a combatant out ends its turn"),
    FieldSpec(field="position", kind="square", group="Place"),
    FieldSpec(field="conditions", kind="conditions", group="Conditions"),
)
_GENERIC_GM_LABELS = {"revive": "Revive", "out_of_fight": "Out of the fight", "position": "Position", "conditions": "Conditions"}


def next_command_id(state: EncounterState, combatant: str) -> str:
    """A deterministic command ID for a policy's command at this state: a
    restarted actor recomputes the same ID, so its retried command applies once."""
    return f"{combatant}@v{state.version}"
