"""What the RonD6 system plugs in from the non-turn rules (movement, objects,
areas, healing): their commands, events, settings, and the two dispatchers.

The main system (system.py) is expected to:

* add `AUX_COMMANDS` to its ``command_types`` and `AUX_EVENTS` to its
  ``event_types``;
* merge `AUX_DEFAULT_SETTINGS` into its ``default_settings`` (so an encounter
  may configure them; the aux code falls back to these defaults anyway);
* call ``decide_aux_command(self, decision, command, dice)`` from
  ``decide_action`` for a command in `AUX_COMMANDS`, and
  ``evolve_aux_event(self, state, event)`` from ``evolve_event`` for every
  event (it ignores events it does not own);
* provide ``spend_action(decision, combatant_id, kind="action") -> int`` and
  ``apply_damage_total(decision, target_id, damage_total, *, source, roll, rule)``.

Bookkeeping store: the aux rules keep a little state of their own (strenuous
rounds in a row, treated Wounds, structural damage of objects) in a dict field
``aux`` on the combatant and on the encounter state, **which the main state
classes are asked to declare**:

    class RonD6Combatant(Combatant):
        aux: dict[str, Any] = {}   # owned by the aux rules (rond6/aux.py)

    class RonD6State(EncounterState):
        aux: dict[str, Any] = {}   # owned by the aux rules (rond6/aux.py)

Until they exist `combatant_store`/`state_store` raise a clear error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from firelane.engine.core import Rejected
from firelane.engine.dice import Dice
from firelane.engine.systems.rond6 import areas, healing, movement, objects
from firelane.engine.systems.rond6.aux_schemas import (
    R6_AUX_COMMANDS,
    R6_AUX_EVENTS,
    R6AreaAttack,
    R6BreakObject,
    R6Heal,
    R6HoldBreath,
    R6Jump,
    R6Move,
)
from firelane.events.schemas import Command, Event

if TYPE_CHECKING:
    from firelane.engine.core import BaseRuleSystem, Decision
    from firelane.engine.state import EncounterState

AUX_COMMANDS: tuple[type[Command], ...] = R6_AUX_COMMANDS
AUX_EVENTS: tuple[type[Event], ...] = R6_AUX_EVENTS

AUX_DEFAULT_SETTINGS: dict[str, Any] = {
    **movement.MOVEMENT_DEFAULTS,
    **objects.OBJECT_DEFAULTS,
    **areas.AREA_DEFAULTS,
    **healing.HEALING_DEFAULTS,
}


def decide_aux_command(system: BaseRuleSystem, decision: Decision, command: Command, dice: Dice) -> None:
    """Validate and resolve one of `AUX_COMMANDS` (raises Rejected with a reason).

    A ValueError from the rules' parsers (a bad die code, ladder level,
    terrain or object in the encounter's data or settings) becomes a rejection
    naming the problem instead of an engine error.
    """
    try:
        _dispatch(system, decision, command, dice)
    except ValueError as error:
        raise Rejected(f"{type(command).__name__}: {error}") from None


def _dispatch(system: BaseRuleSystem, decision: Decision, command: Command, dice: Dice) -> None:
    if isinstance(command, (R6Move, R6Jump, R6HoldBreath)):
        movement.decide_movement_command(system, decision, command, dice)
    elif isinstance(command, R6BreakObject):
        objects.decide_break_object(system, decision, command, dice)
    elif isinstance(command, R6AreaAttack):
        areas.decide_area_attack(system, decision, command, dice)
    elif isinstance(command, R6Heal):
        healing.decide_heal(system, decision, command, dice)
    else:  # pragma: no cover - the main system only routes AUX_COMMANDS here
        raise TypeError(f"{type(command).__name__} is not an aux command")


def evolve_aux_event(system: BaseRuleSystem, state: EncounterState, event: Event) -> None:
    """Apply one of `AUX_EVENTS` (others are ignored). Never rolls, never validates."""
    handler = _EVOLVERS.get(type(event))
    if handler is not None:
        handler(state, event)


_EVOLVERS: dict[type, Any] = {
    **movement.EVOLVERS,
    **objects.EVOLVERS,
    **areas.EVOLVERS,
    **healing.EVOLVERS,
}
