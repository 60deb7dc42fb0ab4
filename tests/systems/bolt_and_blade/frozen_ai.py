"""A frozen copy of the Bolt & Blade AI as it was before issue 12 (commit 016fdae),
kept only to check that the faster AI decides the same: see test_ai_speed.py
and scripts/bb_ai_versus.py. Not used by the engine.
"""


from __future__ import annotations

import heapq
from collections.abc import Callable
from functools import cached_property
import msgspec

from firelane.engine.core import Rejected, next_command_id
from firelane.engine.grid import Sightline, Square, cover_rank, distance, has_cover_feature, sightline_in_fire_lane
from firelane.engine.state import EncounterState, ReactionWindow
from firelane.engine.systems.bolt_and_blade import combat
from firelane.engine.systems.bolt_and_blade.actions import take_cover_gain
from firelane.engine.systems.bolt_and_blade.combat import AttackPlan, average_damage, grid_of
from firelane.engine.systems.bolt_and_blade.constants import AIMING, PINNED
from firelane.engine.systems.bolt_and_blade.paths import end_taken, fire_lane_shooters, ground_cost, movement_left, occupied_squares
from firelane.engine.systems.bolt_and_blade.reactions import dive_squares, plan_reactive_fire
from firelane.engine.systems.bolt_and_blade.rules import range_band
from firelane.engine.systems.bolt_and_blade.state import BoltAndBladeCombatant, Weapon
from firelane.engine.systems.bolt_and_blade.area_schemas import BBThrow
from firelane.engine.systems.bolt_and_blade.schemas import BBAim, BBAttack, BBMove, BBOverwatch, BBRally, BBReload, BBSuppress, BBTakeCover
from firelane.events.schemas import ClaimReaction, Command, EndTurn, PassReaction

GOOD_SHOT = 0.45  # shoot from where you stand at these odds or better
FAIR_SHOT = 0.3  # after moving, shoot at these odds rather than Overwatch
ANY_SHOT = 0.2  # with nothing better to do, take any shot at least this likely


def hit_chance(bonus: int, defense: int, mode: str) -> float:
    """Chance a d20 + bonus meets Defense (natural 1 misses, natural 20 hits)."""
    single = min(0.95, max(0.05, (21 - (defense - bonus)) / 20))
    if mode == "advantage":
        return 1 - (1 - single) ** 2
    if mode == "disadvantage":
        return single**2
    return single


def plan_odds(plan: AttackPlan) -> float:
    """The chance a planned attack hits, with its Advantage and Disadvantage."""
    disadvantage = bool(plan.disadvantage)
    mode = "cancelled" if plan.advantage and disadvantage else "advantage" if plan.advantage else "disadvantage" if disadvantage else "normal"
    return hit_chance(sum(m.value for m in plan.modifiers), plan.defense.total, mode)


def plan_chance(state: EncounterState, attacker: str, target: str, weapon: Weapon) -> float:
    try:
        plan = combat.plan_attack(state, attacker, target, weapon)
    except Rejected:
        return 0.0
    return plan_odds(plan)


def best_fire_square(state: EncounterState, me: BoltAndBladeCombatant, window: ReactionWindow) -> tuple[float, Square, bool] | None:
    """(chance, square, on Overwatch there) of the best square the window offers
    ``me`` for its Reactive Fire (BB-CMB-10): the best chance to hit, and of
    equal chances the earliest (the mover may stop before a later one)."""
    mover = window.actor
    mode = str(window.continuation.get("mode", "tactical"))
    best: tuple[float, Square, bool] | None = None
    for raw in window.continuation.get("fire_squares", {}).get(me.id, []):
        square: Square = (int(raw[0]), int(raw[1]))
        try:
            plan, overwatch, _waived = plan_reactive_fire(state, me.id, mover, square, mode)
        except Rejected:
            continue
        chance = plan_odds(plan)
        if best is None or chance > best[0]:
            best = (chance, square, overwatch)
    return best


# ---------------------------------------------------------------- reactions


