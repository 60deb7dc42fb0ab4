"""One actor per combatant: it follows the log from its own cursor, keeps its
own view of the state, and answers through its policy when the encounter
awaits it.

The actor decides only once it has caught up with the log's tail (the sequencer
appends each command's events atomically), at most once per log version, and
never while its previous command is unanswered (the sequencer answers every
command with its events or a rejection; window answers wait in the sequencer
until the window is complete, so deciding again meanwhile would answer twice).
Command IDs derive from the version: a restarted actor recomputes the same
command and the sequencer applies it once.
"""

from __future__ import annotations

from contextlib import aclosing

import trio

from firelane.actors.policies import Policy
from firelane.actors.tap import LogTap
from firelane.actors.sequencer import command_key
from firelane.engine.core import BaseRuleSystem
from firelane.engine.seats import ENGINE_SEAT, seat_controlling
from firelane.engine.state import EncounterState
from firelane.events import codec
from firelane.events.envelope import StoredEvent
from firelane.events.log import EventLog, InboxClosed
from firelane.events.schemas import CommandRejected
from firelane.logs import get_logger

log = get_logger("firelane.actor")


class CombatantActor:
    def __init__(
        self,
        event_log: EventLog,
        encounter: str,
        combatant: str,
        system: BaseRuleSystem,
        policy: Policy,
        *,
        block_ms: int = 1000,
        tap: LogTap | None = None,
    ) -> None:
        self.log = event_log
        self.encounter = encounter
        self.combatant = combatant
        self.system = system
        self.policy = policy
        self.block_ms = block_ms
        self.tap = tap
        self.follow_batch = 1000
        self.state: EncounterState = system.initial_state()
        self.state.encounter = encounter
        self.cursor = "0-0"
        self._decided_at: int | None = None
        self._last_command_id: str | None = None
        self._last_rejected = False
        self._outstanding = False
        self.commands_sent = 0

    def _apply(self, batch: list[StoredEvent]) -> None:
        for stored in batch:
            if stored.version <= self.state.version:
                continue  # already seen (a drain overlapped the follow)
            event = codec.decode_event(stored)
            self.system.evolve(self.state, event)
            self.cursor = stored.entry_id
            if self._last_command_id is not None and stored.command_id == self._last_command_id:
                # (the log's command ids are namespaced by seat: see _seat)
                self._outstanding = False
                if isinstance(event, CommandRejected):
                    self._last_rejected = True

    async def run(self) -> EncounterState:
        """Follow the log (directly, or through a process-wide tap) and act until the encounter ends."""
        if self.tap is not None:
            return await self._run_on_tap()
        async with aclosing(self.log.follow(self.encounter, self.cursor, block_ms=self.block_ms, batch=self.follow_batch)) as batches:
            async for batch in batches:
                self._apply(batch)
                # A command's events are appended atomically, so a read that
                # returned fewer entries than asked for ended at a batch
                # boundary; a full one may have cut a batch: read on.
                if len(batch) >= self.follow_batch:
                    await self._read_to_tail()
                if self.state.ended:
                    return self.state
                await self._maybe_act()
        return self.state

    async def _run_on_tap(self) -> EncounterState:
        assert self.tap is not None
        mailbox = self.tap.subscribe()
        async with mailbox:
            await self._read_to_tail()  # the backlog before the tap's batches
            if self.state.ended:
                return self.state
            await self._maybe_act()
            async for batch in mailbox:
                self._apply(batch)
                if len(batch) >= self.tap.batch:
                    await self._read_to_tail()
                if self.state.ended:
                    return self.state
                await self._maybe_act()
        return self.state

    async def _read_to_tail(self) -> None:
        while True:
            more = await self.log.read(self.encounter, self.cursor, count=self.follow_batch)
            self._apply(more)
            if len(more) < self.follow_batch:
                return

    def _seat(self, state: EncounterState) -> str:
        """The inbox this actor writes to: the engine's for an AI combatant, else
        the seat controlling it (this process is trusted with every inbox)."""
        combatant = state.combatants.get(self.combatant)
        if combatant is None or combatant.policy == "ai":
            return ENGINE_SEAT
        seat = seat_controlling(state.seats, self.combatant)
        return seat.id if seat is not None else ENGINE_SEAT

    async def _maybe_act(self) -> None:
        state = self.state
        if self.combatant not in self.system.awaiting(state).combatants:
            return
        if self._decided_at == state.version or self._outstanding:
            return
        self._decided_at = state.version
        command = self.policy.choose(state, self.combatant, last_rejected=self._last_rejected)
        self._last_rejected = False
        if command is None:
            return
        seat = self._seat(state)
        self._last_command_id = command_key(seat, command.command_id)
        self._outstanding = True
        try:
            await self.log.submit(self.encounter, codec.encode_command(command), seat=seat)
        except InboxClosed:
            self._outstanding = False  # the encounter ended meanwhile: nothing is left to do
            return
        self.commands_sent += 1
        await trio.lowlevel.checkpoint()
