"""Checking a setup in full before anything is stored.

`check_setup` runs every check an encounter's start makes (the system's own,
its sheets included) and those the rules take for granted: the map's bounds,
walls, one combatant per square, sane sizes, seats that make sense. A bad
setup is refused with one line naming the field, and nothing is registered,
so the encounter ID stays free.

`decode_setup` (and `convert_setup`, for JSON already parsed) reads setup JSON with hard limits on size and nesting first, so
a hostile or broken file cannot exhaust memory or the stack, and refuses a
field it does not know at any level a person writes (the setup, its terrain,
walls, cover, combatants and seats): a misspelt field would otherwise be
silently left out. (Stored logs decode `EncounterSetup` leniently, as ever:
only what a person gives is checked this strictly.)
"""

from __future__ import annotations

import re
from typing import Any

import msgspec
import msgspec.inspect

from firelane.engine.core import BaseRuleSystem, Rejected
from firelane.engine.dice import SeededDice
from firelane.engine.seats import RESERVED_ACTORS, RESERVED_SEATS, ROLE_OF_SEAT_ID, ROLES, default_seats
from firelane.events.limits import MAX_SETUP_BYTES, MAX_SETUP_DEPTH, json_too_deep
from firelane.events.schemas import EncounterSetup, StartEncounter

_SEAT_OF_ROLE = {"gm": "the GM's", "spectator": "the spectators'"}
MAX_COMBATANTS = 200
MAX_MAP_SIDE = 500
MAX_NAME = 200
_ID = re.compile(r"[A-Za-z0-9_.-]{1,64}")


class SetupError(ValueError):
    """A setup that cannot be played; the message names the field."""


def decode_setup(raw: bytes, *, source: str = "setup") -> EncounterSetup:
    """Parse setup JSON within the limits; SetupError names what is wrong."""
    if len(raw) > MAX_SETUP_BYTES:
        raise SetupError(f"{source} is {len(raw):,} bytes; the limit is {MAX_SETUP_BYTES:,}")
    if json_too_deep(raw, MAX_SETUP_DEPTH):
        raise SetupError(f"{source} nests deeper than {MAX_SETUP_DEPTH} levels")
    try:
        setup = msgspec.json.decode(raw, type=EncounterSetup)
    except msgspec.ValidationError as exc:
        raise SetupError(f"{source}: {_path_message(str(exc))}") from None
    except msgspec.DecodeError as exc:
        raise SetupError(f"{source} is not valid JSON: {exc}") from None
    unknown = unknown_field(msgspec.json.decode(raw), _setup_info(), "")
    if unknown:
        raise SetupError(f"{source}: {unknown}")
    return setup


def convert_setup(value: Any, *, source: str = "setup") -> EncounterSetup:
    """`decode_setup` for setup JSON already parsed (within the limits) by its
    caller, e.g. a part of a request's body: the same checks, the same lines."""
    try:
        setup = msgspec.convert(value, EncounterSetup)
    except msgspec.ValidationError as exc:
        raise SetupError(f"{source}: {_path_message(str(exc))}") from None
    unknown = unknown_field(value, _setup_info(), "")
    if unknown:
        raise SetupError(f"{source}: {unknown}")
    return setup


_SETUP_INFO: list[msgspec.inspect.Type] = []


def _setup_info() -> msgspec.inspect.Type:
    """The setup's schema as msgspec describes it (made once: it costs more than a decode)."""
    if not _SETUP_INFO:
        _SETUP_INFO.append(msgspec.inspect.type_info(EncounterSetup))
    return _SETUP_INFO[0]


