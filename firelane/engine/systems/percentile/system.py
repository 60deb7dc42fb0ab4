"""What the two percentile systems' `BaseRuleSystem` classes share: the shape
of their setup checks, their sheets' checks, the dispatch of a turn's
actions, area previews, the end-of-turn expiry of a condition, and the gate
of their evolve (the event types it reads).

Each system fills in what is its own (class attributes and the ``check_*``
and ``evolve_folded`` hooks); the rules stay in its own folder.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import msgspec

from firelane.engine.core import BaseRuleSystem, Decision, Rejected, require
from firelane.engine.dice import Dice
from firelane.engine.state import Combatant, EncounterState
from firelane.engine.systems.percentile.setup import (
    PERCENT,
    SheetCheck,
    require_free_squares,
    require_square,
    settle_square_metres,
)
from firelane.events.options_schemas import AreaPreview
from firelane.events.schemas import CombatantSetup, Command, ConditionRemoved, EncounterSetup, Event

# (the system, the decision, the command, the dice): one action of a turn
ActionHandler = Callable[[Any, Decision, Any, Dice], None]
# (the state, the command) -> the template it would cover and whom it would catch
AreaPreviewer = Callable[[Any, Any], AreaPreview]


class PercentileSystem(BaseRuleSystem):
    # The sheet: its own weapon struct, the characteristics on a 0-100 scale,
    # and the pool a fight counts down (with its maximum, 0 on a sheet: the same).
    weapon_type: ClassVar[type] = object
    percent_fields: ClassVar[tuple[str, ...]] = ()
    pool_field: ClassVar[str] = ""
    pool_max_field: ClassVar[str] = ""
    # A turn's actions: command type -> what does it (actions.py).
    action_handlers: ClassVar[Mapping[type[Command], ActionHandler]] = {}
    # Area commands -> their preview (the system's previewable tags, as types).
    area_previewers: ClassVar[Mapping[type[Command], AreaPreviewer]] = {}
    # The event types evolve_folded reads (each branch of its chain): the rest
    # change nothing of the system's own, and a fold need not even decode them.
    folded_events: ClassVar[tuple[type[Event], ...]] = ()
    # The system's sample data (percentile/data.py): the catalogue sheets may name entries of.
    sample: ClassVar[Any] = None
    # The fields a person writes on a sheet (its form: forms.py), listed when a sheet names an unknown one.
    sheet_fields: ClassVar[tuple[str, ...]] = ()

    def resolve_setup(self, setup: EncounterSetup) -> EncounterSetup:
        """Spell out the catalogue entries sheets name (``"armour": "flak_vest"``,
        ``"weapons": ["lasgun"]``), so the log carries the records themselves."""
        if self.sample is None:
            return setup
        combatants = []
        for combatant in setup.combatants:
            try:
                sheet = self.sample.resolve_sheet(combatant.sheet)
            except ValueError as exc:
                raise Rejected(f"combatant {combatant.id!r}: {exc}") from None
            combatants.append(combatant if sheet is combatant.sheet else msgspec.structs.replace(combatant, sheet=sheet))
        return msgspec.structs.replace(setup, combatants=combatants)

    # ------------------------------------------------------------ setup

    def settings_for(self, setup: EncounterSetup) -> dict[str, Any]:
        settings = super().settings_for(setup)
        self.check_settings(settings, setup)
        settle_square_metres(settings, setup)
        require_free_squares(setup)
        return settings

    def check_settings(self, settings: dict[str, Any], setup: EncounterSetup) -> None:
        """Raise Rejected naming a setting the system cannot play with (``settings`` may be completed in place)."""

    def build_combatant(self, setup: CombatantSetup, settings: dict[str, Any]) -> Combatant:
        """The sheet, checked in full, one line naming the field: known fields
        of the right types, the characteristics 0-100, a pool of at least 1
        (its maximum at least the pool), then the system's own checks
        (``check_sheet``), weapons with unique names each checked by
        ``check_weapon``, and ``check_sheet_after_weapons``."""
        check = SheetCheck(setup, self.sheet_fields)
        combatant: Any = check.convert(self.combatant_type, {"weapons": self.weapon_type})
        require_square(combatant, setup)
        for field in self.percent_fields:
            check.between(field, getattr(combatant, field), *PERCENT)
        pool, most = self.pool_field, self.pool_max_field
        check.at_least(pool, getattr(combatant, pool), 1)
        if getattr(combatant, most) != 0:  # 0: the same as the pool
            check.at_least(most, getattr(combatant, most), getattr(combatant, pool))
        self.check_sheet(check, combatant)
        check.unique_names("weapons", [weapon.name for weapon in combatant.weapons])
        for index, weapon in enumerate(combatant.weapons):
            self.check_weapon(check, f"weapons[{index}]", weapon)
        self.check_sheet_after_weapons(check, combatant)
        if getattr(combatant, most) <= 0:
            setattr(combatant, most, getattr(combatant, pool))
        return combatant  # type: ignore[no-any-return]

    def check_sheet(self, check: SheetCheck, combatant: Any) -> None:
        """The system's own sheet checks before the weapons' (protection, say)."""

    def check_weapon(self, check: SheetCheck, field: str, weapon: Any) -> None:
        """One weapon of the sheet, named ``field`` (``weapons[2]``) in the refusal."""

    def check_sheet_after_weapons(self, check: SheetCheck, combatant: Any) -> None:
        """Sheet fields that name the weapons (jammed ones, attacks made)."""

    # ------------------------------------------------------------ turns and actions

    def decide_action(self, decision: Decision, command: Command, dice: Dice) -> None:
        actor = self.require_turn(decision.state, command.actor)
        require(not actor.out_of_fight, f"{actor.id} is out of the fight")
        handler = self.action_handlers.get(type(command))
        if handler is None:
            super().decide_action(decision, command, dice)
        else:
            handler(self, decision, command, dice)

    def expire_at_turn_end(self, decision: Decision, combatant: str, condition: str, reason: str, rule: str) -> None:
        """Remove ``condition`` from ``combatant`` if it lasts until the end of its own turn."""
        if decision.state.combatants[combatant].conditions.get(condition) == f"end_of_turn:{combatant}":
            decision.emit(ConditionRemoved(combatant=combatant, condition=condition, reason=reason, rule=rule))

    def preview_area(self, state: EncounterState, command: Command) -> AreaPreview:
        previewer = self.area_previewers.get(type(command))
        require(previewer is not None, f"{type(command).__name__} has no area")
        self.require_free_to_act(state, command.actor)
        return previewer(state, command)  # type: ignore[misc]

    def check_percent_change(self, field: str, value: Any) -> bool:
        """For the GM's adjustments: check a characteristic's 0-100 range; False when ``field`` is none."""
        if field not in self.percent_fields:
            return False
        require(PERCENT[0] <= value <= PERCENT[1], f"{field} must be between 0 and 100, not {value}")
        return True

    # ------------------------------------------------------------ evolve

    def evolve_event_reads(self, event_type: type[Event]) -> bool:
        return issubclass(event_type, self.folded_events)

    def evolve_event(self, state: EncounterState, event: Event) -> None:
        if isinstance(event, self.folded_events):  # one tuple for this gate and evolve_event_reads
            self.evolve_folded(state, event)

    def evolve_folded(self, state: EncounterState, event: Any) -> None:
        """Fold one event of ``folded_events`` into the system's own state."""
