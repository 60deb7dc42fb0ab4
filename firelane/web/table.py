"""The table: the web page `firelane serve` serves, and the read endpoints it needs.

    GET /                                   the page (the campaign's characters and encounters)
    GET /characters/{campaign}/{character}  the page at one character: where it stands, its history
    GET /table/{campaign}/{encounter}       the page at an encounter; the seat's token is in the
                                            link's fragment (``#token=...``), which no browser sends
    GET /table/assets/...                   its modules, styles and vendored libraries (package data)
    GET /favicon.ico                        its icon
    GET /api/campaigns/{c}/encounters/{e}/view?after=V[&tail=N][&at=W]
    GET /api/campaigns/{c}/encounters/{e}/lines?before=V&limit=N    older narration lines
    GET /api/campaigns/{c}/encounters/{e}/preview?command=JSON   who an area choice would catch

``view`` is what the page draws, in one answer: the state after the newest
event (or, with ``at``, at version W: the replay view), whether its dice are
reproducible (``reproducible_dice``, with the sentence the page shows,
``dice_warning``: they come from a seed text), who the encounter
waits for and until when (wall-clock milliseconds, so a page can count down),
the seat's options (``firelane.events.options_schemas``), the area templates
and zones to draw, and the narration of every event after version V. With
``tail``, only the newest N of those lines: a page opening a long fight asks
for the last few hundred and fetches older ones from ``lines`` (the N lines
before version V) when it needs them; ``first_line`` is the oldest there is.
Each narration line is the CLI narrator's sentence as styled segments, with
every roll found in the event in full (dice, each modifier with its rule ID),
whether its event stands (``stands``; else ``undone_by``: the version of the
GM's rewind that undid it), a rewind's ``undoes`` (the version ranges it
undid) and ``batch_start`` (the event begins a command's answer: the version
before it lies between two commands, where a rewind may go). The view also
has ``undone`` (every span the GM's rewinds undid), ``rewinds`` (each one's
target, time and reason) and ``at_undone_by`` (the version shown lies on an
undone branch). The GM's refused commands are narrated to the GM alone.

``preview`` answers, for an area choice of the seat's options (a grenade
thrown at a square, a flamer's cone, a killzone, a zone swept with fire), the
squares it would cover and who it would catch, allies flagged: the system's
own `preview_area`, from the same checks and geometry the command uses,
deciding nothing and rolling nothing. The view lists the command types a
system previews (``previewable``).

The page itself only reads (``view``, the WebSocket) and sends commands
through the seat's own ``POST …/commands``: it has no authority of its own.
"""

from __future__ import annotations

import bisect
import re
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import msgspec
import trio
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from firelane.engine.branches import undone_by, undone_by_rewind
from firelane.engine.core import Rejected
from firelane.engine.labels import Labels
from firelane.engine.seats import GM
from firelane.engine.state import EncounterState
from firelane.engine.wording import combatant_names, details_text, plain_words, with_names
from firelane.events import codec
from firelane.events.envelope import StoredEvent
from firelane.events.limits import MAX_COMMAND_BYTES, MAX_COMMAND_DEPTH, json_too_deep
from firelane.events.schemas import (
    CommandRejected,
    CommandRepeated,
    CommandsDropped,
    EncounterRewound,
    EncounterStarted,
    Event,
    ReactionWindowOpened,
    TurnStarted,
)
from firelane.web.access import Api, int_param, json_response, token_of
from firelane.web.guard import ApiError
from firelane.projections.narration import REPRODUCIBLE_DICE_WARNING, Narrator, _system_of, _with_names, named
from firelane.projections.audit import iter_rolls
from firelane.projections.turn_state import system_of
from firelane.projections.digest import seat_digest

