"""What a RonD6 combatant may do now (issue 9): the answers behind
`RonD6System.turn_options` and `reaction_options`.

Each candidate is checked with the engine's own validation (`check_command`,
the Spec checks, `validate_claim`), so a listed command is one `decide` accepts.

* Before its first action of a round a combatant declares how many it takes
  (R6-05/06): one choice per count, with and without a Fate Point.
* Attacks: each enemy, each weapon in hand and fists, each attack option the
  weapon allows (normal, All-Out, Full Auto, Sweep, Burst as Single, Lunge) and
  each Called Shot of a ranged weapon; each with its terms (flat terms as they
  are; dice terms marked ``[dice]``, their value counted in dice), the number to
  reach (a standing Active Defense, else Passive Defense) and the exact chance
  (`odds`: the pool with its Wild Die, convolved). When the target can still
  claim an Active Defense the notes give the opposed chance too.
* Moves: a walk at each pace (partial: half Move, an action; full: Move, a Full
  Action; run: farther, with a movement test) to every reachable Space, with
  the path the engine takes (`firelane.engine.routes`) and, as threats, each
  Waiting enemy that could interrupt the move with an attack (R6-08), with its
  chance to hit the mover where it stands.
* Other actions: Wait, Active/Full Defense, Ready and reload, Stand, Recover,
  Escape, Grapple, Charge, Heads Down at each enemy's Space (the choice's
  square: the table previews its area, `combat.heads_down_area`).
* Windows: Wait interruptions (each attack and area attack the waiter could
  make, fully formed),
  Active Defenses (with each count of actions to declare when none is declared
  yet), and Character/Fate Point spends on a hit (every legal spend).

Beyond the plain attack (issue 9, "every legal action with its parameters"),
each listed on its own, as a normal attack without a Called Shot:

* Rapid Fire (R6-36) with a semi-automatic weapon: each number of shots from
  2 to the rounds loaded;
* a second weapon in the off hand (R6-34): each other weapon in hand that can
  reach the target, when two actions are left;
* a Coordinated Attack (R6-29): each set of up to three allies who can join
  (an action left, the target in reach of their weapon), at most
  `COORDINATED_LIMIT` sets per attack, the smaller sets first;
* attacks on allies (any standing combatant of the attacker's side), flagged
  in their notes with `ALLY_NOTE`: the engine accepts them; no AI takes them.

The engine also takes these combined (Rapid Fire with a Called Shot, an
off-hand weapon in a Coordinated Attack...): a frontend builds such an attack
by setting the fields of two listed commands on one (``shots``,
``off_hand_weapon``, ``coordinate_with``, ``called_shot``); the engine checks
the whole, as it checks any attack. Moves: walking at each pace as above, and
swimming and climbing (R6-12) at each pace to every Space the mode's Move
reaches (``mode`` "swim partial", "climb full"...) by a path that meets the
map's water or a surface to climb (the settings ``water_spaces`` and
``climb_spaces``; the shared terrain marks neither): on a dry floor with
nothing to climb neither is offered. The engine still takes them anywhere
(where the terrain allows them is the table's call). Treating a Wound (R6-43, assisted
healing) is listed for each patient in reach.

Area attacks (R6-40 bursts, R6-41 cones; `area_options`): one option per
area weapon that can be used now (in hand, loaded, an action left), as a
turn's action and as a Wait interruption:

* a burst: one Choice per outcome among the target Spaces in range and in
  sight whose burst catches a combatant other than the attacker (the text
  lets the target Space be any Space in range, empty ground too; listing
  each would be thousands for a Huge burst, most alike). An outcome is the
  set of combatants caught, the range modifier and their Defenses (cover is
  measured from the target Space): the same roll against the same numbers.
  The centre kept for one is on an enemy's Space if any, else on another
  combatant's, else empty ground, nearest the attacker first. ``square`` is
  the centre; ``hit_chance`` the exact chance the one attack test beats the
  Defense of the combatant on the centre (the burst always lands where aimed:
  R6-40 has no scatter), None when the centre is empty ground. Any other
  centre in range is the same command with another ``center``: the engine
  takes it;
* a cone: one Choice per facing (all eight, those catching no one too), no
  ``square`` and no ``hit_chance`` (no aim point);
* the notes of each: the test's pool and range term, then every combatant
  caught, ``catches <id> (<enemy|ally|self>, <rule>): hit <chance>% against
  <kind> defense <n>``, `AREA_ALLY_NOTE` / `AREA_SELF_NOTE` when the area
  catches an ally / the attacker itself, and the damage roll.
"""

from __future__ import annotations

from typing import Any

import msgspec

from firelane.engine.occupancy import bodies
from firelane.engine.core import Decision, Rejected, TurnOptions, command_json
from firelane.engine.dice import Dice
from firelane.engine.grid import Grid, distance
from firelane.engine.routes import reachable, route
from firelane.engine.state import ReactionWindow
from firelane.engine.systems.rond6 import actions, areas, combat, odds, reactions, rules
from firelane.engine.systems.rond6.contract import SystemContract
from firelane.engine.systems.rond6.movement import BASIC_ACTION_MULTIPLE, MOVE_PACES, pace_steps
from firelane.engine.systems.rond6.movement_rules import MOVE_MODES
from firelane.engine.systems.rond6.objects import require_weapon_ready
from firelane.engine.systems.rond6.pools import DieCode
from firelane.engine.systems.rond6.rolling import dice_mods_from, roll_test
from firelane.engine.systems.rond6.rules import DEFENSE_REACTIONS, INTERRUPT, RESIST
from firelane.engine.systems.rond6.state import UNARMED, RonD6Combatant, RonD6State, Weapon
from firelane.events.options_schemas import ActionOption, AttackOption, Choice, MoveOption, ReactionOption, Threat
from firelane.engine.systems.rond6.aux_schemas import R6AreaAttack, R6Heal, R6Move
from firelane.engine.systems.rond6.schemas import (
    R6Attack,
    R6Charge,
    R6DeclareActions,
    R6Defend,
    R6DropProne,
    R6Escape,
    R6Grapple,
    R6HeadsDown,
    R6Ready,
    R6RecoverStun,
    R6Stand,
    R6Wait,
)
from firelane.events.schemas import ClaimReaction, Command, Die, Modifier, Roll


