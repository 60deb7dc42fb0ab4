"""The audit log: every roll of an encounter with each die, modifier and rule
ID, and a verifier that recomputes every die from the revealed seed.

Rolls are found by type anywhere inside an event (fields, lists, dict values),
so a rule system's own events are audited without being registered here.

Verification checks that
- the revealed seed matches the commitment published when the encounter began
  (and the report says when the start recorded reproducible dice: a seed from
  a text, which verifies as well, and which anyone who knew the text could use);
- every die's face equals the face derived from (seed, at, k);
- every die was rolled at the version where its command's events begin (so no
  die was borrowed from another decision) and no (at, k) position was used twice;
- every roll adds up from its listed parts (`sum_problem`);
- the log's versions run 1, 2, 3... : a copy of a genuine entry appended
  again is named and left out, versions missing are named, and the dice
  after a gap are still checked at their own positions, so every genuine roll
  verifies whatever was done to the log around it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec

from firelane.engine.branches import Branches
from firelane.engine.dice import commit_seed, derive_face, dice_key
from firelane.engine.wording import explain_roll
from firelane.events import codec
from firelane.events.codec import event_tag
from firelane.events.envelope import StoredEvent
from firelane.events.log import EventLog, VersionSequence
from firelane.events.log_signing import GroupCheck
from firelane.events.public_signing import fingerprint
from firelane.events.schemas import ClientSeedAdded, EncounterRewound, EncounterStarted, Event, Roll, SeedRevealed


class AuditEntry(msgspec.Struct, frozen=True, kw_only=True):
    version: int
    entry_id: str
    event_type: str
    field: str
    roll: Roll
    # The version of the GM's rewind that undid this roll's event (None: it stands).
    undone_by: int | None = None

    def explain(self) -> str:
        undone = f" [undone by the rewind at v{self.undone_by}]" if self.undone_by is not None else ""
        return f"v{self.version} {self.event_type}.{self.field}{undone}: {explain_roll(self.roll)}"


class VerificationReport(msgspec.Struct, kw_only=True):
    rolls: int = 0
    dice: int = 0
    seed_revealed: bool = False
    commitment_ok: bool = False
    # The start says the dice come from a seed text: they verify, and anyone who knew the text could predict them.
    reproducible_dice: bool = False
    reproducible_rests: list[int] = []  # downtime: the rests whose starts say the same
    problems: list[str] = []
    # The log's signatures (events/log_signing.py), when the campaign was given:
    log_public_key: str = ""  # published in EncounterStarted ("" for a log written before firelane signed)
    log_key_fingerprint: str = ""
    signatures: int = 0  # valid group signatures
    signed_through: int = 0  # the last version a valid signature covers
    unsigned: str = ""  # what is not signed (a log without a key, or its end not signed yet): said, not failed
    client_seeds: list[tuple[int, str, str]] = []  # (version, seat, client seed), in log order

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


def audit_entries(stored_events: list[StoredEvent], events: list[Event] | None = None,
                  undone: Branches | None = None) -> list[AuditEntry]:
    """Every roll of these entries; ``undone``: the log's undone spans, to mark
    the rolls of events a GM's rewind undid (`projections.replay.undone_spans`)."""
    decoded = events if events is not None else [codec.decode_event(s) for s in stored_events]
    entries = []
    for stored, event in zip(stored_events, decoded):
        undone_by = undone.undone_by(stored.version) if undone is not None else None
        for field, roll in iter_rolls(event):
            entries.append(AuditEntry(version=stored.version, entry_id=stored.entry_id, event_type=stored.type,
                                      field=field, roll=roll, undone_by=undone_by))
    return entries


