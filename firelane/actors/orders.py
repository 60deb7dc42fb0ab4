"""Where standing orders are kept (engine/orders.py says what they are).

Off the log, in Redis: the log is readable by every seat, and a seat's
orders are its own until one answers for it (then the log cites it). Per
encounter:

- ``…:orders``: hash seat -> its orders (a JSON list, each with its id);
- ``…:orders-used``: hash "<seat>:<order id>" -> how often it answered;
- ``…:orders-next``: the counter the ids come from ("o1", "o2"...), so an
  id is never reused and the log's citation names one order only.
"""

from __future__ import annotations

import msgspec

from firelane.engine.orders import (
    ANY_WINDOW,
    PASS,
    TURN,
    TURN_DOINGS,
    OrderCatalogue,
    StandingOrder,
    check_orders,
    describe_order,
)
from firelane.engine.registry import get_system
from firelane.engine.seats import default_seats, seat_by_id
from firelane.events import codec
from firelane.events.log import EventLog


def orders_key(campaign: str, encounter: str, what: str = "orders") -> str:
    return f"firelane:{{{campaign}}}:enc:{encounter}:{what}"


_decode_orders = msgspec.json.Decoder(list[StandingOrder])


async def load_orders(event_log: EventLog, encounter: str, seat: str) -> list[StandingOrder]:
    raw = await event_log.client.execute("HGET", orders_key(event_log.campaign, encounter), seat)
    if not raw:
        return []
    try:
        return _decode_orders.decode(raw)
    except msgspec.DecodeError:
        return []  # only the API writes here, checked: never the engine's failure


async def orders_used(event_log: EventLog, encounter: str, seat: str) -> dict[str, int]:
    raw = await event_log.client.execute("HGETALL", orders_key(event_log.campaign, encounter, "orders-used")) or []
    prefix = f"{seat}:"
    used = {}
    for index in range(0, len(raw), 2):
        field = raw[index].decode()
        if field.startswith(prefix):
            used[field[len(prefix):]] = int(raw[index + 1])
    return used


async def save_orders(event_log: EventLog, encounter: str, seat: str, orders: list[StandingOrder]) -> list[StandingOrder]:
    """Keep the seat's orders (they replace its earlier ones); an order keeps
    its id only if it is one of the seat's orders already (edited), else it
    gets a new one, so the log's citation of an id names one order. Returns
    them as kept."""
    known = {order.id for order in await load_orders(event_log, encounter, seat)}
    kept: list[StandingOrder] = []
    for order in orders:
        if order.id not in known or any(k.id == order.id for k in kept):
            number = await event_log.client.execute("INCR", orders_key(event_log.campaign, encounter, "orders-next"))
            order = msgspec.structs.replace(order, id=f"o{number}")
        kept.append(order)
    await event_log.client.execute("HSET", orders_key(event_log.campaign, encounter), seat, msgspec.json.encode(kept))
    return kept


async def note_used(event_log: EventLog, encounter: str, seat: str, order_id: str) -> None:
    await event_log.client.execute("HINCRBY", orders_key(event_log.campaign, encounter, "orders-used"),
                                   f"{seat}:{order_id}", 1)


class OrdersRefused(ValueError):
    """Orders a seat may not give: one line naming what is wrong."""


def catalogue_json(system) -> dict:
    """The orders a system takes, in words, for an editor: each window kind
    with its reactions, and what a turn order may do."""
    reactions = system.labels.reactions
    catalogue: OrderCatalogue = system.orders
    windows = [{"on": ANY_WINDOW, "label": "any window",
                "do": [{"do": PASS, "label": "pass"}] + [
                    {"do": r, "label": reactions.get(r, r.replace("_", " "))}
                    for r in sorted({r for k in catalogue.windows for r in k.reactions} | set(system.reaction_priority))]}]
    windows += [{"on": kind.trigger, "label": kind.label,
                 "do": [{"do": PASS, "label": "pass"}] + [{"do": r, "label": reactions.get(r, r.replace("_", " "))}
                                                          for r in kind.reactions]}
                for kind in catalogue.windows]
    turn = [{"do": do, "label": label} for do, label in {**TURN_DOINGS, **catalogue.turn_actions}.items()]
    return {"windows": windows, "turn": {"on": TURN, "label": "my turn runs out of time", "do": turn}}


async def _table(event_log: EventLog, encounter: str):
    first = await event_log.read(encounter, count=1)
    if not first:
        raise OrdersRefused(f"encounter {encounter!r} has not started: its seats give orders once it has")
    setup = codec.decode_event(first[0]).setup  # type: ignore[attr-defined]
    return setup, default_seats(setup), get_system(setup.system)


async def seat_orders(event_log: EventLog, encounter: str, seat_id: str) -> dict:
    """A seat's orders (each with its words and how often it answered), the
    combatants it controls and the catalogue: what the API and CLI show."""
    setup, seats, system = await _table(event_log, encounter)
    seat = seat_by_id(seats, seat_id)
    names = {c.id: c.name or c.id for c in setup.combatants}
    orders = await load_orders(event_log, encounter, seat_id)
    used = await orders_used(event_log, encounter, seat_id)
    return {
        "seat": seat_id,
        "combatants": [{"id": c, "name": names.get(c, c)} for c in (seat.combatants if seat else [])],
        "orders": [{**msgspec.to_builtins(o), "used": used.get(o.id, 0),
                    "text": describe_order(system, names, o)}
                   for o in orders],
        "catalogue": catalogue_json(system),
    }


async def set_seat_orders(event_log: EventLog, encounter: str, seat_id: str, body: bytes) -> dict:
    """Replace a seat's orders with those of ``body`` (``{"orders": [...]}``),
    checked against the seat and the system: OrdersRefused says why not."""
    _setup, seats, system = await _table(event_log, encounter)
    try:
        given = msgspec.json.decode(body, type=_OrdersBody)
    except msgspec.ValidationError as exc:
        raise OrdersRefused(f"orders: {str(exc)[:200]}") from None
    except msgspec.DecodeError:
        raise OrdersRefused('orders: not JSON (send {"orders": [{"combatant": ..., "on": ..., "do": ...}]})') from None
    problem = check_orders(system, seats, seat_id, given.orders)
    if problem is not None:
        raise OrdersRefused(problem)
    await save_orders(event_log, encounter, seat_id, given.orders)
    return await seat_orders(event_log, encounter, seat_id)


class _OrdersBody(msgspec.Struct, forbid_unknown_fields=True):
    orders: list[StandingOrder]
