"""A seat's standing orders over the API (engine/orders.py, actors/orders.py).

    GET /api/campaigns/{c}/encounters/{e}/orders   the seat's orders, its combatants, the system's catalogue
    PUT /api/campaigns/{c}/encounters/{e}/orders   replace them: {"orders": [{"combatant", "on", "do", "times"}]}

The seat's token names the seat; a seat sees and sets its own orders only
(they are its secret until one answers for it, when the log cites it).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from firelane.actors.orders import OrdersRefused, seat_orders, set_seat_orders
from firelane.web.access import Api, json_response, token_of
from firelane.web.guard import ApiError, read_body

MAX_ORDERS_BODY = 32 * 1024


def orders_routes(api: Api) -> list[BaseRoute]:
    async def orders(request: Request) -> Response:
        campaign, encounter = request.path_params["campaign"], request.path_params["encounter"]
        seat, _system = await api.seat(campaign, encounter, token_of(request))
        event_log = api.event_log(campaign)
        try:
            if request.method == "PUT":
                body = await read_body(request, MAX_ORDERS_BODY, "standing orders")
                return json_response(await set_seat_orders(event_log, encounter, seat.id, body))
            return json_response(await seat_orders(event_log, encounter, seat.id))
        except OrdersRefused as exc:
            raise ApiError(400 if request.method == "PUT" else 409, str(exc)) from None

    return [Route("/api/campaigns/{campaign}/encounters/{encounter}/orders", orders, methods=["GET", "PUT"])]


__all__ = ["orders_routes"]
