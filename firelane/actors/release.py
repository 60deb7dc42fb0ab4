"""Freeing campaign characters from an encounter (`firelane character release`,
``POST …/characters/ID/release``): one that has not started is ended before
its first turn, one that has ended without their aftermath gets it, and each
character's history says so. See firelane/actors/campaign.py's module doc for
the campaign's stream; this runs the encounter's sequencer, so it sits above it.
"""

from __future__ import annotations

import secrets

import msgspec
import trio

from firelane.actors.campaign import CampaignError, CampaignStream, value_digest
from firelane.actors.lease import EncounterBusy, SequencerLease
from firelane.actors.sequencer import Sequencer, encounter_setup, fold_log, load_seed
from firelane.engine.campaign import ENDED, NOT_STARTED, CampaignState, release_characters
from firelane.engine.core import BaseRuleSystem
from firelane.engine.registry import get_system
from firelane.engine.seats import GM, default_seats
from firelane.events import codec
from firelane.events.campaign_schemas import CharactersReleased
from firelane.events.limits import bounded
from firelane.events.log import EventLog
from firelane.events.schemas import EndEncounter, Event
from firelane.logs import get_logger

log = get_logger("firelane.campaign")


class Released(msgspec.Struct, kw_only=True):
    """What a release did: the event (None if it was already written) and how
    the encounter was finished."""

    encounter: str
    encounter_status: str
    event: CharactersReleased | None
    finished: str  # what became of the encounter, in words


async def release(event_log: EventLog, characters: list[str], reason: str, *, via: str = "cli",
                  lease_wait_s: float = 6.0, finish_within_s: float = 60.0) -> Released:
    """Free characters from the encounter they are enlisted in, when it has not
    started or has ended (see the module doc); CampaignError otherwise."""
    stream = CampaignStream(event_log)
    state = await stream.refresh()
    names = list(dict.fromkeys(characters))
    if not names:
        raise CampaignError("name the characters to release")
    where: dict[str, str] = {}
    for name in names:
        found = state.characters.get(name)
        if found is None:
            known = ", ".join(sorted(state.characters)[:20]) or "none"
            raise CampaignError(f"no character {name[:64]!r} in campaign {state.campaign!r} (known: {known})")
        if not found.engaged_in:
            raise CampaignError(f"{name!r} is in no encounter: nothing to release it from")
        where[name] = found.engaged_in
    if len(set(where.values())) > 1:
        listed = ", ".join(f"{n} in {e}" for n, e in where.items())
        raise CampaignError(f"the characters are in different encounters ({listed}): release them one encounter at a time")
    encounter = where[names[0]]
    system_name = state.characters[names[0]].system
    system = get_system(system_name)
    if not reason or not reason.strip():
        raise CampaignError("give a reason (--reason TEXT): it goes into the character's history")
    started = await event_log.version(encounter)
    if started:
        final, _ = await fold_log(event_log, encounter, system)
        if not final.ended:
            raise CampaignError(f"encounter {encounter!r} is under way (round {final.round}): a character leaves a fight "
                                f"with its aftermath; end it first (the GM's EndEncounter)")
    lease = SequencerLease(event_log, encounter, wait_s=lease_wait_s)
    try:
        await lease.acquire()
    except EncounterBusy as exc:
        raise CampaignError(f"{exc}: it has started, so its characters leave with its aftermath") from None
    try:
        # Under the lease no engine writes the encounter's log: what it says now holds.
        final = None
        status = NOT_STARTED
        if await event_log.version(encounter):
            final, _ = await fold_log(event_log, encounter, system)
            if not final.ended:
                raise CampaignError(f"encounter {encounter!r} has started (round {final.round}) and not ended: "
                                    f"end it first (the GM's EndEncounter)")
            status = ENDED
        # Checked in full before anything is written.
        release_characters(state, names, reason, encounter=encounter, system=system_name, encounter_status=status,
                           final=final, via=via)
        queued = True
        if status == NOT_STARTED:
            try:
                setup = await encounter_setup(event_log, encounter)
            except LookupError:
                # Its creation stopped between the enlistment and the start's queueing: there
                # is no start to end, and a creation repeated later refuses (Enlistment.record).
                queued = False
            else:
                # Queued behind its start, read before any turn is played: whoever starts it ends it at once.
                seat = next(s.id for s in default_seats(setup) if s.role == "gm")
                end = EndEncounter(command_id=f"release-{secrets.token_hex(6)}", actor=GM,
                                   reason=bounded(f"{', '.join(names)} released by the GM before it started: "
                                                  f"{reason.strip()}"))
                await event_log.submit(encounter, codec.encode_command(end), seat=seat)

        def decide(now: CampaignState) -> list[Event]:
            return [release_characters(now, names, reason, encounter=encounter, system=system_name,
                                       encounter_status=status, final=final, via=via)]

        ids = ",".join(names)
        key = f"campaign/release:{encounter}:{ids if len(ids) <= 150 else value_digest(ids)}"
        written = await stream.decide_and_append(key, decide, digest=value_digest([names, reason]))
    finally:
        await lease.release()
    log.info("characters released", campaign=event_log.campaign, encounter=encounter, characters=names, status=status)
    if queued:
        finished = await _finish_encounter(event_log, encounter, system, status, finish_within_s)
    else:
        finished = f"encounter {encounter} was never fully created (no start was queued): there is nothing to end"
    return Released(encounter=encounter, encounter_status=status,
                    event=written[0] if written else None, finished=finished)  # type: ignore[arg-type]


async def _finish_encounter(event_log: EventLog, encounter: str, system: BaseRuleSystem, status: str,
                            within_s: float) -> str:
    """Run the encounter's sequencer with no players of its own until it has
    ended and revealed its seed (the other characters' aftermath on the way)."""
    sequencer = Sequencer(event_log, encounter, system, await load_seed(event_log, encounter), players={})
    with trio.move_on_after(within_s):
        try:
            await sequencer.run()
        except EncounterBusy:
            return (f"another engine has taken encounter {encounter} up; it ends there "
                    + ("before its first turn" if status == NOT_STARTED else "and reveals its seed"))
        if status == NOT_STARTED:
            return f"encounter {encounter} was ended before its first turn; its seed is revealed"
        return f"encounter {encounter}: its other characters' aftermath is written and its seed revealed"
    return (f"encounter {encounter} did not finish within {within_s:.0f} s; it ends when it is next run "
            f"(firelane run {encounter})")
