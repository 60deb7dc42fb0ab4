"""The RonD6 AI: a deterministic function of the state (no dice, no randomness).

On its turn a combatant declares as many actions as its plan needs (stand up,
break a grapple, ready or reload, then attack; or move and attack), capped by
its Multi-Action Limit, then takes them one by one, re-planning from the
current state each time. Alone in its round (one declared action) it uses the
big options: All-Out Attack in melee, Full Auto with an automatic weapon, a
Charge to close in. Combatants with ``tactic: "hold"`` stay put and Wait,
interrupting the first enemy who declares an action in their sights.

Before all that (after standing up and breaking free) come the aux tools:

* a medic (a ``medicine`` skill) treats the most wounded untreated ally within
  healing reach, itself included (R6-43), when its expected Medicine total
  reaches the difficulty; declared as the round's one action so the test
  takes no multi-action penalty. When such an ally is a partial move away it
  declares a move and the treatment instead;
* a combatant with an area weapon in hand (a grenade: ``burst:<size>``) throws
  it, as the round's one action, when the burst catches at least
  `AREA_MIN_ENEMIES` enemies and no one of its own side, itself included
  (R6-40, `areas.choose_area_attack`), and its expected attack total (range
  modifier included) beats the Defense of at least that many of them. When
  the target Space is beyond Short range it spends the round on a full move
  into Short range instead. Area weapons are never used for
  ordinary attacks, readied as a gun would be, or fired in a Wait interruption.

In windows: an Active Defense is claimed when its expected total beats the
Passive Defense (the multiple-action penalty and wounds included); Character
Points are spent on a hit that would wound, a Fate Point on one that would
take the character down; a Waiting combatant interrupts an enemy it can hit.
"""

from __future__ import annotations

from typing import Any

import msgspec

from firelane.engine.core import Rejected, next_command_id
from firelane.engine.grid import Grid, distance
from firelane.engine.systems.rond6 import (
    actions,
    areas,
    combat,
    healing,
    movement,
    rules,
)
from firelane.engine.systems.rond6.contract import SystemContract
from firelane.engine.systems.rond6.pools import DieCode, as_code, difficulty
from firelane.engine.systems.rond6.rolling import adjusted, condition_dice_mods
from firelane.engine.systems.rond6.state import RonD6Combatant, RonD6State, Weapon
from firelane.engine.systems.rond6.aux_schemas import R6AreaAttack, R6Heal, R6Move
from firelane.engine.systems.rond6.schemas import (
    R6Attack,
    R6Charge,
    R6DeclareActions,
    R6Escape,
    R6Ready,
    R6Stand,
    R6Wait,
)
from firelane.events.schemas import ClaimReaction, Command, PassReaction


# A grenade is worth its one use only when it catches at least this many enemies.
AREA_MIN_ENEMIES = 2


def mean(code: DieCode) -> float:
    return code.dice * 3.5 + code.pips


# --------------------------------------------------------------------------- reading the state


def enemies(state: RonD6State, me: RonD6Combatant) -> list[RonD6Combatant]:
    """Standing enemies, nearest first (then by ID)."""
    foes = [c for c in state.combatants.values() if c.side != me.side and not c.out_of_fight]
    here = tuple(me.position) if me.position is not None else (0, 0)
    return sorted(foes, key=lambda c: (distance(here, tuple(c.position)) if c.position is not None else 999, c.id))  # type: ignore[arg-type]


def is_area_weapon(weapon: Weapon) -> bool:
    """A burst or cone weapon (a grenade): used only through `area_attack_now`."""
    try:
        return areas.weapon_area(weapon) is not None
    except Rejected:  # an unknown area size: the system rejects it, so never plan with it
        return True


def loaded(me: RonD6Combatant, weapon: Weapon) -> bool:
    return not weapon.capacity or me.ammo.get(weapon.id, 0) >= (weapon.burst_rounds if "BF" in weapon.modes else 1)


def reloadable(me: RonD6Combatant, weapon: Weapon) -> bool:
    return bool(weapon.capacity) and me.reloads.get(weapon.id, 0) > 0 and me.ammo.get(weapon.id, 0) < weapon.capacity


