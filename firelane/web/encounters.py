"""The HTTP and WebSocket API of `firelane serve` (starlette on trio, served by hypercorn).

Every encounter route takes the seat's secret token (``Authorization: Bearer
<token>``, or ``?token=`` where a browser cannot set headers, as on a
WebSocket). The token names the seat, and the seat is the command's authority:
the API writes a command to that seat's own inbox and nowhere else; the engine
authorises it there.

    GET  /api/health
    GET  /api/schema?system=S[&events=1]                     JSON Schema of commands (or events)
    GET  /api/campaigns/{c}/encounters[?page=P&per_page=N]   the roster (all of it, or one page)
    GET  /api/campaigns/{c}/characters                       the campaign's characters, as they stand
    GET  /api/campaigns/{c}/characters/{id}                  one character and its history
    POST /api/campaigns/{c}/characters/{id}/adjust|release   the GM's hand, with the campaign's GM token
                                                             (web/campaign.py)
    GET  /api/campaigns/{c}/encounters/{e}/seat              who the token is
    GET  /api/campaigns/{c}/encounters/{e}/events?after=V    events after version V (paged: &limit=N)
    GET  /api/campaigns/{c}/encounters/{e}/state             the seat's view of the state
    GET  /api/campaigns/{c}/encounters/{e}/options           what the seat may do now (SeatOptions)
    POST /api/campaigns/{c}/encounters/{e}/commands[?wait=S] submit a command; with wait, its answer
    WS   /api/campaigns/{c}/encounters/{e}/ws?token=T&after=V  every event after V, then live
    GET  /api/campaigns/{c}/encounters/{e}/view?after=V[&tail=N][&at=W] what the table page draws (web/table.py)
    GET  /api/campaigns/{c}/encounters/{e}/lines?before=V&limit=N   older narration lines (web/table.py)
    GET  /api/campaigns/{c}/encounters/{e}/preview?command=JSON    an area choice's template (web/table.py)
    GET  /, /table/{c}/{e}, /characters/{c}/{id}, /table/assets/..., /favicon.ico   the table page and its assets

An event, on HTTP and on the WebSocket alike, is
``{"n": version, "type": tag, "c": command key, "k": causation, "data": {...}}``.
A client that reconnects with ``after`` = the last ``n`` it saw gets every
later event exactly once.

Each seat keeps at most ``watcher_cap`` WebSockets on an encounter; one more
closes its oldest (REPLACED). Every request passes the Host check, gets the
security headers and, should a route fail unexpectedly, a logged 500
(web/guard.py); POST bodies are read under a cap (`read_body`).
"""

from __future__ import annotations

import hmac
from contextlib import aclosing
from typing import Any, Union

import msgspec
import trio
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from firelane.actors.sequencer import body_digest, command_key, encounter_setup, seat_token_digests
from firelane.engine.registry import UnknownSystem, get_system
from firelane.engine.seats import default_seats, seat_by_id
from firelane.events import codec
from firelane.events.envelope import StoredEvent
from firelane.events.limits import MAX_COMMAND_BYTES, MAX_COMMAND_DEPTH, MAX_ECHOED_ID_CHARS, bounded, json_too_deep
from firelane.events.log import EventLog, InboxClosed, InboxFull, LogTampered, validate_id
from firelane.events.schemas import GENERIC_EVENTS, CommandRejected, SeatSetup
from firelane.events.tokens_at_rest import token_digest
from firelane.actors.store import Store
from firelane.web.campaign import COMMAND_ID, campaign_gm_routes
from firelane.web.guard import ApiError, Guard, ServedNames, read_body
from firelane.web.table import table_routes
from firelane.logs import get_logger
from firelane.projections.characters import campaign_characters, character_history
from firelane.projections.roster import campaign_roster, roster_page
from firelane.projections.turn_state import system_of
from firelane.redisio import RedisConnectionError, RedisError

log = get_logger("firelane.web")

