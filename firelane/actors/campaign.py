"""The writer of a campaign's stream: characters, enlistments, aftermaths, downtime.

Every write folds the stream, asks the pure rules (firelane/engine/campaign.py)
what to append, and appends it with the expected version and an idempotent
command id (``campaign/<what>``); a version conflict (another writer got in
first) refolds and decides again. So:

- a character is created once (``campaign/create:<id>``);
- an encounter's enlistment is recorded once (``campaign/enlist:<encounter>``),
  and two encounters created at once cannot both take one character: the
  second one's append conflicts, refolds, and finds the character busy;
- an encounter's aftermath is written exactly once
  (``campaign/aftermath:<encounter>``), by the encounter's sequencer once the
  encounter has ended and before its seed is revealed (so a restarted
  sequencer, which finds the seed unrevealed, writes it if it is missing;
  `firelane serve` and `firelane run` share that path);
- a rest is two appends: ``campaign/downtime:<n>:start`` commits the seed
  (kept at ``…:campaign:downtime:<n>:seed`` for the engine alone), then
  ``campaign/downtime:<n>:end`` rolls and reveals it. An interrupted rest is
  finished by the next one, with the seed it committed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import msgspec
import trio

from firelane.engine.campaign import (
    CampaignError,
    CampaignState,
    DowntimeRequest,
    aftermath,
    create_character,
    evolve,
    finish_downtime,
    resolve_setup,
    start_downtime,
)
from firelane.engine.core import BaseRuleSystem
from firelane.engine.dice import commit_seed, new_seed
from firelane.engine.state import EncounterState
from firelane.events import codec
from firelane.events.campaign_log import CAMPAIGN_STREAM, CampaignLog
from firelane.events.campaign_schemas import CharactersEnlisted
from firelane.events.log import CAMPAIGNS_KEY, EventLog, VersionConflict
from firelane.projections.characters import CampaignFold
from firelane.events.schemas import EncounterSetup, EncounterStarted, Event
from firelane.logs import get_logger

log = get_logger("firelane.campaign")

_ATTEMPTS = 50


class CampaignStreamProblem(RuntimeError):
    """The campaign stream is not in a state this writer can append to."""


def _digest(value: object) -> str:
    return hashlib.blake2b(codec.encode_json(value), digest_size=12).hexdigest()


def downtime_seed_key(stream: CampaignLog, downtime: int) -> str:
    return stream.stream_key(f"downtime:{downtime}:seed")


class CampaignStream(CampaignFold):
    """One campaign's stream, folded as far as it has been read, and appended to."""

    async def append(self, command_id: str, events: list[Event], *, digest: str = "") -> bool:
        """Append at the folded version; False if the command was already applied.
        Raises VersionConflict when someone else appended first."""
        result = await self.log.append(CAMPAIGN_STREAM, self.state.version, [codec.encode_event(e) for e in events],
                                       command_id=command_id, digest=digest)
        if result.duplicate:
            return False
        for event in events:
            evolve(self.state, event)
        if result.entry_ids:
            self.cursor = result.entry_ids[-1]
        if self.state.version == len(events):  # the stream's first entries: list the campaign
            await self.log.client.execute("SADD", CAMPAIGNS_KEY, self.campaign)
        return True

    async def decide_and_append(self, command_id: str, decide: Callable[[CampaignState], list[Event]],
                                *, digest: str = "") -> list[Event]:
        """Fold, decide, append; again after a conflict. Returns what was written
        ([] when there was nothing to write or it was already written)."""
        for _ in range(_ATTEMPTS):
            await self.refresh()
            events = decide(self.state)
            if not events:
                return []
            try:
                return events if await self.append(command_id, events, digest=digest) else []
            except VersionConflict:
                await trio.sleep(0)
                continue
        raise CampaignStreamProblem(f"campaign {self.campaign!r}: the stream kept changing during {command_id}")


# ------------------------------------------------------------------ characters


async def create_characters(event_log: EventLog, characters: list[tuple[BaseRuleSystem, str, str, dict, str]]) -> list[str]:
    """Create characters (system, id, name, sheet, notes) in one append: all or
    none. CampaignError names the first that cannot be created."""
    stream = CampaignStream(event_log)

    def decide(state: CampaignState) -> list[Event]:
        scratch = msgspec.msgpack.decode(msgspec.msgpack.encode(state), type=CampaignState)
        events = []
        for system, character, name, sheet, notes in characters:
            event = create_character(scratch, system, character, name, sheet, notes)
            evolve(scratch, event)
            events.append(event)
        return events

    ids = ",".join(c[1] for c in characters)
    command_id = f"campaign/create:{ids}" if len(ids) <= 200 else f"campaign/create:{_digest(ids)}"
    written = await stream.decide_and_append(command_id, decide, digest=_digest([c[1:4] for c in characters]))
    return [e.character for e in written]  # type: ignore[attr-defined]


# ------------------------------------------------------------------ encounters


