"""What a d100-zones combatant may do now (issue 9): the answers behind
`D100ZonesSystem.turn_options` and `reaction_options`.

* moves: every square reachable this turn (up to 50 m in all, D100Z-02), with
  the path the engine takes (`firelane.engine.routes`), its cost in metres and
  its mode: ``free`` (the free move of up to one zone, D100Z-03) or ``action``
  (farther than one zone, or out of a suppressed zone: it takes the action);
  threats: each enemy the move leaves Engaged range of gets a free attack
  (D100Z-15), with its exact chance to land against the mover's dodge at -20;
* attacks: each weapon (and fists) on each enemy it can reach: the first attack
  (the action) or the second one (multi-attack, D100Z-11), with every term of
  the roll (rule IDs), the target number and the exact chance the attack lands:
  a critical (01-10) always lands, 90+ always misses, any other face at or
  under the target lands unless the defender's dodge (its DEX with the dodge
  terms, 90+ failing) succeeds (D100Z-04/05); counted face by face;
* actions: Aimed Shot at each target (D100Z-12), Suppressive Fire into each
  zone with someone to catch (D100Z-13), First Aid on each patient (D100Z-14);
* a free-attack window: one choice per close weapon, each with its chance.

Attacks on allies (standing combatants of the attacker's side) are listed too,
each flagged in its notes with `ALLY_NOTE`: the engine accepts them, and a
table may want one, but no AI takes them. Aimed Shots and the free attack
name enemies only.
"""

from __future__ import annotations

from functools import lru_cache

import msgspec

from firelane.engine.core import BaseRuleSystem, Rejected, TurnOptions, command_json
from firelane.engine.grid import Grid, Square
from firelane.engine.routes import reachable
from firelane.engine.state import ReactionWindow
from firelane.engine.systems.d100_zones import actions, rules
from firelane.engine.systems.d100_zones.state import MELEE, RANGED, UNARMED, D100ZCombatant, D100ZState, ZWeapon
from firelane.engine.systems.percentile import body_squares, d100_chance, metres, occupied_squares, position
from firelane.engine.systems.percentile.probe import accepts
from firelane.engine.systems.d100_zones.schemas import D100ZAimedShot, D100ZAttack, D100ZFirstAid, D100ZMove, D100ZSuppressiveFire
from firelane.events.options_schemas import ActionOption, AttackOption, Choice, MoveOption, ReactionOption, Threat
from firelane.events.schemas import ClaimReaction, Modifier


@lru_cache(maxsize=4096)
def dodge_chance(dodge_target: int) -> float:
    """D100Z-05: the dodge works on a face at or under its target that is not 90+."""
    return d100_chance(lambda face: rules.dodge_succeeds(face, dodge_target))


@lru_cache(maxsize=16384)
def landing_chance(attack_target: int, dodge_target: int) -> float:
    """D100Z-04/05, counted over the faces: a critical lands, 90+ misses, a plain
    hit lands when the dodge fails."""
    critical = outcome_chance(attack_target, "critical")
    plain = outcome_chance(attack_target, "hit")
    return critical + plain * (1 - dodge_chance(dodge_target))


@lru_cache(maxsize=4096)
def outcome_chance(attack_target: int, outcome: str) -> float:
    """D100Z-04: the chance an attack at ``attack_target`` comes out ``outcome`` ("critical", "hit", "miss", "fumble")."""
    return d100_chance(lambda face: rules.attack_outcome(face, attack_target) == outcome)


def close_weapons(state: D100ZState, me: D100ZCombatant) -> list[ZWeapon]:
    """Melee and unarmed weapons, and fists when it has no unarmed weapon of its own."""
    found = [w for w in me.weapons if w.kind in (MELEE, UNARMED)]
    if not any(w.name == "unarmed" for w in me.weapons):
        found.append(actions.unarmed_weapon(state))
    return found


def attack_weapons(state: D100ZState, me: D100ZCombatant) -> list[ZWeapon]:
    return [w for w in me.weapons if w.kind == RANGED] + close_weapons(state, me)


def can_reach(state: D100ZState, me: D100ZCombatant, target: D100ZCombatant, weapon: ZWeapon) -> bool:
    try:
        actions.check_reach(state, me, target, weapon)
    except Rejected:
        return False
    return True


def attack_terms(
    state: D100ZState, me: D100ZCombatant, target: D100ZCombatant, weapon: ZWeapon, extra: list[Modifier]
) -> tuple[list[Modifier], list[Modifier]]:
    """The attack roll's terms (as `actions.resolve_attack` lists them) and the defender's dodge terms."""
    attack_mods, dodge_mods, _aimed = actions.targeting_modifiers(state, me, target, weapon)
    terms = [Modifier(source=f"{actions.SKILL_LABELS[weapon.kind]} skill", rule="D100Z-04", value=me.skill_for(weapon)),
             *attack_mods, *extra]
    dodge = [Modifier(source="DEX", rule="D100Z-05", value=target.dexterity), *dodge_mods]
    return terms, dodge