ASSETS = Path(__file__).with_name("assets")
_CHECKPOINT_EVERY = 100  # versions between the states kept for the replay scrubber
_CHECKPOINTS_KEPT = 400  # at most this many (about 40,000 versions); older scrubs refold from the nearest
_LINES_PAGE = 300  # narration lines a …/lines request answers by default
_EAGER_LINES = 1_000  # a bulk fold narrates the newest this many events; older lines when first asked for
_LINES_MOST = 100_000
# The page's icon (three fire lanes and a target), served at /favicon.ico where browsers look for it.
_FAVICON = (b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" '
            b'fill="#2b2f36"/><path d="M3 12h10M3 8h10M3 4h10" stroke="#e8a33d" stroke-width="1.5"/>'
            b'<circle cx="8" cy="8" r="2.2" fill="#d9534f"/></svg>')


# ------------------------------------------------------------------ narration as styled segments

_OPEN, _SEP, _CLOSE = "\x1e", "\x1f", "\x1d"


class SegmentNarrator(Narrator):
    """The terminal narrator's sentences, with each painted span marked so it
    can be cut into segments ``[text, classes]`` for the page (colours by side,
    hits in red...) instead of ANSI codes."""

    def __init__(self) -> None:
        super().__init__(colour=True, details=True)

    def paint(self, text: str, *styles: str) -> str:
        return f"{_OPEN}{' '.join(styles)}{_SEP}{text}{_CLOSE}" if styles else text

    def name(self, state: EncounterState, combatant: str) -> str:
        c = state.combatants.get(combatant)
        if c is None:
            return combatant
        sides = sorted({x.side for x in state.combatants.values()})
        return self.paint(named(state, combatant), f"side{sides.index(c.side) % 6}", "bold")

    def segments(self, event: Event, state: EncounterState) -> list[list[str]]:
        return split_segments(_with_names(self._describe(event, state), state))


_TOKENS = re.compile(f"{_OPEN}([^{_SEP}]*){_SEP}|{_CLOSE}|[^{_OPEN}{_CLOSE}]+")


def split_segments(text: str) -> list[list[str]]:
    """Cut marked text into ``[text, classes]`` pairs (nested spans combine
    their classes). A dim span after the sentence's own words is a detail
    (a roll's explanation, a seed commitment): the page shows it on demand."""
    out: list[list[str]] = []
    stack: list[str] = []
    said = False  # has a non-dim word been emitted yet?
    for token in _TOKENS.finditer(text):
        chunk = token.group(0)
        if chunk[0] == _OPEN:
            stack.append(" ".join(token.group(1).split()))
            continue
        if chunk == _CLOSE:
            if stack:
                stack.pop()
            continue
        classes = " ".join(s for s in stack if s)
        dim = "dim" in classes.split()
        if dim and said:
            classes += " detail"
        elif not dim and chunk.strip():
            said = True
        if out and out[-1][1] == classes:
            out[-1][0] += chunk
        else:
            out.append([chunk, classes])
    return out


def _system_words(state: EncounterState) -> Labels:
    return _system_of(state).labels


def _roll_json(field: str, roll: Any, words: Labels | None = None, names: dict[str, str] | None = None) -> dict[str, Any]:
    """A roll for the page's roll table: its data (``details`` as the rules
    wrote them) and its words — purpose, notes and modifier sources with
    names for ids, and ``said``, the details in words (engine/wording.py)."""
    counted = set(roll.counted())

    def say(text: str) -> str:
        return plain_words(with_names(text, names or {}), words)

    return {
        "field": field, "purpose": say(roll.purpose), "rule": roll.rule, "total": roll.total, "target": roll.target,
        "compare": roll.compare, "success": roll.success, "notes": [say(n) for n in roll.notes], "details": roll.details,
        "said": say(details_text(roll.details, words)),
        "dice": [{"sides": d.sides, "face": d.face, "counted": i in counted} for i, d in enumerate(roll.dice)],
        "modifiers": [{"source": say(m.source), "rule": m.rule, "value": m.value} for m in roll.modifiers],
    }


# ------------------------------------------------------------------ what the map shows besides the state


DIGEST_EVENTS = 5_000


def starts_batch(stored: StoredEvent, batch_starts: bytearray) -> bool:
    """Whether ``stored`` is the first event of its command's batch."""
    return stored.version >= len(batch_starts) or bool(batch_starts[stored.version])


