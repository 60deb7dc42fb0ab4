"""An encounter's routes of the API: a seat's own view and its commands.

    GET  /api/campaigns/{c}/encounters/{e}/seat              who the token is (and the lobby, the background)
    GET  /api/campaigns/{c}/encounters/{e}/background        the map's background image (docs/workshop-api.md)
    GET  /api/campaigns/{c}/encounters/{e}/events?after=V    events after version V (paged: &limit=N)
    GET  /api/campaigns/{c}/encounters/{e}/state             the seat's view of the state
    GET  /api/campaigns/{c}/encounters/{e}/options           what the seat may do now (SeatOptions)
    POST /api/campaigns/{c}/encounters/{e}/commands[?wait=S] submit a command; with wait, its answer
    WS   /api/campaigns/{c}/encounters/{e}/ws?token=T&after=V  every event after V (default 0), then live;
                                                              V beyond the current version: closed, 4400

Every one takes the seat's secret token (``Authorization: Bearer <token>``,
or ``?token=`` where a browser cannot set headers, as on a WebSocket). The
token names the seat, and the seat is the command's authority: the API writes
a command to that seat's own inbox and nowhere else; the engine authorises it
there. Each seat keeps at most ``watcher_cap`` WebSockets on an encounter;
one more closes its oldest (REPLACED, web/feed.py).
"""

from __future__ import annotations


from typing import Any

import msgspec
import trio
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from firelane.actors.lobby_seeds import LobbySeedRefused, add_lobby_client_seed, has_lobby_client_seed
from firelane.actors.sequencer import body_digest, command_key, seed_commitment
from firelane.actors.workshop import get_background, image_meta
from firelane.engine.branches import Branches
from firelane.engine.core import client_seed_offer, resting_points_of
from firelane.engine.registry import get_system
from firelane.events import codec
from firelane.events.envelope import StoredEvent
from firelane.events.limits import MAX_COMMAND_BYTES, MAX_COMMAND_DEPTH, MAX_ECHOED_ID_CHARS, bounded, json_too_deep
from firelane.events.log import InboxClosed, InboxFull, LogTampered
from firelane.events.schemas import AddClientSeed, CommandRejected
from firelane.web.campaign import COMMAND_ID
from firelane.web.guard import ApiError, read_body
from firelane.web.access import Api, int_param, json_response, token_of
from firelane.web.workshop import image_answer
from firelane.web.feed import GOING_AWAY, LOST_LOG, REPLACED, TOO_SLOW, EncounterFeed, Watcher, event_message, watcher_cap

def _command_id(body: bytes) -> str:
    """The ``command_id`` a command's JSON names, or "" (the engine judges the rest)."""
    if json_too_deep(body, MAX_COMMAND_DEPTH):
        return ""
    try:
        raw = msgspec.json.decode(body)
    except msgspec.DecodeError:
        return ""
    return raw["command_id"] if isinstance(raw, dict) and isinstance(raw.get("command_id"), str) else ""

def _is_resend(body: bytes, digest: str, system: str) -> bool:
    """Whether the engine will take ``body`` for the command it applied with
    ``digest`` (same seat, id and body), as its append script does."""
    if json_too_deep(body, MAX_COMMAND_DEPTH):
        return False
    try:
        command = codec.decode_command(body, codec.command_union(get_system(system).command_types))
    except (codec.CommandDecodeError, RecursionError, UnicodeDecodeError, ValueError):
        return False  # refused under its inbox entry's own key, which the wait looks for
    return not digest or body_digest(command) == digest

def _check_readable(body: bytes, system: str) -> Any:
    """Refuse, with 400 and nothing stored, a body that is no command of
    ``system`` at all (not JSON, too deep, not an object, an unknown type, a
    field of the wrong type, a command_id or actor the engine does not take):
    the engine would only refuse it too. What the
    rules refuse (a seat's command for another's combatant, a move out of
    reach) is the engine's to answer, in the log."""
    if json_too_deep(body, MAX_COMMAND_DEPTH):
        raise ApiError(400, f"the command nests deeper than {MAX_COMMAND_DEPTH} levels")
    try:
        command = codec.decode_command(body, codec.command_union(get_system(system).command_types))
    except codec.CommandDecodeError as exc:
        raise ApiError(400, bounded(str(exc))) from None
    except (RecursionError, UnicodeDecodeError, ValueError) as exc:
        raise ApiError(400, f"unreadable command ({type(exc).__name__})") from None
    if not COMMAND_ID.fullmatch(command.command_id):
        raise ApiError(400, "command_id must be 1-64 characters of A-Z a-z 0-9 _ . : @ # -")
    if len(command.actor) > MAX_ECHOED_ID_CHARS:
        raise ApiError(400, f"actor is longer than {MAX_ECHOED_ID_CHARS} characters")
    return command

