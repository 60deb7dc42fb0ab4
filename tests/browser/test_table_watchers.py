"""A seat's page pushed out by newer connections of the same seat (more than
its cap of WebSockets: other tabs, other devices) says so, and does not
reconnect to push the newest out in turn."""

from __future__ import annotations

import base64
import os
import socket
import time
from urllib.parse import urlsplit

from firelane.web.feed import SEAT_WATCHERS
from tests.browser.table_helpers import Table, table_setup


def raw_websocket(api: str, path: str) -> socket.socket:
    """A WebSocket handshake over a bare socket, answered 101; the socket then only listens."""
    parts = urlsplit(api)
    sock = socket.create_connection((parts.hostname, parts.port), timeout=10)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall((f"GET {path} HTTP/1.1\r\nHost: {parts.netloc}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(1)
        assert chunk, head
        head += chunk
    assert head.startswith(b"HTTP/1.1 101"), head
    return sock


def frame_opcodes(sock: socket.socket) -> list[int]:
    """The opcodes of the frames the server has sent so far (8 is a close; the
    server's pings are 9), read without waiting; the connection must still be open."""
    sock.setblocking(False)
    data = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except BlockingIOError:
            break
        assert chunk, "the server closed the connection"
        data += chunk
    opcodes = []
    while data:
        length, start = data[1] & 0x7F, 2
        if length == 126:
            length, start = int.from_bytes(data[2:4], "big"), 4
        elif length == 127:
            length, start = int.from_bytes(data[2:10], "big"), 10
        opcodes.append(data[0] & 0x0F)
        data = data[start + length:]
    return opcodes


def test_a_page_replaced_by_newer_connections_of_its_seat_says_so_and_stays_out(table: Table) -> None:
    seats = table.create("replaced", table_setup(reaction_deadline_ms=20_000))
    page = table.open(seats["alice"]["link"])
    token = seats["alice"]["token"]
    version = table.state("replaced", token)["version"]
    # Newer connections of the seat that only listen (from the current version: one beyond it is refused, 4400).
    newer = [raw_websocket(table.served.api, f"/api/campaigns/default/encounters/replaced/ws?token={token}&after={version}")
             for _ in range(SEAT_WATCHERS)]
    try:
        status = page.wait_for_selector(".app header .status.error", timeout=10_000)
        assert "replaced by a newer connection of this seat" in status.text_content()
        assert "reload to take this page back" in status.text_content()
        # It stays out: were it to reconnect, the oldest of the newer connections would be closed.
        give_up = time.monotonic() + 2
        while time.monotonic() < give_up:
            page.wait_for_timeout(100)
            assert page.locator(".app header .status.error").count() == 1
        for sock in newer:
            assert 8 not in frame_opcodes(sock), "a newer connection was closed"
    finally:
        for sock in newer:
            sock.close()
    assert not table.errors, table.errors
