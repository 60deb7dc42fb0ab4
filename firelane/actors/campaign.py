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
  (kept sealed at ``…:campaign:downtime:<n>:seed`` for the engine alone, see
  firelane.events.sealing; a seed from a text only with reproducible dice,
  which the start records), then
  ``campaign/downtime:<n>:end`` rolls and reveals it. An interrupted rest is
  finished by the next one, with the seed it committed;
- the GM's adjustment of a character is one append
  (``campaign/adjust:<character>:<id>``), decided again on a conflict (so an
  award of points lands once, on the character as it stands);
- a release (``campaign/release:<encounter>:<characters>``) looks at the
  encounter under its sequencer lease (no engine can start it meanwhile): one
  that has not started gets the GM's EndEncounter queued behind its start,
  so whichever engine starts it ends it before its first turn; one that has
  ended has its final state folded for the outcome. Then the release is
  appended, and the encounter is finished here (ended, its other characters'
  aftermath written, its seed revealed), so it never plays and the campaign
  can be exported.

The campaign's GM token (``…:campaign:gm_token``, made with its first
character, shown by ``firelane campaign token``) is what the web API asks
for before it adjusts or releases a character. It is kept as a digest (the
check) and sealed (for printing), never in clear (firelane.events.tokens_at_rest).
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable

import msgspec
import trio

from firelane.engine.campaign import (
    Adjustment,
    CampaignError,
    CampaignState,
    DowntimeRequest,
    adjust_character,
    aftermath,
    create_character,
    evolve,
    finish_downtime,
    resolve_setup,
    start_downtime,
)
from firelane.engine.core import BaseRuleSystem
from firelane.engine.dice import check_seed_size, commit_seed, new_seed
from firelane.engine.registry import get_system
from firelane.engine.state import EncounterState
from firelane.events import codec
from firelane.events.campaign_log import CAMPAIGN_STREAM, CampaignLog
from firelane.events.campaign_schemas import CharactersEnlisted
from firelane.events.log import CAMPAIGNS_KEY, EventLog, VersionConflict
from firelane.events.sealing import SealError, SeedRecord, open_seed, seal_seed
from firelane.events.tokens_at_rest import StoredToken, open_token, seal_token
from firelane.projections.characters import CampaignFold
from firelane.events.schemas import EncounterSetup, EncounterStarted, Event
from firelane.logs import get_logger

log = get_logger("firelane.campaign")

_ATTEMPTS = 50


class CampaignStreamProblem(RuntimeError):
    """The campaign stream is not in a state this writer can append to."""


def value_digest(value: object) -> str:
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
    command_id = f"campaign/create:{ids}" if len(ids) <= 200 else f"campaign/create:{value_digest(ids)}"
    written = await stream.decide_and_append(command_id, decide, digest=value_digest([c[1:4] for c in characters]))
    if written:
        await gm_token(event_log)  # the campaign's GM token comes with its first characters
    return [e.character for e in written]  # type: ignore[attr-defined]


# ------------------------------------------------------------------ the GM's token


def gm_token_key(event_log: EventLog) -> str:
    return CampaignLog.of(event_log).stream_key("gm_token")


def seal_gm_token(event_log: EventLog, token: str) -> bytes:
    """The value to keep at `gm_token_key` for this clear token."""
    return seal_token(event_log.server_key, event_log.campaign, gm_token_key(event_log), token)


# Replace the value only if it is still the one read (a token kept in clear by an older firelane).
_RESEAL = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2])
  return 1
end
return 0
"""


async def stored_gm_token(event_log: EventLog) -> StoredToken | None:
    """The campaign's GM token as kept (None without one); one an older firelane kept in clear is sealed in place."""
    key = gm_token_key(event_log)
    raw = await event_log.client.execute("GET", key)
    if raw is None:
        return None
    stored = open_token(event_log.server_key, event_log.campaign, key, raw)
    if stored.legacy and stored.token is not None and event_log.server_key is not None:
        await event_log.client.evalsha_or_load(_RESEAL, (key,), (raw, seal_gm_token(event_log, stored.token)))
    return stored


async def gm_token(event_log: EventLog, *, renew: bool = False) -> str:
    """The campaign's GM token in clear, to hand to the GM (made if it has none;
    a new one with ``renew``, which the old one stops working for at once).
    LookupError when the kept one cannot be opened here (sealed with another
    store's key): ``renew`` then makes a new one."""
    key = gm_token_key(event_log)
    fresh = secrets.token_urlsafe(24)
    if renew:
        await event_log.client.execute("SET", key, seal_gm_token(event_log, fresh))
        return fresh
    if await event_log.client.execute("SET", key, seal_gm_token(event_log, fresh), "NX") is not None:
        return fresh
    stored = await stored_gm_token(event_log)
    if stored is None:  # deleted in between: make it again
        return await gm_token(event_log)
    if stored.token is None:
        raise LookupError(f"the GM token of campaign {event_log.campaign!r} cannot be shown here "
                          f"(it was sealed with another store's secret); make a new one with: "
                          f"firelane campaign token --new --campaign {event_log.campaign}")
    return stored.token


