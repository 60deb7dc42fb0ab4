"""One log follower per encounter in a process, fanning batches out to actors.

Every actor keeps its own cursor and its own state, but N actors in one process
need not run N `XREAD BLOCK`s for the same entries: the tap reads each batch
once and hands it to every subscriber's mailbox (an unbounded trio memory
channel, so a slow actor never stalls the others). A subscriber that joins late
reads its backlog from the log itself, then takes the tap's batches, dropping
what it has already seen by version.

Actors in other processes (or other languages) follow the log directly; the
tap is an optimisation of this process only and writes nothing.
"""

from __future__ import annotations

import math
from contextlib import aclosing

import trio

from firelane.events.envelope import StoredEvent
from firelane.events.log import EventLog


class LogTap:
    def __init__(self, event_log: EventLog, encounter: str, *, block_ms: int = 1000, batch: int = 1000) -> None:
        self.log = event_log
        self.encounter = encounter
        self.block_ms = block_ms
        self.batch = batch
        self.cursor = "0-0"
        self._subscribers: list[trio.MemorySendChannel[list[StoredEvent]]] = []

    def subscribe(self) -> trio.MemoryReceiveChannel[list[StoredEvent]]:
        """A mailbox that receives every batch the tap reads from now on."""
        send, receive = trio.open_memory_channel[list[StoredEvent]](math.inf)
        self._subscribers.append(send)
        return receive

    async def run(self) -> None:
        """Follow the log from the tap's cursor forever (restartable: it resumes from its cursor)."""
        async with aclosing(self.log.follow(self.encounter, self.cursor, block_ms=self.block_ms, batch=self.batch)) as batches:
            async for batch in batches:
                self.cursor = batch[-1].entry_id
                for send in list(self._subscribers):
                    try:
                        send.send_nowait(batch)
                    except (trio.BrokenResourceError, trio.ClosedResourceError):
                        self._subscribers.remove(send)  # that actor has finished
