"""What every request to `firelane serve`'s HTTP/WebSocket API goes through
around its route (mounted by web/encounters.py):

- the Host check: only the names the server is reached by are answered
  (the ``--host`` it binds to, the address it announces, localhost, 127.0.0.1,
  [::1], and each ``--allowed-host``), so a page on another site cannot read
  the API through a name it points at this machine (DNS rebinding). The port
  in the header does not matter. A WebSocket handshake is checked the same way;
- security headers on every answer: a Content-Security-Policy (the pages run
  only the server's own scripts and styles, and nothing may frame them),
  ``X-Content-Type-Options: nosniff``, ``Referrer-Policy: no-referrer``;
- the last resort: an exception no route expected is logged (with its
  traceback) and answered with a 500 and one line (a WebSocket is closed
  with 1011), never silently;
- request bodies read under a cap (`read_body`): refused by their
  Content-Length before anything is read, and read no further than the cap
  when they come in chunks;
- the hypercorn settings (`hypercorn_config`): TCP options on the listening
  socket (inherited by every connection) that drop a connection whose peer
  vanished or stopped reading.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import AsyncIterator, Iterable
from contextlib import aclosing
from urllib.parse import urlsplit

import msgspec
import trio
from hypercorn.config import Config, Sockets
from starlette.datastructures import MutableHeaders
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from firelane.logs import get_logger

log = get_logger("firelane.web")

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")

# The pages load only the server's own modules and styles (no inline script,
# no import map), talk only to their own origin (fetch and the WebSocket), and
# may not be framed. API answers are data: they may load nothing at all.
PAGE_POLICY = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; font-src 'self'; "
               "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
ANSWER_POLICY = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
_COMMON_HEADERS = (
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),  # frame-ancestors, for browsers that predate it
    (b"cross-origin-resource-policy", b"same-origin"),  # no other site may embed an answer
)

# A connection whose peer vanished without a FIN, or stopped reading, is
# aborted by TCP: keepalive probes an idle connection after DEAD_PEER/2 s, and
# TCP_USER_TIMEOUT aborts one whose probes or data have waited unacknowledged
# (or unread behind a shut window) for DEAD_PEER s; hypercorn then reports the
# disconnect and the watcher's place is freed. hypercorn's own WebSocket pings
# (`websocket_ping_interval`) are left off: it sends them but never looks at
# the pongs, so they detect nothing TCP does not, and its first ping, sent at
# once on accept, makes a client that closes right after connecting
# (trio-websocket 0.12) fail: it answers the ping after its own close.
DEAD_PEER_TIMEOUT_S = 20.0
WEBSOCKET_MAX_MESSAGE_BYTES = 64 * 1024  # clients send nothing but closes; hypercorn's default is 16 MB


class ApiError(Exception):
    """A refusal: its HTTP status and the one line that says why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


# ------------------------------------------------------------------ host names

_DNS_NAME = re.compile(r"(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*")
_HOST_HEADER = re.compile(r"(?:\[(?P<ipv6>[0-9a-f:.]+)\]|(?P<name>[^:\[\]/@\s]+))(?::(?P<port>[0-9]{1,5}))?")


def host_name(text: str) -> str:
    """A host name or IP address as the Host header carries it (lower case,
    no brackets, no trailing dot); ValueError for anything else (a port, a
    scheme, a path)."""
    name = text.strip().lower()
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    name = name[:-1] if name.endswith(".") else name
    try:
        return str(ipaddress.ip_address(name))
    except ValueError:
        pass
    if not _DNS_NAME.fullmatch(name):
        raise ValueError(f"not a host name or IP address: {text[:80]!r} (no scheme, port or path)")
    return name


class ServedNames:
    """The host names a server answers to."""

    def __init__(self, names: Iterable[str] = ()) -> None:
        self._names: set[str] = set()
        for name in (*LOOPBACK_NAMES, *names):
            self.add(name)

    def add(self, name: str) -> None:
        self._names.add(host_name(name))

    def add_urls(self, urls: Iterable[str]) -> None:
        """The addresses the server announces (hypercorn's binds): its join links use them."""
        for url in urls:
            host = urlsplit(url).hostname
            if host:
                self.add(host)

    def __iter__(self):
        return iter(sorted(self._names))

    def refusal(self, header: str | None) -> str | None:
        """Why a request with this Host header is not answered, or None."""
        if not header:
            return "the request names no host (a Host header is required)"
        match = _HOST_HEADER.fullmatch(header.strip().lower())
        if match is None:
            return f"malformed Host header {header[:80]!r}"
        name = match["ipv6"] or match["name"]
        try:
            name = host_name(name)
        except ValueError:
            return f"malformed Host header {header[:80]!r}"
        if name in self._names:
            return None
        return (f"this server does not answer to the host {name[:80]!r} (its operator can add it: "
                f"firelane serve --allowed-host {name[:80]})")


# ------------------------------------------------------------------ the guard around every route


def _json_answer(status: int, message: str) -> Response:
    return Response(msgspec.json.encode({"error": message}), status_code=status, media_type="application/json")


def _with_security_headers(message: Message) -> Message:
    headers = MutableHeaders(raw=list(message.get("headers", [])))
    page = headers.get("content-type", "").startswith("text/html")
    if "content-security-policy" not in headers:
        headers["content-security-policy"] = PAGE_POLICY if page else ANSWER_POLICY
    for name, value in _COMMON_HEADERS:
        if name.decode() not in headers:
            headers.raw.append((name, value))
    return {**message, "headers": headers.raw}


