"""Standing orders: a seat's answers declared in advance, for when it is away.

A seat gives each of its combatants orders. When a reaction window opens for
one and no live answer comes before the deadline, the first of its orders
that fits answers for it; when its own turn times out, its turn order says
how the turn is spent. A live answer inside the window always wins: orders
are read only at the deadline.

An order names when it applies (``on``) and what it does (``do``):

- ``on``: a window kind of the rule system (its catalogue, each system's
  ``orders.py``: "fire_lane", "ranged_hit"...), ``"any"`` (any window), or
  ``"turn"`` (its own turn, when the turn timer runs out);
- ``do``: for a window, a reaction the kind offers (claimed with its first
  legal choice: "Reactive Fire at the first enemy crossing my lane") or
  ``"pass"``; an order whose reaction is not offered this time ("Dive for
  Cover when hit if cover is within reach": no cover, no dive offered) is
  skipped for the next one. For a turn: ``"end_turn"``, ``"ai"`` (the AI
  plays it), ``"gm"`` (the GM is asked) or an action of the catalogue's
  ``turn_actions`` (taken with its first legal choice, then the turn ends);
- ``times``: 0 for every time, or how many times it may answer ("the
  first enemy": 1).

Pure: the orders are kept off the log (they are the seat's secret until used:
`firelane/actors/orders.py`); an answer an order makes is the seat's answer
in the log, citing the order (its causation ``order:<seat>:<id>``).
"""

from __future__ import annotations

from typing import Any

import msgspec

from firelane.engine.seats import seat_by_id
from firelane.engine.state import EncounterState
from firelane.events.schemas import Command, PassReaction

# (A rule system is typed Any here: engine/core.py imports this module.)
BaseRuleSystem = Any

ANY_WINDOW = "any"
TURN = "turn"
PASS = "pass"
TURN_DOINGS = {"end_turn": "end the turn", "ai": "let the AI play it", "gm": "ask the GM"}
MAX_ORDERS_PER_SEAT = 64
MAX_TIMES = 1000


