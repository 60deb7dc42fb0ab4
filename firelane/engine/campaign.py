"""Campaigns: characters carried from fight to fight, and the downtime between.

Pure, like the rule systems: the functions below decide what happens (they
validate everything and return events, rolling only through injected dice)
and `evolve` folds the campaign stream's events into a `CampaignState`. The
actor that writes the stream (firelane/actors/campaign.py) reads the state,
calls these, and appends what they return with an expected version.

- `create_character`: a character from a sheet, checked by its system as a
  combatant would be, kept with its catalogue entries inlined.
- `resolve_setup`: an encounter setup naming campaign characters gets their
  current sheets written in, and the `CharactersEnlisted` that records it.
  A character is in one fight at a time, and only when fit to fight.
- `aftermath`: the encounter's final state (its last branch, after any
  rewind) written back to its characters by each system's rules.
- `start_downtime` / `finish_downtime`: a rest, with its seed committed first.

The per-system rules are in engine/systems/<system>/campaign.py (see
engine/campaign_rules.py).
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from firelane.engine.campaign_rules import (
    DEAD,
    CampaignRuleError,
    Patient,
    RestRequest,
    RestResult,
    campaign_rules,
    sheet_changes,
)
from firelane.engine.core import BaseRuleSystem
from firelane.engine.dice import SeededDice
from firelane.engine.setup_check import SetupError, check_setup
from firelane.engine.state import EncounterState
from firelane.events import codec
from firelane.events.campaign_schemas import (
    CAMPAIGN_EVENTS,
    AftermathRecorded,
    CharacterCreated,
    CharacterOutcome,
    CharacterRested,
    CharactersEnlisted,
    DowntimeEnded,
    DowntimeStarted,
    EnlistedCharacter,
)
from firelane.events.limits import bounded
from firelane.events.schemas import CombatantSetup, EncounterSetup, Event

codec.register_events(CAMPAIGN_EVENTS)

_ID = re.compile(r"[A-Za-z0-9_.-]{1,64}")
MAX_CHARACTERS = 10_000
MAX_NAME = 200
MAX_REST_DAYS = 3650


class CampaignError(ValueError):
    """A campaign request that cannot be carried out; the message is one line naming what is wrong."""


class Character(msgspec.Struct, kw_only=True):
    id: str
    name: str
    system: str
    sheet: dict[str, Any]  # as it stands now
    base_sheet: dict[str, Any] = {}  # as it was created
    status: str = "ready"
    engaged_in: str = ""  # the encounter it is fighting in, until that encounter's aftermath
    rested_days: int = 0  # days of rest counted towards the next natural-healing test
    encounters: list[str] = []
    downtimes: list[int] = []
    created_at: int = 0  # the campaign stream's version of its creation
    changed_at: int = 0  # ... and of its last change


class CampaignState(msgspec.Struct, kw_only=True):
    campaign: str = ""
    version: int = 0
    characters: dict[str, Character] = {}
    enlisted: dict[str, dict[str, str]] = {}  # encounter -> {character: combatant} until its aftermath
    aftermaths: int = 0
    downtimes: int = 0
    open_downtime: DowntimeStarted | None = None


# ------------------------------------------------------------------ evolve


def evolve(state: CampaignState, event: Event) -> CampaignState:
    """Apply one campaign event (never validates, never rolls)."""
    state.version += 1
    if isinstance(event, CharacterCreated):
        state.characters[event.character] = Character(
            id=event.character, name=event.name, system=event.system, sheet=dict(event.sheet),
            base_sheet=dict(event.sheet), status=campaign_rules(event.system).status(event.sheet),
            created_at=state.version, changed_at=state.version)
    elif isinstance(event, CharactersEnlisted):
        state.enlisted[event.encounter] = {e.character: e.combatant for e in event.characters}
        for enlisted in event.characters:
            character = state.characters[enlisted.character]
            character.engaged_in = event.encounter
            if event.encounter not in character.encounters:
                character.encounters.append(event.encounter)
            character.changed_at = state.version
    elif isinstance(event, AftermathRecorded):
        state.enlisted.pop(event.encounter, None)
        state.aftermaths += 1
        for outcome in event.characters:
            character = state.characters[outcome.character]
            character.sheet = dict(outcome.sheet)
            character.status = outcome.status
            character.engaged_in = ""
            character.rested_days = 0  # a fight interrupts any rest
            character.changed_at = state.version
    elif isinstance(event, DowntimeStarted):
        state.downtimes = event.downtime
        state.open_downtime = event
    elif isinstance(event, CharacterRested):
        character = state.characters[event.character]
        character.sheet = dict(event.sheet)
        character.status = event.status
        character.rested_days = event.rested_days
        character.downtimes.append(event.downtime)
        character.changed_at = state.version
    elif isinstance(event, DowntimeEnded):
        state.open_downtime = None
    return state


# ------------------------------------------------------------------ characters


def _check_id(what: str, value: str) -> None:
    if not isinstance(value, str) or not _ID.fullmatch(value):
        raise CampaignError(f"{what} {str(value)[:80]!r} must be 1-64 characters of A-Z a-z 0-9 _ . -")


def create_character(state: CampaignState, system: BaseRuleSystem, character: str, name: str,
                     sheet: dict[str, Any], notes: str = "") -> CharacterCreated:
    """A new character, its sheet checked by its system exactly as an encounter's start
    would check it (against a copy of itself, since a fight needs two)."""
    _check_id("character id", character)
    if character in state.characters:
        raise CampaignError(f"character {character!r} already exists in campaign {state.campaign!r}")
    if len(state.characters) >= MAX_CHARACTERS:
        raise CampaignError(f"campaign {state.campaign!r} has {MAX_CHARACTERS} characters, the limit")
    name = name or character
    if len(name) > MAX_NAME:
        raise CampaignError(f"character {character!r}: name is longer than {MAX_NAME} characters")
    if not isinstance(sheet, dict):
        raise CampaignError(f"character {character!r}: the sheet must be a JSON object")
    mirror = "mirror" if character != "mirror" else "mirror-2"
    trial = EncounterSetup(system=system.name, combatants=[
        CombatantSetup(id=character, name=name, side="campaign", position=(0, 0), sheet=sheet),
        CombatantSetup(id=mirror, name=name, side="mirror", position=(2, 0), sheet=sheet),
    ])
    try:
        resolved = check_setup(system, trial)
    except SetupError as exc:
        raise CampaignError(f"character {character!r}: {exc}") from None
    rules = campaign_rules(system.name)
    kept = rules.normalise(resolved.combatants[0].sheet)
    return CharacterCreated(character=character, name=name, system=system.name, sheet=kept, notes=bounded(notes))


def resolve_setup(state: CampaignState, encounter: str, setup: EncounterSetup) -> tuple[EncounterSetup, CharactersEnlisted | None]:
    """The setup with each named character's current sheet (and name) written
    in, and the enlistment to record; (setup, None) when it names none."""
    picks = [(index, c) for index, c in enumerate(setup.combatants) if c.character]
    if not picks:
        return setup, None
    combatants = list(setup.combatants)
    enlisted: list[EnlistedCharacter] = []
    seen: dict[str, str] = {}
    for index, combatant in picks:
        where = f"combatants[{index}] ({combatant.id})"
        character = state.characters.get(combatant.character)
        if character is None:
            known = ", ".join(sorted(state.characters)[:20]) or "none"
            raise CampaignError(f"{where}.character: no character {combatant.character[:64]!r} in campaign "
                                f"{state.campaign!r} (known: {known})")
        if combatant.character in seen:
            raise CampaignError(f"{where}.character: {combatant.character!r} is already combatant {seen[combatant.character]!r}")
        seen[combatant.character] = combatant.id
        if character.system != setup.system:
            raise CampaignError(f"{where}.character: {character.id!r} is a {character.system} character, "
                                f"not {setup.system}")
        if combatant.sheet:
            raise CampaignError(f"{where}: give a character or a sheet, not both")
        if character.engaged_in and character.engaged_in != encounter:
            raise CampaignError(f"{where}.character: {character.id!r} is in encounter {character.engaged_in!r}, "
                                f"which has not ended")
        if character.engaged_in != encounter:
            unfit = campaign_rules(character.system).unfit(character.sheet)
            if unfit is not None:
                raise CampaignError(f"{where}.character: {character.name} ({character.id}) {unfit}")
        combatants[index] = msgspec.structs.replace(combatant, name=combatant.name or character.name,
                                                    sheet=dict(character.sheet))
        enlisted.append(EnlistedCharacter(character=character.id, combatant=combatant.id, sheet=dict(character.sheet)))
    return (msgspec.structs.replace(setup, combatants=combatants),
            CharactersEnlisted(encounter=encounter, system=setup.system, characters=enlisted))


def enlisted_in(state: CampaignState, encounter: str) -> dict[str, str]:
    """The characters (-> their combatant ids) fighting in an encounter whose aftermath is not in yet."""
    return dict(state.enlisted.get(encounter, {}))


# ------------------------------------------------------------------ aftermath


def aftermath(state: CampaignState, encounter: str, system: str, final: EncounterState) -> AftermathRecorded | None:
    """What the encounter did to its characters, from its final state; None
    when none of its characters is waiting for it (nothing to write)."""
    engaged = enlisted_in(state, encounter)
    if not engaged:
        return None
    rules = campaign_rules(system)
    outcomes = []
    problem = ""
    try:
        for character_id, combatant_id in sorted(engaged.items()):
            character = state.characters[character_id]
            combatant = final.combatants.get(combatant_id)
            if combatant is None:
                outcomes.append(CharacterOutcome(character=character_id, combatant=combatant_id, sheet=character.sheet,
                                                 status=character.status,
                                                 notes=["not in the encounter's final state: comes back as it went in"]))
                continue
            sheet, notes = rules.aftermath(character.sheet, combatant)
            outcomes.append(CharacterOutcome(character=character_id, combatant=combatant_id, sheet=sheet,
                                             status=rules.status(sheet), changes=sheet_changes(character.sheet, sheet),
                                             notes=notes))
    except Exception as exc:  # noqa: BLE001 - a bug in a system's rules must not keep its characters in the fight
        problem = bounded(f"the {system} aftermath rules failed: {type(exc).__name__}: {exc}")
        outcomes = [CharacterOutcome(character=c, combatant=cid, sheet=state.characters[c].sheet,
                                     status=state.characters[c].status, notes=["comes back as it went in"])
                    for c, cid in sorted(engaged.items())]
    return AftermathRecorded(encounter=encounter, system=system, winner=final.winner, reason=final.end_reason,
                             rounds=final.round, final_version=final.version, characters=outcomes, problem=problem)


# ------------------------------------------------------------------ downtime


class DowntimeRequest(msgspec.Struct, frozen=True, kw_only=True):
    characters: list[str]
    days: int
    healer: str = ""
    strenuous: bool = False
    resupply: bool = False


def party(state: CampaignState) -> list[str]:
    """Every character that can rest now: alive and not in a fight."""
    return sorted(c.id for c in state.characters.values() if not c.engaged_in and c.status != DEAD)


def start_downtime(state: CampaignState, request: DowntimeRequest, seed_commitment: str) -> DowntimeStarted:
    """Check a rest in full and open it (its seed is committed here, revealed by `finish_downtime`)."""
    if state.open_downtime is not None:
        raise CampaignError(f"downtime {state.open_downtime.downtime} has not finished")
    if not isinstance(request.days, int) or not 1 <= request.days <= MAX_REST_DAYS:
        raise CampaignError(f"--days must be a whole number of days from 1 to {MAX_REST_DAYS} (got {request.days})")
    if not request.characters:
        raise CampaignError("name the characters who rest (or --party for every one who can)")
    names = list(dict.fromkeys(request.characters))
    for name in names:
        character = state.characters.get(name)
        if character is None:
            known = ", ".join(sorted(state.characters)[:20]) or "none"
            raise CampaignError(f"no character {name[:64]!r} in campaign {state.campaign!r} (known: {known})")
        if character.engaged_in:
            raise CampaignError(f"{name!r} is in encounter {character.engaged_in!r}, which has not ended; "
                                f"it rests after its aftermath")
    if request.healer:
        healer = state.characters.get(request.healer)
        if healer is None:
            raise CampaignError(f"no healer {request.healer[:64]!r} in campaign {state.campaign!r}")
        if healer.engaged_in:
            raise CampaignError(f"healer {healer.id!r} is in encounter {healer.engaged_in!r}, which has not ended")
        unfit = campaign_rules(healer.system).unfit(healer.sheet)
        if unfit is not None:
            raise CampaignError(f"healer {healer.id!r} {unfit}")
        if not campaign_rules(healer.system).heals:
            raise CampaignError(f"healer {healer.id!r}: {healer.system} rest has no care a healer gives "
                                f"(see docs/campaigns.md)")
        if not any(state.characters[n].system == healer.system for n in names):
            raise CampaignError(f"healer {healer.id!r} is a {healer.system} character; none of the patients is")
    return DowntimeStarted(downtime=state.downtimes + 1, days=request.days, characters=names, healer=request.healer,
                           strenuous=request.strenuous, resupply=request.resupply, seed_commitment=seed_commitment)


def _patient(character: Character) -> Patient:
    return Patient(character=character.id, name=character.name, sheet=dict(character.sheet),
                   base_sheet=dict(character.base_sheet), rested_days=character.rested_days)


def finish_downtime(state: CampaignState, seed: bytes) -> list[Event]:
    """The open rest, rolled with its seed at the stream's current position,
    then the seed revealed. Never fails: a system whose rules refuse (or break)
    leaves its characters as they were, with the reason as a note."""
    started = state.open_downtime
    if started is None:
        raise CampaignError("no downtime is open")
    dice = SeededDice(seed, state.version)
    by_system: dict[str, list[Character]] = {}
    for name in started.characters:
        character = state.characters[name]
        by_system.setdefault(character.system, []).append(character)
    healer = state.characters.get(started.healer) if started.healer else None
    events: list[Event] = []
    for system in sorted(by_system):
        rules = campaign_rules(system)
        patients = [_patient(c) for c in by_system[system]]
        request = RestRequest(days=started.days, strenuous=started.strenuous, resupply=started.resupply,
                              healer=_patient(healer) if healer is not None and healer.system == system else None)
        try:
            results = rules.rest(patients, request, dice)
        except CampaignRuleError as exc:
            results = [RestResult(character=p.character, sheet=p.sheet, rested_days=p.rested_days, notes=[str(exc)])
                       for p in patients]
        except Exception as exc:  # noqa: BLE001 - a bug in a system's rules must not leave the rest open
            results = [RestResult(character=p.character, sheet=p.sheet, rested_days=p.rested_days,
                                  notes=[bounded(f"the {system} rest rules failed: {type(exc).__name__}: {exc}")])
                       for p in patients]
        for character, result in zip(by_system[system], results):
            events.append(CharacterRested(
                downtime=started.downtime, character=character.id, days=started.days, sheet=result.sheet,
                status=rules.status(result.sheet), changes=sheet_changes(character.sheet, result.sheet),
                rolls=result.rolls, notes=result.notes, rested_days=result.rested_days))
    events.append(DowntimeEnded(downtime=started.downtime, seed=seed.hex()))
    return events
