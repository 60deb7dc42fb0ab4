"""Bolt & Blade options: what a combatant may do now, each with the command to send (issue 9).

Seventh floor of the package (see the package docstring): above the actions,
below the AI (which picks from what this module works out) and the system
class (whose `turn_options` / `reaction_options` hooks answer with it).

Every option is computed by the functions the engine decides with, so a
listed command is accepted and its numbers are the ones the roll will use:

- **moves**: for each mode allowed now (tactical, dash, evade), every square
  a move may end on, its cost and the path a move by destination takes
  (`paths.move_destinations`, the same search `BBMove.to` runs), and who could
  react on the way with what chance (`movement.move_threats`, the walk's own
  predicates);
- **attacks**: each weapon a `BBAttack` may use and each target it can reach,
  with the attack's modifiers and their rule IDs, the Defense to reach and the
  exact chance to hit (`actions.declared_attack_plan`, `combat.plan_hit_chance`);
- **actions**: Aim, Take Cover, Overwatch (each centre), Suppress (each area
  box), Rally, Disengage, Ready, Reload, Help, Search, Mark, grenades and area
  weapons (each point or direction, with who the template catches, allies
  flagged), each with the action's own check (`actions.*_problem`);
- **reactions**: one choice per square a Reactive Fire may name, per square a
  Dive for Cover may reach, the Opportunity Strike, Return Fire and the mover's
  continue-or-stop, each claim with the options the engine reads.
"""

from __future__ import annotations

from typing import Any

import msgspec

from firelane.engine.core import Rejected, TurnOptions, command_json
from firelane.engine.grid import Square, distance
from firelane.engine.state import EncounterState, ReactionWindow
from firelane.engine.systems.bolt_and_blade.narration import cover_words
from firelane.engine.systems.bolt_and_blade import areas, combat
from firelane.engine.systems.bolt_and_blade.actions import (
    aim_problem,
    attack_weapons,
    declared_attack_plan,
    help_problem,
    mark_problem,
    overwatch_center_problem,
    overwatch_problem,
    reload_problem,
    suppress_box,
    suppress_problem,
    suppress_square_problem,
    take_cover_gain,
)
from firelane.engine.systems.bolt_and_blade.combat import AttackPlan
from firelane.engine.systems.bolt_and_blade.constants import EVADING, FIRE_CHOICES, PINNED
from firelane.engine.systems.bolt_and_blade.movement import move_allowance, move_threats
from firelane.engine.systems.bolt_and_blade.paths import cheapest_paths, end_taken, occupied_squares
from firelane.engine.systems.bolt_and_blade.reactions import dive_offer, dive_squares, plan_reactive_fire, return_fire_problem
from firelane.engine.systems.bolt_and_blade.rules import d20_mode
from firelane.engine.systems.bolt_and_blade.state import BoltAndBladeCombatant
from firelane.engine.systems.bolt_and_blade.area_schemas import BBAreaAttack, BBThrow
from firelane.engine.systems.bolt_and_blade.schemas import (
    BBAim,
    BBAttack,
    BBDisengage,
    BBHelp,
    BBMark,
    BBMove,
    BBOverwatch,
    BBRally,
    BBReady,
    BBReload,
    BBSearch,
    BBSuppress,
    BBTakeCover,
)
from firelane.events.options_schemas import ActionOption, AttackOption, Choice, MoveOption, ReactionOption
from firelane.events.schemas import ClaimReaction, Command, Modifier
from firelane.engine.templates import COMPASS


def tag(command_type: type[Command]) -> str:
    return command_type.__struct_config__.tag  # type: ignore[return-value]


def sign(value: int) -> str:
    return f"{value:+d}"


def terms(modifiers: list[Modifier]) -> str:
    return " ".join(f"{sign(m.value)} {m.source} ({m.rule})" for m in modifiers)


# ---------------------------------------------------------------- the turn