def choose_reaction(state: EncounterState, me: BoltAndBladeCombatant) -> Command:
    window = state.window
    assert window is not None
    command_id = next_command_id(state, me.id)
    offered = window.eligible(me.id)
    assert offered is not None
    if window.trigger == "reactive_fire_choice":
        # BB-CMB-12: the AI keeps the choice its move declared.
        return ClaimReaction(command_id=command_id, actor=me.id, window=window.window, reaction=str(window.continuation["default"]))
    for reaction in ("dive_for_cover", "opportunity_strike"):
        if reaction in offered.reactions:
            return ClaimReaction(command_id=command_id, actor=me.id, window=window.window, reaction=reaction)
    if "return_fire" in offered.reactions and me.ready is not None:
        attacker = combat.combatant(state, window.actor)
        chance = plan_chance(state, me.id, attacker.id, me.ready)
        # Keep the Reaction for a dive when the odds are poor and cover is a step away.
        if chance >= 0.5 or not dive_squares(state, me.id, attacker.position):  # type: ignore[arg-type]
            return ClaimReaction(command_id=command_id, actor=me.id, window=window.window, reaction="return_fire")
    if "reactive_fire" in offered.reactions and me.ready is not None:
        best = best_fire_square(state, me, window)
        if best is not None and (best[0] >= 0.3 or best[2]):
            _chance, square, _overwatch = best
            return ClaimReaction(command_id=command_id, actor=me.id, window=window.window, reaction="reactive_fire", options={"square": list(square)})
    return PassReaction(command_id=command_id, actor=me.id, window=window.window)


# ---------------------------------------------------------------- targets


def best_target(state: EncounterState, me: BoltAndBladeCombatant) -> tuple[str, str, float] | None:
    """(target, weapon, expected damage x chance) of the best attack from here."""
    best: tuple[float, str, str] | None = None
    weapons = [w for w in me.weapons if w.template is None and w.kind != "thrown" and (w.is_melee or w.name == me.ready_weapon)]
    for enemy in combat.standing_enemies(state, me.id):
        for weapon in weapons:
            if weapon.is_ranged and combat.weapon_problem(state, me, weapon) is not None:
                continue
            chance = plan_chance(state, me.id, enemy.id, weapon)
            if chance <= 0:
                continue
            value = chance * average_damage(weapon) * (1.5 if enemy.vitality <= average_damage(weapon) else 1.0)
            key = (value, weapon.name, enemy.id)
            if best is None or key > (best[0], best[2], best[1]):
                best = (value, enemy.id, weapon.name)
    if best is None:
        return None
    return best[1], best[2], best[0]


def estimate_from(state: EncounterState, me: BoltAndBladeCombatant, square: Square, survey: Survey | None = None) -> float:
    """Best chance to hit any enemy with the ready ranged weapon from ``square``."""
    return (survey or Survey(state, me)).square_terms(square).chance


NO_WATCHERS: frozenset[str] = frozenset()


class SquareTerms(msgspec.Struct, frozen=True, gc=False):
    """What `square_score` weighs about a square, whatever the path to it.
    (A Struct, not a NamedTuple: one is made for every square weighed.)"""

    nearest: int | None  # squares to the nearest enemy (None: no enemies)
    chance: float  # `estimate_from` the square
    cover: float  # for each enemy that sees the square: its cover rank against that enemy - 1
    has_cover: bool  # any cover on the square
    lane_watchers: frozenset[str]  # enemies with their Reaction left whose fire lane covers it


