"""The published contract against the code: the OpenAPI document of the HTTP
API and the AsyncAPI document of the WebSocket and the Redis streams, as a
real `firelane serve` publishes them; every exchange of these tests checked
against the OpenAPI document (tests/api_contract.py), every WebSocket message
and Redis entry against the AsyncAPI document's schemas."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import quote

import httpx
import jsonschema
import pytest
import trio
from openapi_spec_validator import validate as validate_openapi
from trio_websocket import ConnectionClosed, open_websocket_url

from firelane.redisio import connect
from firelane.web.app import Api, make_app
from tests.api_contract import api_contract  # noqa: F401 - the fixture
from tests.cli_helpers import REPO, Served, create_seats, firelane

pytestmark = pytest.mark.usefixtures("api_contract")

ASYNCAPI_SCHEMA = REPO / "tests" / "fixtures" / "asyncapi-3.0.0.schema.json"  # @asyncapi/specs 6.11.1, Apache-2.0


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    server = Served(tmp_path_factory.mktemp("contract") / "data")
    try:
        yield server
    finally:
        code, stderr = server.stop()
        assert code == 0, stderr


def url(served: Served, encounter: str, what: str) -> str:
    return f"{served.api}/api/campaigns/default/encounters/{encounter}/{what}"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def gm_version(http: httpx.Client, served: Served, tokens: dict[str, str]) -> int:
    return http.get(url(served, "documented", "options"), headers=bearer(tokens["gm"])).json()["version"]


def schema_validator(document: dict, name: str) -> jsonschema.Draft202012Validator:
    """A validator for ``document``'s component schema ``name`` (its $refs resolved in the document)."""
    return jsonschema.Draft202012Validator({"$ref": f"#/components/schemas/{name}", "components": document["components"]})


def test_both_documents_are_served_valid_and_cover_every_route(served: Served) -> None:
    with httpx.Client(timeout=30) as http:
        openapi = http.get(f"{served.api}/api/openapi.json").json()
        asyncapi = http.get(f"{served.api}/api/asyncapi.json").json()
    validate_openapi(openapi)  # OpenAPI 3.1
    errors = list(jsonschema.Draft7Validator(json.loads(ASYNCAPI_SCHEMA.read_text())).iter_errors(asyncapi))
    assert not errors, [e.message[:200] for e in errors[:5]]
    app = make_app(Api(SimpleNamespace(client=None), None))  # type: ignore[arg-type] - only its routes are read
    routes = {route.path for route in app.routes if hasattr(route, "methods") and route.methods}
    assert routes <= set(openapi["paths"]), routes - set(openapi["paths"])
    assert "/api/campaigns/{campaign}/encounters/{encounter}/ws" in {c["address"] for c in asyncapi["channels"].values()}
    # The seats' commands: the engine's own are in no schema.
    assert not {"StartEncounter", "CloseReactionWindow", "RestoreState", "TimeOutTurn"} & set(openapi["components"]["schemas"])
    body = openapi["paths"]["/api/campaigns/{campaign}/encounters/{encounter}/commands"]["post"]["requestBody"]
    assert body["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Command"}


def test_every_route_a_seat_uses_answers_as_documented(served: Served, tmp_path: Path,
                                                      api_contract: list) -> None:  # noqa: F811
    tokens = create_seats(served, "documented", tmp_path)
    with httpx.Client(timeout=30) as http:
        for what in ("seat", "events", "state", "options", "view", "lines"):
            assert http.get(url(served, "documented", what), headers=bearer(tokens["red"])).status_code == 200, what
        for _ in range(200):  # until Ann's turn
            state = http.get(url(served, "documented", "state"), headers=bearer(tokens["red"])).json()
            if state["state"] is not None and state["state"]["active"] == "a":
                break
            time.sleep(0.05)
        options = http.get(url(served, "documented", "options"), headers=bearer(tokens["red"])).json()
        (ann,) = options["combatants"]
        answered = http.post(url(served, "documented", "commands"), params={"wait": 10}, headers=bearer(tokens["red"]),
                             content=json.dumps({**ann["end_turn"], "command_id": "doc-1"}))
        assert answered.status_code == 200 and answered.json()["rejected"] is False
        gm = http.get(url(served, "documented", "options"), headers=bearer(tokens["gm"])).json()["gm"]
        events = http.get(url(served, "documented", "events"), headers=bearer(tokens["gm"])).json()["events"]
        # Where a rewind may go: the last version of each command's events, before the newest.
        ends = [e["n"] for i, e in enumerate(events) if i + 1 == len(events) or events[i + 1]["c"] != e["c"]]
        assert gm["rewind_targets"] == [n for n in ends if n < gm_version(http, served, tokens)]
        accepted = http.post(url(served, "documented", "commands"), headers=bearer(tokens["gm"]),
                             content=json.dumps({"type": "GMSkipTurn", "command_id": "doc-2", "actor": "gm", "reason": "r"}))
        assert accepted.status_code == 202
        refusals = [
            http.get(url(served, "documented", "events"), params={"after": "x"}, headers=bearer(tokens["red"])),
            http.get(url(served, "documented", "seat")),
            http.post(url(served, "documented", "commands"), headers=bearer(tokens["red"]), content=b"{"),
            http.get(url(served, "nowhere", "seat"), headers=bearer(tokens["red"])),
        ]
        assert [r.status_code for r in refusals] == [400, 401, 400, 404]
        for path in ("encounters", "characters"):
            assert http.get(f"{served.api}/api/campaigns/default/{path}").status_code == 200
        assert http.get(f"{served.api}/api/health").json() == {"ok": True}
        assert http.get(f"{served.api}/api/schema", params={"system": "rond6"}).status_code == 200
    checked = {(request.method, request.url.path.rsplit("/", 1)[-1]) for request, _ in api_contract}
    assert {("GET", "seat"), ("GET", "events"), ("GET", "state"), ("GET", "options"), ("POST", "commands"),
            ("GET", "view"), ("GET", "lines"), ("GET", "encounters"), ("GET", "characters")} <= checked