async def _send_events(socket: WebSocket, feed: EncounterFeed, watcher: Watcher, sent: int) -> None:
    """Every event after version ``sent``, then each new one as the feed queues
    it, until the feed lets the watcher go."""
    try:
        for stored in await feed.after(sent):
            await socket.send_text(event_message(stored, feed.undone).decode())
            sent = stored.version
        async for stored in watcher.events:
            if stored.version <= sent:
                continue
            if stored.version > sent + 1:  # it connected mid-batch: fill the gap from memory or the log
                for missing in await feed.after(sent):
                    if missing.version >= stored.version:
                        break
                    await socket.send_text(event_message(missing, feed.undone).decode())
                    sent = missing.version
            await socket.send_text(event_message(stored, feed.undone).decode())
            sent = stored.version
    except WebSocketDisconnect:
        return

def _answer(seat: str, inbox_id: str, events: list[StoredEvent], undone: Branches | None = None) -> Response:
    rejected = any(s.type == codec.event_tag(CommandRejected) for s in events)
    body = (b'{"seat":' + msgspec.json.encode(seat) + b',"inbox_id":' + msgspec.json.encode(inbox_id)
            + b',"rejected":' + (b"true" if rejected else b"false")
            + b',"events":[' + b",".join(event_message(s, undone) for s in events) + b"]}")
    return Response(body, status_code=200, media_type="application/json")


async def background_placement(event_log: Any, campaign: str, encounter: str) -> dict[str, Any] | None:
    """Where the encounter's background image lies on its map (docs/workshop-api.md), or None."""
    placed = await get_background(event_log, encounter)
    if placed is None:
        return None
    meta = await image_meta(event_log, placed["image"]) or {}
    return {"offset": placed["offset"], "scale": placed["scale"], "width": meta.get("width"),
            "height": meta.get("height"), "url": f"/api/campaigns/{campaign}/encounters/{encounter}/background"}


