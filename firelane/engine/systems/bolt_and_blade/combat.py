"""Bolt & Blade combat rules on the encounter state: sight, cover, Defense,
checks and saves, attack planning and rolls, damage, the action economy.

Second floor of the package (see the package docstring): it reads the typed
state and emits events through a `Decision`, and knows nothing of moves,
reactions, actions or the AI, which all build on it. Everything here is a
function of its arguments; nothing is cached but the terrain's `Grid`.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from functools import lru_cache
from typing import Any

import msgspec

from firelane.engine.core import Decision, Rejected, require
from firelane.engine.dice import Dice
from firelane.engine.grid import Grid, Square, distance, feature_cover_level
from firelane.engine.state import EncounterState
from firelane.engine.systems.bolt_and_blade.constants import AIMING, BB_DEFAULT_SETTINGS, HELPED, LAS_OVERHEATED, OVERHEATED, PINNED
from firelane.engine.systems.bolt_and_blade.rules import (
    DEFAULT_PROFICIENCY_TABLE,
    D20Result,
    cover_bonus,
    d20_mode,
    d20_notes,
    damage_dice_count,
    improved_cover,
    opposed_winner,
    parse_dice,
    proficiency_bonus,
    range_band,
    roll_d20,
)
from firelane.engine.systems.bolt_and_blade.sight import grid_of, wall_sight
from firelane.engine.systems.bolt_and_blade.state import BoltAndBladeCombatant, Weapon
from firelane.engine.systems.bolt_and_blade.zones import line_touches, sight_blocking_squares
from firelane.engine.systems.bolt_and_blade.schemas import BBOpposedCheck
from firelane.events.schemas import (
    ActionTaken,
    AttackResolved,
    CombatantDown,
    ConditionApplied,
    ConditionRemoved,
    DamageDealt,
    Modifier,
    Roll,
    StateAdjusted,
    TestRolled,
)


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


# ---------------------------------------------------------------- lookups


def combatant(state: EncounterState, cid: str) -> BoltAndBladeCombatant:
    return state.combatants[cid]  # type: ignore[return-value]


def require_combatant(state: EncounterState, combatant_id: str) -> BoltAndBladeCombatant:
    found = state.combatants.get(combatant_id)
    if found is None:
        raise Rejected(f"unknown combatant {combatant_id!r}")
    return found  # type: ignore[return-value]


def require_turn(state: EncounterState, actor: str) -> BoltAndBladeCombatant:
    """The acting combatant, if it is its turn (the same check as `BaseRuleSystem.require_turn`)."""
    found = require_combatant(state, actor)
    require(state.active == actor, f"it is not {actor}'s turn (active: {state.active})")
    return found


def proficiency(state: EncounterState, who: BoltAndBladeCombatant) -> int:
    return proficiency_bonus(who.level, state.settings.get("proficiency_table", DEFAULT_PROFICIENCY_TABLE))


def feet(state: EncounterState, a: Square, b: Square) -> float:
    return distance(a, b) * state.terrain.square_size


def standing_enemies(state: EncounterState, cid: str) -> list[BoltAndBladeCombatant]:
    me = state.combatants[cid]
    return [
        combatant(state, other)
        for other in sorted(state.combatants)
        if state.combatants[other].side != me.side and not state.combatants[other].out_of_fight and state.combatants[other].position is not None
    ]


def melee_reach_squares(state: EncounterState, who: BoltAndBladeCombatant) -> int:
    """Melee reach in squares: the longest reach of a carried melee weapon, 5 ft unarmed."""
    reach_ft = max([w.range[0] for w in who.weapons if w.is_melee] or [5])
    return max(1, int(reach_ft // state.terrain.square_size))


def engaged(state: EncounterState, cid: str) -> bool:
    """An enemy stands within the combatant's melee reach (BB-CMB-16)."""
    me = combatant(state, cid)
    reach = melee_reach_squares(state, me)
    x, y = me.position  # type: ignore[misc]
    for other in state.combatants.values():  # the standing enemies, in any order
        there = other.position
        if other.side != me.side and not other.out_of_fight and there is not None and max(abs(there[0] - x), abs(there[1] - y)) <= reach:
            return True
    return False