def iso_time(ms: int) -> str:
    """Milliseconds since the epoch as ISO 8601 in UTC ("2026-12-02T03:30:00.000Z")."""
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _entry_ms(stored: StoredEvent) -> int:
    """When the event was appended: a Redis stream entry ID begins with the server's clock in ms."""
    try:
        return int(stored.entry_id.split("-", 1)[0])
    except ValueError:
        return int(time.time() * 1000)


def _squares(value: Any) -> list[list[int]] | None:
    if isinstance(value, list) and value and all(isinstance(s, (list, tuple)) and len(s) == 2 for s in value):
        return [[int(s[0]), int(s[1])] for s in value]
    return None


def area_of(event: Event) -> dict[str, Any] | None:
    """An area template an event carries (a blast, a cone, a suppressed box):
    any event with a list of ``squares`` and a weapon or shape, in any system."""
    squares = _squares(getattr(event, "squares", None))
    if squares is None:
        return None
    tag = type(event).__struct_config__.tag
    return {"kind": str(getattr(event, "shape", "") or "area"), "label": str(getattr(event, "weapon", "") or tag),
            "squares": squares, "preview": "Preview" in str(tag)}


# ------------------------------------------------------------------ one encounter's fold for the page


class TableFold:
    """Folds one encounter's events for the page: the state after the newest,
    a narration line per event, when the open window and the running turn
    began, the area templates, and the states every ``_CHECKPOINT_EVERY``
    versions for replay.

    Narration is most of a fold's cost, and a page opening a long fight wants
    only its newest lines: a bulk fold (`catch_up`) narrates the newest
    `_EAGER_LINES` events of the batch, and `narrate` the older ones the
    first time they are asked for, folding from the nearest checkpoint."""

    def __init__(self, encounter: str) -> None:
        self.encounter = encounter
        self.system: Any = None
        self.state: EncounterState | None = None
        self.versions: list[int] = []  # every version that has a line (a log entry that fails to decode has none)
        self.lines: dict[int, dict[str, Any]] = {}  # the lines narrated so far, by version
        self.narrator = SegmentNarrator()
        self.window_opened_ms: dict[int, int] = {}
        self.turn_started_ms: int | None = None
        self.title = ""
        self.dice_warning = ""  # what the page says when the start recorded reproducible dice
        self.checkpoints: dict[int, bytes] = {}
        self.marks: list[tuple[int, dict[str, Any] | None]] = []  # (version, its area, or None where a turn starts)
        # 1 at each version whose event begins the answer to a command (or is the
        # engine's own): the version before it lies between two commands, where
        # a rewind may go (engine/core.py, `resting_points`). Index 0 is unused.
        self.batch_starts = bytearray(1)
        self._last_command: str | None = None
        self.rewinds: dict[int, dict[str, Any]] = {}  # each GM rewind: where to, when, why
        self.gm_only: set[int] = set()  # the GM's refused commands: narrated to the GM alone

    @property
    def version(self) -> int:
        return self.state.version if self.state is not None else 0

    def catch_up(self, batch: list[StoredEvent]) -> None:
        """Fold ``batch`` (the events after `version`), narrating the newest of them."""
        newest = batch[-1].version if batch else 0
        for stored in batch:
            self.apply(stored, narrate=stored.version > newest - _EAGER_LINES)

    def apply(self, stored: StoredEvent, *, narrate: bool = True) -> None:
        if stored.problem:
            return
        event = codec.decode_event(stored)
        if self.system is None:
            self.system = system_of([stored])
            self.state = self.system.initial_state()
            self.state.encounter = self.encounter
        state = self.state
        assert state is not None
        if stored.version != state.version + 1:
            return  # already folded (a re-read overlap)
        self.system.evolve(state, event)
        starts = not stored.command_id or stored.command_id != self._last_command
        self._last_command = stored.command_id
        self.batch_starts.append(1 if starts else 0)
        if isinstance(event, EncounterRewound):
            self.rewinds[stored.version] = {"to": event.to_version, "at": _entry_ms(stored), "reason": event.reason}
        elif isinstance(event, (CommandRejected, CommandRepeated)) and event.actor == GM or (
                isinstance(event, CommandsDropped) and any(s.id == event.seat and s.role == "gm" for s in state.seats)):
            self.gm_only.add(stored.version)
        if isinstance(event, EncounterStarted):
            self.title = event.setup.name or event.encounter
            self.dice_warning = REPRODUCIBLE_DICE_WARNING if event.reproducible_dice else ""
        elif isinstance(event, ReactionWindowOpened):
            self.window_opened_ms[event.window] = _entry_ms(stored)
        elif isinstance(event, TurnStarted):
            self.turn_started_ms = _entry_ms(stored)
        self.versions.append(stored.version)
        area = area_of(event)
        if area is not None:
            self.marks.append((stored.version, {**area, "n": stored.version}))
        elif isinstance(event, (TurnStarted, EncounterRewound)):
            self.marks.append((stored.version, None))
        if narrate:
            self.lines[stored.version] = self._line(stored, event, state)
        if state.version % _CHECKPOINT_EVERY == 0 and len(self.checkpoints) < _CHECKPOINTS_KEPT:
            self.checkpoints[state.version] = msgspec.msgpack.encode(state)

    def _line(self, stored: StoredEvent, event: Event, state: EncounterState) -> dict[str, Any]:
        """The narration line of ``event``, in ``state`` (the state just after it)."""
        try:
            segments = self.narrator.segments(event, state)
        except (AttributeError, KeyError, TypeError, ValueError):
            segments = [[stored.type, ""]]  # a sentence that does not know this schema: name the event
        words, names = _system_words(state), combatant_names(state)
        rolls = [_roll_json(field, roll, words, names) for field, roll in iter_rolls(event)]
        if stored.causation.startswith("order:") and starts_batch(stored, self.batch_starts):
            # An answer a seat's standing order made (engine/orders.py): the log cites the order.
            segments = [*segments, [" — by a standing order", ""]]
        elif stored.causation.startswith("timeout:ai-answers-") and starts_batch(stored, self.batch_starts):
            segments = [*segments, [" — the AI answered: time was up", ""]]
        line = {"n": stored.version, "type": stored.type, "at": _entry_ms(stored), "segs": segments, "rolls": rolls,
                "batch_start": bool(self.batch_starts[stored.version]) if stored.version < len(self.batch_starts) else True}
        area = area_of(event)
        if area is not None:
            line["area"] = {**area, "n": stored.version}
        return line

    def for_seat(self, lines: list[dict[str, Any]], gm: bool) -> list[dict[str, Any]]:
        """``lines`` as a seat reads them now: each says whether its event
        stands (``stands``; else ``undone_by``, the version of the GM's rewind
        that undid it), a rewind's line which versions it undid (``undoes``),
        and the GM's refused commands are the GM's alone."""
        spans = self.state.undone if self.state is not None else []
        shown = []
        for line in lines:
            version = line["n"]
            if not gm and version in self.gm_only:
                continue
            by = undone_by(spans, version) if spans else None
            marked = {**line, "stands": by is None}
            if by is not None:
                marked["undone_by"] = by
            if version in self.rewinds:
                marked["undoes"] = undone_by_rewind(spans, version)
            shown.append(marked)
        return shown

    def versions_after(self, after: int, tail: int = 0) -> list[int]:
        """The versions with a line after ``after`` (only the newest ``tail``, if given)."""
        found = self.versions[bisect.bisect_right(self.versions, after):]
        return found[-tail:] if tail else found

    def versions_before(self, before: int, limit: int) -> list[int]:
        end = bisect.bisect_left(self.versions, before)
        return self.versions[max(0, end - limit):end]

    def missing(self, versions: list[int]) -> list[int]:
        return [v for v in versions if v not in self.lines]

    def base_for(self, version: int) -> int:
        """The newest checkpoint before ``version`` (0: the start)."""
        return max((v for v in self.checkpoints if v < version), default=0)

    def _state_from(self, base: int) -> EncounterState:
        assert self.system is not None and self.state is not None
        if base:
            return msgspec.msgpack.decode(self.checkpoints[base], type=type(self.state))
        state = self.system.initial_state()
        state.encounter = self.encounter
        return state

    def narrate(self, versions: list[int], events: list[StoredEvent]) -> None:
        """Narrate ``versions`` (not narrated yet, in order), folding ``events``:
        the events after ``base_for(versions[0])``, up to the last of them."""
        if not versions or self.system is None:
            return
        state = self._state_from(self.base_for(versions[0]))
        wanted = set(versions)
        for stored in events:
            if stored.version > versions[-1]:
                break
            if stored.problem or stored.version != state.version + 1:
                continue
            event = codec.decode_event(stored)
            self.system.evolve(state, event)
            if stored.version in wanted and stored.version not in self.lines:
                self.lines[stored.version] = self._line(stored, event, state)

    def state_at(self, version: int, events: list[StoredEvent]) -> EncounterState | None:
        """The state at ``version`` (replay): from the nearest checkpoint below it,
        folding ``events`` (which start at version 1)."""
        if self.system is None or self.state is None:
            return None
        if version >= self.state.version:
            return self.state
        base = max((v for v in self.checkpoints if v <= version), default=0)
        state = self._state_from(base)
        for stored in events[base:version]:
            if not stored.problem and stored.version == state.version + 1:
                self.system.evolve(state, codec.decode_event(stored))
        return state

    def area_at(self, version: int) -> dict[str, Any] | None:
        """The last area template at or before ``version`` within its turn."""
        index = bisect.bisect_right(self.marks, version, key=lambda mark: mark[0])
        return self.marks[index - 1][1] if index else None


