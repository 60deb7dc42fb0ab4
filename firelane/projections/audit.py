"""The audit log: every roll of an encounter with each die, modifier and rule
ID, and a verifier that recomputes every die from the revealed seed.

Rolls are found by type anywhere inside an event (fields, lists, dict values),
so a rule system's own events are audited without being registered here.

Verification checks that
- the revealed seed matches the commitment published when the encounter began;
- every die's face equals the face derived from (seed, at, k);
- every die was rolled at the version where its command's events begin (so no
  die was borrowed from another decision) and no (at, k) position was used twice;
- every roll adds up from its listed parts (`sum_problem`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec

from firelane.engine.dice import commit_seed, derive_face
from firelane.events import codec
from firelane.events.envelope import StoredEvent
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


def sum_problem(roll: Roll) -> str | None:
    """Why a roll's numbers do not add up from its listed parts, or None.

    A roll is a sum: the dice that count plus every modifier make the total.
    A roll-under test (``compare`` "<=", the percentile systems) is the other
    way round: the dice alone are the total and the modifiers (the
    characteristic first) make the target.
    """
    counted = roll.counted()
    strays = [index for index in counted if not 0 <= index < len(roll.dice)]
    if strays:
        return f"kept lists dice {strays} but the roll has {len(roll.dice)}"
    dice = sum(roll.dice[index].face for index in counted)
    modifiers = sum(modifier.value for modifier in roll.modifiers)
    if roll.compare == "<=":
        if roll.total != dice:
            return f"total {roll.total} is not its dice ({dice})"
        if roll.modifiers and roll.target != modifiers:
            return f"target {roll.target} is not the sum of its modifiers ({modifiers})"
        return None
    if roll.total != dice + modifiers:
        return f"total {roll.total} is not its dice ({dice}) plus its modifiers ({modifiers:+d})"
    return None


def explain_roll(roll: Roll, *, details: bool = True) -> str:
    kept = set(roll.counted())
    dice = " ".join(
        f"d{d.sides}:{d.face}" + ("" if i in kept else "(dropped)") for i, d in enumerate(roll.dice)
    )
    head = f"{roll.purpose} [{roll.rule}] {dice or 'no dice'}"
    terms = " ".join(f"{modifier.value:+d} {modifier.source} ({modifier.rule})" for modifier in roll.modifiers)
    if roll.compare == "<=" and roll.target is not None and terms:
        # A roll-under test: the dice are the total, the modifiers make the target (`sum_problem`).
        text = f"{head} = {roll.total} vs {roll.target} = {terms} ({roll.compare})"
    else:
        text = f"{head} {terms}".rstrip() + f" = {roll.total}"
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
    """Check every die of a log. Entries read with ``include_invalid`` that
    the engine did not write (or that cannot be read) are reported, and a gap
    in the versions (an entry deleted) too; neither stops the check."""
    report = VerificationReport()
    for stored in stored_events:
        if stored.problem:
            report.problems.append(f"log entry {stored.entry_id}: {stored.problem}")
    if events is None or len(events) != len(stored_events):
        stored_events = [s for s in stored_events if not s.problem]
    decoded = events if events is not None and len(events) == len(stored_events) else [codec.decode_event(s) for s in stored_events]
    for expected, stored in enumerate(stored_events, start=1):
        if stored.version != expected:
            report.problems.append(f"the log's versions jump from v{expected - 1} to v{stored.version}: entries are missing")
            break
    commitment = next((e.seed_commitment for e in decoded if isinstance(e, EncounterStarted)), None)
    reveal = next((e for e in decoded if isinstance(e, SeedRevealed)), None)
    if reveal is None:
        report.problems.append("the seed has not been revealed yet (the encounter is still running?)")
        return report
    report.seed_revealed = True
    seed = bytes.fromhex(reveal.seed)
    report.commitment_ok = commitment == commit_seed(seed)
    if not report.commitment_ok:
        report.problems.append("the revealed seed does not match the commitment published at the start")

    # A batch is a run of consecutive entries answering one command; its dice
    # were rolled at the version just before its first entry.
    batch_base: dict[int, int] = {}
    previous_command = None
    base = 0
    for stored in stored_events:
        if stored.command_id != previous_command or not stored.command_id:
            base = stored.version - 1
            previous_command = stored.command_id
        batch_base[stored.version] = base

    used: dict[tuple[int, int], tuple[int, int]] = {}  # position -> (face, version first seen)
    for stored, event in zip(stored_events, decoded):
        for field, roll in iter_rolls(event):
            report.rolls += 1
            mismatch = sum_problem(roll)
            if mismatch is not None:
                report.problems.append(f"v{stored.version} {stored.type}.{field} ({roll.purpose}): {mismatch}")
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
                if die.at != batch_base[stored.version]:
                    report.problems.append(
                        f"{where}: rolled at v{die.at} but its command's events start after v{batch_base[stored.version]}"
                    )
                expected = derive_face(seed, die.at, die.k, die.sides)
                if expected != die.face:
                    report.problems.append(f"{where}: face {die.face} but the seed gives {expected}")
    return report
