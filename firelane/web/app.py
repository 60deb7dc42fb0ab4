"""The HTTP and WebSocket API of `firelane serve` (starlette on trio, served
by hypercorn): one module of routes per concern, composed here.

    GET  /api/health
    GET  /api/schema?system=S[&events=1]                     JSON Schema of commands (or events)
    GET  /api/openapi.json, /api/asyncapi.json               the published contract (web/contract.py)
    GET/POST /api/campaigns/{c}/encounters, characters, ...  the campaign (web/campaign.py)
    GET/POST/WS /api/campaigns/{c}/encounters/{e}/...        an encounter's seat (web/encounters.py)
    /api/workshop/...                                        the GM's workshop (web/workshop.py, docs/workshop-api.md)
    GET  /, /table/..., /characters/..., …/view, …/lines, …/preview   the table page (web/table.py)
    GET  /workshop/...                                       the GM's workshop pages (web/workshop_pages.py)

An event, on HTTP and on the WebSocket alike, is
``{"n": version, "type": tag, "c": command key, "k": causation, "data": {...}}``.
A client that reconnects with ``after`` = the last ``n`` it saw gets every
later event exactly once.

Every request passes the Host check, gets the security headers and, should a
route fail unexpectedly, a logged 500 (web/guard.py); POST bodies are read
under a cap (`read_body`); a refusal is ``{"error": one line}``.
"""

from __future__ import annotations


from typing import Any, Union

import msgspec
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.websockets import WebSocket

from firelane.engine.command_schema import command_schema
from firelane.engine.registry import UnknownSystem, get_system
from firelane.events.log import LogTampered
from firelane.events.schemas import GENERIC_EVENTS
from firelane.web.guard import ApiError, Guard, ServedNames
from firelane.redisio import RedisConnectionError, RedisError
from firelane.web import contract
from firelane.web.access import Api, json_response
from firelane.web.campaign import campaign_routes
from firelane.web.encounters import encounter_routes
from firelane.web.orders import orders_routes
from firelane.web.hooks import hooks_routes
from firelane.web.fairness import fairness_routes
from firelane.web.table import table_routes
from firelane.web.workshop import workshop_routes
from firelane.web.workshop_pages import workshop_page_routes


def make_app(api: Api, names: ServedNames | None = None) -> Starlette:
    """The API's app; it answers only to ``names`` (by default: localhost, 127.0.0.1 and [::1])."""
    async def health(request: Request) -> Response:
        return json_response({"ok": True})

    async def schema(request: Request) -> Response:
        try:
            system = get_system(request.query_params.get("system", "bolt-and-blade"))
        except UnknownSystem as exc:
            raise ApiError(404, UnknownSystem.__str__(exc)) from None
        if request.query_params.get("events"):
            target: Any = Union[tuple(GENERIC_EVENTS) + tuple(system.event_types)]  # noqa: UP007
        else:
            return json_response(command_schema([system]))  # the seats' commands (engine/command_schema.py)
        return json_response(msgspec.json.schema(target))

    async def openapi(request: Request) -> Response:
        """The OpenAPI 3.1 document of the HTTP API (web/contract.py), made from the app's own routes."""
        return json_response(contract.openapi_document(app.routes))

    async def asyncapi(request: Request) -> Response:
        """The AsyncAPI 3.0 document of the WebSocket and the Redis streams (web/contract.py)."""
        return json_response(contract.asyncapi_document())

    async def api_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, ApiError)
        return json_response({"error": exc.message}, status=exc.status)

    async def http_error(request: Request, exc: Exception) -> Response:
        """starlette's own refusals (no such route, a method a route does not take), as one line of JSON."""
        assert isinstance(exc, HTTPException)
        if exc.status_code == 404:
            message = f"nothing here: {request.url.path[:200]}"
        elif exc.status_code == 405:
            allowed = (exc.headers or {}).get("Allow", "")
            message = f"{request.method[:20]} is not allowed here" + (f" (allowed: {allowed})" if allowed else "")
        else:
            message = str(exc.detail)
        return Response(msgspec.json.encode({"error": message}), status_code=exc.status_code, headers=exc.headers,
                        media_type="application/json")

    async def redis_away(connection: Request | WebSocket, exc: Exception) -> Response | None:
        """Redis is out of reach or still loading its AOF (`firelane serve` restarts its own): 503, try again."""
        if isinstance(exc, RedisError) and exc.code not in ("LOADING", "BUSY"):
            raise exc
        if isinstance(connection, WebSocket):
            await connection.close(code=1013, reason="the store is restarting: reconnect with after=<last n>")
            return None
        return json_response({"error": "the store's Redis is not answering (it is being restarted); try again in a moment"},
                     status=503)

    async def tampered(request: Request, exc: Exception) -> Response:
        # The stored log contradicts itself (events/log.py): said, never served as if it were whole.
        return json_response({"error": str(exc)}, status=409)

    routes = [
        Route("/api/health", health),
        Route("/api/schema", schema),
        Route("/api/openapi.json", openapi),
        Route("/api/asyncapi.json", asyncapi),
        *campaign_routes(api),  # the roster, the characters, the GM's hand (web/campaign.py)
        *encounter_routes(api),  # a seat's view, commands and WebSocket (web/encounters.py)
        *orders_routes(api),  # a seat's standing orders (web/orders.py)
        *hooks_routes(api),  # webhooks of a seat or a campaign (web/hooks.py)
        *fairness_routes(api),  # the log's signing key and its entries as stored, for verifiers (web/fairness.py)
        *workshop_routes(api),  # the GM's workshop: drafts, lobby, characters (web/workshop.py, docs/workshop-api.md)
        *table_routes(api),  # the page at / and /table/..., its assets, and GET …/view (web/table.py)
        *workshop_page_routes(),  # the GM's workshop pages at /workshop/... (web/workshop_pages.py)
    ]
    app = Starlette(routes=routes,
                     exception_handlers={ApiError: api_error, LogTampered: tampered, HTTPException: http_error,
                                         RedisConnectionError: redis_away, RedisError: redis_away},
                     middleware=[Middleware(Guard, names=names if names is not None else ServedNames())])
    return app


__all__ = ["Api", "make_app"]
