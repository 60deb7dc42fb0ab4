"""One process's waits for commands: many encounters' inboxes in a few
blocking reads.

Without a hub, each running encounter's sequencer waits for its seats'
commands with its own ``XREAD BLOCK`` — one Redis connection per encounter
(320 connections for 300 fights waiting on people). With it, a sequencer with
nothing to do registers its inboxes and cursors here and waits on a trio
event; the hub's readers (``readers`` dedicated connections) each block on
one ``XREAD`` over all the inboxes registered with them, and wake the
encounters whose inboxes got entries. Registering wakes the reader it joins
(an entry in that reader's own "poke" stream, which every read includes), so
a command never waits for a read to time out; the cursors are the
sequencer's, so an entry that came before the registration is found at once.
The sequencer then reads its inboxes as ever (without blocking).

`firelane serve` installs one per engine host (`install`); a sequencer uses
it when one is installed in its trio run (`current`).
"""

from __future__ import annotations

import itertools
import os
import socket
from collections.abc import Mapping
from typing import Any

import trio

from firelane.logs import get_logger
from firelane.redisio import RedisError

log = get_logger("firelane.inbox_hub")

_hub: trio.lowlevel.RunVar[InboxHub] = trio.lowlevel.RunVar("firelane_inbox_hub")


def current() -> InboxHub | None:
    try:
        return _hub.get()
    except LookupError:
        return None


class _Watch:
    __slots__ = ("cursors", "woken")

    def __init__(self, cursors: Mapping[str, str]) -> None:
        self.cursors = dict(cursors)
        self.woken = trio.Event()


class InboxHub:
    def __init__(self, client: Any, *, readers: int = 8, block_ms: int = 30_000) -> None:
        self.client = client
        self.readers = readers
        self.block_ms = block_ms
        self._numbers = itertools.count()
        self._watches: list[dict[int, _Watch]] = [{} for _ in range(readers)]
        self._changed = [trio.Event() for _ in range(readers)]
        tag = f"{socket.gethostname()}:{os.getpid()}:{id(self):x}"
        self._pokes = [f"firelane:{{hub}}:{tag}:poke:{i}" for i in range(readers)]
        self.reads = 0

    def install(self) -> None:
        _hub.set(self)

    async def run(self) -> None:
        """Run the readers (until cancelled); installs the hub in this trio run."""
        self.install()
        try:
            async with trio.open_nursery() as nursery:
                for index in range(self.readers):
                    nursery.start_soon(self._reader, index)
        finally:
            with trio.CancelScope(shield=True):
                try:
                    await self.client.execute("DEL", *self._pokes)
                except RedisError:
                    pass

    async def wait(self, cursors: Mapping[str, str]) -> None:
        """Return once one of these streams (key -> the last id read) has an
        entry after its cursor; cancel to stop waiting."""
        number = next(self._numbers)
        index = number % self.readers
        watch = _Watch(cursors)
        self._watches[index][number] = watch
        try:
            self._changed[index].set()
            await self.client.execute("XADD", self._pokes[index], "MAXLEN", "1", "*", "p", "1")
            await watch.woken.wait()
        finally:
            self._watches[index].pop(number, None)

    async def _reader(self, index: int) -> None:
        watches = self._watches[index]
        poked = "0-0"  # the last poke read: a poke sent while a read was being sent is not missed
        while True:
            try:
                async with self.client.dedicated() as connection:
                    while True:
                        if not watches:
                            self._changed[index] = trio.Event()
                            await self._changed[index].wait()
                            continue
                        self._changed[index] = trio.Event()
                        owners: dict[bytes, list[_Watch]] = {}
                        keys: list[str] = []
                        ids: list[str] = []
                        for watch in list(watches.values()):
                            for key, cursor in watch.cursors.items():
                                encoded = key.encode()
                                if encoded not in owners:
                                    keys.append(key)
                                    ids.append(cursor)
                                owners.setdefault(encoded, []).append(watch)
                        self.reads += 1
                        reply = await connection.execute("XREAD", "COUNT", 1, "BLOCK", self.block_ms, "STREAMS",
                                                          self._pokes[index], *keys, poked, *ids)
                        for stream, entries in reply or []:
                            if entries and stream == self._pokes[index].encode():
                                poked = entries[-1][0].decode()
                            elif entries:
                                for watch in owners.get(stream, ()):
                                    watch.woken.set()
                        for number, watch in list(watches.items()):
                            if watch.woken.is_set():
                                watches.pop(number, None)
            except RedisError as exc:
                log.warning("inbox hub read failed; retrying", reader=index, error=str(exc)[:200])
                for watch in list(watches.values()):
                    watch.woken.set()  # their sequencers read again themselves (and meet Redis's trouble there)
                await trio.sleep(0.5)
