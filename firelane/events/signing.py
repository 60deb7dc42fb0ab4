"""Authenticating log entries: a MAC over every envelope field.

The server holds one secret (in its data directory); each campaign's key is
derived from it, so a campaign exported elsewhere does not reveal the others'.
The engine signs every entry it appends; readers with the key check each one,
so an entry written into a log by anyone else (a client with write access to
Redis) is reported as not the engine's, never trusted, never fatal.

Keyed BLAKE2b is a MAC in its own right (no HMAC construction needed) and is in
the standard library. The encounter and every envelope field are covered, so an
entry cannot be moved to another encounter or position, nor its command or
cursor changed.
"""

from __future__ import annotations

import hashlib
import hmac

MAC_BYTES = 16


def campaign_key(server_key: bytes, campaign: str) -> bytes:
    return hashlib.blake2b(f"campaign:{campaign}".encode(), key=server_key, digest_size=32).digest()


def entry_mac(key: bytes, encounter: str, version: int, type_: str, schema: int,
              data: bytes, command_id: str, causation: str, inbox_cursor: str) -> str:
    return raw_entry_mac(key, encounter.encode(), str(version).encode(), type_.encode(), str(schema).encode(), data,
                         command_id.encode(), causation.encode(), inbox_cursor.encode()).decode()


def raw_entry_mac(key: bytes, encounter: bytes, version: bytes, type_: bytes, schema: bytes, data: bytes,
                  command_id: bytes, causation: bytes, inbox_cursor: bytes) -> bytes:
    """The MAC (hex, as bytes) over the fields as the stream stores them: what
    readers check, without decoding a field first."""
    header = b"\x00".join((encounter, version, type_, schema, command_id, causation, inbox_cursor, b""))
    return hashlib.blake2b(header + data, key=key, digest_size=MAC_BYTES).hexdigest().encode()


def macs_equal(expected: str | bytes, given: str | bytes) -> bool:
    expected = expected.encode() if isinstance(expected, str) else expected
    given = given.encode() if isinstance(given, str) else given
    return hmac.compare_digest(expected, given)
