"""Public-key signatures on the log: anyone with the published key can check
every entry, in any language (docs/fairness.md, "The log's signatures").

The engine's MAC (``h``, signing.py) needs the store's secret to check. These
signatures need only the store's Ed25519 public key, published when the
encounter is created (in its `StartEncounter`/`EncounterStarted`, `seats
--json` and the API's ``…/signing-key``).

The log is cut into **groups** of consecutive entries. The last entry of a
group carries the field ``g``: the Ed25519 signature (128 hex digits) over

    "firelane-log-signature:1:" || SHA-256(group bytes)

where the group bytes are, each value length-prefixed (a 4-byte big-endian
length, then the UTF-8 bytes; numbers in decimal):

    "firelane-log-group:1", campaign, encounter, first version of the group,
    then per entry: n, t, s, c, k, q, d

So a signature covers the campaign, the encounter, where the group begins and
every field of every entry in it (not ``h``, the server's MAC). Groups tile
the log: the first begins at v1 and each begins right after the one before.
An entry altered, inserted, removed or moved breaks its group's signature or
the tiling, so the reader names the versions that fail. Entries after the last
signature are "not signed yet" (the engine signs at least every
`SIGN_EVERY_ENTRIES` entries, every `SIGN_EVERY_SECONDS`, and the seed's
reveal, so a finished fight is signed to its end).

A signature per group, not per entry, keeps the cost small: one Ed25519
signature costs about 33 us here, about a fifth of the live engine's whole
CPU per event (scripts/bench.py, ``live_signed_over_unsigned_cpu``).
"""

from __future__ import annotations

import hashlib
import struct
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from firelane.events.public_signing import SigningKey, signature_valid

GROUP_CONTEXT = b"firelane-log-group:1"
SIGNATURE_CONTEXT = b"firelane-log-signature:1:"
SIGN_EVERY_ENTRIES = 32
SIGN_EVERY_SECONDS = 1.0
_LENGTH = struct.Struct(">I")


def field_bytes(value: bytes) -> bytes:
    """One value as the group bytes hold it: its length (4 bytes, big-endian), then itself."""
    return _LENGTH.pack(len(value)) + value


def entry_bytes(version: bytes, type_: bytes, schema: bytes, command: bytes, causation: bytes,
                inbox_cursor: bytes, data: bytes) -> bytes:
    """One entry's part of the group bytes: n, t, s, c, k, q, d (as the stream stores them)."""
    pack = _LENGTH.pack
    return b"".join((pack(len(version)), version, pack(len(type_)), type_, pack(len(schema)), schema,
                     pack(len(command)), command, pack(len(causation)), causation,
                     pack(len(inbox_cursor)), inbox_cursor, pack(len(data)), data))


def group_header(campaign: str, encounter: str, first_version: int) -> bytes:
    return b"".join(field_bytes(value) for value in (GROUP_CONTEXT, campaign.encode(), encounter.encode(),
                                                     str(first_version).encode()))


def signed_message(group_digest: bytes) -> bytes:
    return SIGNATURE_CONTEXT + group_digest


def group_digest(campaign: str, encounter: str, first_version: int, entries: Iterable[bytes]) -> bytes:
    """SHA-256 of a group's bytes (``entries``: each one's `entry_bytes`)."""
    digest = hashlib.sha256(group_header(campaign, encounter, first_version))
    for entry in entries:
        digest.update(entry)
    return digest.digest()


@dataclass
class _Pending:
    """The entries of an encounter's log written since its last signature."""

    first_version: int
    digest: object  # hashlib's running SHA-256
    entries: int = 0
    since: float = field(default_factory=time.monotonic)