class Survey:
    """The field as ``me`` sees it in one state, for one decision.

    A decision asks the same questions more than once (the best attack, for
    each threshold) and choosing a move weighs a hundred or more squares
    against the same enemies: this reads the enemies, the smoke and the
    occupied squares once, when first needed, and remembers what it worked
    out. It is only valid while the state does not change, so it lives for one
    `choose_command` call and is passed down, never kept.
    """

    def __init__(self, state: EncounterState, me: BoltAndBladeCombatant) -> None:
        self.state = state
        self.me = me
        self.grid = grid_of(state)
        self.entry_costs: dict[Square, float] = {}  # filled by entry_cost
        self._ground_costs: dict[tuple[bool, bool], float] = {}
        self.odds: dict[tuple[str, str, str | None, bool], float] = {}  # filled by shot_odds
        self._square_terms: dict[Square, SquareTerms] = {}
        self._range_bands: dict[int, str] = {}

    @cached_property
    def enemies(self) -> list[BoltAndBladeCombatant]:
        return combat.standing_enemies(self.state, self.me.id)

    @cached_property
    def sees(self) -> Callable[[Square, Square], bool]:
        return combat.sight_test(self.state)

    @cached_property
    def smoke(self) -> bool:
        """Whether anything besides walls blocks sight. Without, sight is the
        terrain's (`Grid.sightline`, memoised); with, each line the terrain
        leaves open is also asked of `sees`."""
        return bool(combat.sight_blockers(self.state))

    @cached_property
    def enemy_lanes(self) -> list[tuple[BoltAndBladeCombatant, Square, int | None, dict[Square, Sightline]]]:
        """(enemy, its square, the reach of its fire lane, `Grid.sightlines_to`
        its square) for each enemy. Only an enemy with its Reaction left can
        fire at a mover crossing its lane, so only those lanes count against a
        path; the others have no reach (None)."""
        lane_reach = {enemy: reach for enemy, _there, reach in fire_lane_shooters(self.state, self.me.id)}
        return [
            (enemy, enemy.position, None if enemy.reaction_used else lane_reach.get(enemy.id), self.grid.sightlines_to(enemy.position))  # type: ignore[arg-type, misc]
            for enemy in self.enemies
        ]

    @cached_property
    def gun(self) -> Weapon | None:
        """The ready weapon if it is a ranged one: the one `estimate_from` shoots."""
        weapon = self.me.ready
        return weapon if weapon is not None and weapon.is_ranged else None

    @cached_property
    def occupied(self) -> dict[Square, str]:
        return occupied_squares(self.state, besides=self.me.id)

    @cached_property
    def enemy_held(self) -> set[Square]:
        """Squares a path may not pass (`path_problem`: allies may be passed, enemies not)."""
        return {square for square, cid in self.occupied.items() if self.state.combatants[cid].side != self.me.side}

    @cached_property
    def best_attack(self) -> tuple[str, Weapon, float] | None:
        """(target, weapon, chance to hit) of the `best_target` attack from where ``me`` stands."""
        target = best_target(self.state, self.me)
        if target is None:
            return None
        target_id, weapon_name, _value = target
        weapon = self.me.weapon(weapon_name)
        if weapon is None:
            return None
        return target_id, weapon, plan_chance(self.state, self.me.id, target_id, weapon)

    def entry_cost(self, square: Square) -> float:
        """`entry_cost` for ``me``, remembered in `entry_costs`: worked out once
        for each kind of ground (`ground_cost`)."""
        cost = self.entry_costs.get(square)
        if cost is None:
            kind = (has_cover_feature(self.grid, square), square in self.grid.difficult)
            cost = self._ground_costs.get(kind)
            if cost is None:
                cost = self._ground_costs[kind] = ground_cost(self.state, self.me, cover=kind[0], difficult=kind[1])
            self.entry_costs[square] = cost
        return cost

    def shot_odds(self, enemy: BoltAndBladeCombatant, weapon: Weapon, band: str, feature_level: str | None, *, through_smoke: bool = False) -> float:
        """The chance to hit ``enemy`` with the ready ``weapon`` at this range
        band when the strongest cover on its square facing the shooter is a
        feature of ``feature_level`` (`cover_behind`), through smoke or not
        (Disadvantage, BB-CORE-05); 0 behind total cover, which cannot be shot
        through. The square shot from matters only through these, so each is
        worked out once (remembered in `odds`)."""
        key = (enemy.id, band, feature_level, through_smoke)
        odds = self.odds.get(key)
        if odds is None:
            state, me = self.state, self.me
            cover = combat.cover_behind(enemy, feature_level)
            if cover[0] == "total":
                odds = 0.0  # cannot be targeted: leaves the best chance from the square as it is
            else:
                base = me.modifier(weapon.attack_attribute) + (combat.proficiency(state, me) if combat.proficient_with(me, weapon) else 0)
                exposed = cover[0] == "none"  # `combat.exposed_to` the square shot from
                bonus = base + (int(state.settings.get("exposed_attack_bonus", 2)) if exposed else 0)
                defense = combat.defense_with_cover(state, enemy, cover).total  # as defense_roll(ranged=True) from that square
                odds = hit_chance(bonus, defense, "disadvantage" if band == "long" or through_smoke else "normal")
            self.odds[key] = odds
        return odds

    def square_terms(self, square: Square) -> SquareTerms:
        """`SquareTerms` of ``square``, worked out once per square, in one pass
        over the enemies."""
        terms = self._square_terms.get(square)
        if terms is not None:
            return terms
        state, grid, sees, smoke, gun = self.state, self.grid, self.sees, self.smoke, self.gun
        if gun is not None:
            normal_ft, maximum_ft = gun.range
            square_ft = state.terrain.square_size
            bands = self._range_bands  # by distance in squares
            known_odds = self.odds  # looked up here first: asked for every enemy seen from every square
        nearest: int | None = None
        chance = 0.0
        cover = 0.0
        watchers = []
        for enemy, there, lane_reach, lines_to_enemy in self.enemy_lanes:
            line = lines_to_enemy.get(square) or grid.sightline(square, there)
            away, clear_to_enemy, clear_from_enemy, cover_here, _cover_there, _feature_here, feature_there = line
            if nearest is None or away < nearest:
                nearest = away
            # The enemy sees the square: the cover on it counts, and so may the enemy's fire lane.
            if clear_from_enemy and (not smoke or sees(there, square)):
                cover += cover_rank(cover_here) - 1.0
                if lane_reach is not None and sightline_in_fire_lane(line, lane_reach, sees=True):
                    watchers.append(enemy.id)
            # The shot from the square at the enemy.
            if gun is not None:
                band = bands.get(away)
                if band is None:
                    band = bands[away] = range_band(away * square_ft, normal_ft, maximum_ft)
                if band != "out" and clear_to_enemy:
                    hazy = smoke and not sees(square, there)  # walls clear, smoke on the line
                    odds = known_odds.get((enemy.id, band, feature_there, hazy))
                    if odds is None:
                        odds = self.shot_odds(enemy, gun, band, feature_there, through_smoke=hazy)
                    chance = max(chance, odds)
        terms = self._square_terms[square] = SquareTerms(nearest, chance, cover, has_cover_feature(grid, square), frozenset(watchers) if watchers else NO_WATCHERS)
        return terms

    def lanes_crossed(self, path: list[Square]) -> set[str]:
        """Enemies with their Reaction left whose fire lane some step of ``path`` enters."""
        crossed: set[str] = set()
        known = self._square_terms
        for step in path:
            crossed |= (known.get(step) or self.square_terms(step)).lane_watchers
        return crossed


