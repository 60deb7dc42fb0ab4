"""The published contract of the API: an OpenAPI 3.1 document of the HTTP
routes (``GET /api/openapi.json``) and an AsyncAPI 3.0 document of the
WebSocket and the Redis streams (``GET /api/asyncapi.json``), both made from
the code: the routes the app has, and the msgspec types of what they take and
answer (msgspec's JSON Schema is 2020-12, which OpenAPI 3.1 takes as it is).

A route gets its parameters, body and answers from ``OPERATIONS`` (by path
and method); a route missing there (one added later: the workshop's, which
docs/workshop-api.md describes) is still published, from its path and the
first line of its docstring, with any success answer and the usual refusals. The suite
checks every request and answer of its API tests against the document
(tests/api_contract.py).
"""

from __future__ import annotations

import re
from typing import Any, Union

import msgspec
from starlette.routing import BaseRoute, Route, WebSocketRoute

from firelane.engine.campaign import Adjustment
from firelane.engine.command_schema import command_schema_components
from firelane.engine.core import Awaiting
from firelane.engine.registry import get_system, system_names
from firelane.events.options_schemas import ClientSeedOffer, SeatOptions
from firelane.events.schemas import GENERIC_EVENTS, SeatSetup
from firelane.projections.characters import CampaignView, CharacterView, HistoryEntry
from firelane.projections.roster import RosterRow
from firelane.web.fairness import LogPage, SigningKeyAnswer

REF = "#/components/schemas/{name}"
API_VERSION = "1"


# ---------------------------------------------------------------- what the routes answer (documentation types)


class Error(msgspec.Struct, kw_only=True):
    """Every refusal: one line naming what is wrong."""

    error: str


class Health(msgspec.Struct, kw_only=True):
    ok: bool