class _Twos(Dice):
    """Shows 2 on every die: no explosion, no complication; a roll made with it
    tells the pool's code and flat terms without rolling anything that counts."""

    def roll(self, sides: int) -> Die:
        return Die(sides=sides, face=2, at=-1, k=0)


def pool_of(roll: Roll) -> tuple[DieCode, int]:
    """The code a roll was made with and its flat terms (pips aside)."""
    code = DieCode.parse(str(roll.details["code"]))
    return code, sum(m.value for m in roll.modifiers) - code.pips


def distribution_of(state: RonD6State, combatant: RonD6Combatant, roll: Roll) -> odds.Distribution:
    code, constant = pool_of(roll)
    return odds.pool_total(code, constant, stymied="stymied" in combatant.conditions,
                           complication_rule=str(state.settings.get("complication_rule", "remove")))


ALLY_NOTE = "attacks an ally (same side as the attacker)"
COORDINATED_LIMIT = 8


def enemies(state: RonD6State, me: RonD6Combatant) -> list[RonD6Combatant]:
    return sorted((c for c in state.combatants.values() if c.side != me.side and not c.out_of_fight and c.position is not None),
                  key=lambda c: c.id)


def allies(state: RonD6State, me: RonD6Combatant) -> list[RonD6Combatant]:
    return sorted((c for c in state.combatants.values()
                   if c.side == me.side and c.id != me.id and not c.out_of_fight and c.position is not None), key=lambda c: c.id)


def legal(system: SystemContract, state: RonD6State, actor: str, command: Command, *, interrupt: bool = False) -> bool:
    try:
        system.check_command(state, actor, command, interrupt=interrupt)
    except Rejected:
        return False
    return True


# ---------------------------------------------------------------- attacks and their odds


def strike_roll(system: SystemContract, state: RonD6State, strike: dict[str, Any]) -> tuple[Roll, int, dict[str, Any], odds.Distribution] | None:
    """The attack roll of one strike as the engine would make it now (its code
    and terms, on dice that count for nothing), the defense it must reach, how
    that defense is made, and the exact distribution of the attack's total."""
    attacker = state.combatants[strike["attacker"]]
    target = state.combatants[strike["target"]]
    terms = combat.strike_terms(system, state, attacker, target, strike)
    if isinstance(terms, str):
        return None
    _weapon, band, flat = terms
    defense, info = combat.defense_value(system, state, attacker, target, strike["attack_kind"], band)
    roll = roll_test(_Twos(), state.settings, attacker, strike["skill"], purpose="preview", rule=strike["rule"],
                     target=defense, action_penalty=system.penalty_dice(attacker), dice_mods=dice_mods_from(strike["attack_dice"]), flat=flat)
    return roll, defense, info, distribution_of(state, attacker, roll)


def strike_odds(system: SystemContract, state: RonD6State, strike: dict[str, Any]) -> tuple[list[Modifier], int, float, list[str]] | None:
    """The terms, number to reach, exact chance and notes of one strike as the engine would roll it now."""
    rolled = strike_roll(system, state, strike)
    if rolled is None:
        return None
    roll, defense, info, attack = rolled
    target = state.combatants[strike["target"]]
    chance = odds.chance_at_least(attack, defense)
    shown = [Modifier(source=f"{strike['skill']} {roll.details['base_code']} [dice]", rule=strike["rule"],
                      value=DieCode.parse(str(roll.details["base_code"])).dice)]
    shown += [Modifier(source=f"{m['source']} [dice]", rule=m["rule"], value=int(m["dice"])) for m in roll.details["dice_modifiers"]]
    shown += list(roll.modifiers)
    notes = [f"rolls {roll.details['code']} with the Wild Die against {info['kind']} defense {defense}", odds.TRUNCATION_NOTE]
    opposed = active_defense_chance(system, state, strike, attack) if info["kind"] == "passive" else None
    if opposed is not None:
        notes.append(f"{target.id} may defend actively ({opposed[0]}, R6-16): the attack then hits: {opposed[1]:.2%}")
    return shown, defense, chance, notes


def active_defense_chance(system: SystemContract, state: RonD6State, strike: dict[str, Any],
                          attack: odds.Distribution) -> tuple[str, float] | None:
    """R6-16: (the target's first Active Defense, the chance ``attack`` still hits
    against its rolled total), or None when the target cannot defend actively."""
    target = state.combatants[strike["target"]]
    offered = reactions.defense_options(system, state, target, strike["attack_kind"])
    if not offered:
        return None
    defense_roll = roll_test(_Twos(), state.settings, target, DEFENSE_REACTIONS[offered[0]], purpose="preview",
                             rule=rules.R_ACTIVE, action_penalty=max(0, target.declared_actions - 1) if target.declared_actions else
                             max(0, reactions.declare_count(system, state, target, {}) - 1))
    return offered[0], odds.opposed_chance(attack, distribution_of(state, target, defense_roll))


