"""The Bolt & Blade AI: a deterministic policy (a pure function of the state).

On its turn a combatant: Rallies if Pinned; Reloads an empty or jammed weapon;
throws a frag grenade at a cluster of enemies with no friends near; shoots the
best visible target (Aiming first if it has not moved) when the odds are fair;
otherwise moves to the reachable square that best trades cover for a line of
fire (it avoids ending in enemy fire lanes, and prefers closing in when it has
no shot); then shoots, Suppresses an enemy in cover, Overwatches the nearest
enemy's approach or Takes Cover; then ends its turn.

In a reaction window it claims Dive for Cover, Return Fire, Opportunity Strike,
and Reactive Fire when the shot is worth the Reaction, and passes otherwise.
No randomness and no dice: equal states give equal commands.
"""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING, NamedTuple

from firelane.engine.core import Rejected, next_command_id
from firelane.engine.grid import Square, cover_rank, distance, has_cover_feature, in_fire_lane
from firelane.engine.state import EncounterState
from firelane.engine.systems.bolt_and_blade.actions import take_cover_gain
from firelane.engine.systems.bolt_and_blade.movement import entry_cost, fire_lane_shooters, movement_left, occupied_squares
from firelane.engine.systems.bolt_and_blade.reactions import dive_squares
from firelane.engine.systems.bolt_and_blade.rules import parse_dice, range_band
from firelane.engine.systems.bolt_and_blade.system import AIMING, EXPOSED, OVERWATCH, PINNED, grid_of
from firelane.events.bolt_and_blade_area_schemas import BBThrow
from firelane.events.bolt_and_blade_schemas import BBAim, BBAttack, BBMove, BBOverwatch, BBRally, BBReload, BBSuppress, BBTakeCover
from firelane.events.schemas import ClaimReaction, Command, EndTurn, PassReaction

if TYPE_CHECKING:
    from firelane.engine.systems.bolt_and_blade.state import BoltAndBladeCombatant, Weapon
    from firelane.engine.systems.bolt_and_blade.system import BoltAndBladeSystem

GOOD_SHOT = 0.45  # shoot from where you stand at these odds or better
FAIR_SHOT = 0.3  # after moving, shoot at these odds rather than Overwatch
ANY_SHOT = 0.2  # with nothing better to do, take any shot at least this likely


def average_damage(weapon: Weapon) -> float:
    expression = parse_dice(weapon.damage)
    return expression.count * (expression.sides + 1) / 2 + expression.bonus


def hit_chance(bonus: int, defense: int, mode: str) -> float:
    """Chance a d20 + bonus meets Defense (natural 1 misses, natural 20 hits)."""
    single = min(0.95, max(0.05, (21 - (defense - bonus)) / 20))
    if mode == "advantage":
        return 1 - (1 - single) ** 2
    if mode == "disadvantage":
        return single**2
    return single


def plan_chance(system: BoltAndBladeSystem, state: EncounterState, attacker: str, target: str, weapon: Weapon, extra_disadvantage: bool = False) -> float:
    try:
        plan = system.plan_attack(state, attacker, target, weapon)
    except Rejected:
        return 0.0
    disadvantage = bool(plan.disadvantage) or extra_disadvantage
    mode = "cancelled" if plan.advantage and disadvantage else "advantage" if plan.advantage else "disadvantage" if disadvantage else "normal"
    return hit_chance(sum(m.value for m in plan.modifiers), plan.defense.total, mode)


# ---------------------------------------------------------------- reactions


def choose_reaction(system: BoltAndBladeSystem, state: EncounterState, me: BoltAndBladeCombatant) -> Command:
    window = state.window
    assert window is not None
    command_id = next_command_id(state, me.id)
    offered = window.eligible(me.id)
    assert offered is not None
    for reaction in ("dive_for_cover", "opportunity_strike"):
        if reaction in offered.reactions:
            return ClaimReaction(command_id=command_id, actor=me.id, window=window.window, reaction=reaction)
    if "return_fire" in offered.reactions and me.ready is not None:
        attacker = system.combatant(state, window.actor)
        chance = plan_chance(system, state, me.id, attacker.id, me.ready)
        # Keep the Reaction for a dive when the odds are poor and cover is a step away.
        if chance >= 0.5 or not dive_squares(system, state, me.id, attacker.position):  # type: ignore[arg-type]
            return ClaimReaction(command_id=command_id, actor=me.id, window=window.window, reaction="return_fire")
    if "reactive_fire" in offered.reactions and me.ready is not None:
        mover = system.combatant(state, window.actor)
        watching = OVERWATCH in me.conditions
        waived = watching or window.continuation.get("mode") == "dash" or EXPOSED in mover.conditions
        chance = plan_chance(system, state, me.id, mover.id, me.ready, extra_disadvantage=not waived)
        if chance >= 0.3 or watching:
            return ClaimReaction(command_id=command_id, actor=me.id, window=window.window, reaction="reactive_fire")
    return PassReaction(command_id=command_id, actor=me.id, window=window.window)