_FEED_BACKLOG = 20_000  # events a feed keeps in memory for clients that (re)connect
# WebSocket connections one seat may hold at once on an encounter: a few for
# the GM's and each player's (tabs, devices), more for the spectator seat,
# whose token is shared. A seat at its cap that connects again closes its own
# oldest connection (REPLACED): the newest always gets in, no seat can take
# another's places, and an encounter holds at most the sum of its seats' caps.
SEAT_WATCHERS = 8
SPECTATOR_WATCHERS = 64
_WATCHER_QUEUE = 10_000  # events queued for one client; one that falls further behind is dropped (TOO_SLOW)

# WebSocket close codes (besides 4000 + the HTTP status of a refused token or
# parameter: 4400, 4401, 4403, 4404); the README lists them all.
REPLACED = 4409  # the seat opened one connection more than its cap: its oldest is closed
TOO_SLOW = 4429  # the client fell more than _WATCHER_QUEUE events behind: reconnect with after=<last n>
LOST_LOG = 1011  # the server lost the encounter's log (Redis failed), or a route failed: reconnect
GOING_AWAY = 1001  # the server is stopping: reconnect once it is back


def watcher_cap(seat: SeatSetup) -> int:
    return SPECTATOR_WATCHERS if seat.role == "spectator" else SEAT_WATCHERS


def event_message(stored: StoredEvent) -> bytes:
    """One event as the API sends it (built from the stored JSON body, not re-encoded)."""
    head = msgspec.json.encode({"n": stored.version, "type": stored.type, "c": stored.command_id, "k": stored.causation})
    return head[:-1] + b',"data":' + stored.data + b"}"


class Watcher:
    """One WebSocket client of a feed: the events queued for it, and the scope
    its connection runs in, which the feed cancels to close it."""

    def __init__(self, seat: str) -> None:
        self.seat = seat
        self.send, self.events = trio.open_memory_channel[StoredEvent](_WATCHER_QUEUE)
        self.scope = trio.CancelScope()
        self.ended: int | None = None  # why the feed let it go: REPLACED, TOO_SLOW, LOST_LOG or GOING_AWAY

    def end(self, code: int) -> None:
        if self.ended is None:
            self.ended = code
        self.send.close()
        self.scope.cancel()