def average_damage(weapon: Weapon) -> float:
    expression = parse_dice(weapon.damage)
    return expression.count * (expression.sides + 1) / 2 + expression.bonus


def best_melee_weapon(who: BoltAndBladeCombatant) -> Weapon | None:
    melee = [w for w in who.weapons if w.is_melee]
    if not melee:
        return None
    return max(melee, key=lambda w: (average_damage(w), w.name))


def weapon_problem(state: EncounterState, who: BoltAndBladeCombatant, weapon: Weapon, *, reactive: bool = False) -> str | None:
    """Why this weapon cannot shoot now, or None."""
    if weapon.name in who.jammed:
        return f"{weapon.name} is jammed: Reload to clear it"
    if f"{OVERHEATED}:{weapon.name}" in who.conditions:
        return f"{weapon.name} has overheated"
    if weapon.magazine and who.ammo.get(weapon.name, 0) <= 0:
        return f"{weapon.name} is out of ammunition: Reload"
    if reactive and weapon.has("las") and LAS_OVERHEATED in who.conditions:
        return f"{weapon.name} runs hot after suppressing: no Reactive Fire until the start of {who.id}'s next turn (BB-CMB-20)"
    return None


def proficient_with(who: BoltAndBladeCombatant, weapon: Weapon) -> bool:
    return weapon.category in who.weapon_proficiencies or weapon.name in who.weapon_proficiencies


# ---------------------------------------------------------------- sight


def sight_blockers(state: EncounterState) -> set[Square]:
    """Squares that block sight besides the walls: sight-blocking zones (smoke)."""
    return sight_blocking_squares(state)


def sight_test(state: EncounterState) -> Callable[[Square, Square], bool]:
    """`sees` for one state, with its smoke gathered once: for callers (the
    AI) asking about many lines in a state that does not change meanwhile.
    Sight is never clearer than the walls allow; with no `sight_blockers`
    it is exactly the grid's line of sight (asked of `sight.WallSight`)."""
    line_of_sight = wall_sight(state).clear  # `Grid.line_of_sight`, the same answers, faster
    smoke = sight_blockers(state)
    if not smoke:
        return line_of_sight
    return lambda a, b: line_of_sight(a, b) and not line_touches(smoke, a, b)


def sees(state: EncounterState, a: Square, b: Square) -> bool:
    """Line of sight: no wall between (grid) and no sight-blocking zone (smoke)."""
    return sight_test(state)(a, b)


def through_smoke(state: EncounterState, a: Square, b: Square) -> bool:
    """Whether the line from ``a`` to ``b`` passes through (or into, or out of)
    a sight-blocking zone: shooting along it is "shooting through smoke", a
    Disadvantage (BB-CORE-05), though one does not see along it."""
    smoke = sight_blockers(state)
    return bool(smoke) and line_touches(smoke, a, b)


# ---------------------------------------------------------------- cover and Defense


def cover_behind(target: BoltAndBladeCombatant, feature_level: str | None) -> tuple[str, str]:
    """`cover_against` when the strongest cover on the target's square facing
    the attacker is a feature of ``feature_level`` as written ("heavy_tall";
    None: no feature faces the attacker)."""
    level = feature_cover_level(feature_level)
    how = f"{level} cover facing the attacker" if feature_level is not None else "no cover facing the attacker"
    if target.taking_cover:
        improved = improved_cover(level, blocks_sight=feature_level == "heavy_tall")
        if improved != level:
            how = f"took cover: {level} -> {improved}"
            level = improved
    if level == "none":
        how = "no cover facing the attacker: Exposed (BB-CMB-05)"
    return level, how


