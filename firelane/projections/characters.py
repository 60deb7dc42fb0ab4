"""A campaign's characters: their current state, one character's history, and
the audit of the downtime dice (every roll of every rest, recomputed from the
seed each rest committed first and revealed at its end).

All of it folds the campaign stream (firelane/events/campaign_log.py) page by
page. Entries the stream cannot vouch for are left out; an entry that cannot
be read is named in ``problems`` and never stops the listing.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import aclosing
from typing import Any

import msgspec

from firelane.engine.campaign import CampaignState, Character, evolve
from firelane.engine.campaign_rules import campaign_rules
from firelane.engine.dice import commit_seed, derive_face
from firelane.engine.labels import Labels
from firelane.engine.registry import UnknownSystem, get_system
from firelane.engine.wording import counted, plain_words, with_names
from firelane.events import codec
from firelane.events.campaign_log import CAMPAIGN_STREAM, CampaignLog
from firelane.events.envelope import StoredEvent
from firelane.events.campaign_schemas import (
    AftermathRecorded,
    Change,
    CharacterAdjusted,
    CharacterCreated,
    CharacterRested,
    CharactersEnlisted,
    CharactersReleased,
    DowntimeEnded,
    DowntimeStarted,
)
from firelane.events.log import EventLog
from firelane.events.schemas import Event, Roll
from firelane.projections.narration import winner_words
from firelane.projections.audit import AuditEntry, VerificationReport, iter_rolls, sum_problem


class CampaignFold:
    """One campaign's stream folded into a `CampaignState`, as far as it has been read."""

    def __init__(self, event_log: EventLog) -> None:
        self.log = CampaignLog.of(event_log)
        self.campaign = event_log.campaign
        self.state = CampaignState(campaign=self.campaign)
        self.cursor = "0-0"
        self.problems: list[str] = []  # entries that could not be folded (named, never fatal)

    async def refresh(self) -> CampaignState:
        """Fold what was appended since the last read (page by page)."""
        async with aclosing(self.log.iter_pages(CAMPAIGN_STREAM, self.cursor)) as pages:
            async for rows in pages:
                for raw_id, fields in rows:
                    self.cursor = raw_id.decode("ascii")
                    version = int(fields[1])
                    if version != self.state.version + 1:
                        self.problems.append(f"campaign entry {self.cursor}: version {version} after {self.state.version}")
                    try:
                        event = codec.decode_body(fields[3].decode(), int(fields[5]), fields[7])
                        self.state.version = version - 1
                        evolve(self.state, event)
                    except Exception as exc:  # noqa: BLE001 - one bad entry never breaks the listing
                        # Counted, so appends stay in step with the stream, and named.
                        self.state.version = version
                        self.problems.append(f"campaign entry v{version} ({fields[3].decode(errors='replace')}) "
                                             f"skipped: {type(exc).__name__}: {str(exc)[:200]}")
        return self.state


class CharacterView(msgspec.Struct, kw_only=True):
    id: str
    name: str
    system: str
    status: str
    summary: str
    retired: bool = False
    engaged_in: str = ""
    encounters: list[str] = []
    downtimes: list[int] = []
    rested_days: int = 0
    sheet: dict[str, Any] = {}
    created_at: int = 0
    changed_at: int = 0

    def describe(self) -> str:
        where = f"  in {self.engaged_in}" if self.engaged_in else ""
        return (f"{self.id:<20} {self.name[:24]:<24} {self.system:<15} {self.status:<6} {self.summary}"
                f"  ({counted(len(self.encounters), 'fight')}, {counted(len(self.downtimes), 'rest')}){where}")


class CampaignView(msgspec.Struct, kw_only=True):
    campaign: str
    version: int
    characters: list[CharacterView]
    open_downtime: int | None = None
    problems: list[str] = []


class HistoryEntry(msgspec.Struct, kw_only=True):
    version: int
    type: str
    text: str
    event: dict[str, Any]


def view(character: Character) -> CharacterView:
    return CharacterView(
        id=character.id, name=character.name, system=character.system, status=character.status,
        summary=campaign_rules(character.system).summary(character.sheet), retired=character.retired,
        engaged_in=character.engaged_in,
        encounters=list(character.encounters), downtimes=list(character.downtimes), rested_days=character.rested_days,
        sheet=character.sheet, created_at=character.created_at, changed_at=character.changed_at)


async def campaign_characters(event_log: EventLog) -> CampaignView:
    stream = CampaignFold(event_log)
    state = await stream.refresh()
    return CampaignView(campaign=event_log.campaign, version=state.version,
                        characters=[view(c) for _, c in sorted(state.characters.items())],
                        open_downtime=state.open_downtime.downtime if state.open_downtime else None,
                        problems=list(stream.problems))


def _value_words(value: Any, words: Labels | None = None) -> str:
    """A sheet value as a person reads it: "none", "yes", "lasgun 30, pistol 12", "dying"."""
    if value is None or value == {} or value == []:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):
        # a mapping of names to "" (conditions) reads as its names
        text = ", ".join(plain_words(str(k), words) if v in ("", None, True)
                         else f"{plain_words(str(k), words)} {_value_words(v, words)}" for k, v in value.items())
    elif isinstance(value, (list, tuple)):
        text = ", ".join(_value_words(v, words) for v in value)
    elif isinstance(value, float):
        text = f"{value:g}"
    else:
        text = plain_words(str(value), words)
    return text if len(text) <= 60 else text[:57] + "..."


