"""Whether the engine would accept a command, without rolling anything: the
options of an action are the candidates this probe lets through, so a listed
command is one `decide` accepts (issue 9)."""

from __future__ import annotations

from typing import Any

import msgspec

from firelane.engine.core import BaseRuleSystem, Rejected
from firelane.engine.dice import Dice
from firelane.engine.state import EncounterState
from firelane.events import codec
from firelane.events.schemas import Command, Die


class _FirstRoll(Exception):
    """Raised at the first die: every check before it has passed."""


class _ProbeDice(Dice):
    def roll(self, sides: int) -> Die:
        raise _FirstRoll


def accepts(system: BaseRuleSystem, state: EncounterState, command: Command) -> bool:
    """Whether ``decide`` accepts ``command`` in ``state`` (its checks all come before its first roll)."""
    try:
        system.decide(state, command, _ProbeDice())
    except Rejected:
        return False
    except _FirstRoll:
        return True
    return True


_UNIONS: dict[type, Any] = {}


def as_command(system: BaseRuleSystem, body: dict[str, Any], command_id: str) -> Command:
    """The command an option lists (its JSON, without ``command_id``), to send as ``command_id``."""
    union = _UNIONS.get(type(system))
    if union is None:
        union = _UNIONS[type(system)] = codec.command_union(system.command_types)
    return msgspec.convert({**body, "command_id": command_id}, union)