def hand_weapons(system: SystemContract, me: RonD6Combatant) -> list[Weapon]:
    """Loaded weapons in hand for a single-target attack, best damage first, then fists."""
    from firelane.engine.systems.rond6.rolling import weapon_damage_code

    held = [w for w in me.weapons if w.id in me.readied and loaded(me, w) and not is_area_weapon(w)]
    held.sort(key=lambda w: (-weapon_damage_code(me, w).total_pips(), w.id))
    return [*held, system.weapon(me, "unarmed")]


def first_attack(system: SystemContract, state: RonD6State, me: RonD6Combatant) -> tuple[Weapon, RonD6Combatant] | None:
    """The best weapon in hand and the nearest enemy it can reach now."""
    for target in enemies(state, me):
        for weapon in hand_weapons(system, me):
            problem, _ = actions.reach_problem(system, state, me, target, weapon)
            if problem is None:
                return weapon, target
    return None


def weapon_to_ready(me: RonD6Combatant) -> tuple[Weapon, bool] | None:
    """(weapon, reload?) when nothing loaded is in hand but something can be readied
    (a grenade in hand does not count: it is no weapon for single attacks)."""
    weapons = [w for w in me.weapons if not is_area_weapon(w)]
    if any(w.id in me.readied and loaded(me, w) for w in weapons):
        return None
    for weapon in weapons:
        if weapon.id in me.readied and reloadable(me, weapon):
            return weapon, True
    for weapon in weapons:
        if weapon.id not in me.readied and loaded(me, weapon):
            return weapon, False
    return None


def charge_target(system: SystemContract, state: RonD6State, me: RonD6Combatant) -> tuple[Weapon, RonD6Combatant] | None:
    melee = [w for w in me.weapons if w.kind == "melee" and w.id in me.readied]
    if not melee or "prone" in me.conditions or me.grappled_by:
        return None
    weapon = melee[0]
    for target in enemies(state, me)[:2]:
        try:
            plan_path = actions.charge_path(system, state, me, target, weapon.reach)
        except Rejected:
            continue
        if 2 <= len(plan_path) <= 2 * movement.effective_move(me, state.settings):
            return weapon, target
    return None


def area_attack_now(system: SystemContract, state: RonD6State, me: RonD6Combatant) -> R6AreaAttack | None:
    """The grenade throw worth making from here, or None: the area that catches
    the most enemies and no ally (`areas.choose_area_attack`), kept only when
    the expected attack total beats the Defense of at least `AREA_MIN_ENEMIES`
    of them. A grenade is used once; thrown at a range where it mostly misses
    (a medium-range -5 on an average thrower) it would be wasted."""
    if "prone" in me.conditions or me.grappled_by:
        return None
    throw = areas.choose_area_attack(system, state, me.id, min_enemies=AREA_MIN_ENEMIES)
    if throw is None or me.position is None:
        return None
    weapon = system.weapon(me, throw.weapon)
    shape, size = areas.weapon_area(weapon)  # type: ignore[misc]
    code, _ = rules.skill_code(me.attributes, me.skills, weapon.skill, untrained="untrained" in me.conditions)
    expected = mean(adjusted(code, condition_dice_mods(me, weapon.skill)))
    grid = Grid(state.terrain)
    walls_block = bool(state.settings.get("area_walls_block", areas.AREA_DEFAULTS["area_walls_block"]))
    if shape == "burst":
        centre: tuple[int, int] = tuple(throw.center)  # type: ignore[arg-type,assignment]
        gap = distance(tuple(me.position), centre)  # type: ignore[arg-type]
        band = rules.range_band(gap, weapon.ranges) if weapon.ranges else "point_blank"
        expected += rules.RANGE_MODIFIER[band]  # type: ignore[index]
        squares = areas.affected_burst(grid, centre, size, walls_block=walls_block)
        blast = msgspec.structs.replace(me, position=centre)  # cover is measured from the blast, as the system does
    else:
        squares = areas.affected_cone(grid, tuple(me.position), throw.facing, size, walls_block=walls_block)  # type: ignore[arg-type]
        blast = me
    likely_hits = sum(
        1 for target in areas.area_targets(state, squares, exclude=me.id)
        if target.side != me.side and combat.defense_value(system, state, blast, target, weapon.kind, "area")[0] <= expected
    )
    return throw if likely_hits >= AREA_MIN_ENEMIES else None


