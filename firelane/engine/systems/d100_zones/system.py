"""The d100-zones rule system on the shared `BaseRuleSystem`.

See the package docstring for the rules and house defaults.
"""

from __future__ import annotations

from typing import Any, ClassVar

from firelane.engine.core import BaseRuleSystem, Decision, Rejected, SettingRange, TurnOptions, require
from firelane.engine.dice import Dice
from firelane.engine.state import Combatant, EncounterState, ReactionWindow
from firelane.engine.systems.d100_zones import actions, ai, options, reactions, rules
from firelane.engine.systems.d100_zones.state import MELEE, RANGED, UNARMED, D100ZCombatant, D100ZState, ZWeapon
from firelane.engine.systems.percentile import PERCENT, SheetCheck, parse_damage, require_free_squares, require_square, settle_square_metres
from firelane.events.d100_zones_schemas import (
    D100Z_COMMANDS,
    D100Z_EVENTS,
    D100ZAimedShot,
    D100ZAttack,
    D100ZFirstAid,
    D100ZFirstAidGiven,
    D100ZMove,
    D100ZRevived,
    D100ZSuppressiveFire,
)
from firelane.events.options_schemas import AreaPreview, ReactionOption
from firelane.events.schemas import (
    ActionTaken,
    AttackResolved,
    ClaimReaction,
    CombatantSetup,
    Command,
    ConditionApplied,
    ConditionRemoved,
    DamageDealt,
    EncounterSetup,
    Event,
    InitiativeEntry,
    InitiativeRolled,
    Modifier,
    Moved,
    OrderedClaim,
    Roll,
    StateAdjusted,
    TurnStarted,
)

# D100Z-16: every optional rule of the text, on by default (this engine is for tactical play).
DEFAULT_OPTIONS: dict[str, bool] = {
    "str_bonus": True,         # D100Z-08
    "cover": True,             # D100Z-09
    "flanking": True,          # D100Z-10
    "multi_attack": True,      # D100Z-11
    "aimed_shot": True,        # D100Z-12
    "suppressive_fire": True,  # D100Z-13
}

HOUSE_DEFAULTS: dict[str, Any] = {
    # Grid scale: a square is 2 m, so Engaged (0-2 m) is the eight neighbouring squares.
    # A terrain measured in metres sets it from its square_size unless given here.
    "square_metres": 2.0,
    # D100Z-16: the optional rules, switched per encounter: {"options": {"cover": false, ...}}.
    "options": DEFAULT_OPTIONS,
    # D100Z-09: cover modifies the attack roll's target ("attack": soft -10, hard -20),
    # or, read as the table's "Dodge Modifier", helps the defender's dodge ("dodge": +10/+20).
    "cover_applies_to": "attack",
    # D100Z-10: allies flank when the angle between them, seen from the enemy, is at least this.
    "flanking_min_angle": 135,
    # Fists when a combatant has no unarmed weapon of its own (D100Z-07 adds the Brawling bonus).
    "unarmed_damage": "1d4",
    # D100Z-13 "All creatures in that zone": the shooter's allies there roll DEX too.
    # House rule: false spares them.
    "suppressive_fire_hits_allies": True,
    # D100Z-09/13: heavy cover "cannot be targeted directly", and Suppressive Fire targets
    # no one directly, so those behind it roll DEX too. House rule: true shields them.
    "heavy_cover_shields_from_suppressive_fire": False,
    # At 0 HP a combatant is unconscious and dying: it loses this many HP at the start of
    # each round (0: never) and is dead at death_at_hp; first aid's critical stabilises it.
    "dying_hp_loss_per_round": 1,
    "death_at_hp": -10,
}


