"""Encoding events and commands to bytes and back, with upcasting of old schemas.

Events are stored as (type tag, schema version, JSON body) in the log envelope.
Decoding looks the type up in a registry; a body written under an older schema
version is lifted step by step by registered upcasters (plain dict -> dict
functions) before it is validated against the current Struct.

Commands arrive from frontends as JSON objects tagged with ``"type"``; each rule
system has its own union of command types, so decoding takes that union.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Union

import msgspec

from firelane.events.envelope import NewEntry, StoredEvent
from firelane.events.schemas import GENERIC_COMMANDS, GENERIC_EVENTS, Command, Event


class UnknownEventType(ValueError):
    pass


class CommandDecodeError(ValueError):
    """A command payload could not be understood; the message is fit to show a user."""


Upcaster = Callable[[dict[str, Any]], dict[str, Any]]

_event_types: dict[str, type[Event]] = {}
_upcasters: dict[tuple[str, int], Upcaster] = {}
_json_encoder = msgspec.json.Encoder()
_decoders: dict[type, msgspec.json.Decoder] = {}


def event_tag(event_type: type[Event]) -> str:
    return event_type.__struct_config__.tag  # type: ignore[return-value]


def register_events(types: Iterable[type[Event]]) -> None:
    """Make event types decodable. Registering the same class twice is harmless;
    two different classes with one tag are a programming error."""
    for event_type in types:
        tag = event_tag(event_type)
        existing = _event_types.get(tag)
        if existing is not None and existing is not event_type:
            raise ValueError(f"event tag {tag!r} registered twice ({existing} and {event_type})")
        _event_types[tag] = event_type


def register_upcaster(tag: str, from_version: int, upcaster: Upcaster) -> None:
    """Register how to lift a ``tag`` body from ``from_version`` to ``from_version + 1``."""
    _upcasters[(tag, from_version)] = upcaster


def event_type_for(tag: str) -> type[Event]:
    try:
        return _event_types[tag]
    except KeyError:
        raise UnknownEventType(f"unknown event type {tag!r}") from None


def _decoder(target: type) -> msgspec.json.Decoder:
    decoder = _decoders.get(target)
    if decoder is None:
        decoder = _decoders[target] = msgspec.json.Decoder(target)
    return decoder


def encode_event(event: Event) -> NewEntry:
    return NewEntry(
        type=event_tag(type(event)),
        schema=type(event).schema_version,
        data=_json_encoder.encode(event),
    )


def decode_body(tag: str, schema: int, data: bytes) -> Event:
    event_type = event_type_for(tag)
    current = event_type.schema_version
    if schema == current:
        return _decoder(event_type).decode(data)
    if schema > current:
        raise UnknownEventType(f"{tag} schema v{schema} is newer than this engine knows (v{current})")
    body = msgspec.json.decode(data)
    for version in range(schema, current):
        upcaster = _upcasters.get((tag, version))
        if upcaster is None:
            raise UnknownEventType(f"no upcaster for {tag} v{version} -> v{version + 1}")
        body = upcaster(body)
    body["type"] = tag
    return msgspec.convert(body, event_type)


def decode_event(stored: StoredEvent) -> Event:
    return decode_body(stored.type, stored.schema, stored.data)


def body_decoder(tag: str, schema: int) -> Callable[[bytes], Event]:
    """A function decoding bodies of ``tag`` written under ``schema``, the same
    as ``decode_body(tag, schema, ·)``: at the current schema it is the
    reused msgspec decoder's own ``decode`` (no Python frame per event), so a
    fold over a long log looks it up once per type. Raises `UnknownEventType`
    for an unknown tag or a schema newer than this engine knows."""
    event_type = event_type_for(tag)
    if schema == event_type.schema_version:
        return _decoder(event_type).decode
    if schema > event_type.schema_version:
        raise UnknownEventType(f"{tag} schema v{schema} is newer than this engine knows (v{event_type.schema_version})")
    return lambda data: decode_body(tag, schema, data)


def encode_json(value: Any) -> bytes:
    return _json_encoder.encode(value)


def command_union(extra: Iterable[type[Command]]) -> Any:
    types = tuple(GENERIC_COMMANDS) + tuple(t for t in extra if t not in GENERIC_COMMANDS)
    return Union[types]  # noqa: UP007 - msgspec needs a runtime Union


def decode_command(payload: bytes, union: Any) -> Command:
    """Decode a frontend's JSON command, turning every failure into a readable reason."""
    try:
        return _decoder(union).decode(payload)
    except msgspec.ValidationError as exc:
        raise CommandDecodeError(f"invalid command: {exc}") from None
    except msgspec.DecodeError as exc:
        raise CommandDecodeError(f"malformed JSON: {exc}") from None


def encode_command(command: Command) -> bytes:
    return _json_encoder.encode(command)


register_events(GENERIC_EVENTS)