def unknown_field(value: Any, info: msgspec.inspect.Type, path: str) -> str | None:
    """The first field of ``value`` (decoded JSON) that its schema ``info``
    does not have, named by its path, with the fields it does have; or None.
    Free-form parts (a sheet, the settings: their systems check them) are not looked into."""
    while isinstance(info, msgspec.inspect.UnionType):  # an optional part: the struct, if any
        structs = [t for t in info.types if not isinstance(t, msgspec.inspect.NoneType)]
        if len(structs) != 1:
            return None
        info = structs[0]
    if isinstance(info, msgspec.inspect.StructType) and isinstance(value, dict):
        fields = {field.encode_name: field for field in info.fields}
        for key, item in value.items():
            where = f"{path}.{key}" if path else key
            field = fields.get(key)
            if field is None:
                return f"{where}: unknown field; known: {', '.join(fields)}"
            problem = unknown_field(item, field.type, where)
            if problem:
                return problem
    elif isinstance(info, (msgspec.inspect.ListType, msgspec.inspect.VarTupleType)) and isinstance(value, list):
        for index, item in enumerate(value):
            problem = unknown_field(item, info.item_type, f"{path}[{index}]")
            if problem:
                return problem
    return None


def _path_message(message: str) -> str:
    # msgspec says "Expected `int`, got `str` - at `$.combatants[0].position[0]`".
    text, _, path = message.partition(" - at `$")
    return f"{path.rstrip('`').lstrip('.') or 'top level'}: {text}" if path else text


def check_setup(system: BaseRuleSystem, setup: EncounterSetup) -> EncounterSetup:
    """The setup as it will start (seats completed, catalogue entries inlined),
    or SetupError naming the first field that is wrong."""
    if setup.system != system.name:
        raise SetupError(f"setup.system: {setup.system!r} is not {system.name!r}")
    terrain = setup.terrain
    width, height = terrain.width, terrain.height
    for name, value in (("width", width), ("height", height)):
        if not 1 <= value <= MAX_MAP_SIDE:
            raise SetupError(f"terrain.{name}: must be 1 to {MAX_MAP_SIDE} squares (got {value})")
    if not terrain.square_size > 0:
        raise SetupError(f"terrain.square_size: must be positive (got {terrain.square_size})")

    def in_bounds(x: int, y: int) -> bool:
        return 0 <= x < width and 0 <= y < height

    walls = set()
    for index, wall in enumerate(terrain.walls):
        if not in_bounds(wall.x, wall.y):
            raise SetupError(f"terrain.walls[{index}]: ({wall.x}, {wall.y}) is outside the {width}x{height} map")
        walls.add((wall.x, wall.y))
    for index, cover in enumerate(terrain.cover):
        if not in_bounds(cover.x, cover.y):
            raise SetupError(f"terrain.cover[{index}]: ({cover.x}, {cover.y}) is outside the {width}x{height} map")
        for facing in cover.facing:
            if tuple(facing) == (0, 0) or any(abs(part) > 1 for part in facing):
                raise SetupError(f"terrain.cover[{index}].facing: {list(facing)} is not a unit grid direction")
    for index, square in enumerate(terrain.difficult):
        if not in_bounds(*square):
            raise SetupError(f"terrain.difficult[{index}]: {tuple(square)} is outside the {width}x{height} map")

    if len(setup.combatants) > MAX_COMBATANTS:
        raise SetupError(f"combatants: {len(setup.combatants)} is more than the limit of {MAX_COMBATANTS}")
    if len(setup.name) > MAX_NAME:
        raise SetupError(f"name: longer than {MAX_NAME} characters")
    occupied: dict[tuple[int, int], str] = {}
    for index, combatant in enumerate(setup.combatants):
        where = f"combatants[{index}]"
        if not _ID.fullmatch(combatant.id):
            raise SetupError(f"{where}.id: {combatant.id[:80]!r} must be 1-64 characters of A-Z a-z 0-9 _ . -")
        if combatant.id in RESERVED_ACTORS:
            raise SetupError(f"{where}.id: {combatant.id!r} is reserved (the engine's own names: "
                             f"{', '.join(sorted(RESERVED_ACTORS))})")
        where = f"combatants[{index}] ({combatant.id})"
        if combatant.character and not combatant.name:
            # Resolution (actors/campaign.py) always writes the character's name in.
            raise SetupError(f"{where}.character: names campaign character {combatant.character[:64]!r}, which only "
                             f"an encounter created in a campaign can use (firelane create/run)")
        if not combatant.name or len(combatant.name) > MAX_NAME:
            raise SetupError(f"{where}.name: must be 1 to {MAX_NAME} characters")
        if not _ID.fullmatch(combatant.side):
            raise SetupError(f"{where}.side: {combatant.side[:80]!r} must be 1-64 characters of A-Z a-z 0-9 _ . -")
        if combatant.position is None:
            continue
        x, y = combatant.position
        if not in_bounds(x, y):
            raise SetupError(f"{where}.position: ({x}, {y}) is outside the {width}x{height} map")
        if (x, y) in walls:
            raise SetupError(f"{where}.position: ({x}, {y}) is inside a wall")
        if (x, y) in occupied:
            raise SetupError(f"{where}.position: ({x}, {y}) is already taken by {occupied[(x, y)]}")
        occupied[(x, y)] = combatant.id

    _check_seats(setup)

    # Every check the start makes: the system's own (sheets, settings, policies...).
    start = StartEncounter(command_id="check", actor="sequencer", setup=setup, seed_commitment="")
    try:
        events = system.decide(system.initial_state(), start, SeededDice(b"setup-check", 0))
    except Rejected as rejection:
        raise SetupError(rejection.reason) from None
    return events[0].setup  # type: ignore[attr-defined]  # EncounterStarted's resolved setup