def turn_options(state: EncounterState, combatant_id: str) -> TurnOptions:
    """Everything the active combatant may do on its turn (`BaseRuleSystem.turn_options`)."""
    me = combat.combatant(state, combatant_id)
    if me.position is None:
        return TurnOptions()
    return TurnOptions(moves=move_options(state, me), attacks=attack_options(state, me), actions=action_options(state, me))


# ---------------------------------------------------------------- moves


def move_modes(me: BoltAndBladeCombatant) -> list[str]:
    """The move modes ``me`` may use now: a Tactical Move while movement is left
    and not stopped; Dash and Evade while the Action is unspent, Evade only if it
    has not attacked (BB-CMB-06..08)."""
    if me.movement_halted or me.position is None:
        return []
    modes = ["tactical"]
    if not me.action_used:
        modes.append("dash")
        if not me.attacked_this_turn:
            modes.append("evade")
    return modes


def move_options(state: EncounterState, me: BoltAndBladeCombatant) -> list[MoveOption]:
    """Every square each mode can end a move on (BB-CMB-06..08), nearest first:
    its cost, the path `BBMove.to` takes there, and who could react on the way
    (`move_threats`). The command names the destination only."""
    options: list[MoveOption] = []
    occupied = occupied_squares(state, besides=me.id)
    taken = end_taken(state, besides=me.id)
    lanes: dict = {}  # who has a fire lane where: the same for every mode
    for mode in move_modes(me):
        tree = {square: found for square, found in cheapest_paths(state, me, move_allowance(me, mode), occupied=occupied).items() if found[1]}
        threats = move_threats(state, me.id, mode, {square: path for square, (_cost, path) in tree.items()}, lanes=lanes)
        for square, (cost, path) in sorted(tree.items(), key=lambda item: (item[1][0], item[0][1], item[0][0])):
            if square in taken:
                continue  # an ally's square or a body's: passed, never ended on
            options.append(MoveOption(
                to=square, cost=cost, path=list(path), mode=mode, threats=threats.get(square, []),
                command=command_json(BBMove(command_id="", actor=me.id, to=square, mode=mode)),
            ))
    return options


# ---------------------------------------------------------------- attacks


def attack_options(state: EncounterState, me: BoltAndBladeCombatant) -> list[AttackOption]:
    """Each attack a `BBAttack` may make now: every weapon it may use on every
    enemy in its reach (BB-CORE-07, -11, BB-CMB-04, -16)."""
    if me.action_used or EVADING in me.conditions or me.position is None:
        return []
    here: Square = tuple(me.position)  # type: ignore[assignment]
    options = []
    enemies = combat.standing_enemies(state, me.id)
    for weapon in attack_weapons(me):
        if weapon.is_ranged and combat.weapon_problem(state, me, weapon) is not None:
            continue
        reach_ft = weapon.range[0] if weapon.is_melee else weapon.range[1]
        for enemy in enemies:
            if distance(here, enemy.position) * state.terrain.square_size > reach_ft:  # type: ignore[arg-type]
                continue  # out of reach or beyond maximum range: plan_attack refuses it
            try:
                plan = declared_attack_plan(state, me.id, enemy.id, weapon.name, explain=False)
            except Rejected:
                continue
            options.append(attack_option(state, plan))
    return options