def attack_candidates(system: SystemContract, state: RonD6State, me: RonD6Combatant) -> list[R6Attack]:
    in_hand: list[Weapon] = [w for w in me.weapons if w.id in me.readied] + [UNARMED]
    table = state.settings.get("called_shots", rules.CALLED_SHOTS)
    found = []
    for target in enemies(state, me):
        for weapon in in_hand:
            for option in actions.ATTACK_OPTIONS:
                shots = [""] + (sorted(table) if weapon.kind in ("ranged", "thrown") and option == "normal" else [])
                for called in shots:
                    found.append(R6Attack(command_id="", actor=me.id, target=target.id, weapon=weapon.id, option=option, called_shot=called))
    return found


def extra_attack_candidates(system: SystemContract, state: RonD6State, me: RonD6Combatant) -> list[tuple[R6Attack, bool]]:
    """(attack, on an ally): Rapid Fire, off-hand and Coordinated Attacks on
    enemies, and plain attacks on allies (see the module doc)."""
    in_hand: list[Weapon] = [w for w in me.weapons if w.id in me.readied] + [UNARMED]
    found: list[tuple[R6Attack, bool]] = []
    for target in enemies(state, me):
        for weapon in in_hand:
            plain = R6Attack(command_id="", actor=me.id, target=target.id, weapon=weapon.id)
            if "SA" in weapon.modes and weapon.capacity:
                found += [(msgspec.structs.replace(plain, shots=n), False)
                          for n in range(2, actions.rounds_loaded(me, weapon) + 1)]
            found += [(msgspec.structs.replace(plain, off_hand_weapon=other.id), False)
                      for other in in_hand if other.id != weapon.id]
            found += [(msgspec.structs.replace(plain, coordinate_with=team), False)
                      for team in coordinated_teams(system, state, me, target)]
    for ally in allies(state, me):
        found += [(R6Attack(command_id="", actor=me.id, target=ally.id, weapon=weapon.id), True) for weapon in in_hand]
    return found


def coordinated_teams(system: SystemContract, state: RonD6State, me: RonD6Combatant, target: RonD6Combatant) -> list[list[str]]:
    """R6-29: sets of allies who can join an attack on ``target`` (an action
    left, ``target`` in reach of their weapon), smaller sets first, at most `COORDINATED_LIMIT`."""
    from itertools import combinations

    able = []
    for ally in allies(state, me):
        if system.action_unavailable(state, ally, "action") is not None:
            continue
        try:
            weapon = system.weapon(ally, "")
        except Rejected:
            continue
        if actions.reach_problem(system, state, ally, target, weapon)[0] is None:
            able.append(ally.id)
    teams: list[list[str]] = []
    for size in range(1, min(len(able), rules.MAX_COORDINATED - 1) + 1):
        for team in combinations(able, size):
            if len(teams) >= COORDINATED_LIMIT:
                return teams
            teams.append(list(team))
    return teams


def attack_option(system: SystemContract, state: RonD6State, command: R6Attack) -> AttackOption | None:
    planned = planned_attack_option(system, state, command)
    return planned[0] if planned is not None else None


def planned_attack_option(system: SystemContract, state: RonD6State, command: R6Attack) -> tuple[AttackOption, dict[str, Any]] | None:
    """The attack as an option, with the engine's plan of it (its strikes), or None when it is refused."""
    try:
        # What `check_command` runs for an attack on the attacker's turn: the plan, checked in full.
        plan = actions.check_attack(system, state, command.actor, command)
    except Rejected:
        return None
    preview = strike_odds(system, state, plan["strikes"][0])
    if preview is None:
        return None
    terms, defense, chance, notes = preview
    mode = command.option + (f", called shot: {command.called_shot}" if command.called_shot else "")
    if command.shots != 1:
        mode += f", rapid fire: {command.shots} shots"
    if command.off_hand_weapon:
        mode += f", off hand: {command.off_hand_weapon}"
        notes.append(f"two strikes, two actions: the {command.off_hand_weapon} in the off hand (R6-34); hit_chance is the first's")
    if command.coordinate_with:
        mode += f", coordinated with {', '.join(command.coordinate_with)}"
        notes.append(f"each of {', '.join(command.coordinate_with)} spends an action and strikes too (R6-29); hit_chance is {command.actor}'s")
    if plan["spend"][0][1] == "full":
        notes.append("a Full Action: the round's only action (R6-07)")
    return AttackOption(target=command.target, weapon=command.weapon, mode=mode, modifiers=terms, target_number=defense,
                        hit_chance=chance, notes=notes, rule=plan["rule"], command=command_json(command)), plan


# ---------------------------------------------------------------- the turn


def turn_options(system: SystemContract, state: RonD6State, combatant_id: str) -> TurnOptions:
    me = state.combatants[combatant_id]
    if system.cannot_act_reason(state, me) is not None:  # type: ignore[attr-defined]
        return TurnOptions()
    if me.declared_actions == 0:
        # Before the round's declaration (R6-05): what one action can do, each
        # taken in one step (the engine declares the one action with it), and
        # declaring more, with the penalty each brings.
        trial = Decision(system, state)  # type: ignore[arg-type]
        try:
            system.declare_actions(trial, me.id, 1)
        except Rejected:
            return TurnOptions(actions=[*declare_options(system, state, me, more_only=False), *non_action_options(system, state, me)])
        one = declared_options(system, trial.state, combatant_id)  # type: ignore[arg-type]
        more = declare_options(system, state, me, more_only=True)
        return TurnOptions(moves=one.moves, attacks=one.attacks, actions=[*more, *one.actions])
    return declared_options(system, state, combatant_id)