# ---------------------------------------------------------------- targets


def best_target(system: BoltAndBladeSystem, state: EncounterState, me: BoltAndBladeCombatant) -> tuple[str, str, float] | None:
    """(target, weapon, expected damage x chance) of the best attack from here."""
    best: tuple[float, str, str] | None = None
    weapons = [w for w in me.weapons if w.template is None and w.kind != "thrown" and (w.is_melee or w.name == me.ready_weapon)]
    for enemy in system.standing_enemies(state, me.id):
        for weapon in weapons:
            if weapon.is_ranged and system.weapon_problem(state, me, weapon) is not None:
                continue
            chance = plan_chance(system, state, me.id, enemy.id, weapon)
            if chance <= 0:
                continue
            value = chance * average_damage(weapon) * (1.5 if enemy.vitality <= average_damage(weapon) else 1.0)
            key = (value, weapon.name, enemy.id)
            if best is None or key > (best[0], best[2], best[1]):
                best = (value, enemy.id, weapon.name)
    if best is None:
        return None
    return best[1], best[2], best[0]


def estimate_from(system: BoltAndBladeSystem, state: EncounterState, me: BoltAndBladeCombatant, square: Square, survey: Survey | None = None) -> float:
    """Best chance to hit any enemy with the ready ranged weapon from ``square``."""
    return (survey or Survey(system, state, me)).square_terms(square).chance


class SquareTerms(NamedTuple):
    """What `square_score` weighs about a square, whatever the path to it."""

    nearest: int | None  # squares to the nearest enemy (None: no enemies)
    chance: float  # `estimate_from` the square
    cover: float  # for each enemy that sees the square: its cover rank against that enemy - 1
    has_cover: bool  # any cover on the square
    lane_watchers: frozenset[str]  # enemies with their Reaction left whose fire lane covers it