class EncounterFeed:
    """Follows one encounter's log once for every client connected to it, and
    keeps the recent events so a reconnecting client resumes from memory."""

    def __init__(self, event_log: EventLog, encounter: str) -> None:
        self.log = event_log
        self.encounter = encounter
        self.events: list[StoredEvent] = []  # the newest, up to _FEED_BACKLOG
        self.first_version = 1  # version of events[0]
        self._watchers: dict[str, list[Watcher]] = {}  # by seat, oldest first
        self._grown = trio.Event()
        self.stopped = False  # its follower ended (it failed, or the server is stopping): the API starts another
        self._system = None
        self._state = None  # folded up to the events seen, so state and options cost no refold

    async def state(self):
        """(state, system) folded to the newest event seen, (None, None) before
        the first. Kept between calls, so answering costs no refold; callers
        must not change it."""
        if self.version < 1:
            return None, None
        if self._state is None or self._state.version + 1 < self.first_version:
            events = await self.after(0)  # first call, or the memory moved past us: from the log
            self._system = system_of(events[:1])
            self._state = self._system.initial_state()
            self._state.encounter = self.encounter
        else:
            events = self.events[self._state.version + 1 - self.first_version:]
        for stored in events:
            if stored.version > self._state.version:
                self._system.evolve(self._state, codec.decode_event(stored))
        return self._state, self._system

    @property
    def version(self) -> int:
        return self.first_version + len(self.events) - 1

    async def run(self) -> None:
        close_code = GOING_AWAY  # following never ends by itself: only a cancellation (the server stopping) or a failure
        try:
            while True:
                try:
                    return await self._follow()
                except (RedisConnectionError, RedisError) as exc:
                    if isinstance(exc, RedisError) and exc.code != "LOADING":
                        raise
                    # Redis went away (`firelane serve` restarts its own): go on from the last event seen.
                    log.warning("lost the log while following it; resuming", encounter=self.encounter,
                                error=str(exc)[:200])
                    await trio.sleep(0.5)
        except Exception as exc:  # noqa: BLE001 - one encounter's feed never stops the server
            # Its clients are closed and reconnect; the next request starts a new feed.
            close_code = LOST_LOG
            log.warning("stopped following an encounter's log", campaign=self.log.campaign,
                        encounter=self.encounter, error=repr(exc)[:300])
        finally:
            self.stopped = True
            for watcher in [w for seat in self._watchers.values() for w in seat]:
                self.unwatch(watcher, close_code)

    async def _follow(self) -> None:
        after = self.events[-1].entry_id if self.events else "0-0"
        async with aclosing(self.log.follow(self.encounter, after, block_ms=1000, batch=1000)) as batches:
            async for batch in batches:
                for stored in batch:
                    if stored.version != self.version + 1:
                        continue  # a re-read overlap
                    self.events.append(stored)
                    if len(self.events) > _FEED_BACKLOG:
                        drop = len(self.events) - _FEED_BACKLOG
                        del self.events[:drop]
                        self.first_version += drop
                    for watcher in [w for seat in self._watchers.values() for w in seat]:
                        try:
                            watcher.send.send_nowait(stored)
                        except trio.WouldBlock:
                            # A client that cannot keep up is dropped; it reconnects
                            # with its last version and loses nothing.
                            self.unwatch(watcher, TOO_SLOW)
                        except (trio.BrokenResourceError, trio.ClosedResourceError):
                            self.unwatch(watcher)  # its connection has ended
                self._grown.set()
                self._grown = trio.Event()

    def watch(self, seat: SeatSetup) -> Watcher:
        """A new client of ``seat``: every new event is queued for it. A seat
        at its cap (`watcher_cap`) loses its oldest client to make room."""
        mine = self._watchers.setdefault(seat.id, [])
        while len(mine) >= watcher_cap(seat):
            self.unwatch(mine[0], REPLACED)
        watcher = Watcher(seat.id)
        mine.append(watcher)
        return watcher

    def unwatch(self, watcher: Watcher, code: int | None = None) -> None:
        """Let ``watcher`` go (its place is free at once); ``code`` says why, when its connection is still open."""
        mine = self._watchers.get(watcher.seat, [])
        if watcher in mine:
            mine.remove(watcher)
            if not mine:
                del self._watchers[watcher.seat]
        if code is None:
            watcher.send.close()
        else:
            watcher.end(code)

    def watching(self, seat: str | None = None) -> int:
        """How many clients watch (those of ``seat``, or all)."""
        if seat is not None:
            return len(self._watchers.get(seat, []))
        return sum(len(w) for w in self._watchers.values())

    async def after(self, version: int) -> list[StoredEvent]:
        """Events after ``version`` known so far (from memory, or the log for older ones)."""
        if version + 1 >= self.first_version:
            return self.events[max(0, version + 1 - self.first_version):]
        older = [s for s in await self.log.read_from_version(self.encounter, version) if s.version < self.first_version]
        return older + self.events

    async def wait_until(self, version: int) -> None:
        while self.version < version:
            await self._grown.wait()


class Api:
    """State shared by the routes: the store, one feed per encounter, the seats."""

    def __init__(self, store: Store, nursery: trio.Nursery) -> None:
        self.store = store
        self.nursery = nursery
        self.feeds: dict[tuple[str, str], EncounterFeed] = {}
        self._seats: dict[tuple[str, str], tuple[dict[str, str], list[SeatSetup], str]] = {}

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


def _token(request: Request | WebSocket) -> str | None:
    header = request.headers.get("authorization", "")
    if header.lower().startswith("bearer "):
        return header[7:].strip()
    return request.query_params.get("token")


def _int_param(request: Request | WebSocket, name: str, default: int, *, low: int = 0, high: int = 2**62) -> int:
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


def _json(content: Any, status: int = 200) -> Response:
    return Response(msgspec.json.encode(content), status_code=status, media_type="application/json")


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


def _check_readable(body: bytes, system: str) -> None:
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