def system_words(system: str) -> Labels | None:
    """The labels of a rule system this firelane knows (None for one it does not)."""
    try:
        return get_system(system).labels
    except UnknownSystem:
        return None


def changes_text(changes: list[Change], words: Labels | None = None) -> str:
    """What a sheet's changes were, in words: "Vitality from 0 to 12", "now dead"."""
    said = []
    for change in changes:
        label = words.word("fields", change.field) if words is not None else plain_words(change.field)
        if change.after is True and change.before in (None, False):
            said.append(f"now {label}")
        elif change.before is True and change.after in (None, False):
            said.append(f"no longer {label}")
        else:
            said.append(f"{label} from {_value_words(change.before, words)} to {_value_words(change.after, words)}")
    return ", ".join(said) or "no change"


def _notes(notes: list[str], words: Labels | None = None, names: dict[str, str] | None = None) -> str:
    """A rest's or a fight's notes after a dash, with names for character ids."""
    return (" — " + "; ".join(plain_words(with_names(n, names or {}), words) for n in notes)) if notes else ""


def history_text(event: Event, character: str, names: dict[str, str] | None = None,
                 words: Labels | None = None) -> str | None:
    """One line on what ``event`` did to ``character`` (None: it does not
    concern it); ``names``: the campaign's character names, for the healer;
    ``words``: the labels of the character's rule system, for its fields."""
    names = names or {}
    if isinstance(event, CharacterCreated) and event.character == character:
        return f"created ({event.system}): {campaign_rules(event.system).summary(event.sheet)}"
    if isinstance(event, CharactersEnlisted):
        for enlisted in event.characters:
            if enlisted.character == character:
                return f"enlisted in encounter {event.encounter}"
    if isinstance(event, AftermathRecorded):
        for outcome in event.characters:
            if outcome.character == character:
                end = winner_words(event.winner) + (f", {event.reason}" if event.reason else "")
                text = (f"came back from {event.encounter} ({end}; {counted(event.rounds, 'round')}): {outcome.status}; "
                        f"{changes_text(outcome.changes, words)}{_notes(outcome.notes, words, names)}")
                if event.problem:
                    text += f" PROBLEM: {event.problem}"
                return text
    if isinstance(event, DowntimeStarted) and (character in event.characters or character == event.healer):
        role = "rests" if character in event.characters else "tends the others"
        healer = names.get(event.healer, event.healer)
        return (f"downtime {event.downtime}: {counted(event.days, 'day')}{' (strenuous)' if event.strenuous else ''}, {role}"
                + (f", healer {healer}" if event.healer and character != event.healer else ""))
    if isinstance(event, CharacterRested) and event.character == character:
        return (f"rested {counted(event.days, 'day')} (downtime {event.downtime}): {event.status}; {changes_text(event.changes, words)}"
                f"{_notes(event.notes, words, names)}")
    if isinstance(event, CharacterAdjusted) and event.character == character:
        what = [f"renamed from {event.renamed_from} to {event.name}"] if event.renamed_from else []
        what += [changes_text(event.changes, words)] if event.changes else []
        return (f"adjusted by the GM ({event.reason}): {event.status}; {', '.join(what) or 'no sheet change'}"
                f"{_notes(event.notes, words, names)}")
    if isinstance(event, CharactersReleased):
        for outcome in event.characters:
            if outcome.character == character:
                if event.encounter_status == "ended":
                    text = (f"released by the GM from {event.encounter}, which had ended ({event.reason}): "
                            f"{outcome.status}; {changes_text(outcome.changes, words)}")
                else:
                    text = f"released by the GM from {event.encounter} before it started ({event.reason}): {outcome.status}"
                return text + _notes([n for n in outcome.notes if not n.startswith("released before")], words, names)
    return None


async def character_history(event_log: EventLog, character: str) -> tuple[CharacterView, list[HistoryEntry]]:
    """A character as it stands and every campaign event that concerned it, oldest first."""
    stream = CampaignFold(event_log)
    state = await stream.refresh()
    found = state.characters.get(character)
    if found is None:
        known = ", ".join(sorted(state.characters)[:20]) or "none"
        raise LookupError(f"no character {character[:64]!r} in campaign {event_log.campaign!r} (known: {known})")
    entries = []
    names = {cid: c.name for cid, c in state.characters.items()}
    words = system_words(found.system)
    async for version, event in _events(CampaignLog.of(event_log)):
        text = history_text(event, character, names, words)
        if text is not None:
            entries.append(HistoryEntry(version=version, type=codec.event_tag(type(event)), text=text,
                                        event=msgspec.to_builtins(event)))
    return view(found), entries


