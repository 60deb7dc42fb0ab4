"""What the API's routes share: `Api` (the store, one feed per encounter, the
seats and their tokens' digests) and how a request's token and parameters
are read."""

from __future__ import annotations


import hmac
from typing import Any

import msgspec
import trio
from starlette.requests import Request
from starlette.responses import Response
from starlette.websockets import WebSocket

from firelane.actors.sequencer import encounter_setup, seat_token_digests
from firelane.engine.seats import default_seats, seat_by_id
from firelane.events.log import EventLog, validate_id
from firelane.events.schemas import SeatSetup
from firelane.events.tokens_at_rest import token_digest
from firelane.actors.store import Store
from firelane.web.guard import ApiError
from firelane.web.feed import EncounterFeed

class Api:
    """State shared by the routes: the store, one feed per encounter, the seats."""

    def __init__(self, store: Store, nursery: trio.Nursery) -> None:
        self.store = store
        self.nursery = nursery
        self.feeds: dict[tuple[str, str], EncounterFeed] = {}
        self._seats: dict[tuple[str, str], tuple[dict[str, str], list[SeatSetup], str]] = {}
        # Hooks may post to loopback and private addresses (`firelane serve --allow-private-hooks`).
        self.allow_private_hooks = False
        # Encounters known to have left the lobby (they never go back): their commands skip the lobby check.
        self.started: set[tuple[str, str]] = set()

    async def in_lobby(self, campaign: str, encounter: str) -> bool:
        """Whether the encounter waits in its lobby (actors/workshop.py): its seats may connect, not act."""
        if (campaign, encounter) in self.started:
            return False
        event_log = self.event_log(campaign)
        if await event_log.client.execute("EXISTS", event_log.encounter_key(encounter, "lobby")):
            return True
        self.started.add((campaign, encounter))
        return False

    def event_log(self, campaign: str) -> EventLog:
        try:
            return self.store.event_log(validate_id("campaign", campaign))
        except ValueError as exc:
            raise ApiError(400, str(exc)) from None

    async def feed(self, campaign: str, encounter: str) -> EncounterFeed:
        key = (campaign, encounter)
        feed = self.feeds.get(key)
        if feed is None or feed.stopped:  # one just made counts as live before its task starts: no second one
            feed = self.feeds[key] = EncounterFeed(self.event_log(campaign), encounter)
            self.nursery.start_soon(feed.run)
            await trio.lowlevel.checkpoint()
        return feed

    def known_seats(self, campaign: str, encounter: str) -> list[SeatSetup]:
        """The encounter's seats, as `seat` last read them (none before a token was checked)."""
        known = self._seats.get((campaign, encounter))
        return list(known[1]) if known else []

    async def seat(self, campaign: str, encounter: str, token: str | None) -> tuple[SeatSetup, str]:
        """The seat a token opens, and the encounter's system; ApiError otherwise."""
        event_log = self.event_log(campaign)
        try:
            validate_id("encounter", encounter)
        except ValueError as exc:
            raise ApiError(400, str(exc)) from None
        key = (campaign, encounter)
        if key not in self._seats:
            digests = await seat_token_digests(event_log, encounter)  # checking a token needs no more
            if not digests:
                raise ApiError(404, f"encounter {encounter!r} does not exist in campaign {campaign!r}")
            meta = msgspec.json.decode(await event_log.encounter_meta(encounter) or b"{}")
            setup = await encounter_setup(event_log, encounter)
            self._seats[key] = (digests, default_seats(setup), meta.get("system", setup.system))
        digests, seats, system = self._seats[key]
        if not token:
            raise ApiError(401, "this needs a seat's token (Authorization: Bearer <token>, or ?token=)")
        presented = token_digest(token)
        for seat_id, digest in digests.items():
            if hmac.compare_digest(digest.encode(), presented.encode()):
                seat = seat_by_id(seats, seat_id)
                if seat is not None:
                    return seat, system
        raise ApiError(403, "this token opens no seat of this encounter")

def token_of(request: Request | WebSocket) -> str | None:
    header = request.headers.get("authorization", "")
    if header.lower().startswith("bearer "):
        return header[7:].strip()
    return request.query_params.get("token")

def int_param(request: Request | WebSocket, name: str, default: int, *, low: int = 0, high: int = 2**62) -> int:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ApiError(400, f"{name} must be a whole number, not {raw[:20]!r}") from None
    if not low <= value <= high:
        raise ApiError(400, f"{name} must be between {low} and {high}")
    return value

def json_response(content: Any, status: int = 200) -> Response:
    return Response(msgspec.json.encode(content), status_code=status, media_type="application/json")


__all__ = ["Api", "int_param", "json_response", "token_of"]
