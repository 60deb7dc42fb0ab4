"""What a d100-degrees combatant may do now (issue 9): the answers behind
`D100DegreesSystem.turn_options` and `reaction_options`.

Every option is built from the same checks the actions make (the costs of
D100D-02, the weapon's reach and sight, jams), so each listed command is
accepted by `decide`; its numbers are the engine's:

* moves: a Half Action's move (house default: Agility Bonus metres) to every
  reachable square, with the path the engine takes (`firelane.engine.routes`);
  nothing reacts to a move in d100-degrees (Evasion is a defence against a hit,
  not a threat on the way), so moves carry no threats;
* attacks: Basic Attack and All Out Attack with each melee weapon on each enemy
  in reach, Controlled Fire with each ranged weapon at each rate of fire on
  each enemy in range and sight; each with the test's terms (rule IDs), its
  target number and the exact chance that the attack hits: the d100 faces at or
  under the target, less those that jam the weapon when a jam misses (D100D-08);
  the target's Evasion chance is in the notes;
* actions: Suppressing Fire at each enemy's square at each RoF (who the
  killzone catches, the chance of the Ballistic Skill test), Clear Jam for
  each jammed weapon. The engine takes Suppressing Fire toward any square but
  the shooter's own (the 30 degree arc points at it): a frontend aims between
  enemies by sending a listed command with another ``toward``;
* an Evasion window: dodge and parry, each with its exact chance.

Targets (D100D-04): every attack is listed on each enemy alone and, as a
chain, on each ordered run of further enemies the attack may carry on to
(each within ``chain_step_metres`` of the link before, in range and, for a
gun, in sight; up to Agility Bonus targets in melee, the selected RoF with a
gun), at most `CHAIN_LIMIT` chains for each first target, shortest first. The
chance of each further link (two more degrees of success per link) is in the
notes, from the same count over the d100 faces (`chain_outcomes`). A chain may
also step through empty squares to reach an enemy farther off: those are not
listed (every empty square near a target would multiply the list); a frontend
builds one by putting ``[x, y]`` squares between two targets of ``extra``,
each within ``chain_step_metres`` of the link before, the last link a
combatant; the engine checks it as it checks any chain.

Attacks on allies (standing combatants of the attacker's side) are listed too,
single-target, each flagged in its notes with `ALLY_NOTE`: the engine accepts
them, and a table may want one (a traitor, a mistake), but no AI takes them.
Chains list enemies only; a chain through an ally is accepted too, built the
same way as a chain through empty squares.
"""

from __future__ import annotations

from functools import lru_cache

from firelane.engine.core import TurnOptions, command_json
from firelane.engine.grid import Grid
from firelane.engine.routes import reachable
from firelane.engine.state import ReactionWindow
from firelane.engine.systems.d100_degrees import actions, reactions, rules
from firelane.engine.systems.d100_degrees.rules import FULL, HALF, PINNED
from firelane.engine.systems.d100_degrees.state import D100DCombatant, D100DState, Weapon
from firelane.engine.systems.percentile import body_squares, chance_at_most, d100_chance, metres, occupied_squares, position
from firelane.engine.systems.d100_degrees.schemas import (
    D100DAllOutAttack,
    D100DBasicAttack,
    D100DClearJam,
    D100DControlledFire,
    D100DMove,
    D100DSuppressingFire,
)
from firelane.events.options_schemas import ActionOption, AttackOption, Choice, MoveOption, ReactionOption
from firelane.events.schemas import ClaimReaction, Modifier

CHAIN_LIMIT = 32
ALLY_NOTE = "attacks an ally (same side as the attacker)"


def roll_terms(characteristic: str, value: int, rule: str, difficulty: str, modifiers: list[Modifier]) -> list[Modifier]:
    """The terms of a D100D-01 test, in the order `rules.characteristic_test` lists them."""
    return [
        Modifier(source=characteristic, rule=rule, value=value),
        Modifier(source=rules.DIFFICULTY_LABELS[difficulty], rule="D100D-01", value=rules.DIFFICULTIES[difficulty]),
        *modifiers,
    ]


def shot_chance(state: D100DState, target: int, rof: int | None) -> float:
    """The exact chance a test at ``target`` hits: faces at or under it, less
    (for a ranged weapon, when a jam misses) the faces >= 100 - RoF (D100D-08)."""
    if rof is None or not state.settings["jam_misses"]:
        return chance_at_most(target)
    return _unjammed_hit(target, rof)


