"""The API under a hostile client (issue 17, items 1 and 9): WebSocket places
per seat, closed and dead connections freed, malformed requests answered with
one line, bodies read under a cap, the Host header checked, security headers
on every answer. Against a real `firelane serve`, except where a test needs
the server's timings shortened or a route to fail (then in process)."""

from __future__ import annotations

import base64
import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
import structlog
import trio
from hypercorn.trio import serve as hypercorn_serve
from trio_websocket import ConnectionClosed, WebSocketConnection, open_websocket_url

from firelane.actors.runtime import default_policies, run_encounter
from firelane.actors.sequencer import create_encounter, seat_tokens
from firelane.engine.registry import demo_setup, get_system
from firelane.events.limits import MAX_COMMAND_BYTES
from firelane.actors.store import open_store
from firelane.web.guard import ServedNames, hypercorn_config
from firelane.web.app import Api, make_app
from firelane.web.feed import LOST_LOG, REPLACED, SEAT_WATCHERS, SPECTATOR_WATCHERS, EncounterFeed
from firelane.redisio import RedisError
from tests.api_contract import api_contract  # noqa: F401 - the fixture: every exchange checked against /api/openapi.json
from tests.cli_helpers import create_seats, ENGINE_ENV, Served, firelane

pytestmark = pytest.mark.usefixtures("api_contract")

ALLOWED = "table.example"  # the served store's --allowed-host


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    server = Served(tmp_path_factory.mktemp("hardening") / "data", "--allowed-host", ALLOWED)
    try:
        yield server
    finally:
        code, stderr = server.stop()
        assert code == 0, stderr


def url(served: Served, encounter: str, what: str) -> str:
    return f"{served.api}/api/campaigns/default/encounters/{encounter}/{what}"


def ws_url(served: Served, encounter: str, token: str, after: int = 0) -> str:
    return url(served, encounter, "ws").replace("http://", "ws://") + f"?token={token}&after={after}"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def version_of(http: httpx.AsyncClient, served: Served, encounter: str, token: str) -> int:
    return (await http.get(url(served, encounter, "events"), headers=bearer(token))).json()["version"]


async def until_started(http: httpx.AsyncClient, served: Served, encounter: str, token: str) -> int:
    with trio.fail_after(30):
        while (version := await version_of(http, served, encounter, token)) < 4:
            await trio.sleep(0.05)
    return version


async def end_turn(http: httpx.AsyncClient, served: Served, encounter: str, tokens: dict[str, str], command_id: str) -> int:
    """The active combatant's seat ends its turn; the version its answer brought the log to."""
    active = (await http.get(url(served, encounter, "state"), headers=bearer(tokens["gm"]))).json()["state"]["active"]
    answer = await http.post(url(served, encounter, "commands"), params={"wait": 10},
                             headers=bearer(tokens["red" if active == "a" else "blue"]),
                             content=json.dumps({"type": "EndTurn", "command_id": command_id, "actor": active}))
    assert answer.status_code == 200 and answer.json()["rejected"] is False, answer.text
    return max(event["n"] for event in answer.json()["events"])


async def next_event(ws: WebSocketConnection, timeout: float = 10) -> dict[str, Any]:
    with trio.fail_after(timeout):
        return json.loads(await ws.get_message())


async def closed_with(ws: WebSocketConnection, timeout: float = 10) -> tuple[int, str]:
    """The close code and reason of a connection the server closes (reading on until it does)."""
    with trio.fail_after(timeout):
        try:
            while True:
                await ws.get_message()
        except ConnectionClosed as closed:
            return closed.reason.code, closed.reason.reason or ""


def _address(base: str) -> tuple[str, int]:
    parts = urlsplit(base)
    return parts.hostname or "127.0.0.1", parts.port or 80


