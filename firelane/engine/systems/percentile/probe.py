"""Whether the engine would accept a command, without rolling anything: the
options of an action are the candidates this probe lets through, so a listed
command is one `decide` accepts (issue 9)."""

from __future__ import annotations

from firelane.engine.core import BaseRuleSystem, Rejected
from firelane.engine.dice import Dice
from firelane.engine.state import EncounterState
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