class Survey:
    """The field as ``me`` sees it in one state, for one decision.

    Choosing a move weighs a hundred or more squares against the same enemies:
    this reads the enemies, the smoke and the occupied squares once and
    remembers what it worked out about each square. It is only valid while the
    state does not change, so it lives for one `choose_command` call and is
    passed down, never kept.
    """

    def __init__(self, system: BoltAndBladeSystem, state: EncounterState, me: BoltAndBladeCombatant) -> None:
        self.system = system
        self.state = state
        self.me = me
        self.grid = grid_of(state)
        self.enemies = system.standing_enemies(state, me.id)
        # Sight is the terrain's (`Grid.sightline`, memoised) unless smoke is
        # about; then each line the terrain leaves open is asked of the system.
        self.sees = system.sight_test(state)
        self.smoke = bool(system.sight_blockers(state))
        # (enemy, its square, the reach of its fire lane): only an enemy with
        # its Reaction left can fire at a mover crossing its lane, so only
        # those lanes count against a path; the others have no reach (None).
        lane_reach = {enemy: reach for enemy, _there, reach in fire_lane_shooters(system, state, me.id)}
        self._enemy_lanes: list[tuple[BoltAndBladeCombatant, Square, int | None]] = [
            (enemy, enemy.position, None if enemy.reaction_used else lane_reach.get(enemy.id)) for enemy in self.enemies  # type: ignore[misc]
        ]
        weapon = me.ready
        self._gun = weapon if weapon is not None and weapon.is_ranged else None  # estimate_from shoots only the ready ranged weapon
        self.occupied = occupied_squares(state, besides=me.id)
        # A path may pass allies but not enemies (`path_problem`).
        self.enemy_held = {square for square, cid in self.occupied.items() if state.combatants[cid].side != me.side}
        self._entry_costs: dict[Square, float] = {}
        self._chances_against: dict[tuple[str, str, str], float] = {}
        self._square_terms: dict[Square, SquareTerms] = {}

    def entry_cost(self, square: Square) -> float:
        cost = self._entry_costs.get(square)
        if cost is None:
            cost = self._entry_costs[square] = entry_cost(self.state, self.me, square)
        return cost

    def chance_against(self, enemy: BoltAndBladeCombatant, weapon: Weapon, band: str, cover: tuple[str, str]) -> float:
        """The chance to hit ``enemy`` with the ready ``weapon`` at this range band
        when it has this cover (not total). The square shot from matters only
        through the band and the cover level, so each is worked out once."""
        key = (enemy.id, band, cover[0])
        chance = self._chances_against.get(key)
        if chance is None:
            system, state, me = self.system, self.state, self.me
            base = me.modifier(weapon.attack_attribute) + (system.proficiency(state, me) if system.proficient_with(me, weapon) else 0)
            bonus = base + (int(state.settings.get("exposed_attack_bonus", 2)) if EXPOSED in enemy.conditions else 0)
            defense = system.defense_with_cover(state, enemy, cover).total  # as defense_roll(ranged=True) from that square
            chance = self._chances_against[key] = hit_chance(bonus, defense, "disadvantage" if band == "long" else "normal")
        return chance

    def square_terms(self, square: Square) -> SquareTerms:
        """`SquareTerms` of ``square``, worked out once per square, in one pass
        over the enemies."""
        terms = self._square_terms.get(square)
        if terms is not None:
            return terms
        system, state, grid, sees, smoke, gun = self.system, self.state, self.grid, self.sees, self.smoke, self._gun
        if gun is not None:
            normal_ft, maximum_ft = gun.range
            square_ft = state.terrain.square_size
        nearest: int | None = None
        chance = 0.0
        cover = 0.0
        watchers = []
        for enemy, there, lane_reach in self._enemy_lanes:
            line = grid.sightline(square, there)
            if nearest is None or line.squares < nearest:
                nearest = line.squares
            # The enemy sees the square: the cover on it counts, and so may the enemy's fire lane.
            if line.b_sees_a and (not smoke or sees(there, square)):
                cover += cover_rank(line.cover_at_a) - 1.0
                if lane_reach is not None and in_fire_lane(grid, square, there, lane_reach, sees=True):
                    watchers.append(enemy.id)
            # The shot from the square at the enemy.
            if gun is not None:
                band = range_band(line.squares * square_ft, normal_ft, maximum_ft)
                if band != "out" and line.a_sees_b and (not smoke or sees(square, there)):
                    enemy_cover = system.cover_against(state, enemy, square)
                    if enemy_cover[0] != "total":
                        chance = max(chance, self.chance_against(enemy, gun, band, enemy_cover))
        terms = self._square_terms[square] = SquareTerms(nearest, chance, cover, has_cover_feature(grid, square), frozenset(watchers))
        return terms

    def lanes_crossed(self, path: list[Square]) -> set[str]:
        """Enemies with their Reaction left whose fire lane some step of ``path`` enters."""
        crossed: set[str] = set()
        known = self._square_terms
        for step in path:
            crossed |= (known.get(step) or self.square_terms(step)).lane_watchers
        return crossed


# ---------------------------------------------------------------- movement


def reachable(system: BoltAndBladeSystem, state: EncounterState, me: BoltAndBladeCombatant, budget: float, survey: Survey | None = None) -> dict[Square, tuple[float, list[Square]]]:
    """Cheapest paths to every square within ``budget`` ft (Dijkstra, deterministic:
    of equally cheap paths, the first found in `STEP_DIRECTIONS` order is kept)."""
    survey = survey or Survey(system, state, me)
    start: Square = me.position  # type: ignore[assignment]
    best: dict[Square, tuple[float, list[Square]]] = {start: (0.0, [])}
    queue: list[tuple[float, Square]] = [(0.0, start)]
    steps_from, entry_cost, enemy_held = survey.grid.steps_from, survey.entry_cost, survey.enemy_held
    while queue:
        cost, square = heapq.heappop(queue)
        cheapest, path = best[square]
        if cost > cheapest:
            continue  # a stale queue entry: the square was reached more cheaply since
        for nxt in steps_from(square):
            if nxt in enemy_held:
                continue
            total = cost + entry_cost(nxt)
            if total > budget:
                continue
            known = best.get(nxt)
            if known is None or total < known[0]:
                best[nxt] = (total, path + [nxt])
                heapq.heappush(queue, (total, nxt))
    return {sq: v for sq, v in best.items() if sq == start or sq not in survey.occupied}


