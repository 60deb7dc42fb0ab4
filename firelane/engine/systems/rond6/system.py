"""The RonD6 rule system: rounds, initiative, declared actions, Wait, attacks
and defenses, damage and injuries, on the shared `BaseRuleSystem`.

How a turn runs (docs/systems/rond6.md has the full picture):

* Every round starts with initiative (R6-02/03): Perception + bonuses, one roll
  per group of similar NPCs, ties by talent, Agility, combat skill, then ID.
* On its turn a combatant first declares its number of actions
  (`R6DeclareActions`, R6-05/06); every action that round then carries the
  multiple-action penalty. Free Actions need no declaration (R6-07).
* Declaring an action emits `R6ActionDeclared`; if anyone is Waiting (R6-08)
  a reaction window opens *before* the action resolves, and claimed
  interruptions resolve first. The declared action then resolves as a queue
  of steps kept in window continuations: an attack opens an Active Defense
  window for its target (R6-16), rolls, and a hit that the target can soak
  with Character/Fate Points opens a Damage Resistance window (R6-20).
* Whatever can no longer happen after an interruption (its actor or target is
  down, the target left the range) is recorded as `R6ActionLost`, never an
  error: a window's continuation must not be rejected.

House defaults — each configurable per encounter via ``EncounterSetup.settings``
(`DEFAULT_SETTINGS`; docs/systems/rond6.md explains them):

* ``complication_rule`` "remove": a Wild Die 1 removes itself and the highest other die (R6-01);
* ``difficulty_ladder`` Very Easy 5 ... Heroic 35 (R6-01);
* ``initiative_groups`` on: one initiative roll per group of similar NPCs (R6-02);
  ties fall back to combatant ID order (R6-03, not a setting);
* ``reaction_declares_actions`` 2: actions declared by a combatant whose first
  action of the round is an off-turn Active Defense (R6-05/16);
* ``result_points_to_damage`` on: a hit's result points add to its damage (R6-13);
* ``wild_die_on_damage`` on;
* ``cover_defense`` light +5 / heavy +10 to Passive Defense, total blocks (R6-13/15);
* ``called_shots``: the Scale modifiers and effects by location (R6-27);
* ``interaction_range`` 10 spaces for spoken interaction attacks (R6-18);
* ``heads_down_radius`` 1 (R6-32);
* ``armor_points_per_die`` 4: static armour like Strength x 4 (R6-20);
* ``resistance_window`` on: Character/Fate Points are offered on hits (R6-20);
* ``fatigue_limit`` 3 (R6-22); ``max_free_actions`` 3 (R6-07); ``surprise_rounds`` 1 (R6-38);
* Wait interrupts through a window opened when another combatant declares an
  action, before it resolves (R6-08); Active Defense through a window opened
  when an attack is declared against the defender (R6-16); Mortally Wounded
  minute rolls are the sequencer's `R6MortalWoundCheck` command (R6-21).
"""

from __future__ import annotations

import typing
from collections.abc import Mapping
from typing import Any, ClassVar

import msgspec

from firelane.engine.core import (
    SEQUENCER,
    BaseRuleSystem,
    CheckingDecision,
    ChecksPassed,
    Decision,
    Rejected,
    SettingRange,
    TurnOptions,
    require,
)
from firelane.engine.dice import Dice
from firelane.engine.grid import Grid
from firelane.engine.seats import GM
from firelane.engine.state import ReactionWindow
from firelane.engine.systems.rond6.orders import ORDERS
from firelane.engine.systems.rond6 import actions, ai, areas, combat, options, reactions, rules, sheets
from firelane.engine.systems.rond6 import aux as _aux
from firelane.engine.systems.rond6.pools import (
    COMPLICATION_RULES,
    DIFFICULTY_LADDER,
    as_code,
    difficulty,
    roll_pool,
)
from firelane.engine.systems.rond6.rolling import (
    DiceMod,
    adjusted,
    condition_dice_mods,
    weapon_damage_code,
)
from firelane.engine.systems.rond6.rules import DEFENSE_REACTIONS, INTERRUPT, RESIST
from firelane.engine.systems.rond6.state import UNARMED, RonD6Combatant, RonD6State, Weapon
from firelane.engine.systems.rond6.movement import with_route
from firelane.engine.systems.rond6.aux_schemas import R6AreaAttack, R6Move
from firelane.engine.systems.rond6.schemas import (
    R6DefenseOptions,
    R6InterruptOptions,
    R6ResistOptions,
    R6_COMMANDS,
    R6_EVENTS,
    R6ActionDeclared,
    R6ActionLost,
    R6ActionsDeclared,
    R6DefenseRolled,
    R6HeadsDown,
    R6InterruptQueued,
    R6InterruptsBegun,
    R6ResistanceBoosted,
    R6Wait,
)
from firelane.engine.systems.rond6 import narration
from firelane.engine.systems.rond6.gm_fields import GM_FIELDS
from firelane.engine.systems.rond6.forms import resolve_sheet
from firelane.engine.systems.rond6.labels import LABELS
from firelane.events.options_schemas import AreaPreview, ReactionOption
from firelane.events.schemas import (
    ReactionOptions,
    ActionTaken,
    AttackResolved,
    CombatantDown,
    CombatantSetup,
    Command,
    ConditionApplied,
    ConditionRemoved,
    DamageDealt,
    EncounterSetup,
    Event,
    InitiativeEntry,
    InitiativeRolled,
    OrderedClaim,
    Roll,
    RoundStarted,
    StateAdjusted,
    TurnStarted,
)