async def _events(stream: CampaignLog) -> Any:
    """(version, event) of every entry of the stream that can be read."""
    async with aclosing(stream.iter_pages(CAMPAIGN_STREAM)) as pages:
        async for rows in pages:
            for _raw_id, fields in rows:
                try:
                    yield int(fields[1]), codec.decode_body(fields[3].decode(), int(fields[5]), fields[7])
                except (ValueError, msgspec.ValidationError):
                    continue


# ------------------------------------------------------------------ downtime audit


def downtime_rolls(event: Event) -> Iterator[tuple[str, Roll]]:
    if isinstance(event, CharacterRested):
        yield from iter_rolls(event)


class DowntimeVerifier:
    """Checks a campaign stream fed in order (see `downtime_audit`), keeping only
    the commitments of the rests and the rolls of the rest being finished."""

    def __init__(self) -> None:
        self.report = VerificationReport(seed_revealed=True, commitment_ok=True)
        self.entries: list[AuditEntry] = []
        self._commitments: dict[int, str] = {}
        self._pending: dict[int, list[tuple[int, str, Roll]]] = {}
        self._previous_command: str | None = None
        self._base = 0
        self._expected_version = 1

    def feed(self, stored_events: list[StoredEvent], *, keep_entries: bool = True) -> None:
        report = self.report
        for stored in stored_events:
            if stored.problem:
                report.problems.append(f"campaign entry {stored.entry_id}: {stored.problem}")
                continue
            if stored.version != self._expected_version:
                report.problems.append(f"the campaign stream's versions jump from v{self._expected_version - 1} to "
                                       f"v{stored.version}: entries are missing or repeated")
            self._expected_version = stored.version + 1
            if stored.command_id != self._previous_command or not stored.command_id:
                # A batch answers one command; its dice were rolled at the position before its first entry.
                self._base = stored.version - 1
                self._previous_command = stored.command_id
            try:
                event = codec.decode_event(stored)
            except (ValueError, msgspec.ValidationError) as exc:
                report.problems.append(f"campaign entry v{stored.version}: cannot be read ({exc})")
                continue
            if isinstance(event, DowntimeStarted):
                self._commitments[event.downtime] = event.seed_commitment
                self._pending[event.downtime] = []
                if event.reproducible_dice is True:
                    report.reproducible_rests.append(event.downtime)
            elif isinstance(event, CharacterRested):
                for field, roll in downtime_rolls(event):
                    if keep_entries:
                        self.entries.append(AuditEntry(version=stored.version, entry_id=stored.entry_id,
                                                       event_type=stored.type, field=field, roll=roll))
                    self._pending.setdefault(event.downtime, []).append(
                        (self._base, f"v{stored.version} {stored.type}.{field}", roll))
            elif isinstance(event, DowntimeEnded):
                self._verify_rest(event, self._commitments.get(event.downtime), self._pending.pop(event.downtime, []))

    def finish(self) -> VerificationReport:
        for downtime in sorted(self._pending):
            self.report.problems.append(f"downtime {downtime} has not ended: its seed is not revealed yet")
            self.report.seed_revealed = False
        self._pending.clear()
        return self.report

    def _verify_rest(self, ended: DowntimeEnded, commitment: str | None, rolls: list[tuple[int, str, Roll]]) -> None:
        report = self.report
        try:
            seed = bytes.fromhex(ended.seed)
        except ValueError:
            report.problems.append(f"downtime {ended.downtime}: the revealed seed is not hex")
            report.commitment_ok = False
            return
        if commitment is None or commit_seed(seed) != commitment:
            report.problems.append(f"downtime {ended.downtime}: the revealed seed does not match the commitment "
                                   f"published at its start")
            report.commitment_ok = False
        used: set[tuple[int, int]] = set()
        for base, where, roll in rolls:
            report.rolls += 1
            mismatch = sum_problem(roll)
            if mismatch is not None:
                report.problems.append(f"{where} ({roll.purpose}): {mismatch}")
            for die in roll.dice:
                report.dice += 1
                label = f"{where} d{die.sides}"
                if die.at < 0:
                    report.problems.append(f"{label}: die has no seed position (fixed dice in a live stream)")
                    continue
                if (die.at, die.k) in used:
                    report.problems.append(f"{label}: dice position {(die.at, die.k)} used twice")
                used.add((die.at, die.k))
                if die.at != base:
                    report.problems.append(f"{label}: rolled at position {die.at} but the rest's outcome begins after {base}")
                expected = derive_face(seed, die.at, die.k, die.sides)
                if expected != die.face:
                    report.problems.append(f"{label}: face {die.face} but the seed gives {expected}")


async def downtime_audit(event_log: EventLog) -> tuple[list[AuditEntry], VerificationReport]:
    """Every downtime roll explained, and every die recomputed from its rest's revealed seed.

    Checks, per rest: the revealed seed matches the commitment its start
    published; each die's face is the seed's at its (position, index); every
    die was rolled at the position where the rest's outcome begins, no
    position twice; each roll adds up; every started rest has ended."""
    verifier = DowntimeVerifier()
    async with aclosing(CampaignLog.of(event_log).iter_read(CAMPAIGN_STREAM, include_invalid=True)) as pages:
        async for page in pages:
            verifier.feed(page)
    return verifier.entries, verifier.finish()
