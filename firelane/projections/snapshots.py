"""Snapshots of an encounter's folded state, so a long log resumes from its tail.

A snapshot is the state (msgpack) with the version and entry ID it reflects,
the inbox cursor recorded up to there, the rule system's name and a
fingerprint of the state's and events' schemas. The sequencer writes one every
N events (``…:snapshot``); the turn-state projection keeps its own checkpoint
in the same format (``…:checkpoint:turn_state``).

A snapshot is trusted only if it matches: the same rule system, the same
schema fingerprint, the encounter's own state at the version it claims, and an
entry with that ID and version in the log. Anything else (another system,
another schema, a version mismatch, a log that was replaced, unreadable bytes)
is ignored with a reason, and the caller folds from the start: a snapshot can
make resuming faster, never different.

Limit: the fingerprint covers schemas, not code. A change of a rule system's
``evolve`` that gives another state for the same events (without a schema
change) must bump ``SNAPSHOT_FORMAT`` so old snapshots are refolded.
"""

from __future__ import annotations

import hashlib

import msgspec

from firelane.engine.core import BaseRuleSystem
from firelane.engine.registry import UnknownSystem, get_system
from firelane.engine.state import EncounterState
from firelane.events.log import EventLog
from firelane.events.schemas import GENERIC_EVENTS
from firelane.redisio.client import RedisError

SNAPSHOT_FORMAT = 2  # 2: inbox cursors per seat

_fingerprints: dict[tuple[str, type], str] = {}


class Snapshot(msgspec.Struct, kw_only=True):
    system: str
    fingerprint: str  # state and event schemas the state was folded under
    version: int
    entry_id: str
    inbox_cursors: dict[str, str] = {}  # seat -> how far its inbox is handled
    state: bytes  # msgpack of the system's state type


class Resumed(msgspec.Struct, kw_only=True):
    """A snapshot that matched: the state to go on folding from."""

    system: BaseRuleSystem
    state: EncounterState
    entry_id: str
    inbox_cursors: dict[str, str]


def snapshot_key(campaign: str, encounter: str) -> str:
    return f"firelane:{{{campaign}}}:enc:{encounter}:snapshot"


def state_fingerprint(system: BaseRuleSystem) -> str:
    """A short hash of the state type's schema and every event type's tag and schema version."""
    key = (system.name, system.state_type)
    cached = _fingerprints.get(key)
    if cached is None:
        events = sorted({(t.__struct_config__.tag, t.schema_version) for t in (*GENERIC_EVENTS, *system.event_types)})
        material = msgspec.json.encode([SNAPSHOT_FORMAT, system.name, msgspec.json.schema(system.state_type), events])
        cached = _fingerprints[key] = hashlib.blake2b(material, digest_size=12).hexdigest()
    return cached


def encode_snapshot(system: BaseRuleSystem, state: EncounterState, entry_id: str,
                    inbox_cursors: dict[str, str] | None = None) -> bytes:
    return msgspec.msgpack.encode(
        Snapshot(system=system.name, fingerprint=state_fingerprint(system), version=state.version,
                 entry_id=entry_id, inbox_cursors=dict(inbox_cursors or {}), state=msgspec.msgpack.encode(state))
    )


async def save_snapshot(event_log: EventLog, key: str, system: BaseRuleSystem, state: EncounterState,
                        entry_id: str, inbox_cursors: dict[str, str] | None = None) -> None:
    await event_log.client.execute("SET", key, encode_snapshot(system, state, entry_id, inbox_cursors))


async def load_snapshot(
    event_log: EventLog, encounter: str, key: str, system: BaseRuleSystem | None = None
) -> tuple[Resumed | None, str]:
    """The snapshot at ``key`` if it matches (see the module doc), else None and why it was ignored.

    ``system``: the rule system the caller runs (None: take the one the snapshot names).
    """
    raw = await event_log.client.execute("GET", key)
    if raw is None:
        return None, "no snapshot"
    try:
        snapshot = msgspec.msgpack.decode(raw, type=Snapshot)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        return None, f"unreadable snapshot ({exc})"
    if system is None:
        try:
            system = get_system(snapshot.system)
        except UnknownSystem:
            return None, f"snapshot of unknown rule system {snapshot.system!r}"
    elif snapshot.system != system.name:
        return None, f"snapshot of another rule system ({snapshot.system}, not {system.name})"
    if snapshot.fingerprint != state_fingerprint(system):
        return None, "snapshot written under other state or event schemas"
    try:
        state = msgspec.msgpack.decode(snapshot.state, type=system.state_type)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        return None, f"unreadable snapshot state ({exc})"
    if state.version != snapshot.version or state.encounter != encounter:
        return None, (f"snapshot state is of {state.encounter!r} at v{state.version}, "
                      f"but claims {encounter!r} at v{snapshot.version}")
    try:
        rows = await event_log.client.execute(
            "XRANGE", event_log.log_key(encounter), snapshot.entry_id, snapshot.entry_id, "COUNT", 1)
    except RedisError as exc:  # a malformed entry ID is refused by Redis
        return None, f"snapshot entry ID {snapshot.entry_id!r} is not usable ({exc})"
    fields = dict(zip(rows[0][1][::2], rows[0][1][1::2])) if rows else {}
    if fields.get(b"n") != str(snapshot.version).encode():
        return None, f"the log has no entry {snapshot.entry_id} at v{snapshot.version}"
    return Resumed(system=system, state=state, entry_id=snapshot.entry_id, inbox_cursors=snapshot.inbox_cursors), ""