def verify(stored_events: list[StoredEvent], events: list[Event] | None = None, *,
           campaign: str | None = None) -> VerificationReport:
    """Check every die of a log held in memory (see `Verifier` for a stream);
    with ``campaign``, its signatures too.
    Entries read with ``include_invalid`` that the engine did not write (or
    that cannot be read) are reported, never decoded."""
    reveal = None
    for stored in reversed(stored_events):
        if not stored.problem and stored.type == event_tag(SeedRevealed):
            reveal = codec.decode_event(stored)
            break
    verifier = Verifier(bytes.fromhex(reveal.seed) if reveal is not None else None, campaign)  # type: ignore[attr-defined]
    verifier.feed(stored_events, events if events is not None and len(events) == len(stored_events) else None)
    return verifier.report()


async def revealed_seed(event_log: EventLog, encounter: str, *, tail: int = 50) -> bytes | None:
    """The seed revealed at the end of an encounter's log (None if not revealed yet).

    The sequencer reveals it right after the encounter ends, so it is among
    the last entries; only those are read (whatever else is there: the
    verification names copies and gaps, and checks the seed against the
    commitment)."""
    stored = await event_log.last_of_type(encounter, event_tag(SeedRevealed), scan=tail)
    return bytes.fromhex(codec.decode_event(stored).seed) if stored is not None else None  # type: ignore[attr-defined]