async def raw_websocket(base: str, path: str, *, receive_buffer: int | None = None) -> trio.SocketStream:
    """A WebSocket handshake over a bare TCP stream (so a test can close it
    without a close frame, or stop reading it), answered 101."""
    sock = trio.socket.socket()
    if receive_buffer is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    await sock.connect(_address(base))
    stream = trio.SocketStream(sock)
    host, port = _address(base)
    key = base64.b64encode(os.urandom(16)).decode()
    await stream.send_all((f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                           f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    answer = b""
    with trio.fail_after(10):
        while b"\r\n\r\n" not in answer:
            chunk = await stream.receive_some(1)  # byte by byte: nothing after the head is taken from the socket
            assert chunk, answer
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 101"), answer
    return stream


def ws_path(encounter: str, token: str, after: int = 0) -> str:
    return f"/api/campaigns/default/encounters/{encounter}/ws?token={token}&after={after}"


# ------------------------------------------------------------------ item 1: watchers


async def test_a_thousand_closed_connections_leave_every_seat_room(served: Served, tmp_path: Path) -> None:
    """The issue's test: one token opens and closes 1,000 WebSockets (half
    with a close handshake, half by dropping the TCP connection); then every
    seat connects within 1 s. Closed connections free their places at once:
    the spectator's connections that stayed open all along are never pushed
    out by the ones that came and went."""
    tokens = await trio.to_thread.run_sync(create_seats, served, "churn", tmp_path)
    async with httpx.AsyncClient(timeout=20) as http:
        version = await until_started(http, served, "churn", tokens["gm"])
        async with trio.open_nursery() as nursery:
            staying: list[WebSocketConnection] = []
            for _ in range(SPECTATOR_WATCHERS - 1):  # all but one of the spectator seat's places, kept
                staying.append(await _connect(nursery, ws_url(served, "churn", tokens["spectator"], version)))
            for index in range(1000):
                if index % 2:
                    stream = await raw_websocket(served.api, ws_path("churn", tokens["spectator"]))
                    await stream.aclose()  # a FIN, no close frame
                else:
                    async with open_websocket_url(ws_url(served, "churn", tokens["spectator"], version)):
                        pass  # a clean close
            with trio.fail_after(1):
                arrived = [await _connect(nursery, ws_url(served, "churn", tokens[seat])) for seat in tokens]
                firsts = [await next_event(ws) for ws in arrived]
            assert [event["n"] for event in firsts] == [1] * len(tokens)
            newest = await end_turn(http, served, "churn", tokens, "after-churn")
            for ws in staying + arrived:  # all still open, each given the new event
                seen = await next_event(ws)
                while seen["n"] < newest:
                    seen = await next_event(ws)
            nursery.cancel_scope.cancel()


async def _connect(nursery: trio.Nursery, address: str) -> WebSocketConnection:
    from trio_websocket import connect_websocket_url

    return await connect_websocket_url(nursery, address)


async def test_a_flood_from_one_seat_never_keeps_another_seat_out(served: Served, tmp_path: Path) -> None:
    """The spectator's token opens three times its cap, a player's token twice
    its own: each seat keeps its newest connections, its oldest are closed with
    4409 and a reason, and the GM and both players still get in and follow."""
    tokens = await trio.to_thread.run_sync(create_seats, served, "flood", tmp_path)
    async with httpx.AsyncClient(timeout=20) as http:
        version = await until_started(http, served, "flood", tokens["gm"])
        async with trio.open_nursery() as nursery:
            spectators = [await _connect(nursery, ws_url(served, "flood", tokens["spectator"], version))
                          for _ in range(3 * SPECTATOR_WATCHERS)]
            reds = [await _connect(nursery, ws_url(served, "flood", tokens["red"], version))
                    for _ in range(2 * SEAT_WATCHERS)]
            gm = await _connect(nursery, ws_url(served, "flood", tokens["gm"], version))
            blue = await _connect(nursery, ws_url(served, "flood", tokens["blue"], version))
            for ws in spectators[:-SPECTATOR_WATCHERS] + reds[:-SEAT_WATCHERS]:
                code, reason = await closed_with(ws)
                assert code == REPLACED and reason.startswith("replaced by a newer connection of this seat"), (code, reason)
            newest = await end_turn(http, served, "flood", tokens, "after-flood")
            for ws in [gm, blue, *spectators[-SPECTATOR_WATCHERS:], *reds[-SEAT_WATCHERS:]]:
                seen = await next_event(ws)
                while seen["n"] < newest:
                    seen = await next_event(ws)
            nursery.cancel_scope.cancel()


@asynccontextmanager
async def api_in_process(redis_url: str, data_dir: Path, **timings: float) -> AsyncIterator[tuple[str, Api]]:
    """The API served by hypercorn in this process (its base URL, and its state),
    with the dead-peer timeout given."""
    async with open_store(redis_url=redis_url, data_dir=data_dir) as store:
        async with trio.open_nursery() as nursery:
            api = Api(store, nursery)
            names = ServedNames()
            config = hypercorn_config("127.0.0.1", 0, **timings)
            binds = await nursery.start(lambda task_status: hypercorn_serve(make_app(api, names), config,
                                                                            task_status=task_status))
            names.add_urls(binds)
            yield binds[0].rstrip("/"), api
            nursery.cancel_scope.cancel()


async def test_a_peer_that_stops_reading_loses_its_place_by_the_dead_peer_timeout(redis_url: str, tmp_path: Path) -> None:
    """A client completes the handshake, then neither reads nor answers nor
    closes, while the fight goes on: its window shuts, the events wait
    unread, TCP_USER_TIMEOUT aborts the connection, and the seat's place is
    free again (the feed has no watcher left). With the timeout shortened."""
    async with api_in_process(redis_url, tmp_path / "data", dead_peer_timeout_s=1.0) as (base, api):
        event_log = api.store.event_log("default")
        setup = demo_setup("bolt-and-blade")  # every combatant played by the AI: events keep coming
        await create_encounter(event_log, "silent", setup, b"s" * 32)
        token = (await seat_tokens(event_log, "silent"))["spectator"]
        stream = await raw_websocket(base, ws_path("silent", token), receive_buffer=1024)
        try:
            with trio.fail_after(10):
                while ("default", "silent") not in api.feeds or api.feeds[("default", "silent")].watching() != 1:
                    await trio.sleep(0.01)
            feed = api.feeds[("default", "silent")]
            async with trio.open_nursery() as engine:
                system = get_system(setup.system)
                engine.start_soon(lambda: run_encounter(event_log, "silent", system, default_policies(
                    system, {c.id: c.policy for c in setup.combatants}), pace=0.02))
                with trio.fail_after(60):
                    while feed.watching():
                        await trio.sleep(0.1)
                assert feed.version > 20  # what it left unread
                engine.cancel_scope.cancel()
            # The connection is gone on the server's side: the client's end is reset.
            with pytest.raises(trio.BrokenResourceError), trio.fail_after(30):
                while await stream.receive_some(65536):
                    pass
        finally:
            await stream.aclose()  # else a server still sending to it could not stop


def test_every_accepted_connection_is_probed_and_timed_out() -> None:
    """A peer that vanished without a FIN never answers: keepalive probes an
    idle connection and TCP_USER_TIMEOUT aborts it. The options are set on the
    listening socket hypercorn makes from the config, and every connection it
    accepts has them."""
    config = hypercorn_config("127.0.0.1", 0, dead_peer_timeout_s=20)
    (listener,) = config.create_sockets().insecure_sockets
    listener.listen()
    listener.setblocking(True)
    with listener, socket.create_connection(listener.getsockname()[:2]) as client:
        accepted, _ = listener.accept()
        with accepted:
            assert accepted.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 1
            assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT) == 20_000
            assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE) == 10
            assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL) == 5
        assert client.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 0  # the client's own socket is its own