def declare_options(system: SystemContract, state: RonD6State, me: RonD6Combatant, *, more_only: bool) -> list[ActionOption]:
    """Declaring the round's actions (R6-05/06): each count up to the
    Multi-Action Limit (from 2 when ``more_only``: one action is declared by
    taking it), and beyond it with a Fate Point; each label says the penalty."""
    limit = system.action_limit(state, me)

    def label(n: int, fate_point: bool = False) -> str:
        spend = "spend a Fate Point and " if fate_point else ""
        if n == 1:
            return f"{spend}declare 1 action (no penalty)"
        return f"{spend}declare {n} actions: every roll this round at -{rules.multi_action_penalty(n)}D"

    choices = [Choice(label=label(n), rule=rules.R_MULTI, command=command_json(R6DeclareActions(command_id="", actor=me.id, count=n)),
                      notes=[MULTI_ACTION_NOTE] if n > 1 else [])
               for n in range(2 if more_only else 1, limit + 1)]
    if me.fate_points > 0 and "confused" not in me.conditions:
        doubled = system.action_limit(state, me, True)
        choices += [Choice(label=label(n, True), rule=rules.R_LIMIT, notes=[MULTI_ACTION_NOTE],
                           command=command_json(R6DeclareActions(command_id="", actor=me.id, count=n, fate_point=True)))
                    for n in range(limit + 1, doubled + 1)]
    if not choices:
        return []
    title = "take more actions this round" if more_only else "declare the round's actions"
    return [ActionOption(action="R6DeclareActions", label=title, rule=rules.R_MULTI, choices=choices)]


MULTI_ACTION_NOTE = ("R6-05: each action beyond the first takes 1D from every roll this round, "
                     "the first action's too (2 actions: -1D each; 3: -2D each)")


def declared_options(system: SystemContract, state: RonD6State, combatant_id: str) -> TurnOptions:
    """What a combatant that has declared its actions may do with them."""
    me = state.combatants[combatant_id]
    attacks = [o for o in (attack_option(system, state, c) for c in attack_candidates(system, state, me)) if o is not None]
    for command, on_ally in extra_attack_candidates(system, state, me):
        option = attack_option(system, state, command)
        if option is not None:
            attacks.append(msgspec.structs.replace(option, notes=[ALLY_NOTE, *option.notes]) if on_ally else option)
    return TurnOptions(moves=move_options(system, state, me), attacks=attacks,
                       actions=other_actions(system, state, me) + area_options(system, state, me) + non_action_options(system, state, me))


def non_action_options(system: SystemContract, state: RonD6State, me: RonD6Combatant) -> list[ActionOption]:
    command = R6DropProne(command_id="", actor=me.id)
    try:
        actions.SPECS[R6DropProne].check(system, state, me.id, command)
    except Rejected:
        return []
    return [ActionOption(action="R6DropProne", label="drop prone (free)", rule=rules.R_PRONE,
                         choices=[Choice(label="drop prone", command=command_json(command))])]


def interrupt_threats(system: SystemContract, state: RonD6State, me: RonD6Combatant) -> list[Threat]:
    """R6-08: each Waiting enemy with an action left may interrupt a declared move; its best attack's odds."""
    threats = []
    for waiter in enemies(state, me):
        if not waiter.waiting or system.action_unavailable(state, waiter) is not None:
            continue
        best: float | None = None
        for weapon in [w for w in waiter.weapons if w.id in waiter.readied] + [UNARMED]:
            command = R6Attack(command_id="", actor=waiter.id, target=me.id, weapon=weapon.id)
            if legal(system, state, waiter.id, command, interrupt=True):
                preview = strike_odds(system, state, actions.check_attack(system, state, waiter.id, command)["strikes"][0])
                if preview is not None and (best is None or preview[2] > best):
                    best = preview[2]
        threats.append(Threat(reactor=waiter.id, reaction="wait_interrupt", at=None, hit_chance=best, rule=rules.R_WAIT))
    return threats


def move_options(system: SystemContract, state: RonD6State, me: RonD6Combatant) -> list[MoveOption]:
    if me.position is None:
        return []
    start = (int(me.position[0]), int(me.position[1]))
    blocked = {(int(c.position[0]), int(c.position[1])) for c in state.combatants.values()
               if c.id != me.id and not c.out_of_fight and c.position is not None}
    grid = Grid(state.terrain)
    threats = interrupt_threats(system, state, me)
    lying = bodies(state, besides=[me.id])
    options: list[MoveOption] = []
    for mode in MOVE_MODES:
        features = mode_features(state, mode)
        if features is not None and not features:
            continue  # R6-12: no water (or nothing to climb) on this map: no swimming (climbing) to offer
        listed: set[tuple[int, int]] = set()
        shorter = 0
        allowed = pace_steps(me, mode, "full", state.settings)
        for pace in MOVE_PACES:
            steps = pace_steps(me, mode, pace, state.settings)
            found = {sq: path for sq, path in reachable(grid, start, blocked, steps).items() if sq not in listed and len(path) > shorter}
            shorter = max(shorter, steps)
            # One probe per pace and action kind: the costs and tests of a run up to
            # 2x Move (an action) or farther (a Full Action) are the same for each Space.
            probed: dict[bool, bool] = {}
            for square, path in found.items():
                if square in lying:
                    continue  # a body's Space: stepped over, never ended on
                if features is not None and start not in features and features.isdisjoint(path):
                    continue  # R6-12: a swim (climb) meets water (a surface to climb) on its way
                farther = pace == "run" and len(path) > BASIC_ACTION_MULTIPLE * allowed
                if farther not in probed:
                    probed[farther] = legal(system, state, me.id, R6Move(command_id="", actor=me.id, path=path, mode=mode, pace=pace))
                if not probed[farther]:
                    continue
                listed.add(square)
                options.append(MoveOption(to=square, cost=float(len(path)), path=path, mode=pace if mode == "walk" else f"{mode} {pace}",
                                          threats=threats, command=command_json(R6Move(command_id="", actor=me.id, to=square, mode=mode, pace=pace))))
    return options