# ---------------------------------------------------------------- movement


def reachable(state: EncounterState, me: BoltAndBladeCombatant, budget: float, survey: Survey | None = None) -> dict[Square, tuple[float, list[Square]]]:
    """Cheapest paths to every square within ``budget`` ft (Dijkstra, deterministic:
    squares are settled cheapest first, then by (x, y), and of equally cheap
    paths to a square the one through the square settled first is kept)."""
    survey = survey or Survey(state, me)
    start: Square = me.position  # type: ignore[assignment]
    cheapest: dict[Square, float] = {start: 0.0}
    paths: dict[Square, list[Square]] = {start: []}
    queue: list[tuple[float, Square]] = [(0.0, start)]
    steps_from, enemy_held = survey.grid.steps_from, survey.enemy_held
    entry_costs = survey.entry_costs  # looked up here first: the search asks for every step
    while queue:
        cost, square = heapq.heappop(queue)
        if cost > cheapest[square]:
            continue  # a stale queue entry: the square was reached more cheaply since
        path = paths[square]
        for nxt in steps_from(square):
            if nxt in enemy_held:
                continue
            step_cost = entry_costs.get(nxt)
            if step_cost is None:
                step_cost = survey.entry_cost(nxt)
            total = cost + step_cost
            if total > budget:
                continue
            known = cheapest.get(nxt)
            if known is None or total < known:
                cheapest[nxt] = total
                paths[nxt] = path + [nxt]
                heapq.heappush(queue, (total, nxt))
    # Issue 19 (a rule, kept in step with the engine): no move ends on anyone's square, standing or down.
    taken = end_taken(survey.state, besides=survey.me.id)
    return {sq: (cost, paths[sq]) for sq, cost in cheapest.items() if sq == start or sq not in taken}