async def gm_token_matches(event_log: EventLog, token: str) -> bool | None:
    """Whether ``token`` is the campaign's GM token (by its digest); None when it has none."""
    stored = await stored_gm_token(event_log)
    if stored is None:
        return None
    return stored.matches(token)


# ------------------------------------------------------------------ the GM's adjustments


async def adjust(event_log: EventLog, character: str, adjustment: Adjustment, *, via: str = "cli",
                 command_id: str = "") -> list[Event]:
    """Adjust a character (engine/campaign.py: adjust_character) in one append.
    ``command_id`` makes a retry safe: one already applied writes nothing and
    returns []. CampaignError names what is wrong."""
    stream = CampaignStream(event_log)
    key = f"campaign/adjust:{character}:{command_id or secrets.token_hex(8)}"
    if command_id and await stream.log.applied_entry_id(CAMPAIGN_STREAM, key) is not None:
        return []

    def decide(state: CampaignState) -> list[Event]:
        found = state.characters.get(character)
        system = get_system(found.system) if found is not None else None
        return [adjust_character(state, system, character, adjustment, via=via)]  # type: ignore[arg-type]

    written = await stream.decide_and_append(key, decide, digest=value_digest(adjustment))
    if written:
        log.info("character adjusted", campaign=event_log.campaign, character=character,
                 fields=[c.field for c in written[0].changes])  # type: ignore[attr-defined]
    return written


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

        await self.stream.decide_and_append(f"campaign/enlist:{self.encounter}", decide, digest=value_digest(expected))
        state = self.stream.state
        if not all(state.characters[e.character].engaged_in == self.encounter for e in expected.characters):
            # The enlistment was written once and its characters have left since (released): the
            # encounter must not start with copies of them. (Its command id keeps it from being written again.)
            raise CampaignError(f"encounter {self.encounter!r} already enlisted these characters and they have left it "
                                f"since (released, or it ended): create the fight under a new encounter id")


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


def sealed_downtime_seed(stream: CampaignLog, downtime: int, seed: bytes, reproducible_dice: bool = False) -> bytes:
    """The value `downtime_seed_key` holds for ``seed``: sealed with the store's key."""
    return seal_seed(stream.server_key, stream.campaign, downtime_seed_key(stream, downtime), seed,
                     reproducible_dice=reproducible_dice)


async def _stored_downtime_seed(stream: CampaignStream, downtime: int) -> SeedRecord:
    key = downtime_seed_key(stream.log, downtime)
    raw = await stream.log.client.execute("GET", key)
    if raw is None:
        raise CampaignStreamProblem(f"the seed of downtime {downtime} of campaign {stream.campaign!r} is missing")
    try:
        return open_seed(stream.log.server_key, stream.campaign, key, raw)
    except SealError as exc:
        raise CampaignStreamProblem(f"the seed of downtime {downtime} of campaign {stream.campaign!r} {exc}") from None


async def _seed_for(stream: CampaignStream, downtime: int, seed: bytes | None, reproducible_dice: bool) -> SeedRecord:
    """The rest's seed: the one stored for this rest number, else the one given (else a random one), stored now."""
    if seed is not None:
        check_seed_size(seed)
    chosen = sealed_downtime_seed(stream.log, downtime, seed or new_seed(), seed is not None and reproducible_dice)
    await stream.log.client.execute("SET", downtime_seed_key(stream.log, downtime), chosen, "NX")
    return await _stored_downtime_seed(stream, downtime)


async def _finish(stream: CampaignStream) -> list[Event]:
    state = stream.state
    started = state.open_downtime
    assert started is not None
    seed = (await _stored_downtime_seed(stream, started.downtime)).seed_bytes
    if commit_seed(seed) != started.seed_commitment:
        raise CampaignStreamProblem(f"the stored seed of downtime {started.downtime} does not match its commitment")
    n = started.downtime

    def decide(state: CampaignState) -> list[Event]:
        if state.open_downtime is None or state.open_downtime.downtime != n:
            return []
        return finish_downtime(state, seed)

    return await stream.decide_and_append(f"campaign/downtime:{n}:end", decide)


async def rest(event_log: EventLog, request: DowntimeRequest | Callable[[CampaignState], DowntimeRequest],
               *, seed: bytes | None = None, reproducible_dice: bool = False) -> list[Event]:
    """Rest (see the module doc); ``request`` may be a function of the state
    (``--party``: whoever can rest). ``seed``: the rest's secret seed (random
    when not given; a seed already stored for this rest number wins, with the
    reproducibility it was stored with); ``reproducible_dice``: the seed comes
    from a text, and the rest's start says so. Returns the events of the rest:
    its start, each character's outcome and the reveal."""
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
        rest_seed = await _seed_for(stream, downtime, seed, reproducible_dice)
        started = start_downtime(state, asked, commit_seed(rest_seed.seed_bytes))
        if rest_seed.reproducible_dice:
            started = msgspec.structs.replace(started, reproducible_dice=True)
        try:
            if not await stream.append(f"campaign/downtime:{downtime}:start", [started], digest=value_digest(asked)):
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
