"""The campaign GM's credential on the workshop API (docs/workshop-api.md).

A browser signs in with the GM token once (``POST /api/workshop/session``)
and then carries the cookie ``firelane_gm`` (HttpOnly, SameSite=Strict). Every
unsafe method made with the cookie must also carry ``X-Firelane-CSRF`` (the
session's csrf value, which only a same-origin script can read) and, when the
browser sends one, an ``Origin`` that is the server's own. A script may send
the campaign's GM token instead (``Authorization: Bearer``), which needs
neither. A seat's token is never the GM's credential.
"""

from __future__ import annotations

import hmac
from typing import Any
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import Response

from firelane.actors.campaign import gm_token_matches
from firelane.actors.workshop import SESSION_TTL_S, session_campaigns, session_record
from firelane.web.access import Api, token_of
from firelane.web.guard import ApiError

COOKIE = "firelane_gm"
CSRF_HEADER = "x-firelane-csrf"
UNSAFE = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def set_cookie(response: Response, session: str, *, secure: bool = False) -> None:
    """The session's cookie; ``secure`` (the request came over https) keeps it off plain http."""
    response.set_cookie(COOKIE, session, max_age=SESSION_TTL_S, path="/", httponly=True, samesite="strict", secure=secure)


def clear_cookie(response: Response) -> None:
    response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict")


def check_origin(request: Request) -> None:
    """A browser's request from another site is refused: its Origin, when it
    sends one, must be this server's (scheme, host and port as the request reached it)."""
    origin = request.headers.get("origin")
    if origin is None:
        return
    host = request.headers.get("host", "")
    parts = urlsplit(origin)
    if origin == "null" or parts.netloc.lower() != host.lower() or parts.scheme not in ("http", "https"):
        raise ApiError(403, f"cross-site request refused (Origin {origin[:80]!r} is not this server's)")


async def current_session(api: Api, request: Request) -> tuple[str, dict[str, str]] | None:
    """(the cookie, its record) of a signed-in browser, or None."""
    session = request.cookies.get(COOKIE)
    if not session:
        return None
    record = await session_record(api.store.client, session)
    return (session, record) if record is not None else None


async def signed_campaigns(api: Api, record: dict[str, str]) -> list[str]:
    return await session_campaigns(api.store.client, record, api.event_log)


async def require_gm(api: Api, request: Request, campaign: str) -> str:
    """Check the request carries campaign ``campaign``'s GM credential (and,
    with the cookie, the CSRF header on an unsafe method); returns "cookie" or "token"."""
    event_log = api.event_log(campaign)
    token = token_of(request) if "authorization" in request.headers else None
    if token:
        matches = await gm_token_matches(event_log, token)
        if matches is None:
            raise ApiError(404, f"no campaign {campaign!r} in this store")
        if not matches:
            raise ApiError(403, "this token is not the campaign's GM token")
        return "token"
    found = await current_session(api, request)
    if found is None:
        raise ApiError(401, "sign in as the campaign's GM first (open the link firelane campaign token prints)")
    _session, record = found
    if request.method in UNSAFE:
        check_csrf(request, record)
    if campaign not in await signed_campaigns(api, record):
        raise ApiError(403, f"this browser is not signed in as campaign {campaign!r}'s GM (its token may have been "
                            f"rotated: open the new link firelane campaign token prints)")
    return "cookie"


def check_csrf(request: Request, record: dict[str, Any]) -> None:
    check_origin(request)
    sent = request.headers.get(CSRF_HEADER, "")
    if not sent or not hmac.compare_digest(sent.encode(), record.get("csrf", "").encode()):
        raise ApiError(403, "missing or wrong X-Firelane-CSRF header (reload the page)")


__all__ = ["COOKIE", "CSRF_HEADER", "check_csrf", "check_origin", "clear_cookie", "current_session", "require_gm",
           "set_cookie", "signed_campaigns"]
