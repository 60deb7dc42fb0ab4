"""What a seat may do now: the typed answer of ``options(state, seat)``.

Every option a frontend can take carries ``command``: the exact command to
send (a JSON object tagged with ``"type"``, with ``actor`` filled in and
without ``command_id``, which the sender adds). A listed command is accepted
by the engine in the state the options were computed for (a property test
checks it for every system); anything not listed may be refused.

Numbers a player weighs come typed: the modifiers of an attack with their rule
IDs, the exact chance to hit (computed from the dice, not sampled), the cost
and path of a move, and who could react on the way with what chance.

This module imports only the shared schemas (layering rule in DESIGN.md).
"""

from __future__ import annotations

from typing import Any

import msgspec

from firelane.events.schemas import Modifier

Square = tuple[int, int]


class Threat(msgspec.Struct, frozen=True, kw_only=True):
    """Someone who could react to a move: where it would trigger, and its odds."""

    reactor: str
    reaction: str  # e.g. "reactive_fire", "overwatch", "opportunity_strike", "free_attack", "wait_interrupt"
    at: Square | None = None  # the first square of the path where it could trigger
    hit_chance: float | None = None  # the reactor's chance to hit the mover there
    rule: str = ""
    label: str = ""  # the reaction in words ("Reactive Fire")


class MoveOption(msgspec.Struct, frozen=True, kw_only=True):
    to: Square
    cost: float  # in the system's unit of movement (the terrain's, or squares)
    path: list[Square]  # every square entered, in order: the path the engine takes
    mode: str = "move"  # "move", "dash", "evade", "sprint", "charge"...
    threats: list[Threat] = []
    command: dict[str, Any]


class AttackOption(msgspec.Struct, frozen=True, kw_only=True):
    target: str
    weapon: str
    mode: str = ""  # a fire mode, an aimed/called shot...
    modifiers: list[Modifier] = []  # every term of the roll, with its rule
    target_number: int | None = None  # what the roll is compared against
    hit_chance: float  # exact, from the dice
    notes: list[str] = []  # e.g. "Disadvantage: target in smoke (BB-CORE-05)"
    rule: str = ""
    command: dict[str, Any]
    label: str = ""  # the weapon and mode in words ("marksman rifle (full auto)")
    mode_label: str = ""  # the mode alone in words ("" for the plain attack)
    chance_of: str = "the attack hits"  # what ``hit_chance`` is the chance of, from the attacker's side


class Choice(msgspec.Struct, frozen=True, kw_only=True):
    """One way to take an action or answer a window."""

    label: str
    command: dict[str, Any]
    square: Square | None = None  # a lane square to fire at, a square to dive to...
    hit_chance: float | None = None
    rule: str = ""
    notes: list[str] = []
    # What ``hit_chance`` is the chance of, and from whose side ("your shot
    # hits", "the hit still lands"); "" before the words are filled in.
    chance_of: str = ""


class ActionOption(msgspec.Struct, frozen=True, kw_only=True):
    """An action other than a move or an attack (Aim, Overwatch, Take Cover,
    Reload, Rally, Wait, First Aid, a grenade...), with each legal way to take it."""

    action: str  # the command type
    label: str
    rule: str = ""
    choices: list[Choice]


class CaughtInArea(msgspec.Struct, frozen=True, kw_only=True):
    combatant: str
    square: Square
    relation: str  # "enemy", "ally", "self", "neutral" (relative to the one using the area)


class AreaPreview(msgspec.Struct, frozen=True, kw_only=True):
    """What an area command of the options would cover now, decided by the
    rules without deciding the command (nothing changes, nothing is rolled):
    every square of the template and everyone it would catch, the user's own
    side flagged in ``allies_caught`` (the user itself included when caught)."""

    command: str  # the previewed command's type
    shape: str  # "burst", "cone", "arc", "zone"...
    origin: Square | None = None  # where the template starts (the user, or the point it is placed at)
    squares: list[Square]
    caught: list[CaughtInArea] = []
    allies_caught: list[str] = []
    blocked: list[str] = []  # in the template but shielded (walls, cover)
    notes: list[str] = []
    rule: str = ""


class ReactionOption(msgspec.Struct, frozen=True, kw_only=True):
    reaction: str
    label: str
    rule: str = ""
    choices: list[Choice]  # each with its full ClaimReaction command


class WindowOptions(msgspec.Struct, frozen=True, kw_only=True):
    """A reaction window (or a decision put to one combatant) awaiting this combatant."""

    window: int
    trigger: str  # what opened it ("move_through_fire_lane", "suppression_choice"...)
    actor: str  # whose action opened it
    deadline_ms: int
    awaited: list[str]  # every combatant the window still waits for
    reactions: list[ReactionOption]
    pass_command: dict[str, Any]
    prompt: str = ""  # what it is about, in words: "a ranged attack by Cultist Mott"


