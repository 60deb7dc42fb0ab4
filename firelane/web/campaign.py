"""The campaign's routes of the web API (composed in web/app.py).

    GET  /api/campaigns/{c}/encounters[?page=P&per_page=N]   the roster (all of it, or one page)
    GET  /api/campaigns/{c}/characters                       the campaign's characters, as they stand
    GET  /api/campaigns/{c}/characters/{id}                  one character and its history
    POST /api/campaigns/{c}/characters/{id}/adjust    the GM's change to a character between fights
    POST /api/campaigns/{c}/characters/{id}/release   free it from an encounter that never started (or ended)

The reads take no token (like the roster). The two POSTs take the campaign's GM token (``Authorization: Bearer <token>``; the
token is made with the campaign's first character and printed by
``firelane campaign token``). Without it the answer is 401, with another
token 403, and a campaign that has no token yet answers 403 saying how to
make one. A seat's token is not the GM's token: it opens one encounter, not
the campaign's characters.

``adjust`` takes ``{"set": {"fate_points": 2, "name": "Kell"}, "add":
{"character_points": 1}, "unset": [...], "retire": false, "revive": false,
"reason": "...", "command_id": "..."}`` (all optional but the reason;
``command_id`` makes a retry safe) and answers ``{"event", "character"}``
(``event`` null when that command id was already applied). ``release`` takes
``{"reason": "..."}`` and answers what the release did. A refusal is
``{"error": one line}``: 400 for what the campaign's rules refuse, 404 for an
unknown character, 409 for a character in a fight.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from firelane.actors.campaign import adjust, gm_token_matches
from firelane.actors.release import release
from firelane.engine.campaign import Adjustment, CampaignError, CharacterBusy
from firelane.events.limits import MAX_COMMAND_BYTES, MAX_COMMAND_DEPTH, json_too_deep
from firelane.events.log import EventLog, validate_id
from firelane.web.access import Api, int_param, json_response, token_of
from firelane.web.guard import ApiError, read_body
from firelane.projections.characters import campaign_characters, character_history
from firelane.projections.roster import campaign_roster, roster_page

COMMAND_ID = re.compile(r"[A-Za-z0-9_.:@#-]{1,64}")  # as the engine takes them (actors/sequencer.py)


def campaign_routes(api: Api) -> list[Route]:
    async def roster(request: Request) -> Response:
        event_log = api.event_log(request.path_params["campaign"])
        if "page" not in request.query_params and "per_page" not in request.query_params:
            return json_response({"encounters": await campaign_roster(event_log)})
        page = await roster_page(event_log, int_param(request, "page", 1, low=1),
                                 int_param(request, "per_page", 100, low=1, high=1000))
        return json_response({"encounters": page.rows, "page": page.page, "per_page": page.per_page, "pages": page.pages,
                      "total": page.total})

    async def characters(request: Request) -> Response:
        return json_response(await campaign_characters(api.event_log(request.path_params["campaign"])))

    async def character(request: Request) -> Response:
        event_log = api.event_log(request.path_params["campaign"])
        try:
            found, history = await character_history(event_log, validate_id("character", request.path_params["character"]))
        except ValueError as exc:
            raise ApiError(400, str(exc)) from None
        except LookupError as exc:
            raise ApiError(404, str(exc)) from None
        return json_response({"character": found, "history": history})

    async def authorised(request: Request) -> tuple[EventLog, str]:
        """The campaign's log and the character named, once the GM's token is checked."""
        campaign = request.path_params["campaign"]
        event_log = api.event_log(campaign)
        try:
            character = validate_id("character", request.path_params["character"])
        except ValueError as exc:
            raise ApiError(400, str(exc)) from None
        token = token_of(request)
        if not token:
            raise ApiError(401, "this needs the campaign's GM token (Authorization: Bearer <token>; "
                                f"firelane campaign token --campaign {campaign})")
        matches = await gm_token_matches(event_log, token)
        if matches is None:
            raise ApiError(403, f"campaign {campaign!r} has no GM token yet: make one with "
                                f"firelane campaign token --campaign {campaign}")
        if not matches:
            raise ApiError(403, "this token is not the campaign's GM token")
        return event_log, character

    async def body_of(request: Request) -> dict[str, Any]:
        raw = await read_body(request, MAX_COMMAND_BYTES, "the request")
        if json_too_deep(raw, MAX_COMMAND_DEPTH):
            raise ApiError(400, f"the request nests deeper than {MAX_COMMAND_DEPTH} levels")
        try:
            body = msgspec.json.decode(raw)
        except (msgspec.DecodeError, UnicodeDecodeError) as exc:
            raise ApiError(400, f"the request is not valid JSON: {exc}") from None
        if not isinstance(body, dict):
            raise ApiError(400, "the request must be a JSON object")
        return body

    async def current(event_log: EventLog, character: str) -> Any:
        view = await campaign_characters(event_log)
        return next((c for c in view.characters if c.id == character), None)

    def refusal(exc: CampaignError) -> ApiError:
        if isinstance(exc, CharacterBusy):
            return ApiError(409, str(exc))
        if str(exc).startswith("no character "):
            return ApiError(404, str(exc))
        return ApiError(400, str(exc))

    async def adjust_route(request: Request) -> Response:
        event_log, character = await authorised(request)
        body = await body_of(request)
        command_id = body.pop("command_id", "")
        if not isinstance(command_id, str) or (command_id and not COMMAND_ID.fullmatch(command_id)):
            raise ApiError(400, "command_id must be 1-64 characters of A-Z a-z 0-9 _ . : @ # -")
        try:
            wanted = msgspec.convert(body, Adjustment)
        except msgspec.ValidationError as exc:
            raise ApiError(400, f"the adjustment: {exc}") from None
        try:
            written = await adjust(event_log, character, wanted, via="api", command_id=command_id)
        except CampaignError as exc:
            raise refusal(exc) from None
        return json_response({"event": written[0] if written else None, "character": await current(event_log, character)})

    async def release_route(request: Request) -> Response:
        event_log, character = await authorised(request)
        body = await body_of(request)
        unknown = sorted(set(body) - {"reason"})
        if unknown:
            raise ApiError(400, f"unknown field {unknown[0]!r} (the release takes: reason)")
        reason = body.get("reason", "")
        if not isinstance(reason, str):
            raise ApiError(400, "reason must be text")
        try:
            released = await release(event_log, [character], reason, via="api", finish_within_s=30.0)
        except CampaignError as exc:
            raise refusal(exc) from None
        return json_response({"released": released, "character": await current(event_log, character)})

    return [
        Route("/api/campaigns/{campaign}/encounters", roster),
        Route("/api/campaigns/{campaign}/characters", characters),
        Route("/api/campaigns/{campaign}/characters/{character}", character),
        Route("/api/campaigns/{campaign}/characters/{character}/adjust", adjust_route, methods=["POST"]),
        Route("/api/campaigns/{campaign}/characters/{character}/release", release_route, methods=["POST"]),
    ]