async def _send_events(socket: WebSocket, feed: EncounterFeed, watcher: Watcher, sent: int) -> None:
    """Every event after version ``sent``, then each new one as the feed queues
    it, until the feed lets the watcher go."""
    try:
        for stored in await feed.after(sent):
            await socket.send_text(event_message(stored).decode())
            sent = stored.version
        async for stored in watcher.events:
            if stored.version <= sent:
                continue
            if stored.version > sent + 1:  # it connected mid-batch: fill the gap from memory or the log
                for missing in await feed.after(sent):
                    if missing.version >= stored.version:
                        break
                    await socket.send_text(event_message(missing).decode())
                    sent = missing.version
            await socket.send_text(event_message(stored).decode())
            sent = stored.version
    except WebSocketDisconnect:
        return


def _answer(seat: str, inbox_id: str, events: list[StoredEvent]) -> Response:
    rejected = any(s.type == codec.event_tag(CommandRejected) for s in events)
    body = (b'{"seat":' + msgspec.json.encode(seat) + b',"inbox_id":' + msgspec.json.encode(inbox_id)
            + b',"rejected":' + (b"true" if rejected else b"false")
            + b',"events":[' + b",".join(event_message(s) for s in events) + b"]}")
    return Response(body, status_code=200, media_type="application/json")