class Guard:
    """ASGI middleware: the Host check, the security headers and the last resort (see the module's text)."""

    def __init__(self, app: ASGIApp, names: ServedNames) -> None:
        self.app = app
        self.names = names

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        progress = {"started": False, "accepted": False, "closed": False}

        async def guarded_send(message: Message) -> None:
            kind = message["type"]
            if kind in ("http.response.start", "websocket.http.response.start"):
                progress["started"] = True
                message = _with_security_headers(message)
            elif kind == "websocket.accept":
                progress["started"] = progress["accepted"] = True
            elif kind == "websocket.close":
                progress["started"] = progress["closed"] = True
            await send(message)

        # HTTP/2 names the host in :authority (hypercorn passes it on as a header): each must be served.
        named = [value.decode("latin-1") for key, value in scope.get("headers", []) if key in (b"host", b":authority")]
        refusal = next(filter(None, map(self.names.refusal, named)), None) if named else self.names.refusal(None)
        if refusal is not None:
            await _json_answer(400, refusal)(scope, receive, guarded_send)
            return
        try:
            await self.app(scope, receive, guarded_send)
        except Exception as exc:  # noqa: BLE001 - the last resort: logged, answered, never silent
            what = scope.get("method", "WebSocket")
            log.error("unexpected error answering a request", request=f"{what} {scope.get('path', '')}"[:300],
                      error=repr(exc)[:300], exc_info=exc)
            line = f"internal error ({type(exc).__name__}); the server's log has the details"
            if not progress["started"]:
                await _json_answer(500, line)(scope, receive, guarded_send)
            elif progress["accepted"] and not progress["closed"]:
                await guarded_send({"type": "websocket.close", "code": 1011, "reason": line[:120]})


# ------------------------------------------------------------------ request bodies


# A refused body's rest is read and thrown away up to this much (for a
# moment), so the client, still sending, reliably gets the 413: closing a
# connection with unread data resets it, and the answer with it.
_DRAIN_BYTES = 1024 * 1024
_DRAIN_S = 2.0


async def read_body(request: Request, limit: int, what: str = "the request") -> bytes:
    """The request's body, at most ``limit`` bytes: refused with 413 by its
    Content-Length before anything is read, or as soon as a body without one
    (chunked) passes the limit. Nothing past the limit is kept."""
    declared = request.headers.get("content-length")
    size = None
    if declared is not None:
        try:
            size = int(declared)
        except ValueError:
            raise ApiError(400, f"Content-Length must be a whole number, not {declared[:20]!r}") from None
    chunks: list[bytes] = []
    read = 0
    try:
        async with aclosing(request.stream()) as stream:
            if size is not None and size > limit:
                if size - limit <= _DRAIN_BYTES:
                    await _drain(stream)
                raise ApiError(413, f"{what} is {size:,} bytes; the limit is {limit:,}")
            async for chunk in stream:
                read += len(chunk)
                if read > limit:
                    await _drain(stream)
                    raise ApiError(413, f"{what} is more than the limit of {limit:,} bytes")
                chunks.append(chunk)
    except ClientDisconnect:
        raise ApiError(400, f"the connection closed before all of {what} came") from None
    return b"".join(chunks)


async def _drain(stream: AsyncIterator[bytes]) -> None:
    """Read and drop what is left of a refused body, up to _DRAIN_BYTES and _DRAIN_S."""
    dropped = 0
    with trio.move_on_after(_DRAIN_S):
        async for chunk in stream:
            dropped += len(chunk)
            if dropped > _DRAIN_BYTES:
                return


# ------------------------------------------------------------------ hypercorn


def detect_dead_peers(sock: socket.socket, timeout_s: float) -> None:
    """TCP options (inherited by every connection the listening ``sock``
    accepts) under which an idle connection is probed, and one whose probes
    or data go unacknowledged, or unread, for ``timeout_s`` is aborted."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    user_timeout = getattr(socket, "TCP_USER_TIMEOUT", None)  # Linux
    if user_timeout is not None:
        sock.setsockopt(socket.IPPROTO_TCP, user_timeout, int(timeout_s * 1000))
    for option, value in (("TCP_KEEPIDLE", max(1, int(timeout_s / 2))), ("TCP_KEEPINTVL", max(1, int(timeout_s / 4))),
                          ("TCP_KEEPCNT", 2)):
        if hasattr(socket, option):
            sock.setsockopt(socket.IPPROTO_TCP, getattr(socket, option), value)


class _WebConfig(Config):
    dead_peer_timeout_s = DEAD_PEER_TIMEOUT_S

    def create_sockets(self) -> Sockets:
        sockets = super().create_sockets()
        for sock in (*sockets.secure_sockets, *sockets.insecure_sockets):
            if sock.family in (socket.AF_INET, socket.AF_INET6):
                detect_dead_peers(sock, self.dead_peer_timeout_s)
        return sockets


def hypercorn_config(host: str, port: int, *, dead_peer_timeout_s: float = DEAD_PEER_TIMEOUT_S) -> Config:
    """hypercorn's settings for the API: the bind, the dead-peer timeout, quiet logs."""
    config = _WebConfig()
    config.bind = [f"[{host}]:{port}" if ":" in host else f"{host}:{port}"]
    config.accesslog = None
    config.errorlog = None  # the Guard logs what goes wrong in a route
    config.websocket_max_message_size = WEBSOCKET_MAX_MESSAGE_BYTES
    config.dead_peer_timeout_s = dead_peer_timeout_s
    return config


__all__ = ["ANSWER_POLICY", "DEAD_PEER_TIMEOUT_S", "PAGE_POLICY", "ApiError", "Guard",
           "ServedNames", "host_name", "hypercorn_config", "read_body"]
