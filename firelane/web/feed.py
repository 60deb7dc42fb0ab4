"""One encounter's log followed once for every client connected to it
(`EncounterFeed`), and the WebSocket clients it serves (`Watcher`): their
places per seat and the close codes the server uses."""

from __future__ import annotations


from contextlib import aclosing
from typing import Any

import msgspec
import trio

from firelane.engine.branches import Branches, undone_by_rewind
from firelane.events import codec
from firelane.events.codec import event_tag
from firelane.events.envelope import StoredEvent
from firelane.events.log import EventLog
from firelane.events.schemas import EncounterRewound, SeatSetup
from firelane.logs import get_logger
from firelane.projections.replay import rewind_target
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

def event_message(stored: StoredEvent, undone: Branches | None = None) -> bytes:
    """One event as the API sends it (built from the stored JSON body, not re-encoded).
    With ``undone`` (what the GM's rewinds in the log so far undid): whether it
    stands, ``undone_by`` the rewind's version when it does not, and for a
    rewind, ``undoes``: the version ranges it undid."""
    head: dict[str, Any] = {"n": stored.version, "type": stored.type, "c": stored.command_id, "k": stored.causation}
    if undone is not None:
        by = undone.undone_by(stored.version)
        head["stands"] = by is None
        if by is not None:
            head["undone_by"] = by
        if stored.type == _REWIND:
            head["undoes"] = undone_by_rewind(undone.spans, stored.version)
    return msgspec.json.encode(head)[:-1] + b',"data":' + stored.data + b"}"


_REWIND = event_tag(EncounterRewound)

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
        self.undone = Branches()  # what the GM's rewinds among the events seen undid

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
                    if stored.type == _REWIND:
                        self.undone.rewound(stored.version, rewind_target(stored.data))
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


__all__ = ["GOING_AWAY", "LOST_LOG", "REPLACED", "SEAT_WATCHERS", "SPECTATOR_WATCHERS", "TOO_SLOW", "EncounterFeed", "Watcher",
           "event_message", "watcher_cap"]