def advance_to_throw(system: SystemContract, state: RonD6State, me: RonD6Combatant) -> list[tuple[int, int]] | None:
    """The path of a full move towards the best burst's target Space, when that
    Space is beyond the grenade's Short range and no throw is worth making from
    here (`area_attack_now`): a thrower closes in to throw next round (the -5 of
    Medium range is what usually spoils the throw). The move stops at Short
    range rather than walking up to the enemies it means to blast."""
    if me.position is None or "prone" in me.conditions or me.grappled_by:
        return None
    throw = areas.choose_area_attack(system, state, me.id, min_enemies=AREA_MIN_ENEMIES)
    if throw is None or throw.center is None:
        return None  # nothing to throw at, or a cone: it has no range to close
    weapon = system.weapon(me, throw.weapon)
    centre: tuple[int, int] = tuple(throw.center)  # type: ignore[assignment]
    gap = distance(tuple(me.position), centre)  # type: ignore[arg-type]
    if not weapon.ranges or gap <= weapon.ranges[0] or area_attack_now(system, state, me) is not None:
        return None
    limit = min(movement.mode_move(me, "walk", state.settings), gap - weapon.ranges[0])
    return movement.path_towards(state, me.id, centre, limit) or None


def healing_reach(state: RonD6State) -> int:
    return int(state.settings.get("healing_reach", healing.HEALING_DEFAULTS["healing_reach"]))


def worth_treating(state: RonD6State, me: RonD6Combatant, patient: RonD6Combatant) -> bool:
    """An untreated Wound (R6-43: once per injury) and at least even odds: the
    medic's expected Medicine total, with its own penalties, reaches the
    difficulty. A failed treatment costs the round's action, and a hopeless one
    (a patient with 3 Wounds is a Very Difficult 25) would keep the medic out
    of the fight round after round."""
    if patient.side != me.side or patient.dead or patient.position is None or patient.wounds <= healing.treated_wounds(patient):
        return False
    level, steps = healing.assisted_healing_steps(patient.wounds, healing.is_stunned(patient))
    code, _ = rules.skill_code(me.attributes, me.skills, "medicine", untrained="untrained" in me.conditions)
    return mean(adjusted(code, condition_dice_mods(me, "medicine"))) >= difficulty(level, steps, settings=state.settings)


def patients(state: RonD6State, me: RonD6Combatant) -> list[RonD6Combatant]:
    """Allies (itself included) a medic should treat: most Wounds first, then by ID."""
    if "medicine" not in me.skills or me.out_of_fight or me.position is None:
        return []
    found = [c for c in state.combatants.values() if worth_treating(state, me, c)]
    return sorted(found, key=lambda c: (-c.wounds, c.id))


def heal_now(system: SystemContract, state: RonD6State, me: RonD6Combatant) -> R6Heal | None:
    """The treatment a medic can give without moving, or None."""
    if "prone" in me.conditions or me.grappled_by:
        return None
    reach = healing_reach(state)
    for patient in patients(state, me):
        if distance(tuple(me.position), tuple(patient.position)) <= reach:  # type: ignore[arg-type]
            return R6Heal(command_id=next_command_id(state, me.id), actor=me.id, patient=patient.id, kind="assisted")
    return None


def patient_to_reach(system: SystemContract, state: RonD6State, me: RonD6Combatant) -> tuple[RonD6Combatant, list[tuple[int, int]]] | None:
    """(patient, path): the first of `patients` that a partial move brings within
    healing reach, so a move and a treatment fit in the round; None for a
    non-medic or when nobody needs it."""
    if me.position is None or "prone" in me.conditions or me.grappled_by:
        return None
    reach = healing_reach(state)
    allowed = movement.partial_move(movement.mode_move(me, "walk", state.settings),
                                    movement.movement_settings(state.settings)["partial_move_rounding"])
    for patient in patients(state, me):
        if patient.id == me.id:
            continue
        path = movement.path_towards(state, me.id, tuple(patient.position), allowed)  # type: ignore[arg-type]
        if path and distance(path[-1], tuple(patient.position)) <= reach:  # type: ignore[arg-type]
            return patient, path
    return None


