"""What an encounter publishes so anyone can check it (docs/fairness.md):
the public key its log is signed with, and its log's entries as stored."""

from __future__ import annotations

from typing import Any

from firelane.events import codec
from firelane.events.log import EventLog
from firelane.events.public_signing import fingerprint
from firelane.events.schemas import EncounterStarted


async def published_log_key(event_log: EventLog, encounter: str) -> str:
    """The public key (hex) the encounter's log is signed with: the one its
    `EncounterStarted` publishes once it has started; before, the store's own
    (which its queued start carries). "" for a log an older firelane started
    unsigned, or a log opened without a signer."""
    first = await event_log.read(encounter, count=1)
    if first and first[0].type == codec.event_tag(EncounterStarted):
        return codec.decode_event(first[0]).log_public_key  # type: ignore[attr-defined]
    if first:
        return ""
    return event_log.signer.key.public_key.hex() if event_log.signer is not None else ""


def key_description(public_key: str) -> dict[str, str]:
    """The key as published: hex, its fingerprint, the algorithm."""
    if not public_key:
        return {"algorithm": "Ed25519", "public_key": "", "fingerprint": ""}
    return {"algorithm": "Ed25519", "public_key": public_key, "fingerprint": fingerprint(bytes.fromhex(public_key))}


def raw_entry(entry_id: str, stored: Any) -> dict[str, Any]:
    """One log entry with every field a verifier needs, as stored (``d`` as
    its JSON text, not re-encoded)."""
    return {"id": entry_id, "n": stored.version, "t": stored.type, "s": stored.schema,
            "d": stored.data.decode("utf-8"), "c": stored.command_id, "k": stored.causation,
            "q": stored.inbox_cursor, "g": stored.signature}