@lru_cache(maxsize=4096)
def _unjammed_hit(target: int, rof: int) -> float:
    return d100_chance(lambda face: face <= target and not rules.jams(face, rof))


@lru_cache(maxsize=64)
def jam_chance(rof: int) -> float:
    """D100D-08: the faces >= 100 - RoF."""
    return d100_chance(lambda face: rules.jams(face, rof))


def evasion_chance(evader: D100DCombatant, reaction: str) -> float:
    """A Challenging (+0) test of Agility (dodge) or Weapon Skill (parry): D100D-10."""
    _label, field = rules.EVASION_TEST[reaction]
    return chance_at_most(int(getattr(evader, field)))


def evasion_notes(target: D100DCombatant, kind: str, chance: float) -> list[str]:
    offered = reactions.evasions_for(target, kind)
    if not offered:
        blocked = reactions.evasion_block(target)
        return [f"{target.id} cannot evade: {blocked}"] if blocked else []
    best = max(offered, key=lambda r: (evasion_chance(target, r), r))
    evade = evasion_chance(target, best)
    return [f"{target.id} may {best} ({evade:.0%}, D100D-10): the hit then stands: {chance * (1 - evade):.2%}"]


def enemies(state: D100DState, me: D100DCombatant) -> list[D100DCombatant]:
    return sorted(
        (c for c in state.combatants.values() if c.side != me.side and not c.out_of_fight and c.position is not None),
        key=lambda c: c.id,
    )


def allies(state: D100DState, me: D100DCombatant) -> list[D100DCombatant]:
    return sorted(
        (c for c in state.combatants.values()
         if c.side == me.side and c.id != me.id and not c.out_of_fight and c.position is not None),
        key=lambda c: c.id,
    )


@lru_cache(maxsize=8192)
def chain_outcomes(target: int, rof: int | None, jam_misses: bool, formula: str, extra: int) -> tuple[tuple[int, int, float], ...]:
    """D100D-04/07/08 over the d100 faces: for an attack at ``target`` declared
    with ``extra`` further links, each (further links hit, degrees left for
    damage, chance) a hit can end with (a miss is the rest)."""
    found: dict[tuple[int, int], int] = {}
    for face in range(1, 101):
        if face > target or (rof is not None and jam_misses and rules.jams(face, rof)):
            continue
        outcome = rules.trade_degrees_for_targets(rules.degrees_of_success(face, target, formula), extra)
        found[outcome] = found.get(outcome, 0) + 1
    return tuple((hit, left, count / 100) for (hit, left), count in sorted(found.items()))


def link_chances(outcomes: tuple[tuple[int, int, float], ...], links: int) -> list[float]:
    """The chance each link of a chain is hit (the first: the attack's chance)."""
    return [sum(p for hit, _left, p in outcomes if hit >= k) for k in range(links)]


def chains(state: D100DState, grid: Grid, me: D100DCombatant, weapon: Weapon, first: D100DCombatant, most: int) -> list[list[str]]:
    """D100D-04: the ``extra`` lists of enemies an attack on ``first`` may carry
    on to, ``[]`` first, then by length and IDs; at most `CHAIN_LIMIT`."""
    step = float(state.settings["chain_step_metres"])
    here = position(me)
    ranged = weapon.kind == "ranged"
    others = [e for e in enemies(state, me) if e.id != first.id and metres(state, here, position(e)) <= weapon.range_m
              and (not ranged or grid.line_of_sight(here, position(e)))]
    found: list[list[str]] = [[]]
    frontier: list[tuple[list[str], D100DCombatant]] = [([], first)]
    while frontier and len(found) < CHAIN_LIMIT:
        longer: list[tuple[list[str], D100DCombatant]] = []
        for extra, last in frontier:
            if len(extra) + 1 >= most:
                continue
            for other in others:
                if other.id in extra or metres(state, position(last), position(other)) > step:
                    continue
                if len(found) >= CHAIN_LIMIT:
                    break
                found.append([*extra, other.id])
                longer.append(([*extra, other.id], other))
        frontier = longer
    return found


def chain_notes(state: D100DState, target: D100DCombatant, extra: list[str], outcomes: tuple[tuple[int, int, float], ...]) -> list[str]:
    if not extra:
        return []
    chances = link_chances(outcomes, 1 + len(extra))
    names = " -> ".join([target.id, *extra])
    return [f"chain {names} (D100D-04): " + ", ".join(
        f"{cid} is hit too: {chance:.2%}" for cid, chance in zip(extra, chances[1:], strict=True))
        + " (two more degrees of success per link)"]