# The non-turn rules (movement, objects, areas, healing) plug in through aux.py.
AUX_COMMANDS: tuple[type[Command], ...] = _aux.AUX_COMMANDS
AUX_EVENTS: tuple[type[Event], ...] = _aux.AUX_EVENTS
AUX_DEFAULT_SETTINGS: dict[str, Any] = dict(_aux.AUX_DEFAULT_SETTINGS)

# Aux commands a grappled combatant cannot take (house default: a grapple holds you in place).
GRAPPLE_BLOCKS = frozenset({"R6Move", "R6Jump"})


# House defaults: each is documented in docs/systems/rond6.md and configurable
# per encounter through EncounterSetup.settings.
DEFAULT_SETTINGS: dict[str, Any] = {
    # R6-01 (pools): what a 1 on the Wild Die does, and the difficulty ladder.
    "complication_rule": "remove",
    "difficulty_ladder": dict(DIFFICULTY_LADDER),
    # R6-02: NPCs with the same ``group`` on one side share one initiative roll.
    "initiative_groups": True,
    # R6-16: how many actions a combatant declares when it first needs one off
    # its own turn (an Active Defense before its turn came up), capped by its limit.
    "reaction_declares_actions": 2,
    # R6-20: static value of one armour die (like Strength x 4 for Toughness).
    "armor_points_per_die": 4,
    # R6-20: offer a window to spend Character Points / a Fate Point on a hit.
    "resistance_window": True,
    # R6-13: result points of a hit are not added to damage (Combat Feats are out of scope).
    "result_points_to_damage": True,
    # Damage rolls use the Wild Die like every roll.
    "wild_die_on_damage": True,
    # R6-13: cover on the target's square raises its Defense (light/heavy); total cover blocks.
    "cover_defense": {"light": 5, "heavy": 10},
    # R6-27: called shot locations -> attack modifier, extra damage dice (None: no damage), effect.
    "called_shots": {k: dict(v) for k, v in rules.CALLED_SHOTS.items()},
    # R6-18: reach of spoken interaction attacks in spaces (Maneuver / Acrobatic Trick: adjacent).
    "interaction_range": 10,
    # R6-32: radius (spaces) of the area a Heads Down covers around its centre.
    "heads_down_radius": 1,
    # R6-22: a Fatigue level above this knocks the character unconscious.
    "fatigue_limit": 3,
    # R6-07: Free Actions per turn before the GM calls it excessive.
    "max_free_actions": 3,
    # R6-38: rounds a Surprised combatant loses its turn.
    "surprise_rounds": 1,
    **AUX_DEFAULT_SETTINGS,
}