async def test_a_closed_connection_frees_its_place_at_once_in_process(redis_url: str, tmp_path: Path) -> None:
    """The feed's own count: after a client's close (with or without a close
    frame) the seat has no watcher left, and its place is not waited for."""
    async with api_in_process(redis_url, tmp_path / "data") as (base, api):
        event_log = api.store.event_log("default")
        await create_encounter(event_log, "gone", demo_setup("bolt-and-blade"), b"g" * 32)
        token = (await seat_tokens(event_log, "gone"))["spectator"]
        for clean in (True, False):
            if clean:
                async with open_websocket_url(base.replace("http://", "ws://") + ws_path("gone", token)):
                    pass
            else:
                await (await raw_websocket(base, ws_path("gone", token))).aclose()
            feed = api.feeds[("default", "gone")]
            with trio.fail_after(5):
                while feed.watching():
                    await trio.sleep(0.01)


class _LogThatFails:
    """An encounter's log whose following fails (as when Redis goes away) once
    ``fail`` is set; everything else is the real log's."""

    def __init__(self, real: Any) -> None:
        self._real = real
        self.fail = trio.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    async def follow(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        await self.fail.wait()
        raise RedisError("connection lost")
        yield []  # an async generator, as the real one


async def test_a_feed_that_fails_closes_its_clients_and_the_server_goes_on(redis_url: str, tmp_path: Path) -> None:
    """One encounter's feed failing (its Redis reads fail) closes that
    feed's WebSockets with 1011 and a reason, is logged, and stops nothing
    else: the next connection starts a new feed."""
    async with api_in_process(redis_url, tmp_path / "data") as (base, api):
        event_log = api.store.event_log("default")
        await create_encounter(event_log, "lost", demo_setup("bolt-and-blade"), b"l" * 32)
        token = (await seat_tokens(event_log, "lost"))["gm"]
        failing = _LogThatFails(event_log)
        feed = api.feeds[("default", "lost")] = EncounterFeed(failing, "lost")  # type: ignore[arg-type]
        api.nursery.start_soon(feed.run)
        address = base.replace("http://", "ws://") + ws_path("lost", token)
        async with trio.open_nursery() as nursery:
            ws = await _connect(nursery, address)
            with trio.fail_after(10):
                while feed.watching() != 1:
                    await trio.sleep(0.01)
            with structlog.testing.capture_logs() as logged:
                failing.fail.set()
                code, reason = await closed_with(ws)
            assert (code, reason) == (LOST_LOG, "the server lost this encounter's log: reconnect with after=<last n>")
            assert [e["error"] for e in logged if e["event"] == "stopped following an encounter's log"] == [
                "RedisError('connection lost')"]
            await _connect(nursery, address)  # served by a new feed, on the real log
            renewed = api.feeds[("default", "lost")]
            assert feed.stopped and renewed is not feed and not renewed.stopped
            with trio.fail_after(10):
                while renewed.watching() != 1:
                    await trio.sleep(0.01)
            nursery.cancel_scope.cancel()


# ------------------------------------------------------------------ item 9: requests


def test_a_deeply_nested_preview_command_is_a_400_not_a_500(served: Served, tmp_path: Path) -> None:
    tokens = create_seats(served, "deep-preview", tmp_path)
    with httpx.Client(timeout=10) as http:
        answer = http.get(url(served, "deep-preview", "preview") + "?command=" + "%5B" * 5000, headers=bearer(tokens["red"]))
    assert answer.status_code == 400 and answer.json() == {"error": "the command nests deeper than 32 levels"}


MALFORMED = [
    # (method, path under the encounter, query, body, status, what the one line says)
    ("GET", "preview", "command=", None, 400, "command=<the command as JSON> is required"),
    ("GET", "preview", "command=%7B%22type%22", None, 400, "command is not valid JSON"),
    ("GET", "preview", "command=%5B1%5D", None, 400, "command must be a JSON object"),
    ("GET", "preview", "command=%7B%22type%22%3A%22Fly%22%7D", None, 400, "no preview for 'Fly'"),
    ("GET", "events", "after=abc", None, 400, "after must be a whole number, not 'abc'"),
    ("GET", "events", "after=-1", None, 400, "after must be between 0 and"),
    ("GET", "events", "limit=0", None, 400, "limit must be between 1 and 100000"),
    ("GET", "events", "after=" + "9" * 5000, None, 400, "after must be a whole number"),
    ("GET", "view", "at=x", None, 400, "at must be a whole number, not 'x'"),
    ("GET", "view", "tail=1.5", None, 400, "tail must be a whole number"),
    ("GET", "lines", "limit=nope", None, 400, "limit must be a whole number"),
    ("POST", "commands", "wait=soon", b"{}", 400, "wait must be a whole number"),
    ("POST", "commands", "wait=61", b"{}", 400, "wait must be between 0 and 60"),
    ("POST", "commands", "", b'{"type": "EndTurn", ', 400, "malformed JSON"),
    ("POST", "commands", "", b"\xff\xfe not utf-8", 400, "malformed JSON"),
    ("POST", "commands", "", b"[" * 5000, 400, "the command nests deeper than 32 levels"),
    ("POST", "commands", "", b"[1, 2]", 400, "invalid command: Expected `object`, got `array`"),
    ("POST", "commands", "", b'{"type": "Fly", "command_id": "f", "actor": "a"}', 400, "invalid command"),
    ("POST", "commands", "", b'{"type": "EndTurn", "command_id": "t", "actor": 5}', 400, "invalid command: Expected `str`"),
    ("POST", "commands", "", b'{"type": "EndTurn", "command_id": "", "actor": "a"}', 400, "command_id must be 1-64 characters"),
    ("POST", "commands", "", b'{"type": "EndTurn", "command_id": "a b", "actor": "a"}', 400, "command_id must be 1-64"),
    ("POST", "commands", "", b'{"type": "EndTurn", "command_id": "x", "actor": "' + b"k" * 65 + b'"}', 400,
     "actor is longer than 64 characters"),
    ("PUT", "commands", "", b"{}", 405, "PUT is not allowed here (allowed: POST)"),
    ("DELETE", "state", "", None, 405, "DELETE is not allowed here"),
    ("GET", "commands", "", None, 405, "GET is not allowed here (allowed: POST)"),
    ("GET", "nowhere", "", None, 404, "nothing here: /api/campaigns/default/encounters/"),
]


@pytest.mark.parametrize(("method", "what", "query", "body", "status", "says"), MALFORMED,
                         ids=[f"{m} {w}?{q[:20]} {(b or b'')[:12]!r}" for m, w, q, b, *_ in MALFORMED])
def test_a_malformed_request_gets_a_4xx_with_one_line(served: Served, shared: dict[str, str], method: str, what: str,
                                                      query: str, body: bytes | None, status: int, says: str) -> None:
    tokens = shared
    target = url(served, "malformed", what) + (f"?{query}" if query else "")
    with httpx.Client(timeout=10) as http:
        answer = http.request(method, target, headers=bearer(tokens["red"]), content=body)
        assert answer.status_code == status, answer.text
        error = answer.json()["error"]
        assert error.startswith(says) and "\n" not in error, error
        if what == "commands" and status == 400:  # refused at the door: nothing reached the inbox
            assert _inbox_entries_ever(served, "malformed", "red") == 0


@pytest.fixture(scope="module")
def shared(served: Served, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The seats' tokens of one encounter ("malformed") the request tests share, started
    (so a preview has a state to read) and never played: red never sends a command."""
    tokens = create_seats(served, "malformed", tmp_path_factory.mktemp("shared"))
    with httpx.Client(timeout=10) as http:
        give_up = time.monotonic() + 30
        while http.get(url(served, "malformed", "state"), headers=bearer(tokens["gm"])).json()["version"] < 4:
            assert time.monotonic() < give_up
            time.sleep(0.05)
    return tokens


def _inbox_entries_ever(served: Served, encounter: str, seat: str) -> int:
    """How many entries a seat's inbox was ever given (XINFO's entries-added:
    trimming does not lower it), through the data dir's Redis."""
    script = ("import trio\n"
              "from firelane.actors.store import open_store\n"
              "from firelane.redisio import RedisError\n"
              "async def main():\n"
              f"    async with open_store(data_dir={str(served.data_dir)!r}) as store:\n"
              f"        key = store.event_log('default').inbox_key({encounter!r}, {seat!r})\n"
              "        try:\n"
              "            info = await store.client.execute('XINFO', 'STREAM', key)\n"
              "        except RedisError:\n"
              "            print(0)  # no such stream: nothing was ever added\n"
              "            return\n"
              "        print(dict(zip(info[::2], info[1::2]))[b'entries-added'])\n"
              "trio.run(main)\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=ENGINE_ENV, timeout=60)
    assert result.returncode == 0, result.stderr
    return int(result.stdout)


def test_campaign_gm_routes_refuse_malformed_bodies_with_one_line(served: Served) -> None:
    created = firelane("characters", "--create-demo", "d100-zones", "--data-dir", str(served.data_dir), "--campaign", "gmr")
    assert created.returncode == 0, created.stderr
    token = firelane("campaign", "token", "--campaign", "gmr", "--data-dir", str(served.data_dir))
    assert token.returncode == 0, token.stderr
    gm = token.stdout.strip().split()[-1]
    character = json.loads(firelane("characters", "--campaign", "gmr", "--json", "--data-dir",
                                    str(served.data_dir)).stdout)["characters"][0]["id"]
    base = f"{served.api}/api/campaigns/gmr/characters/{character}"
    cases = [
        ("adjust", b"not json", 400, "the request is not valid JSON"),
        ("adjust", b"\xff", 400, "the request is not valid JSON"),
        ("adjust", b"[1]", 400, "the request must be a JSON object"),
        ("adjust", b"[" * 100, 400, "the request nests deeper than 32 levels"),
        ("adjust", b'{"reason": 5}', 400, "the adjustment: Expected `str`"),
        ("adjust", b'{"reason": "x", "command_id": "bad id!"}', 400, "command_id must be"),
        ("release", b'{"reason": 5}', 400, "reason must be text"),
        ("release", b'{"why": "x"}', 400, "unknown field 'why'"),
        ("adjust", b'{"reason": "' + b"x" * MAX_COMMAND_BYTES + b'"}', 413, "the request is "),
    ]
    with httpx.Client(timeout=10, headers=bearer(gm)) as http:
        for route, body, status, says in cases:
            answer = http.post(f"{base}/{route}", content=body)
            assert answer.status_code == status, (route, body[:20], answer.text)
            assert answer.json()["error"].startswith(says), (route, body[:20], answer.text)
        assert http.get(f"{base}/adjust").json()["error"] == "GET is not allowed here (allowed: POST)"


def _raw_request(served: Served, head: str, body_parts: list[bytes] = (), *, timeout: float = 10) -> bytes:
    """Send a request head (and some body parts) over a bare socket and read
    the answer, without sending the rest of the body."""
    with socket.create_connection(_address(served.api), timeout=timeout) as sock:
        sock.sendall(head.encode())
        for part in body_parts:
            try:
                sock.sendall(part)
            except (BrokenPipeError, ConnectionResetError):
                break  # the server answered and closed before taking it all
        answer = b""
        while b"\r\n\r\n" not in answer or len(answer.split(b"\r\n\r\n", 1)[1]) < _length(answer):
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
        return answer


def _length(answer: bytes) -> int:
    found = re.search(rb"\r\ncontent-length: *(\d+)", answer, flags=re.I)
    return int(found.group(1)) if found else 0


def test_a_body_over_the_cap_is_refused_by_its_content_length_before_it_is_read(served: Served, shared: dict[str, str]) -> None:
    """64 MB announced, none of it sent: the answer comes at once, 413 (a server
    that read the body first would still be waiting for it)."""
    tokens = shared
    host, port = _address(served.api)
    for path, token in (("/api/campaigns/default/encounters/malformed/commands", tokens["red"]),
                        ("/api/campaigns/default/characters/anyone/adjust", "not-checked-yet")):
        answer = _raw_request(served, f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: Bearer {token}\r\n"
                                      f"Content-Type: application/json\r\nContent-Length: {64 * 1024 * 1024}\r\n\r\n")
        status = answer.split(b" ", 2)[1] if answer else b""
        assert status in (b"413", b"403", b"401"), answer[:200]
        if path.endswith("/commands"):
            assert status == b"413" and b'"the command is 67,108,864 bytes; the limit is 65,536"' in answer, answer


def test_a_chunked_body_is_read_no_further_than_the_cap(served: Served, shared: dict[str, str]) -> None:
    """No Content-Length: the body comes in chunks, and the answer (413) comes
    once the cap is passed, while the client has not finished sending."""
    tokens = shared
    host, port = _address(served.api)
    chunk = b"a" * 16_384
    parts = [b"%x\r\n%s\r\n" % (len(chunk), chunk)] * (2 * MAX_COMMAND_BYTES // len(chunk))  # no final chunk
    answer = _raw_request(served, f"POST /api/campaigns/default/encounters/malformed/commands HTTP/1.1\r\nHost: {host}:{port}\r\n"
                                  f"Authorization: Bearer {tokens['red']}\r\nTransfer-Encoding: chunked\r\n\r\n", parts)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:300]
    assert b'"the command is more than the limit of 65,536 bytes"' in answer


def _rss_peak_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


def test_a_64_mb_post_does_not_grow_the_server(served: Served, shared: dict[str, str]) -> None:
    """The issue's figure was RSS 55 -> 128 MB for one 64 MB POST; read under
    the cap, the server's peak memory does not move (by more than noise)."""
    tokens = shared
    before = _rss_peak_mb(served.process.pid)
    body = b'{"type":"EndTurn","command_id":"big","actor":"a","pad":"' + b"a" * (64 * 1024 * 1024) + b'"}'
    for content in (body, iter([body[i:i + 65536] for i in range(0, len(body), 65536)])):  # sized, then chunked
        try:
            with httpx.Client(timeout=30) as http:
                answer = http.post(url(served, "malformed", "commands"), headers=bearer(tokens["red"]), content=content)
            assert answer.status_code == 413, answer.text
        except httpx.WriteError:
            pass  # the server answered 413 and closed while the client was still sending
    assert _rss_peak_mb(served.process.pid) - before < 16


# ------------------------------------------------------------------ item 9: hosts


def _get(served: Served, path: str, host: str, **headers: str) -> httpx.Response:
    with httpx.Client(timeout=10) as http:
        return http.get(served.api + path, headers={"Host": host, **headers})


def test_only_the_served_host_names_are_answered(served: Served, shared: dict[str, str]) -> None:
    tokens = shared
    port = _address(served.api)[1]
    paths = ["/", "/table/default/malformed", "/table/assets/app.js", "/api/health", "/api/campaigns/default/encounters",
             "/api/campaigns/default/characters", "/api/campaigns/default/encounters/malformed/state"]
    for host in ("attacker.example", f"attacker.example:{port}", "127.0.0.1.attacker.example", "localhost.attacker.example",
                 f"{ALLOWED}.evil", "[::2]"):
        for path in paths:
            answer = _get(served, path, host, Authorization=f"Bearer {tokens['gm']}")
            assert answer.status_code == 400, (host, path, answer.text)
            error = answer.json()["error"]
            assert error.startswith("this server does not answer to the host") and "\n" not in error, error
            assert tokens["gm"] not in answer.text
    with httpx.Client(http1=False, http2=True, timeout=10) as http2:  # HTTP/2 without TLS (prior knowledge): :authority
        refused = http2.get(served.api + "/api/campaigns/default/encounters", headers={"Host": "attacker.example"})
        assert refused.http_version == "HTTP/2" and refused.status_code == 400, refused.text
        assert http2.get(served.api + "/api/campaigns/default/encounters").status_code == 200
    for host in ("malformed:host:header", "a b", "[not-v6]:80", "x/y"):
        answer = _get(served, "/api/health", host)
        assert answer.status_code == 400 and answer.json()["error"].startswith("malformed Host header"), (host, answer.text)
    for host in ("localhost", f"localhost:{port}", "LOCALHOST:1", "127.0.0.1", f"127.0.0.1:{port}", f"[::1]:{port}", "[::1]",
                 ALLOWED, f"{ALLOWED}:{port}", f"{ALLOWED}."):
        for path in paths:
            answer = _get(served, path, host, Authorization=f"Bearer {tokens['gm']}")
            assert answer.status_code == 200, (host, path, answer.text)


async def test_a_websocket_handshake_with_a_foreign_host_is_refused(served: Served, shared: dict[str, str]) -> None:
    tokens = shared
    host, port = _address(served.api)
    for header, status in (("attacker.example", b"400"), (f"{ALLOWED}:{port}", b"101"), (f"localhost:{port}", b"101")):
        stream = await trio.open_tcp_stream(host, port)
        key = base64.b64encode(os.urandom(16)).decode()
        await stream.send_all((f"GET {ws_path('malformed', tokens['spectator'])} HTTP/1.1\r\nHost: {header}\r\n"
                               "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                               f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        answer = b""
        with trio.fail_after(10):
            while b"\r\n\r\n" not in answer:
                chunk = await stream.receive_some(65536)
                if not chunk:
                    break
                answer += chunk
        assert answer.split(b" ", 2)[1] == status, (header, answer[:300])
        await stream.aclose()


def test_the_join_links_of_firelane_seats_keep_working(served: Served, shared: dict[str, str]) -> None:
    result = firelane("seats", "malformed", "--json", "--data-dir", str(served.data_dir))
    assert result.returncode == 0, result.stderr
    for seat in json.loads(result.stdout)["seats"]:
        link = urlsplit(seat["link"])
        with httpx.Client(timeout=10) as http:  # as a browser that opened the link: its Host is the link's
            page = http.get(f"{link.scheme}://{link.netloc}{link.path}")
            assert page.status_code == 200, page.text
            token = dict(part.split("=", 1) for part in link.fragment.split("&") if "=" in part)["token"]
            view = http.get(f"{link.scheme}://{link.netloc}/api/campaigns/default/encounters/malformed/view", headers=bearer(token))
            assert view.status_code == 200, view.text


def test_allowed_host_takes_only_a_host_name(tmp_path: Path) -> None:
    for bad in ("http://table.example", "table.example:8740", "table.example/x", "", "a b"):
        result = firelane("serve", "--data-dir", str(tmp_path / "data"), "--port", "0", "--allowed-host", bad)
        assert result.returncode == 2, result.stderr
        lines = result.stderr.strip().splitlines()
        assert "--allowed-host" in lines[-1] and "not a host name or IP address" in lines[-1], result.stderr


# ------------------------------------------------------------------ item 9: headers


def test_every_answer_carries_the_security_headers(served: Served, shared: dict[str, str]) -> None:
    tokens = shared
    with httpx.Client(timeout=10) as http:
        pages = {path: http.get(served.api + path) for path in ("/", "/table/default/malformed", "/characters/default/anyone")}
        answers = {path: http.get(served.api + path, headers=bearer(tokens["red"])) for path in (
            "/api/health", "/api/campaigns/default/encounters/malformed/state", "/table/assets/app.js", "/nowhere",
            "/api/campaigns/default/encounters/malformed/events?after=x", "/favicon.ico")}
        answers["attacker"] = http.get(served.api + "/api/health", headers={"Host": "attacker.example"})
    for path, page in pages.items():
        assert page.status_code == 200, path
        policy = _directives(page.headers["content-security-policy"])
        assert policy["script-src"] == ["'self'"] and policy["frame-ancestors"] == ["'none'"], policy
        assert policy["style-src"] == ["'self'"] and policy["object-src"] == ["'none'"], policy
        assert not any("unsafe" in value or "sha256-" in value for values in policy.values() for value in values), policy
        # No inline script at all: every <script> loads a file (and there is no import map).
        scripts = re.findall(r"<script\b([^>]*)>(.*?)</script>", page.text, flags=re.S)
        assert scripts and all('src="' in attributes and not body.strip() for attributes, body in scripts), scripts
        assert " on" not in re.sub(r"<!--.*?-->", "", page.text, flags=re.S).split("<body>")[0].lower().replace("\n", " ")
    for path, answer in {**pages, **answers}.items():
        assert answer.headers["x-content-type-options"] == "nosniff", path
        assert answer.headers["referrer-policy"] == "no-referrer", path
        assert "frame-ancestors 'none'" in answer.headers["content-security-policy"], path
    assert answers["/api/health"].headers["content-security-policy"].startswith("default-src 'none'")
    assert answers["/favicon.ico"].status_code == 200 and answers["/favicon.ico"].headers["content-type"] == "image/svg+xml"


def _directives(policy: str) -> dict[str, list[str]]:
    return {parts[0]: parts[1:] for parts in (d.split() for d in policy.split(";")) if parts}


# ------------------------------------------------------------------ the last resort


class _BrokenStore:
    """A store whose every use fails as nothing in the routes expects."""

    client = None  # the workshop's routes keep the store's client when they are made; no request here reaches it

    def event_log(self, campaign: str):
        raise RuntimeError("the store fell over")


async def test_an_unexpected_failure_is_a_logged_500_with_one_line() -> None:
    async with trio.open_nursery() as nursery:
        app = make_app(Api(_BrokenStore(), nursery))  # type: ignore[arg-type]
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://localhost") as http:
            with structlog.testing.capture_logs() as logged:
                answer = await http.get("/api/campaigns/default/encounters")
        nursery.cancel_scope.cancel()
    assert answer.status_code == 500
    assert answer.json() == {"error": "internal error (RuntimeError); the server's log has the details"}
    assert answer.headers["x-content-type-options"] == "nosniff"
    (entry,) = [e for e in logged if e["event"] == "unexpected error answering a request"]
    assert entry["log_level"] == "error" and entry["request"] == "GET /api/campaigns/default/encounters"
    assert "the store fell over" in entry["error"] and isinstance(entry["exc_info"], RuntimeError)
