"""The envelope every log entry carries, independent of the event schemas.

The log stores each event as a Redis Stream entry with these fields:

    n  version: 1-based position of the entry in the encounter's log
    t  event type tag (e.g. "AttackResolved")
    s  schema version of that type's payload (upcasters lift old ones)
    d  payload: msgspec JSON of the event body
    c  command ID the entry answers, namespaced by the seat it came from:
       "<seat>/<command_id>" ("engine/..." for the start and the AI's commands,
       "sequencer/..." for the engine's housekeeping: a window's close, a turn's
       timeout, the seed's reveal; "" for none)
       -- the idempotency key
    k  causation: what caused it, "inbox:<seat>:<inbox entry ID>" for a command
       from a seat's inbox, "deadline:window-N" for a timeout...
    q  command-inbox cursor: "<seat>=<inbox entry ID>", how far that seat's
       inbox is handled once this batch is in ("" for the engine's own commands;
       several "seat=id" joined by ";" for a rewind)
    h  MAC of all the fields above and the encounter (see signing.py), so an
       entry the engine did not write is recognised
    g  only on the entry that closes a signed group: the Ed25519 signature
       (hex) over the group, checkable by anyone with the store's public key
       (see log_signing.py and docs/fairness.md)

Keeping the envelope separate from the payload lets the log, projections and
frontends in other languages read an entry without knowing its schema.
"""

from __future__ import annotations

import msgspec


class NewEntry(msgspec.Struct, frozen=True, kw_only=True):
    """One event ready to append: its type tag, schema version and encoded body."""

    type: str
    schema: int
    data: bytes


class StoredEvent(msgspec.Struct, frozen=True, kw_only=True):
    """One entry read back from an encounter's log."""

    entry_id: str
    version: int
    encounter: str
    type: str
    schema: int
    data: bytes
    command_id: str = ""
    causation: str = ""
    inbox_cursor: str = ""
    signature: str = ""  # ``g``: set on the entry that closes a signed group
    # Set (and the fields above meaningless) for an entry that cannot be read
    # or was not written by the engine; readers skip it and may report it.
    problem: str = ""


def parse_inbox_cursors(text: str) -> list[tuple[str, str]]:
    """The ``(seat, entry id)`` pairs of an envelope's ``q``:
    ``"<seat>=<entry id>"``, or several joined by ``;`` (a rewind records every
    seat's inbox as handled)."""
    pairs = []
    for part in text.split(";") if text else ():
        seat, sep, entry_id = part.partition("=")
        if sep and seat and entry_id:
            pairs.append((seat, entry_id))
    return pairs


def format_inbox_cursors(cursors: dict[str, str]) -> str:
    return ";".join(f"{seat}={entry_id}" for seat, entry_id in cursors.items())