async def test_websocket_messages_and_redis_entries_match_the_asyncapi_document(served: Served, tmp_path: Path) -> None:
    tokens = await trio.to_thread.run_sync(create_seats, served, "streams", tmp_path)
    seats = json.loads((await trio.to_thread.run_sync(
        lambda: firelane("seats", "streams", "--data-dir", str(served.data_dir), "--json"))).stdout)
    async with httpx.AsyncClient(timeout=30) as http:
        document = (await http.get(f"{served.api}/api/asyncapi.json")).json()
        with trio.fail_after(20):
            while True:
                version = (await http.get(url(served, "streams", "events"), headers=bearer(tokens["red"]))).json()["version"]
                if version >= 4:
                    break
                await trio.sleep(0.05)
    event_message = schema_validator(document, "EventMessage")
    ws_url = url(served, "streams", "ws").replace("http://", "ws://")
    async with open_websocket_url(f"{ws_url}?token={tokens['red']}") as ws:  # after: 0 by default
        received = []
        with trio.fail_after(20):
            while not received or received[-1]["n"] < version:
                received.append(json.loads(await ws.get_message()))
    assert [m["n"] for m in received][:version] == list(range(1, version + 1))
    for message in received:
        errors = [e.message[:200] for e in event_message.iter_errors(message)]
        assert not errors, (message["type"], errors)
    # The same fight on Redis, as the seat's own user: the log's entries and the seat's view stream.
    red = next(s for s in seats["seats"] if s["seat"] == "red")
    socket_path = seats["redis"].removeprefix("unix://")
    client = await connect(f"unix://{quote(red['redis_user'], safe='')}:{red['token']}@{socket_path}")
    try:
        entries = await client.execute("XRANGE", red["log"], "-", "+")
        views = await client.execute("XREVRANGE", f"firelane:{{default}}:enc:streams:options:red", "+", "-", "COUNT", "1")
    finally:
        await client.aclose()
    log_entry = jsonschema.Draft202012Validator(document["components"]["messages"]["LogEntry"]["payload"])
    command = schema_validator(document, "Command")
    for _entry_id, fields in entries:
        values = {k.decode(): v.decode() for k, v in zip(fields[::2], fields[1::2])}
        assert log_entry.is_valid(values), values
        assert not list(event_message.iter_errors({"n": int(values["n"]), "type": values["t"], "c": values["c"],
                                                   "k": values["k"], "data": json.loads(values["d"])}))
    assert entries[0][1][entries[0][1].index(b"c") + 1] == b"engine/start"
    ((_view_id, view_fields),) = views
    view = {k.decode(): v.decode() for k, v in zip(view_fields[::2], view_fields[1::2])}
    assert jsonschema.Draft202012Validator(document["components"]["messages"]["SeatView"]["payload"]).is_valid(view)
    options = json.loads(view["o"])
    assert not list(schema_validator(document, "SeatOptions").iter_errors(options))
    assert options["seat"] == "red" and int(view["n"]) == options["version"]
    (ann,) = options["combatants"]
    assert command.is_valid({**ann["end_turn"], "command_id": "from-a-view"})


async def test_the_websocket_closes_with_the_documented_codes(served: Served, tmp_path: Path) -> None:
    tokens = await trio.to_thread.run_sync(create_seats, served, "codes", tmp_path)
    async with httpx.AsyncClient(timeout=30) as http:
        version = (await http.get(url(served, "codes", "events"), headers=bearer(tokens["red"]))).json()["version"]
    ws_url = url(served, "codes", "ws").replace("http://", "ws://")
    cases = [
        (f"{ws_url}?token={tokens['red']}&after={version + 1000}", 4400, "is beyond this encounter's version"),
        (f"{ws_url}?token={tokens['red']}&after=soon", 4400, "after must be a whole number"),
        (f"{ws_url}", 4401, "needs a seat's token"),
        (f"{ws_url}?token=wrong", 4403, "opens no seat"),
        (url(served, "no-such", "ws").replace("http://", "ws://") + f"?token={tokens['red']}", 4404, "does not exist"),
    ]
    for address, code, words in cases:
        with pytest.raises(ConnectionClosed) as closed:
            async with open_websocket_url(address) as ws:
                await ws.get_message()
        assert closed.value.reason.code == code and words in closed.value.reason.reason, (address, closed.value.reason)