def attack_targets(state: D100DState, me: D100DCombatant) -> list[tuple[D100DCombatant, bool]]:
    """(target, is an ally): each enemy, then each ally."""
    return [(e, False) for e in enemies(state, me)] + [(a, True) for a in allies(state, me)]


def can_take(state: D100DState, me: D100DCombatant, cost: str) -> bool:
    if cost == FULL:
        pinned = PINNED in me.conditions and state.settings["pinned_blocks_full_actions"]
        return me.half_actions_used == 0 and not pinned
    return me.half_actions_used < 2


def turn_options(state: D100DState, combatant_id: str) -> TurnOptions:
    me = state.combatants[combatant_id]
    if me.position is None or me.half_actions_used >= 2:
        return TurnOptions()
    return TurnOptions(moves=move_options(state, me), attacks=melee_options(state, me) + ranged_options(state, me),
                       actions=other_actions(state, me))


def move_options(state: D100DState, me: D100DCombatant) -> list[MoveOption]:
    steps = actions.half_move_squares(state, me)
    square_m = float(state.settings["square_metres"])
    grid = Grid(state.terrain)
    found = reachable(grid, position(me), occupied_squares(state, ignore=[me.id]), steps)
    lying = body_squares(state, ignore=[me.id])  # stepped over, never ended on
    return [
        MoveOption(to=square, cost=len(path) * square_m, path=path, mode="half",
                   command=command_json(D100DMove(command_id="", actor=me.id, to=square)))
        for square, path in found.items() if square not in lying
    ]


def melee_options(state: D100DState, me: D100DCombatant) -> list[AttackOption]:
    options: list[AttackOption] = []
    here = position(me)
    bonus = rules.agility_bonus(me.agility)
    grid = Grid(state.terrain)
    formula = state.settings["degrees_formula"]
    for weapon in (w for w in me.weapons if w.kind == "melee"):
        for target, ally in attack_targets(state, me):
            if metres(state, here, position(target)) > weapon.range_m:
                continue
            runs = [[]] if ally else chains(state, grid, me, weapon, target, max(1, bonus))
            for all_out, extra_links in ((a, x) for a in (False, True) for x in runs):
                cost = FULL if all_out else HALF
                if not can_take(state, me, cost):
                    continue
                extra = [Modifier(source=f"All Out Attack: 5 x Agility Bonus {bonus}", rule="D100D-05", value=5 * bonus)] if all_out else []
                rule = "D100D-05" if all_out else "D100D-06"
                terms = roll_terms("Weapon Skill", me.weapon_skill, rule, "challenging", extra + actions.pinned_modifiers(state, me))
                number = sum(t.value for t in terms)
                chance = shot_chance(state, number, None)
                kind = D100DAllOutAttack if all_out else D100DBasicAttack
                notes = ([ALLY_NOTE] if ally else []) + evasion_notes(target, "melee", chance)
                notes += chain_notes(state, target, extra_links, chain_outcomes(number, None, False, formula, len(extra_links)))
                if all_out:
                    notes.append(f"{me.id} cannot evade until its next turn (D100D-05)")
                options.append(AttackOption(
                    target=target.id, weapon=weapon.name, mode="all_out_attack" if all_out else "basic_attack",
                    modifiers=terms, target_number=number, hit_chance=chance, notes=notes, rule=rule,
                    command=command_json(kind(command_id="", actor=me.id, target=target.id, weapon=weapon.name,
                                              extra=list(extra_links)))))
    return options


def _in_sight(state: D100DState, grid: Grid, me: D100DCombatant, target: D100DCombatant, weapon: Weapon) -> bool:
    here, there = position(me), position(target)
    return metres(state, here, there) <= weapon.range_m and grid.line_of_sight(here, there)