def _check_seats(setup: EncounterSetup) -> None:
    combatants = {c.id: c for c in setup.combatants}
    seen: set[str] = set()
    controlled: dict[str, str] = {}
    for index, seat in enumerate(setup.seats):
        where = f"seats[{index}]"
        if not _ID.fullmatch(seat.id):
            raise SetupError(f"{where}.id: {seat.id[:80]!r} must be 1-64 characters of A-Z a-z 0-9 _ . -")
        if seat.id in RESERVED_SEATS:
            raise SetupError(f"{where}.id: {seat.id!r} is reserved for the engine")
        if ROLE_OF_SEAT_ID.get(seat.id, seat.role) != seat.role:
            role = ROLE_OF_SEAT_ID[seat.id]
            raise SetupError(f"{where}.id: {seat.id!r} is the id of {_SEAT_OF_ROLE[role]} seat: give it role "
                             f"{role!r}, or another id")
        if seat.id in seen:
            raise SetupError(f"{where}.id: seat {seat.id!r} appears twice")
        seen.add(seat.id)
        if seat.role not in ROLES:
            raise SetupError(f"{where}.role: {seat.role[:40]!r} is not one of {', '.join(ROLES)}")
        if seat.role == "spectator" and seat.combatants:
            raise SetupError(f"{where}.combatants: a spectator seat controls no combatants")
        for combatant_id in seat.combatants:
            combatant = combatants.get(combatant_id)
            if combatant is None:
                raise SetupError(f"{where}.combatants: {combatant_id[:80]!r} is not a combatant of this setup")
            if combatant.policy != "human":
                raise SetupError(
                    f"{where}.combatants: {combatant_id!r} has policy {combatant.policy!r}; a seat controls "
                    f"only \"human\" combatants (AI ones belong to the engine)")
            if combatant_id in controlled:
                raise SetupError(f"{where}.combatants: {combatant_id!r} is already controlled by seat {controlled[combatant_id]!r}")
            controlled[combatant_id] = seat.id
    if setup.seats:
        for combatant in setup.combatants:
            if combatant.policy == "human" and combatant.id not in controlled:
                raise SetupError(f"combatants ({combatant.id}): it is \"human\" but no seat controls it")
    else:
        # Each side with human combatants gets a player seat named after it.
        for index, combatant in enumerate(setup.combatants):
            if combatant.policy == "human" and (combatant.side in RESERVED_SEATS or combatant.side in ROLE_OF_SEAT_ID):
                raise SetupError(f"combatants[{index}] ({combatant.id}).side: {combatant.side!r} would name its "
                                 f"players' seat, and that name is the engine's own; give the side another name, "
                                 f"or list the setup's seats")
    if sum(1 for seat in default_seats(setup) if seat.role == "gm") > 1:
        raise SetupError("seats: only one seat may be the GM's")
