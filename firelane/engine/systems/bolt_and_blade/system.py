"""The Bolt & Blade rule system on `BaseRuleSystem`: rolls, combat math, hooks.

This module holds the class and the shared helpers every action uses (checks,
saves, attack rolls, Defense, damage, sight, cover); the actions themselves
live in `actions`, movement and fire lanes in `movement`, reactions in
`reactions`, the AI in `ai`. See the package docstring for the house defaults.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any, ClassVar

import msgspec

from firelane.engine.core import BaseRuleSystem, Decision, Rejected, require
from firelane.engine.dice import Dice
from firelane.engine.grid import Grid, Square, distance, feature_cover_level
from firelane.engine.state import EncounterState, ReactionWindow
from firelane.engine.systems.bolt_and_blade import areas
from firelane.engine.systems.bolt_and_blade.rules import (
    DEFAULT_PROFICIENCY_TABLE,
    D20Result,
    cover_bonus,
    d20_notes,
    damage_dice_count,
    improved_cover,
    opposed_winner,
    parse_dice,
    proficiency_bonus,
    range_band,
    roll_d20,
)
from firelane.engine.systems.bolt_and_blade.state import BoltAndBladeCombatant, BoltAndBladeState, Weapon, build_sheet
from firelane.events.bolt_and_blade_schemas import BB_COMMANDS, BB_EVENTS, BBMarkMoved, BBMovementStopped, BBOpposedCheck
from firelane.events.schemas import (
    EncounterSetup,
    ActionTaken,
    AttackResolved,
    CombatantSetup,
    Command,
    ConditionApplied,
    ConditionRemoved,
    DamageDealt,
    Event,
    InitiativeEntry,
    InitiativeRolled,
    Modifier,
    Moved,
    OrderedClaim,
    Roll,
    StateAdjusted,
    TestRolled,
    TurnStarted,
)

# Conditions this system uses (ConditionApplied.condition).
PINNED = "pinned"
EXPOSED = "exposed"
AIMING = "aiming"
OVERWATCH = "overwatch"
EVADING = "evading"
DISENGAGED = "disengaged"
HELPED = "helped"
LAS_OVERHEATED = "las_overheated"
OVERHEATED = "overheated"
STUNNED = "stunned"
MARK_PREFIX = "mark:"

BB_DEFAULT_SETTINGS: dict[str, Any] = {
    "proficiency_table": [list(row) for row in DEFAULT_PROFICIENCY_TABLE],  # BB-CORE-03
    "defense_base": 10,  # BB-CORE-08: Defense = base + armour + Agility + cover + other sources
    "cover_bonus": {"light": 2, "heavy": 5},  # BB-CMB-04; total cover cannot be targeted
    "cover_against_melee": False,  # BB-CMB-04: cover counts against ranged attacks only
    "exposed_attack_bonus": 2,  # BB-CMB-05
    "opposed_tie": "defender",  # BB-CORE-10: the side not acting holds a tie
    "movement_ft": 30,  # BB-CMB-06: Movement when a sheet names none
    "pinned_move_multiplier": 2,  # BB-CMB-19: leaving cover / crossing open ground while Pinned
    "difficult_move_multiplier": 2,  # difficult terrain squares
    "enter_cover_cost_ft": 5,  # BB-CMB-29
    "reactive_fire_choice": "continue",  # BB-CMB-12: a mover's default when Reactive Fire damages it
    "reactive_fire_pin": "attacker_next_turn",  # BB-CMB-12: stopping pins until the attacker's next turn starts
    "overwatch_radius_ft": 10,  # BB-CMB-13: the watched area around the chosen point
    "suppress_area_ft": 10,  # BB-CMB-18: the area fits in a box this wide
    "suppress_ammo": 3,  # BB-CMB-20
    "aim_bonus": 2,  # BB-CMB-21
    "aim_after_minor_move_in_cover": False,  # BB-CMB-21 GM option: Aim after <= 5 ft of movement ending in cover
    "search_dc": 12,  # BB-CORE-17 Search
    "overheat_damage": "1d6",  # BB-CORE-14: an overheating weapon burns its wielder
    "perils_dc": 12,  # BB-CORE-14: Willpower save against Perils
    "perils_damage": "1d6",
    "mark_attack_bonus": 2,  # BB-CMB-23: the marker's attacks against its mark's bearer
}

SETTING_TYPES_CHECKED = ("opposed_tie", "reactive_fire_choice")


@lru_cache(maxsize=64)
def _grid_for(terrain_json: bytes) -> Grid:
    from firelane.events.schemas import Terrain

    return Grid(msgspec.json.decode(terrain_json, type=Terrain))


_last_grid: list[Any] = [None, None]


def grid_of(state: EncounterState) -> Grid:
    """A Grid for the state's terrain, cached: terrain never changes in an encounter."""
    if _last_grid[0] is state.terrain:
        return _last_grid[1]  # type: ignore[no-any-return]
    grid = _grid_for(msgspec.json.encode(state.terrain))
    _last_grid[0], _last_grid[1] = state.terrain, grid
    return grid


