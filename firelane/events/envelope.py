"""The envelope every log entry carries, independent of the event schemas.

The log stores each event as a Redis Stream entry with these fields:

    n  version: 1-based position of the entry in the encounter's log
    t  event type tag (e.g. "AttackResolved")
    s  schema version of that type's payload (upcasters lift old ones)
    d  payload: msgspec JSON of the event body
    c  command ID the entry answers ("" for none)   -- idempotency key
    k  causation: the entry ID / command ID that caused it ("" for none)
    q  command-inbox cursor: the inbox entry ID consumed by this batch ("" for none)

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
