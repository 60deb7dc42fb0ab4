"""Webhooks over the API (actors/hooks.py): a seat's, and a campaign's (its GM's).

    POST   /api/campaigns/{c}/encounters/{e}/hooks                 register one: {"url", "format", "kinds"}
    GET    /api/campaigns/{c}/encounters/{e}/hooks                 the seat's hooks
    DELETE /api/campaigns/{c}/encounters/{e}/hooks/{id}            remove one
    GET    /api/campaigns/{c}/encounters/{e}/hooks/{id}/deliveries its delivery log, newest first
    ...    /api/campaigns/{c}/hooks[/{id}[/deliveries]]            the same for the campaign, with its GM credential
                                                                    (its token, or the GM sign-in cookie with X-Firelane-CSRF)

A seat's token opens its own hooks only; the campaign's GM token, the
campaign's. Registering answers the hook's secret once (201): the receiver
checks each body's signature with it.
"""

from __future__ import annotations

import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from firelane.actors.hooks import (
    HookRefused,
    delivery_log,
    hook_json,
    owned_hooks,
    owner_key,
    register_hook,
    remove_hook,
)
from firelane.web.access import Api, json_response, token_of
from firelane.web.gm_session import require_gm
from firelane.web.guard import ApiError, read_body

MAX_HOOK_BODY = 8 * 1024


def hooks_routes(api: Api) -> list[BaseRoute]:
    async def owner(request: Request) -> tuple[str, str, str]:
        """(campaign, encounter, seat) whose hooks these are, once the token is checked."""
        campaign = request.path_params["campaign"]
        encounter = request.path_params.get("encounter", "")
        if encounter:
            seat, _system = await api.seat(campaign, encounter, token_of(request))
            if seat.role == "spectator":
                raise ApiError(403, "the spectators' seat has no hooks: a player's or the GM's seat registers them")
            return campaign, encounter, seat.id
        # The campaign's GM: its token, or a browser signed in as its GM (the workshop's campaign home).
        await require_gm(api, request, campaign)
        return campaign, "", ""

    async def hooks(request: Request) -> Response:
        campaign, encounter, seat = await owner(request)
        client = api.event_log(campaign).client
        if request.method == "POST":
            raw = await read_body(request, MAX_HOOK_BODY, "the hook")
            try:
                body = msgspec.json.decode(raw)
            except msgspec.DecodeError:
                raise ApiError(400, 'the hook is not JSON: send {"url": "https://...", "format": "json"}') from None
            if not isinstance(body, dict) or set(body) - {"url", "format", "kinds"}:
                raise ApiError(400, 'a hook is {"url": "https://...", "format": "json" | "discord" | "slack", '
                                    '"kinds": [...]}')
            try:
                hook = await register_hook(client, campaign=campaign, encounter=encounter, seat=seat,
                                           url=body.get("url"), format=body.get("format", "json"),
                                           allow_private=api.allow_private_hooks, kinds=body.get("kinds"))
            except HookRefused as exc:
                raise ApiError(400, str(exc)) from None
            return json_response({**hook_json(hook), "secret": hook.secret}, status=201)
        return json_response({"hooks": [hook_json(h) for h in await owned_hooks(client, owner_key(campaign, encounter, seat))]})

    async def one(request: Request) -> Response:
        campaign, encounter, seat = await owner(request)
        client = api.event_log(campaign).client
        hook_id = request.path_params["hook"]
        key = owner_key(campaign, encounter, seat)
        if not await client.execute("SISMEMBER", key, hook_id):
            raise ApiError(404, f"no hook {hook_id[:40]!r} of yours")
        if request.method == "DELETE":
            await remove_hook(client, key, hook_id)
            return json_response({"removed": hook_id})
        return json_response({"hook": hook_id, "deliveries": await delivery_log(client, hook_id)})

    encounter = "/api/campaigns/{campaign}/encounters/{encounter}/hooks"
    campaign = "/api/campaigns/{campaign}/hooks"
    return [
        Route(encounter, hooks, methods=["GET", "POST"]),
        Route(encounter + "/{hook}", one, methods=["DELETE"]),
        Route(encounter + "/{hook}/deliveries", one, methods=["GET"]),
        Route(campaign, hooks, methods=["GET", "POST"]),
        Route(campaign + "/{hook}", one, methods=["DELETE"]),
        Route(campaign + "/{hook}/deliveries", one, methods=["GET"]),
    ]


__all__ = ["hooks_routes"]