def attack_notes(terms: list[Modifier], dodge: list[Modifier], target: D100ZCombatant) -> list[str]:
    number = sum(t.value for t in terms)
    critical, fumble = outcome_chance(number, "critical"), outcome_chance(number, "fumble")
    return [
        f"critical {critical:.0%} (01-10: lands, double damage, no dodge, D100Z-04)",
        f"90+ {fumble:.0%}: misses with a complication the GM decides (D100Z-04)",
        f"{target.id} dodges a plain hit at {sum(d.value for d in dodge)} ({dodge_chance(sum(d.value for d in dodge)):.0%}, D100Z-05)",
    ]


ALLY_NOTE = "attacks an ally (same side as the attacker)"


def enemies(state: D100ZState, me: D100ZCombatant) -> list[D100ZCombatant]:
    return sorted(actions.enemies_of(state, me), key=lambda c: c.id)


def allies(state: D100ZState, me: D100ZCombatant) -> list[D100ZCombatant]:
    return sorted((c for c in state.combatants.values()
                   if c.side == me.side and c.id != me.id and not c.out_of_fight and c.position is not None), key=lambda c: c.id)


# ---------------------------------------------------------------- the turn


def turn_options(system: BaseRuleSystem, state: D100ZState, combatant_id: str) -> TurnOptions:
    me = state.combatants[combatant_id]
    if me.position is None:
        return TurnOptions()
    return TurnOptions(moves=move_options(state, me), attacks=attack_options(state, me), actions=other_actions(system, state, me))


def free_attack_chance(state: D100ZState, enemy: D100ZCombatant, mover: D100ZCombatant) -> float:
    """D100Z-15: the chance ``enemy``'s free attack lands on ``mover`` (who dodges it at -20)."""
    weapon = actions.close_weapon(state, enemy)
    terms, _dodge = attack_terms(state, enemy, mover, weapon, [])
    return landing_chance(sum(t.value for t in terms), mover.dexterity - 20)


def free_attack_threat(state: D100ZState, enemy: D100ZCombatant, mover: D100ZCombatant, path: list[Square],
                       chance: float | None = None) -> Threat:
    leaving = next(sq for sq in path if rules.zone_of(metres(state, position(enemy), sq)) != "engaged")
    return Threat(reactor=enemy.id, reaction=actions.FREE_ATTACK, at=leaving, rule="D100Z-15",
                  hit_chance=free_attack_chance(state, enemy, mover) if chance is None else chance)


def move_option(state: D100ZState, me: D100ZCombatant, square: Square, path: list[Square],
                chances: dict[str, float] | None = None) -> MoveOption | None:
    """The move to ``square`` along ``path`` (a walkable one, as `reachable` gives), or None when it is not legal."""
    try:
        plan = actions.move_plan(state, me, path)
    except Rejected:
        return None  # e.g. the action is needed and already spent
    threats = [free_attack_threat(state, state.combatants[enemy], me, path, (chances or {}).get(enemy)) for enemy in plan["provoked"]]
    return MoveOption(
        to=square, cost=float(plan["metres"]), path=path, mode="action" if plan["costs"] else "free", threats=threats,
        command=command_json(D100ZMove(command_id="", actor=me.id, to=square)))


def move_steps(state: D100ZState, me: D100ZCombatant) -> int:
    return int((rules.MAX_MOVE_M - me.moved_m) / float(state.settings["square_metres"]) + 1e-9)


def move_options(state: D100ZState, me: D100ZCombatant) -> list[MoveOption]:
    if me.aimed_this_turn:
        return []
    found = reachable(Grid(state.terrain), position(me), occupied_squares(state, ignore=[me.id]), move_steps(state, me))
    lying = body_squares(state, ignore=[me.id])  # stepped over, never ended on
    found = {square: path for square, path in found.items() if square not in lying}
    # A free attack's chance does not depend on the path: once per engaged enemy.
    chances = {e.id: free_attack_chance(state, e, me) for e in actions.enemies_of(state, me) if actions.engaged(state, me, e)}
    return [option for option in (move_option(state, me, square, path, chances) for square, path in found.items()) if option is not None]