def square_score(system: BoltAndBladeSystem, state: EncounterState, me: BoltAndBladeCombatant, square: Square, path: list[Square], survey: Survey | None = None) -> float:
    """How good a square is to end a move on: a line of fire, cover from those
    who see it, few enemy fire lanes crossed on the way, and — without a shot —
    closeness to the nearest enemy."""
    survey = survey or Survey(system, state, me)
    if not survey.enemies:
        return 0.0
    nearest, chance, cover, in_cover, _watchers = survey.square_terms(square)
    lanes = len(survey.lanes_crossed(path))
    score = 4.0 * chance + 0.6 * cover - 0.3 * lanes
    if chance < FAIR_SHOT:
        score -= 0.35 * nearest  # no fair shot from here: close in
    if in_cover:
        score += 0.3
    return score - 0.01 * len(path)


def best_move(system: BoltAndBladeSystem, state: EncounterState, me: BoltAndBladeCombatant, budget: float, survey: Survey | None = None) -> tuple[list[Square], float] | None:
    """The path to the best square within ``budget`` ft and its score, or None to stay."""
    if budget < state.terrain.square_size or me.movement_halted:
        return None
    survey = survey or Survey(system, state, me)
    options = reachable(system, state, me, budget, survey)
    here: Square = me.position  # type: ignore[assignment]
    scored = sorted(((square_score(system, state, me, sq, path, survey), sq) for sq, (_cost, path) in options.items()), key=lambda item: (-item[0], item[1][1], item[1][0]))
    if not scored or scored[0][1] == here:
        return None
    if scored[0][0] <= square_score(system, state, me, here, [], survey) + 0.05:
        return None
    return options[scored[0][1]][1], scored[0][0]


# ---------------------------------------------------------------- turn


def grenade_throw(system: BoltAndBladeSystem, state: EncounterState, me: BoltAndBladeCombatant) -> BBThrow | None:
    grenade = me.weapon("frag grenade")
    if grenade is None or me.ammo.get(grenade.name, 0) <= 0:
        return None
    here: Square = me.position  # type: ignore[assignment]
    friends = [c for c in state.combatants.values() if c.side == me.side and not c.out_of_fight]
    for enemy in system.standing_enemies(state, me.id):
        point: Square = enemy.position  # type: ignore[assignment]
        if distance(here, point) * state.terrain.square_size > grenade.range[0] or not system.sees(state, here, point):
            continue
        if any(distance(f.position, point) <= 2 for f in friends):  # type: ignore[arg-type]
            continue
        caught = [e for e in system.standing_enemies(state, me.id) if distance(e.position, point) <= 2]  # type: ignore[arg-type]
        if len(caught) >= 2:
            return BBThrow(command_id=next_command_id(state, me.id), actor=me.id, target=point, weapon=grenade.name)
    return None


def suppress_target(system: BoltAndBladeSystem, state: EncounterState, me: BoltAndBladeCombatant) -> list[Square] | None:
    weapon = me.ready
    if weapon is None or not weapon.is_ranged or not any(weapon.has(t) for t in ("burst", "heavy")):
        return None
    if weapon.magazine and me.ammo.get(weapon.name, 0) < int(state.settings.get("suppress_ammo", 3)) + 1:
        return None
    if system.weapon_problem(state, me, weapon) is not None or (weapon.has("heavy") and system.engaged(state, me.id)):
        return None
    here: Square = me.position  # type: ignore[assignment]
    candidates = []
    for enemy in system.standing_enemies(state, me.id):
        there: Square = enemy.position  # type: ignore[assignment]
        if PINNED in enemy.conditions or distance(here, there) * state.terrain.square_size > weapon.range[0] or not system.sees(state, here, there):
            continue
        level, _how = system.cover_against(state, enemy, here)
        if level == "none":
            continue  # in the open: shoot it instead
        candidates.append((-cover_rank(level), distance(here, there), there))
    if not candidates:
        return None
    return [min(candidates)[2]]