class RonD6System(BaseRuleSystem):
    name = "rond6"
    title = "RonD6"
    command_types = (*R6_COMMANDS, *AUX_COMMANDS)
    event_types = (*R6_EVENTS, *AUX_EVENTS)
    state_type = RonD6State
    combatant_type = RonD6Combatant
    # Interruptions resolve before anything else; defenses before damage soaking.
    reaction_priority: ClassVar[dict[str, int]] = {
        INTERRUPT: 0,
        **{name: 1 for name in DEFENSE_REACTIONS},
        RESIST: 2,
    }
    reaction_options_types: ClassVar[Mapping[str, type[ReactionOptions]]] = {
        INTERRUPT: R6InterruptOptions,
        **{name: R6DefenseOptions for name in DEFENSE_REACTIONS},
        RESIST: R6ResistOptions,
    }
    # RonD6 has no once-per-round reaction: reactions spend declared actions.
    reaction_resets = "round"
    initiative_each_round = True
    default_settings: ClassVar[dict[str, Any]] = DEFAULT_SETTINGS
    setting_ranges: ClassVar[dict[str, SettingRange]] = {
        "difficulty_ladder.*": SettingRange(0, 1000),
        "reaction_declares_actions": SettingRange(0, 100),
        "armor_points_per_die": SettingRange(1, 100),
        "cover_defense.*": SettingRange(0, 1000),
        "called_shots.*.modifier": SettingRange(-1000, 1000),
        "called_shots.*.damage_dice": SettingRange(0, 100, nullable=True),
        "interaction_range": SettingRange(0, 1000),
        "heads_down_radius": SettingRange(0, 1000),
        "fatigue_limit": SettingRange(0, 1000),
        "max_free_actions": SettingRange(0, 1000),
        "surprise_rounds": SettingRange(0, 1000),
        "move_normal": SettingRange(0, 1000),
        "move_strong": SettingRange(0, 1000),
        "objects.*.square.*": SettingRange(0, 10_000),
        "water_spaces.*.*": SettingRange(0, 10_000),
        "climb_spaces.*.*": SettingRange(0, 10_000),
        "objects.*.defense": SettingRange(0, 1000, nullable=True),
        "objects.*.structure_levels": SettingRange(1, 1000, nullable=True),
        "object_min_damage_levels": SettingRange(0, 1000),
        "object_structure_levels": SettingRange(1, 1000),
        "healing_reach": SettingRange(0, 1000),
    }
    # Heads Down (R6-32) is listed at each enemy's Space; Area Attacks (R6-40) are not in the options.
    previewable: ClassVar[frozenset[str]] = frozenset({"R6HeadsDown", "R6AreaAttack"})
    sentences = narration.SENTENCES
    shared_event_sentences = narration.SHARED_EVENT_SENTENCES
    labels = LABELS
    orders = ORDERS  # the standing orders it takes (orders.py)
    gm_field_specs = GM_FIELDS  # the GM's form, and what GMAdjust checks (gm_fields.py)

    # ================================================================ settings and sheets

    def settings_for(self, setup: EncounterSetup) -> dict[str, Any]:
        settings = super().settings_for(setup)
        problem = settings_problem(settings)
        if problem is not None:
            raise Rejected(f"invalid {self.name} setting: {problem}")
        sheets.check_positions(setup)
        return settings


    def resolve_setup(self, setup: EncounterSetup) -> EncounterSetup:
        """Spell out the catalogue entries sheets name (``"armour": "tactical_vest"``,
        ``"weapons": ["rifle"]``), so the log carries the records themselves (forms.py)."""
        combatants = []
        for combatant in setup.combatants:
            try:
                sheet = resolve_sheet(combatant.sheet)
            except ValueError as exc:
                raise Rejected(f"combatant {combatant.id!r}: {exc}") from None
            combatants.append(combatant if sheet is combatant.sheet else msgspec.structs.replace(combatant, sheet=sheet))
        return msgspec.structs.replace(setup, combatants=combatants)

    def build_combatant(self, setup: CombatantSetup, settings: dict[str, Any]) -> RonD6Combatant:
        """The sheet, checked in full (`sheets`): one line names the combatant and the field."""
        combatant = sheets.convert_sheet(setup)
        area_sizes = {"burst": list(areas.BURST_RADIUS), "cone": list(areas.CONE_LENGTH)}
        sheets.check_sheet(setup, combatant, settings, area_sizes, weapon_damage_code)
        if not combatant.readied and combatant.weapons:
            combatant.readied = [combatant.weapons[0].id]
        for weapon in combatant.weapons:
            if weapon.capacity and weapon.id not in combatant.ammo:
                combatant.ammo[weapon.id] = weapon.capacity
        return combatant

    # ================================================================ small helpers

    def standard(self, state: RonD6State) -> int:
        return difficulty("standard", settings=state.settings)

    def grid(self, state: RonD6State) -> Grid:
        return Grid(state.terrain)

    def weapon(self, combatant: RonD6Combatant, weapon_id: str) -> Weapon:
        """A combatant's weapon by ID; "" picks the weapon in hand (else unarmed)."""
        if not weapon_id:
            weapon_id = combatant.readied[0] if combatant.readied else UNARMED.id
        if weapon_id == UNARMED.id:
            return UNARMED
        for weapon in combatant.weapons:
            if weapon.id == weapon_id:
                return weapon
        known = ", ".join([w.id for w in combatant.weapons] + [UNARMED.id])
        raise Rejected(f"{combatant.id} has no weapon {weapon_id!r}; it has: {known}")

    def combatant(self, state: RonD6State, combatant_id: str) -> RonD6Combatant:
        return self.require_combatant(state, combatant_id)  # type: ignore[return-value]

    def penalty_dice(self, combatant: RonD6Combatant) -> int:
        """The multiple-action penalty of this round (R6-05)."""
        return max(0, combatant.declared_actions - 1)

    # ================================================================ initiative (R6-02/03)

    def roll_initiative(self, decision: Decision, dice: Dice) -> InitiativeRolled:
        state: RonD6State = decision.state  # type: ignore[assignment]
        standing = sorted(cid for cid, c in state.combatants.items() if not c.out_of_fight)
        shared: dict[tuple[str, str], tuple[str, int]] = {}
        entries: list[InitiativeEntry] = []
        for cid in standing:
            combatant = state.combatants[cid]
            tiebreak = rules.initiative_tiebreak(combatant.talents, combatant.attributes.get("Agility", "2D"), self.best_combat_code(combatant))
            key = (combatant.side, combatant.group)
            if combatant.group and state.settings.get("initiative_groups", True) and key in shared:
                leader, total = shared[key]
                entries.append(InitiativeEntry(combatant=cid, total=total, tiebreak=tiebreak))
                continue
            roll = self.initiative_roll(state, combatant, dice)
            if combatant.group:
                shared[key] = (cid, roll.total)
            entries.append(InitiativeEntry(combatant=cid, total=roll.total, roll=roll, tiebreak=tiebreak))
        order = rules.initiative_order([(e.combatant, e.total, e.tiebreak) for e in entries])
        return InitiativeRolled(round=state.round, entries=entries, order=order, rule=rules.R_ROUND)

    def initiative_roll(self, state: RonD6State, combatant: RonD6Combatant, dice: Dice) -> Any:
        """Perception + initiative bonus; Wounds apply, multiple actions never do
        (R6-05); a Surprised combatant has -1D in the first round (R6-38)."""
        base = as_code(combatant.attributes.get("Perception", "2D")).add_pips(as_code(combatant.initiative_bonus).total_pips())
        mods = [m for m in condition_dice_mods(combatant, "Perception") if m.rule != rules.R_MULTI]
        if combatant.surprised and state.round <= int(state.settings.get("surprise_rounds", 1)):
            mods.append(DiceMod("Surprised (first round)", rules.R_SURPRISE, -1))
        roll = roll_pool(
            dice,
            adjusted(base, mods),
            purpose="initiative",
            rule=rules.R_ROUND,
            stymied="stymied" in combatant.conditions,
            complication_rule=state.settings.get("complication_rule", "remove"),
            notes=[f"{m.dice:+d}D {m.source} ({m.rule})" for m in mods],
        )
        details = {**roll.details, "base_code": str(base), "dice_modifiers": [m.as_dict() for m in mods]}
        if combatant.group:
            details["group"] = combatant.group
        return msgspec.structs.replace(roll, details=details)

    def best_combat_code(self, combatant: RonD6Combatant) -> str:
        codes = [as_code(combatant.skills[s]) for s in rules.COMBAT_SKILLS if s in combatant.skills]
        return str(max(codes, key=lambda c: c.total_pips())) if codes else "0D"

    # ================================================================ turns (R6-04, R6-21..23)

    def cannot_act_reason(self, state: Any, combatant: Any) -> str | None:
        if combatant.out_of_fight:
            return "out of the fight"
        if "unconscious" in combatant.conditions:
            return "unconscious (R6-04)"
        if "immobilised" in combatant.conditions:
            return "immobilised (R6-04)"
        if combatant.surprised and state.round <= int(state.settings.get("surprise_rounds", 1)):
            return "surprised (R6-04, R6-38)"
        return None

    def on_round_start(self, decision: Decision, dice: Dice) -> None:
        combat.recover_stun_by_rest(self, decision)

    def on_turn_start(self, decision: Decision, combatant: str, dice: Dice) -> None:
        combat.start_of_turn(self, decision, combatant, dice)

    def on_turn_end(self, decision: Decision, combatant: str, dice: Dice) -> None:
        combat.end_of_turn(self, decision, combatant)

    # ================================================================ actions (R6-05..08)

    def action_unavailable(self, state: RonD6State, combatant: RonD6Combatant, kind: str = "action", count: int = 1) -> str | None:
        """Why ``combatant`` cannot spend ``count`` actions of ``kind`` now, or None."""
        cid = combatant.id
        if combatant.out_of_fight:
            return f"{cid} is out of the fight"
        if combatant.declared_actions == 0:
            return f"{cid} has not declared its number of actions this round: send R6DeclareActions first (R6-05)"
        if combatant.full_action:
            return f"{cid} took a Full Action this round and can take no other action (R6-07)"
        if kind == "full":
            if combatant.actions_used > 0:
                return f"{cid} has already acted this round; a Full Action must be the round's only action (R6-07)"
            if combatant.declared_actions != 1:
                return f"{cid} declared {combatant.declared_actions} actions; a Full Action must be the round's only action (R6-07)"
        left = combatant.declared_actions - combatant.actions_used
        if count > left:
            return f"{cid} has {left} of its {combatant.declared_actions} declared actions left this round, needs {count} (R6-05)"
        return None

    def spend_action(self, decision: Decision, combatant_id: str, kind: str = "action", *, action: str = "action", rule: str = rules.R_ACTION_TYPES) -> int:
        """Use one declared action (``kind`` "action" or "full"); returns this
        round's multiple-action penalty in dice. Rejects if none is left."""
        state: RonD6State = decision.state  # type: ignore[assignment]
        combatant = self.combatant(state, combatant_id)
        if kind not in ("action", "full"):
            raise Rejected(f"unknown action kind {kind!r} (action, full)")
        reason = self.action_unavailable(state, combatant, kind)
        if reason is not None:
            raise Rejected(reason)
        penalty = self.penalty_dice(combatant)
        decision.emit(
            ActionTaken(
                combatant=combatant_id,
                action=action,
                slot="full" if kind == "full" else "action",
                rule=rule,
                details={"action_number": combatant.actions_used + 1, "declared": combatant.declared_actions, "penalty_dice": penalty},
            )
        )
        return penalty

    def action_limit(self, state: RonD6State, combatant: RonD6Combatant, fate_point: bool = False) -> int:
        """R6-06 (Massive Damage R6-23 caps it at one action)."""
        if "massive_damage" in combatant.conditions:
            return 1
        return rules.multi_action_limit(combatant.attributes.get("Agility", "2D"), combatant.talents.get("Quickness", 0), fate_point)

    def declare_actions(self, decision: Decision, combatant_id: str, count: int, *, fate_point: bool = False, off_turn: bool = False) -> None:
        state: RonD6State = decision.state  # type: ignore[assignment]
        combatant = self.combatant(state, combatant_id)
        require(combatant.declared_actions == 0, f"{combatant_id} already declared {combatant.declared_actions} actions this round (R6-05)")
        require(count >= 1, f"declare at least one action, not {count} (R6-05)")
        if fate_point:
            require(combatant.fate_points > 0, f"{combatant_id} has no Fate Point to spend (R6-06)")
            require("confused" not in combatant.conditions, f"{combatant_id} is Confused and cannot spend Fate Points (R6-22)")
        limit = self.action_limit(state, combatant, fate_point)
        if count > limit:
            why = "Massive Damage allows one action (R6-23)" if "massive_damage" in combatant.conditions else (
                f"Multi-Action Limit: Agility {combatant.attributes.get('Agility', '2D')}"
                f" + Quickness {min(3, combatant.talents.get('Quickness', 0))}{' x2 (Fate Point)' if fate_point else ''}, R6-06"
            )
            raise Rejected(f"{combatant_id} can declare at most {limit} actions ({why})")
        lost = min(combatant.actions_lost, count)
        decision.emit(
            R6ActionsDeclared(
                combatant=combatant_id,
                round=state.round,
                count=count,
                limit=limit,
                penalty_dice=rules.multi_action_penalty(count),
                fate_point=fate_point,
                lost=lost,
                off_turn=off_turn,
                rule=rules.R_LIMIT if fate_point else rules.R_MULTI,
            )
        )

    # ================================================================ command dispatch

    def decide_action(self, decision: Decision, command: Command, dice: Dice) -> None:
        state: RonD6State = decision.state  # type: ignore[assignment]
        if isinstance(command, AUX_COMMANDS):
            if command.actor in (SEQUENCER, GM) or state.active != command.actor:
                _aux.decide_aux_command(self, decision, command, dice)  # out of turn: the aux rules validate
                return
            self.declare(decision, command, dice)
            return
        spec = actions.SPECS.get(type(command))
        if spec is None:
            super().decide_action(decision, command, dice)
            return
        if spec.sequencer_only:
            require(command.actor in (SEQUENCER, GM), f"{type(command).__name__} is the GM's (sequencer's) command")
            spec.perform(self, decision, command.actor, command, dice, [])
            return
        self.require_turn(state, command.actor)
        if not spec.is_action:
            spec.check(self, state, command.actor, command)
            spec.perform(self, decision, command.actor, command, dice, [])
            return
        self.declare(decision, command, dice)

    def declare(self, decision: Decision, command: Command, dice: Dice) -> None:
        """Declare an action (R6-08): validate it, record the declaration, give
        waiting combatants their window, else resolve it at once."""
        state: RonD6State = decision.state  # type: ignore[assignment]
        if isinstance(command, R6Move):
            command = with_route(state, command)  # the declaration records the path the options showed
        if state.combatants[command.actor].declared_actions == 0 and not self.interrupting(state, command.actor):
            # The common case in one step (R6-05): an action taken before the
            # round's declaration declares one action, the round's only one,
            # then is taken; checked on a copy first, so a refusal changes nothing.
            trial = Decision(self, state)
            self.declare_actions(trial, command.actor, 1)
            self.check_command(trial.state, command.actor, command)  # type: ignore[arg-type]
            self.declare_actions(decision, command.actor, 1)
        self.check_command(state, command.actor, command)
        payload = msgspec.to_builtins(command)
        if isinstance(command, R6Move) and command.path:
            # The path is what the engine walks; a move by destination records it, not "to".
            payload.pop("to", None)
            payload.pop("waypoints", None)
        decision.emit(R6ActionDeclared(combatant=command.actor, action=action_name(command), command=payload))
        step = {"step": "resolve", "command": payload, "interrupt": False}
        # Declaring a Wait is not something to interrupt: the waiter does nothing yet.
        if not isinstance(command, R6Wait) and reactions.open_wait_window(self, decision, command.actor, [step]):
            return
        self.run_steps(decision, [step], dice)

    def interrupting(self, state: RonD6State, actor: str) -> bool:
        """Whether ``actor`` acts off its turn as a Wait interruption (R6-08)."""
        return state.interrupting == actor

    def check_command(self, state: RonD6State, actor: str, command: Command, *, interrupt: bool = False) -> None:
        """Validate an action command without rolling or changing anything."""
        if isinstance(command, AUX_COMMANDS):
            mover = self.combatant(state, actor)
            if mover.grappled_by and type(command).__name__ in GRAPPLE_BLOCKS:
                raise Rejected(f"{actor} is grappled by {mover.grappled_by} and cannot move: Escape first (R6-30)")
            # The aux rules' checks, on the state itself: they all come before
            # the first roll or event, where the probe stops (nothing is changed).
            was_interrupting = state.interrupting
            if interrupt:
                state.interrupting = actor
            try:
                _aux.decide_aux_command(self, CheckingDecision(self, state), command, _ProbeDice())
            except ChecksPassed:
                pass
            finally:
                state.interrupting = was_interrupting
            return
        spec = actions.SPECS.get(type(command))
        if spec is None or not spec.is_action:
            raise Rejected(f"{type(command).__name__} is not an action that can be declared")
        spec.check(self, state, actor, command)

    def parse_command(self, payload: dict[str, Any]) -> Command:
        return msgspec.convert(payload, typing.Union[self.command_types])  # type: ignore[arg-type]

    # ================================================================ the step queue

    def run_steps(self, decision: Decision, queue: list[dict[str, Any]], dice: Dice) -> None:
        """Run pending steps in order until done or until one opens a window
        (which then carries the rest of the queue in its continuation)."""
        queue = list(queue)
        while queue:
            state = decision.state
            if state.ended or state.window is not None or len(state.standing_sides()) <= 1:
                return
            step = queue.pop(0)
            kind = step["step"]
            if kind == "resolve":
                self.resolve_step(decision, step, queue, dice)
            else:
                combat.STEPS[kind](self, decision, step, queue, dice)

    def resolve_step(self, decision: Decision, step: dict[str, Any], queue: list[dict[str, Any]], dice: Dice) -> None:
        """Carry out a declared action, as a transaction: if it is no longer
        possible (something changed since it was declared), record it as lost.

        An action's `actions.Spec` refuses only before its first event, so it
        runs on the decision itself (no copy of the state); the aux rules'
        commands may still be refused after one (a setting read after a roll),
        so they run on a trial copy."""
        command = self.parse_command(step["command"])
        actor = command.actor
        pending = list(queue)
        if isinstance(command, AUX_COMMANDS):
            def act(trial: Decision) -> None:
                _aux.decide_aux_command(self, trial, command, dice)
        else:
            spec = actions.SPECS[type(command)]

            def act(trial: Decision) -> None:
                spec.check(self, trial.state, actor, command)
                spec.perform(self, trial, actor, command, dice, pending)
        lost = reactions.transaction(self, decision, act, in_place=not isinstance(command, AUX_COMMANDS),
                                     interrupting=actor if step.get("interrupt") else "")
        if lost is not None:
            decision.emit(R6ActionLost(combatant=actor, action=action_name(command), reason=lost))
            return
        queue[:] = pending

    # ================================================================ reactions

    def validate_claim(self, state: Any, window: ReactionWindow, claim: Any) -> None:
        reactions.validate_claim(self, state, window, claim)

    def resolve_reaction(self, decision: Decision, window: ReactionWindow, claim: OrderedClaim, dice: Dice) -> str | None:
        return reactions.resolve_reaction(self, decision, window, claim, dice)

    def after_window(self, decision: Decision, window: ReactionWindow, dice: Dice) -> None:
        combat.after_window(self, decision, window, dice)

    # ================================================================ damage (R6-19..23)

    def apply_damage_total(
        self,
        decision: Decision,
        target_id: str,
        damage_total: int,
        *,
        source: str,
        roll: Any = None,
        rule: str = rules.R_DAMAGE,
        stun: bool = False,
        dice: Dice | None = None,
    ) -> None:
        """Compare a Damage Total with the target's Damage Resistance Total
        (R6-19/20) and apply Stunned, Wounds and their injury levels (R6-21/23).

        Pass ``dice`` so that reaching 3 Wounds rolls the Incapacitated test at
        once; without dice the test is rolled at the start of the target's next turn."""
        combat.apply_damage_total(self, decision, target_id, damage_total, source=source, roll=roll, rule=rule, stun=stun, dice=dice)

    # ================================================================ evolve

    def evolve_event(self, state: Any, event: Event) -> None:
        handler = _EVOLVERS.get(type(event))
        if handler is not None:
            handler(state, event)
        _flag_for_gm(state, event)
        _aux.evolve_aux_event(self, state, event)

    # ================================================================ what a combatant may do now (issue 9)

    def attack_reach_squares(self, state: Any, me: Any) -> float | None:
        """The farthest any weapon carried attacks, in Spaces: a ranged or thrown
        weapon's Long range, a melee weapon's reach, Point Blank unarmed (R6-14)."""
        reach = [1] + [w.ranges[-1] if w.ranges and w.kind in ("ranged", "thrown") else w.reach for w in me.weapons]
        return float(max(reach))

    def blocking_cover(self, state: Any, me: Any, enemy: Any) -> tuple[str, Any, str] | None:
        """R6-13 (house default): total cover blocks an attack."""
        here, there = tuple(me.position), tuple(enemy.position)
        return ("total", None, "R6-13") if actions.cover_level(state, there, here) == "total" else None

    def turn_options(self, state: Any, combatant: str) -> TurnOptions:
        return options.turn_options(self, state, combatant)

    def reaction_options(self, state: Any, window: ReactionWindow, combatant: str) -> list[ReactionOption]:
        return options.reaction_options(self, state, window, combatant)

    def preview_area(self, state: Any, command: Command) -> AreaPreview:
        require(isinstance(command, (R6HeadsDown, R6AreaAttack)), f"{type(command).__name__} has no area to preview")
        self.require_free_to_act(state, command.actor)
        if state.combatants[command.actor].declared_actions == 0 and not self.interrupting(state, command.actor):
            # Previewed as it would be taken: in one step, declaring the round's
            # only action first (R6-05, see `declare`); on a copy, nothing changes.
            trial = Decision(self, state)
            self.declare_actions(trial, command.actor, 1)
            state = trial.state
        if isinstance(command, R6AreaAttack):
            return areas.area_preview(self, state, command)
        return combat.heads_down_area(self, state, command)  # type: ignore[arg-type]

    # ================================================================ the GM's calls and adjustments

    def health(self, combatant: Any) -> dict[str, Any] | None:
        """A token's health: the injury level of its Wound count (R6-21), which counts up to death at 5."""
        wounds = int(combatant.wounds)
        level = "dead" if getattr(combatant, "dead", False) else rules.injury_level(wounds)
        return {"value": max(0, 5 - wounds), "max": 5, "label": level, "wounds": wounds}

    def gm_calls(self, state: Any) -> dict[str, str]:
        """Each Wild Die complication (R6-01) and Setback (R6-18/22) not yet ruled on."""
        return {flag["id"]: flag["text"] for flag in state.gm_flags if flag["id"] not in state.gm_rulings}

    def gm_call_rulings(self, state: Any, call: str) -> dict[str, Any]:
        """A Setback's rulings with an effect: "drops its weapon" empties its
        hands, "resolved" ends it (R6-22); any other words are recorded. A
        complication's consequence is the GM's own words (R6-01)."""
        flag = next((f for f in state.gm_flags if f["id"] == call), None)
        if flag is not None and flag["kind"] == "setback":
            return {"rulings": ["drops its weapon", "resolved"], "free_text": True}
        return {"rulings": [], "free_text": True}

    def settle_gm_call(self, decision: Decision, call: str, ruling: str, dice: Dice) -> None:
        """GMRuled records the ruling. A Setback "lasts only until the complication
        has been resolved" (R6-22): a ruling that starts with "resolved" ends it,
        and "drops its weapon" (the text's first example) empties its hands."""
        state: RonD6State = decision.state  # type: ignore[assignment]
        flag = next(f for f in state.gm_flags if f["id"] == call)
        combatant = state.combatants.get(flag["combatant"])
        if flag["kind"] != "setback" or combatant is None:
            return
        words = ruling.strip().lower()
        if "drops its weapon" in words and combatant.readied:
            decision.emit(StateAdjusted(combatant=combatant.id, changes={"readied": []}, reason=f"Setback: {ruling}", rule=rules.R_CONDITIONS))
        if words.startswith("resolved") and "setback" in combatant.conditions:
            decision.emit(ConditionRemoved(combatant=combatant.id, condition="setback", reason=f"the GM: {ruling}", rule=rules.R_CONDITIONS))

    # A revival (the GM's Revive) ends what the injuries brought (R6-21).
    revive_removes = ("dead", "unconscious", "mortally_wounded", "incapacitation_test")
    gm_vital_conditions = frozenset({"dead", "mortally_wounded"})

    def gm_vital_fields(self) -> set[str]:
        return super().gm_vital_fields() | {"dead", "mortal_minutes"}

    def life(self, combatant: Any) -> str:
        """R6-21: dead at 5 Wounds (or once killed), down when Mortally Wounded (4)."""
        if combatant.dead or "dead" in combatant.conditions or combatant.wounds >= 5:
            return "dead"
        return "down" if combatant.wounds >= 4 else "up"

    def revive_changes(self, state: Any, combatant: Any, requested: dict[str, Any]) -> dict[str, Any]:
        """Back in the fight at 3 Wounds, Incapacitated (the house default the
        campaign's revival uses, R6-21), or at the Wounds the GM sets with it."""
        changes = super().revive_changes(state, combatant, requested)
        asked = requested.get("wounds")
        wounds = asked if isinstance(asked, int) and not isinstance(asked, bool) else min(combatant.wounds, 3)
        changes.update({"dead": False, "mortal_minutes": 0})
        if "wounds" not in requested and wounds != combatant.wounds:
            changes["wounds"] = wounds
        conditions = changes.setdefault("conditions", {"add": [], "remove": []})
        if wounds >= 3 and "incapacitated" not in combatant.conditions:
            conditions["add"].append("incapacitated")
        elif wounds < 3 and "incapacitated" in combatant.conditions:
            conditions["remove"].append("incapacitated")
        if not conditions["add"] and not conditions["remove"]:
            del changes["conditions"]
        return changes

    def check_gm_change(self, state: Any, combatant: Any, field: str, value: Any) -> None:
        """Ranges of the fields the GM may set (docs/systems/rond6.md)."""
        counts = {"wounds": (0, 4), "fatigue": (0, int(state.settings.get("fatigue_limit", 3)) + 1),
                  "character_points": (0, None), "fate_points": (0, None), "actions_used": (0, combatant.declared_actions),
                  "actions_lost": (0, None), "declared_actions": (0, self.action_limit(state, combatant, True)),
                  "mortal_minutes": (0, None), "free_actions_this_turn": (0, None), "defense_bonus": (0, None)}
        if field in counts:
            low, high = counts[field]
            require(isinstance(value, int) and value >= low and (high is None or value <= high),
                    f"{field} must be a whole number from {low}" + (f" to {high}" if high is not None else " up") + f", not {value!r}")
        elif field in ("ammo", "reloads"):
            weapons = {w.id: w for w in combatant.weapons}
            for weapon_id, count in value.items():
                require(weapon_id in weapons, f"{field}: {combatant.id} has no weapon {weapon_id!r} ({', '.join(weapons) or 'none'})")
                top = weapons[weapon_id].capacity if field == "ammo" else None
                require(count >= 0 and (top is None or count <= top),
                        f"{field}[{weapon_id}] must be from 0" + (f" to its capacity {top}" if top is not None else " up") + f", not {count}")
        elif field == "readied":
            known = {w.id for w in combatant.weapons}
            require(len(value) <= 2 and all(w in known for w in value), f"readied lists at most two of {combatant.id}'s weapons ({', '.join(sorted(known))})")
        elif field in ("attributes", "skills", "weapons", "talents"):
            raise Rejected(f"{field} are part of the sheet: the GM cannot change them mid-fight")

    # ================================================================ AI

    def choose_command(self, state: Any, combatant: str) -> Command | None:
        return ai.choose_command(self, state, combatant)


