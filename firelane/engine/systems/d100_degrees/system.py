"""The d100-degrees rule system on the shared `BaseRuleSystem`.

See the package docstring for the rules and house defaults.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from firelane.engine.core import Decision, Rejected, SettingRange, TurnOptions, require
from firelane.engine.dice import Dice
from firelane.engine.state import Combatant, EncounterState, ReactionWindow
from firelane.engine.systems.d100_degrees.orders import ORDERS
from firelane.engine.systems.d100_degrees import actions, ai, options, reactions, rules
from firelane.engine.systems.d100_degrees.state import D100DCombatant, D100DState, Weapon
from firelane.engine.systems.percentile import SheetCheck
from firelane.engine.systems.percentile.system import PercentileSystem
from firelane.engine.systems.d100_degrees.schemas import D100D_COMMANDS, D100D_EVENTS, D100DSuppressingFire
from firelane.engine.systems.d100_degrees import narration
from firelane.engine.systems.d100_degrees.gm_fields import GM_FIELDS
from firelane.engine.systems.d100_degrees.data import SAMPLE
from firelane.engine.systems.d100_degrees.forms import SHEET_FIELDS
from firelane.engine.systems.d100_degrees.labels import LABELS
from firelane.events.options_schemas import ReactionOption
from firelane.events.schemas import (
    NoReactionOptions,
    ReactionOptions,
    ActionTaken,
    Command,
    ConditionRemoved,
    DamageDealt,
    EncounterSetup,
    Event,
    InitiativeEntry,
    InitiativeRolled,
    Modifier,
    OrderedClaim,
    Roll,
    StateAdjusted,
    TurnStarted,
)

HOUSE_DEFAULTS: dict[str, Any] = {
    # Grid scale; a terrain measured in metres ("unit": "m") sets it from its square_size.
    "square_metres": 1.0,
    # D100D-01: degrees of success = 1 + target tens digit - roll tens digit.
    "degrees_formula": "tens_digits",
    # D100D-04 (from the text): each link of a multi-target chain within 2 m of the previous one.
    "chain_step_metres": 2.0,
    # Movement (the text has none): a Half Action moves Agility Bonus x this many metres...
    "half_move_metres_per_agility_bonus": 1.0,
    # ...but never less than this.
    "minimum_half_move_metres": 1.0,
    # D100D-08: clearing a jam costs a Full Action ("full") or a Half Action ("half").
    "clear_jam_action": "full",
    # D100D-08: a shot that jams the weapon misses even if the test succeeded.
    "jam_misses": True,
    # D100D-09 Pinned: attack tests at this modifier; no Full Actions; lasts until the end of the next own turn.
    "pinned_attack_penalty": -20,
    "pinned_blocks_full_actions": True,
    # Armour points are subtracted from each hit's damage (not below 0).
    "armour_reduces_damage": True,
    # D100D-09: the killzone catches only the shooter's enemies unless this is true.
    "suppressing_fire_hits_allies": False,
    # Initiative (the text has none): 1dN + Agility Bonus, once at the start; ties: higher Agility, then ID.
    "initiative_die": 10,
}


class D100DegreesSystem(PercentileSystem):
    name = "d100-degrees"
    title = "d100 degrees"
    command_types = D100D_COMMANDS
    event_types = D100D_EVENTS
    state_type = D100DState
    combatant_type = D100DCombatant
    reaction_priority: ClassVar[dict[str, int]] = {rules.PARRY: 0, rules.DODGE: 0}
    reaction_options_types: ClassVar[Mapping[str, type[ReactionOptions]]] = {
        rules.PARRY: NoReactionOptions, rules.DODGE: NoReactionOptions}
    reaction_resets = "round"  # house default: one Evasion reaction per round
    initiative_each_round = False
    previewable: ClassVar[frozenset[str]] = frozenset({"D100DSuppressingFire"})
    sentences = narration.SENTENCES
    shared_event_sentences = narration.SHARED_EVENT_SENTENCES
    labels = LABELS
    orders = ORDERS  # the standing orders it takes (orders.py)
    sample = SAMPLE  # the catalogue sheets may name (resolve_setup)
    sheet_fields = tuple(f.path for f in SHEET_FIELDS if "." not in f.path)  # listed in a refusal
    gm_field_specs = GM_FIELDS  # the GM's form, and what GMAdjust checks (gm_fields.py)
    default_settings: ClassVar[dict[str, Any]] = HOUSE_DEFAULTS
    # The sheet (docs/systems/d100-degrees.md): characteristics 0-100, at least 1 wound.
    weapon_type = Weapon
    percent_fields = ("weapon_skill", "ballistic_skill", "agility", "willpower")
    pool_field, pool_max_field = "wounds", "max_wounds"
    folded_events = (TurnStarted, ActionTaken, DamageDealt, StateAdjusted)  # what evolve_folded reads
    action_handlers = actions.ACTIONS
    area_previewers = {D100DSuppressingFire: actions.suppressing_fire_area}
    setting_ranges: ClassVar[dict[str, SettingRange]] = {
        "square_metres": SettingRange(0.01, 1000, whole=False),
        "chain_step_metres": SettingRange(0.01, 1000, whole=False),
        "half_move_metres_per_agility_bonus": SettingRange(0, 1000, whole=False),
        "minimum_half_move_metres": SettingRange(0, 1000, whole=False),
        "pinned_attack_penalty": SettingRange(-100, 0),
        "initiative_die": SettingRange(2, 1000),
    }

    # ------------------------------------------------------------ setup

    def check_settings(self, settings: dict[str, Any], setup: EncounterSetup) -> None:
        if settings["degrees_formula"] not in rules.DEGREE_FORMULAS:
            raise Rejected(f"degrees_formula must be one of {', '.join(rules.DEGREE_FORMULAS)}, not {settings['degrees_formula']!r}")
        if settings["clear_jam_action"] not in (rules.HALF, rules.FULL):
            raise Rejected(f"clear_jam_action must be 'half' or 'full', not {settings['clear_jam_action']!r}")

    def check_sheet(self, check: SheetCheck, combatant: D100DCombatant) -> None:
        check.at_least("armour", combatant.armour, 0)

    def check_weapon(self, check: SheetCheck, field: str, weapon: Weapon) -> None:
        """A known kind, a damage code that parses, a range, a RoF of at least 1."""
        check.one_of(f"{field}.kind", weapon.kind, ("melee", "ranged"))
        check.damage_code(f"{field}.damage", weapon.damage)
        check.at_least(f"{field}.multiplier", weapon.multiplier, 0)
        check.above(f"{field}.range_m", weapon.range_m, 0)
        check.at_least(f"{field}.rof", weapon.rof, 1)

    def check_sheet_after_weapons(self, check: SheetCheck, combatant: D100DCombatant) -> None:
        check.names_weapons("jammed", combatant.jammed, [w.name for w in combatant.weapons if w.kind == "ranged"])
        check.between("half_actions_used", combatant.half_actions_used, 0, 2)

    # ------------------------------------------------------------ rounds and turns

    def roll_initiative(self, decision: Decision, dice: Dice) -> InitiativeRolled:
        """House default: 1d10 + Agility Bonus; ties go to higher Agility, then ID."""
        state: D100DState = decision.state  # type: ignore[assignment]
        sides = int(state.settings["initiative_die"])
        entries = []
        for combatant_id in sorted(state.combatants):
            combatant = state.combatants[combatant_id]
            die = dice.roll(sides)
            bonus = rules.agility_bonus(combatant.agility)
            roll = Roll(
                purpose="initiative",
                rule="house default: initiative",
                dice=[die],
                modifiers=[Modifier(source="Agility Bonus", rule="house default: initiative", value=bonus)],
                total=die.face + bonus,
            )
            entries.append(InitiativeEntry(combatant=combatant_id, total=roll.total, roll=roll, tiebreak=[combatant.agility]))
        order = [e.combatant for e in sorted(entries, key=lambda e: (-e.total, -e.tiebreak[0], e.combatant))]
        return InitiativeRolled(round=state.round, entries=entries, order=order, rule="house default: initiative")

    def on_turn_start(self, decision: Decision, combatant: str, dice: Dice) -> None:
        me = decision.state.combatants[combatant]
        if me.conditions.get(rules.ALL_OUT) == f"start_of_turn:{combatant}":
            decision.emit(ConditionRemoved(combatant=combatant, condition=rules.ALL_OUT, reason="its next turn began", rule="D100D-05"))

    def on_turn_end(self, decision: Decision, combatant: str, dice: Dice) -> None:
        self.expire_at_turn_end(decision, combatant, rules.PINNED, "end of its turn (house default)", "D100D-09")

    # ------------------------------------------------------------ reactions

    def resolve_reaction(self, decision: Decision, window: ReactionWindow, claim: OrderedClaim, dice: Dice) -> str | None:
        return reactions.resolve_evasion(decision, window, claim, dice)

    def after_window(self, decision: Decision, window: ReactionWindow, dice: Dice) -> None:
        attack = window.continuation.get("attack")
        if attack is not None:
            actions.finish_attack(decision, attack, reactions.evaded_in(decision, window.window), dice)

    # ------------------------------------------------------------ evolve

    def evolve_folded(self, state: EncounterState, event: Event) -> None:
        combatants: dict[str, D100DCombatant] = state.combatants  # type: ignore[assignment]
        if isinstance(event, TurnStarted):
            combatants[event.combatant].half_actions_used = 0
        elif isinstance(event, ActionTaken):
            if event.slot == rules.HALF:
                combatants[event.combatant].half_actions_used += 1
            elif event.slot == rules.FULL:
                combatants[event.combatant].half_actions_used += 2
        elif isinstance(event, DamageDealt) and event.remaining is not None:
            combatants[event.target].wounds = event.remaining
        elif isinstance(event, StateAdjusted):
            target = combatants[event.combatant]
            for field, value in event.changes.items():
                if field == "jammed":
                    target.jammed = list(value)
                elif field in ("wounds", "armour"):
                    setattr(target, field, int(value))

    # ------------------------------------------------------------ what a combatant may do now (issue 9)

    def attack_reach_squares(self, state: EncounterState, me: Any) -> float | None:
        """The farthest any weapon carried attacks, in squares (`untargetable`)."""
        ranges = [float(w.range_m) for w in me.weapons]
        return max(ranges) / float(state.settings["square_metres"]) if ranges else None

    def turn_options(self, state: EncounterState, combatant: str) -> TurnOptions:
        return options.turn_options(state, combatant)  # type: ignore[arg-type]

    def reaction_options(self, state: EncounterState, window: ReactionWindow, combatant: str) -> list[ReactionOption]:
        return options.reaction_options(state, window, combatant)  # type: ignore[arg-type]

    # ------------------------------------------------------------ the GM's adjustments

    def check_gm_change(self, state: EncounterState, combatant: Combatant, field: str, value: Any) -> None:
        """Ranges of the sheet fields the GM may set (docs/systems/d100-degrees.md)."""
        me: D100DCombatant = combatant  # type: ignore[assignment]
        if self.check_percent_change(field, value):
            return
        if field == "wounds":
            require(0 <= value <= me.max_wounds, f"wounds must be between 0 and {me.id}'s max_wounds {me.max_wounds}, not {value}")
        elif field == "max_wounds":
            require(value >= max(1, me.wounds), f"max_wounds must be at least 1 and at least wounds {me.wounds}, not {value}")
        elif field == "armour":
            require(value >= 0, f"armour must be 0 or more, not {value}")
        elif field == "half_actions_used":
            require(0 <= value <= 2, f"half_actions_used must be 0, 1 or 2 (D100D-02), not {value}")
        elif field == "jammed":
            guns = [w.name for w in me.weapons if w.kind == "ranged"]
            require(all(name in guns for name in value), f"jammed names {me.id}'s ranged weapons ({', '.join(guns) or 'none'}), not {value}")
        elif field == "weapons":
            raise Rejected("weapons are part of the sheet: the GM cannot swap them mid-fight")

    # ------------------------------------------------------------ AI

    def choose_command(self, state: EncounterState, combatant: str) -> Command | None:
        return ai.choose(self, state, combatant)  # type: ignore[arg-type]


SYSTEM = D100DegreesSystem()