class EventMessage(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One event as the API sends it, on HTTP and on the WebSocket alike.
    ``n``: its version (1, 2, 3… with no gaps); ``type``: the event's type;
    ``c``: the command it answers (``SEAT/COMMAND_ID``; ``engine/…`` and
    ``sequencer/…`` for the engine's own); ``k``: its cause (``inbox:SEAT:ID``
    for a seat's inbox entry); ``stands``: false on an event a GM's rewind
    undid, with ``undone_by`` (that rewind's version); a rewind's ``undoes``:
    the ``[first, last]`` version ranges it undid; ``data``: the event."""

    n: int
    type: str
    c: str
    k: str
    stands: bool | None = None
    undone_by: int | None = None
    undoes: list[tuple[int, int]] | None = None
    data: dict[str, Any]


class SeatAnswer(msgspec.Struct, kw_only=True):
    seat: SeatSetup
    system: str
    lobby: bool = False  # the fight waits in its lobby for the GM's Start
    # In the lobby, the seats with the table open: [{"id", "name", "role"}] (never a token).
    present: list[dict[str, str]] = []
    # The seed's commitment (docs/fairness.md), published from the encounter's
    # creation on, before any seat may add a client seed ("" if none is found).
    seed_commitment: str = ""


class EventsPage(msgspec.Struct, kw_only=True):
    """The events after ``after`` (at most ``limit``); ``version``: the current one."""

    version: int
    events: list[EventMessage]


class StateAnswer(msgspec.Struct, kw_only=True):
    """The seat's view of the state (the system's state type; null before the start) and who is awaited."""

    seat: SeatSetup
    version: int
    state: dict[str, Any] | None
    awaiting: Awaiting | None


class NotStarted(msgspec.Struct, kw_only=True):
    """The options before the encounter has started."""

    seat: str
    version: int
    options: None
    client_seed: ClientSeedOffer | None = None  # a player seat that may still add its client seed in the lobby


class LobbySeedKept(msgspec.Struct, kw_only=True):
    """A client seed sent in the lobby, kept for the start (docs/fairness.md section 3)."""

    seat: str
    lobby: bool
    client_seed: str


class CommandAccepted(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Stored in the seat's inbox (``inbox_id``); ``answered`` false: the wait ran out first."""

    seat: str
    inbox_id: str
    answered: bool | None = None


class CommandAnswered(msgspec.Struct, kw_only=True):
    """The engine's answer to the command: its events, or a CommandRejected."""

    seat: str
    inbox_id: str
    rejected: bool
    events: list[EventMessage]


class Roster(msgspec.Struct, kw_only=True, omit_defaults=True):
    encounters: list[RosterRow]
    page: int | None = None
    per_page: int | None = None
    pages: int | None = None
    total: int | None = None


class CharacterAnswer(msgspec.Struct, kw_only=True):
    character: CharacterView
    history: list[HistoryEntry]


class AdjustAnswer(msgspec.Struct, kw_only=True):
    event: dict[str, Any] | None
    character: CharacterView | None


class Release(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    reason: str = ""


class ReleaseAnswer(msgspec.Struct, kw_only=True):
    released: Any
    character: CharacterView | None


class Param(msgspec.Struct, frozen=True):
    name: str
    schema: dict[str, Any]
    description: str = ""
    required: bool = False


class Operation(msgspec.Struct, frozen=True, kw_only=True):
    summary: str
    description: str = ""
    auth: str = ""  # "seat", "gm" (the campaign's GM token) or "" (none)
    query: tuple[Param, ...] = ()
    body: Any = None  # a type, or the name of a component schema
    # status -> (description, a type, a tuple of types (any of them), a component's name, "object" or None)
    answers: dict[int, tuple[str, Any]] = {}
    content: str = "application/json"  # of the answers


_WHOLE = {"type": "integer", "minimum": 0}
_ENCOUNTER = "/api/campaigns/{campaign}/encounters/{encounter}"
_CAMPAIGN = "/api/campaigns/{campaign}"

OPERATIONS: dict[tuple[str, str], Operation] = {
    ("/api/health", "GET"): Operation(summary="the server answers", answers={200: ("it does", Health)}),
    ("/api/openapi.json", "GET"): Operation(summary="this document (OpenAPI 3.1)", answers={200: ("the document", "object")}),
    ("/api/asyncapi.json", "GET"): Operation(summary="the WebSocket and the Redis streams (AsyncAPI 3.0)",
                                             answers={200: ("the document", "object")}),
    ("/api/schema", "GET"): Operation(
        summary="the JSON Schema of a system's commands (or events)",
        description="The commands a seat may send (the engine's own left out; `x-authority` says who may send "
                    "each; ClaimReaction's `options` typed per reaction), or with `events=1` every event.",
        query=(Param("system", {"type": "string"}, "the rule system (default bolt-and-blade)"),
               Param("events", {"type": "string"}, "any value: the events instead")),
        answers={200: ("a JSON Schema 2020-12 document", "object")}),
    (f"{_ENCOUNTER}/seat", "GET"): Operation(summary="who the token is", auth="seat",
                                            answers={200: ("the seat and the encounter's system", SeatAnswer)}),
    (f"{_ENCOUNTER}/events", "GET"): Operation(
        summary="the events after a version", auth="seat",
        query=(Param("after", _WHOLE, "the last version seen (default 0: from the first)"),
               Param("limit", {"type": "integer", "minimum": 1, "maximum": 100000}, "at most this many (default 10,000)")),
        answers={200: ("the events, oldest first", EventsPage)}),
    (f"{_ENCOUNTER}/state", "GET"): Operation(summary="the state and who is awaited", auth="seat",
                                             answers={200: ("the seat's view", StateAnswer)}),
    (f"{_ENCOUNTER}/options", "GET"): Operation(
        summary="what the seat may do now", auth="seat",
        description="Every option carries `command`: send it as it is, with a `command_id` of yours.",
        answers={200: ("the options (or, before the start, none)", (SeatOptions, NotStarted))}),
    (f"{_ENCOUNTER}/commands", "POST"): Operation(
        summary="send a command through the seat's inbox", auth="seat",
        description="400: no command of the system (nothing stored); 403: a spectator's seat; 409: the encounter "
                    "has ended, or waits in its lobby (where a player seat may only send AddClientSeed); 413: over 64 KiB; 429: 256 commands of the seat unread (send again later).",
        query=(Param("wait", {"type": "integer", "minimum": 0, "maximum": 60}, "seconds to wait for the answer"),),
        body="Command",
        answers={200: ("answered (with wait); in the lobby, an AddClientSeed kept for the start",
                       (CommandAnswered, LobbySeedKept)),
                 202: ("stored; not answered yet (without wait, or the wait ran out)", CommandAccepted)}),
    (f"{_ENCOUNTER}/view", "GET"): Operation(
        summary="what the table page draws (state, narration lines, options, zones)", auth="seat",
        query=(Param("after", _WHOLE, "lines after this version"), Param("tail", _WHOLE, "only the newest N lines"),
               Param("at", _WHOLE, "the replay view at this version")),
        answers={200: ("the view", "object")}),
    (f"{_ENCOUNTER}/lines", "GET"): Operation(
        summary="older narration lines", auth="seat",
        query=(Param("before", _WHOLE, "lines before this version"), Param("limit", _WHOLE, "at most this many")),
        answers={200: ("the lines", "object")}),
    (f"{_ENCOUNTER}/preview", "GET"): Operation(
        summary="who an area choice of the options would catch", auth="seat",
        query=(Param("command", {"type": "string"}, "the option's command, as JSON", required=True),),
        answers={200: ("the template and who it catches", "object")}),
    (f"{_CAMPAIGN}/encounters", "GET"): Operation(
        summary="the campaign's roster (all of it, or one page)",
        query=(Param("page", {"type": "integer", "minimum": 1}, "the page"),
               Param("per_page", {"type": "integer", "minimum": 1, "maximum": 1000}, "rows a page (default 100)")),
        answers={200: ("the encounters", Roster)}),
    (f"{_CAMPAIGN}/characters", "GET"): Operation(summary="the campaign's characters as they stand",
                                                 answers={200: ("the characters", CampaignView)}),
    (f"{_CAMPAIGN}/characters/{{character}}", "GET"): Operation(
        summary="one character and its history", answers={200: ("the character", CharacterAnswer)}),
    (f"{_CAMPAIGN}/characters/{{character}}/adjust", "POST"): Operation(
        summary="the GM's change to a character between fights", auth="gm", body="AdjustRequest",
        answers={200: ("the change made (event null when that command_id was applied before)", AdjustAnswer)}),
    (f"{_CAMPAIGN}/characters/{{character}}/release", "POST"): Operation(
        summary="free a character from an encounter that never started (or ended without its aftermath)",
        auth="gm", body=Release, answers={200: ("what the release did", ReleaseAnswer)}),
    (f"{_ENCOUNTER}/signing-key", "GET"): Operation(
        summary="the public key the encounter's log is signed with (docs/fairness.md)", auth="seat",
        answers={200: ("the key (empty strings for a log started unsigned)", SigningKeyAnswer)}),
    (f"{_ENCOUNTER}/log", "GET"): Operation(
        summary="the log's entries as stored, for a verifier (docs/fairness.md)", auth="seat",
        query=(Param("after", {"type": "string", "pattern": "^[0-9-]{1,41}$"},
                     "the last entry id seen (default 0-0: from the first)"),
               Param("limit", {"type": "integer", "minimum": 1, "maximum": 100000}, "at most this many (default 10,000)")),
        answers={200: ("the entries, oldest first", LogPage)}),
    ("/", "GET"): Operation(summary="the table page: the campaign's characters and encounters", content="text/html",
                            answers={200: ("the page", None)}),
    ("/table/{campaign}/{encounter}", "GET"): Operation(
        summary="the table page at an encounter (the seat's token in the link's #token= fragment)",
        content="text/html", answers={200: ("the page", None)}),
    ("/characters/{campaign}/{character}", "GET"): Operation(summary="the table page at one character",
                                                             content="text/html", answers={200: ("the page", None)}),
    ("/favicon.ico", "GET"): Operation(summary="the page's icon", content="image/svg+xml",
                                       answers={200: ("the icon", None)}),
}

_SECURITY = {
    "seat": [{"seatToken": []}, {"seatTokenQuery": []}],
    "gm": [{"campaignGmToken": []}],
}


def _systems() -> list[Any]:
    return [get_system(name) for name in system_names()]


def _components() -> dict[str, Any]:
    """Every schema the documents name, under #/components/schemas/."""
    systems = _systems()
    command, schemas = command_schema_components(systems, ref_template=REF)
    events: tuple[type, ...] = tuple(GENERIC_EVENTS)
    for system in systems:
        events += tuple(t for t in system.event_types if t not in events)
    types = [Union[events], Error, Health, EventMessage, SeatAnswer, EventsPage, StateAnswer, NotStarted,  # noqa: UP007
             CommandAccepted, CommandAnswered, Roster, CharacterAnswer, AdjustAnswer, Release, ReleaseAnswer,
             SeatOptions, Adjustment]
    (event, *_), more = msgspec.json.schema_components(types, ref_template=REF)
    schemas.update(more)
    schemas["Command"] = command
    schemas["Event"] = event
    schemas["EventMessage"]["properties"]["data"] = {"$ref": REF.format(name="Event")}
    schemas["AdjustRequest"] = {**schemas["Adjustment"], "title": "AdjustRequest",
                                "properties": {**schemas["Adjustment"]["properties"], "command_id": {"type": "string"}}}
    return schemas


def _schema_of(kind: Any, schemas: dict[str, Any]) -> dict[str, Any] | None:
    if kind is None:
        return None
    if kind == "object":
        return {"type": "object"}
    if isinstance(kind, str):
        return {"$ref": REF.format(name=kind)}
    if isinstance(kind, tuple):  # one of these (untagged structs)
        return {"anyOf": [_schema_of(each, schemas) for each in kind]}
    (schema,), more = msgspec.json.schema_components([kind], ref_template=REF)
    for name, definition in more.items():
        schemas.setdefault(name, definition)
    return schema


def _path_parameters(path: str) -> list[dict[str, Any]]:
    return [{"name": name.split(":")[0], "in": "path", "required": True, "schema": {"type": "string"}}
            for name in re.findall(r"{([^}]+)}", path)]


def _operation(route: Route, method: str, schemas: dict[str, Any]) -> dict[str, Any]:
    path = route.path
    known = OPERATIONS.get((path, method))
    generic = known is None
    if known is None:  # a route this table does not know yet: published from its path and docstring
        doc = (route.endpoint.__doc__ or route.name or path).strip().splitlines()[0]
        known = Operation(summary=doc)
    parameters = _path_parameters(path) + [
        {"name": p.name, "in": "query", "required": p.required, "schema": p.schema, "description": p.description}
        for p in known.query]
    operation: dict[str, Any] = {"operationId": f"{method.lower()}{re.sub(r'[^A-Za-z0-9]+', '_', path)}".rstrip("_"),
                                 "summary": known.summary, "parameters": parameters, "responses": {}}
    if known.description:
        operation["description"] = known.description
    if known.auth:
        operation["security"] = _SECURITY[known.auth]
    if known.body is not None:
        operation["requestBody"] = {"required": True,
                                    "content": {"application/json": {"schema": _schema_of(known.body, schemas)}}}
    for status, (description, kind) in sorted(known.answers.items()):
        answer: dict[str, Any] = {"description": description}
        schema = _schema_of(kind, schemas)
        answer["content"] = {known.content: {"schema": schema} if schema is not None else {}}
        operation["responses"][str(status)] = answer
    if generic:  # its answers are not described here: any success, and refusals as everywhere
        operation["responses"]["2XX"] = {"description": "its answer (not described in this document)",
                                         "content": {"*/*": {}}}
    operation["responses"]["default"] = {"description": "a refusal or a failure: one line",
                                         "content": {"application/json": {"schema": {"$ref": REF.format(name="Error")}}}}
    return operation


def openapi_document(routes: list[BaseRoute]) -> dict[str, Any]:
    """The OpenAPI 3.1 document of ``routes`` (the app's, so a route added anywhere is in it)."""
    schemas = _components()
    paths: dict[str, Any] = {}
    for route in routes:
        if not isinstance(route, Route):
            continue  # WebSocket routes: the AsyncAPI document; mounts: the page's static assets
        for method in sorted(route.methods or {"GET"}):
            if method == "HEAD":
                continue
            paths.setdefault(route.path, {})[method.lower()] = _operation(route, method, schemas)
    return {
        "openapi": "3.1.0",
        "jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
        "info": {"title": "firelane", "version": API_VERSION,
                 "description": "The HTTP API of `firelane serve`. The WebSocket and the Redis streams: "
                                "/api/asyncapi.json. The README's \"Protocol\" section explains both."},
        "servers": [{"url": "/"}],
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {
                "seatToken": {"type": "http", "scheme": "bearer", "description": "a seat's secret token"},
                "seatTokenQuery": {"type": "apiKey", "in": "query", "name": "token",
                                   "description": "a seat's secret token, where no header can be set"},
                "campaignGmToken": {"type": "http", "scheme": "bearer",
                                    "description": "the campaign's GM token (firelane campaign token)"},
            },
        },
    }


# ---------------------------------------------------------------- AsyncAPI: the WebSocket and the Redis streams

WEBSOCKET_CLOSE_CODES: dict[int, str] = {
    4400: "a bad parameter or name (`after` not a whole number, or beyond the current version; an invalid "
          "campaign or encounter ID): fix the URL",
    4401: "no token: add ?token=",
    4403: "the token opens no seat of this encounter",
    4404: "no such encounter (or campaign)",
    4409: "replaced: the seat opened more connections than its cap (8; the spectator seat 64) and this was its oldest",
    4429: "too slow: the client fell more than 10,000 events behind; reconnect with after= the last n",
    1011: "the server lost the encounter's log (Redis failed), or failed itself: reconnect with after= the last n",
    1013: "the store's Redis is restarting: reconnect in a moment",
    1001: "the server is stopping: reconnect once it is back",
}


def _strict_for_asyncapi(schema: Any) -> Any:
    """msgspec's OpenAPI-style ``discriminator`` objects as AsyncAPI's schema
    object has it (a property name), everything else as it is."""
    if isinstance(schema, dict):
        return {key: ("type" if key == "discriminator" and isinstance(value, dict) else _strict_for_asyncapi(value))
                for key, value in schema.items()}
    if isinstance(schema, list):
        return [_strict_for_asyncapi(item) for item in schema]
    return schema


def _stream_entry(fields: dict[str, str], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "required": required, "additionalProperties": {"type": "string"},
            "properties": {name: {"type": "string", "description": text} for name, text in fields.items()}}


LOG_FIELDS = {
    "n": "the version (1, 2, 3… with no gaps)",
    "t": "the event's type",
    "s": "the event type's schema version",
    "d": "the event as JSON (the type's schema)",
    "c": "the command it answers, SEAT/COMMAND_ID: a seat's (alice/a1, gm/g3); engine/start (the start); "
         "engine/COMBATANT@vN (the engine's AI: e.g. engine/ash@v8, Ash's command decided at version 8); "
         "sequencer/close-window-N (a window's deadline), sequencer/timeout-V (a turn timer), sequencer/ai-… (the AI "
         "playing a timed-out turn), sequencer/reveal-seed; SEAT/inbox:ID for an entry whose command_id cannot be "
         "used and for the answer to a repeat; SEAT/dropped:ID for a CommandsDropped",
    "k": "its cause: inbox:SEAT:ID (the seat's inbox entry it answers: match your answers by it), player:COMBATANT "
         "(the engine's own player, e.g. player:ash), deadline:window-N (window N's deadline passed), deadline:turn-V "
         "(the turn started at version V ran out of time), timeout:ai-plays-COMBATANT (the AI plays the rest of "
         "that turn), encounter-ended (the seed's reveal)",
    "q": "the engine's bookmark: SEAT=ENTRY_ID (several joined by ';' after a rewind), the last inbox entry of that "
         "seat the engine had handled when it wrote this (how a restarted engine knows where to read on); often "
         "empty; a reader may ignore it",
    "h": "the engine's MAC over the entry (a key only the server holds): an entry whose h does not match was not "
         "written by the engine",
    "g": "only on an entry that closes a signed group: the Ed25519 signature (128 hex digits) over the group, "
         "checkable with the key published at GET …/signing-key (docs/fairness.md)",
}


def asyncapi_document() -> dict[str, Any]:
    """The AsyncAPI 3.0 document of the WebSocket and the Redis streams a seat uses."""
    schemas = _strict_for_asyncapi(_components())
    ref = "#/components/messages/{name}"
    encounter_params = {"campaign": {"description": "the campaign's name"},
                        "encounter": {"description": "the encounter's ID"}}
    redis_params = {**encounter_params, "seat": {"description": "the seat's ID"}}
    hash_tag = (" The campaign's name stands between literal braces (a Redis Cluster hash tag): "
                "`firelane:{default}:enc:night-raid:log` for campaign default.")
    return {
        "asyncapi": "3.0.0",
        "info": {"title": "firelane: the WebSocket and the Redis streams", "version": API_VERSION,
                 "description": "What a frontend follows and sends besides the HTTP API (/api/openapi.json). "
                                "The README's \"Protocol\" section explains the rules."},
        "servers": {
            "api": {"host": "127.0.0.1:8740", "protocol": "ws", "description": "firelane serve (its --host and --port)"},
            "redis": {"host": "DATA_DIR/redis.sock", "protocol": "redis",
                      "description": "the store's redis-server: the unix socket, or 127.0.0.1:PORT with "
                                     "firelane serve --redis-port PORT; user CAMPAIGN/ENCOUNTER/SEAT, password "
                                     "the seat's token"},
        },
        "channels": {
            "encounterEvents": {
                "address": "/api/campaigns/{campaign}/encounters/{encounter}/ws",
                "servers": [{"$ref": "#/servers/api"}],
                "parameters": encounter_params,
                "description": "One text message per event after `after`, then each new one as it is written. Query: "
                               "`token` (the seat's) and `after` (default 0: every event; beyond the current version: "
                               "closed with 4400). The client sends nothing (what it sends is ignored). The socket "
                               "stays open after SeedRevealed (the last event): the client closes it. Close codes: "
                               + "; ".join(f"{code} {text}" for code, text in WEBSOCKET_CLOSE_CODES.items()) + ".",
                "messages": {"event": {"$ref": ref.format(name="Event")}},
                "x-close-codes": {str(code): text for code, text in WEBSOCKET_CLOSE_CODES.items()},
            },
            "encounterLog": {
                "address": "firelane:{campaign}:enc:{encounter}:log",
                "servers": [{"$ref": "#/servers/redis"}],
                "parameters": encounter_params,
                "description": "The encounter's log, a Redis stream: XREAD BLOCK 0 STREAMS KEY LAST_ID (`$`: only new "
                               "ones), XRANGE KEY - + for the history." + hash_tag,
                "messages": {"logEntry": {"$ref": ref.format(name="LogEntry")}},
            },
            "seatInbox": {
                "address": "firelane:{campaign}:enc:{encounter}:inbox:{seat}",
                "servers": [{"$ref": "#/servers/redis"}],
                "parameters": redis_params,
                "description": "The seat's inbox: XADD KEY * p COMMAND_JSON. The reply is the entry ID; the answer in "
                               "the log has k = inbox:SEAT:ID. Closed (NOPERM) once the encounter has ended." + hash_tag,
                "messages": {"command": {"$ref": ref.format(name="InboxCommand")}},
            },
            "seatOptions": {
                "address": "firelane:{campaign}:enc:{encounter}:options:{seat}",
                "servers": [{"$ref": "#/servers/redis"}],
                "parameters": redis_params,
                "description": "The seat's own view, readable by that seat's user alone: what the engine awaits and "
                               "what the seat may do (SeatOptions), written whenever the engine goes to wait for the "
                               "seats and the log has moved by more than refusals and repeats (the newest 4 kept). XREVRANGE KEY + - COUNT 1 for the "
                               "current one, XREAD BLOCK for the next." + hash_tag,
                "messages": {"seatView": {"$ref": ref.format(name="SeatView")}},
            },
            "lobbySeed": {
                "address": "firelane:{campaign}:enc:{encounter}:lobby_seed:{seat}",
                "servers": [{"$ref": "#/servers/redis"}],
                "parameters": redis_params,
                "description": "A player seat's client seed while the fight waits in its lobby (docs/fairness.md): "
                               "XADD KEY * client_seed TEXT (1 to 64 printable characters). Only the first entry "
                               "counts; the GM's Start records it before the opening initiative, whose dice mix it "
                               "in. Writable by that player seat's user alone." + hash_tag,
                "messages": {"lobbySeed": {"$ref": ref.format(name="LobbySeed")}},
            },
        },
        "operations": {
            "followEvents": {"action": "receive", "channel": {"$ref": "#/channels/encounterEvents"},
                             "summary": "every event after `after`, then live"},
            "followLog": {"action": "receive", "channel": {"$ref": "#/channels/encounterLog"},
                          "summary": "read the log's entries"},
            "sendCommand": {"action": "send", "channel": {"$ref": "#/channels/seatInbox"},
                            "summary": "act: append a command to the seat's inbox"},
            "readOptions": {"action": "receive", "channel": {"$ref": "#/channels/seatOptions"},
                            "summary": "what the engine awaits and what the seat may do"},
            "addLobbySeed": {"action": "send", "channel": {"$ref": "#/channels/lobbySeed"},
                             "summary": "a player seat adds its client seed before the GM's Start"},
        },
        "components": {
            "schemas": schemas,
            "messages": {
                "Event": {"name": "Event", "contentType": "application/json",
                          "payload": {"$ref": REF.format(name="EventMessage")}},
                "LogEntry": {"name": "LogEntry", "summary": "a log entry's fields (every value a string)",
                             "payload": _stream_entry(LOG_FIELDS, ["n", "t", "s", "d", "c", "k", "h"])},
                "InboxCommand": {"name": "InboxCommand", "summary": "field p: a command as JSON (schema: Command)",
                                 "payload": _stream_entry({"p": "the command as JSON (components/schemas/Command)"},
                                                          ["p"])},
                "LobbySeed": {"name": "LobbySeed", "summary": "field client_seed: the seat's client seed",
                              "payload": _stream_entry({"client_seed": "the client seed, 1 to 64 printable characters"},
                                                       ["client_seed"])},
                "SeatView": {"name": "SeatView",
                             "payload": _stream_entry({"n": "the log version the options hold for",
                                                       "o": "the SeatOptions as JSON (components/schemas/SeatOptions)"},
                                                      ["n", "o"])},
            },
        },
    }


__all__ = ["OPERATIONS", "WEBSOCKET_CLOSE_CODES", "asyncapi_document", "openapi_document"]