def mode_features(state: RonD6State, mode: str) -> set[tuple[int, int]] | None:
    """R6-12: the Spaces where ``mode`` applies — the settings' water for a swim,
    its climbable surfaces for a climb — or None for a walk (anywhere)."""
    key = {"swim": "water_spaces", "climb": "climb_spaces"}.get(mode)
    if key is None:
        return None
    return {(int(x), int(y)) for x, y in state.settings.get(key, [])}


def move_option(system: SystemContract, state: RonD6State, me: RonD6Combatant, square: tuple[int, int], pace: str,
                mode: str = "walk") -> MoveOption | None:
    """The walk to ``square`` at ``pace`` as `move_options` lists it (the same
    path, the same check), or None when that move is not listed: for a
    caller that wants one destination, not every one."""
    if me.position is None or tuple(square) in bodies(state, besides=[me.id]):
        return None
    start = (int(me.position[0]), int(me.position[1]))
    blocked = {(int(c.position[0]), int(c.position[1])) for c in state.combatants.values()
               if c.id != me.id and not c.out_of_fight and c.position is not None}
    steps = pace_steps(me, mode, pace, state.settings)
    path = route(Grid(state.terrain), start, square, [], blocked, steps)
    if isinstance(path, str):
        return None
    shorter = max((pace_steps(me, mode, p, state.settings) for p in MOVE_PACES[:MOVE_PACES.index(pace)]), default=0)
    if len(path) <= shorter:
        return None  # listed at a slower pace
    if not legal(system, state, me.id, R6Move(command_id="", actor=me.id, path=path, mode=mode, pace=pace)):
        return None
    return MoveOption(to=square, cost=float(len(path)), path=path, mode=pace if mode == "walk" else f"{mode} {pace}",
                      threats=interrupt_threats(system, state, me),
                      command=command_json(R6Move(command_id="", actor=me.id, to=square, mode=mode, pace=pace)))


def other_actions(system: SystemContract, state: RonD6State, me: RonD6Combatant,
                  only: frozenset[str] | None = None) -> list[ActionOption]:
    """Every other action with its legal choices (``only``: just these command types)."""
    groups: list[tuple[str, str, str, list[tuple[str, Command]]]] = [
        ("R6Wait", "Wait (interrupt a later action)", rules.R_WAIT, [("wait", R6Wait(command_id="", actor=me.id))]),
        ("R6Defend", "Active Defense", rules.R_ACTIVE, [
            (f"{'full ' if full else ''}defense: {name}", R6Defend(command_id="", actor=me.id, skill=name, full=full))
            for name in ("dodge", "parry", "block") for full in (False, True)]),
        ("R6Ready", "Ready or reload a weapon", rules.R_READY, [
            (f"{'reload' if reload else 'draw'} {w.name or w.id}", R6Ready(command_id="", actor=me.id, weapon=w.id, reload=reload))
            for w in me.weapons for reload in (False, True)]),
        ("R6Stand", "Stand up", rules.R_PRONE, [("stand", R6Stand(command_id="", actor=me.id))]),
        ("R6RecoverStun", "Recover from Stunned", rules.R_DAMAGE, [("recover", R6RecoverStun(command_id="", actor=me.id))]),
        ("R6Escape", "Escape a grapple", rules.R_ESCAPE, [("escape", R6Escape(command_id="", actor=me.id))]),
        ("R6Grapple", "Grapple", rules.R_ESCAPE, [(f"grapple {e.id}", R6Grapple(command_id="", actor=me.id, target=e.id)) for e in enemies(state, me)]),
        ("R6Charge", "Charge", rules.R_CHARGE, [
            (f"charge {e.id} with {w.name or w.id}", R6Charge(command_id="", actor=me.id, target=e.id, weapon=w.id))
            for e in enemies(state, me) for w in [*(x for x in me.weapons if x.id in me.readied and x.kind == "melee"), UNARMED]]),
        ("R6Heal", "Treat a Wound (assisted healing)", "R6-43", [
            (f"treat {p.id}", R6Heal(command_id="", actor=me.id, patient=p.id, kind="assisted"))
            for p in [me, *allies(state, me)] if p.wounds > 0]),
        ("R6HeadsDown", "Heads Down", rules.R_HEADS_DOWN, [
            (f"heads down at {e.id}'s Space", R6HeadsDown(command_id="", actor=me.id, center=(int(e.position[0]), int(e.position[1]))))
            for e in enemies(state, me) if e.position is not None]),
    ]
    found = []
    for action, label, rule, candidates in groups:
        if only is not None and action not in only:
            continue
        choices = []
        for text, command in candidates:
            spec = actions.SPECS.get(type(command))
            if legal(system, state, me.id, command) if spec is None or spec.is_action else _non_action_ok(system, state, me.id, command):
                # Heads Down is aimed at a Space: the table shows it on the map and previews its area.
                square = (int(command.center[0]), int(command.center[1])) if isinstance(command, R6HeadsDown) else None
                choices.append(Choice(label=text, rule=rule, square=square, command=command_json(command)))
        if choices:
            found.append(ActionOption(action=action, label=label, rule=rule, choices=choices))
    return found


