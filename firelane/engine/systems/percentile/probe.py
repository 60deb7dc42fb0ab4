"""Whether the engine would accept a command, without rolling or changing
anything: the options of an action are the candidates this probe lets
through, so a listed command is one `decide` accepts (issue 9). The probe
runs the decision's checks on the state itself (no copy of it per
candidate): it stops at the decision's first die or first event."""

from __future__ import annotations

from typing import Any

import msgspec

from firelane.engine.core import BaseRuleSystem
from firelane.engine.state import EncounterState
from firelane.events import codec
from firelane.events.schemas import Command


def accepts(system: BaseRuleSystem, state: EncounterState, command: Command) -> bool:
    """Whether ``decide`` accepts ``command`` in ``state`` (its checks all
    come before its first roll or event): `BaseRuleSystem.accepts`."""
    return system.accepts(state, command)


_UNIONS: dict[type, Any] = {}


def as_command(system: BaseRuleSystem, body: dict[str, Any], command_id: str) -> Command:
    """The command an option lists (its JSON, without ``command_id``), to send as ``command_id``."""
    union = _UNIONS.get(type(system))
    if union is None:
        union = _UNIONS[type(system)] = codec.command_union(system.command_types)
    return msgspec.convert({**body, "command_id": command_id}, union)