def square_score(state: EncounterState, me: BoltAndBladeCombatant, square: Square, path: list[Square], survey: Survey | None = None) -> float:
    """How good a square is to end a move on: a line of fire, cover from those
    who see it, few enemy fire lanes crossed on the way, and — without a shot —
    closeness to the nearest enemy."""
    survey = survey or Survey(state, me)
    if not survey.enemies:
        return 0.0
    terms = survey.square_terms(square)
    nearest, chance, cover, in_cover = terms.nearest, terms.chance, terms.cover, terms.has_cover
    lanes = len(survey.lanes_crossed(path))
    score = 4.0 * chance + 0.6 * cover - 0.3 * lanes
    if chance < FAIR_SHOT:
        score -= 0.35 * nearest  # no fair shot from here: close in
    if in_cover:
        score += 0.3
    return score - 0.01 * len(path)


def best_move(state: EncounterState, me: BoltAndBladeCombatant, budget: float, survey: Survey | None = None) -> tuple[list[Square], float] | None:
    """The path to the best square within ``budget`` ft and its score, or None to stay."""
    if budget < state.terrain.square_size or me.movement_halted:
        return None
    survey = survey or Survey(state, me)
    options = reachable(state, me, budget, survey)
    here: Square = me.position  # type: ignore[assignment]
    best: Square | None = None
    best_score = 0.0
    for square, (_cost, path) in options.items():
        score = square_score(state, me, square, path, survey)
        # The highest score wins; ties go to the lowest y, then x.
        if best is None or score > best_score or (score == best_score and (square[1], square[0]) < (best[1], best[0])):
            best, best_score = square, score
    if best is None or best == here or best_score <= square_score(state, me, here, [], survey) + 0.05:
        return None
    return options[best][1], best_score


# ---------------------------------------------------------------- turn


def grenade_throw(state: EncounterState, me: BoltAndBladeCombatant) -> BBThrow | None:
    grenade = me.weapon("frag grenade")
    if grenade is None or me.ammo.get(grenade.name, 0) <= 0:
        return None
    here: Square = me.position  # type: ignore[assignment]
    friends = [c for c in state.combatants.values() if c.side == me.side and not c.out_of_fight]
    for enemy in combat.standing_enemies(state, me.id):
        point: Square = enemy.position  # type: ignore[assignment]
        if distance(here, point) * state.terrain.square_size > grenade.range[0] or not combat.sees(state, here, point):
            continue
        if any(distance(f.position, point) <= 2 for f in friends):  # type: ignore[arg-type]
            continue
        caught = [e for e in combat.standing_enemies(state, me.id) if distance(e.position, point) <= 2]  # type: ignore[arg-type]
        if len(caught) >= 2:
            return BBThrow(command_id=next_command_id(state, me.id), actor=me.id, target=point, weapon=grenade.name)
    return None


def suppress_target(state: EncounterState, me: BoltAndBladeCombatant) -> list[Square] | None:
    weapon = me.ready
    if weapon is None or not weapon.is_ranged or not any(weapon.has(t) for t in ("burst", "heavy")):
        return None
    if weapon.magazine and me.ammo.get(weapon.name, 0) < int(state.settings.get("suppress_ammo", 3)) + 1:
        return None
    if combat.weapon_problem(state, me, weapon) is not None or (weapon.has("heavy") and combat.engaged(state, me.id)):
        return None
    here: Square = me.position  # type: ignore[assignment]
    candidates = []
    for enemy in combat.standing_enemies(state, me.id):
        there: Square = enemy.position  # type: ignore[assignment]
        if PINNED in enemy.conditions or distance(here, there) * state.terrain.square_size > weapon.range[0] or not combat.sees(state, here, there):
            continue
        level, _how = combat.cover_against(state, enemy, here)
        if level == "none":
            continue  # in the open: shoot it instead
        candidates.append((-cover_rank(level), distance(here, there), there))
    if not candidates:
        return None
    return [min(candidates)[2]]