_WHOLE_NUMBERS = ("reaction_declares_actions", "armor_points_per_die", "interaction_range", "heads_down_radius",
                  "fatigue_limit", "max_free_actions", "surprise_rounds")


def settings_problem(settings: dict[str, Any]) -> str | None:
    """What is wrong with the RonD6 settings of an encounter, or None."""
    if settings.get("complication_rule") not in COMPLICATION_RULES:
        return f"complication_rule must be one of {', '.join(COMPLICATION_RULES)}, not {settings.get('complication_rule')!r}"
    for key in _WHOLE_NUMBERS:
        value = settings.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            return f"{key} must be a whole number >= 0, not {value!r}"
    ladder = settings.get("difficulty_ladder")
    if not isinstance(ladder, dict) or "standard" not in ladder or not all(isinstance(v, int) for v in ladder.values()):
        return "difficulty_ladder must map level names (including 'standard') to numbers"
    cover = settings.get("cover_defense")
    if not isinstance(cover, dict) or not all(isinstance(v, int) and not isinstance(v, bool) for v in cover.values()):
        return "cover_defense must map cover levels to whole numbers"
    shots = settings.get("called_shots")
    if not isinstance(shots, dict):
        return "called_shots must map locations to {modifier, damage_dice, effect}"
    for location, entry in shots.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("modifier"), int) or not (
            entry.get("damage_dice") is None or isinstance(entry.get("damage_dice"), int)
        ):
            return f"called_shots[{location!r}] needs an integer modifier and damage_dice (a number, or null for no damage)"
    for flag in ("initiative_groups", "resistance_window", "result_points_to_damage", "wild_die_on_damage"):
        if not isinstance(settings.get(flag), bool):
            return f"{flag} must be true or false, not {settings.get(flag)!r}"
    return None