class StandingOrder(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    combatant: str
    on: str
    do: str
    times: int = 0  # 0: every time; else how many times it may answer
    id: str = ""  # given when stored ("o1", "o2"...): what the log cites


class WindowKind(msgspec.Struct, frozen=True, kw_only=True):
    """A kind of window a system opens (``trigger``; a kind ending in ":"
    matches every trigger it begins, "hit:" for "hit:basic_attack"), in
    words, and the reactions it may offer."""

    trigger: str
    label: str
    reactions: tuple[str, ...]

    def matches(self, trigger: str) -> bool:
        return trigger.startswith(self.trigger) if self.trigger.endswith(":") else trigger == self.trigger


class OrderCatalogue(msgspec.Struct, frozen=True, kw_only=True):
    """What orders a system takes: its window kinds, and the actions a turn
    order may take (command type -> words)."""

    windows: tuple[WindowKind, ...] = ()
    turn_actions: dict[str, str] = {}

    def kind(self, on: str) -> WindowKind | None:
        return next((k for k in self.windows if k.trigger == on), None)


def check_orders(system: BaseRuleSystem, seats: list, seat_id: str, orders: list[StandingOrder]) -> str | None:
    """Why a seat may not give these orders (one line), or None."""
    seat = seat_by_id(seats, seat_id)
    if seat is None or seat.role != "player":
        return "only a player's seat gives standing orders (for the combatants it controls)"
    if len(orders) > MAX_ORDERS_PER_SEAT:
        return f"at most {MAX_ORDERS_PER_SEAT} standing orders per seat, not {len(orders)}"
    catalogue: OrderCatalogue = system.orders
    for index, order in enumerate(orders):
        where = f"orders[{index}]"
        if order.combatant not in seat.combatants:
            controls = ", ".join(seat.combatants) or "none"
            return f"{where}.combatant: seat {seat_id} does not control {order.combatant[:40]!r} (it controls: {controls})"
        if not 0 <= order.times <= MAX_TIMES:
            return f"{where}.times: must be from 0 (every time) to {MAX_TIMES}, not {order.times}"
        if order.on == TURN:
            if order.do not in TURN_DOINGS and order.do not in catalogue.turn_actions:
                known = [*TURN_DOINGS, *catalogue.turn_actions]
                return f"{where}.do: a turn order does one of {', '.join(known)}, not {order.do[:40]!r}"
            continue
        if order.on == ANY_WINDOW:
            reactions = sorted({r for kind in catalogue.windows for r in kind.reactions} | set(system.reaction_priority))
        else:
            kind = catalogue.kind(order.on)
            if kind is None:
                known = [ANY_WINDOW, TURN, *(k.trigger for k in catalogue.windows)]
                return f"{where}.on: {system.title} has no window {order.on[:40]!r} (known: {', '.join(known)})"
            reactions = list(kind.reactions)
        if order.do != PASS and order.do not in reactions:
            return f"{where}.do: {order.on} takes {', '.join([PASS, *reactions])}, not {order.do[:40]!r}"
    return None


def describe_order(system: BaseRuleSystem, names: dict[str, str], order: StandingOrder) -> str:
    """An order in words: "Kell: when an enemy crosses my fire lane, Reactive Fire (once)"
    (``names``: combatant -> its name)."""
    name = names.get(order.combatant) or order.combatant
    catalogue: OrderCatalogue = system.orders
    reactions = system.labels.reactions
    if order.on == TURN:
        doing = TURN_DOINGS.get(order.do) or catalogue.turn_actions.get(order.do, order.do)
        when = "when my turn runs out of time"
    else:
        kind = catalogue.kind(order.on)
        when = "in any window" if order.on == ANY_WINDOW else f"when {kind.label if kind else order.on}"
        doing = "pass" if order.do == PASS else reactions.get(order.do, order.do.replace("_", " "))
    times = "" if not order.times else " (once)" if order.times == 1 else f" (the first {order.times} times)"
    return f"{name}: {when}, {doing}{times}"


def window_answer(system: BaseRuleSystem, state: EncounterState, combatant: str, orders: list[StandingOrder],
                  used: dict[str, int], union: Any) -> tuple[StandingOrder, Command] | None:
    """The answer the first fitting order gives for ``combatant`` in the open window, or None."""
    window = state.window
    if window is None:
        return None
    catalogue: OrderCatalogue = system.orders
    offered = None
    for order in orders:
        if order.combatant != combatant or order.on == TURN:
            continue
        if order.times and used.get(order.id, 0) >= order.times:
            continue
        if order.on != ANY_WINDOW:
            kind = catalogue.kind(order.on)
            if kind is None or not kind.matches(window.trigger):
                continue
        if order.do == PASS:
            return order, PassReaction(command_id="", actor=combatant, window=window.window)
        if offered is None:
            offered = system.reaction_options(state, window, combatant)
        option = next((o for o in offered if o.reaction == order.do and o.choices), None)
        if option is None:
            continue  # not offered this time: the next order may fit
        return order, msgspec.convert({**option.choices[0].command, "command_id": ""}, union)
    return None


def turn_answer(system: BaseRuleSystem, state: EncounterState, combatant: str, seat_id: str,
                orders: list[StandingOrder], used: dict[str, int], union: Any) -> tuple[StandingOrder, str | Command] | None:
    """What the first fitting turn order does when ``combatant``'s turn times
    out: "end_turn", "ai" or "gm", or the command of an action (its first
    legal choice), or None."""
    for order in orders:
        if order.combatant != combatant or order.on != TURN:
            continue
        if order.times and used.get(order.id, 0) >= order.times:
            continue
        if order.do in TURN_DOINGS:
            return order, order.do
        for option in system.options(state, seat_id).combatants:
            if option.combatant != combatant:
                continue
            action = next((a for a in option.actions if a.action == order.do and a.choices), None)
            if action is not None:
                return order, msgspec.convert({**action.choices[0].command, "command_id": ""}, union)
    return None
