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

It picks from what the options offer (`options`): its attacks are the listed
attacks' plans and exact chances, its moves name a destination the options
list (the engine walks the path shown there, `paths.cheapest_paths`), its
Reactive Fire names a listed square with its listed chance.

**Cost.** A combatant weighs the squares it could move to against the
enemies it pays attention to: the `ATTENTION` nearest standing enemies (all
of them in the 8-combatant demo, which has four a side), so the cost of a
decision does not grow with the size of the battle. Sight along each line is
asked of the walls once (`sight.WallSight`), cover only where a square has
some; everything a decision works out is remembered for that decision only
(`Survey`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import cached_property

import msgspec

from firelane.engine.core import Rejected, next_command_id
from firelane.engine.grid import Square, cover_rank, distance
from firelane.engine.state import EncounterState, ReactionWindow
from firelane.engine.systems.bolt_and_blade import combat
from firelane.engine.systems.bolt_and_blade.actions import attack_weapons, take_cover_gain
from firelane.engine.systems.bolt_and_blade.combat import AttackPlan, average_damage, grid_of, hit_probability
from firelane.engine.systems.bolt_and_blade.constants import AIMING, PINNED
from firelane.engine.systems.bolt_and_blade.options import fire_square_odds
from firelane.engine.systems.bolt_and_blade.paths import cheapest_paths, end_taken, movement_left, occupied_squares
from firelane.engine.systems.bolt_and_blade.reactions import dive_squares
from firelane.engine.systems.bolt_and_blade.rules import d20_mode, range_band
from firelane.engine.systems.bolt_and_blade.sight import cover_lookup, wall_sight
from firelane.engine.systems.bolt_and_blade.state import BoltAndBladeCombatant, Weapon
from firelane.engine.systems.bolt_and_blade.area_schemas import BBThrow
from firelane.engine.systems.bolt_and_blade.schemas import BBAim, BBAttack, BBMove, BBOverwatch, BBRally, BBReload, BBSuppress, BBTakeCover
from firelane.events.schemas import ClaimReaction, Command, EndTurn, PassReaction

GOOD_SHOT = 0.45  # shoot from where you stand at these odds or better
FAIR_SHOT = 0.3  # after moving, shoot at these odds rather than Overwatch
ANY_SHOT = 0.2  # with nothing better to do, take any shot at least this likely
ATTENTION = 6  # a move is weighed against this many of the nearest enemies


def plan_odds(plan: AttackPlan) -> float:
    """The chance a planned attack hits: the options' exact chance (`combat.plan_hit_chance`)."""
    return combat.plan_hit_chance(plan)


def plan_chance(state: EncounterState, attacker: str, target: str, weapon: Weapon) -> float:
    try:
        plan = combat.plan_attack(state, attacker, target, weapon)
    except Rejected:
        return 0.0
    return plan_odds(plan)


def best_fire_square(state: EncounterState, me: BoltAndBladeCombatant, window: ReactionWindow) -> tuple[float, Square, bool] | None:
    """(chance, square, on Overwatch there) of the best square the window offers
    ``me`` for its Reactive Fire (BB-CMB-10): the best chance to hit, and of
    equal chances the earliest (the mover may stop before a later one). The
    squares and chances are the options' (`options.fire_square_odds`)."""
    best: tuple[float, Square, bool] | None = None
    for square, chance, overwatch in fire_square_odds(state, me.id, window):
        if chance is not None and (best is None or chance > best[0]):
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
    if "dive_for_cover" in offered.reactions:
        attacker_square: Square = tuple(window.continuation["attacker_square"])  # type: ignore[assignment]
        squares = dive_squares(state, me.id, attacker_square)
        options = {"to": list(squares[0])} if squares else {}  # the best cover, as an unnamed dive takes
        return ClaimReaction(command_id=command_id, actor=me.id, window=window.window, reaction="dive_for_cover", options=options)
    if "opportunity_strike" in offered.reactions:
        return ClaimReaction(command_id=command_id, actor=me.id, window=window.window, reaction="opportunity_strike")
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


def best_target(state: EncounterState, me: BoltAndBladeCombatant) -> tuple[str, str, float, float] | None:
    """(target, weapon, expected damage x chance, chance) of the best attack from
    here, among the attacks the options list (every weapon a `BBAttack` may use,
    every enemy it reaches, `options.attack_options`)."""
    best: tuple[float, str, str, float] | None = None
    here: Square = tuple(me.position)  # type: ignore[assignment]
    enemies = combat.standing_enemies(state, me.id)
    for weapon in attack_weapons(me):
        if weapon.is_ranged and combat.weapon_problem(state, me, weapon) is not None:
            continue
        reach_ft = weapon.range[0] if weapon.is_melee else weapon.range[1]
        damage = average_damage(weapon)
        for enemy in enemies:
            if distance(here, enemy.position) * state.terrain.square_size > reach_ft:  # type: ignore[arg-type]
                continue  # beyond reach or maximum range: no attack
            chance = plan_chance(state, me.id, enemy.id, weapon)
            if chance <= 0:
                continue
            value = chance * damage * (1.5 if enemy.vitality <= damage else 1.0)
            if best is None or (value, weapon.name, enemy.id) > (best[0], best[2], best[1]):
                best = (value, enemy.id, weapon.name, chance)
    if best is None:
        return None
    return best[1], best[2], best[0], best[3]


def estimate_from(state: EncounterState, me: BoltAndBladeCombatant, square: Square, survey: Survey | None = None) -> float:
    """Best chance to hit an enemy it pays attention to with the ready ranged weapon from ``square``."""
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


class Watcher(msgspec.Struct, frozen=True, gc=False):
    """An enemy as a move is weighed against it: where it stands, the reach of
    its fire lane in squares (None: no lane, or no Reaction left to fire along
    it), and the cover on its own square (by the square it faces)."""

    enemy: BoltAndBladeCombatant
    at: Square
    lane_reach: int | None
    covered: bool  # any cover feature on its square


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
        self.walls = wall_sight(state, self.grid)
        self.cover = cover_lookup(state, self.grid)
        self.odds: dict[tuple[str, str, str | None, bool], float] = {}  # filled by shot_odds
        self._square_terms: dict[Square, SquareTerms] = {}
        self._range_bands: dict[int, str] = {}
        self._paths: dict[float, dict[Square, tuple[float, list[Square]]]] = {}

    @cached_property
    def enemies(self) -> list[BoltAndBladeCombatant]:
        """The `ATTENTION` standing enemies nearest to ``me`` (then by ID), by ID."""
        enemies = combat.standing_enemies(self.state, self.me.id)
        if len(enemies) > ATTENTION:
            here: Square = tuple(self.me.position)  # type: ignore[assignment]
            enemies = sorted(sorted(enemies, key=lambda e: (distance(here, e.position), e.id))[:ATTENTION], key=lambda e: e.id)  # type: ignore[arg-type]
        return enemies

    @cached_property
    def sees(self) -> Callable[[Square, Square], bool]:
        return combat.sight_test(self.state)

    @cached_property
    def smoke(self) -> bool:
        """Whether anything besides walls blocks sight. Without, sight is the
        walls' (`WallSight`); with, each line the walls leave open is also
        asked of `sees`."""
        return bool(combat.sight_blockers(self.state))

    @cached_property
    def watchers(self) -> list[Watcher]:
        """Each enemy paid attention to, as a move is weighed against it: only
        an enemy with its Reaction left can fire at a mover crossing its lane,
        so only those lanes count against a path (BB-CMB-02, -10)."""
        square_ft = self.state.terrain.square_size
        cover_at = self.grid.cover_at
        found = []
        for enemy in self.enemies:
            weapon = enemy.ready
            reach = int(weapon.range[1] // square_ft) if weapon is not None and weapon.is_ranged and not enemy.reaction_used else None
            there: Square = (enemy.position[0], enemy.position[1])  # type: ignore[index]
            found.append(Watcher(enemy=enemy, at=there, lane_reach=reach, covered=there in cover_at))
        return found

    @cached_property
    def gun(self) -> Weapon | None:
        """The ready weapon if it is a ranged one: the one `estimate_from` shoots."""
        weapon = self.me.ready
        return weapon if weapon is not None and weapon.is_ranged else None

    @cached_property
    def occupied(self) -> dict[Square, str]:
        return occupied_squares(self.state, besides=self.me.id)

    @cached_property
    def best_attack(self) -> tuple[str, Weapon, float] | None:
        """(target, weapon, chance to hit) of the `best_target` attack from where ``me`` stands."""
        target = best_target(self.state, self.me)
        if target is None:
            return None
        target_id, weapon_name, _value, chance = target
        weapon = self.me.weapon(weapon_name)
        if weapon is None:
            return None
        return target_id, weapon, chance

    def paths(self, budget: float) -> dict[Square, tuple[float, list[Square]]]:
        """`paths.cheapest_paths` within ``budget`` ft: the paths moves by destination take."""
        found = self._paths.get(budget)
        if found is None:
            found = self._paths[budget] = cheapest_paths(self.state, self.me, budget, occupied=self.occupied)
        return found

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
                odds = hit_probability(bonus, defense, "disadvantage" if band == "long" or through_smoke else "normal")
            self.odds[key] = odds
        return odds

    def square_terms(self, square: Square) -> SquareTerms:
        """`SquareTerms` of ``square``, worked out once per square (`weigh`)."""
        terms = self._square_terms.get(square)
        if terms is None:
            self.weigh([square])
            terms = self._square_terms[square]
        return terms

    def weigh(self, squares: Iterable[Square]) -> None:
        """Work out the `SquareTerms` of every square of ``squares`` not yet known,
        in one pass over the enemies paid attention to (enemy by enemy: a move
        weighs a hundred squares or more against the same few enemies)."""
        known_terms = self._square_terms
        todo = [square for square in squares if square not in known_terms]
        if not todo:
            return
        state, grid, sees, smoke, gun = self.state, self.grid, self.sees, self.smoke, self.gun
        lines, work_out = self.walls.known, self.walls.work_out  # `Grid.line_of_sight`, remembered both ways
        facing = self.cover.facing  # `Grid.cover_facing`
        covered = [square in grid.cover_at for square in todo]
        count = len(todo)
        nearest: list[int | None] = [None] * count
        chance = [0.0] * count
        cover = [0.0] * count
        watching: list[list[str] | None] = [None] * count
        if gun is not None:
            normal_ft, maximum_ft = gun.range
            square_ft = state.terrain.square_size
            bands = self._range_bands  # by distance in squares
            known_odds = self.odds  # looked up here first: asked for every enemy seen from every square
        for watcher in self.watchers:
            there = watcher.at
            tx, ty = there
            enemy, lane_reach, enemy_covered = watcher.enemy, watcher.lane_reach, watcher.covered
            enemy_id = enemy.id
            for index, square in enumerate(todo):
                sx, sy = square
                away = max(abs(sx - tx), abs(sy - ty))
                closest = nearest[index]
                if closest is None or away < closest:
                    nearest[index] = away
                seen = lines.get((sx, sy, tx, ty))
                if seen is None:
                    seen = work_out(square, there)
                if not seen:
                    continue  # a wall between: neither sees the other (sight is symmetric)
                hazy = smoke and not sees(there, square)  # walls clear, smoke on the line
                # The enemy sees the square: the cover on it counts, and so may the enemy's fire lane.
                if not hazy:
                    cover_here = facing(square, there)[1] if covered[index] else "none"
                    cover[index] += cover_rank(cover_here) - 1.0
                    if lane_reach is not None and away <= lane_reach and cover_here == "none":
                        found = watching[index]
                        if found is None:
                            watching[index] = [enemy_id]
                        else:
                            found.append(enemy_id)
                # The shot from the square at the enemy.
                if gun is not None:
                    band = bands.get(away)
                    if band is None:
                        band = bands[away] = range_band(away * square_ft, normal_ft, maximum_ft)
                    if band != "out":
                        feature = facing(there, square)[0] if enemy_covered else None
                        feature_there = feature.level if feature is not None else None
                        odds = known_odds.get((enemy_id, band, feature_there, hazy))
                        if odds is None:
                            odds = self.shot_odds(enemy, gun, band, feature_there, through_smoke=hazy)
                        if odds > chance[index]:
                            chance[index] = odds
        for index, square in enumerate(todo):
            found = watching[index]
            known_terms[square] = SquareTerms(nearest[index], chance[index], cover[index], covered[index], frozenset(found) if found else NO_WATCHERS)

    def lanes_crossed(self, path: list[Square]) -> set[str]:
        """Enemies with their Reaction left whose fire lane some step of ``path`` enters."""
        crossed: set[str] = set()
        known = self._square_terms
        for step in path:
            watchers = (known.get(step) or self.square_terms(step)).lane_watchers
            if watchers:
                crossed |= watchers
        return crossed


# ---------------------------------------------------------------- movement


def reachable(state: EncounterState, me: BoltAndBladeCombatant, budget: float, survey: Survey | None = None) -> dict[Square, tuple[float, list[Square]]]:
    """The squares a move within ``budget`` ft may end on (and the start), each
    with its cost and the path a move by destination takes there: the move
    options' (`paths.cheapest_paths`)."""
    survey = survey or Survey(state, me)
    start = tuple(me.position)  # type: ignore[arg-type]
    taken = end_taken(state, besides=me.id)  # anyone's, standing or down: never the end of a move
    return {square: found for square, found in survey.paths(budget).items() if square == start or square not in taken}


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
        score -= 0.35 * nearest  # type: ignore[operator]  # no fair shot from here: close in
    if in_cover:
        score += 0.3
    return score - 0.01 * len(path)


def best_move(state: EncounterState, me: BoltAndBladeCombatant, budget: float, survey: Survey | None = None) -> tuple[Square, float] | None:
    """The best square within ``budget`` ft to move to and its score, or None to stay."""
    if budget < state.terrain.square_size or me.movement_halted:
        return None
    survey = survey or Survey(state, me)
    options = reachable(state, me, budget, survey)
    survey.weigh(survey.paths(budget))  # every square a path to a destination enters, at once
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
    return best, best_score


# ---------------------------------------------------------------- turn


def grenade_throw(state: EncounterState, me: BoltAndBladeCombatant) -> BBThrow | None:
    grenade = me.weapon("frag grenade")
    if grenade is None or me.ammo.get(grenade.name, 0) <= 0:
        return None
    here: Square = me.position  # type: ignore[assignment]
    enemies = combat.standing_enemies(state, me.id)
    friends = None
    for enemy in enemies:
        point: Square = enemy.position  # type: ignore[assignment]
        if distance(here, point) * state.terrain.square_size > grenade.range[0] or not combat.sees(state, here, point):
            continue
        if friends is None:
            friends = [c for c in state.combatants.values() if c.side == me.side and not c.out_of_fight]
        if any(distance(f.position, point) <= 2 for f in friends):  # type: ignore[arg-type]
            continue
        caught = [e for e in enemies if distance(e.position, point) <= 2]  # type: ignore[arg-type]
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
    """The visible square within range nearest the nearest enemy (then lowest y, x)."""
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
    sees = combat.sight_test(state)
    best: tuple[int, int, int, Square] | None = None
    # Only the squares within reach can qualify: the box around ``here``, row by row.
    for y in range(max(0, here[1] - reach), min(state.terrain.height, here[1] + reach + 1)):
        for x in range(max(0, here[0] - reach), min(state.terrain.width, here[0] + reach + 1)):
            square = (x, y)
            key = (distance(square, nearest.position), y, x, square)  # type: ignore[arg-type]
            if best is not None and key >= best:
                continue
            if not grid.passable(square) or not sees(here, square):
                continue
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
        no_shot = estimate_from(state, me, walked[0] if walked else me.position, survey) < ANY_SHOT  # type: ignore[arg-type]
        if no_shot and not me.action_used and PINNED not in me.conditions:
            dashed = best_move(state, me, movement_left(me) + me.movement_ft, survey)
            if dashed is not None and (walked is None or dashed[1] > walked[1] + 0.5):
                return BBMove(command_id=command_id, actor=combatant, to=dashed[0], mode="dash")
        if walked is not None:
            return BBMove(command_id=command_id, actor=combatant, to=walked[0])
    if not me.action_used:
        # Poor odds: pin them down with a burst or heavy weapon, or watch their approach.
        area = suppress_target(state, me)
        if area is not None and shot_command(state, me, GOOD_SHOT, survey) is None:
            return BBSuppress(command_id=command_id, actor=combatant, area=area, weapon=me.ready_weapon)
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