def overwatch_point(state: EncounterState, me: BoltAndBladeCombatant) -> Square | None:
    weapon = me.ready
    if weapon is None or not weapon.is_ranged or weapon.template is not None or combat.weapon_problem(state, me, weapon) is not None:
        return None
    enemies = combat.standing_enemies(state, me.id)
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
            if not grid.passable(square) or distance(here, square) > reach or not combat.sees(state, here, square):
                continue
            key = (distance(square, nearest.position), y, x, square)  # type: ignore[arg-type]
            if best is None or key < best:
                best = key
    return best[3] if best else None


def shot_command(state: EncounterState, me: BoltAndBladeCombatant, threshold: float, survey: Survey | None = None) -> Command | None:
    """Aim (if still allowed) then Attack the best target, when the odds reach ``threshold``."""
    attack = (survey or Survey(state, me)).best_attack
    if attack is None:
        return None
    target_id, weapon, chance = attack
    if chance < threshold:
        return None
    command_id = next_command_id(state, me.id)
    if weapon.is_ranged and not me.moved_this_turn and not me.bonus_used and AIMING not in me.conditions:
        return BBAim(command_id=command_id, actor=me.id)
    return BBAttack(command_id=command_id, actor=me.id, target=target_id, weapon=weapon.name)


def choose_command(state: EncounterState, combatant: str) -> Command | None:
    me = combat.combatant(state, combatant)
    if state.window is not None:
        if state.window.eligible(combatant) is None or state.window.answered(combatant):
            return None
        return choose_reaction(state, me)
    if state.active != combatant or me.out_of_fight:
        return None
    command_id = next_command_id(state, combatant)
    survey = Survey(state, me)  # what this decision works out, shared by all its questions
    if not me.action_used:
        weapon = me.ready
        if weapon is not None and weapon.is_ranged and weapon.magazine and (weapon.name in me.jammed or me.ammo.get(weapon.name, 0) <= 0):
            return BBReload(command_id=command_id, actor=combatant, weapon=weapon.name)
        throw = grenade_throw(state, me)
        if throw is not None:
            return throw
        shot = shot_command(state, me, GOOD_SHOT if not me.moved_this_turn and movement_left(me) >= state.terrain.square_size else ANY_SHOT, survey)
        if shot is not None:
            return shot
    if not me.movement_halted and movement_left(me) >= state.terrain.square_size:
        walked = best_move(state, me, movement_left(me), survey)
        no_shot = estimate_from(state, me, walked[0][-1] if walked else me.position, survey) < ANY_SHOT  # type: ignore[arg-type]
        if no_shot and not me.action_used and PINNED not in me.conditions:
            dashed = best_move(state, me, movement_left(me) + me.movement_ft, survey)
            if dashed is not None and (walked is None or dashed[1] > walked[1] + 0.5):
                return BBMove(command_id=command_id, actor=combatant, path=dashed[0], mode="dash")
        if walked is not None:
            return BBMove(command_id=command_id, actor=combatant, path=walked[0])
    if not me.action_used:
        # Poor odds: pin them down with a burst or heavy weapon, or watch their approach.
        area = suppress_target(state, me)
        if area is not None and shot_command(state, me, GOOD_SHOT, survey) is None:
            return BBSuppress(command_id=command_id, actor=combatant, area=area)
        shot = shot_command(state, me, FAIR_SHOT, survey)
        if shot is not None:
            return shot
        point = overwatch_point(state, me)
        if point is not None:
            return BBOverwatch(command_id=command_id, actor=combatant, center=point)
        shot = shot_command(state, me, ANY_SHOT, survey)
        if shot is not None:
            return shot
        if PINNED in me.conditions:
            return BBRally(command_id=command_id, actor=combatant)
        if take_cover_gain(state, me) is not None:
            return BBTakeCover(command_id=command_id, actor=combatant)
    return EndTurn(command_id=command_id, actor=combatant)