def ranged_options(state: D100DState, me: D100DCombatant) -> list[AttackOption]:
    if not can_take(state, me, HALF):
        return []
    grid = Grid(state.terrain)
    options: list[AttackOption] = []
    formula = state.settings["degrees_formula"]
    jam_misses = bool(state.settings["jam_misses"])
    for weapon in (w for w in me.weapons if w.kind == "ranged" and w.name not in me.jammed):
        for target, ally in attack_targets(state, me):
            if not _in_sight(state, grid, me, target, weapon):
                continue
            runs = [[]] if ally else chains(state, grid, me, weapon, target, weapon.rof)
            for rof, extra_links in ((r, x) for r in range(1, weapon.rof + 1) for x in runs if len(x) < r):
                terms = roll_terms("Ballistic Skill", me.ballistic_skill, "D100D-07", "challenging",
                                   actions.automatic_modifiers(weapon, rof, "D100D-07") + actions.pinned_modifiers(state, me))
                number = sum(t.value for t in terms)
                chance = shot_chance(state, number, rof)
                notes = [f"jams on {rules.jam_threshold(rof)}+ ({jam_chance(rof):.0%}, D100D-08)"
                         + (": the jammed shot misses" if state.settings["jam_misses"] else ""),
                         *([ALLY_NOTE] if ally else []), *evasion_notes(target, "ranged", chance),
                         *chain_notes(state, target, extra_links, chain_outcomes(number, rof, jam_misses, formula, len(extra_links)))]
                options.append(AttackOption(
                    target=target.id, weapon=weapon.name, mode=f"controlled_fire rof {rof}",
                    modifiers=terms, target_number=number, hit_chance=chance, notes=notes, rule="D100D-07",
                    command=command_json(D100DControlledFire(command_id="", actor=me.id, target=target.id, weapon=weapon.name, rof=rof,
                                                             extra=list(extra_links)))))
    return options


def other_actions(state: D100DState, me: D100DCombatant) -> list[ActionOption]:
    found: list[ActionOption] = []
    if can_take(state, me, FULL):
        grid = Grid(state.terrain)
        choices: list[Choice] = []
        for weapon in (w for w in me.weapons if w.kind == "ranged" and w.name not in me.jammed):
            for target in enemies(state, me):
                if not _in_sight(state, grid, me, target, weapon):
                    continue
                toward = position(target)
                caught = actions.killzone(state, me, weapon, toward)
                for rof in range(weapon.rof, 0, -1):  # the weapon's RoF first, then each lower one
                    terms = roll_terms("Ballistic Skill", me.ballistic_skill, "D100D-09", "hard",
                                       actions.automatic_modifiers(weapon, rof, "D100D-09") + actions.pinned_modifiers(state, me))
                    chance = shot_chance(state, sum(t.value for t in terms), rof)
                    choices.append(Choice(
                        label=f"Suppressing Fire with {weapon.name} at RoF {rof} toward {target.id} at {toward}",
                        square=toward, hit_chance=chance, rule="D100D-09",
                        notes=[f"the killzone catches: {', '.join(caught) or 'no one'}",
                               f"Ballistic Skill test {sum(t.value for t in terms)} (Hard -20): one random hit per degree, up to RoF {rof}"],
                        command=command_json(D100DSuppressingFire(command_id="", actor=me.id, toward=toward, weapon=weapon.name, rof=rof))))
        if choices:
            found.append(ActionOption(action="D100DSuppressingFire", label="Suppressing Fire (Full Action)", rule="D100D-09", choices=choices))
    cost = state.settings["clear_jam_action"]
    if me.jammed and can_take(state, me, cost):
        found.append(ActionOption(action="D100DClearJam", label=f"Clear a jam ({cost} action)", rule="D100D-08", choices=[
            Choice(label=f"clear {name}", rule="D100D-08", command=command_json(D100DClearJam(command_id="", actor=me.id, weapon=name)))
            for name in me.jammed
        ]))
    return found


def reaction_options(state: D100DState, window: ReactionWindow, combatant_id: str) -> list[ReactionOption]:
    """D100D-10: each Evasion the window offers, with its exact chance."""
    reactor = window.eligible(combatant_id)
    if reactor is None:
        return []
    me = state.combatants[combatant_id]
    attack = window.continuation.get("attack", {})
    return [
        ReactionOption(reaction=reaction, label=f"{reaction} ({rules.EVASION_TEST[reaction][0]})", rule="D100D-10", choices=[Choice(
            label=f"{reaction}: a Challenging {rules.EVASION_TEST[reaction][0]} test; success cancels every hit of "
                  f"{attack.get('attacker', 'the attacker')}'s {attack.get('weapon', 'attack')} on {combatant_id}",
            hit_chance=evasion_chance(me, reaction), rule="D100D-10",
            chance_of=f"your {reaction} succeeds",
            command=command_json(ClaimReaction(command_id="", actor=combatant_id, window=window.window, reaction=reaction)))])
        for reaction in reactor.reactions if reaction in rules.EVASION_TEST
    ]