def action_name(command: Command) -> str:
    return type(command).__struct_config__.tag  # type: ignore[return-value]


class _ProbeDice(Dice):
    """Dice that stop a probe at its first roll: validation is over."""

    def roll(self, sides: int) -> Any:
        raise ChecksPassed


# ---------------------------------------------------------------- evolve handlers


def _flag_for_gm(state: RonD6State, event: Event) -> None:
    """Record what the rules leave to the GM: a Wild Die complication on any roll
    an event carries (R6-01), and each Setback applied (R6-18/22)."""
    if isinstance(event, ConditionApplied) and event.condition == "setback":
        number = len(state.gm_flags) + 1
        state.gm_flags.append({"id": f"setback-{number}", "kind": "setback", "combatant": event.combatant,
                               "text": f"{event.combatant} suffers a Setback (round {state.round}): introduce a minor complication "
                                       "(a dropped weapon, lost footing...), never damage; it lasts until resolved (R6-22)"})
        return
    roll = getattr(event, "roll", None)
    if isinstance(roll, Roll) and roll.details.get("complication"):
        who = next((str(getattr(event, name)) for name in ("combatant", "attacker", "source", "healer") if getattr(event, name, "")), "")
        number = len(state.gm_flags) + 1
        state.gm_flags.append({"id": f"complication-{number}", "kind": "complication", "combatant": who,
                               "text": f"{who or 'someone'}'s Wild Die showed 1 on {roll.purpose} (round {state.round}): "
                                       f"a complication; the dice rule '{roll.details.get('complication_rule')}' is applied, "
                                       "the GM may add what goes wrong (R6-01)"})


