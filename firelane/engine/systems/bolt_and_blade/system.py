"""The Bolt & Blade rule system on `BaseRuleSystem`: the top floor of the package.

The class wires the hooks of the shared engine to the modules below it (see
the package docstring for the floors): setup and sheets (`state`), initiative,
turn boundaries, actions (`actions`, `areas`), reactions (`reactions`), the
walk of a move (`movement`), the AI (`ai`), and the evolution of its events.
It also offers the combat rules (`combat`) as methods, which is what the area
module's host interface (`areas.AreaHost`) and callers holding the system ask for.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import msgspec

from firelane.engine.core import BaseRuleSystem, Decision, Rejected, SettingRange, TurnOptions, require
from firelane.engine.dice import Dice
from firelane.engine.grid import Square
from firelane.engine.state import EncounterState, ReactionWindow
from firelane.engine.systems.bolt_and_blade.orders import ORDERS
from firelane.engine.systems.bolt_and_blade import actions, ai, areas, combat, movement, options, reactions
from firelane.engine.systems.bolt_and_blade.combat import AttackPlan
from firelane.engine.systems.bolt_and_blade.constants import BB_DEFAULT_SETTINGS, OVERWATCH, STUNNED
from firelane.engine.systems.bolt_and_blade.data import load_data
from firelane.engine.systems.bolt_and_blade.state import (
    SHEET_FIELDS,
    BoltAndBladeCombatant,
    BoltAndBladeState,
    HeldShot,
    SheetProblem,
    Weapon,
    build_sheet,
    check_sheet,
    unknown_sheet_fields,
)
from firelane.events.options_schemas import AreaPreview, ReactionOption
from firelane.engine.systems.bolt_and_blade.schemas import (
    BBOverwatch,
    BB_COMMANDS,
    BB_EVENTS,
    BBDiveForCoverOptions,
    BBMarkMoved,
    BBMovementStopped,
    BBOpposedCheck,
    BBReactiveFireOptions,
    BBShotHeld,
)
from firelane.engine.systems.bolt_and_blade import narration
from firelane.engine.systems.bolt_and_blade.gm_fields import GM_FIELDS
from firelane.engine.systems.bolt_and_blade.labels import LABELS
from firelane.events.schemas import (
    NoReactionOptions,
    ReactionOptions,
    ActionTaken,
    CombatantSetup,
    Command,
    ConditionRemoved,
    DamageDealt,
    EncounterSetup,
    Event,
    GMRuled,
    InitiativeEntry,
    InitiativeRolled,
    Modifier,
    Moved,
    OrderedClaim,
    ReactionDenied,
    Roll,
    RoundStarted,
    StateAdjusted,
    TestRolled,
    TurnStarted,
)

_COMBATANT_FIELD_TYPES: dict[str, Any] = {f.name: f.type for f in msgspec.structs.fields(BoltAndBladeCombatant)}


def type_problem(error: msgspec.ValidationError) -> str:
    """msgspec's "Expected `int`, got `str` - at `$.weapons[0].range`" as
    "sheet field 'weapons[0].range': expected `int`, got `str`"."""
    message = str(error)
    text, _, path = message.rpartition(" - at `$")
    if not text:
        return f"invalid sheet: {message}"
    field = path.rstrip("`").lstrip(".")
    return f"sheet field {field!r}: {text[0].lower()}{text[1:]}"


class BoltAndBladeSystem(BaseRuleSystem):
    name = "bolt-and-blade"
    title = "Bolt & Blade"
    command_types = (*BB_COMMANDS, *areas.AREA_COMMANDS)
    event_types = (*BB_EVENTS, *areas.AREA_EVENTS)
    state_type = BoltAndBladeState
    combatant_type = BoltAndBladeCombatant
    # Defensive reactions first (they change whether the triggering attack
    # lands), then Return Fire (answers a declared attack before it resolves),
    # then the Opportunity Strike (the mover is leaving reach right now), then
    # Reactive Fire (tracks the move and may stop it).
    reaction_priority: ClassVar[dict[str, int]] = {
        "dive_for_cover": 0,
        "return_fire": 1,
        "opportunity_strike": 2,
        "reactive_fire": 3,
        # the choice under fire is the mover's alone: one reactor, no order to settle
        "continue": 4,
        "stop": 4,
    }
    reaction_options_types: ClassVar[Mapping[str, type[ReactionOptions]]] = {
        "reactive_fire": BBReactiveFireOptions,
        "dive_for_cover": BBDiveForCoverOptions,
        "return_fire": NoReactionOptions,
        "opportunity_strike": NoReactionOptions,
        "continue": NoReactionOptions,
        "stop": NoReactionOptions,
    }
    # BB-CMB-01: regained at the start of its own turn; evolve_event keeps one
    # spent earlier in the same round spent until the next round (BB-CMB-03).
    reaction_resets: ClassVar[str] = "own_turn"
    initiative_each_round: ClassVar[bool] = False
    previewable: ClassVar[frozenset[str]] = frozenset({"BBThrow", "BBAreaAttack", "BBOverwatch"})
    sentences = narration.SENTENCES
    shared_event_sentences = narration.SHARED_EVENT_SENTENCES
    labels = LABELS
    orders = ORDERS  # the standing orders it takes (orders.py)
    gm_field_specs = GM_FIELDS  # the GM's form, and what GMAdjust checks (gm_fields.py)
    default_settings: ClassVar[dict[str, Any]] = {**BB_DEFAULT_SETTINGS, **areas.AREA_DEFAULT_SETTINGS}
    setting_ranges: ClassVar[dict[str, SettingRange]] = {
        "proficiency_table.*.*": SettingRange(0, 100),  # [level from, bonus]
        "defense_base": SettingRange(0, 100),
        "cover_bonus.*": SettingRange(0, 100),
        "exposed_attack_bonus": SettingRange(0, 100),
        "movement_ft": SettingRange(0, 1000),
        "pinned_move_multiplier": SettingRange(1, 10, whole=False),
        "difficult_move_multiplier": SettingRange(1, 10, whole=False),
        "enter_cover_cost_ft": SettingRange(0, 1000),
        "overwatch_radius_ft": SettingRange(0, 1000),
        "suppress_area_ft": SettingRange(5, 1000),
        "suppress_ammo": SettingRange(0, 1000),
        "aim_bonus": SettingRange(0, 100),
        "search_dc": SettingRange(1, 100),
        "perils_dc": SettingRange(1, 100),
        "mark_attack_bonus": SettingRange(0, 100),
        "bb_throw_dc": SettingRange(1, 100),
        "bb_scatter_step_ft": SettingRange(0, 1000),
    }

    # ------------------------------------------------------------ setup

    def resolve_setup(self, setup: EncounterSetup) -> EncounterSetup:
        """Inline the catalogue's weapon and armour records into every sheet, so
        the encounter's log carries them (the sample data file may change later)."""
        combatants = []
        for combatant in setup.combatants:
            try:
                sheet = build_sheet(combatant.sheet, load_data())
            except ValueError as exc:
                raise Rejected(f"combatant {combatant.id!r} has an invalid sheet: {exc}") from None
            combatants.append(msgspec.structs.replace(combatant, sheet=sheet))
        return msgspec.structs.replace(setup, combatants=combatants)

    def build_combatant(self, setup: CombatantSetup, settings: dict[str, Any]) -> BoltAndBladeCombatant:
        """The typed combatant of a sheet, validated in full: every field a sheet
        field, of its type, within what the rules allow. A bad sheet raises
        Rejected with one line naming the combatant and the field."""
        # Sheets arrive resolved (resolve_setup): no catalogue is consulted here.
        try:
            sheet = build_sheet(setup.sheet, {})
            unknown_sheet_fields(sheet)
        except SheetProblem as problem:
            raise Rejected(f"combatant {setup.id!r}: {problem}") from None
        except ValueError as exc:
            raise Rejected(f"combatant {setup.id!r} has an invalid sheet: {exc}") from None
        sheet.setdefault("movement_ft", settings.get("movement_ft", 30))
        try:
            combatant = msgspec.convert(
                {**sheet, "id": setup.id, "name": setup.name, "side": setup.side, "position": setup.position, "policy": setup.policy},
                BoltAndBladeCombatant,
            )
        except msgspec.ValidationError as exc:
            raise Rejected(f"combatant {setup.id!r}: {type_problem(exc)}") from None
        try:
            check_sheet(combatant)
        except SheetProblem as problem:
            raise Rejected(f"combatant {setup.id!r}: {problem}") from None
        return combatant

    def roll_initiative(self, decision: Decision, dice: Dice) -> InitiativeRolled:
        """House default: d20 + Agility modifier once at the start; ties go to the
        higher Agility modifier, then the combatant ID."""
        entries = []
        for cid in sorted(decision.state.combatants):
            combatant = combat.combatant(decision.state, cid)
            die = dice.roll(20)
            agility = combatant.modifier("agility")
            roll = Roll(
                purpose="initiative",
                rule="BB-CMB-01",
                dice=[die],
                modifiers=[Modifier(source="Agility modifier", rule="BB-CORE-02", value=agility)],
                total=die.face + agility,
            )
            entries.append(InitiativeEntry(combatant=cid, total=roll.total, roll=roll, tiebreak=[agility]))
        order = [e.combatant for e in sorted(entries, key=lambda e: (-e.total, -e.tiebreak[0], e.combatant))]
        return InitiativeRolled(round=decision.state.round, entries=entries, order=order, rule="BB-CMB-01")

    # ------------------------------------------------------------ the combat rules, as methods
    # (the area module's host interface, and callers holding the system)

    @staticmethod
    def combatant(state: EncounterState, cid: str) -> BoltAndBladeCombatant:
        return combat.combatant(state, cid)

    def sees(self, state: EncounterState, a: Square, b: Square) -> bool:
        return combat.sees(state, a, b)

    def sight_test(self, state: EncounterState) -> Callable[[Square, Square], bool]:
        return combat.sight_test(state)

    def standing_enemies(self, state: EncounterState, cid: str) -> list[BoltAndBladeCombatant]:
        return combat.standing_enemies(state, cid)

    def plan_attack(self, state: EncounterState, attacker_id: str, target_id: str, weapon: Weapon, *, kind: str = "attack") -> AttackPlan:
        return combat.plan_attack(state, attacker_id, target_id, weapon, kind=kind)

    def roll_check(self, decision: Decision, combatant_id: str, attribute: str, proficiency: str | None, dc: int, dice: Dice, *, purpose: str) -> TestRolled:
        return combat.roll_check(decision, combatant_id, attribute, proficiency, dc, dice, purpose=purpose)

    def roll_save(self, decision: Decision, combatant_id: str, attribute: str, dc: int, dice: Dice, *, rule: str, purpose: str) -> TestRolled:
        return combat.roll_save(decision, combatant_id, attribute, dc, dice, rule=rule, purpose=purpose)

    def opposed_check(self, decision: Decision, actor_id: str, defender_id: str, actor_skill: tuple[str, str | None], defender_skill: tuple[str, str | None], dice: Dice, *, purpose: str) -> BBOpposedCheck:
        return combat.opposed_check(decision, actor_id, defender_id, actor_skill, defender_skill, dice, purpose=purpose)

    def roll_damage(self, decision: Decision, expression: str, dice: Dice, *, modifiers: list[Modifier], rule: str, purpose: str, critical: bool = False) -> Roll:
        return combat.roll_damage(decision, expression, dice, modifiers=modifiers, rule=rule, purpose=purpose, critical=critical)

    def apply_damage(self, decision: Decision, target_id: str, amount: int, *, source: str, roll: Roll | None, rule: str) -> None:
        combat.apply_damage(decision, target_id, amount, source=source, roll=roll, rule=rule)

    def spend_action(self, decision: Decision, combatant_id: str, slot: str = "action", *, action: str = "use wargear", rule: str = "BB-CORE-16", details: dict[str, Any] | None = None) -> None:
        combat.spend_action(decision, combatant_id, slot, action=action, rule=rule, details=details)

    def resolve_weapon_attack(self, decision: Decision, attacker_id: str, target_id: str, weapon_name: str, dice: Dice, *, kind: str = "attack") -> None:
        """The areas module's krak grenade: a ranged attack on one creature,
        with its Return Fire and Dive for Cover windows (BB-CMB-14, -17, -28)."""
        reactions.declare_thrown_attack(decision, attacker_id, target_id, weapon_name, dice)

    def area_item(self, state: EncounterState, combatant_id: str, name: str) -> dict[str, Any] | None:
        return combat.area_item(state, combatant_id, name)

    def throw_modifiers(self, state: EncounterState, combatant_id: str, item_name: str) -> list[Modifier]:
        return combat.throw_modifiers(state, combatant_id, item_name)

    def attack_advantage(self, state: EncounterState, combatant_id: str) -> tuple[list[str], list[str]]:
        return combat.attack_advantage(state, combatant_id)

    def consume_item(self, decision: Decision, combatant_id: str, item_name: str) -> None:
        combat.consume_item(decision, combatant_id, item_name)

    # ------------------------------------------------------------ hooks

    def on_round_start(self, decision: Decision, dice: Dice) -> None:
        areas.on_round_start(self, decision, dice)

    def on_turn_start(self, decision: Decision, combatant: str, dice: Dice) -> None:
        """Effects "until the start of <combatant>'s next turn" expire (BB-CMB-23)."""
        combat.expire(decision, f"start_of_turn:{combatant}")
        areas.on_turn_start(self, decision, combatant, dice)

    def on_turn_end(self, decision: Decision, combatant: str, dice: Dice) -> None:
        """Effects "until the end of <combatant>'s turn" expire (BB-CMB-23)."""
        combat.expire(decision, f"end_of_turn:{combatant}")

    def cannot_act_reason(self, state: EncounterState, combatant: Any) -> str | None:
        if combatant.out_of_fight:
            return "Down (BB-CORE-09)"
        if STUNNED in combatant.conditions:
            return "Stunned"
        return None

    def decide_action(self, decision: Decision, command: Command, dice: Dice) -> None:
        if isinstance(command, areas.AREA_COMMANDS):
            areas.decide_area_command(self, decision, command, dice)
            return
        actions.decide_action(decision, command, dice)

    def validate_claim(self, state: EncounterState, window: ReactionWindow, claim: Any) -> None:
        reactions.validate_claim(state, window, claim)

    def resolve_reaction(self, decision: Decision, window: ReactionWindow, claim: OrderedClaim, dice: Dice) -> str | None:
        return reactions.resolve_reaction(decision, window, claim, dice)

    def after_window(self, decision: Decision, window: ReactionWindow, dice: Dice) -> None:
        """Continue what the window interrupted. A window opened on a move's step
        walks on; one opened by what happened there (a Return Fire, a dive, the
        choice under fire) walks on only once nothing is open or waiting: an
        outer window still to resume walks on itself when it closes."""
        state = decision.state
        if window.continuation.get("kind") == "move":
            movement.resume_move(decision, window.continuation, dice)
            return
        move = reactions.after_window(decision, window, dice)
        if move is not None and state.window is None and not state.suspended_windows and not state.ended:
            movement.resume_move(decision, move, dice)

    def choose_command(self, state: EncounterState, combatant: str) -> Command | None:
        return ai.choose_command(state, combatant)

    # ------------------------------------------------------------ the GM

    def gm_calls(self, state: EncounterState) -> dict[str, str]:
        return reactions.pending_gm_calls(state)

    def gm_call_rulings(self, state: EncounterState, call: str) -> dict[str, Any]:
        """A Dive for Cover call takes "possible" or "impossible" and nothing else (BB-CMB-17)."""
        return reactions.gm_call_rulings(call)

    def settle_gm_call(self, decision: Decision, call: str, ruling: str, dice: Dice) -> None:
        """The GM's ruling on a pending call, checked (the recorded `GMRuled` is
        what the state keeps, `evolve_event`): a dive's "possible"/"impossible"."""
        reactions.check_gm_ruling(call, ruling)

    def check_gm_change(self, state: EncounterState, combatant: Any, field: str, value: Any) -> None:
        gm_change_problem(state, combatant, field, value)

    # ------------------------------------------------------------ what a combatant may do now (`options`)

    def turn_options(self, state: EncounterState, combatant: str) -> TurnOptions:
        return options.turn_options(state, combatant)

    def reaction_options(self, state: EncounterState, window: ReactionWindow, combatant: str) -> list[ReactionOption]:
        return options.reaction_options(state, window, combatant)

    def attack_reach_squares(self, state: EncounterState, me: Any) -> float | None:
        """The farthest any weapon carried attacks: a ranged or thrown weapon's
        maximum range (BB-CORE-11), or melee reach (`untargetable`)."""
        ranged = [w.range[1] for w in me.weapons if not w.is_melee and w.template is None]
        return max([r / state.terrain.square_size for r in ranged] + [combat.melee_reach_squares(state, me)])

    def blocking_cover(self, state: EncounterState, me: Any, enemy: Any) -> tuple[str, Any, str] | None:
        """BB-CMB-04: total cover "cannot be targeted" (on the enemy's square, facing ``me``)."""
        level, _how = combat.cover_against(state, enemy, tuple(me.position))
        return ("total", tuple(enemy.position), "BB-CMB-04") if level == "total" else None

    def preview_area(self, state: EncounterState, command: Command) -> AreaPreview:
        if isinstance(command, BBOverwatch):
            return actions.preview_overwatch(state, command)  # the watched area (BB-CMB-13)
        return areas.preview_area(self, state, command)

    # ------------------------------------------------------------ evolve

    def evolve_event_reads(self, event_type: type[Event]) -> bool:
        return issubclass(event_type, _FOLDED_EVENTS)

    def evolve_event(self, state: EncounterState, event: Event) -> None:
        kind = type(event)
        folds = _FOLDS_TYPE.get(kind)
        if folds is None:
            folds = _FOLDS_TYPE[kind] = issubclass(kind, _FOLDED_EVENTS)
        if not folds:
            return  # most events change nothing of Bolt & Blade's own: skip the chain (a replay folds millions)
        combatants = state.combatants
        if isinstance(event, RoundStarted):
            for cid in sorted(combatants):
                me = combat.combatant(state, cid)
                if me.reaction_back_next_round:
                    me.reaction_used = False
                    me.reaction_back_next_round = False
        elif isinstance(event, TurnStarted):
            me = combat.combatant(state, event.combatant)
            if me.reaction_round == state.round:
                # BB-CMB-01 gives the Reaction back as the turn starts, but
                # BB-CMB-03 allows one per round: spent earlier this round, it
                # stays spent until the next round starts.
                me.reaction_used = True
                me.reaction_back_next_round = True
            me.movement_allowance_ft = float(me.movement_ft)
            me.movement_used_ft = 0.0
            me.action_used = False
            me.bonus_used = False
            me.attacked_this_turn = False
            me.movement_halted = False
        elif isinstance(event, ActionTaken):
            me = combat.combatant(state, event.combatant)
            if event.slot == "reaction":
                me.reaction_round = state.round
                me.reaction_window = state.window.window if state.window is not None else 0
                if event.action == "reactive_fire":
                    held = state.held_shots  # type: ignore[attr-defined]
                    held[:] = [shot for shot in held if shot.reactor != event.combatant]
            elif event.slot == "action":
                me.action_used = True
                if event.action == "attack":
                    me.attacked_this_turn = True
                if event.action == "dash":  # BB-CMB-07; an Evade adds nothing (BB-CMB-08)
                    me.movement_allowance_ft += me.movement_ft
            elif event.slot == "bonus":
                me.bonus_used = True
        elif isinstance(event, Moved):
            me = combat.combatant(state, event.combatant)
            me.movement_used_ft += event.cost
            if event.path:
                me.taking_cover = False
        elif isinstance(event, DamageDealt):
            if event.remaining is not None:
                combat.combatant(state, event.target).vitality = event.remaining
        elif isinstance(event, StateAdjusted):
            me = combat.combatant(state, event.combatant)
            for field, value in event.changes.items():
                setattr(me, field, msgspec.convert(value, _COMBATANT_FIELD_TYPES[field]))
        elif isinstance(event, ConditionRemoved):
            if event.condition == OVERWATCH and event.combatant in combatants:
                combat.combatant(state, event.combatant).overwatch_area = []
        elif isinstance(event, BBShotHeld):
            state.held_shots.append(HeldShot(reactor=event.reactor, mover=event.mover, square=tuple(event.square), window=event.window))  # type: ignore[attr-defined]
        elif isinstance(event, ReactionDenied):
            if event.reaction == "reactive_fire":
                held = state.held_shots  # type: ignore[attr-defined]
                held[:] = [shot for shot in held if (shot.reactor, shot.window) != (event.combatant, event.window)]
        elif isinstance(event, BBMovementStopped):
            me = combat.combatant(state, event.combatant)
            me.movement_halted = True
            # Where it stops: its square, or, when that was another's, the last
            # square of its path it may end on (`paths.stop_square`).
            me.position = (int(event.at[0]), int(event.at[1]))
        elif isinstance(event, GMRuled):
            if event.call.startswith(f"{reactions.DIVE_CALL}:"):
                state.gm_calls_settled[event.call] = event.ruling.strip().lower()  # type: ignore[attr-defined]
        elif isinstance(event, BBMarkMoved):
            combat.combatant(state, event.marker).marks[event.mark] = event.bearer
        elif isinstance(event, areas.AREA_EVENTS):
            areas.evolve_area_event(self, state, event)