def _zones(state: EncounterState) -> list[dict[str, Any]]:
    zones = getattr(state, "zones", None) or []
    return [{"kind": z.kind, "squares": [list(s) for s in z.squares], "rounds_left": z.rounds_left,
             "blocks_sight": z.blocks_sight, "source": z.source} for z in zones]


def _combatant_extras(system: Any, state: EncounterState) -> dict[str, Any]:
    return {cid: {"health": system.health(c)} for cid, c in state.combatants.items()}


# ------------------------------------------------------------------ area previews


def preview_area(system: Any, state: EncounterState, raw: dict[str, Any], seat: Any) -> dict[str, Any]:
    """The footprint an area command of the seat's options would have now
    (the system's `preview_area`, from the rules the command itself uses), for
    a seat that controls its actor. A command the rules refuse now answers
    with ``refused`` and no squares."""
    kind = raw.get("type")
    if not isinstance(kind, str) or kind not in system.previewable:
        previews = ", ".join(sorted(system.previewable)) or "none"
        raise ValueError(f"no preview for {str(kind)[:40]!r} in {system.name} (previews: {previews})")
    actor = raw.get("actor")
    if actor not in seat.combatants:
        raise PermissionError(f"seat {seat.id!r} does not control {str(actor)[:64]!r}")
    command = codec.decode_command(msgspec.json.encode({**raw, "command_id": "preview"}), codec.command_union(system.command_types))
    try:
        found = system.preview_area(state, command)
    except Rejected as exc:
        return {"squares": [], "caught": [], "allies_caught": [], "refused": exc.reason}
    return msgspec.to_builtins(found)