def prep_actions(system: SystemContract, me: RonD6Combatant) -> int:
    return int("prone" in me.conditions) + int(bool(me.grappled_by)) + int(weapon_to_ready(me) is not None)


# --------------------------------------------------------------------------- the turn


def choose_command(system: SystemContract, state: RonD6State, cid: str) -> Command | None:
    me = state.combatants[cid]
    command_id = next_command_id(state, cid)
    if state.window is not None:
        return answer_window(system, state, me, command_id)
    if state.active != cid or me.out_of_fight:
        return None
    if me.declared_actions == 0:
        return R6DeclareActions(command_id=command_id, actor=cid, count=plan_count(system, state, me))
    if system.action_unavailable(state, me) is not None:
        return None
    return next_action(system, state, me, command_id)


def plan_count(system: SystemContract, state: RonD6State, me: RonD6Combatant) -> int:
    """Actions to declare: a treatment or a grenade throw alone (after standing
    up or breaking free), a move and a treatment; otherwise the preparations
    (stand, break free, ready or reload) plus one attack if an enemy is in
    reach, else a move and an attack."""
    limit = system.action_limit(state, me)
    hindrances = int("prone" in me.conditions) + int(bool(me.grappled_by))
    # Judged as if already standing and free, as `next_action` will be when it gets there.
    free = msgspec.structs.replace(me, conditions={k: v for k, v in me.conditions.items() if k != "prone"}, grappled_by="")
    prep = prep_actions(system, me)
    if heal_now(system, state, free) is not None or area_attack_now(system, state, free) is not None:
        count = hindrances + 1
    elif patient_to_reach(system, state, free) is not None:
        count = hindrances + 2  # move next to the patient, then treat it
    elif hindrances == 0 and advance_to_throw(system, state, me) is not None:
        count = 1  # a full move into throwing range
    elif in_reach_after_prep(system, state, me):
        count = prep + 1  # with nothing to prepare: alone in the round, the big options
    elif me.tactic == "hold":
        count = prep + 1
    elif prep == 0 and charge_target(system, state, me) is not None:
        count = 1
    else:
        count = prep + 2  # get ready, move, then attack
    return max(1, min(count, limit))


def in_reach_after_prep(system: SystemContract, state: RonD6State, me: RonD6Combatant) -> bool:
    """Whether an enemy is within reach of the weapon in hand or the one about to be readied."""
    ready = weapon_to_ready(me)
    weapons = [ready[0]] if ready is not None else hand_weapons(system, me)
    for target in enemies(state, me):
        for weapon in weapons:
            problem, _ = actions.reach_problem(system, state, me, target, weapon)
            if problem is None:
                return True
    return False


def next_action(system: SystemContract, state: RonD6State, me: RonD6Combatant, command_id: str) -> Command | None:
    cid = me.id
    alone = me.declared_actions == 1 and me.actions_used == 0
    if "prone" in me.conditions:
        return R6Stand(command_id=command_id, actor=cid)
    if me.grappled_by:
        return R6Escape(command_id=command_id, actor=cid)
    heal = heal_now(system, state, me)
    if heal is not None:
        return msgspec.structs.replace(heal, command_id=command_id)
    throw = area_attack_now(system, state, me)
    if throw is not None:
        return msgspec.structs.replace(throw, command_id=command_id)
    if alone:
        path = advance_to_throw(system, state, me)
        if path is not None:
            return R6Move(command_id=command_id, actor=cid, path=path, mode="walk", pace="full")
    if me.declared_actions - me.actions_used >= 2:  # room to move and still treat
        patient = patient_to_reach(system, state, me)
        if patient is not None:
            return R6Move(command_id=command_id, actor=cid, path=patient[1], mode="walk", pace="partial")
    ready = weapon_to_ready(me)
    if ready is not None:
        weapon, reload = ready
        return R6Ready(command_id=command_id, actor=cid, weapon=weapon.id, reload=reload)
    attack = first_attack(system, state, me)
    if attack is not None:
        weapon, target = attack
        option = "normal"
        if alone and weapon.kind in ("melee", "unarmed"):
            option = "all_out"
        elif alone and "FA" in weapon.modes and me.ammo.get(weapon.id, 0) >= weapon.auto_rounds:
            option = "full_auto"
        return R6Attack(command_id=command_id, actor=cid, target=target.id, weapon=weapon.id, option=option)
    if me.tactic == "hold":
        return None if me.waiting else R6Wait(command_id=command_id, actor=cid)
    if alone:
        charge = charge_target(system, state, me)
        if charge is not None:
            weapon, target = charge
            return R6Charge(command_id=command_id, actor=cid, target=target.id, weapon=weapon.id)
    return move_towards(system, state, me, command_id, full=alone)