def make_app(api: Api, names: ServedNames | None = None) -> Starlette:
    """The API's app; it answers only to ``names`` (by default: localhost, 127.0.0.1 and [::1])."""
    async def health(request: Request) -> Response:
        return _json({"ok": True})

    async def schema(request: Request) -> Response:
        try:
            system = get_system(request.query_params.get("system", "bolt-and-blade"))
        except UnknownSystem as exc:
            raise ApiError(404, UnknownSystem.__str__(exc)) from None
        if request.query_params.get("events"):
            target: Any = Union[tuple(GENERIC_EVENTS) + tuple(system.event_types)]  # noqa: UP007
        else:
            target = codec.command_union(system.command_types)
        return _json(msgspec.json.schema(target))

    async def roster(request: Request) -> Response:
        event_log = api.event_log(request.path_params["campaign"])
        if "page" not in request.query_params and "per_page" not in request.query_params:
            return _json({"encounters": await campaign_roster(event_log)})
        page = await roster_page(event_log, _int_param(request, "page", 1, low=1),
                                 _int_param(request, "per_page", 100, low=1, high=1000))
        return _json({"encounters": page.rows, "page": page.page, "per_page": page.per_page, "pages": page.pages,
                      "total": page.total})

    async def characters(request: Request) -> Response:
        return _json(await campaign_characters(api.event_log(request.path_params["campaign"])))

    async def character(request: Request) -> Response:
        event_log = api.event_log(request.path_params["campaign"])
        try:
            found, history = await character_history(event_log, validate_id("character", request.path_params["character"]))
        except ValueError as exc:
            raise ApiError(400, str(exc)) from None
        except LookupError as exc:
            raise ApiError(404, str(exc)) from None
        return _json({"character": found, "history": history})

    async def seat_info(request: Request) -> Response:
        seat, system = await api.seat(request.path_params["campaign"], request.path_params["encounter"], _token(request))
        return _json({"seat": seat, "system": system})

    async def events(request: Request) -> Response:
        campaign, encounter = request.path_params["campaign"], request.path_params["encounter"]
        await api.seat(campaign, encounter, _token(request))
        after = _int_param(request, "after", 0)
        limit = _int_param(request, "limit", 10_000, low=1, high=100_000)
        feed = await api.feed(campaign, encounter)
        with trio.move_on_after(2):
            # Up to the log's version, not only to `after`: a feed the first request
            # just started has read little yet, and the answer's "version" is the current one.
            await feed.wait_until(await api.event_log(campaign).version(encounter))
        page = (await feed.after(after))[:limit]
        body = b'{"version":%d,"events":[' % feed.version + b",".join(event_message(s) for s in page) + b"]}"
        return Response(body, media_type="application/json")

    async def state(request: Request) -> Response:
        campaign, encounter = request.path_params["campaign"], request.path_params["encounter"]
        seat, _system = await api.seat(campaign, encounter, _token(request))
        folded, system = await current_state(campaign, encounter)
        if folded is None:
            return _json({"seat": seat, "version": 0, "state": None, "awaiting": None})
        return _json({"seat": seat, "version": folded.version, "state": folded, "awaiting": system.awaiting(folded)})

    async def options(request: Request) -> Response:
        campaign, encounter = request.path_params["campaign"], request.path_params["encounter"]
        seat, _system = await api.seat(campaign, encounter, _token(request))
        folded, system = await current_state(campaign, encounter)
        if folded is None:
            return _json({"seat": seat.id, "version": 0, "options": None})
        return _json(system.options(folded, seat.id))

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
        seat, system = await api.seat(campaign, encounter, _token(request))
        if seat.role == "spectator":
            raise ApiError(403, "a spectator's seat can watch, not act")
        wait = _int_param(request, "wait", 0, high=60)
        body = await read_body(request, MAX_COMMAND_BYTES, "the command")
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
            return _json(answer, status=202)
        if earlier is not None and _is_resend(body, earlier[1], system):
            # The engine applies a command once and writes nothing for a copy
            # sent again (a retry after a lost answer): its answer is the first one's.
            return _answer(seat.id, inbox_id, await event_log.batch_ending_at(encounter, earlier[0], key))
        wanted = {command_key(seat.id, f"inbox:{inbox_id}")} | ({key} if key else set())
        feed = await api.feed(campaign, encounter)
        with trio.move_on_after(wait):
            while True:
                found = [s for s in await feed.after(after) if s.command_id in wanted]
                if found:
                    # A window answer shows up with the rest of the window's answers.
                    return _answer(seat.id, inbox_id, found)
                await feed.wait_until(feed.version + 1)
        answer["answered"] = False
        return _json(answer, status=202)

    async def websocket(socket: WebSocket) -> None:
        campaign, encounter = socket.path_params["campaign"], socket.path_params["encounter"]
        try:
            seat, _system = await api.seat(campaign, encounter, _token(socket))
            after = _int_param(socket, "after", 0)
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

    async def api_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, ApiError)
        return _json({"error": exc.message}, status=exc.status)

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
        return _json({"error": "the store's Redis is not answering (it is being restarted); try again in a moment"},
                     status=503)

    async def tampered(request: Request, exc: Exception) -> Response:
        # The stored log contradicts itself (events/log.py): said, never served as if it were whole.
        return _json({"error": str(exc)}, status=409)

    routes = [
        Route("/api/health", health),
        Route("/api/schema", schema),
        Route("/api/campaigns/{campaign}/encounters", roster),
        Route("/api/campaigns/{campaign}/characters", characters),
        Route("/api/campaigns/{campaign}/characters/{character}", character),
        *campaign_gm_routes(api),  # POST …/characters/{id}/adjust and …/release, with the campaign's GM token
        Route("/api/campaigns/{campaign}/encounters/{encounter}/seat", seat_info),
        Route("/api/campaigns/{campaign}/encounters/{encounter}/events", events),
        Route("/api/campaigns/{campaign}/encounters/{encounter}/state", state),
        Route("/api/campaigns/{campaign}/encounters/{encounter}/options", options),
        Route("/api/campaigns/{campaign}/encounters/{encounter}/commands", submit, methods=["POST"]),
        WebSocketRoute("/api/campaigns/{campaign}/encounters/{encounter}/ws", websocket),
        *table_routes(api),  # the page at / and /table/..., its assets, and GET …/view (web/table.py)
    ]
    return Starlette(routes=routes,
                     exception_handlers={ApiError: api_error, LogTampered: tampered, HTTPException: http_error,
                                         RedisConnectionError: redis_away, RedisError: redis_away},
                     middleware=[Middleware(Guard, names=names if names is not None else ServedNames())])


__all__ = ["GOING_AWAY", "LOST_LOG", "REPLACED", "SEAT_WATCHERS", "SPECTATOR_WATCHERS", "TOO_SLOW", "Api", "ApiError", "EncounterFeed",
           "Watcher", "event_message", "make_app", "watcher_cap"]
