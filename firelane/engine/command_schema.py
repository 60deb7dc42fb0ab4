"""The JSON Schema of the commands a seat may send to a rule system (what
`firelane schema`, `GET /api/schema` and the OpenAPI document publish).

- The engine's own commands (``authority = "engine"``: StartEncounter,
  CloseReactionWindow, RestoreState, TimeOutTurn) are left out: no seat may
  send them, and the engine refuses them from any inbox.
- Every command's definition says who may send it: ``"x-authority"`` is
  ``"combatant"`` (the seat controlling ``actor``), ``"seat"`` (a player
  seat for itself: ``actor`` is the seat's id, as in AddClientSeed) or
  ``"gm"`` (the GM seat, actor ``"gm"``).
- ClaimReaction's ``options`` is typed per reaction (the system's
  ``reaction_options_types``): an ``allOf`` of ``if reaction is R then options
  is R's type``, and ``reaction`` lists the reactions the system has (a
  plugin system that types none of its reactions leaves both open).

JSON Schema 2020-12 (msgspec's), which OpenAPI 3.1 takes as it is.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Union

import msgspec

from firelane.events.schemas import GENERIC_COMMANDS, Command

DEFS = "#/$defs/{name}"


def seat_command_types(systems: Iterable[Any]) -> tuple[type[Command], ...]:
    """The command types a seat may send to any of ``systems``: every one but the engine's own."""
    found: dict[type[Command], None] = dict.fromkeys(GENERIC_COMMANDS)
    for system in systems:
        found.update(dict.fromkeys(system.command_types))
    return tuple(t for t in found if t.authority != "engine")


def command_schema_components(systems: Iterable[Any], ref_template: str = DEFS) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the schema of one command of ``systems``, its definitions): a
    ``oneOf`` tagged by ``type``, with ``$ref``s made by ``ref_template``."""
    systems = list(systems)
    types = seat_command_types(systems)
    # reaction -> its options' types (one per system naming it: "dodge" is RonD6's and d100 degrees')
    options: dict[str, list[type]] = {}
    for system in systems:
        for reaction, kind in system.reaction_options_types.items():
            if kind not in options.setdefault(reaction, []):
                options[reaction].append(kind)
    option_types = sorted({kind for kinds in options.values() for kind in kinds}, key=lambda t: t.__name__)
    (command, *_), defs = msgspec.json.schema_components([Union[types], *option_types],  # noqa: UP007 - msgspec needs a runtime Union
                                                         ref_template=ref_template)
    for kind in types:
        defs[kind.__name__]["x-authority"] = kind.authority
    claim = defs["ClaimReaction"]
    if options:
        if all(system.reaction_options_types for system in systems):  # else a system's reactions are not all known
            claim["properties"]["reaction"] = {"type": "string", "enum": sorted(options)}
        claim["allOf"] = [
            {"if": {"properties": {"reaction": {"const": reaction}}, "required": ["reaction"]},
             "then": {"properties": {"options": _one_of([{"$ref": ref_template.format(name=k.__name__)} for k in kinds])}}}
            for reaction, kinds in sorted(options.items())
        ]
    return command, defs


def _one_of(schemas: list[dict[str, Any]]) -> dict[str, Any]:
    return schemas[0] if len(schemas) == 1 else {"anyOf": schemas}


def command_schema(systems: Iterable[Any]) -> dict[str, Any]:
    """A whole JSON Schema document for the commands of ``systems``."""
    command, defs = command_schema_components(systems)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **command, "$defs": defs}


__all__ = ["command_schema", "command_schema_components", "seat_command_types"]
