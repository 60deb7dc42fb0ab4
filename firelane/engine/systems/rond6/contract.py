"""What the RonD6 modules above the bottom floor ask of the RonD6 system.

`system.RonD6System` implements it; the action, reaction, combat and AI
modules take the system as a `SystemContract` instead of importing the system
class, so no module imports the floor above it (the system imports them).
"""

from __future__ import annotations

from typing import Any, Protocol

from firelane.engine.core import Decision
from firelane.engine.dice import Dice
from firelane.engine.grid import Grid
from firelane.engine.state import Combatant, EncounterState
from firelane.engine.systems.rond6.state import RonD6Combatant, RonD6State, Weapon
from firelane.events.schemas import Command, EligibleReactor


class SystemContract(Protocol):
    # ------------------------------------------------------------ the shared engine (BaseRuleSystem)
    def require_combatant(self, state: EncounterState, combatant_id: str) -> Combatant: ...

    def open_window(
        self,
        decision: Decision,
        *,
        trigger: str,
        actor: str,
        reactors: list[EligibleReactor],
        continuation: dict[str, Any],
        rule: str = "",
    ) -> bool: ...

    def down(self, decision: Decision, combatant: str, reason: str, rule: str = "") -> None: ...

    # ------------------------------------------------------------ RonD6's own
    def combatant(self, state: RonD6State, combatant_id: str) -> RonD6Combatant: ...

    def weapon(self, combatant: RonD6Combatant, weapon_id: str) -> Weapon: ...

    def standard(self, state: RonD6State) -> int: ...

    def grid(self, state: RonD6State) -> Grid: ...

    def penalty_dice(self, combatant: RonD6Combatant) -> int: ...

    def action_unavailable(self, state: RonD6State, combatant: RonD6Combatant, kind: str = "action", count: int = 1) -> str | None: ...

    def action_limit(self, state: RonD6State, combatant: RonD6Combatant, fate_point: bool = False) -> int: ...

    def spend_action(self, decision: Decision, combatant_id: str, kind: str = "action", *, action: str = "action", rule: str = ...) -> int: ...

    def declare_actions(self, decision: Decision, combatant_id: str, count: int, *, fate_point: bool = False, off_turn: bool = False) -> None: ...

    def parse_command(self, payload: dict[str, Any]) -> Command: ...

    def check_command(self, state: RonD6State, actor: str, command: Command, *, interrupt: bool = False) -> None: ...

    def interrupting(self, state: RonD6State, actor: str) -> bool: ...

    def run_steps(self, decision: Decision, queue: list[dict[str, Any]], dice: Dice) -> None: ...