def attack_option(state: EncounterState, plan: AttackPlan) -> AttackOption:
    notes = [f"Defense {plan.defense.total} = {terms(plan.defense.modifiers)}", *plan.defense.notes]
    mode = d20_mode(plan.advantage, plan.disadvantage)
    if plan.advantage:
        notes.append(f"Advantage: {'; '.join(plan.advantage)}")
    if plan.disadvantage:
        notes.append(f"Disadvantage: {'; '.join(plan.disadvantage)}")
    if mode == "cancelled":
        notes.append("Advantage and Disadvantage cancel: one d20 (BB-CORE-05)")
    for used in plan.consumes:
        notes.append(f"uses up {used} (BB-CMB-23)")
    notes.append("natural 20: Critical Hit (BB-CORE-12); natural 1: a miss (BB-CORE-14)")
    if plan.weapon.is_ranged:
        if return_fire_problem(state, plan.target, plan.attacker) is None:
            notes.append(f"{plan.target} may Return Fire first: an Opposed Exchange (BB-CMB-14)")
        attacker_square: Square = tuple(state.combatants[plan.attacker].position)  # type: ignore[arg-type, assignment]
        if dive_offer(state, plan.target, attacker_square):
            notes.append(f"on a hit {plan.target} may Dive for Cover (BB-CMB-17)")
    return AttackOption(
        target=plan.target, weapon=plan.weapon.name, mode=plan.band, modifiers=list(plan.modifiers),
        target_number=plan.defense.total, hit_chance=combat.plan_hit_chance(plan), notes=notes, rule="BB-CORE-07",
        command=command_json(BBAttack(command_id="", actor=plan.attacker, target=plan.target, weapon=plan.weapon.name)),
    )


# ---------------------------------------------------------------- other actions


def action_options(state: EncounterState, me: BoltAndBladeCombatant) -> list[ActionOption]:
    """Every other action ``me`` may take now, each with every legal way to take it."""
    options: list[ActionOption] = []
    actor = me.id

    def single(command: Command, label: str, rule: str, notes: list[str] | None = None) -> None:
        options.append(ActionOption(action=tag(type(command)), label=label, rule=rule,
                                    choices=[Choice(label=label, command=command_json(command), rule=rule, notes=notes or [])]))

    if not me.bonus_used and aim_problem(state, me) is None:
        single(BBAim(command_id="", actor=actor), f"Aim: +{int(state.settings.get('aim_bonus', 2))} on the next ranged attack this turn", "BB-CMB-21")
    if not me.action_used:
        gain = take_cover_gain(state, me)
        if gain is not None:
            single(BBTakeCover(command_id="", actor=actor), f"Take Cover: from {cover_words(gain[0])} to {cover_words(gain[1])}",
                   "BB-CMB-30")
        overwatch = overwatch_choices(state, me)
        if overwatch:
            options.append(ActionOption(action=tag(BBOverwatch), label="Overwatch: watch an area until your next turn", rule="BB-CMB-13", choices=overwatch))
        suppress = suppress_choices(state, me)
        if suppress:
            options.append(ActionOption(action=tag(BBSuppress), label="Suppress an area", rule="BB-CMB-18", choices=suppress))
        if PINNED in me.conditions:
            single(BBRally(command_id="", actor=actor), "Rally: end Pinned", "BB-CMB-19")
        single(BBDisengage(command_id="", actor=actor), "Disengage: leave melee reach without Opportunity Strikes this turn", "BB-CMB-09")
        ready = [Choice(label=f"ready {w.name}", command=command_json(BBReady(command_id="", actor=actor, weapon=w.name)), rule="BB-CORE-17")
                 for w in me.weapons if w.name != me.ready_weapon]
        if ready:
            options.append(ActionOption(action=tag(BBReady), label="Ready another weapon", rule="BB-CORE-17", choices=ready))
        reload = [Choice(label=f"reload {w.name}", command=command_json(BBReload(command_id="", actor=actor, weapon=w.name)), rule="BB-CORE-17",
                         notes=[f"{me.ammo.get(w.name, 0)}/{w.magazine}" + (", jammed" if w.name in me.jammed else "")])
                  for w in me.weapons if reload_problem(me, w.name) is None]
        if reload:
            options.append(ActionOption(action=tag(BBReload), label="Reload", rule="BB-CORE-17", choices=reload))
        helps = [Choice(label=f"distract {e.id}", command=command_json(BBHelp(command_id="", actor=actor, target=e.id)), rule="BB-CORE-17",
                        notes=[f"the next attack an ally of {actor} makes on {e.id} before {actor}'s next turn has Advantage"])
                 for e in combat.standing_enemies(state, actor) if help_problem(state, me, e.id) is None]
        if helps:
            options.append(ActionOption(action=tag(BBHelp), label="Help", rule="BB-CORE-17", choices=helps))
        dc = int(state.settings.get("search_dc", 12))
        search_bonus = sum(m.value for m in combat.check_modifiers(state, me, "intellect", "awareness"))
        single(BBSearch(command_id="", actor=actor), f"Search: Intellect (Awareness) DC {dc}", "BB-CORE-17",
               [f"the check succeeds: {combat.check_probability(search_bonus, dc):.0%}"])
        options += area_options(state, me)
    if not me.bonus_used:
        marks = [
            Choice(label=f"{mark} on {cid}", command=command_json(BBMark(command_id="", actor=actor, target=cid, mark=mark)), rule="BB-CMB-23",
                   notes=[f"{actor} gets +{int(state.settings.get('mark_attack_bonus', 2))} to hit {cid}" if state.combatants[cid].side != me.side else "an ally"])
            for mark in me.features for cid in sorted(state.combatants)
            if cid != actor and mark_problem(state, me, mark, cid) is None
        ]
        if marks:
            options.append(ActionOption(action=tag(BBMark), label="Mark (Bonus Action)", rule="BB-CMB-23", choices=marks))
    return options