def cover_against(state: EncounterState, target: BoltAndBladeCombatant, attacker_square: Square) -> tuple[str, str]:
    """(cover level, how) the target has against an attacker at ``attacker_square``.

    Terrain cover is directional (BB-CMB-04); Take Cover improves it one step
    (BB-CMB-30), to total only behind cover marked as fully blocking sight
    ("heavy_tall"). No cover at all against this attacker is being Exposed to
    it (`exposed_to`).
    """
    here: Square = target.position  # type: ignore[assignment]
    feature, _level = grid_of(state).cover_facing(here, attacker_square)
    return cover_behind(target, feature.level if feature is not None else None)


def exposed_to(state: EncounterState, target: BoltAndBladeCombatant, attacker_square: Square) -> bool:
    """BB-CMB-05: a character is Exposed when caught in open ground without
    meaningful cover. Derived at each attack from where the target stands and
    where the attack comes from: Exposed to an attacker against whom it has no
    cover at all (none on its square faces the attacker, and it has not taken
    cover). So a creature placed in the open, one still in the open at its turn
    start, and one behind cover that faces away from this attacker are all
    Exposed to it; the same creature may be covered from another attacker."""
    return cover_against(state, target, attacker_square)[0] == "none"


def defense_with_cover(state: EncounterState, target: BoltAndBladeCombatant, cover: tuple[str, str] | None) -> Roll:
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


def defense_roll(state: EncounterState, target: BoltAndBladeCombatant, attacker_square: Square, *, ranged: bool) -> Roll:
    """Defense as a sum of named sources, each with its rule ID (BB-CORE-08)."""
    counts_cover = ranged or state.settings.get("cover_against_melee", False)
    return defense_with_cover(state, target, cover_against(state, target, attacker_square) if counts_cover else None)


# ---------------------------------------------------------------- checks and saves


def _test_roll(d20: D20Result, modifiers: list[Modifier], dc: int, *, purpose: str, rule: str) -> Roll:
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


def check_modifiers(state: EncounterState, who: BoltAndBladeCombatant, attribute: str, skill: str | None) -> list[Modifier]:
    modifiers = [Modifier(source=f"{attribute.title()} modifier", rule="BB-CORE-01", value=who.modifier(attribute))]
    if skill and skill in who.proficiencies:
        modifiers.append(Modifier(source=f"proficiency ({skill})", rule="BB-CORE-04", value=proficiency(state, who)))
    return modifiers


def roll_check(
    decision: Decision,
    combatant_id: str,
    attribute: str,
    skill: str | None,
    dc: int,
    dice: Dice,
    *,
    purpose: str,
    advantage_sources: list[str] = [],
    disadvantage_sources: list[str] = [],
) -> TestRolled:
    """BB-CORE-01: d20 + attribute modifier + proficiency (if proficient) >= DC."""
    who = combatant(decision.state, combatant_id)
    modifiers = check_modifiers(decision.state, who, attribute, skill)
    d20 = roll_d20(dice, advantage_sources, disadvantage_sources)
    roll = _test_roll(d20, modifiers, dc, purpose=purpose, rule="BB-CORE-01")
    event = TestRolled(combatant=combatant_id, test=f"{attribute} check" + (f" ({skill})" if skill else ""), roll=roll, success=bool(roll.success), details={"dc": dc})
    decision.emit(event)
    return event


def save_modifiers(state: EncounterState, who: BoltAndBladeCombatant, attribute: str) -> list[Modifier]:
    """BB-CORE-06: modifier, proficiency if proficient, and the sheet's other save bonuses."""
    modifiers = [Modifier(source=f"{attribute.title()} modifier", rule="BB-CORE-06", value=who.modifier(attribute))]
    if attribute in who.save_proficiencies:
        modifiers.append(Modifier(source=f"proficient {attribute.title()} save", rule="BB-CORE-04", value=proficiency(state, who)))
    bonus = who.save_bonuses.get(attribute, 0)
    if bonus:
        modifiers.append(Modifier(source=f"{attribute.title()} save bonus (sheet)", rule="BB-CORE-06", value=bonus))
    return modifiers