# The event types evolve_event folds (each branch of its chain), and per
# concrete type whether it is one of them (looked up once per type).
_FOLDED_EVENTS: tuple[type, ...] = (
    RoundStarted, TurnStarted, ActionTaken, Moved, DamageDealt, StateAdjusted, ConditionRemoved, BBShotHeld,
    ReactionDenied, BBMovementStopped, GMRuled, BBMarkMoved, *areas.AREA_EVENTS)
_FOLDS_TYPE: dict[type, bool] = {}


# ---------------------------------------------------------------- the GM's adjustments


def gm_change_problem(state: EncounterState, combatant: BoltAndBladeCombatant, field: str, value: Any) -> None:
    """Raise Rejected unless the GM may set ``field`` of ``combatant`` to ``value``
    (GMAdjust; the type is already checked): what a sheet may hold (`check_sheet`:
    levels, attributes, bonuses, weapons, ammunition within the magazine, a
    carried ready weapon), Vitality from 1 to its maximum (0 only for one out of
    the fight: set out_of_fight to take one out, BB-CORE-09), movement and the
    turn's economy not negative, squares on the map, marks on combatants."""
    name = combatant.id
    if field == "vitality":
        low = 0 if combatant.out_of_fight else 1
        require(low <= value <= combatant.max_vitality,
                f"{name}'s vitality must be from {low} to its max_vitality {combatant.max_vitality} (got {value})"
                + ("; Vitality 0 is Down (BB-CORE-09): set out_of_fight: true to take it out" if value == 0 else ""))
        return
    if field == "max_vitality":
        require(value >= max(1, combatant.vitality), f"{name}'s max_vitality must be at least 1 and its vitality {combatant.vitality} (got {value})")
        return
    if field in SHEET_FIELDS:
        probe = msgspec.structs.replace(combatant, **{field: value})
        if probe.vitality < 1:  # a fallen combatant's sheet is checked as if standing
            probe = msgspec.structs.replace(probe, vitality=1)
        try:
            check_sheet(probe)
        except SheetProblem as problem:
            raise Rejected(f"{name}: {problem}") from None
        return
    if field in ("movement_allowance_ft", "movement_used_ft", "reaction_round", "reaction_window"):
        require(value >= 0, f"{name}'s {field} must not be negative (got {value})")
        return
    if field == "jammed":
        unknown = [w for w in value if combatant.weapon(w) is None]
        require(not unknown, f"{name} does not carry {', '.join(map(repr, unknown))}; carried: {', '.join(w.name for w in combatant.weapons)}")
        return
    if field == "overwatch_area":
        grid = combat.grid_of(state)
        off = [tuple(s) for s in value if not grid.in_bounds(tuple(s))]
        require(not off, f"overwatch_area squares {off} are off the {state.terrain.width}x{state.terrain.height} map")
        return
    if field == "marks":
        unknown = sorted(b for b in value.values() if b not in state.combatants)
        require(not unknown, f"marks name unknown combatants: {', '.join(unknown)}")
        missing = sorted(m for m in value if m not in combatant.features)
        require(not missing, f"{name} has no mark feature {', '.join(map(repr, missing))}; features: {', '.join(combatant.features) or 'none'}")