def _on_round(state: RonD6State, event: RoundStarted) -> None:
    # Unused actions are lost at the end of the round (R6-08); Wait ends with it.
    for combatant in state.combatants.values():
        combatant.actions_used_last_round = combatant.actions_used
        combatant.declared_actions = 0
        combatant.actions_used = 0
        combatant.full_action = False
        combatant.waiting = False


def _on_turn(state: RonD6State, event: TurnStarted) -> None:
    state.combatants[event.combatant].free_actions_this_turn = 0


def _on_declared(state: RonD6State, event: R6ActionsDeclared) -> None:
    combatant = state.combatants[event.combatant]
    combatant.declared_actions = event.count
    combatant.actions_used += event.lost
    combatant.actions_lost -= event.lost
    if event.fate_point:
        combatant.fate_points -= 1
        combatant.action_limit_doubled_round = event.round


def _on_action(state: RonD6State, event: ActionTaken) -> None:
    combatant = state.combatants[event.combatant]
    if event.slot in ("action", "full"):
        combatant.actions_used += 1
        if event.slot == "full":
            combatant.full_action = True
        if event.action == "wait":
            combatant.waiting = True
    elif event.slot == "free":
        combatant.free_actions_this_turn += 1


def _on_attack(state: RonD6State, event: AttackResolved) -> None:
    if event.details.get("surprise_spent"):
        state.combatants[event.target].surprise_spent = True