def roll_save(
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
    who = combatant(decision.state, combatant_id)
    modifiers = save_modifiers(decision.state, who, attribute)
    d20 = roll_d20(dice, advantage_sources, disadvantage_sources)
    roll = _test_roll(d20, modifiers, dc, purpose=purpose, rule=rule or "BB-CORE-06")
    event = TestRolled(combatant=combatant_id, test=f"{attribute} save", roll=roll, success=bool(roll.success), details={"dc": dc, "rule": "BB-CORE-06"})
    decision.emit(event)
    return event


def opposed_check(
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
    for cid, (attribute, skill) in ((actor_id, actor_skill), (defender_id, defender_skill)):
        who = combatant(state, cid)
        d20 = roll_d20(dice)
        rolls.append(_test_roll(d20, check_modifiers(state, who, attribute, skill), 0, purpose=f"{purpose}: {cid}", rule="BB-CORE-10"))
    side, tie = opposed_winner(rolls[0].total, rolls[1].total, state.settings.get("opposed_tie", "defender"))
    strip = [msgspec.structs.replace(r, target=None, success=None) for r in rolls]
    event = BBOpposedCheck(actor=actor_id, defender=defender_id, actor_roll=strip[0], defender_roll=strip[1], winner=actor_id if side == "actor" else defender_id, tie=tie)
    decision.emit(event)
    return event


# ---------------------------------------------------------------- damage


def roll_damage(
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


def apply_damage(decision: Decision, target_id: str, amount: int, *, source: str, roll: Roll | None, rule: str) -> None:
    """Emit DamageDealt with the Vitality left, and CombatantDown at 0 (BB-CORE-09)."""
    target = combatant(decision.state, target_id)
    remaining = max(0, target.vitality - amount)
    decision.emit(DamageDealt(target=target_id, source=source, amount=amount, roll=roll, rule=rule, remaining=remaining))
    if remaining == 0 and not decision.state.combatants[target_id].out_of_fight:
        decision.emit(CombatantDown(combatant=target_id, reason="Vitality 0: Down, out of the fight until aided", rule="BB-CORE-09"))


# ---------------------------------------------------------------- action economy


def spend_action(decision: Decision, combatant_id: str, slot: str = "action", *, action: str = "use wargear", rule: str = "BB-CORE-16", details: dict[str, Any] | None = None) -> None:
    """Spend the turn's Action or Bonus Action; reject if it is already spent (BB-CORE-16, BB-CMB-22)."""
    state = decision.state
    who = require_turn(state, combatant_id)
    if slot == "action":
        require(not who.action_used, f"{combatant_id} has already used its Action this turn")
    elif slot == "bonus":
        require(not who.bonus_used, f"{combatant_id} has already used its Bonus Action this turn (one per turn, BB-CMB-22)")
    else:
        raise Rejected(f"unknown action slot {slot!r}")
    decision.emit(ActionTaken(combatant=combatant_id, action=action, slot=slot, rule=rule, details=details or {}))


def expire(decision: Decision, boundary: str) -> None:
    """Effects that last until ``boundary`` ("start_of_turn:<id>", "end_of_turn:<id>") end (BB-CMB-23)."""
    for cid in sorted(decision.state.combatants):
        for condition, until in sorted(decision.state.combatants[cid].conditions.items()):
            if until == boundary:
                decision.emit(ConditionRemoved(combatant=cid, condition=condition, reason=f"expired ({boundary.replace(':', ' of ')})", rule="BB-CMB-23"))


# ---------------------------------------------------------------- what the area module asks of its host


def area_item(state: EncounterState, combatant_id: str, name: str) -> dict[str, Any] | None:
    weapon = combatant(state, combatant_id).weapon(name)
    return msgspec.to_builtins(weapon) if weapon is not None else None  # type: ignore[no-any-return]


def throw_modifiers(state: EncounterState, combatant_id: str, item_name: str) -> list[Modifier]:
    who = combatant(state, combatant_id)
    weapon = who.weapon(item_name)
    attribute = weapon.attack_attribute if weapon else "agility"
    modifiers = [Modifier(source=f"{attribute.title()} modifier", rule="BB-CORE-07", value=who.modifier(attribute))]
    if weapon is not None and proficient_with(who, weapon):
        modifiers.append(Modifier(source=f"proficiency ({weapon.category or weapon.name})", rule="BB-CORE-04", value=proficiency(state, who)))
    return modifiers


def attack_advantage(state: EncounterState, combatant_id: str) -> tuple[list[str], list[str]]:
    """Advantage / Disadvantage on a throw that follow the thrower whatever the
    point: Pinned (BB-CMB-19); an enemy in melee reach (BB-CMB-16: a throw is a
    ranged attack roll, and no grenade is a pistol)."""
    who = combatant(state, combatant_id)
    disadvantage = []
    if engaged(state, combatant_id):
        disadvantage.append("ranged attack with an enemy in melee reach (BB-CMB-16)")
    if PINNED in who.conditions:
        disadvantage.append("attacker is Pinned (BB-CMB-19)")
    return [], disadvantage


def consume_item(decision: Decision, combatant_id: str, item_name: str) -> None:
    who = combatant(decision.state, combatant_id)
    weapon = who.weapon(item_name)
    require(weapon is not None, f"{combatant_id} does not carry {item_name!r}")
    if weapon.magazine:  # type: ignore[union-attr]
        left = who.ammo.get(item_name, 0)
        require(left > 0, f"{combatant_id} has no {item_name} left")
        decision.emit(StateAdjusted(combatant=combatant_id, changes={"ammo": {**who.ammo, item_name: left - 1}}, reason=f"used {item_name}", rule="BB-CORE-17"))


# ---------------------------------------------------------------- attacks


def plan_attack(state: EncounterState, attacker_id: str, target_id: str, weapon: Weapon, *, kind: str = "attack") -> AttackPlan:
    """Validate an attack against the current state and gather its terms.

    Raises Rejected with the reason when the attack cannot be made (unknown or
    fallen target, no sight, out of range, total cover, heavy weapon while
    engaged). ``kind``: "attack", "reactive_fire", "return_fire",
    "opportunity_strike" (reaction-specific Disadvantage is added by the caller).
    """
    attacker = combatant(state, attacker_id)
    target_raw = state.combatants.get(target_id)
    require(target_raw is not None, f"unknown target {target_id!r}")
    target = combatant(state, target_id)
    require(target_id != attacker_id, f"{attacker_id} cannot attack itself")
    require(not target.out_of_fight, f"{target_id} is already down")
    require(target.side != attacker.side, f"{target_id} is on {attacker_id}'s side")
    require(attacker.position is not None and target.position is not None, "both combatants must be on the map")
    here: Square = attacker.position  # type: ignore[assignment]
    there: Square = target.position  # type: ignore[assignment]
    distance_ft = feet(state, here, there)
    modifiers: list[Modifier] = []
    advantage: list[str] = []
    disadvantage: list[str] = []
    consumes: list[str] = []
    exposed_bonus = 0
    attribute = weapon.attack_attribute
    modifiers.append(Modifier(source=f"{attribute.title()} modifier", rule="BB-CORE-07", value=attacker.modifier(attribute)))
    if proficient_with(attacker, weapon):
        modifiers.append(Modifier(source=f"proficiency ({weapon.category or weapon.name})", rule="BB-CORE-04", value=proficiency(state, attacker)))
    if weapon.is_melee:
        reach_ft = weapon.range[0]
        require(distance_ft <= reach_ft, f"{target_id} is {distance_ft:g} ft away, beyond {weapon.name}'s reach of {reach_ft} ft")
        band = "melee"
    else:
        # Walls stop a shot; smoke only hides the target: shooting through it
        # has Disadvantage (BB-CORE-05). Reactions that need sight of the
        # target (Reactive Fire, Return Fire) check `sees` themselves.
        require(wall_sight(state).clear(here, there), f"{attacker_id} cannot see {target_id}")
        if through_smoke(state, here, there):
            disadvantage.append("shooting through smoke (BB-CORE-05)")
        band = range_band(distance_ft, weapon.range[0], weapon.range[1])
        require(band != "out", f"{target_id} is {distance_ft:g} ft away, beyond {weapon.name}'s maximum range of {weapon.range[1]} ft (BB-CORE-11)")
        if band == "long":
            disadvantage.append(f"beyond normal range ({distance_ft:g} ft > {weapon.range[0]} ft, BB-CORE-11)")
        level, _how = cover_against(state, target, here)
        require(level != "total", f"{target_id} has total cover against {attacker_id} and cannot be targeted (BB-CMB-04)")
        if engaged(state, attacker_id):
            require(not weapon.has("heavy"), f"{weapon.name} is a heavy weapon and cannot fire while {attacker_id} is engaged in melee (BB-CMB-16)")
            if not weapon.has("pistol"):
                disadvantage.append("ranged attack with an enemy in melee reach (BB-CMB-16)")
        if level == "none":  # `exposed_to` this attacker
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
    defense = defense_roll(state, target, here, ranged=not weapon.is_melee)
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


def attack_hits(natural: int, total: int, defense: int) -> bool:
    """Whether an attack roll hits: a natural 20 always does (a Critical Hit,
    BB-CORE-12), a natural 1 never (BB-CORE-14), else the total must reach the
    Defense (BB-CORE-07). `roll_attack` decides with it, and the exact chances
    (`hit_probability`) count the faces it says hit."""
    return natural == 20 or (natural != 1 and total >= defense)


def kept_face_weights(mode: str) -> tuple[Fraction, ...]:
    """The exact chance of each natural d20 face (index 0 is face 1) being the
    one that counts (`rules.roll_d20`): 1/20 each for one die (no Advantage, or
    both cancelled, BB-CORE-05); with Advantage the higher of two, face f kept
    in 2f - 1 of the 400 pairs; with Disadvantage the lower, in 41 - 2f."""
    return _FACE_WEIGHTS[mode]


_FACE_WEIGHTS: dict[str, tuple[Fraction, ...]] = {
    "normal": tuple(Fraction(1, 20) for _face in range(1, 21)),
    "cancelled": tuple(Fraction(1, 20) for _face in range(1, 21)),
    "advantage": tuple(Fraction(2 * face - 1, 400) for face in range(1, 21)),
    "disadvantage": tuple(Fraction(41 - 2 * face, 400) for face in range(1, 21)),
}


@lru_cache(maxsize=4096)
def hit_probability(bonus: int, defense: int, mode: str) -> float:
    """The exact chance that d20 + ``bonus`` hits ``defense`` with the d20 rolled
    in ``mode`` (`d20_mode`): the kept faces `attack_hits` says hit, each by
    its weight (`kept_face_weights`). Computed from the dice, not sampled."""
    weights = kept_face_weights(mode)
    return float(sum(weights[face - 1] for face in range(1, 21) if attack_hits(face, face + bonus, defense)))


@lru_cache(maxsize=4096)
def check_probability(bonus: int, dc: int, mode: str = "normal") -> float:
    """The exact chance that a check or save, d20 + ``bonus`` against ``dc``,
    succeeds: natural 20s and 1s decide nothing (BB-CORE-13, -15)."""
    weights = kept_face_weights(mode)
    return float(sum(weights[face - 1] for face in range(1, 21) if face + bonus >= dc))



def plan_hit_chance(plan: AttackPlan) -> float:
    """The exact chance a planned attack hits: its modifiers against its Defense,
    with its Advantage and Disadvantage (BB-CORE-05, -07, -12, -14)."""
    return hit_probability(sum(m.value for m in plan.modifiers), plan.defense.total, d20_mode(plan.advantage, plan.disadvantage))


def roll_attack(decision: Decision, plan: AttackPlan, dice: Dice, *, spend_ammo: bool = True, rule: str = "BB-CORE-07", purpose: str = "") -> AttackOutcome:
    """Roll the d20 for a planned attack: natural 20 is a Critical Hit
    (BB-CORE-12), natural 1 misses (BB-CORE-14). Consumes the effects the roll
    uses up (BB-CMB-23) and a round of ammunition."""
    attacker = combatant(decision.state, plan.attacker)
    target = combatant(decision.state, plan.target)
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
    would_hit = attack_hits(natural, total, plan.defense.total)
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


def emit_attack(decision: Decision, outcome: AttackOutcome, *, hit: bool, kind: str, details: dict[str, Any] | None = None) -> AttackResolved:
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


def dangerous_consequences(decision: Decision, outcome: AttackOutcome, dice: Dice) -> None:
    """BB-CORE-14: a natural 1 with a dangerous weapon triggers its consequence
    as state. Jam: the weapon cannot fire until Reloaded. Overheat: it burns
    its wielder and cannot fire until the start of the wielder's next turn.
    Perils: a Willpower save or the wielder takes damage."""
    if outcome.natural != 1:
        return
    weapon = outcome.plan.weapon
    attacker_id = outcome.plan.attacker
    settings = decision.state.settings
    attacker = combatant(decision.state, attacker_id)
    if weapon.has("jam") and weapon.name not in attacker.jammed:
        decision.emit(StateAdjusted(combatant=attacker_id, changes={"jammed": [*attacker.jammed, weapon.name]}, reason=f"natural 1: {weapon.name} jams", rule="BB-CORE-14"))
    if weapon.has("overheat"):
        decision.emit(ConditionApplied(combatant=attacker_id, condition=f"{OVERHEATED}:{weapon.name}", rule="BB-CORE-14", until=f"start_of_turn:{attacker_id}", details={"weapon": weapon.name}))
        burn = roll_damage(decision, str(settings.get("overheat_damage", "1d6")), dice, modifiers=[], rule="BB-CORE-14", purpose=f"{weapon.name} overheats")
        apply_damage(decision, attacker_id, burn.total, source=f"{weapon.name} overheat", roll=burn, rule="BB-CORE-14")
    if weapon.has("perils") and not decision.state.combatants[attacker_id].out_of_fight:
        save = roll_save(decision, attacker_id, "willpower", int(settings.get("perils_dc", 12)), dice, rule="BB-CORE-14", purpose=f"Perils from {weapon.name}")
        if not save.success:
            harm = roll_damage(decision, str(settings.get("perils_damage", "1d6")), dice, modifiers=[], rule="BB-CORE-14", purpose=f"Perils from {weapon.name}")
            apply_damage(decision, attacker_id, harm.total, source=f"{weapon.name} perils", roll=harm, rule="BB-CORE-14")


def damage_for(decision: Decision, outcome: AttackOutcome, dice: Dice) -> Roll:
    weapon = outcome.plan.weapon
    attacker = combatant(decision.state, outcome.plan.attacker)
    modifiers = []
    if weapon.has("adds_modifier"):
        attribute = weapon.attack_attribute
        modifiers.append(Modifier(source=f"{attribute.title()} modifier", rule="BB-CORE-07", value=attacker.modifier(attribute)))
    return roll_damage(decision, weapon.damage, dice, modifiers=modifiers, rule="BB-CORE-12" if outcome.critical else "BB-CORE-07", purpose=f"{weapon.name} damage", critical=outcome.critical)


def deal_attack_damage(decision: Decision, outcome: AttackOutcome, dice: Dice) -> int:
    damage = damage_for(decision, outcome, dice)
    apply_damage(decision, outcome.plan.target, damage.total, source=outcome.plan.attacker, roll=damage, rule=damage.rule)
    return damage.total