class LogSigner:
    """Signs what one store appends: keeps, per encounter, the running digest of
    the entries since the last signature, and says when the next one is due.

    What it keeps is only trusted while appends go as planned: after anything
    else (a failed or duplicate append, a restart) it forgets the encounter,
    and the log rebuilds it from the stored entries (`EventLog`)."""

    def __init__(self, key: SigningKey) -> None:
        self.key = key
        self._pending: dict[tuple[str, str], _Pending] = {}

    def known(self, campaign: str, encounter: str, version: int) -> bool:
        """Whether what it keeps of the log ends at ``version`` (else another
        writer has appended since, or it never knew the log: resume)."""
        pending = self._pending.get((campaign, encounter))
        return pending is not None and pending.first_version + pending.entries - 1 == version

    def forget(self, campaign: str, encounter: str) -> None:
        self._pending.pop((campaign, encounter), None)

    def resume(self, campaign: str, encounter: str, first_version: int, entries: Sequence[bytes]) -> None:
        """Start from the log as stored: the group open since ``first_version`` holds ``entries``."""
        pending = _Pending(first_version, hashlib.sha256(group_header(campaign, encounter, first_version)))
        for entry in entries:
            pending.digest.update(entry)  # type: ignore[attr-defined]
        pending.entries = len(entries)
        self._pending[(campaign, encounter)] = pending

    def plan(self, campaign: str, encounter: str, entries: Sequence[bytes], *, seal: bool = False) -> tuple[str, object]:
        """The signature (hex) for the last of ``entries`` about to be appended
        after the open group ("" when none is due yet), and what `commit`
        takes once they are in the log. The open group takes the entries at
        once (no copy of the running digest per append): an append that does
        not land as planned must be followed by `forget`."""
        pending = self._pending[(campaign, encounter)]
        digest = pending.digest
        for entry in entries:
            digest.update(entry)  # type: ignore[attr-defined]
        pending.entries += len(entries)
        due = seal or pending.entries >= SIGN_EVERY_ENTRIES or time.monotonic() - pending.since >= SIGN_EVERY_SECONDS
        if not due or not entries:
            return "", False
        return self.key.sign(signed_message(digest.digest())).hex(), True  # type: ignore[attr-defined]

    def commit(self, campaign: str, encounter: str, appended: int, plan: object) -> None:
        """The planned entries are in the log (``appended``: the log's version after them)."""
        if plan:  # signed: the next group begins after them
            self._pending[(campaign, encounter)] = _Pending(
                appended + 1, hashlib.sha256(group_header(campaign, encounter, appended + 1)))


class GroupCheck:
    """Checks a log's signatures entry by entry, oldest first (`feed`), as any
    reader would from docs/fairness.md: what fails is named by version."""

    def __init__(self, campaign: str, encounter: str, public_key: bytes) -> None:
        self.campaign, self.encounter, self.public_key = campaign, encounter, public_key
        self.signed_through = 0  # the last version covered by a valid signature
        self.signatures = 0
        self.problems: list[str] = []
        self._expected = 1
        self._first = 1
        self._digest = hashlib.sha256(group_header(campaign, encounter, 1))
        self._broken = ""

    def feed(self, version: int, fields: Sequence[bytes], signature: bytes) -> None:
        """One entry: its version, its fields n, t, s, c, k, q, d (bytes, as
        stored) and its ``g`` (b"" for none)."""
        if version != self._expected and not self._broken:
            self._broken = (f"v{version} comes where v{self._expected} should"
                            if version > 0 else f"an entry without a version comes where v{self._expected} should")
        self._expected = version + 1 if version > 0 else self._expected
        self._digest.update(entry_bytes(*fields))
        if not signature:
            return
        last = version
        valid = False
        try:
            valid = signature_valid(self.public_key, signed_message(self._digest.digest()), bytes.fromhex(signature.decode()))
        except (ValueError, UnicodeDecodeError):
            valid = False
        if valid and not self._broken:
            self.signed_through = last
            self.signatures += 1
        else:
            why = self._broken or "its signature does not match (an entry in it was altered, added or removed)"
            self.problems.append(f"v{self._first}-v{last}: {why}" if self._first != last else f"v{last}: {why}")
        self._first = self._expected
        self._digest = hashlib.sha256(group_header(self.campaign, self.encounter, self._first))
        self._broken = ""

    def unsigned_tail(self, last_version: int) -> str:
        """"" when every entry up to ``last_version`` is covered by a signature
        checked here, else which versions are not signed yet."""
        if self._first > last_version:
            return ""
        if self._broken:
            return f"v{self._first}-v{last_version}: not signed, and {self._broken}"
        return (f"v{self._first}-v{last_version} are not signed yet" if self._first != last_version
                else f"v{last_version} is not signed yet")