def attack_options(state: D100ZState, me: D100ZCombatant) -> list[AttackOption]:
    if not me.attacks:
        if me.action_used:
            return []
        mode = "attack"
    elif actions.option_on(state, "multi_attack") and len(me.attacks) < 2:
        mode = "second attack"
    else:
        return []
    options = []
    targets = [(e, False) for e in enemies(state, me)] + [(a, True) for a in allies(state, me)]
    for weapon in attack_weapons(state, me):
        for target, ally in targets:
            if not can_reach(state, me, target, weapon):
                continue
            extra: list[Modifier] = []
            if mode == "second attack":
                first = me.weapon(me.attacks[0])
                two = (first is not None and first.name != weapon.name and first.hands == 1 and weapon.hands == 1
                       and UNARMED not in (first.kind, weapon.kind))
                extra.append(Modifier(source="second attack, other hand" if two else "second attack, same weapon",
                                      rule="D100Z-11", value=-10 if two else -20))
            terms, dodge = attack_terms(state, me, target, weapon, extra)
            number = sum(t.value for t in terms)
            options.append(AttackOption(
                target=target.id, weapon=weapon.name, mode=mode, modifiers=terms, target_number=number,
                hit_chance=landing_chance(number, sum(d.value for d in dodge)),
                notes=([ALLY_NOTE] if ally else []) + attack_notes(terms, dodge, target),
                rule="D100Z-11" if mode == "second attack" else "D100Z-04",
                command=command_json(D100ZAttack(command_id="", actor=me.id, target=target.id, weapon=weapon.name))))
    return options


def other_actions(system: BaseRuleSystem, state: D100ZState, me: D100ZCombatant) -> list[ActionOption]:
    found: list[ActionOption] = []
    guns = [w for w in me.weapons if w.kind == RANGED]
    aims = [
        (D100ZAimedShot(command_id="", actor=me.id, target=target.id, weapon=gun.name),
         Choice(label=f"aim {gun.name} at {target.id} (the whole turn; +20 on the next attack at it)", rule="D100Z-12",
                command={}))
        for gun in guns for target in enemies(state, me)
    ]
    zones = []
    for gun in guns:
        for zone in rules.ZONE_NAMES:
            caught = actions.suppressed_targets(state, me, gun, zone)
            if caught:
                zones.append((D100ZSuppressiveFire(command_id="", actor=me.id, zone=zone, weapon=gun.name), Choice(
                    label=f"Suppressive Fire with {gun.name} into the {zone} zone", rule="D100Z-13",
                    notes=[f"catches: {', '.join(caught)} (each rolls DEX: a failure takes the weapon's base damage)"],
                    command={})))
    aid = []
    chance = d100_chance(lambda face: face <= me.intelligence or face <= rules.CRITICAL_AT_MOST)
    for patient in sorted(state.combatants.values(), key=lambda c: c.id):
        if patient.side == me.side:
            aid.append((D100ZFirstAid(command_id="", actor=me.id, target=patient.id), Choice(
                label=f"first aid on {patient.id}", rule="D100Z-14", hit_chance=chance,
                chance_of="the first aid works", notes=["an INT test; 01-10 always works and stabilises"], command={})))
    for action, label, rule, candidates in (("D100ZAimedShot", "Aimed Shot", "D100Z-12", aims),
                                            ("D100ZSuppressiveFire", "Suppressive Fire", "D100Z-13", zones),
                                            ("D100ZFirstAid", "First Aid", "D100Z-14", aid)):
        legal = [msgspec.structs.replace(choice, command=command_json(command))
                 for command, choice in candidates if accepts(system, state, command)]
        if legal:
            found.append(ActionOption(action=action, label=label, rule=rule, choices=legal))
    return found


# ---------------------------------------------------------------- the free-attack window


def reaction_options(state: D100ZState, window: ReactionWindow, combatant_id: str) -> list[ReactionOption]:
    """D100Z-15: a free attack on the mover with each close weapon, each with its chance to land."""
    reactor = window.eligible(combatant_id)
    if reactor is None or actions.FREE_ATTACK not in reactor.reactions:
        return []
    me = state.combatants[combatant_id]
    mover = state.combatants[window.actor]
    choices = []
    for weapon in close_weapons(state, me):
        terms, _dodge = attack_terms(state, me, mover, weapon, [])
        number = sum(t.value for t in terms)
        choices.append(Choice(
            label=f"free attack on {mover.id} with {weapon.name} ({number}; {mover.id} dodges at -20)", rule="D100Z-15",
            hit_chance=landing_chance(number, mover.dexterity - 20),
            command=command_json(ClaimReaction(command_id="", actor=combatant_id, window=window.window,
                                               reaction=actions.FREE_ATTACK, options={"weapon": weapon.name}))))
    return [ReactionOption(reaction=actions.FREE_ATTACK, label="free attack (leaving Engaged range)", rule="D100Z-15", choices=choices)]