class Enlistment:
    """The campaign characters an encounter being created names: ``setup`` has
    their sheets written in; `record` enlists them (once, idempotently)."""

    def __init__(self, stream: CampaignStream, encounter: str, given: EncounterSetup, setup: EncounterSetup,
                 event: CharactersEnlisted | None) -> None:
        self.stream = stream
        self.encounter = encounter
        self.given = given
        self.setup = setup
        self.event = event

    async def record(self) -> None:
        if self.event is None:
            return
        expected = self.event

        def decide(state: CampaignState) -> list[Event]:
            if any(state.characters[e.character].engaged_in == self.encounter for e in expected.characters):
                return []  # already enlisted (a repeated creation)
            _setup, event = resolve_setup(state, self.encounter, self.given)
            if event != expected:
                raise CampaignError(f"the campaign's characters changed while encounter {self.encounter!r} was created; "
                                    f"create it again")
            return [event]

        await self.stream.decide_and_append(f"campaign/enlist:{self.encounter}", decide, digest=_digest(expected))


async def enlistment(event_log: EventLog, encounter: str, setup: EncounterSetup) -> Enlistment:
    """Resolve the campaign characters a setup names (reads only; CampaignError
    names what is wrong). A setup naming none comes back as it is."""
    stream = CampaignStream(event_log)
    if not any(c.character for c in setup.combatants):
        return Enlistment(stream, encounter, setup, setup, None)
    state = await stream.refresh()
    resolved, event = resolve_setup(state, encounter, setup)
    return Enlistment(stream, encounter, setup, resolved, event)


async def record_aftermath(event_log: EventLog, encounter: str, final: EncounterState) -> list[Event]:
    """Write back what an ended encounter did to its campaign characters (once).
    The encounter's own log says whether it had any: its `EncounterStarted`."""
    first = await event_log.read(encounter, count=1)
    if not first:
        return []
    started = codec.decode_event(first[0])
    if not isinstance(started, EncounterStarted) or not any(c.character for c in started.setup.combatants):
        return []
    stream = CampaignStream(event_log)

    def decide(state: CampaignState) -> list[Event]:
        event = aftermath(state, encounter, started.setup.system, final)
        return [event] if event is not None else []

    written = await stream.decide_and_append(f"campaign/aftermath:{encounter}", decide)
    if written:
        log.info("aftermath recorded", campaign=event_log.campaign, encounter=encounter,
                 characters=[c.character for c in written[0].characters])  # type: ignore[attr-defined]
    return written


# ------------------------------------------------------------------ downtime


async def _seed_for(stream: CampaignStream, downtime: int, seed: bytes | None) -> bytes:
    key = downtime_seed_key(stream.log, downtime)
    await stream.log.client.execute("SET", key, (seed or new_seed()).hex(), "NX")
    return bytes.fromhex((await stream.log.client.execute("GET", key)).decode())


async def _finish(stream: CampaignStream) -> list[Event]:
    state = stream.state
    started = state.open_downtime
    assert started is not None
    raw = await stream.log.client.execute("GET", downtime_seed_key(stream.log, started.downtime))
    if raw is None:
        raise CampaignStreamProblem(f"the seed of downtime {started.downtime} of campaign {stream.campaign!r} is missing")
    seed = bytes.fromhex(raw.decode())
    if commit_seed(seed) != started.seed_commitment:
        raise CampaignStreamProblem(f"the stored seed of downtime {started.downtime} does not match its commitment")
    n = started.downtime

    def decide(state: CampaignState) -> list[Event]:
        if state.open_downtime is None or state.open_downtime.downtime != n:
            return []
        return finish_downtime(state, seed)

    return await stream.decide_and_append(f"campaign/downtime:{n}:end", decide)


async def rest(event_log: EventLog, request: DowntimeRequest | Callable[[CampaignState], DowntimeRequest],
               *, seed: bytes | None = None) -> list[Event]:
    """Rest (see the module doc); ``request`` may be a function of the state
    (``--party``: whoever can rest). ``seed``: the rest's secret seed (random
    when not given; a seed already stored for this rest number wins). Returns
    the events of the rest: its start, each character's outcome and the reveal."""
    stream = CampaignStream(event_log)
    await stream.refresh()
    if stream.state.open_downtime is not None:
        log.warning("finishing an interrupted downtime first", campaign=stream.campaign,
                    downtime=stream.state.open_downtime.downtime)
        await _finish(stream)
    for _ in range(_ATTEMPTS):
        await stream.refresh()
        state = stream.state
        asked = request(state) if callable(request) else request
        downtime = state.downtimes + 1
        rest_seed = await _seed_for(stream, downtime, seed)
        started = start_downtime(state, asked, commit_seed(rest_seed))
        try:
            if not await stream.append(f"campaign/downtime:{downtime}:start", [started], digest=_digest(asked)):
                continue  # someone else started this one: take the next number
        except VersionConflict:
            continue
        return [started, *await _finish(stream)]
    raise CampaignStreamProblem(f"campaign {stream.campaign!r}: the stream kept changing while starting a rest")


async def finish_open_downtime(event_log: EventLog) -> list[Event]:
    """Finish a rest that was interrupted between its start and its end."""
    stream = CampaignStream(event_log)
    await stream.refresh()
    if stream.state.open_downtime is None:
        return []
    return await _finish(stream)
