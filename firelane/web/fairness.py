"""The routes anyone at the table uses to check a fight (docs/fairness.md):

    GET /api/campaigns/{c}/encounters/{e}/signing-key          the public key the log is signed with
    GET /api/campaigns/{c}/encounters/{e}/log?after=ID&limit=N  the log's entries as stored (every field but h)

Both take any seat's token (the spectator's too), as the other reads do. The
page's verifier (assets/fairness.js) reads them; so can any client.
"""

from __future__ import annotations

import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from firelane.actors.fairness import key_description, published_log_key, raw_entry
from firelane.web.access import Api, int_param, json_response, token_of
from firelane.web.guard import ApiError

_ENTRY_ID = "0123456789-"


class SigningKeyAnswer(msgspec.Struct, kw_only=True):
    """The key the encounter's log is signed with ("" for a log started unsigned)."""

    algorithm: str  # "Ed25519"
    public_key: str  # 64 hex digits, the raw 32-byte key
    fingerprint: str  # the first 16 bytes of its SHA-256, as 8 dash-joined groups of 4 hex digits


class LogEntry(msgspec.Struct, kw_only=True):
    """One log entry as stored (docs/fairness.md): what its signature covers."""

    id: str  # the Redis stream entry id (page on with ?after=)
    n: int
    t: str
    s: int
    d: str  # the event's JSON, as stored: sign and hash these bytes, do not re-encode
    c: str
    k: str
    q: str
    g: str  # the signature closing a group ("" on the other entries)


class LogPage(msgspec.Struct, kw_only=True):
    campaign: str
    encounter: str
    version: int  # the log's version counter (its last version)
    entries: list[LogEntry]


def fairness_routes(api: Api) -> list[BaseRoute]:
    async def signing_key(request: Request) -> Response:
        campaign, encounter = request.path_params["campaign"], request.path_params["encounter"]
        await api.seat(campaign, encounter, token_of(request))
        return json_response(SigningKeyAnswer(**key_description(await published_log_key(api.event_log(campaign), encounter))))

    async def log(request: Request) -> Response:
        campaign, encounter = request.path_params["campaign"], request.path_params["encounter"]
        await api.seat(campaign, encounter, token_of(request))
        after = request.query_params.get("after", "0-0")
        if not after or len(after) > 41 or any(ch not in _ENTRY_ID for ch in after):
            raise ApiError(400, "after must be a log entry id such as 1733000000000-0")
        limit = int_param(request, "limit", 10_000, low=1, high=100_000)
        event_log = api.event_log(campaign)
        entries = [LogEntry(**raw_entry(s.entry_id, s)) for s in await event_log.read(encounter, after, count=limit)]
        return json_response(LogPage(campaign=campaign, encounter=encounter, version=await event_log.version(encounter),
                                     entries=entries))

    return [
        Route("/api/campaigns/{campaign}/encounters/{encounter}/signing-key", signing_key),
        Route("/api/campaigns/{campaign}/encounters/{encounter}/log", log),
    ]
