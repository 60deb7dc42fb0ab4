"""The audit log: every roll of an encounter with each die, modifier and rule
ID, and a verifier that recomputes every die from the revealed seed.

Rolls are found by type anywhere inside an event (fields, lists, dict values),
so a rule system's own events are audited without being registered here.

Verification checks that
- the revealed seed matches the commitment published when the encounter began;
- every die's face equals the face derived from (seed, at, k);
- every die was rolled at the version where its command's events begin (so no
  die was borrowed from another decision) and no (at, k) position was used twice.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec

from firelane.engine.dice import commit_seed, derive_face
from firelane.events import codec
from firelane.events.codec import event_tag
from firelane.events.envelope import StoredEvent
from firelane.events.log import EventLog
from firelane.events.schemas import EncounterStarted, Event, Roll, SeedRevealed


class AuditEntry(msgspec.Struct, frozen=True, kw_only=True):
    version: int
    entry_id: str
    event_type: str
    field: str
    roll: Roll

    def explain(self) -> str:
        return f"v{self.version} {self.event_type}.{self.field}: {explain_roll(self.roll)}"


class VerificationReport(msgspec.Struct, kw_only=True):
    rolls: int = 0
    dice: int = 0
    seed_revealed: bool = False
    commitment_ok: bool = False
    problems: list[str] = []

    @property
    def ok(self) -> bool:
        return self.seed_revealed and self.commitment_ok and not self.problems


def iter_rolls(value: Any, path: str = "") -> Iterator[tuple[str, Roll]]:
    if isinstance(value, Roll):
        yield path, value
    elif isinstance(value, msgspec.Struct):
        for name in value.__struct_fields__:
            yield from iter_rolls(getattr(value, name), f"{path}.{name}" if path else name)
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from iter_rolls(item, f"{path}[{index}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from iter_rolls(item, f"{path}[{key!r}]")


def explain_roll(roll: Roll, *, details: bool = True) -> str:
    kept = set(roll.kept) if roll.kept else set(range(len(roll.dice)))
    dice = " ".join(
        f"d{d.sides}:{d.face}" + ("" if i in kept else "(dropped)") for i, d in enumerate(roll.dice)
    )
    parts = [f"{roll.purpose} [{roll.rule}] {dice or 'no dice'}"]
    for modifier in roll.modifiers:
        parts.append(f"{modifier.value:+d} {modifier.source} ({modifier.rule})")
    text = " ".join(parts) + f" = {roll.total}"
    if roll.target is not None:
        text += f" vs {roll.target} ({roll.compare})"
    if roll.success is not None:
        text += " success" if roll.success else " failure"
    if roll.notes:
        text += f" [{'; '.join(roll.notes)}]"
    if details and roll.details:
        text += " {" + ", ".join(f"{k}={v}" for k, v in roll.details.items()) + "}"
    return text


def audit_entries(stored_events: list[StoredEvent], events: list[Event] | None = None) -> list[AuditEntry]:
    decoded = events if events is not None else [codec.decode_event(s) for s in stored_events]
    entries = []
    for stored, event in zip(stored_events, decoded):
        for field, roll in iter_rolls(event):
            entries.append(
                AuditEntry(version=stored.version, entry_id=stored.entry_id, event_type=stored.type, field=field, roll=roll)
            )
    return entries


def verify(stored_events: list[StoredEvent], events: list[Event] | None = None) -> VerificationReport:
    decoded = events if events is not None else [codec.decode_event(s) for s in stored_events]
    reveal = next((e for e in decoded if isinstance(e, SeedRevealed)), None)
    verifier = Verifier(bytes.fromhex(reveal.seed) if reveal is not None else None)
    verifier.feed(stored_events, decoded)
    return verifier.report()


async def revealed_seed(event_log: EventLog, encounter: str, *, tail: int = 50) -> bytes | None:
    """The seed revealed at the end of an encounter's log (None if not revealed yet).

    The sequencer reveals it right after the encounter ends, so it is among
    the last entries; only those are read."""
    for stored in reversed(await event_log.read_from_version(encounter, max(0, await event_log.version(encounter) - tail))):
        if stored.type == event_tag(SeedRevealed):
            return bytes.fromhex(codec.decode_event(stored).seed)  # type: ignore[attr-defined]
    return None


class Verifier:
    """Verifies a log fed in order, page by page (see the module doc), keeping
    only what verification needs: the dice positions seen so far and the
    current command's first version."""

    def __init__(self, seed: bytes | None) -> None:
        self.seed = seed
        self._report = VerificationReport(seed_revealed=seed is not None)
        self._commitment: str | None = None
        self._previous_command: str | None = None
        self._base = 0
        self._used: dict[tuple[int, int], tuple[int, int]] = {}  # position -> (face, version first seen)

    def feed(self, stored_events: list[StoredEvent], events: list[Event]) -> None:
        if self.seed is None:
            return
        report, seed, used = self._report, self.seed, self._used
        for stored, event in zip(stored_events, events):
            if isinstance(event, EncounterStarted) and self._commitment is None:
                self._commitment = event.seed_commitment
                report.commitment_ok = self._commitment == commit_seed(seed)
                if not report.commitment_ok:
                    report.problems.append("the revealed seed does not match the commitment published at the start")
            elif isinstance(event, SeedRevealed) and event.seed != seed.hex():
                report.problems.append(f"v{stored.version} SeedRevealed reveals another seed than the log's last reveal")
            # A batch is a run of consecutive entries answering one command; its
            # dice were rolled at the version just before its first entry.
            if stored.command_id != self._previous_command or not stored.command_id:
                self._base = stored.version - 1
                self._previous_command = stored.command_id
            for field, roll in iter_rolls(event):
                report.rolls += 1
                for die in roll.dice:
                    report.dice += 1
                    where = f"v{stored.version} {stored.type}.{field} d{die.sides}"
                    if die.at < 0:
                        report.problems.append(f"{where}: die has no seed position (fixed dice in a live log)")
                        continue
                    position = (die.at, die.k)
                    if position in used:
                        # A later event may quote an earlier roll; it must quote it exactly.
                        face, first_seen = used[position]
                        if face != die.face:
                            report.problems.append(f"{where}: quotes dice position {position} from v{first_seen} with another face")
                        continue
                    used[position] = (die.face, stored.version)
                    if die.at != self._base:
                        report.problems.append(
                            f"{where}: rolled at v{die.at} but its command's events start after v{self._base}"
                        )
                    expected = derive_face(seed, die.at, die.k, die.sides)
                    if expected != die.face:
                        report.problems.append(f"{where}: face {die.face} but the seed gives {expected}")

    def report(self) -> VerificationReport:
        report = self._report
        if self.seed is None:
            return VerificationReport(problems=["the seed has not been revealed yet (the encounter is still running?)"])
        if self._commitment is None and not report.commitment_ok and not any("commitment" in p for p in report.problems):
            report.problems.insert(0, "the revealed seed does not match the commitment published at the start")
        return report