def move_towards(system: SystemContract, state: RonD6State, me: RonD6Combatant, command_id: str, *, full: bool) -> Command | None:
    if me.position is None:
        return None
    foes = enemies(state, me)
    if not foes or foes[0].position is None:
        return None
    allowed = movement.mode_move(me, "walk", state.settings)
    if not full:
        allowed = movement.partial_move(allowed, movement.movement_settings(state.settings)["partial_move_rounding"])
    path = movement.path_towards(state, me.id, tuple(foes[0].position), allowed)
    if not path:
        return None
    return R6Move(command_id=command_id, actor=me.id, path=path, mode="walk", pace="full" if full else "partial")


# --------------------------------------------------------------------------- windows


def answer_window(system: SystemContract, state: RonD6State, me: RonD6Combatant, command_id: str) -> Command | None:
    window = state.window
    assert window is not None
    reactor = window.eligible(me.id)
    if reactor is None or window.answered(me.id):
        return None
    kind = window.continuation.get("kind")
    passing = PassReaction(command_id=command_id, actor=me.id, window=window.window)
    if kind == "defend":
        choice = best_defense(system, state, me, reactor.reactions, window.continuation.get("attack_kind", ""))
        if choice is None:
            return passing
        return ClaimReaction(command_id=command_id, actor=me.id, window=window.window, reaction=choice)
    if kind == "resist":
        options = resist_choice(system, state, me, window.continuation["hit"])
        if not options:
            return passing
        return ClaimReaction(command_id=command_id, actor=me.id, window=window.window, reaction="resist", options=options)
    if kind == "wait":
        declarer = state.combatants[window.actor]
        if declarer.side == me.side:
            return passing
        for weapon in hand_weapons(system, me):
            problem, _ = actions.reach_problem(system, state, me, declarer, weapon)
            if problem is None:
                command = {"type": "R6Attack", "target": declarer.id, "weapon": weapon.id}
                return ClaimReaction(command_id=command_id, actor=me.id, window=window.window, reaction="interrupt", options={"command": command})
        return passing
    return passing


def best_defense(system: SystemContract, state: RonD6State, me: RonD6Combatant, offered: list[str], attack_kind: str) -> str | None:
    declared = me.declared_actions or max(1, min(int(state.settings.get("reaction_declares_actions", 2)), system.action_limit(state, me)))
    penalty = declared - 1
    passive = rules.passive_defense(difficulty("standard", settings=state.settings), as_code(me.attributes.get("Agility", "2D")).dice,
                                    me.passive_defense_bonus + me.defense_bonus)
    best: tuple[float, str] | None = None
    for name in offered:
        skill = rules.DEFENSE_REACTIONS[name]
        code, _ = rules.skill_code(me.attributes, me.skills, skill, untrained="untrained" in me.conditions)
        expected = mean(adjusted(code, condition_dice_mods(me, skill, action_penalty=penalty)))
        if expected > passive and (best is None or expected > best[0]):
            best = (expected, name)
    return best[1] if best else None


def resist_choice(system: SystemContract, state: RonD6State, me: RonD6Combatant, hit: dict[str, Any]) -> dict[str, Any]:
    resistance, _ = rules.damage_resistance(me.attributes.get("Strength", "2D"), me.armor, bonus=me.dr_bonus,
                                            armor_per_die=int(state.settings.get("armor_points_per_die", 4)))
    damage = int(hit["damage_total"])
    _stunned, wounds = rules.damage_outcome(damage, resistance)
    if hit.get("stun"):
        wounds = rules.stun_damage_wounds(wounds)
    if me.fate_points > 0 and wounds and me.wounds + wounds >= 3:
        return {"fate_point": True}
    if me.character_points > 0 and wounds:
        return {"character_points": min(me.character_points, max(1, (damage - resistance) // 6))}
    return {}