class D100ZonesSystem(BaseRuleSystem):
    name = "d100-zones"
    title = "d100 zones"
    command_types = D100Z_COMMANDS
    event_types = D100Z_EVENTS
    state_type = D100ZState
    combatant_type = D100ZCombatant
    reaction_priority: ClassVar[dict[str, int]] = {actions.FREE_ATTACK: 0}  # then initiative order (D100Z-15)
    reaction_resets = "round"
    initiative_each_round = True  # D100Z-01
    previewable: ClassVar[frozenset[str]] = frozenset({"D100ZSuppressiveFire"})
    default_settings: ClassVar[dict[str, Any]] = HOUSE_DEFAULTS
    setting_ranges: ClassVar[dict[str, SettingRange]] = {
        "square_metres": SettingRange(0.01, 1000, whole=False),
        "flanking_min_angle": SettingRange(0, 180, whole=False),
        "dying_hp_loss_per_round": SettingRange(0, 1000),
        "death_at_hp": SettingRange(-10_000, 0),
    }

    # ------------------------------------------------------------ setup

    def settings_for(self, setup: EncounterSetup) -> dict[str, Any]:
        settings = super().settings_for(setup)
        options = setup.settings.get("options", {})
        if not isinstance(options, dict):
            raise Rejected("settings 'options' must be an object of optional-rule switches (D100Z-16)")
        unknown = sorted(set(options) - set(DEFAULT_OPTIONS))
        if unknown:
            raise Rejected(f"unknown optional rules: {', '.join(unknown)}; known: {', '.join(DEFAULT_OPTIONS)} (D100Z-16)")
        for key, value in options.items():
            if not isinstance(value, bool):
                raise Rejected(f"option {key!r} must be true or false, not {value!r} (D100Z-16)")
        settings["options"] = {**DEFAULT_OPTIONS, **options}
        for flag in ("suppressive_fire_hits_allies", "heavy_cover_shields_from_suppressive_fire"):
            if not isinstance(settings[flag], bool):
                raise Rejected(f"setting {flag} must be true or false, not {settings[flag]!r}")
        if settings["cover_applies_to"] not in ("attack", "dodge"):
            raise Rejected(f"cover_applies_to must be 'attack' or 'dodge', not {settings['cover_applies_to']!r}")
        try:
            parse_damage(str(settings["unarmed_damage"]))
        except ValueError as exc:
            raise Rejected(f"unarmed_damage: {exc}") from None
        settle_square_metres(settings, setup)
        require_free_squares(setup)
        return settings

    def build_combatant(self, setup: CombatantSetup, settings: dict[str, Any]) -> Combatant:
        """The sheet, checked in full: known fields of the right types,
        attributes and skills 0-100 (SPD too), at least 1 HP, no negative DR,
        weapons with unique names, a known kind, one or two hands, a damage code
        that parses and a range. One line names the field."""
        check = SheetCheck(setup)
        combatant: D100ZCombatant = check.convert(D100ZCombatant, {"weapons": ZWeapon})
        require_square(combatant, setup)
        for field in ("strength", "dexterity", "intelligence", "speed", "melee", "ranged", "brawling", "medicine"):
            check.between(field, getattr(combatant, field), *PERCENT)
        check.at_least("hp", combatant.hp, 1)
        if combatant.max_hp != 0:  # 0: the same as hp
            check.at_least("max_hp", combatant.max_hp, combatant.hp)
        check.at_least("dr", combatant.dr, 0)
        check.unique_names("weapons", [weapon.name for weapon in combatant.weapons])
        for index, weapon in enumerate(combatant.weapons):
            field = f"weapons[{index}]"
            check.one_of(f"{field}.kind", weapon.kind, (MELEE, RANGED, UNARMED))
            check.one_of(f"{field}.hands", weapon.hands, (1, 2))
            check.damage_code(f"{field}.damage", weapon.damage)
            check.above(f"{field}.range_m", weapon.range_m, 0)
        check.at_least("moved_m", combatant.moved_m, 0)
        check.names_weapons("attacks", combatant.attacks, [*(w.name for w in combatant.weapons), "unarmed"])
        if combatant.max_hp <= 0:
            combatant.max_hp = combatant.hp
        return combatant

    # ------------------------------------------------------------ rounds and turns

    def roll_initiative(self, decision: Decision, dice: Dice) -> InitiativeRolled:
        """D100Z-01: 1d100 + SPD each round for everyone standing; highest first; natural 90+ last."""
        state: D100ZState = decision.state  # type: ignore[assignment]
        entries = []
        for combatant_id in sorted(state.combatants):
            combatant = state.combatants[combatant_id]
            if combatant.out_of_fight:
                continue
            die = dice.roll(100)
            last = die.face >= rules.INITIATIVE_LAST_AT
            roll = Roll(
                purpose="initiative",
                rule="D100Z-01",
                dice=[die],
                modifiers=[Modifier(source="SPD", rule="D100Z-01", value=combatant.speed)],
                total=die.face + combatant.speed,
                notes=["natural 90+: acts last (D100Z-01)"] if last else [],
                details={"acts_last": last},
            )
            entries.append(InitiativeEntry(combatant=combatant_id, total=roll.total, roll=roll, tiebreak=[combatant.speed]))
        speeds = {cid: c.speed for cid, c in state.combatants.items()}
        return InitiativeRolled(round=state.round, entries=entries, order=rules.initiative_order(entries, speeds), rule="D100Z-01")

    def on_round_start(self, decision: Decision, dice: Dice) -> None:
        actions.bleed(decision)

    def on_turn_end(self, decision: Decision, combatant: str, dice: Dice) -> None:
        me = decision.state.combatants[combatant]
        if me.conditions.get(actions.SUPPRESSED) == f"end_of_turn:{combatant}":
            decision.emit(ConditionRemoved(combatant=combatant, condition=actions.SUPPRESSED, reason="end of its turn", rule="D100Z-13"))

    # ------------------------------------------------------------ actions

    def decide_action(self, decision: Decision, command: Command, dice: Dice) -> None:
        actor = self.require_turn(decision.state, command.actor)
        require(not actor.out_of_fight, f"{actor.id} is out of the fight")
        if isinstance(command, D100ZMove):
            actions.move(self, decision, command, dice)
        elif isinstance(command, D100ZAttack):
            actions.attack(self, decision, command, dice)
        elif isinstance(command, D100ZAimedShot):
            actions.aimed_shot(self, decision, command, dice)
        elif isinstance(command, D100ZSuppressiveFire):
            actions.suppressive_fire(self, decision, command, dice)
        elif isinstance(command, D100ZFirstAid):
            actions.first_aid(self, decision, command, dice)
        else:
            super().decide_action(decision, command, dice)

    # ------------------------------------------------------------ reactions

    def validate_claim(self, state: EncounterState, window: ReactionWindow, claim: ClaimReaction) -> None:
        weapon = claim.options.get("weapon")
        if weapon is not None:
            reactions.free_attack_weapon(state, state.combatants[claim.actor], str(weapon))  # type: ignore[arg-type]

    def resolve_reaction(self, decision: Decision, window: ReactionWindow, claim: OrderedClaim, dice: Dice) -> str | None:
        return reactions.resolve_free_attack(decision, window.actor, claim.combatant, claim.options, dice)

    def after_window(self, decision: Decision, window: ReactionWindow, dice: Dice) -> None:
        plan = window.continuation.get("move")
        if plan is not None and not decision.state.combatants[window.actor].out_of_fight:
            actions.finish_move(decision, window.actor, plan)

    # ------------------------------------------------------------ evolve

    def evolve_event_reads(self, event_type: type[Event]) -> bool:
        return issubclass(event_type, _FOLDED_EVENTS)

    def evolve_event(self, state: EncounterState, event: Event) -> None:
        if not isinstance(event, _FOLDED_EVENTS):
            return  # one tuple for this gate and evolve_event_reads: a branch added below needs its type there
        combatants: dict[str, D100ZCombatant] = state.combatants  # type: ignore[assignment]
        if isinstance(event, TurnStarted):
            me = combatants[event.combatant]
            me.action_used, me.action_spent_on, me.moved_m, me.attacks, me.aimed_this_turn = False, "", 0.0, [], False
        elif isinstance(event, ActionTaken):
            me = combatants[event.combatant]
            if event.slot == "action":
                me.action_used, me.action_spent_on = True, event.action
            if event.action in ("attack", "second_attack"):
                me.attacks.append(str(event.details["weapon"]))
            elif event.action == "aimed_shot":
                me.aimed_this_turn = True
                me.aim_target = str(event.details["target"])
        elif isinstance(event, Moved):
            combatants[event.combatant].moved_m += event.cost
        elif isinstance(event, AttackResolved) and event.roll.details.get("complication"):
            zones: D100ZState = state  # type: ignore[assignment]
            number = len(zones.complications) + 1
            zones.complications.append({
                "id": f"complication-{number}", "attacker": event.attacker, "target": event.target,
                "weapon": event.weapon, "face": event.roll.total, "round": state.round})
        elif isinstance(event, DamageDealt) and event.remaining is not None:
            combatants[event.target].hp = event.remaining
        elif isinstance(event, StateAdjusted):
            me = combatants[event.combatant]
            for field, value in event.changes.items():
                if field == "hp":
                    me.hp = int(value)
                elif field == "aim_target":
                    me.aim_target = value
        elif isinstance(event, ConditionApplied) and event.condition == actions.SUPPRESSED:
            combatants[event.combatant].suppressed = dict(event.details)
        elif isinstance(event, ConditionRemoved) and event.condition == actions.SUPPRESSED:
            combatants[event.combatant].suppressed = {}
        elif isinstance(event, D100ZFirstAidGiven):
            patient = combatants[event.target]
            patient.first_aid_received = True
            patient.hp = event.hp
        elif isinstance(event, D100ZRevived):
            revived = combatants[event.combatant]
            revived.out_of_fight = False
            revived.hp = event.hp

    # ------------------------------------------------------------ what a combatant may do now (issue 9)

    def turn_options(self, state: EncounterState, combatant: str) -> TurnOptions:
        return options.turn_options(self, state, combatant)  # type: ignore[arg-type]

    def reaction_options(self, state: EncounterState, window: ReactionWindow, combatant: str) -> list[ReactionOption]:
        return options.reaction_options(state, window, combatant)  # type: ignore[arg-type]

    def preview_area(self, state: EncounterState, command: Command) -> AreaPreview:
        require(isinstance(command, D100ZSuppressiveFire), f"{type(command).__name__} has no area")
        self.require_free_to_act(state, command.actor)
        return actions.suppressive_fire_area(state, command)  # type: ignore[arg-type]

    # ------------------------------------------------------------ the GM's calls and adjustments

    def gm_calls(self, state: EncounterState) -> dict[str, str]:
        """D100Z-04: each 90+ attack roll not yet ruled on ("Your GM decides the consequence")."""
        zones: D100ZState = state  # type: ignore[assignment]
        return {
            c["id"]: (f"{c['attacker']} rolled {c['face']} attacking {c['target']} with {c['weapon']} (round {c['round']}): "
                      "an automatic miss, and something goes wrong; the GM decides the consequence (D100Z-04)")
            for c in zones.complications if c["id"] not in state.gm_rulings
        }

    def settle_gm_call(self, decision: Decision, call: str, ruling: str, dice: Dice) -> None:
        """The text names no effect for a 90+: the GMRuled event records the ruling;
        any change it makes to a combatant is a GMAdjust (docs/systems/d100-zones.md)."""

    def check_gm_change(self, state: EncounterState, combatant: Combatant, field: str, value: Any) -> None:
        """Ranges of the sheet fields the GM may set (docs/systems/d100-zones.md)."""
        me: D100ZCombatant = combatant  # type: ignore[assignment]
        if field in ("strength", "dexterity", "intelligence", "speed", "melee", "ranged", "brawling", "medicine"):
            require(PERCENT[0] <= value <= PERCENT[1], f"{field} must be between 0 and 100, not {value}")
        elif field == "hp":
            low = int(state.settings["death_at_hp"])
            require(low <= value <= me.max_hp, f"hp must be between {low} (death) and {me.id}'s max_hp {me.max_hp}, not {value}")
        elif field == "max_hp":
            require(value >= max(1, me.hp), f"max_hp must be at least 1 and at least hp {me.hp}, not {value}")
        elif field == "dr":
            require(value >= 0, f"dr must be 0 or more, not {value}")
        elif field == "moved_m":
            require(0 <= value <= rules.MAX_MOVE_M, f"moved_m must be between 0 and {rules.MAX_MOVE_M:g}, not {value}")
        elif field == "attacks":
            names = [*(w.name for w in me.weapons), "unarmed"]
            require(len(value) <= 2 and all(n in names for n in value),
                    f"attacks lists at most two of {me.id}'s weapons ({', '.join(names)}), not {value}")
        elif field == "aim_target":
            require(value is None or value in state.combatants, f"aim_target must be a combatant or null, not {value!r}")

    # ------------------------------------------------------------ AI

    def choose_command(self, state: EncounterState, combatant: str) -> Command | None:
        return ai.choose(self, state, combatant)  # type: ignore[arg-type]


SYSTEM = D100ZonesSystem()


# The event types evolve_event reads (each branch of its chain): the rest
# change nothing of this system's own, and a fold need not even decode them.
_FOLDED_EVENTS: tuple[type, ...] = (
    TurnStarted, ActionTaken, Moved, AttackResolved, DamageDealt, StateAdjusted, ConditionApplied,
    ConditionRemoved, D100ZFirstAidGiven, D100ZRevived)