class Verifier:
    """Verifies a log fed in order, page by page (see the module doc), keeping
    only what verification needs: the dice positions seen so far, the current
    command's first position, and where the live branch is.

    Dice are drawn at the live branch's position (equal to the log version
    until a rewind; see EncounterRewound), so after a rewind the same positions
    come again: each branch is checked on its own, and every die on every
    branch must be the seed's."""

    def __init__(self, seed: bytes | None, campaign: str | None = None) -> None:
        """``campaign``: check the log's signatures too (they cover it)."""
        self.seed = seed
        self._campaign = campaign
        self._signatures: GroupCheck | None = None
        self._last_version = 0
        self._client_seeds: list[tuple[str, str]] = []
        self._dice_key = seed
        self._signatures_reported = False
        self._report = VerificationReport(seed_revealed=seed is not None)
        self._commitment: str | None = None
        self._previous_command: str | None = None
        self._base = 0
        self._branch = 0  # the live branch's position before the next entry
        # After missing entries, the batch that follows may have begun among
        # them: its dice may sit anywhere from here to there (then pinned).
        self._base_from: int | None = None
        self._versions = VersionSequence(1)
        self._used: dict[tuple[int, int], tuple[int, int]] = {}  # position -> (face, version first seen)

    def feed(self, stored_events: list[StoredEvent], events: list[Event | None] | None = None) -> None:
        """Check these entries (oldest first); ``events``, when given, are their
        decoded events (None for an entry with a problem)."""
        report, seed, used = self._report, self.seed, self._used
        for index, stored in enumerate(stored_events):
            if stored.problem:
                report.problems.append(f"log entry {stored.entry_id}: {stored.problem}" if stored.entry_id
                                       else f"log: {stored.problem}")
                continue
            expected = self._versions.expected
            problem = self._versions.problem(stored.version)
            if problem:
                if not any(p.endswith(problem) for p in report.problems[-1:]):  # a reader may have named it already
                    report.problems.append(f"log entry {stored.entry_id}: {problem}")
                if stored.version < expected:
                    continue  # a copy: its dice were checked where it belongs
                # The missing entries had their dice positions (a rewind among them cannot be known).
                self._base_from = self._branch
                self._branch += stored.version - expected
            event = events[index] if events is not None else None
            if event is None:
                event = codec.decode_event(stored)
            if self._campaign is not None:
                self._check_signature(stored, event)
            # A batch is a run of consecutive entries answering one command; its
            # dice were rolled at the branch position just before its first entry.
            if stored.command_id != self._previous_command or not stored.command_id:
                self._base = self._branch
                self._previous_command = stored.command_id
                if self._base_from is not None and not problem:
                    self._base_from = None  # a batch begun after the gap: its start is known
            if isinstance(event, EncounterRewound):
                self._branch = event.branch_version
                # The positions before the branch point are shared; those after it start over.
                self._used = used = {p: seen for p, seen in used.items() if p[0] < event.branch_version}
                # The contributions in force are the restored state's (those after the point are undone).
                self._set_client_seeds([(str(seat), str(text)) for seat, text in event.state.get("client_seeds", [])])
                continue
            if isinstance(event, ClientSeedAdded):
                report.client_seeds.append((stored.version, event.seat, event.client_seed))
                self._set_client_seeds([*self._client_seeds, (event.seat, event.client_seed)])
            self._branch += 1
            if isinstance(event, EncounterStarted) and self._commitment is None:
                self._commitment = event.seed_commitment
                report.reproducible_dice = event.reproducible_dice
                if seed is not None:
                    report.commitment_ok = self._commitment == commit_seed(seed)
                    if not report.commitment_ok:
                        report.problems.append("the revealed seed does not match the commitment published at the start")
            elif isinstance(event, SeedRevealed) and seed is not None and event.seed != seed.hex():
                report.problems.append(f"v{stored.version} SeedRevealed reveals another seed than the log's last reveal")
            for field, roll in iter_rolls(event):
                report.rolls += 1
                mismatch = sum_problem(roll)
                if mismatch is not None:
                    report.problems.append(f"v{stored.version} {stored.type}.{field} ({roll.purpose}): {mismatch}")
                for die in roll.dice:
                    report.dice += 1
                    if seed is None:
                        continue
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
                    if self._base_from is not None and self._base_from <= die.at <= self._base:
                        self._base, self._base_from = die.at, None  # where the batch began, among the missing entries
                    if die.at != self._base:
                        report.problems.append(
                            f"{where}: rolled at position {die.at} but its command's events start after position {self._base}"
                        )
                    expected = derive_face(self._dice_key, die.at, die.k, die.sides)  # type: ignore[arg-type]
                    if expected != die.face:
                        report.problems.append(f"{where}: face {die.face} but the seed gives {expected}")

    def _set_client_seeds(self, client_seeds: list[tuple[str, str]]) -> None:
        self._client_seeds = client_seeds
        if self.seed is not None:
            self._dice_key = dice_key(self.seed, client_seeds)

    def _check_signature(self, stored: StoredEvent, event: Event) -> None:
        """Feed one genuine entry to the signature check (docs/fairness.md):
        its key is the one the log's EncounterStarted publishes."""
        self._last_version = max(self._last_version, stored.version)
        if self._signatures is None:
            if not isinstance(event, EncounterStarted) or not event.log_public_key:
                return
            try:
                key = bytes.fromhex(event.log_public_key)
            except ValueError:
                self._report.problems.append("the log's published public key is not hex")
                return
            self._report.log_public_key = event.log_public_key
            self._report.log_key_fingerprint = fingerprint(key)
            self._signatures = GroupCheck(self._campaign or "", stored.encounter, key)
        fields = (str(stored.version).encode(), stored.type.encode(), str(stored.schema).encode(),
                  stored.command_id.encode(), stored.causation.encode(), stored.inbox_cursor.encode(), stored.data)
        self._signatures.feed(stored.version, fields, stored.signature.encode())

    def report(self) -> VerificationReport:
        report = self._report
        if self._campaign is not None and not self._signatures_reported:
            self._signatures_reported = True
            check = self._signatures
            if check is None:
                report.unsigned = "the log carries no public key (written before firelane signed its logs): not signed"
            else:
                report.signatures, report.signed_through = check.signatures, check.signed_through
                report.problems.extend(f"signature: {problem}" for problem in check.problems)
                report.unsigned = check.unsigned_tail(self._last_version)
        if self.seed is None:
            return VerificationReport(problems=["the seed has not been revealed yet (the encounter is still running?)",
                                                *report.problems], reproducible_dice=report.reproducible_dice)
        if self._commitment is None and not report.commitment_ok and not any("commitment" in p for p in report.problems):
            report.problems.insert(0, "the revealed seed does not match the commitment published at the start")
        return report
