"""A webhook receiver for tests, on loopback, in the test's own trio run.

Paths behave: ``/ok`` answers 200 and records the request; ``/fail`` 500;
``/redirect`` 302 to /ok; ``/slow`` reads the request and never answers;
``/endless`` answers 200 with a body that never ends. Every request is
recorded (path, headers, body)."""

from __future__ import annotations

from dataclasses import dataclass, field

import trio


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    port: int = 0
    received: list[Received] = field(default_factory=list)
    arrived: trio.Event = field(default_factory=trio.Event)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def at(self, path: str) -> list[Received]:
        return [r for r in self.received if r.path == path]

    async def wait_for(self, path: str, count: int = 1) -> list[Received]:
        while len(self.at(path)) < count:
            self.arrived = trio.Event()
            await self.arrived.wait()
        return self.at(path)

    async def serve(self, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
        listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
        self.port = listeners[0].socket.getsockname()[1]
        task_status.started(self)
        await trio.serve_listeners(self._handle, listeners)

    async def _handle(self, stream: trio.SocketStream) -> None:
        try:
            await self._answer(stream)
        except trio.BrokenResourceError:
            pass  # the sender hung up (on the endless body: what it should do)

    async def _answer(self, stream: trio.SocketStream) -> None:
        async with stream:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = await stream.receive_some(65536)
                if not chunk:
                    return
                data += chunk
            head, _, body = data.partition(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            path = lines[0].split(" ")[1]
            behaviour = path.split("?")[0]  # (a query names who is told: /ok?gm)
            headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
            length = int(headers.get("content-length", 0))
            while len(body) < length:
                chunk = await stream.receive_some(65536)
                if not chunk:
                    break
                body += chunk
            self.received.append(Received(path, headers, body))
            self.arrived.set()
            if behaviour == "/ok":
                await stream.send_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
            elif behaviour == "/fail":
                await stream.send_all(b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            elif behaviour == "/redirect":
                await stream.send_all(b"HTTP/1.1 302 Found\r\nLocation: /ok\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            elif behaviour == "/slow":
                await trio.sleep_forever()
            elif behaviour == "/endless":
                await stream.send_all(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
                while True:
                    await stream.send_all(b"400\r\n" + b"x" * 1024 + b"\r\n")
                    await trio.sleep(0.01)
