"""The d100-zones rule system on the shared `BaseRuleSystem`.

See the package docstring for the rules and house defaults.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from firelane.engine.core import Decision, Rejected, SettingRange, TurnOptions, require
from firelane.engine.dice import Dice
from firelane.engine.grid import Grid
from firelane.engine.state import Combatant, EncounterState, ReactionWindow
from firelane.engine.systems.d100_zones.orders import ORDERS
from firelane.engine.systems.d100_zones import actions, ai, options, reactions, rules
from firelane.engine.systems.d100_zones.state import MELEE, RANGED, UNARMED, D100ZCombatant, D100ZState, ZWeapon
from firelane.engine.systems.percentile import SheetCheck, parse_damage
from firelane.engine.systems.percentile.system import PercentileSystem
from firelane.engine.systems.d100_zones.schemas import (
    D100ZFreeAttackOptions,
    D100Z_COMMANDS,
    D100Z_EVENTS,
    D100ZFirstAidGiven,
    D100ZRevived,
    D100ZSuppressiveFire,
)
from firelane.engine.systems.d100_zones import narration
from firelane.engine.systems.d100_zones.gm_fields import GM_FIELDS
from firelane.engine.systems.d100_zones.data import SAMPLE
from firelane.engine.systems.d100_zones.forms import SHEET_FIELDS
from firelane.engine.systems.d100_zones.labels import LABELS
from firelane.events.options_schemas import ReactionOption
from firelane.events.schemas import (
    ReactionOptions,
    ActionTaken,
    AttackResolved,
    ClaimReaction,
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


class D100ZonesSystem(PercentileSystem):
    name = "d100-zones"
    title = "d100 zones"
    command_types = D100Z_COMMANDS
    event_types = D100Z_EVENTS
    state_type = D100ZState
    combatant_type = D100ZCombatant
    reaction_priority: ClassVar[dict[str, int]] = {actions.FREE_ATTACK: 0}  # then initiative order (D100Z-15)
    reaction_options_types: ClassVar[Mapping[str, type[ReactionOptions]]] = {actions.FREE_ATTACK: D100ZFreeAttackOptions}
    reaction_resets = "round"
    initiative_each_round = True  # D100Z-01
    previewable: ClassVar[frozenset[str]] = frozenset({"D100ZSuppressiveFire"})
    sentences = narration.SENTENCES
    shared_event_sentences = narration.SHARED_EVENT_SENTENCES
    labels = LABELS
    orders = ORDERS  # the standing orders it takes (orders.py)
    sample = SAMPLE  # the catalogue sheets may name (resolve_setup)
    sheet_fields = tuple(f.path for f in SHEET_FIELDS if "." not in f.path)  # listed in a refusal
    gm_field_specs = GM_FIELDS  # the GM's form, and what GMAdjust checks (gm_fields.py)
    default_settings: ClassVar[dict[str, Any]] = HOUSE_DEFAULTS
    # The sheet (docs/systems/d100-zones.md): attributes and skills 0-100 (SPD too), at least 1 HP.
    weapon_type = ZWeapon
    percent_fields = ("strength", "dexterity", "intelligence", "speed", "melee", "ranged", "brawling", "medicine")
    pool_field, pool_max_field = "hp", "max_hp"
    folded_events = (TurnStarted, ActionTaken, Moved, AttackResolved, DamageDealt, StateAdjusted, ConditionApplied, ConditionRemoved, D100ZFirstAidGiven, D100ZRevived)  # what evolve_folded reads
    action_handlers = actions.ACTIONS
    area_previewers = {D100ZSuppressiveFire: actions.suppressive_fire_area}
    setting_ranges: ClassVar[dict[str, SettingRange]] = {
        "square_metres": SettingRange(0.01, 1000, whole=False),
        "flanking_min_angle": SettingRange(0, 180, whole=False),
        "dying_hp_loss_per_round": SettingRange(0, 1000),
        "death_at_hp": SettingRange(-10_000, 0),
    }

    # ------------------------------------------------------------ setup

    def check_settings(self, settings: dict[str, Any], setup: EncounterSetup) -> None:
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

    def check_sheet(self, check: SheetCheck, combatant: D100ZCombatant) -> None:
        check.at_least("dr", combatant.dr, 0)

    def check_weapon(self, check: SheetCheck, field: str, weapon: ZWeapon) -> None:
        """A known kind, one or two hands, a damage code that parses and a range."""
        check.one_of(f"{field}.kind", weapon.kind, (MELEE, RANGED, UNARMED))
        check.one_of(f"{field}.hands", weapon.hands, (1, 2))
        check.damage_code(f"{field}.damage", weapon.damage)
        check.above(f"{field}.range_m", weapon.range_m, 0)

    def check_sheet_after_weapons(self, check: SheetCheck, combatant: D100ZCombatant) -> None:
        check.at_least("moved_m", combatant.moved_m, 0)
        check.names_weapons("attacks", combatant.attacks, [*(w.name for w in combatant.weapons), "unarmed"])

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
        self.expire_at_turn_end(decision, combatant, actions.SUPPRESSED, "end of its turn", "D100Z-13")

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

    def evolve_folded(self, state: EncounterState, event: Event) -> None:
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

    def attack_reach_squares(self, state: EncounterState, me: Any) -> float | None:
        """The farthest any weapon carried attacks, in squares: a ranged weapon's
        range, else Engaged (2 m, D100Z-02/04) (`untargetable`)."""
        metres = [float(w.range_m) for w in me.weapons if w.kind == "ranged"] + [2.0]
        return max(metres) / float(state.settings["square_metres"])

    def blocking_cover(self, state: EncounterState, me: Any, enemy: Any) -> tuple[str, Any, str] | None:
        """D100Z-09 (with the cover option): heavy cover "cannot be targeted directly"."""
        if not actions.option_on(state, "cover"):  # type: ignore[arg-type]
            return None
        here, there = tuple(me.position), tuple(enemy.position)
        cover = rules.cover_between(Grid(state.terrain).cover_at, here, there)  # type: ignore[arg-type]
        return ("heavy", (cover.x, cover.y), "D100Z-09") if cover is not None and cover.level == "heavy" else None

    def turn_options(self, state: EncounterState, combatant: str) -> TurnOptions:
        return options.turn_options(self, state, combatant)  # type: ignore[arg-type]

    def reaction_options(self, state: EncounterState, window: ReactionWindow, combatant: str) -> list[ReactionOption]:
        return options.reaction_options(state, window, combatant)  # type: ignore[arg-type]

    # ------------------------------------------------------------ the GM's calls and adjustments

    def range_bands(self, state: EncounterState) -> list[dict[str, Any]]:
        """The range bands as Chebyshev radii in squares (D100Z-02)."""
        per_square = float(state.settings.get("square_metres", state.terrain.square_size) or 1.0)
        return [{"name": name, "metres": limit, "squares": int(limit // per_square)}
                for name, limit in rules.ZONES if limit != float("inf")]

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

    # A revival (the GM's Revive) ends the dying too, and a stabilisation.
    revive_removes = ("dead", "unconscious", "dying", "stabilised")

    def check_gm_change(self, state: EncounterState, combatant: Combatant, field: str, value: Any) -> None:
        """Ranges of the sheet fields the GM may set (docs/systems/d100-zones.md)."""
        me: D100ZCombatant = combatant  # type: ignore[assignment]
        if self.check_percent_change(field, value):
            return
        if field == "hp":
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