def _on_damage(state: RonD6State, event: DamageDealt) -> None:
    if "wounds_total" in event.details and event.target in state.combatants:
        combatant = state.combatants[event.target]
        combatant.wounds = event.details["wounds_total"]
        combatant.resistance_boost = {}


def _on_condition(state: RonD6State, event: ConditionApplied) -> None:
    combatant = state.combatants[event.combatant]
    if event.condition == "stunned":
        combatant.stunned_round = state.round
    elif event.condition == "dead":
        combatant.dead = True
    elif event.condition == "grappled":
        combatant.grappled_by = event.details.get("by", "")
    elif event.condition == "fatigued":
        combatant.fatigue = int(event.details.get("level", combatant.fatigue + 1))
    elif event.condition == "mortally_wounded":
        combatant.mortal_minutes = 0


def _on_condition_removed(state: RonD6State, event: ConditionRemoved) -> None:
    combatant = state.combatants[event.combatant]
    if event.condition == "grappled":
        combatant.grappled_by = ""
    elif event.condition == "fatigued":
        combatant.fatigue = 0


_ADJUSTABLE = frozenset(
    {"ammo", "reloads", "readied", "active_defense", "defense_bonus", "set_weapon", "actions_used",
     "actions_lost", "mortal_minutes", "surprise_spent", "fatigue"}
)


