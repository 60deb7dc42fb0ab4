"""Events of a campaign's own stream: its characters, what each encounter did
to them (the aftermath) and the downtime between fights.

The stream is ``firelane:{<campaign>}:campaign:log``, an event log like an
encounter's (signed entries, expected-version appends, idempotent command ids;
see firelane/events/campaign_log.py). Its events are facts about characters:

- `CharacterCreated`: a character joins the campaign with its sheet.
- `CharactersEnlisted`: an encounter was created naming these characters; it
  records the sheet each one brings, so the encounter's start (which inlines
  those sheets into `EncounterStarted`) can be checked against the campaign.
  An enlisted character is in that fight until its aftermath.
- `AftermathRecorded`: the encounter ended; each character comes back with the
  sheet its system's rules make of its final state (Vitality, Wounds and
  conditions; ammunition and grenades; Fate and Character Points; Down, dying
  or dead), folded from the encounter's final branch.
- `DowntimeStarted` / `CharacterRested` / `DowntimeEnded`: a rest between
  fights, rolled like an encounter with a seed committed first (in
  `DowntimeStarted`) and revealed at the end (in `DowntimeEnded`), so
  `firelane audit --downtime --verify` can recompute every die.
- `CharacterAdjusted`: the GM changed a character between fights (points
  awarded, a sheet field set, renamed, retired or revived), with the reason.
- `CharactersReleased`: the GM freed characters from an encounter that had
  not started (or had ended without their aftermath), with the reason.

The last two came after the export fixture of 2026-12-01: new event types,
so no upcaster (an old file simply has none of them).

Imports nothing from the project but the generic schemas (layering rule).
"""

from __future__ import annotations

from typing import Any

import msgspec

from firelane.events.schemas import Event, Roll


class Change(msgspec.Struct, frozen=True, kw_only=True):
    """One field of a character's sheet that changed, with its values before and after."""

    field: str
    before: Any = None
    after: Any = None


class CharacterCreated(Event):
    character: str  # the character's id in the campaign (1-64 of A-Z a-z 0-9 _ . -)
    name: str
    system: str
    sheet: dict[str, Any]  # the sheet as its system resolved it (catalogue entries inlined)
    notes: str = ""


class EnlistedCharacter(msgspec.Struct, frozen=True, kw_only=True):
    character: str
    combatant: str  # its id in the encounter
    sheet: dict[str, Any]  # the sheet it brings, as it was written into the encounter's setup


class CharactersEnlisted(Event):
    encounter: str
    system: str
    characters: list[EnlistedCharacter]


class CharacterOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """What one fight did to one character."""

    character: str
    combatant: str
    sheet: dict[str, Any]  # the sheet it comes back with
    status: str  # "ready", "hurt", "down", "dying", "dead" (see docs/campaigns.md)
    changes: list[Change] = []
    notes: list[str] = []


class AftermathRecorded(Event):
    """The end of an encounter, written back to its characters (once per
    encounter, command id ``aftermath:<encounter>``). ``problem`` is set when
    the system's rules could not make the aftermath: the characters then come
    back with the sheets they took into the fight, free to fight again."""

    encounter: str
    system: str
    winner: str | None = None
    reason: str = ""
    rounds: int = 0
    final_version: int = 0  # the encounter's log version the aftermath was folded to
    characters: list[CharacterOutcome] = []
    problem: str = ""


class DowntimeStarted(Event):
    """A rest begins; the hex blake2b ``seed_commitment`` of its secret seed is
    published before any die is rolled (the seed comes in `DowntimeEnded`)."""

    downtime: int  # 1, 2, 3... within the campaign
    days: int
    characters: list[str]
    healer: str = ""  # a character giving medical care (RonD6 Medicine, d100-zones first aid)
    strenuous: bool = False  # travel or hard work instead of rest (RonD6 R6-42: one Difficulty Level higher)
    resupply: bool = False  # magazines and grenades refilled to their capacity
    seed_commitment: str = ""
    # True when the rest's seed came from a text (--seed with --reproducible-dice):
    # anyone who knows the text can predict every roll. Left out otherwise (UNSET
    # is never written), so an ordinary rest is written as before.
    reproducible_dice: bool | msgspec.UnsetType = msgspec.UNSET


class CharacterRested(Event):
    """What a rest did to one character: its new sheet, each roll (with its
    rule ID, audited like an encounter's) and what the rules said."""

    downtime: int
    character: str
    days: int
    sheet: dict[str, Any]
    status: str
    changes: list[Change] = []
    rolls: list[Roll] = []
    notes: list[str] = []
    rested_days: int = 0  # days of rest counted towards the next natural-healing test (RonD6 R6-42)


class DowntimeEnded(Event):
    downtime: int
    seed: str  # hex: the seed committed in DowntimeStarted, revealed


class CharacterAdjusted(Event):
    """The GM changed a character between fights, for ``reason``: its sheet
    (each change checked by its system as a fight's start checks a sheet),
    its name, or whether it is retired. ``sheet``, ``name``, ``status`` and
    ``retired`` are what the character is afterwards."""

    character: str
    reason: str
    sheet: dict[str, Any]
    name: str
    status: str
    retired: bool = False
    changes: list[Change] = []  # the sheet's top-level fields that changed
    renamed_from: str = ""  # the name before, when it changed
    notes: list[str] = []  # what the system's rules did besides (conditions that go with new Wounds...)
    via: str = ""  # "cli" or "api"


class CharactersReleased(Event):
    """The GM freed characters from ``encounter`` for ``reason``: one that had
    not started (they come back as they went in, and the encounter is ended
    before its first turn) or one that had ended without their aftermath
    (they come back with what the fight did, by the system's rules)."""

    encounter: str
    system: str
    reason: str
    encounter_status: str  # "not started" or "ended"
    characters: list[CharacterOutcome]
    final_version: int = 0  # "ended": the encounter's log version the outcomes were folded to
    via: str = ""


CAMPAIGN_EVENTS: tuple[type[Event], ...] = (
    CharacterCreated,
    CharactersEnlisted,
    AftermathRecorded,
    DowntimeStarted,
    CharacterRested,
    DowntimeEnded,
    CharacterAdjusted,
    CharactersReleased,
)
