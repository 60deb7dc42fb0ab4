"""Seats: who may send which command.

A seat is a channel into the engine: the GM's, a player's (with the combatants
that player controls), a spectator's (read only), and the engine's own (its AI
combatants and its housekeeping). A command's authority comes from the seat it
arrived through, never from a field of the command: the sequencer knows the
seat from the inbox stream the command was read from (each seat writes only to
its own, enforced by the HTTP API's token check or the seat's Redis ACL user).

`authorize` is the one place that decides it; it is pure, so the rules engine
stays free of any notion of transport.
"""

from __future__ import annotations

from firelane.events.schemas import Command, EncounterSetup, SeatSetup

ENGINE_SEAT = "engine"  # the engine's own inbox: AI combatants, the start command
SEQUENCER = "sequencer"  # the engine's housekeeping actor (and its command-id namespace)
GM = "gm"  # the actor of the GM's commands
SPECTATOR_SEAT = "spectator"
RESERVED_SEATS = frozenset({ENGINE_SEAT, SEQUENCER})
# Names the engine gives its own actors and seats: no combatant may take one
# (a command's actor, a command key's namespace and the page's lists would
# mistake one for the other).
RESERVED_ACTORS = frozenset({SEQUENCER, GM, ENGINE_SEAT, SPECTATOR_SEAT})
# A seat with one of these ids must have this role: the default seats take
# these ids, and two seats cannot share one.
ROLE_OF_SEAT_ID = {GM: "gm", SPECTATOR_SEAT: "spectator"}
ROLES = ("gm", "player", "spectator")


def default_seats(setup: EncounterSetup) -> list[SeatSetup]:
    """The seats of a setup: as given, completed with a GM seat and a
    spectator seat when missing; with none given, one player seat per side
    that has human combatants (named after the side)."""
    seats = list(setup.seats)
    if not seats:
        by_side: dict[str, list[str]] = {}
        for combatant in setup.combatants:
            if combatant.policy == "human":
                by_side.setdefault(combatant.side, []).append(combatant.id)
        seats = [SeatSetup(id=side, role="player", name=side, combatants=ids) for side, ids in by_side.items()]
    if not any(seat.role == "gm" for seat in seats):
        seats.insert(0, SeatSetup(id=GM, role="gm", name="GM"))
    if not any(seat.role == "spectator" for seat in seats):
        seats.append(SeatSetup(id=SPECTATOR_SEAT, role="spectator", name="spectators"))
    return seats


def seat_by_id(seats: list[SeatSetup], seat_id: str) -> SeatSetup | None:
    for seat in seats:
        if seat.id == seat_id:
            return seat
    return None


def seat_controlling(seats: list[SeatSetup], combatant: str) -> SeatSetup | None:
    for seat in seats:
        if combatant in seat.combatants:
            return seat
    return None


def authorize(seats: list[SeatSetup], combatants: dict[str, str], seat_id: str, command: Command) -> str | None:
    """Why ``seat_id`` may not send ``command``, or None when it may.
    ``combatants`` maps each combatant to its policy ("ai" or "human")."""
    actor = command.actor
    authority = type(command).authority
    ai_combatants = {cid for cid, policy in combatants.items() if policy == "ai"}
    if seat_id == ENGINE_SEAT:
        if actor == SEQUENCER or actor in ai_combatants:
            return None
        return f"the engine acts only for AI combatants, not {actor!r}"
    seat = seat_by_id(seats, seat_id)
    if seat is None:
        return f"unknown seat {seat_id!r}"
    if seat.role == "spectator":
        return f"seat {seat_id!r} is a spectator's: it can watch, not act"
    if actor == SEQUENCER or authority == "engine":
        return f"{type(command).__name__} with actor {actor!r} is the engine's alone"
    if authority == "seat":  # the seat acts as itself: the channel must be the seat it names
        if seat.role != "player":
            return f"{type(command).__name__} is a player seat's: seat {seat_id!r} is the {seat.role}'s"
        if actor != seat_id:
            return f"{type(command).__name__} names the sending seat as its actor: send it with actor {seat_id!r}"
        return None
    if authority == "gm" or actor == GM:
        if seat.role != "gm":
            return f"{type(command).__name__} is a GM command: only the GM seat may send it"
        if actor != GM:
            return f"{type(command).__name__} is a GM command: send it with actor {GM!r}"
        return None
    if actor in seat.combatants:
        return None
    if actor not in combatants:
        return f"unknown combatant {actor[:64]!r}"
    controls = ", ".join(seat.combatants) or "no combatants"
    return f"seat {seat_id!r} does not control {actor!r} (it controls: {controls})"