def _non_action_ok(system: SystemContract, state: RonD6State, actor: str, command: Command) -> bool:
    try:
        actions.SPECS[type(command)].check(system, state, actor, command)
    except Rejected:
        return False
    return True


# ---------------------------------------------------------------- area attacks (R6-40/41)


AREA_ALLY_NOTE = "catches an ally (same side as the attacker): the one attack test is compared with its Defense too"
AREA_SELF_NOTE = "catches the attacker itself, inside its own burst (friendly fire)"


def walls_block(state: RonD6State) -> bool:
    return bool(state.settings.get("area_walls_block", areas.AREA_DEFAULTS["area_walls_block"]))


def area_options(system: SystemContract, state: RonD6State, me: RonD6Combatant, *, interrupt: bool = False) -> list[ActionOption]:
    """R6-40/41: one option per area weapon (a ``burst:``/``cone:`` profile) the
    combatant can use now: in hand, loaded, an action left (the checks
    `areas.decide_area_attack` makes, run on every choice by `legal`); a
    Choice per burst centre (`burst_choices`) or cone facing (`cone_choices`)."""
    if me.position is None or system.action_unavailable(state, me) is not None:
        return []
    found = []
    for weapon in me.weapons:
        try:
            area = areas.weapon_area(weapon)
            if area is None:
                continue
            require_weapon_ready(me, weapon)
        except Rejected:
            continue
        shape, size = area
        if shape == "burst":
            choices = burst_choices(system, state, me, weapon, size, interrupt=interrupt)
        else:
            choices = cone_choices(system, state, me, weapon, size, interrupt=interrupt)
        if choices:
            verb = "throw" if weapon.kind == "thrown" else "fire"
            found.append(ActionOption(action="R6AreaAttack", label=f"{verb} {weapon.name or weapon.id} ({size} {shape})",
                                      rule=areas.RULE_BURST if shape == "burst" else areas.RULE_CONE, choices=choices))
    return found


def area_distribution(system: SystemContract, state: RonD6State, me: RonD6Combatant, weapon: Weapon, rule: str,
                      flat: list[Modifier]) -> tuple[Roll, odds.Distribution]:
    """The area attack test as `areas.decide_area_attack` rolls it (the weapon's
    skill, the multiple-action penalty, ``flat``), on dice that count for
    nothing, and the exact distribution of its total."""
    roll = roll_test(_Twos(), state.settings, me, weapon.skill, purpose="preview", rule=rule,
                     action_penalty=system.penalty_dice(me), flat=flat)
    return roll, distribution_of(state, me, roll)


def caught_notes(system: SystemContract, state: RonD6State, me: RonD6Combatant, blast: RonD6Combatant, weapon: Weapon,
                 caught: list[RonD6Combatant], attack: odds.Distribution, rule: str) -> tuple[list[str], dict[str, float]]:
    """A note per combatant the area catches (enemy, ally or self; its Defense
    against the area, measured from ``blast``, and the exact chance the one
    attack test beats it), the ally and self flags, and the chances by ID."""
    notes, chances = [], {}
    for target in caught:
        defense, info = combat.defense_value(system, state, blast, target, weapon.kind, "area")
        chances[target.id] = odds.chance_at_least(attack, defense)
        relation = "self" if target.id == me.id else ("ally" if target.side == me.side else "enemy")
        notes.append(f"catches {target.id} ({relation}, {rule}): hit {chances[target.id]:.2%} against {info['kind']} defense {defense}")
    if not caught:
        notes.append("catches no one")
    if any(t.side == me.side and t.id != me.id for t in caught):
        notes.append(AREA_ALLY_NOTE)
    if any(t.id == me.id for t in caught):
        notes.append(AREA_SELF_NOTE)
    once = state.settings.get("area_damage_roll", areas.AREA_DEFAULTS["area_damage_roll"]) == "once"
    notes.append(f"damage {weapon.damage}: {'one roll for every combatant hit' if once else 'a roll for each combatant hit'} ({rule})")
    return notes, chances