def squares_within(state: EncounterState, here: Square, reach_ft: float) -> list[Square]:
    """The map's squares within ``reach_ft`` of ``here``, row by row."""
    grid = combat.grid_of(state)
    reach = int(reach_ft // state.terrain.square_size)
    return [
        (x, y)
        for y in range(max(0, here[1] - reach), min(state.terrain.height, here[1] + reach + 1))
        for x in range(max(0, here[0] - reach), min(state.terrain.width, here[0] + reach + 1))
        if grid.in_bounds((x, y))
    ]


def overwatch_choices(state: EncounterState, me: BoltAndBladeCombatant) -> list[Choice]:
    """Each point ``me`` may watch (BB-CMB-13): visible, within maximum range; the
    area is the squares within the setting's radius of it that ``me`` sees."""
    if overwatch_problem(state, me) is not None:
        return []
    here: Square = tuple(me.position)  # type: ignore[assignment]
    weapon = me.ready
    radius = int(state.settings.get("overwatch_radius_ft", 10))
    return [
        Choice(label=f"watch around {square}", square=square, rule="BB-CMB-13",
               command=command_json(BBOverwatch(command_id="", actor=me.id, center=square)),
               notes=[f"squares within {radius} ft of {square} that {me.id} sees"])
        for square in squares_within(state, here, weapon.range[1])  # type: ignore[union-attr]
        if overwatch_center_problem(state, me, square) is None
    ]


def suppress_choices(state: EncounterState, me: BoltAndBladeCombatant) -> list[Choice]:
    """Areas ``me`` may Suppress (BB-CMB-18): the square of each creature it may
    suppress alone, and the legal squares of each box the area must fit in (one
    per box position, every square seen and within normal range), with who would
    make the save, allies flagged. (Any part of a box is legal too.)"""
    if suppress_problem(state, me) is not None:
        return []
    weapon = me.ready
    here: Square = tuple(me.position)  # type: ignore[assignment]
    legal = {square for square in squares_within(state, here, weapon.range[0]) if suppress_square_problem(state, me, weapon, square) is None}  # type: ignore[arg-type]
    box = suppress_box(state)
    dc = 8 + combat.proficiency(state, me) + me.modifier("agility")
    standing = {tuple(c.position): c for c in state.combatants.values() if not c.out_of_fight and c.position is not None and c.id != me.id}
    seen: set[tuple[Square, ...]] = set()
    choices = []
    alone = [(square,) for square in sorted(legal, key=lambda s: (s[1], s[0])) if square in standing]
    boxes = [
        tuple(sorted(((corner[0] + dx, corner[1] + dy) for dx in range(box) for dy in range(box) if (corner[0] + dx, corner[1] + dy) in legal), key=lambda s: (s[1], s[0])))
        for corner in sorted(legal, key=lambda s: (s[1], s[0]))
    ]
    for area in [*alone, *boxes]:
        corner = area[0]
        if area in seen:
            continue
        seen.add(area)
        inside = [standing[s] for s in area if s in standing]
        notes = [f"Willpower save DC {dc} or Pinned until the start of {me.id}'s next turn"]
        if inside:
            notes.append("in the area: " + ", ".join(f"{c.id} ({'ally' if c.side == me.side else 'enemy'})" for c in inside))
        choices.append(Choice(label=f"suppress {', '.join(map(str, area))}", square=corner, rule="BB-CMB-18",
                              command=command_json(BBSuppress(command_id="", actor=me.id, area=list(area), weapon=weapon.name)), notes=notes))  # type: ignore[union-attr]
    return choices


def area_options(state: EncounterState, me: BoltAndBladeCombatant) -> list[ActionOption]:
    """Grenades and area weapons or powers (BB-CMB-24..28), each point or
    direction they may be used at, with who the template catches (allies and
    neutrals flagged): a throw's chance to land where aimed, a krak charge's
    chance to hit. Where the house rule asks a throw that catches allies to be
    confirmed, the command confirms it and the note says so."""
    options = []
    for weapon in me.weapons:
        item = combat.area_item(state, me.id, weapon.name)
        try:
            profile = areas.area_profile(weapon.name, item) if item is not None else None
        except (ValueError, TypeError):
            continue
        if profile is None:
            continue
        if weapon.magazine and me.ammo.get(weapon.name, 0) <= 0:
            continue
        choices = (throw_choices if profile.thrown else area_attack_choices)(state, me, profile)
        if choices:
            verb = "throw" if profile.thrown else ("use power" if profile.kind == "power" else "use")
            options.append(ActionOption(action=tag(BBThrow if profile.thrown else BBAreaAttack), label=f"{verb} {weapon.name} ({profile.shape})",
                                        rule="BB-CMB-28", choices=choices))
    return options


def caught_notes(footprint: areas.Footprint) -> list[str]:
    notes = []
    if footprint.caught:
        notes.append("caught: " + ", ".join(f"{c.combatant} ({c.relation})" for c in footprint.caught))
    if footprint.blocked:
        notes.append("shielded by walls: " + ", ".join(footprint.blocked))
    return notes


def friendly_fire(state: EncounterState, profile: areas.AreaProfile, footprint: areas.Footprint) -> tuple[bool, bool]:
    """(allowed, needs confirmation) for a template catching who it catches (BB-CMB-24)."""
    allies, neutrals = footprint.flagged("ally", "self"), footprint.flagged("neutral")
    if areas.NO_FRIENDLY_FIRE in profile.traits and allies:
        return False, False
    confirm = bool(state.settings.get("bb_friendly_fire_confirmation", areas.AREA_DEFAULT_SETTINGS["bb_friendly_fire_confirmation"]))
    return True, confirm and bool(allies or neutrals)


def throw_choices(state: EncounterState, me: BoltAndBladeCombatant, profile: areas.AreaProfile) -> list[Choice]:
    here: Square = tuple(me.position)  # type: ignore[assignment]
    if profile.shape == "single":
        return krak_choices(state, me, profile)
    if not profile.point_targeted:
        return []
    dc = int(state.settings.get("bb_throw_dc", areas.AREA_DEFAULT_SETTINGS["bb_throw_dc"]))
    bonus = sum(m.value for m in combat.throw_modifiers(state, me.id, profile.name))
    advantage, disadvantage = combat.attack_advantage(state, me.id)
    choices = []
    for square in squares_within(state, here, profile.range_max_ft or 0.0):
        try:
            aimed = areas.aimed_footprint(state, profile, me, square, None)
        except Rejected:
            continue
        allowed, confirm = friendly_fire(state, profile, aimed)
        if not allowed:
            continue
        far = profile.range_normal_ft is not None and combat.grid_of(state).distance_units(here, square) > profile.range_normal_ft
        mode = d20_mode(advantage, [*disadvantage, *(["beyond normal range"] if far else [])])
        notes = caught_notes(aimed)
        notes.append(f"throw: d20 {sign(bonus)} vs DC {dc}; a miss scatters (BB-CMB-25)" + (" (Disadvantage: beyond normal range)" if far else ""))
        if confirm:
            notes.append("catches allies or neutrals: the command confirms the friendly fire (BB-CMB-24)")
        choices.append(Choice(label=f"{profile.name} at {square}", square=square, hit_chance=combat.hit_probability(bonus, dc, mode), rule="BB-CMB-25",
                              command=command_json(BBThrow(command_id="", actor=me.id, target=square, weapon=profile.name, confirm_friendly_fire=confirm)),
                              notes=notes))
    return choices


def krak_choices(state: EncounterState, me: BoltAndBladeCombatant, profile: areas.AreaProfile) -> list[Choice]:
    """BB-CMB-28: a single-target charge is an attack on the creature in the square."""
    weapon = me.weapon(profile.name)
    choices = []
    for enemy in combat.standing_enemies(state, me.id):
        square: Square = tuple(enemy.position)  # type: ignore[assignment]
        try:
            areas.validate_point(state, profile, me, square)
            plan = combat.plan_attack(state, me.id, enemy.id, weapon)  # type: ignore[arg-type]
        except Rejected:
            continue
        notes = [f"attack {terms(plan.modifiers)} vs Defense {plan.defense.total}"]
        # A ranged attack on one creature: its windows, as for a shot (BB-CMB-14, -17).
        if return_fire_problem(state, enemy.id, me.id) is None:
            notes.append(f"{enemy.name or enemy.id} may Return Fire first: an Opposed Exchange (BB-CMB-14)")
        if dive_offer(state, enemy.id, tuple(me.position)):  # type: ignore[arg-type]
            notes.append(f"on a hit {enemy.name or enemy.id} may Dive for Cover (BB-CMB-17)")
        choices.append(Choice(label=f"{profile.name} at {enemy.id}", square=square, hit_chance=combat.plan_hit_chance(plan), rule="BB-CMB-28",
                              command=command_json(BBThrow(command_id="", actor=me.id, target=square, weapon=profile.name)),
                              notes=notes))
    return choices


def area_attack_choices(state: EncounterState, me: BoltAndBladeCombatant, profile: areas.AreaProfile) -> list[Choice]:
    """An area weapon or power not thrown (BB-CMB-24, -28): a cone or line in each
    of the eight directions; a point-targeted one at each point it may be placed."""
    if profile.shape == "single":
        return []
    here: Square = tuple(me.position)  # type: ignore[assignment]
    aims: list[tuple[Square | None, tuple[int, int] | None]]
    if profile.point_targeted:
        aims = [(square, None) for square in squares_within(state, here, profile.range_max_ft or 0.0)]
    else:
        aims = [(None, vector) for vector in COMPASS.values()]
    choices = []
    for point, direction in aims:
        try:
            aimed = areas.aimed_footprint(state, profile, me, point, direction)
        except Rejected:
            continue
        allowed, confirm = friendly_fire(state, profile, aimed)
        if not allowed:
            continue
        notes = caught_notes(aimed)
        if confirm:
            notes.append("catches allies or neutrals: the command confirms the friendly fire (BB-CMB-24)")
        where = f"at {point}" if point is not None else f"towards {next(n for n, v in COMPASS.items() if v == direction)}"
        choices.append(Choice(label=f"{profile.name} {where}", square=point, rule="BB-CMB-24",
                              command=command_json(BBAreaAttack(command_id="", actor=me.id, weapon=profile.name, target=point, direction=direction, confirm_friendly_fire=confirm)),
                              notes=notes))
    return choices


# ---------------------------------------------------------------- reaction windows


def claim(window: ReactionWindow, actor: str, reaction: str, **options: Any) -> dict[str, Any]:
    return command_json(ClaimReaction(command_id="", actor=actor, window=window.window, reaction=reaction, options=options))


def reaction_options(state: EncounterState, window: ReactionWindow, combatant_id: str) -> list[ReactionOption]:
    """How ``combatant_id`` may answer the open window: each reaction offered to
    it, with every option its claim may carry (`BaseRuleSystem.reaction_options`)."""
    reactor = window.eligible(combatant_id)
    if reactor is None:
        return []
    answers = []
    for reaction in reactor.reactions:
        builder = _REACTIONS.get(reaction)
        choices = builder(state, window, combatant_id, reaction) if builder is not None else [Choice(label=reaction.replace("_", " "), command=claim(window, combatant_id, reaction))]
        answers.append(ReactionOption(reaction=reaction, label=_LABELS.get(reaction, reaction.replace("_", " ")), rule=_RULES.get(reaction, ""), choices=choices))
    return answers


def fire_square_odds(state: EncounterState, reactor_id: str, window: ReactionWindow) -> list[tuple[Square, float | None, bool]]:
    """(square, chance to hit the mover there, on Overwatch there) for each square
    the window offers ``reactor_id`` for its Reactive Fire (BB-CMB-10, -11, -13),
    in path order; the chance is None where the shot could not be planned."""
    mover = window.actor
    mode = str(window.continuation.get("mode", "tactical"))
    odds: list[tuple[Square, float | None, bool]] = []
    for raw in window.continuation.get("fire_squares", {}).get(reactor_id, []):
        square: Square = (int(raw[0]), int(raw[1]))
        try:
            plan, overwatch, _waived = plan_reactive_fire(state, reactor_id, mover, square, mode)
        except Rejected:
            odds.append((square, None, False))
            continue
        odds.append((square, combat.plan_hit_chance(plan), overwatch))
    return odds


def _reactive_fire(state: EncounterState, window: ReactionWindow, me: str, reaction: str) -> list[Choice]:
    here = tuple(combat.combatant(state, window.actor).position)  # type: ignore[arg-type]
    choices = []
    for square, chance, overwatch in fire_square_odds(state, me, window):
        notes = ["now" if square == here else f"held until {window.actor} reaches {square}; lapses if its move ends first"]
        if overwatch:
            notes.append("on Overwatch: no Disadvantage, a hit stops the move unless it saves (BB-CMB-13)")
        choices.append(Choice(label=f"fire at {window.actor} on {square}", square=square, hit_chance=chance, chance_of="your shot hits",
                              rule="BB-CMB-13" if overwatch else "BB-CMB-10", notes=notes,
                              command=claim(window, me, "reactive_fire", square=list(square))))
    return choices


def _opportunity_strike(state: EncounterState, window: ReactionWindow, me: str, reaction: str) -> list[Choice]:
    reactor = combat.combatant(state, me)
    weapon = combat.best_melee_weapon(reactor)
    chance = None
    if weapon is not None:
        try:
            chance = combat.plan_hit_chance(combat.plan_attack(state, me, window.actor, weapon, kind="opportunity_strike"))
        except Rejected:
            chance = None
    label = f"strike {window.actor}" + (f" with {weapon.name}" if weapon is not None else "")
    return [Choice(label=label, hit_chance=chance, rule="BB-CMB-15", chance_of="your strike hits",
                   command=claim(window, me, "opportunity_strike"))]


def _return_fire(state: EncounterState, window: ReactionWindow, me: str, reaction: str) -> list[Choice]:
    attacker = window.continuation.get("attacker", window.actor)
    target = combat.combatant(state, me)
    chance = None
    notes = ["both attacks are rolled: one hits, it hits; both hit, the higher total hits, ties both (BB-CMB-14)"]
    if target.ready is not None:
        try:
            chance = combat.plan_hit_chance(combat.plan_attack(state, me, attacker, target.ready, kind="return_fire"))
        except Rejected:
            chance = None
    try:
        if window.continuation.get("kind") == "reactive_attack":
            move = window.continuation.get("move", {})
            incoming = plan_reactive_fire(state, attacker, me, tuple(target.position), str(move.get("mode", "tactical")))[0]  # type: ignore[arg-type]
        else:
            shooter = combat.combatant(state, attacker)
            incoming = combat.plan_attack(state, attacker, me, shooter.weapon(window.continuation["weapon"]), kind="attack")  # type: ignore[arg-type]
        notes.append(f"{attacker}'s shot alone would hit you: {combat.plan_hit_chance(incoming):.0%}")
    except (Rejected, KeyError):
        pass
    return [Choice(label=f"return fire at {attacker}", hit_chance=chance, rule="BB-CMB-14", notes=notes, chance_of="your shot hits",
                   command=claim(window, me, "return_fire"))]


def dive_odds(state: EncounterState, window: ReactionWindow, me: str, square: Square) -> tuple[float, float]:
    """(chance the Agility save succeeds, chance the hit still lands) if ``me``
    dives to ``square`` (BB-CMB-17): the save's DC is the attack total; on a
    success the hit is checked again against the cover there, without the
    Exposed bonus it had (a natural 20 still hits)."""
    continuation = window.continuation
    total = int(continuation["total"])
    attacker_square: Square = tuple(continuation["attacker_square"])  # type: ignore[assignment]
    diver = combat.combatant(state, me)
    save = combat.check_probability(sum(m.value for m in combat.save_modifiers(state, diver, "agility")), total)
    moved = msgspec.structs.replace(diver, position=square)
    landed = msgspec.structs.replace(state, combatants={**state.combatants, me: moved})
    defense = combat.defense_roll(landed, moved, attacker_square, ranged=True)
    was_exposed = int(continuation.get("exposed_bonus", 0))
    now_exposed = int(state.settings.get("exposed_attack_bonus", 2)) if combat.exposed_to(landed, moved, attacker_square) else 0
    still_hits = bool(continuation.get("critical")) or total - was_exposed + now_exposed >= defense.total
    return save, (1 - save) + (save if still_hits else 0.0)


def _dive_for_cover(state: EncounterState, window: ReactionWindow, me: str, reaction: str) -> list[Choice]:
    attacker_square: Square = tuple(window.continuation["attacker_square"])  # type: ignore[assignment]
    choices = []
    for square in dive_squares(state, me, attacker_square):
        save, still = dive_odds(state, window, me, square)
        # The number shown is the attacker's: the chance the hit still lands after this dive.
        choices.append(Choice(label=f"dive to {square}", square=square, hit_chance=still, rule="BB-CMB-17",
                              chance_of="the hit still lands",
                              notes=[f"Agility save DC {window.continuation['total']} succeeds: {save:.0%}"],
                              command=claim(window, me, "dive_for_cover", to=list(square))))
    return choices


def _fire_choice(state: EncounterState, window: ReactionWindow, me: str, reaction: str) -> list[Choice]:
    """BB-CMB-12: the mover damaged by Reactive Fire keeps moving or stops Pinned."""
    default = str(window.continuation.get("default", "continue"))
    return [Choice(label="keep moving" if reaction == "continue" else "stop now and be Pinned", rule="BB-CMB-12",
                   notes=["the move's declared choice: passing keeps it"] if reaction == default else [],
                   command=claim(window, me, reaction))]


_REACTIONS = {
    "reactive_fire": _reactive_fire,
    "opportunity_strike": _opportunity_strike,
    "return_fire": _return_fire,
    "dive_for_cover": _dive_for_cover,
    "continue": _fire_choice,
    "stop": _fire_choice,
}
_LABELS = {
    "reactive_fire": "Reactive Fire",
    "opportunity_strike": "Opportunity Strike",
    "return_fire": "Return Fire",
    "dive_for_cover": "Dive for Cover",
    "continue": "Keep moving",
    "stop": "Stop and be Pinned",
}
_RULES = {
    "reactive_fire": "BB-CMB-10",
    "opportunity_strike": "BB-CMB-15",
    "return_fire": "BB-CMB-14",
    "dive_for_cover": "BB-CMB-17",
    "continue": "BB-CMB-12",
    "stop": "BB-CMB-12",
}