def overwatch_point(system: BoltAndBladeSystem, state: EncounterState, me: BoltAndBladeCombatant) -> Square | None:
    weapon = me.ready
    if weapon is None or not weapon.is_ranged or weapon.template is not None or system.weapon_problem(state, me, weapon) is not None:
        return None
    enemies = system.standing_enemies(state, me.id)
    if not enemies:
        return None
    here: Square = me.position  # type: ignore[assignment]
    nearest = min(enemies, key=lambda e: (distance(here, e.position), e.id))  # type: ignore[arg-type]
    reach = int(weapon.range[1] // state.terrain.square_size)
    grid = grid_of(state)
    best: tuple[int, int, int, Square] | None = None
    for y in range(state.terrain.height):
        for x in range(state.terrain.width):
            square = (x, y)
            if not grid.passable(square) or distance(here, square) > reach or not system.sees(state, here, square):
                continue
            key = (distance(square, nearest.position), y, x, square)  # type: ignore[arg-type]
            if best is None or key < best:
                best = key
    return best[3] if best else None


def shot_command(system: BoltAndBladeSystem, state: EncounterState, me: BoltAndBladeCombatant, threshold: float) -> Command | None:
    """Aim (if still allowed) then Attack the best target, when the odds reach ``threshold``."""
    target = best_target(system, state, me)
    if target is None:
        return None
    target_id, weapon_name, _value = target
    weapon = me.weapon(weapon_name)
    if weapon is None or plan_chance(system, state, me.id, target_id, weapon) < threshold:
        return None
    command_id = next_command_id(state, me.id)
    if weapon.is_ranged and not me.moved_this_turn and not me.bonus_used and AIMING not in me.conditions:
        return BBAim(command_id=command_id, actor=me.id)
    return BBAttack(command_id=command_id, actor=me.id, target=target_id, weapon=weapon_name)


def choose_command(system: BoltAndBladeSystem, state: EncounterState, combatant: str) -> Command | None:
    me = system.combatant(state, combatant)
    if state.window is not None:
        if state.window.eligible(combatant) is None or state.window.answered(combatant):
            return None
        return choose_reaction(system, state, me)
    if state.active != combatant or me.out_of_fight:
        return None
    command_id = next_command_id(state, combatant)
    if not me.action_used:
        weapon = me.ready
        if weapon is not None and weapon.is_ranged and weapon.magazine and (weapon.name in me.jammed or me.ammo.get(weapon.name, 0) <= 0):
            return BBReload(command_id=command_id, actor=combatant, weapon=weapon.name)
        throw = grenade_throw(system, state, me)
        if throw is not None:
            return throw
        shot = shot_command(system, state, me, GOOD_SHOT if not me.moved_this_turn and movement_left(me) >= state.terrain.square_size else ANY_SHOT)
        if shot is not None:
            return shot
    if not me.movement_halted and movement_left(me) >= state.terrain.square_size:
        survey = Survey(system, state, me)  # shared by the walk, the dash and their squares' scores
        walked = best_move(system, state, me, movement_left(me), survey)
        no_shot = estimate_from(system, state, me, walked[0][-1] if walked else me.position, survey) < ANY_SHOT  # type: ignore[arg-type]
        if no_shot and not me.action_used and PINNED not in me.conditions:
            dashed = best_move(system, state, me, movement_left(me) + me.movement_ft, survey)
            if dashed is not None and (walked is None or dashed[1] > walked[1] + 0.5):
                return BBMove(command_id=command_id, actor=combatant, path=dashed[0], mode="dash")
        if walked is not None:
            return BBMove(command_id=command_id, actor=combatant, path=walked[0])
    if not me.action_used:
        # Poor odds: pin them down with a burst or heavy weapon, or watch their approach.
        area = suppress_target(system, state, me)
        if area is not None and shot_command(system, state, me, GOOD_SHOT) is None:
            return BBSuppress(command_id=command_id, actor=combatant, area=area)
        shot = shot_command(system, state, me, FAIR_SHOT)
        if shot is not None:
            return shot
        point = overwatch_point(system, state, me)
        if point is not None:
            return BBOverwatch(command_id=command_id, actor=combatant, center=point)
        shot = shot_command(system, state, me, ANY_SHOT)
        if shot is not None:
            return shot
        if PINNED in me.conditions:
            return BBRally(command_id=command_id, actor=combatant)
        if take_cover_gain(state, me) is not None:
            return BBTakeCover(command_id=command_id, actor=combatant)
    return EndTurn(command_id=command_id, actor=combatant)

