"""Who is where: one combatant to a square, in every rule system (issue 19).

None of the rule texts lets two combatants share a square, so none may: a
move may pass where its system allows (Bolt & Blade lets a mover pass an
ally's square, BB-CMB-06 says nothing against it; the percentile systems and
RonD6 let nobody pass a standing combatant), but it never ends on a square
someone holds.

A downed combatant still lies on its square and still holds it for the end
of a move: the texts keep the fallen in the scene, to be aided, stabilised or
healed where they lie (Bolt & Blade: "down ... unable to continue without
aid", BB-CORE-09; D100Z-14 first aid "stabilises an unconscious ally"; the
d100-degrees text walks an attack "through empty spaces", and a body's square
is not empty; RonD6: the Incapacitated and Mortally Wounded are treated where
they fell, R6-21/R6-43), and a GM's revive stands them up there. A body may be
stepped over (passed), never ended on. Each system's page in docs/systems
says the same.

A mover stopped part-way along its path (Bolt & Blade's "stop now" after
Reactive Fire, BB-CMB-12; an Overwatch hit, BB-CMB-13) stops on the last
square of the path walked so far that it may end on (`last_free_square`).

Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable

from firelane.engine.grid import Square
from firelane.engine.state import EncounterState


def square_of(position: Iterable[int]) -> Square:
    x, y = position
    return (int(x), int(y))


def standing_squares(state: EncounterState, *, besides: Iterable[str] = ()) -> dict[Square, str]:
    """Every square a standing combatant holds (the first by ID where, against
    these rules, two do), besides the combatants named."""
    skip = set(besides)
    held: dict[Square, str] = {}
    for cid in sorted(state.combatants):
        who = state.combatants[cid]
        if cid not in skip and who.position is not None and not who.out_of_fight:
            held.setdefault(square_of(who.position), cid)
    return held


def taken_squares(state: EncounterState, *, besides: Iterable[str] = ()) -> dict[Square, str]:
    """Every square a move may not end on: held by anyone on the map, standing
    or down (standing first, then the first by ID), besides the combatants named."""
    skip = set(besides)
    held = standing_squares(state, besides=skip)
    for cid in sorted(state.combatants):
        who = state.combatants[cid]
        if cid not in skip and who.position is not None and who.out_of_fight:
            held.setdefault(square_of(who.position), cid)
    return held


def bodies(state: EncounterState, *, besides: Iterable[str] = ()) -> dict[Square, str]:
    """The squares where only a downed combatant lies: passable, but no end of a move."""
    standing = standing_squares(state, besides=besides)
    return {square: cid for square, cid in taken_squares(state, besides=besides).items() if square not in standing}


def last_free_square(start: Square, walked: list[Square], taken: Iterable[Square]) -> Square:
    """Where a mover that set out from ``start`` and entered ``walked`` (in order)
    may stop: the last of those squares no one else holds, else ``start``."""
    blocked = set(taken)
    for square in reversed(walked):
        if square_of(square) not in blocked:
            return square_of(square)
    return square_of(start)


def trim_to_free_end(path: list[Square], taken: Iterable[Square]) -> list[Square]:
    """``path`` cut back so it ends on a square no one holds (empty: stay put)."""
    blocked = set(taken)
    end = len(path)
    while end > 0 and square_of(path[end - 1]) in blocked:
        end -= 1
    return list(path[:end])


def shared_squares(state: EncounterState, *, standing_only: bool = True) -> dict[Square, list[str]]:
    """Squares two or more combatants share (standing ones only, by default):
    what these rules never allow; for checks and tests."""
    found: dict[Square, list[str]] = {}
    for cid in sorted(state.combatants):
        who = state.combatants[cid]
        if who.position is not None and not (standing_only and who.out_of_fight):
            found.setdefault(square_of(who.position), []).append(cid)
    return {square: ids for square, ids in found.items() if len(ids) > 1}