class AttackPlan(msgspec.Struct, frozen=True, kw_only=True):
    """Everything known about an attack before its d20 is rolled."""

    attacker: str
    target: str
    weapon: Weapon
    modifiers: list[Modifier]
    advantage: list[str]
    disadvantage: list[str]
    defense: Roll
    band: str
    exposed_bonus: int
    consumes: list[str]  # conditions the roll uses up (aiming, helped)


class AttackOutcome(msgspec.Struct, frozen=True, kw_only=True):
    plan: AttackPlan
    roll: Roll
    natural: int
    would_hit: bool
    critical: bool


_COMBATANT_FIELD_TYPES: dict[str, Any] = {f.name: f.type for f in msgspec.structs.fields(BoltAndBladeCombatant)}


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
    }
    reaction_resets: ClassVar[str] = "own_turn"  # BB-CMB-01
    initiative_each_round: ClassVar[bool] = False
    default_settings: ClassVar[dict[str, Any]] = {**BB_DEFAULT_SETTINGS, **getattr(areas, "AREA_DEFAULT_SETTINGS", {})}

    # ------------------------------------------------------------ setup

    def resolve_setup(self, setup: EncounterSetup) -> EncounterSetup:
        """Inline the catalogue's weapon and armour records into every sheet, so
        the encounter's log carries them (the sample data file may change later)."""
        from firelane.engine.systems.bolt_and_blade.data import load_data

        combatants = []
        for combatant in setup.combatants:
            try:
                sheet = build_sheet(combatant.sheet, load_data())
            except ValueError as exc:
                raise Rejected(f"combatant {combatant.id!r} has an invalid sheet: {exc}") from None
            combatants.append(msgspec.structs.replace(combatant, sheet=sheet))
        return msgspec.structs.replace(setup, combatants=combatants)

    def build_combatant(self, setup: CombatantSetup, settings: dict[str, Any]) -> BoltAndBladeCombatant:
        # Sheets arrive resolved (resolve_setup): no catalogue is consulted here.
        try:
            sheet = build_sheet(setup.sheet, {})
        except ValueError as exc:
            raise Rejected(f"combatant {setup.id!r} has an invalid sheet: {exc}") from None
        sheet.setdefault("movement_ft", settings.get("movement_ft", 30))
        try:
            combatant = msgspec.convert(
                {**sheet, "id": setup.id, "name": setup.name, "side": setup.side, "position": setup.position, "policy": setup.policy},
                BoltAndBladeCombatant,
            )
        except msgspec.ValidationError as exc:
            raise Rejected(f"combatant {setup.id!r} has an invalid sheet: {exc}") from None
        if combatant.weapons and combatant.weapon(combatant.ready_weapon) is None:
            raise Rejected(f"combatant {setup.id!r} has an invalid sheet: ready weapon {combatant.ready_weapon!r} is not carried")
        return combatant

    def roll_initiative(self, decision: Decision, dice: Dice) -> InitiativeRolled:
        """House default: d20 + Agility modifier once at the start; ties go to the
        higher Agility modifier, then the combatant ID."""
        entries = []
        for cid in sorted(decision.state.combatants):
            combatant = self.combatant(decision.state, cid)
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

    # ------------------------------------------------------------ lookups

    @staticmethod
    def combatant(state: EncounterState, cid: str) -> BoltAndBladeCombatant:
        return state.combatants[cid]  # type: ignore[return-value]

    def proficiency(self, state: EncounterState, combatant: BoltAndBladeCombatant) -> int:
        return proficiency_bonus(combatant.level, state.settings.get("proficiency_table", DEFAULT_PROFICIENCY_TABLE))

    def sees(self, state: EncounterState, a: Square, b: Square) -> bool:
        """Line of sight: no wall between (grid) and no sight-blocking zone (smoke)."""
        return self.sight_test(state)(a, b)

    def sight_test(self, state: EncounterState) -> Callable[[Square, Square], bool]:
        """`sees` for one state, with its smoke gathered once: for callers (the
        AI) asking about many lines in a state that does not change meanwhile.
        Sight is never clearer than the walls allow; with no `sight_blockers`
        it is exactly the grid's line of sight."""
        line_of_sight = grid_of(state).line_of_sight
        smoke = self.sight_blockers(state)
        if not smoke:
            return line_of_sight
        return lambda a, b: line_of_sight(a, b) and not areas.line_touches(smoke, a, b)

    def sight_blockers(self, state: EncounterState) -> set[Square]:
        """Squares that block sight besides the walls: sight-blocking zones (smoke)."""
        return areas.sight_blocking_squares(state)

    def feet(self, state: EncounterState, a: Square, b: Square) -> float:
        return distance(a, b) * state.terrain.square_size

    def standing_enemies(self, state: EncounterState, cid: str) -> list[BoltAndBladeCombatant]:
        me = state.combatants[cid]
        return [
            self.combatant(state, other)
            for other in sorted(state.combatants)
            if state.combatants[other].side != me.side and not state.combatants[other].out_of_fight and state.combatants[other].position is not None
        ]

    def melee_reach_squares(self, state: EncounterState, combatant: BoltAndBladeCombatant) -> int:
        """Melee reach in squares: the longest reach of a carried melee weapon, 5 ft unarmed."""
        reach_ft = max([w.range[0] for w in combatant.weapons if w.is_melee] or [5])
        return max(1, int(reach_ft // state.terrain.square_size))

    def engaged(self, state: EncounterState, cid: str) -> bool:
        """An enemy stands within the combatant's melee reach (BB-CMB-16)."""
        me = self.combatant(state, cid)
        reach = self.melee_reach_squares(state, me)
        return any(distance(me.position, e.position) <= reach for e in self.standing_enemies(state, cid))  # type: ignore[arg-type]

    def best_melee_weapon(self, combatant: BoltAndBladeCombatant) -> Weapon | None:
        melee = [w for w in combatant.weapons if w.is_melee]
        if not melee:
            return None

        def average(weapon: Weapon) -> float:
            expression = parse_dice(weapon.damage)
            return expression.count * (expression.sides + 1) / 2 + expression.bonus

        return max(melee, key=lambda w: (average(w), w.name))

    def weapon_problem(self, state: EncounterState, combatant: BoltAndBladeCombatant, weapon: Weapon, *, reactive: bool = False) -> str | None:
        """Why this weapon cannot shoot now, or None."""
        if weapon.name in combatant.jammed:
            return f"{weapon.name} is jammed: Reload to clear it"
        if f"{OVERHEATED}:{weapon.name}" in combatant.conditions:
            return f"{weapon.name} has overheated"
        if weapon.magazine and combatant.ammo.get(weapon.name, 0) <= 0:
            return f"{weapon.name} is out of ammunition: Reload"
        if reactive and weapon.has("las") and LAS_OVERHEATED in combatant.conditions:
            return f"{weapon.name} runs hot after suppressing: no Reactive Fire until the start of {combatant.id}'s next turn (BB-CMB-20)"
        return None

    # ------------------------------------------------------------ cover and Defense

    def cover_against(self, state: EncounterState, target: BoltAndBladeCombatant, attacker_square: Square) -> tuple[str, str]:
        """(cover level, how) the target has against an attacker at ``attacker_square``.

        Exposed targets cannot benefit from cover (BB-CMB-05). Terrain cover is
        directional (BB-CMB-04); Take Cover improves it one step (BB-CMB-30),
        to total only behind cover marked as fully blocking sight ("heavy_tall").
        """
        if EXPOSED in target.conditions:
            return self.cover_behind(target, None)  # whatever the terrain
        here: Square = target.position  # type: ignore[assignment]
        feature, _level = grid_of(state).cover_facing(here, attacker_square)
        return self.cover_behind(target, feature.level if feature is not None else None)

    def cover_behind(self, target: BoltAndBladeCombatant, feature_level: str | None) -> tuple[str, str]:
        """`cover_against` when the strongest cover on the target's square facing
        the attacker is a feature of ``feature_level`` as written ("heavy_tall";
        None: no feature faces the attacker)."""
        if EXPOSED in target.conditions:
            return "none", "exposed: cannot benefit from cover"
        level = feature_cover_level(feature_level)
        how = f"{level} cover facing the attacker" if feature_level is not None else "no cover facing the attacker"
        if target.taking_cover:
            improved = improved_cover(level, blocks_sight=feature_level == "heavy_tall")
            if improved != level:
                how = f"took cover: {level} -> {improved}"
                level = improved
        return level, how

    def defense_roll(self, state: EncounterState, target: BoltAndBladeCombatant, attacker_square: Square, *, ranged: bool) -> Roll:
        """Defense as a sum of named sources, each with its rule ID (BB-CORE-08)."""
        counts_cover = ranged or state.settings.get("cover_against_melee", False)
        return self.defense_with_cover(state, target, self.cover_against(state, target, attacker_square) if counts_cover else None)

    def defense_with_cover(self, state: EncounterState, target: BoltAndBladeCombatant, cover: tuple[str, str] | None) -> Roll:
        """`defense_roll` given the target's (cover level, how) from `cover_against`,
        or None when cover does not count. The total depends on the level alone."""
        settings = state.settings
        terms = [
            Modifier(source="base Defense", rule="BB-CORE-08", value=int(settings.get("defense_base", 10))),
            Modifier(source=f"armour: {target.armour}", rule="BB-CORE-08", value=target.armour_defense),
            Modifier(source="Agility modifier", rule="BB-CORE-08", value=target.modifier("agility")),
        ]
        notes: list[str] = []
        if cover is not None:
            level, how = cover
            notes.append(how)
            if level in ("light", "heavy"):
                bonuses = {**BB_DEFAULT_SETTINGS["cover_bonus"], **settings.get("cover_bonus", {})}
                terms.append(Modifier(source=f"{level} cover", rule="BB-CMB-04", value=cover_bonus(level, bonuses)))
        for extra in target.defense_sources:
            terms.append(Modifier(source=f"{extra.kind}: {extra.source}", rule="BB-CORE-08", value=extra.value))
        return Roll(purpose=f"Defense of {target.id}", rule="BB-CORE-08", dice=[], modifiers=terms, total=sum(t.value for t in terms), notes=notes)

    # ------------------------------------------------------------ checks and saves

    def _test_roll(
        self,
        combatant: BoltAndBladeCombatant,
        d20: D20Result,
        modifiers: list[Modifier],
        dc: int,
        *,
        purpose: str,
        rule: str,
    ) -> Roll:
        """A check or save roll: natural 20 / 1 are flagged, never automatic (BB-CORE-13, -15)."""
        natural = d20.natural
        total = natural + sum(m.value for m in modifiers)
        success = total >= dc
        notes = d20_notes(d20)
        details: dict[str, Any] = {"natural": natural, "mode": d20.mode, "dc": dc}
        if natural == 20:
            details["best_outcome"] = True
            notes.append("natural 20: not an automatic success; the best outcome where success is plausible (BB-CORE-13)")
        if natural == 1:
            details["complication"] = True
            notes.append("natural 1: not an automatic failure; invites a complication (BB-CORE-15)")
        return Roll(
            purpose=purpose,
            rule=rule,
            dice=d20.dice,
            kept=[d20.kept],
            modifiers=modifiers,
            total=total,
            target=dc,
            compare=">=",
            success=success,
            notes=notes,
            details=details,
        )

    def check_modifiers(self, state: EncounterState, combatant: BoltAndBladeCombatant, attribute: str, proficiency: str | None) -> list[Modifier]:
        modifiers = [Modifier(source=f"{attribute.title()} modifier", rule="BB-CORE-01", value=combatant.modifier(attribute))]
        if proficiency and proficiency in combatant.proficiencies:
            modifiers.append(Modifier(source=f"proficiency ({proficiency})", rule="BB-CORE-04", value=self.proficiency(state, combatant)))
        return modifiers

    def roll_check(
        self,
        decision: Decision,
        combatant_id: str,
        attribute: str,
        proficiency: str | None,
        dc: int,
        dice: Dice,
        *,
        purpose: str,
        advantage_sources: list[str] = [],
        disadvantage_sources: list[str] = [],
    ) -> TestRolled:
        """BB-CORE-01: d20 + attribute modifier + proficiency (if proficient) >= DC."""
        combatant = self.combatant(decision.state, combatant_id)
        modifiers = self.check_modifiers(decision.state, combatant, attribute, proficiency)
        d20 = roll_d20(dice, advantage_sources, disadvantage_sources)
        roll = self._test_roll(combatant, d20, modifiers, dc, purpose=purpose, rule="BB-CORE-01")
        event = TestRolled(combatant=combatant_id, test=f"{attribute} check" + (f" ({proficiency})" if proficiency else ""), roll=roll, success=bool(roll.success), details={"dc": dc})
        decision.emit(event)
        return event

    def save_modifiers(self, state: EncounterState, combatant: BoltAndBladeCombatant, attribute: str) -> list[Modifier]:
        """BB-CORE-06: modifier, proficiency if proficient, and the sheet's other save bonuses."""
        modifiers = [Modifier(source=f"{attribute.title()} modifier", rule="BB-CORE-06", value=combatant.modifier(attribute))]
        if attribute in combatant.save_proficiencies:
            modifiers.append(Modifier(source=f"proficient {attribute.title()} save", rule="BB-CORE-04", value=self.proficiency(state, combatant)))
        bonus = combatant.save_bonuses.get(attribute, 0)
        if bonus:
            modifiers.append(Modifier(source=f"{attribute.title()} save bonus (sheet)", rule="BB-CORE-06", value=bonus))
        return modifiers

    def roll_save(
        self,
        decision: Decision,
        combatant_id: str,
        attribute: str,
        dc: int,
        dice: Dice,
        *,
        rule: str,
        purpose: str,
        advantage_sources: list[str] = [],
        disadvantage_sources: list[str] = [],
    ) -> TestRolled:
        """A save (BB-CORE-06): d20 + save bonus >= DC; emits and returns a TestRolled."""
        combatant = self.combatant(decision.state, combatant_id)
        modifiers = self.save_modifiers(decision.state, combatant, attribute)
        d20 = roll_d20(dice, advantage_sources, disadvantage_sources)
        roll = self._test_roll(combatant, d20, modifiers, dc, purpose=purpose, rule=rule or "BB-CORE-06")
        event = TestRolled(combatant=combatant_id, test=f"{attribute} save", roll=roll, success=bool(roll.success), details={"dc": dc, "rule": "BB-CORE-06"})
        decision.emit(event)
        return event

    def opposed_check(
        self,
        decision: Decision,
        actor_id: str,
        defender_id: str,
        actor_skill: tuple[str, str | None],
        defender_skill: tuple[str, str | None],
        dice: Dice,
        *,
        purpose: str,
    ) -> BBOpposedCheck:
        """BB-CORE-10: both roll attribute + proficiency; higher wins; a tie goes
        to the side that holds (house default: the defender)."""
        state = decision.state
        rolls = []
        for cid, (attribute, proficiency) in ((actor_id, actor_skill), (defender_id, defender_skill)):
            combatant = self.combatant(state, cid)
            d20 = roll_d20(dice)
            rolls.append(self._test_roll(combatant, d20, self.check_modifiers(state, combatant, attribute, proficiency), 0, purpose=f"{purpose}: {cid}", rule="BB-CORE-10"))
        side, tie = opposed_winner(rolls[0].total, rolls[1].total, state.settings.get("opposed_tie", "defender"))
        strip = [msgspec.structs.replace(r, target=None, success=None) for r in rolls]
        event = BBOpposedCheck(actor=actor_id, defender=defender_id, actor_roll=strip[0], defender_roll=strip[1], winner=actor_id if side == "actor" else defender_id, tie=tie)
        decision.emit(event)
        return event

    # ------------------------------------------------------------ damage

    def roll_damage(
        self,
        decision: Decision,
        dice_expr: str,
        dice: Dice,
        *,
        modifiers: list[Modifier],
        rule: str,
        purpose: str,
        critical: bool = False,
    ) -> Roll:
        """Roll a damage expression ("2d6+3"). A critical rolls the dice twice and
        adds the modifiers once (BB-CORE-12). Never below 0."""
        try:
            expression = parse_dice(dice_expr)
        except ValueError as exc:
            raise Rejected(str(exc)) from None
        rolled = dice.roll_many(damage_dice_count(expression, critical), expression.sides) if expression.count else []
        terms = list(modifiers)
        if expression.bonus:
            terms.insert(0, Modifier(source=f"{dice_expr} bonus", rule=rule, value=expression.bonus))
        total = max(0, sum(d.face for d in rolled) + sum(t.value for t in terms))
        notes = [f"critical hit: {expression.count}d{expression.sides} rolled twice, modifiers once (BB-CORE-12)"] if critical else []
        return Roll(purpose=purpose, rule=rule, dice=rolled, modifiers=terms, total=total, notes=notes, details={"expression": dice_expr, "critical": critical})

    def apply_damage(self, decision: Decision, target_id: str, amount: int, *, source: str, roll: Roll | None, rule: str) -> None:
        """Emit DamageDealt with the Vitality left, and CombatantDown at 0 (BB-CORE-09)."""
        target = self.combatant(decision.state, target_id)
        remaining = max(0, target.vitality - amount)
        decision.emit(DamageDealt(target=target_id, source=source, amount=amount, roll=roll, rule=rule, remaining=remaining))
        if remaining == 0:
            self.down(decision, target_id, "Vitality 0: Down, out of the fight until aided", rule="BB-CORE-09")

    # ------------------------------------------------------------ action economy

    def spend_action(self, decision: Decision, combatant_id: str, slot: str = "action", *, action: str = "use wargear", rule: str = "BB-CORE-16", details: dict[str, Any] | None = None) -> None:
        """Spend the turn's Action or Bonus Action; reject if it is already spent (BB-CORE-16, BB-CMB-22)."""
        state = decision.state
        combatant = self.combatant(state, self.require_turn(state, combatant_id).id)
        if slot == "action":
            require(not combatant.action_used, f"{combatant_id} has already used its Action this turn")
        elif slot == "bonus":
            require(not combatant.bonus_used, f"{combatant_id} has already used its Bonus Action this turn (one per turn, BB-CMB-22)")
        else:
            raise Rejected(f"unknown action slot {slot!r}")
        decision.emit(ActionTaken(combatant=combatant_id, action=action, slot=slot, rule=rule, details=details or {}))

    # ------------------------------------------------------------ the areas module's host interface

    def area_item(self, state: EncounterState, combatant_id: str, name: str) -> dict[str, Any] | None:
        weapon = self.combatant(state, combatant_id).weapon(name)
        return msgspec.to_builtins(weapon) if weapon is not None else None  # type: ignore[no-any-return]

    def throw_modifiers(self, state: EncounterState, combatant_id: str, item_name: str) -> list[Modifier]:
        combatant = self.combatant(state, combatant_id)
        weapon = combatant.weapon(item_name)
        attribute = weapon.attack_attribute if weapon else "agility"
        modifiers = [Modifier(source=f"{attribute.title()} modifier", rule="BB-CORE-07", value=combatant.modifier(attribute))]
        if weapon is not None and self.proficient_with(combatant, weapon):
            modifiers.append(Modifier(source=f"proficiency ({weapon.category or weapon.name})", rule="BB-CORE-04", value=self.proficiency(state, combatant)))
        return modifiers

    def attack_advantage(self, state: EncounterState, combatant_id: str) -> tuple[list[str], list[str]]:
        """Advantage / Disadvantage that follow the attacker whatever the target (BB-CMB-19)."""
        combatant = self.combatant(state, combatant_id)
        disadvantage = []
        if PINNED in combatant.conditions:
            disadvantage.append("attacker is Pinned (BB-CMB-19)")
        return [], disadvantage

    def consume_item(self, decision: Decision, combatant_id: str, item_name: str) -> None:
        combatant = self.combatant(decision.state, combatant_id)
        weapon = combatant.weapon(item_name)
        require(weapon is not None, f"{combatant_id} does not carry {item_name!r}")
        if weapon.magazine:  # type: ignore[union-attr]
            left = combatant.ammo.get(item_name, 0)
            require(left > 0, f"{combatant_id} has no {item_name} left")
            decision.emit(StateAdjusted(combatant=combatant_id, changes={"ammo": {**combatant.ammo, item_name: left - 1}}, reason=f"used {item_name}", rule="BB-CORE-17"))

    # ------------------------------------------------------------ attacks

    @staticmethod
    def proficient_with(combatant: BoltAndBladeCombatant, weapon: Weapon) -> bool:
        return weapon.category in combatant.weapon_proficiencies or weapon.name in combatant.weapon_proficiencies

    def plan_attack(self, state: EncounterState, attacker_id: str, target_id: str, weapon: Weapon, *, kind: str = "attack") -> AttackPlan:
        """Validate an attack against the current state and gather its terms.

        Raises Rejected with the reason when the attack cannot be made (unknown or
        fallen target, no sight, out of range, total cover, heavy weapon while
        engaged). ``kind``: "attack", "reactive_fire", "return_fire",
        "opportunity_strike" (reaction-specific Disadvantage is added by the caller).
        """
        attacker = self.combatant(state, attacker_id)
        target_raw = state.combatants.get(target_id)
        require(target_raw is not None, f"unknown target {target_id!r}")
        target = self.combatant(state, target_id)
        require(target_id != attacker_id, f"{attacker_id} cannot attack itself")
        require(not target.out_of_fight, f"{target_id} is already down")
        require(target.side != attacker.side, f"{target_id} is on {attacker_id}'s side")
        require(attacker.position is not None and target.position is not None, "both combatants must be on the map")
        here: Square = attacker.position  # type: ignore[assignment]
        there: Square = target.position  # type: ignore[assignment]
        feet = self.feet(state, here, there)
        modifiers: list[Modifier] = []
        advantage: list[str] = []
        disadvantage: list[str] = []
        consumes: list[str] = []
        exposed_bonus = 0
        attribute = weapon.attack_attribute
        modifiers.append(Modifier(source=f"{attribute.title()} modifier", rule="BB-CORE-07", value=attacker.modifier(attribute)))
        if self.proficient_with(attacker, weapon):
            modifiers.append(Modifier(source=f"proficiency ({weapon.category or weapon.name})", rule="BB-CORE-04", value=self.proficiency(state, attacker)))
        if weapon.is_melee:
            reach_ft = weapon.range[0]
            require(feet <= reach_ft, f"{target_id} is {feet:g} ft away, beyond {weapon.name}'s reach of {reach_ft} ft")
            band = "melee"
        else:
            require(self.sees(state, here, there), f"{attacker_id} cannot see {target_id}")
            band = range_band(feet, weapon.range[0], weapon.range[1])
            require(band != "out", f"{target_id} is {feet:g} ft away, beyond {weapon.name}'s maximum range of {weapon.range[1]} ft (BB-CORE-11)")
            if band == "long":
                disadvantage.append(f"beyond normal range ({feet:g} ft > {weapon.range[0]} ft, BB-CORE-11)")
            level, _how = self.cover_against(state, target, here)
            require(level != "total", f"{target_id} has total cover against {attacker_id} and cannot be targeted (BB-CMB-04)")
            if self.engaged(state, attacker_id):
                require(not weapon.has("heavy"), f"{weapon.name} is a heavy weapon and cannot fire while {attacker_id} is engaged in melee (BB-CMB-16)")
                if not weapon.has("pistol"):
                    disadvantage.append("ranged attack with an enemy in melee reach (BB-CMB-16)")
            if EXPOSED in target.conditions:
                exposed_bonus = int(state.settings.get("exposed_attack_bonus", 2))
                modifiers.append(Modifier(source=f"{target_id} is Exposed", rule="BB-CMB-05", value=exposed_bonus))
            if AIMING in attacker.conditions and kind == "attack":
                modifiers.append(Modifier(source="Aim", rule="BB-CMB-21", value=int(state.settings.get("aim_bonus", 2))))
                consumes.append(AIMING)
        for mark, bearer in sorted(attacker.marks.items()):
            if bearer == target_id:
                modifiers.append(Modifier(source=f"{mark} on {target_id}", rule="BB-CMB-23", value=int(state.settings.get("mark_attack_bonus", 2))))
        if PINNED in attacker.conditions:
            disadvantage.append("attacker is Pinned (BB-CMB-19)")
        helped = target.conditions.get(HELPED)
        if helped is not None and kind == "attack":
            advantage.append(f"{target_id} is distracted by an ally's Help (BB-CORE-17)")
            consumes.append(HELPED)
        defense = self.defense_roll(state, target, here, ranged=not weapon.is_melee)
        return AttackPlan(
            attacker=attacker_id,
            target=target_id,
            weapon=weapon,
            modifiers=modifiers,
            advantage=advantage,
            disadvantage=disadvantage,
            defense=defense,
            band=band,
            exposed_bonus=exposed_bonus,
            consumes=consumes,
        )

    def roll_attack(self, decision: Decision, plan: AttackPlan, dice: Dice, *, spend_ammo: bool = True, rule: str = "BB-CORE-07", purpose: str = "") -> AttackOutcome:
        """Roll the d20 for a planned attack: natural 20 is a Critical Hit
        (BB-CORE-12), natural 1 misses (BB-CORE-14). Consumes the effects the roll
        uses up (BB-CMB-23) and a round of ammunition."""
        attacker = self.combatant(decision.state, plan.attacker)
        target = self.combatant(decision.state, plan.target)
        for condition in plan.consumes:
            bearer = plan.attacker if condition == AIMING else plan.target
            decision.emit(ConditionRemoved(combatant=bearer, condition=condition, reason="used by the attack", rule="BB-CMB-23"))
        if spend_ammo and plan.weapon.magazine:
            left = attacker.ammo.get(plan.weapon.name, 0)
            decision.emit(StateAdjusted(combatant=plan.attacker, changes={"ammo": {**attacker.ammo, plan.weapon.name: left - 1}}, reason=f"fired {plan.weapon.name}", rule="BB-CORE-07"))
        d20 = roll_d20(dice, plan.advantage, plan.disadvantage)
        natural = d20.natural
        total = natural + sum(m.value for m in plan.modifiers)
        critical = natural == 20
        would_hit = critical or (natural != 1 and total >= plan.defense.total)
        notes = d20_notes(d20)
        if critical:
            notes.append("natural 20: Critical Hit (BB-CORE-12)")
        elif natural == 1:
            notes.append("natural 1: the attack misses (BB-CORE-14)")
        roll = Roll(
            purpose=purpose or f"{plan.weapon.name} attack on {target.id}",
            rule=rule,
            dice=d20.dice,
            kept=[d20.kept],
            modifiers=plan.modifiers,
            total=total,
            target=plan.defense.total,
            compare=">=",
            success=would_hit,
            notes=notes,
            details={"natural": natural, "mode": d20.mode, "advantage": plan.advantage, "disadvantage": plan.disadvantage, "range_band": plan.band, "critical": critical, "fumble": natural == 1},
        )
        return AttackOutcome(plan=plan, roll=roll, natural=natural, would_hit=would_hit, critical=critical)

    def emit_attack(self, decision: Decision, outcome: AttackOutcome, *, hit: bool, kind: str, details: dict[str, Any] | None = None) -> AttackResolved:
        event = AttackResolved(
            attacker=outcome.plan.attacker,
            target=outcome.plan.target,
            weapon=outcome.plan.weapon.name,
            roll=outcome.roll,
            hit=hit,
            critical=outcome.critical and hit,
            kind=kind,
            defense=outcome.plan.defense,
            details=details or {},
        )
        decision.emit(event)
        return event

    def dangerous_consequences(self, decision: Decision, outcome: AttackOutcome, dice: Dice) -> None:
        """BB-CORE-14: a natural 1 with a dangerous weapon triggers its consequence
        as state. Jam: the weapon cannot fire until Reloaded. Overheat: it burns
        its wielder and cannot fire until the start of the wielder's next turn.
        Perils: a Willpower save or the wielder takes damage."""
        if outcome.natural != 1:
            return
        weapon = outcome.plan.weapon
        attacker_id = outcome.plan.attacker
        settings = decision.state.settings
        attacker = self.combatant(decision.state, attacker_id)
        if weapon.has("jam") and weapon.name not in attacker.jammed:
            decision.emit(StateAdjusted(combatant=attacker_id, changes={"jammed": [*attacker.jammed, weapon.name]}, reason=f"natural 1: {weapon.name} jams", rule="BB-CORE-14"))
        if weapon.has("overheat"):
            decision.emit(ConditionApplied(combatant=attacker_id, condition=f"{OVERHEATED}:{weapon.name}", rule="BB-CORE-14", until=f"start_of_turn:{attacker_id}", details={"weapon": weapon.name}))
            burn = self.roll_damage(decision, str(settings.get("overheat_damage", "1d6")), dice, modifiers=[], rule="BB-CORE-14", purpose=f"{weapon.name} overheats")
            self.apply_damage(decision, attacker_id, burn.total, source=f"{weapon.name} overheat", roll=burn, rule="BB-CORE-14")
        if weapon.has("perils") and not decision.state.combatants[attacker_id].out_of_fight:
            save = self.roll_save(decision, attacker_id, "willpower", int(settings.get("perils_dc", 12)), dice, rule="BB-CORE-14", purpose=f"Perils from {weapon.name}")
            if not save.success:
                harm = self.roll_damage(decision, str(settings.get("perils_damage", "1d6")), dice, modifiers=[], rule="BB-CORE-14", purpose=f"Perils from {weapon.name}")
                self.apply_damage(decision, attacker_id, harm.total, source=f"{weapon.name} perils", roll=harm, rule="BB-CORE-14")

    def damage_for(self, decision: Decision, outcome: AttackOutcome, dice: Dice) -> Roll:
        weapon = outcome.plan.weapon
        attacker = self.combatant(decision.state, outcome.plan.attacker)
        modifiers = []
        if weapon.has("adds_modifier"):
            attribute = weapon.attack_attribute
            modifiers.append(Modifier(source=f"{attribute.title()} modifier", rule="BB-CORE-07", value=attacker.modifier(attribute)))
        return self.roll_damage(decision, weapon.damage, dice, modifiers=modifiers, rule="BB-CORE-12" if outcome.critical else "BB-CORE-07", purpose=f"{weapon.name} damage", critical=outcome.critical)

    def deal_attack_damage(self, decision: Decision, outcome: AttackOutcome, dice: Dice) -> int:
        damage = self.damage_for(decision, outcome, dice)
        self.apply_damage(decision, outcome.plan.target, damage.total, source=outcome.plan.attacker, roll=damage, rule=damage.rule)
        return damage.total

    def resolve_weapon_attack(self, decision: Decision, attacker_id: str, target_id: str, weapon_name: str, dice: Dice, *, kind: str = "attack") -> AttackResolved | None:
        """One complete attack with no reaction windows (the areas module's krak
        grenade): plan, roll, record, damage. The caller spends the action and
        the item; raises Rejected if the attack cannot be made."""
        attacker = self.combatant(decision.state, attacker_id)
        weapon = attacker.weapon(weapon_name)
        require(weapon is not None, f"{attacker_id} does not carry {weapon_name!r}")
        plan = self.plan_attack(decision.state, attacker_id, target_id, weapon, kind=kind)  # type: ignore[arg-type]
        outcome = self.roll_attack(decision, plan, dice, spend_ammo=False)
        event = self.emit_attack(decision, outcome, hit=outcome.would_hit, kind=kind)
        if outcome.would_hit:
            self.deal_attack_damage(decision, outcome, dice)
        self.dangerous_consequences(decision, outcome, dice)
        return event

    # ------------------------------------------------------------ hooks

    def on_round_start(self, decision: Decision, dice: Dice) -> None:
        areas.on_round_start(self, decision, dice)

    def on_turn_start(self, decision: Decision, combatant: str, dice: Dice) -> None:
        """Effects "until the start of <combatant>'s next turn" expire (BB-CMB-23)."""
        self.expire(decision, f"start_of_turn:{combatant}")
        areas.on_turn_start(self, decision, combatant, dice)

    def on_turn_end(self, decision: Decision, combatant: str, dice: Dice) -> None:
        """Effects "until the end of <combatant>'s turn" expire (BB-CMB-23)."""
        self.expire(decision, f"end_of_turn:{combatant}")

    def expire(self, decision: Decision, boundary: str) -> None:
        for cid in sorted(decision.state.combatants):
            for condition, until in sorted(decision.state.combatants[cid].conditions.items()):
                if until == boundary:
                    decision.emit(ConditionRemoved(combatant=cid, condition=condition, reason=f"expired ({boundary.replace(':', ' of ')})", rule="BB-CMB-23"))

    def cannot_act_reason(self, state: EncounterState, combatant: Any) -> str | None:
        if combatant.out_of_fight:
            return "Down (BB-CORE-09)"
        if STUNNED in combatant.conditions:
            return "Stunned"
        return None

    def decide_action(self, decision: Decision, command: Command, dice: Dice) -> None:
        from firelane.engine.systems.bolt_and_blade.actions import decide_action

        if isinstance(command, areas.AREA_COMMANDS):
            areas.decide_area_command(self, decision, command, dice)
            return
        decide_action(self, decision, command, dice)

    def validate_claim(self, state: EncounterState, window: ReactionWindow, claim: Any) -> None:
        from firelane.engine.systems.bolt_and_blade.reactions import validate_claim

        validate_claim(self, state, window, claim)

    def resolve_reaction(self, decision: Decision, window: ReactionWindow, claim: OrderedClaim, dice: Dice) -> str | None:
        from firelane.engine.systems.bolt_and_blade.reactions import resolve_reaction

        return resolve_reaction(self, decision, window, claim, dice)

    def after_window(self, decision: Decision, window: ReactionWindow, dice: Dice) -> None:
        from firelane.engine.systems.bolt_and_blade.reactions import after_window

        after_window(self, decision, window, dice)

    def choose_command(self, state: EncounterState, combatant: str) -> Command | None:
        from firelane.engine.systems.bolt_and_blade.ai import choose_command

        return choose_command(self, state, combatant)

    # ------------------------------------------------------------ evolve

    def evolve_event(self, state: EncounterState, event: Event) -> None:
        combatants = state.combatants
        if isinstance(event, TurnStarted):
            me = self.combatant(state, event.combatant)
            me.movement_allowance_ft = float(me.movement_ft)
            me.movement_used_ft = 0.0
            me.action_used = False
            me.bonus_used = False
            me.attacked_this_turn = False
            me.movement_halted = False
        elif isinstance(event, ActionTaken):
            me = self.combatant(state, event.combatant)
            if event.slot == "action":
                me.action_used = True
                if event.action == "attack":
                    me.attacked_this_turn = True
                if event.action in ("dash", "evade"):
                    me.movement_allowance_ft += me.movement_ft
            elif event.slot == "bonus":
                me.bonus_used = True
        elif isinstance(event, Moved):
            me = self.combatant(state, event.combatant)
            me.movement_used_ft += event.cost
            if event.path:
                me.taking_cover = False
        elif isinstance(event, DamageDealt):
            if event.remaining is not None:
                self.combatant(state, event.target).vitality = event.remaining
        elif isinstance(event, StateAdjusted):
            me = self.combatant(state, event.combatant)
            for field, value in event.changes.items():
                setattr(me, field, msgspec.convert(value, _COMBATANT_FIELD_TYPES[field]))
        elif isinstance(event, ConditionRemoved):
            if event.condition == OVERWATCH and event.combatant in combatants:
                self.combatant(state, event.combatant).overwatch_area = []
        elif isinstance(event, BBMovementStopped):
            self.combatant(state, event.combatant).movement_halted = True
        elif isinstance(event, BBMarkMoved):
            self.combatant(state, event.marker).marks[event.mark] = event.bearer
        elif isinstance(event, areas.AREA_EVENTS):
            areas.evolve_area_event(self, state, event)