# ------------------------------------------------------------------ routes


def table_routes(api: Api) -> list[BaseRoute]:
    """The page's routes, on the API's shared state (its feeds and seats)."""
    folds: dict[tuple[str, str], TableFold] = {}
    index = ASSETS / "index.html"

    async def page(request: Request) -> Response:
        return FileResponse(index, media_type="text/html", headers={"Cache-Control": "no-cache"})

    async def caught_up(campaign: str, encounter: str) -> tuple[TableFold, Any]:
        feed = await api.feed(campaign, encounter)
        with trio.move_on_after(2):
            await feed.wait_until(await api.event_log(campaign).version(encounter))
        key = (campaign, encounter)
        fold = folds.get(key)
        if fold is None:
            fold = folds[key] = TableFold(encounter)
        fold.catch_up(await feed.after(fold.version))
        return fold, feed

    async def lines_of(fold: TableFold, feed: Any, versions: list[int]) -> list[dict[str, Any]]:
        """The lines of ``versions``, narrating those not narrated yet."""
        missing = fold.missing(versions)
        if missing:
            base = fold.base_for(missing[0])
            fold.narrate(missing, await feed.after(base))
        return [fold.lines[v] for v in versions]

    async def view(request: Request) -> Response:
        campaign, encounter = request.path_params["campaign"], request.path_params["encounter"]
        seat, system_name = await api.seat(campaign, encounter, token_of(request))
        after = int_param(request, "after", 0)
        fold, feed = await caught_up(campaign, encounter)
        now = int(time.time() * 1000)
        body: dict[str, Any] = {"seat": seat, "system": system_name, "version": fold.version, "now_ms": now}
        state = fold.state
        if state is None:
            body.update(state=None, awaiting=None, options=None, lines=[])
            return json_response(body)
        lines: list[dict[str, Any]] = []
        if request.query_params.get("lines", "1") != "0":
            # With tail (a page's first view): the newest lines only, the older ones on demand (…/lines).
            lines = await lines_of(fold, feed, fold.versions_after(after, int_param(request, "tail", 0)))
            lines = fold.for_seat(lines, seat.role == "gm")
        at = request.query_params.get("at")
        replay = at is not None
        if replay:
            version = int_param(request, "at", fold.version, high=fold.version)
            shown = fold.state_at(version, await feed.after(0) if version < fold.version else [])
            assert shown is not None
        else:
            version, shown = fold.version, state
        system = fold.system
        awaiting = msgspec.to_builtins(system.awaiting(shown))
        if awaiting.get("window") is not None:
            opened = fold.window_opened_ms.get(awaiting["window"])
            awaiting["deadline_at_ms"] = opened + awaiting["deadline_ms"] if opened and awaiting.get("deadline_ms") else None
        if shown.turn_deadline_ms and fold.turn_started_ms and not replay:
            awaiting["turn_deadline_at_ms"] = fold.turn_started_ms + shown.turn_deadline_ms
        # Each deadline as an absolute time too (ISO 8601, UTC): a page shows it in its viewer's own time.
        for at_ms in ("deadline_at_ms", "turn_deadline_at_ms"):
            if awaiting.get(at_ms):
                awaiting[at_ms.removesuffix("_ms")] = iso_time(awaiting[at_ms])
        body.update(
            title=fold.title, system_title=system.title, at=version, state=shown, awaiting=awaiting,
            reproducible_dice=bool(fold.dice_warning), dice_warning=fold.dice_warning,
            options=None if replay else system.options(shown, seat.id),
            extras=_combatant_extras(system, shown), zones=_zones(shown), bands=system.range_bands(shown),
            area=fold.area_at(version), previewable=sorted(system.previewable), labels=system.labels.as_dict(),
            first_line=fold.versions[0] if fold.versions else None, lines=lines,
            # The GM's rewinds and what they undid (the whole log's, whatever `at` is), and
            # whether the version shown is on an undone branch (its rewind's version).
            undone=state.undone, rewinds=fold.rewinds, at_undone_by=undone_by(state.undone, version),
        )
        return json_response(body)

    async def digest(request: Request) -> Response:
        """"While you were away": what happened since version ``since`` (projections/digest.py)."""
        campaign, encounter = request.path_params["campaign"], request.path_params["encounter"]
        seat, _system = await api.seat(campaign, encounter, token_of(request))
        fold, feed = await caught_up(campaign, encounter)
        if fold.state is None or fold.system is None:
            raise ApiError(409, f"encounter {encounter!r} has not started")
        since = int_param(request, "since", 0, high=fold.version)
        # The newest DIGEST_EVENTS at most: a digest of a whole long fight says what is recent.
        start = max(since, fold.version - DIGEST_EVENTS)
        events = [(stored.version, codec.decode_event(stored)) for stored in await feed.after(start) if not stored.problem]
        state = fold.state
        deadlines: dict[str, int | None] = {"turn": None, "window": None}
        if state.turn_deadline_ms and fold.turn_started_ms:
            deadlines["turn"] = fold.turn_started_ms + state.turn_deadline_ms
        if state.window is not None and fold.window_opened_ms.get(state.window.window):
            deadlines["window"] = fold.window_opened_ms[state.window.window] + state.window.deadline_ms
        body = seat_digest(fold.system, state, seat.id, since, events, deadlines)
        for waiting in body["awaits"]:
            if waiting.get("deadline_at_ms"):
                waiting["deadline_at"] = iso_time(waiting["deadline_at_ms"])
        body["partial"] = start > since
        body["now_ms"] = int(time.time() * 1000)
        return json_response(body)

    async def lines_before(request: Request) -> Response:
        campaign, encounter = request.path_params["campaign"], request.path_params["encounter"]
        seat, _system = await api.seat(campaign, encounter, token_of(request))
        fold, feed = await caught_up(campaign, encounter)
        before = int_param(request, "before", fold.version + 1)
        limit = int_param(request, "limit", _LINES_PAGE, low=1, high=_LINES_MOST)
        lines = fold.for_seat(await lines_of(fold, feed, fold.versions_before(before, limit)), seat.role == "gm")
        return json_response({"version": fold.version, "first_line": fold.versions[0] if fold.versions else None,
                              "lines": lines})

    async def preview(request: Request) -> Response:
        campaign, encounter = request.path_params["campaign"], request.path_params["encounter"]
        seat, _system = await api.seat(campaign, encounter, token_of(request))
        raw = _preview_command(request.query_params.get("command"))
        fold, _feed = await caught_up(campaign, encounter)
        if fold.state is None:
            return json_response({"error": "the encounter has not started: nothing to preview yet"}, status=409)
        try:
            return json_response(preview_area(fold.system, fold.state, raw, seat))
        except PermissionError as exc:
            return json_response({"error": str(exc)}, status=403)
        except (ValueError, codec.CommandDecodeError) as exc:
            return json_response({"error": str(exc)[:300]}, status=400)

    async def favicon(request: Request) -> Response:
        return Response(_FAVICON, media_type="image/svg+xml", headers={"Cache-Control": "max-age=86400"})

    return [
        Route("/", page),
        Route("/favicon.ico", favicon),
        Mount("/table/assets", app=StaticFiles(directory=ASSETS), name="table-assets"),  # before the page's route
        Route("/table/{campaign}/{encounter}", page),
        Route("/characters/{campaign}/{character}", page),
        Route("/api/campaigns/{campaign}/encounters/{encounter}/view", view),
        Route("/api/campaigns/{campaign}/encounters/{encounter}/preview", preview),
        Route("/api/campaigns/{campaign}/encounters/{encounter}/lines", lines_before),
        Route("/api/campaigns/{campaign}/encounters/{encounter}/digest", digest),
    ]


def _preview_command(text: str | None) -> dict[str, Any]:
    """The ``command`` parameter of a preview: a JSON object, checked before
    it is parsed (msgspec's parser recurses: 5,000 ``[`` would exhaust it)."""
    if not text:
        raise ApiError(400, "command=<the command as JSON> is required")
    raw = text.encode()
    if len(raw) > MAX_COMMAND_BYTES:
        raise ApiError(413, f"the command is {len(raw):,} bytes; the limit is {MAX_COMMAND_BYTES:,}")
    if json_too_deep(raw, MAX_COMMAND_DEPTH):
        raise ApiError(400, f"the command nests deeper than {MAX_COMMAND_DEPTH} levels")
    try:
        command = msgspec.json.decode(raw)
    except msgspec.DecodeError as exc:
        raise ApiError(400, f"command is not valid JSON: {str(exc)[:200]}") from None
    if not isinstance(command, dict):
        raise ApiError(400, "command must be a JSON object")
    return command


__all__ = ["ASSETS", "SegmentNarrator", "TableFold", "area_of", "split_segments", "table_routes"]
