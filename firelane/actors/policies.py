"""How a combatant decides: the AI, a script, or a human through a frontend.

A policy is asked only when the encounter awaits its combatant and the actor
has caught up with the log, so its answer is a function of the state alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import msgspec

from firelane.engine.core import BaseRuleSystem, next_command_id
from firelane.engine.simulate import fallback_command
from firelane.engine.state import EncounterState
from firelane.events.schemas import Command


class Policy(Protocol):
    def choose(self, state: EncounterState, combatant: str, *, last_rejected: bool) -> Command | None: ...


class AIPolicy:
    """The rule system's deterministic AI; after a rejection it passes or ends its turn."""

    def __init__(self, system: BaseRuleSystem) -> None:
        self.system = system

    def choose(self, state: EncounterState, combatant: str, *, last_rejected: bool) -> Command | None:
        if last_rejected:
            return fallback_command(state, combatant)
        return self.system.choose_command(state, combatant) or fallback_command(state, combatant)


class ScriptedPolicy:
    """Plays a fixed list of commands (as JSON-like dicts without ID and actor),
    one each time it is asked; then passes or ends turns.

    ``{"type": "Attack", "target": "b", ...}`` becomes the system's Attack
    command with a deterministic ID and this combatant as actor.
    """

    def __init__(self, system: BaseRuleSystem, script: Sequence[dict[str, Any]]) -> None:
        from firelane.events.codec import command_union

        self._union = command_union(system.command_types)
        self._script = list(script)

    def choose(self, state: EncounterState, combatant: str, *, last_rejected: bool) -> Command | None:
        if not self._script:
            return fallback_command(state, combatant)
        step = self._script.pop(0)
        return msgspec.convert(
            {**step, "command_id": next_command_id(state, combatant), "actor": combatant}, self._union
        )


class HumanPolicy:
    """A person decides through a frontend that submits commands to the inbox."""

    def choose(self, state: EncounterState, combatant: str, *, last_rejected: bool) -> Command | None:
        return None