def _on_adjusted(state: RonD6State, event: StateAdjusted) -> None:
    combatant = state.combatants.get(event.combatant)
    if combatant is None:
        return
    for field, value in event.changes.items():
        if field in _ADJUSTABLE:
            setattr(combatant, field, msgspec.convert(value, type(getattr(combatant, field))))


def _on_defense(state: RonD6State, event: R6DefenseRolled) -> None:
    combatant = state.combatants[event.combatant]
    combatant.active_defense = {**combatant.active_defense, event.skill: event.roll.total}


def _on_boost(state: RonD6State, event: R6ResistanceBoosted) -> None:
    combatant = state.combatants[event.combatant]
    combatant.character_points -= event.character_points
    if event.fate_point:
        combatant.fate_points -= 1
    combatant.resistance_boost = {
        "window": event.window,
        "dice": event.roll.total if event.roll is not None else 0,
        "character_points": event.character_points,
        "fate_point": event.fate_point,
    }


def _on_interrupt_queued(state: RonD6State, event: R6InterruptQueued) -> None:
    state.combatants[event.combatant].waiting = False
    state.queued_interrupts.append(dict(event.command))


def _on_interrupts_begun(state: RonD6State, event: R6InterruptsBegun) -> None:
    state.queued_interrupts = []


def _on_down(state: RonD6State, event: CombatantDown) -> None:
    state.combatants[event.combatant].waiting = False


_EVOLVERS: dict[type, Any] = {
    RoundStarted: _on_round,
    TurnStarted: _on_turn,
    R6ActionsDeclared: _on_declared,
    ActionTaken: _on_action,
    AttackResolved: _on_attack,
    DamageDealt: _on_damage,
    ConditionApplied: _on_condition,
    ConditionRemoved: _on_condition_removed,
    StateAdjusted: _on_adjusted,
    R6DefenseRolled: _on_defense,
    R6ResistanceBoosted: _on_boost,
    R6InterruptQueued: _on_interrupt_queued,
    R6InterruptsBegun: _on_interrupts_begun,
    CombatantDown: _on_down,
}

SYSTEM = RonD6System()