def burst_choices(system: SystemContract, state: RonD6State, me: RonD6Combatant, weapon: Weapon, size: str,
                  *, interrupt: bool = False) -> list[Choice]:
    """R6-40: burst centres. The text lets any Space within the weapon's range
    (and in sight) be the target Space, empty ground included; a Huge burst
    from a long weapon would be thousands of choices, most alike. Listed: the
    centres whose burst catches a combatant other than the attacker, one per
    outcome (the same combatants caught, the same range modifier, the same
    Defenses: the same roll against the same numbers), the centre kept for an
    outcome being one on an enemy's Space if any, else on another combatant's,
    else empty ground, the nearest to the attacker first. Another centre is
    the same command with another ``center``; the engine takes it."""
    grid = Grid(state.terrain)
    walls = walls_block(state)
    origin: tuple[int, int] = (int(me.position[0]), int(me.position[1]))  # type: ignore[index]
    radius = areas.area_size(size, areas.BURST_RADIUS)
    standing = sorted((c for c in state.combatants.values() if not c.out_of_fight and c.position is not None), key=lambda c: c.id)
    at = {(int(c.position[0]), int(c.position[1])): c for c in standing}  # type: ignore[index]
    centres = {(x + dx, y + dy) for (x, y), c in at.items() if c.id != me.id
               for dx in range(-radius, radius + 1) for dy in range(-radius, radius + 1)}
    outcomes: dict[tuple[Any, ...], tuple[tuple[int, int, int, int], tuple[int, int], list[RonD6Combatant], str]] = {}
    for centre in centres:
        if not grid.passable(centre):
            continue
        band = areas.burst_band(weapon, distance(origin, centre))
        if band is None or not grid.line_of_sight(origin, centre):
            continue
        caught = [c for c in standing
                  if areas.burst_catches(grid, centre, size, (int(c.position[0]), int(c.position[1])), walls_block=walls)]  # type: ignore[index]
        if not any(c.id != me.id for c in caught):
            continue
        blast = msgspec.structs.replace(me, position=centre)
        defenses = tuple(combat.defense_value(system, state, blast, c, weapon.kind, "area")[0] for c in caught)
        key = (tuple(c.id for c in caught), rules.RANGE_MODIFIER[band], defenses)
        occupant = at.get(centre)
        rank = 3 if occupant is None else 0 if occupant.side != me.side else 2 if occupant.id == me.id else 1
        preference = (rank, distance(origin, centre), centre[1], centre[0])
        if key not in outcomes or preference < outcomes[key][0]:
            outcomes[key] = (preference, centre, caught, band)
    distributions: dict[str, tuple[Roll, odds.Distribution]] = {}
    choices = []
    for _preference, centre, caught, band in sorted(outcomes.values(), key=lambda kept: kept[0]):
        command = R6AreaAttack(command_id="", actor=me.id, weapon=weapon.id, center=centre)
        if not legal(system, state, me.id, command, interrupt=interrupt):
            continue
        if band not in distributions:
            modifier = rules.RANGE_MODIFIER[band]
            flat = [Modifier(source=f"range: {band.replace('_', ' ')}", rule=rules.R_RANGE, value=modifier)] if modifier else []
            distributions[band] = area_distribution(system, state, me, weapon, areas.RULE_BURST, flat)
        roll, attack = distributions[band]
        notes, chances = caught_notes(system, state, me, msgspec.structs.replace(me, position=centre), weapon, caught, attack, areas.RULE_BURST)
        occupant = at.get(centre)
        range_term = f", {rules.RANGE_MODIFIER[band]:+d} {band.replace('_', ' ')} range ({rules.R_RANGE})" if rules.RANGE_MODIFIER[band] else ""
        notes.insert(0, f"one attack test: {roll.details['code']} with the Wild Die{range_term}; {odds.TRUNCATION_NOTE}")
        if occupant is not None:
            notes.insert(1, f"hit_chance: against {occupant.id}, on the target Space")
        label = f"{weapon.name or weapon.id} at {centre}" + (f" ({occupant.id}'s Space)" if occupant is not None else "")
        choices.append(Choice(label=label, command=command_json(command), square=centre, rule=areas.RULE_BURST, notes=notes,
                              hit_chance=chances[occupant.id] if occupant is not None else None))
    return choices


def cone_choices(system: SystemContract, state: RonD6State, me: RonD6Combatant, weapon: Weapon, size: str,
                 *, interrupt: bool = False) -> list[Choice]:
    """R6-41: a cone in each of the eight facings (those catching no one too:
    there are only eight). No range modifier; cover from the attacker. The
    cone has no aim point, so ``hit_chance`` is None: each caught combatant's
    chance is in the notes."""
    grid = Grid(state.terrain)
    origin: tuple[int, int] = (int(me.position[0]), int(me.position[1]))  # type: ignore[index]
    roll, attack = area_distribution(system, state, me, weapon, areas.RULE_CONE, [])
    choices = []
    for facing in areas.FACINGS:
        command = R6AreaAttack(command_id="", actor=me.id, weapon=weapon.id, facing=facing)
        if not legal(system, state, me.id, command, interrupt=interrupt):
            continue
        squares = areas.affected_cone(grid, origin, facing, size, walls_block=walls_block(state))
        caught = areas.area_targets(state, squares, exclude=me.id)
        notes, _chances = caught_notes(system, state, me, me, weapon, sorted(caught, key=lambda c: c.id), attack, areas.RULE_CONE)
        notes.insert(0, f"one attack test: {roll.details['code']} with the Wild Die; {odds.TRUNCATION_NOTE}")
        choices.append(Choice(label=f"{weapon.name or weapon.id} facing {facing}", command=command_json(command),
                              rule=areas.RULE_CONE, notes=notes))
    return choices


# ---------------------------------------------------------------- windows


