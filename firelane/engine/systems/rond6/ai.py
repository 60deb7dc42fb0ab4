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
take the character down; a Waiting combatant interrupts an enemy with the
listed interrupting attack worth most.

Picking from the options (issue 9). The plan above decides what kind of
command comes next; the command itself is a listed option, built by the
option builders of `options` for this state, each at most once a decision:
the declaration (the listed count), the window answers, Stand, Escape, Ready,
Wait, Charge and treatments (`options.other_actions`), moves (the walk the
plan's path search ends at, as `options.move_option` lists it: the same
builder `move_options` runs for every Space, for the one destination wanted),
and attacks: every listed attack on an enemy (each weapon in hand, target and
attack option: normal, All-Out, Full Auto, Sweep, Burst as Single, Lunge)
scored by its exact chance to hit (`options.attack_option`, Wild Die
included) times what its damage is worth (`damage_worth`: the exact damage
pool against the target's Damage Resistance, R6-19/21), the best taken. It
weighs no Called Shots, Rapid Fire, off-hand or Coordinated Attacks (their
builders are not asked), and never attacks an ally. Area attacks keep their
own choice (`areas.choose_area_attack`, above), not the listed ones
(`options.area_options` lists one centre per outcome; the AI's centre is on
an enemy, a command the engine takes but not always the centre listed). Where
the options do not list what the plan wants, the old command stands: a move
or action the options refuse (then the engine refuses it too, and the driver
ends the turn).
"""

from __future__ import annotations

from functools import lru_cache
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
    odds,
    rules,
)
from firelane.engine.systems.rond6 import options as listing
from firelane.engine.systems.rond6 import reactions
from firelane.engine.systems.rond6.contract import SystemContract
from firelane.engine.systems.rond6.pools import DieCode, as_code, difficulty
from firelane.engine.systems.rond6.rolling import adjusted, condition_dice_mods, dice_mods_from, weapon_damage_code
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
from firelane.events import codec
from firelane.events.options_schemas import ActionOption, AttackOption
from firelane.events.schemas import ClaimReaction, Command, PassReaction

# What a hit is worth by the Wounds its target ends up with (R6-21: 3 is
# Incapacitated, usually out of the fight; 4 Mortally Wounded; 5 dead).
LEVEL_WORTH = (0.0, 1.0, 2.0, 3.5, 4.5, 5.0)
STUN_WORTH = 0.25  # Stunned: -1D to its next actions (R6-19/22)


# Two attacks are weighed against one for a round (each further one is -1D to all, R6-05).
MAX_ATTACKS_DECLARED = 2
RECHECKED = 3
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
        count = plan_count(system, state, me)
        for option in listing.declare_options(system, state, me, more_only=False):
            for choice in option.choices:
                if option.action == "R6DeclareActions" and choice.command["count"] == count and not choice.command.get("fate_point"):
                    return _as_command(system, choice.command, command_id)
        return R6DeclareActions(command_id=command_id, actor=cid, count=count)
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
        # With nothing to prepare: one attack alone in the round (the big options)
        # or several at the multiple-action penalty, whichever the listed attacks say is worth more.
        count = prep + 1 if prep else attacks_to_declare(system, state, me, limit)
    elif me.tactic == "hold":
        count = prep + 1
    elif prep == 0 and charge_target(system, state, me) is not None:
        count = 1
    else:
        count = prep + 2  # get ready, move, then attack
    return max(1, min(count, limit))


def attacks_to_declare(system: SystemContract, state: RonD6State, me: RonD6Combatant, limit: int) -> int:
    """R6-05: how many attacks to declare when an enemy is in reach now: one
    (the big options alone in the round) or two at -1D each, whichever the
    listed attacks say is worth more in all (each as the state would be with
    that count declared). Two attacks are weighed with the `RECHECKED` attacks
    worth most alone that are not Full Actions: a penalty die lowers every
    chance alike, so the best of them stays near the top."""
    if limit < MAX_ATTACKS_DECLARED:
        return 1
    alone = msgspec.structs.replace(me, declared_actions=1)
    worth, _command, as_actions = _best_attack(system, msgspec.structs.replace(state, combatants={**state.combatants, me.id: alone}), alone)
    # A penalty die only lowers an attack's chance: two attacks are worth at most twice the best that is not a Full Action.
    if not as_actions or MAX_ATTACKS_DECLARED * as_actions[0][0] <= worth + 1e-9:
        return 1
    two = msgspec.structs.replace(me, declared_actions=MAX_ATTACKS_DECLARED)
    among = [candidate for _worth, candidate in as_actions[:RECHECKED]]
    worth_two = _best_attack(system, msgspec.structs.replace(state, combatants={**state.combatants, me.id: two}), two, among)[0]
    return MAX_ATTACKS_DECLARED if MAX_ATTACKS_DECLARED * worth_two > worth + 1e-9 else 1


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
    listed = _Listed(system, state, me)

    def pick(action: str, fallback: Command, **fields: Any) -> Command:
        body = listed.choice(action, **fields)
        return _as_command(system, body, command_id) if body is not None else fallback

    if "prone" in me.conditions:
        return pick("R6Stand", R6Stand(command_id=command_id, actor=cid))
    if me.grappled_by:
        return pick("R6Escape", R6Escape(command_id=command_id, actor=cid))
    heal = heal_now(system, state, me)
    if heal is not None:
        return pick("R6Heal", msgspec.structs.replace(heal, command_id=command_id), patient=heal.patient, kind=heal.kind)
    throw = area_attack_now(system, state, me)
    if throw is not None:
        return msgspec.structs.replace(throw, command_id=command_id)  # the AI's own centre (see the module doc)
    if alone:
        path = advance_to_throw(system, state, me)
        if path is not None:
            return listed_move(system, state, me, path, "full", command_id)
    if me.declared_actions - me.actions_used >= 2:  # room to move and still treat
        patient = patient_to_reach(system, state, me)
        if patient is not None:
            return listed_move(system, state, me, patient[1], "partial", command_id)
    ready = weapon_to_ready(me)
    if ready is not None:
        weapon, reload = ready
        return pick("R6Ready", R6Ready(command_id=command_id, actor=cid, weapon=weapon.id, reload=reload), weapon=weapon.id, reload=reload)
    attack = best_attack(system, state, me)
    if attack is not None:
        return _as_command(system, attack, command_id)
    if me.tactic == "hold":
        return None if me.waiting else pick("R6Wait", R6Wait(command_id=command_id, actor=cid))
    if alone:
        charge = charge_target(system, state, me)
        if charge is not None:
            weapon, target = charge
            return pick("R6Charge", R6Charge(command_id=command_id, actor=cid, target=target.id, weapon=weapon.id),
                        target=target.id, weapon=weapon.id)
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
    return listed_move(system, state, me, path, "full" if full else "partial", command_id)


# --------------------------------------------------------------------------- windows


def answer_window(system: SystemContract, state: RonD6State, me: RonD6Combatant, command_id: str) -> Command | None:
    window = state.window
    assert window is not None
    reactor = window.eligible(me.id)
    if reactor is None or window.answered(me.id):
        return None
    kind = window.continuation.get("kind")
    passing = PassReaction(command_id=command_id, actor=me.id, window=window.window)
    if kind not in ("defend", "resist", "wait"):
        return passing
    listed = {option.reaction: option.choices for option in listing.reaction_options(system, state, window, me.id)}

    def claim(reaction: str, wanted: dict[str, Any]) -> Command | None:
        for choice in listed.get(reaction, []):
            if choice.command.get("options", {}) == wanted:
                return _as_command(system, choice.command, command_id)
        return None

    if kind == "defend":
        choice = best_defense(system, state, me, reactor.reactions, window.continuation.get("attack_kind", ""))
        if choice is None:
            return passing
        wanted = {} if me.declared_actions else {"declare": reactions.declare_count(system, state, me, {})}
        return claim(choice, wanted) or ClaimReaction(command_id=command_id, actor=me.id, window=window.window, reaction=choice)
    if kind == "resist":
        spend = resist_choice(system, state, me, window.continuation["hit"])
        if not spend:
            return passing
        wanted = {"character_points": int(spend.get("character_points", 0)), "fate_point": bool(spend.get("fate_point", False))}
        return claim("resist", wanted) or ClaimReaction(command_id=command_id, actor=me.id, window=window.window, reaction="resist", options=spend)
    declarer = state.combatants[window.actor]
    if declarer.side == me.side:
        return passing
    best: tuple[float, int, dict[str, Any]] | None = None
    for index, choice in enumerate(listed.get(rules.INTERRUPT, [])):
        attack = choice.command["options"]["command"]
        if attack.get("type") != "R6Attack" or attack.get("target") != declarer.id:
            continue
        command = R6Attack(command_id="", actor=me.id, target=declarer.id, weapon=attack["weapon"])
        plan = actions.check_attack(system, state, me.id, command)
        worth = (choice.hit_chance or 0.0) * damage_worth(system, state, plan["strikes"][0])
        if best is None or (worth, -index) > (best[0], best[1]):
            best = (worth, -index, choice.command)
    return _as_command(system, best[2], command_id) if best is not None else passing


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


# --------------------------------------------------------------------------- picking from the options


_UNION: list[Any] = []


def _as_command(system: SystemContract, body: dict[str, Any], command_id: str) -> Command:
    """A listed option's command (its JSON, without ``command_id``), to send as ``command_id``."""
    if not _UNION:
        _UNION.append(codec.command_union(system.command_types))  # type: ignore[attr-defined]
    return msgspec.convert({**body, "command_id": command_id}, _UNION[0])  # type: ignore[no-any-return]


class _Listed:
    """The options of one decision, each kind of action built once when first asked for."""

    def __init__(self, system: SystemContract, state: RonD6State, me: RonD6Combatant) -> None:
        self.system, self.state, self.me = system, state, me
        self._actions: dict[str, list[ActionOption]] = {}

    def choice(self, action: str, **fields: Any) -> dict[str, Any] | None:
        """The listed choice of ``action`` whose command has these fields."""
        if action not in self._actions:
            self._actions[action] = listing.other_actions(self.system, self.state, self.me, frozenset({action}))
        for option in self._actions[action]:
            for choice in option.choices:
                if all(choice.command.get(k) == v for k, v in fields.items()):
                    return choice.command
        return None


def damage_worth(system: SystemContract, state: RonD6State, strike: dict[str, Any]) -> float:
    """R6-19/21: what one hit of ``strike`` is worth: over the exact damage
    pool (the weapon's code with the attack option's dice, Wild Die included),
    the Wounds (or Stun) it leaves against the target's Damage Resistance."""
    attacker = state.combatants[strike["attacker"]]
    target = state.combatants[strike["target"]]
    weapon = system.weapon(attacker, strike["weapon"])
    code = adjusted(weapon_damage_code(attacker, weapon), dice_mods_from(strike["damage_dice"]))
    resistance, _ = rules.damage_resistance(target.attributes.get("Strength", "2D"), target.armor, bonus=target.dr_bonus,
                                            armor_per_die=int(state.settings.get("armor_points_per_die", 4)))
    return _worth_over(code.dice, code.pips, str(state.settings.get("complication_rule", "remove")), resistance,
                       target.wounds, bool(weapon.stun))


@lru_cache(maxsize=4096)
def _worth_over(dice: int, pips: int, complication_rule: str, resistance: int, wounds: int, stun: bool) -> float:
    worth = 0.0
    before = LEVEL_WORTH[min(wounds, 5)]
    for total, chance in odds.pool_faces(dice, complication_rule=complication_rule).items():
        stunned, gained = rules.damage_outcome(total + pips, resistance)
        if not stunned:
            continue
        if stun:
            gained = rules.stun_damage_wounds(gained)
        worth += chance * (STUN_WORTH + LEVEL_WORTH[min(wounds + gained, 5)] - before)
    return worth


def attack_worth(system: SystemContract, state: RonD6State, option: AttackOption, plan: dict[str, Any] | None = None) -> float:
    """The option's chance to hit (against the Active Defense the target's AI
    would claim, R6-16, when it may claim one) times what the hit is worth
    (``plan``: the engine's plan of the attack, when the caller has it)."""
    if plan is None:
        command = _as_command(system, option.command, "")
        plan = actions.check_attack(system, state, command.actor, command)  # type: ignore[arg-type]
    strike = plan["strikes"][0]
    chance = option.hit_chance
    target = state.combatants[strike["target"]]
    offered = reactions.defense_options(system, state, target, strike["attack_kind"])
    if offered and best_defense(system, state, target, offered, strike["attack_kind"]) is not None:
        rolled = listing.strike_roll(system, state, strike)
        opposed = listing.active_defense_chance(system, state, strike, rolled[3]) if rolled is not None and rolled[2]["kind"] == "passive" else None
        if opposed is not None:
            chance = opposed[1]
    return chance * damage_worth(system, state, strike)


FULL_ACTION_OPTIONS = ("all_out", "full_auto", "sweep")


def _may_fit(weapon: Weapon, option: str, declared: int = 1) -> bool:
    """Whether the weapon has the attack option at all (R6-24/26/31/33/39), and
    a Full Action one only alone in the round (R6-07): a quick sieve before the
    option builder checks the attack in full."""
    if option in FULL_ACTION_OPTIONS and declared > 1:
        return False
    if option == "all_out":
        return weapon.kind in ("melee", "unarmed")
    if option == "full_auto":
        return "FA" in weapon.modes
    if option == "sweep":
        return "FA" in weapon.modes or "SA" in weapon.modes
    if option == "burst_single":
        return "BF" in weapon.modes
    if option == "lunge":
        return weapon.kind == "melee" and weapon.reach > 1
    return True


def best_attack(system: SystemContract, state: RonD6State, me: RonD6Combatant) -> dict[str, Any] | None:
    """The listed attack on an enemy worth most (see the module doc), or None."""
    return _best_attack(system, state, me)[1]


def _best_attack(system: SystemContract, state: RonD6State, me: RonD6Combatant,
                 among: list[R6Attack] | None = None) -> tuple[float, dict[str, Any] | None, list[tuple[float, R6Attack]]]:
    """(the best worth, its command, the attacks that are not Full Actions with
    their worth, best first); ``among``: weigh only these listed candidates."""
    best: tuple[float, int, dict[str, Any]] | None = None
    as_actions: list[tuple[float, R6Attack]] = []
    in_reach: dict[tuple[str, str, bool], bool] = {}
    candidates = among if among is not None else listing.attack_candidates(system, state, me)
    for index, candidate in enumerate(candidates):
        weapon = system.weapon(me, candidate.weapon)
        if candidate.called_shot or is_area_weapon(weapon) or not _may_fit(weapon, candidate.option, me.declared_actions):
            continue
        key = (candidate.target, weapon.id, candidate.option == "lunge")
        if key not in in_reach:
            in_reach[key] = actions.reach_problem(system, state, me, state.combatants[candidate.target], weapon, lunge=key[2])[0] is None
        if not in_reach[key]:
            continue
        planned = listing.planned_attack_option(system, state, candidate)
        if planned is None:
            continue
        option, plan = planned
        worth = attack_worth(system, state, option, plan)
        if plan["spend"][0][1] != "full":
            as_actions.append((worth, candidate))
        if worth > 0 and (best is None or (worth, -index) > (best[0], best[1])):
            best = (worth, -index, option.command)
    as_actions.sort(key=lambda item: -item[0])
    return (best[0], best[2], as_actions) if best is not None else (0.0, None, as_actions)


def listed_move(system: SystemContract, state: RonD6State, me: RonD6Combatant, path: list[tuple[int, int]], pace: str,
                command_id: str) -> Command:
    """The listed walk to where ``path`` ends: at ``pace``, or at a slower pace
    when the options list that Space there (each Space once, at its cheapest
    pace); the path itself if the options do not list it at all."""
    end = (int(path[-1][0]), int(path[-1][1]))
    for slower in reversed(movement.MOVE_PACES[: movement.MOVE_PACES.index(pace) + 1]):
        option = listing.move_option(system, state, me, end, slower)
        if option is not None:
            return _as_command(system, option.command, command_id)
    return R6Move(command_id=command_id, actor=me.id, path=path, mode="walk", pace=pace)