class Untargetable(msgspec.Struct, frozen=True, kw_only=True):
    """An enemy the combatant cannot attack from where it stands, and why
    (issue 19 item 10), for the page to show on hover or tap.

    ``reason_code``: "no_line_of_sight" (a wall blocks the line: ``blocking_square``
    is the first wall square on it), "out_of_range" (beyond the reach of every
    weapon it carries), "full_cover" (cover that cannot be shot through:
    ``blocking_square`` is the cover's square). ``words``: one sentence with
    names, never ids."""

    combatant: str
    reason_code: str
    words: str
    blocking_square: Square | None = None
    rule: str = ""


class CombatantOptions(msgspec.Struct, frozen=True, kw_only=True):
    combatant: str
    its_turn: bool = False
    turn_deadline_ms: int | None = None
    moves: list[MoveOption] = []
    attacks: list[AttackOption] = []
    actions: list[ActionOption] = []
    window: WindowOptions | None = None
    end_turn: dict[str, Any] | None = None
    why_not: str = ""  # when it can do nothing now: why (not its turn, down, waiting for a window...)
    untargetable: list[Untargetable] = []  # on its turn: each standing enemy no listed attack targets, and why


class GMCall(msgspec.Struct, frozen=True, kw_only=True):
    """Something the rules leave to the GM, waiting for a ruling (GMRule with this id)."""

    id: str
    text: str
    combatant: str = ""
    rule: str = ""
    # The rulings the call takes: with ``free_text`` False, one of these and
    # nothing else; with it True, these are the ones the rules name (each
    # with its effect) and any other words are recorded as the GM's ruling.
    rulings: list[str] = []
    free_text: bool = True


class GMFieldChoice(msgspec.Struct, frozen=True, kw_only=True):
    """One value a GM field may take (a weapon, a combatant, a condition), with
    its label; for a "counts" field, each key and its own ``high``."""

    value: Any
    label: str
    high: float | None = None


class GMField(msgspec.Struct, frozen=True, kw_only=True):
    """A field the GM may set with GMAdjust, described for a form: what the
    engine checks it against is exactly this (`firelane.engine.gm_fields`).

    ``kind`` says what the value is:
    - "number": from ``low`` to ``high`` (None: no bound), a whole number unless ``whole`` is False;
    - "yes_no": true or false;
    - "choice": one of ``choices`` (or null if ``nullable``);
    - "choices": a list of distinct values of ``choices``, at most ``most``;
    - "counts": an object mapping values of ``choices`` to numbers from ``low`` to each choice's ``high``;
    - "square": [x, y] on the map, not in a wall, not where another standing combatant is;
    - "conditions": {"add": [names], "remove": [names it has]} (``choices``: the system's conditions);
    - "revive": true, to bring a fallen combatant back into the fight (``note`` says how it stands then).
    """

    field: str  # the key of GMAdjust's ``changes``
    label: str
    kind: str
    group: str
    value: Any = None  # what it is now
    low: float | None = None
    high: float | None = None
    whole: bool = True
    choices: list[GMFieldChoice] = []
    most: int | None = None
    nullable: bool = False
    note: str = ""


class GMOptions(msgspec.Struct, frozen=True, kw_only=True):
    commands: list[str]  # the GM command types
    calls: list[GMCall] = []
    adjustable: dict[str, list[str]] = {}  # combatant -> fields GMAdjust accepts
    can_skip: bool = False  # a turn runs, or a window waits
    sides: list[str] = []  # who may be named winner
    # combatant -> the fields a GM's form offers, grouped and described (a
    # fallen combatant's health fields are left out: it is revived instead).
    fields: dict[str, list[GMField]] = {}
    # The versions a RewindEncounter may go to now, oldest first: between two
    # commands (never inside a command's events), before the log's end, on the
    # branch that stands; those of the newest 20,000 versions. Filled where
    # the log is at hand (the API, `firelane options`); null where it is not
    # (the seat's Redis view): a refused rewind names the nearest versions.
    rewind_targets: list[int] | None = None


class Waiting(msgspec.Struct, frozen=True, kw_only=True):
    kind: str  # "start", "turn", "reactions", "ended"
    combatants: list[str] = []
    window: int | None = None
    deadline_ms: int | None = None


class ClientSeedOffer(msgspec.Struct, frozen=True, kw_only=True):
    """A player seat may still add its client seed (docs/fairness.md section 3):
    send ``command`` with a ``command_id`` and ``client_seed`` filled in."""

    command: dict[str, Any]  # AddClientSeed, its actor the seat itself
    max_chars: int  # 1 to this many printable characters


class SeatOptions(msgspec.Struct, frozen=True, kw_only=True):
    seat: str
    role: str
    version: int  # the log version these options hold for
    waiting: Waiting
    combatants: list[CombatantOptions] = []
    gm: GMOptions | None = None
    client_seed: ClientSeedOffer | None = None  # null unless a player seat may still add its client seed


OPTION_TYPES: tuple[type, ...] = (SeatOptions,)