def reaction_options(system: SystemContract, state: RonD6State, window: ReactionWindow, combatant_id: str) -> list[ReactionOption]:
    reactor = window.eligible(combatant_id)
    if reactor is None:
        return []
    me = state.combatants[combatant_id]
    found = []
    for reaction in reactor.reactions:
        if reaction == INTERRUPT:
            choices = interrupt_choices(system, state, window, me)
            label, rule = "interrupt from Wait", rules.R_WAIT
        elif reaction == RESIST:
            choices = resist_choices(window, me)
            label, rule = "spend Character/Fate Points on Damage Resistance", rules.R_DR
        elif reaction in DEFENSE_REACTIONS:
            choices = defense_choices(system, state, window, me, reaction)
            label, rule = f"Active Defense: {reaction}", rules.R_ACTIVE
        else:
            continue
        legal_choices = [c for c in choices if _claim_ok(system, state, window, c.command)]
        if legal_choices:
            found.append(ReactionOption(reaction=reaction, label=label, rule=rule, choices=legal_choices))
    return found


def _claim(window: ReactionWindow, actor: str, reaction: str, options: dict[str, Any]) -> dict[str, Any]:
    return command_json(ClaimReaction(command_id="", actor=actor, window=window.window, reaction=reaction, options=options))


def _claim_ok(system: SystemContract, state: RonD6State, window: ReactionWindow, body: dict[str, Any]) -> bool:
    try:
        reactions.validate_claim(system, state, window, msgspec.convert({**body, "command_id": ""}, ClaimReaction))
    except Rejected:
        return False
    return True


def interrupt_choices(system: SystemContract, state: RonD6State, window: ReactionWindow, me: RonD6Combatant) -> list[Choice]:
    choices = []
    for command in attack_candidates(system, state, me):
        if command.option != "normal" or command.called_shot:
            continue
        if not legal(system, state, me.id, command, interrupt=True):
            continue
        payload = {k: v for k, v in command_json(command).items() if k != "actor"}
        preview = strike_odds(system, state, actions.check_attack(system, state, me.id, command)["strikes"][0])
        choices.append(Choice(label=f"interrupt: attack {command.target} with {command.weapon}", rule=rules.R_WAIT,
                              hit_chance=preview[2] if preview else None,
                              command=_claim(window, me.id, INTERRUPT, {"command": payload})))
    for defend in ("dodge", "parry", "block"):
        command = R6Defend(command_id="", actor=me.id, skill=defend)
        if legal(system, state, me.id, command, interrupt=True):
            payload = {k: v for k, v in command_json(command).items() if k != "actor"}
            choices.append(Choice(label=f"interrupt: Active Defense ({defend})", rule=rules.R_WAIT,
                                  command=_claim(window, me.id, INTERRUPT, {"command": payload})))
    for option in area_options(system, state, me, interrupt=True):
        for area in option.choices:
            payload = {k: v for k, v in area.command.items() if k != "actor"}
            choices.append(Choice(label=f"interrupt: {area.label}", rule=rules.R_WAIT, square=area.square, hit_chance=area.hit_chance,
                                  notes=area.notes,
                                  command=_claim(window, me.id, INTERRUPT, {"command": payload})))
    return choices


STILL_HITS = "the attack still hits you"  # what a defence's chance is the chance of: the attacker's side


def defended_chance(system: SystemContract, state: RonD6State, window: ReactionWindow, me: RonD6Combatant,
                    reaction: str, penalty: int) -> float | None:
    """R6-16: the chance the attack this window waits on still hits ``me`` if it
    defends with ``reaction`` at ``penalty`` dice: the attack's exact total
    (as its options computed it, `strike_roll`) reaching the defence's rolled
    total, as `active_defense_chance` reckons it before the attack. None when
    the window holds no strike on ``me``."""
    strike = next((step for step in window.continuation.get("queue", [])
                   if isinstance(step, dict) and step.get("step") == "strike" and step.get("target") == me.id), None)
    if strike is None:
        return None
    rolled = strike_roll(system, state, strike)
    if rolled is None:
        return None
    defense_roll = roll_test(_Twos(), state.settings, me, DEFENSE_REACTIONS[reaction], purpose="preview",
                             rule=rules.R_ACTIVE, action_penalty=penalty)
    return odds.opposed_chance(rolled[3], distribution_of(state, me, defense_roll))


def defense_choices(system: SystemContract, state: RonD6State, window: ReactionWindow, me: RonD6Combatant, reaction: str) -> list[Choice]:
    skill = DEFENSE_REACTIONS[reaction]
    if me.declared_actions:
        return [Choice(label=f"{reaction} ({skill}), spending one of its declared actions", rule=rules.R_ACTIVE,
                       hit_chance=defended_chance(system, state, window, me, reaction, max(0, me.declared_actions - 1)),
                       chance_of=STILL_HITS, command=_claim(window, me.id, reaction, {}))]
    limit = system.action_limit(state, me)
    return [Choice(label=f"{reaction} ({skill}), declaring {n} action{'s' if n > 1 else ''} this round (-{n - 1}D to each)",
                   rule=rules.R_ACTIVE, hit_chance=defended_chance(system, state, window, me, reaction, n - 1),
                   chance_of=STILL_HITS, command=_claim(window, me.id, reaction, {"declare": n})) for n in range(1, limit + 1)]


def resist_choices(window: ReactionWindow, me: RonD6Combatant) -> list[Choice]:
    choices = []
    for fate in ((False, True) if me.fate_points > 0 else (False,)):
        for points in range(0 if fate else 1, me.character_points + 1):
            spend = f"{points} Character Point{'s' if points != 1 else ''}" if points else ""
            text = " and ".join(x for x in (spend, "a Fate Point (doubles the rolled Damage Resistance)" if fate else "") if x)
            choices.append(Choice(label=f"spend {text}", rule=rules.R_DR,
                                  command=_claim(window, me.id, RESIST, {"character_points": points, "fate_point": fate})))
    return choices