def encounter_routes(api: Api) -> list[BaseRoute]:
    async def present_seats(campaign: str, encounter: str) -> list[dict[str, str]]:
        """The seats with the table open now: their names and roles (never their tokens)."""
        feed = api.feeds.get((campaign, encounter))
        if feed is None:
            return []
        return [{"id": s.id, "name": s.name or s.id, "role": s.role}
                for s in api.known_seats(campaign, encounter) if feed.watching(s.id)]

    async def seat_info(request: Request) -> Response:
        campaign, encounter = request.path_params["campaign"], request.path_params["encounter"]
        seat, system = await api.seat(campaign, encounter, token_of(request))
        event_log = api.event_log(campaign)
        lobby = await api.in_lobby(campaign, encounter)
        # The seed's commitment, published before any seat may add a client seed (docs/fairness.md);
        # in the lobby, who has the table open (by seat name), as the GM's lobby shows it.
        return json_response({"seat": seat, "system": system, "lobby": lobby,
                              "present": await present_seats(campaign, encounter) if lobby else [],
                              "seed_commitment": await seed_commitment(event_log, encounter),
                              "background": await background_placement(event_log, campaign, encounter)})

    async def background(request: Request) -> Response:
        campaign, encounter = request.path_params["campaign"], request.path_params["encounter"]
        await api.seat(campaign, encounter, token_of(request))
        event_log = api.event_log(campaign)
        placed = await get_background(event_log, encounter)
        if placed is None:
            raise ApiError(404, f"encounter {encounter!r} has no background image")
        return await image_answer(event_log, placed["image"])

    async def events(request: Request) -> Response:
        campaign, encounter = request.path_params["campaign"], request.path_params["encounter"]
        await api.seat(campaign, encounter, token_of(request))
        after = int_param(request, "after", 0)
        limit = int_param(request, "limit", 10_000, low=1, high=100_000)
        feed = await api.feed(campaign, encounter)
        with trio.move_on_after(2):
            # Up to the log's version, not only to `after`: a feed the first request
            # just started has read little yet, and the answer's "version" is the current one.
            await feed.wait_until(await api.event_log(campaign).version(encounter))
        page = (await feed.after(after))[:limit]
        body = b'{"version":%d,"events":[' % feed.version + b",".join(event_message(s, feed.undone) for s in page) + b"]}"
        return Response(body, media_type="application/json")

    async def state(request: Request) -> Response:
        campaign, encounter = request.path_params["campaign"], request.path_params["encounter"]
        seat, _system = await api.seat(campaign, encounter, token_of(request))
        folded, system = await current_state(campaign, encounter)
        if folded is None:
            return json_response({"seat": seat, "version": 0, "state": None, "awaiting": None})
        return json_response({"seat": seat, "version": folded.version, "state": folded, "awaiting": system.awaiting(folded)})

    async def options(request: Request) -> Response:
        campaign, encounter = request.path_params["campaign"], request.path_params["encounter"]
        seat, _system = await api.seat(campaign, encounter, token_of(request))
        folded, system = await current_state(campaign, encounter)
        if folded is None:
            # Waiting in the lobby (or not taken up yet): a player seat may add its client seed.
            offer = None
            if seat.role == "player" and not await has_lobby_client_seed(api.event_log(campaign), encounter, seat.id):
                offer = client_seed_offer(None, seat.id)
            return json_response({"seat": seat.id, "version": 0, "options": None, "client_seed": offer})
        answer = system.options(folded, seat.id)
        if answer.gm is not None:  # where a rewind may go: from the entries the feed holds (the newest 20,000)
            feed = await api.feed(campaign, encounter)
            held = [(s.version, s.command_id) for s in feed.events if s.version <= folded.version]
            answer = system.with_rewind_targets(answer, folded, resting_points_of(held))
        return json_response(answer)

    async def current_state(campaign: str, encounter: str):
        feed = await api.feed(campaign, encounter)
        event_log = api.event_log(campaign)
        counter = await event_log.version(encounter)
        with trio.move_on_after(2):
            await feed.wait_until(counter)
        if feed.version < counter:
            # Behind the log's counter: slow, or its entries stop short of it (a tampered log says so).
            problem = await event_log.tail_problem(encounter, counter)
            if problem:
                raise LogTampered(problem)
            await event_log.read_from_version(encounter, feed.version)  # a gap the feed stopped at raises too
        return await feed.state()

    async def submit(request: Request) -> Response:
        campaign, encounter = request.path_params["campaign"], request.path_params["encounter"]
        seat, system = await api.seat(campaign, encounter, token_of(request))
        if seat.role == "spectator":
            raise ApiError(403, "a spectator's seat can watch, not act")
        wait = int_param(request, "wait", 0, high=60)
        body = await read_body(request, MAX_COMMAND_BYTES, "the command")
        if await api.in_lobby(campaign, encounter):
            return await lobby_command(campaign, encounter, seat, system, body)
        _check_readable(body, system)
        event_log = api.event_log(campaign)
        command_id = _command_id(body) if wait else ""
        key = command_key(seat.id, command_id) if command_id else ""
        after = await event_log.version(encounter)
        earlier = await event_log.applied_record(encounter, key) if key else None
        try:
            inbox_id = await event_log.submit(encounter, body, seat=seat.id)
        except InboxClosed as exc:
            raise ApiError(409, str(exc)) from None
        except InboxFull as exc:
            raise ApiError(429, str(exc)) from None
        answer: dict[str, Any] = {"seat": seat.id, "inbox_id": inbox_id}
        if not wait:
            return json_response(answer, status=202)
        if earlier is not None and _is_resend(body, earlier[1], system):
            # The engine applies a command once and writes nothing for a copy
            # sent again (a retry after a lost answer): its answer is the first one's.
            feed = await api.feed(campaign, encounter)
            return _answer(seat.id, inbox_id, await event_log.batch_ending_at(encounter, earlier[0], key), feed.undone)
        wanted = {command_key(seat.id, f"inbox:{inbox_id}")} | ({key} if key else set())
        feed = await api.feed(campaign, encounter)
        with trio.move_on_after(wait):
            while True:
                found = [s for s in await feed.after(after) if s.command_id in wanted]
                if found:
                    # A window answer shows up with the rest of the window's answers.
                    return _answer(seat.id, inbox_id, found, feed.undone)
                await feed.wait_until(feed.version + 1)
        answer["answered"] = False
        return json_response(answer, status=202)

    async def lobby_command(campaign: str, encounter: str, seat: Any, system: str, body: bytes) -> Response:
        """In the lobby a seat may only add its client seed (actors/lobby_seeds.py):
        kept for the start, whose opening dice mix it in."""
        command = _check_readable(body, system)
        if not isinstance(command, AddClientSeed):
            raise ApiError(409, "the fight has not started yet: the GM starts it from the lobby")
        if command.actor != seat.id:
            raise ApiError(403, f"a client seed is the seat's own: send it with actor {seat.id!r}")
        try:
            await add_lobby_client_seed(api.event_log(campaign), encounter, seat, command.client_seed)
        except LobbySeedRefused as exc:
            raise ApiError(409, str(exc)) from None
        return json_response({"seat": seat.id, "lobby": True, "client_seed": command.client_seed})

    async def websocket(socket: WebSocket) -> None:
        campaign, encounter = socket.path_params["campaign"], socket.path_params["encounter"]
        try:
            seat, _system = await api.seat(campaign, encounter, token_of(socket))
            after = int_param(socket, "after", 0)
            current = await api.event_log(campaign).version(encounter)
            if after > current:
                # Nobody can have seen a version the log has not reached: a client's
                # mistake (another encounter's n, a store made again), said at once
                # rather than waited on in silence.
                raise ApiError(400, f"after={after} is beyond this encounter's version ({current}): "
                                    "reconnect with the last n you saw, or 0")
        except ApiError as exc:
            # Accepted, then closed with a code and reason a browser can read
            # (a refused handshake tells it nothing).
            await socket.accept()
            await socket.close(code=4000 + exc.status, reason=exc.message[:120])
            return
        await socket.accept()
        feed = await api.feed(campaign, encounter)
        watcher = feed.watch(seat)
        gone = False
        try:
            with watcher.scope:  # cancelled by the feed when it lets this client go
                async with trio.open_nursery() as nursery:
                    async def until_disconnect() -> None:
                        # Sending never tells that the client left (hypercorn drops what is sent
                        # to a closed connection): the disconnect is received, and ends the sending.
                        nonlocal gone
                        while (await socket.receive())["type"] != "websocket.disconnect":
                            pass  # the client has nothing to say; what it sends is ignored
                        gone = True
                        nursery.cancel_scope.cancel()

                    nursery.start_soon(until_disconnect)
                    await _send_events(socket, feed, watcher, after)
                    nursery.cancel_scope.cancel()
        finally:
            feed.unwatch(watcher)  # its place is free at once, however it ended
        if gone:
            return
        code = watcher.ended or LOST_LOG
        reason = {
            REPLACED: f"replaced by a newer connection of this seat (at most {watcher_cap(seat)} at once)",
            TOO_SLOW: "too slow: reconnect with after=<last n>",
            GOING_AWAY: "the server is stopping: reconnect with after=<last n> once it is back",
        }.get(code, "the server lost this encounter's log: reconnect with after=<last n>")
        await socket.close(code=code, reason=reason)

    return [
        Route("/api/campaigns/{campaign}/encounters/{encounter}/seat", seat_info),
        Route("/api/campaigns/{campaign}/encounters/{encounter}/background", background),
        Route("/api/campaigns/{campaign}/encounters/{encounter}/events", events),
        Route("/api/campaigns/{campaign}/encounters/{encounter}/state", state),
        Route("/api/campaigns/{campaign}/encounters/{encounter}/options", options),
        Route("/api/campaigns/{campaign}/encounters/{encounter}/commands", submit, methods=["POST"]),
        WebSocketRoute("/api/campaigns/{campaign}/encounters/{encounter}/ws", websocket),
    ]


__all__ = ["encounter_routes"]
