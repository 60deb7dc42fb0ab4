"""RonD6 area shapes (R6-40 bursts, R6-41 cones): pure geometry on the square grid.

* Burst (R6-40): the target Space and every Space within the radius: Small 1,
  Medium 3, Large 6, Huge 12. **House default:** "within" uses the grid's
  distance (diagonals count one Space, `firelane.engine.grid.distance`), so a
  Small Burst is the 3x3 block around the target Space.
* Cone (R6-41): starts in the Space adjacent to the attacker in the chosen
  facing (one of 8 directions) and extends Small 3, Medium 6, Large 9, Huge 12
  Spaces. Its row at distance ``d`` from the attacker is 3 Spaces wide for
  d 1-3, 5 for 4-6, 7 for 7-9 and 9 for 10-12, centred on the facing's axis. For
  a diagonal facing the row is the L-shaped run of Spaces at grid distance
  ``d`` centred on the diagonal Space, so every row has exactly the table's
  width (**house default** template). The attacker's own Space is never in it.
* **House default** (``area_walls_block``): walls block area effects — a Space
  is affected only when the burst's centre (or the cone's attacker) has line of
  sight to it (`Grid.line_of_sight`); wall Spaces themselves are never affected.
  Spaces off the map are dropped.

* ``area_damage_roll`` = ``"once"``: one damage roll for every target the
  attack hits (``"each"``: one per target).
* An area attack is one Action and one attack test (the weapon's skill, with
  the range modifier to the burst's target Space; none for a cone), compared
  with each affected combatant's Defense as the main system computes it
  (`combat.defense_value`: a standing Active Defense that covers the weapon's
  kind, else Passive Defense, R6-15, with its modifiers; **cover is measured
  from the burst's target Space**, or from the cone's attacker). The text's
  "every character within the area is affected" applies to those the test
  beats — friend and foe alike, and the attacker itself inside its own burst.
  Damage goes through the main system's damage rules (R6-19..23).
* A weapon is an area weapon when its profile's ``area`` is ``"burst:<size>"``
  or ``"cone:<size>"`` (or, for sheets without that field, such an entry in its
  ``modes``).

Facing names: ``n``/``north`` is -y (the top of the map), ``s`` +y, ``e`` +x,
``w`` -x, and the diagonals ``ne``, ``se``, ``sw``, ``nw``.
"""

from __future__ import annotations

from typing import Any

import msgspec

from firelane.engine.core import Decision, Rejected, require
from firelane.engine.dice import Dice
from firelane.engine.grid import Grid, Square, direction, distance
from firelane.engine.core import next_command_id
from firelane.engine.systems.rond6 import combat, rolling, rules
from firelane.engine.systems.rond6.movement import require_acting
from firelane.engine.systems.rond6.objects import require_weapon_ready, spend_round
from firelane.events.options_schemas import AreaPreview, CaughtInArea
from firelane.engine.systems.rond6.aux_schemas import R6AreaAttack, R6AreaTargeted
from firelane.events.schemas import AttackResolved, Modifier

RULE_BURST = "R6-40"
RULE_CONE = "R6-41"

BURST_RADIUS: dict[str, int] = {"small": 1, "medium": 3, "large": 6, "huge": 12}
CONE_LENGTH: dict[str, int] = {"small": 3, "medium": 6, "large": 9, "huge": 12}
# Width of a cone's row by distance band: rows 1-3, 4-6, 7-9, 10-12.
CONE_WIDTHS: tuple[int, ...] = (3, 5, 7, 9)

FACINGS: dict[str, tuple[int, int]] = {
    "n": (0, -1),
    "ne": (1, -1),
    "e": (1, 0),
    "se": (1, 1),
    "s": (0, 1),
    "sw": (-1, 1),
    "w": (-1, 0),
    "nw": (-1, -1),
}
_FACING_ALIASES = {
    "north": "n", "northeast": "ne", "north-east": "ne", "east": "e", "southeast": "se",
    "south-east": "se", "south": "s", "southwest": "sw", "south-west": "sw", "west": "w",
    "northwest": "nw", "north-west": "nw",
}


def area_size(size: str, table: dict[str, int]) -> int:
    key = size.strip().lower()
    if key not in table:
        raise ValueError(f"unknown area size {size!r}; known: {', '.join(table)}")
    return table[key]


def facing_vector(facing: str | tuple[int, int] | list[int]) -> tuple[int, int]:
    """The unit grid vector of a facing name (``"ne"``, ``"north"``) or vector."""
    if isinstance(facing, str):
        key = facing.strip().lower()
        key = _FACING_ALIASES.get(key, key)
        if key not in FACINGS:
            raise ValueError(f"unknown facing {facing!r}; use one of {', '.join(FACINGS)}")
        return FACINGS[key]
    vector = (int(facing[0]), int(facing[1]))
    if vector == (0, 0) or max(abs(vector[0]), abs(vector[1])) != 1:
        raise ValueError(f"a facing vector has components -1, 0 or 1 and is not (0, 0): {facing!r}")
    return vector


def facing_name(vector: tuple[int, int]) -> str:
    for name, value in FACINGS.items():
        if value == vector:
            return name
    raise ValueError(f"not a facing vector: {vector!r}")


def facing_towards(origin: Square, square: Square) -> str:
    """The facing (of the 8) that points from ``origin`` towards ``square``."""
    if origin == square:
        raise ValueError("a facing needs a square other than the origin")
    return facing_name(direction(origin, square))


def cone_width(row: int) -> int:
    """R6-41: the width of the cone's row at ``row`` Spaces from the attacker (1-based)."""
    if row < 1:
        raise ValueError(f"cone rows start at 1, not {row}")
    band = (row - 1) // 3
    if band >= len(CONE_WIDTHS):
        raise ValueError(f"the largest cone is {3 * len(CONE_WIDTHS)} Spaces long; no row {row}")
    return CONE_WIDTHS[band]


def burst_squares(centre: Square, size: str) -> list[Square]:
    """R6-40: the target Space and every Space within the burst's radius (unclipped)."""
    radius = area_size(size, BURST_RADIUS)
    cx, cy = centre
    return [
        (cx + dx, cy + dy)
        for dy in range(-radius, radius + 1)
        for dx in range(-radius, radius + 1)
    ]


def cone_rows(attacker: Square, facing: str | tuple[int, int], size: str) -> list[list[Square]]:
    """R6-41: the cone's Spaces row by row, nearest row first (unclipped)."""
    length = area_size(size, CONE_LENGTH)
    fx, fy = facing_vector(facing)
    ax, ay = attacker
    rows: list[list[Square]] = []
    for row in range(1, length + 1):
        half = cone_width(row) // 2
        if fx == 0 or fy == 0:
            # Orthogonal: a straight row across the axis.
            px, py = -fy, fx  # perpendicular
            cx, cy = ax + fx * row, ay + fy * row
            rows.append([(cx + px * k, cy + py * k) for k in range(-half, half + 1)])
        else:
            # Diagonal: the corner Space at (row, row) and ``half`` Spaces along each arm.
            corner = (ax + fx * row, ay + fy * row)
            squares = [corner]
            for k in range(1, half + 1):
                squares.append((corner[0] - fx * k, corner[1]))
                squares.append((corner[0], corner[1] - fy * k))
            rows.append(sorted(squares))
    return rows


def cone_squares(attacker: Square, facing: str | tuple[int, int], size: str) -> list[Square]:
    """R6-41: every Space of the cone (unclipped); never the attacker's own Space."""
    return [square for row in cone_rows(attacker, facing, size) for square in row]


def clip_to_grid(squares: list[Square], grid: Grid, origin: Square, walls_block: bool) -> list[Square]:
    """Drop Spaces off the map, wall Spaces and (if ``walls_block``) Spaces the
    origin cannot see; keeps the order given."""
    kept = []
    for square in squares:
        if not grid.passable(square):
            continue
        if walls_block and square != origin and not grid.line_of_sight(origin, square):
            continue
        kept.append(square)
    return kept


def affected_burst(grid: Grid, centre: Square, size: str, *, walls_block: bool = True) -> list[Square]:
    return clip_to_grid(burst_squares(centre, size), grid, centre, walls_block)


def affected_cone(
    grid: Grid, attacker: Square, facing: str | tuple[int, int], size: str, *, walls_block: bool = True
) -> list[Square]:
    return clip_to_grid(cone_squares(attacker, facing, size), grid, attacker, walls_block)


def burst_radius_contains(centre: Square, size: str, square: Square) -> bool:
    return distance(centre, square) <= area_size(size, BURST_RADIUS)


def burst_catches(grid: Grid, centre: Square, size: str, square: Square, *, walls_block: bool = True) -> bool:
    """Whether ``square`` is one of `affected_burst`'s Spaces, without listing
    them all: within the radius, on the map and no wall, and (``walls_block``)
    seen from the centre. For the options, which ask it for a few occupied
    Spaces around many centres."""
    if not burst_radius_contains(centre, size, square) or not grid.passable(square):
        return False
    return not walls_block or square == centre or grid.line_of_sight(centre, square)


def burst_band(weapon: Any, gap: int) -> str | None:
    """R6-14: the range band of a burst's target Space ``gap`` Spaces away, or
    None when it is out of reach (beyond Long range; a weapon without ranges
    reaches Point Blank only)."""
    return rules.range_band(gap, weapon.ranges) if weapon.ranges else ("point_blank" if gap <= 1 else None)


# ======================================================================= decisions

AREA_DEFAULTS: dict[str, Any] = {"area_walls_block": True, "area_damage_roll": "once"}
AREA_SHAPES = ("burst", "cone")


def weapon_area(weapon: Any) -> tuple[str, str] | None:
    """(shape, size) of an area weapon, or None: from ``weapon.area`` or a
    ``"burst:medium"``-style entry in ``weapon.modes``."""
    candidates = [getattr(weapon, "area", "") or "", *getattr(weapon, "modes", [])]
    for text in candidates:
        shape, _, size = str(text).lower().partition(":")
        if shape in AREA_SHAPES and size:
            table = BURST_RADIUS if shape == "burst" else CONE_LENGTH
            if size not in table:
                raise Rejected(f"weapon {weapon.id!r} has an unknown {shape} size {size!r}; known: {', '.join(table)}")
            return shape, size
    return None


def plan_area_attack(system: Any, state: Any, command: R6AreaAttack) -> dict[str, Any]:
    """R6-40/41's checks and template for an area attack, before anything is
    spent or rolled: the weapon, the shape and size, the squares covered, who
    is in them, the range modifier. The attack (`decide_area_attack`) and the
    table's preview (`area_preview`) both take it from here."""
    attacker = require_acting(system, state, command.actor)
    weapon = system.weapon(attacker, command.weapon)
    area = weapon_area(weapon)
    require(area is not None, f"{weapon.name or weapon.id} is not an area weapon (no burst or cone profile)")
    shape, size = area  # type: ignore[misc]
    require_weapon_ready(attacker, weapon)
    grid = Grid(state.terrain)
    walls_block = bool(state.settings.get("area_walls_block", AREA_DEFAULTS["area_walls_block"]))
    origin: Square = tuple(attacker.position)  # type: ignore[assignment]
    flat: list[Modifier] = []
    center: Square | None = tuple(command.center) if command.center is not None else None  # type: ignore[assignment]
    facing = ""
    if shape == "burst":
        require(center is not None, f"a {size} burst needs a target Space (center)")
        require(grid.passable(center), f"the burst's target Space {center} is a wall or off the map")  # type: ignore[arg-type]
        gap = distance(origin, center)  # type: ignore[arg-type]
        band = burst_band(weapon, gap)
        require(band is not None, f"{center} is {gap} Spaces away, beyond {weapon.name or weapon.id}'s Long range")
        require(grid.line_of_sight(origin, center), f"no line of sight to {center}")  # type: ignore[arg-type]
        if rules.RANGE_MODIFIER[band]:  # type: ignore[index]
            flat.append(Modifier(source=f"range: {band.replace('_', ' ')}", rule=rules.R_RANGE, value=rules.RANGE_MODIFIER[band]))  # type: ignore[index,union-attr]
        squares = affected_burst(grid, center, size, walls_block=walls_block)  # type: ignore[arg-type]
        rule = RULE_BURST
    else:
        try:
            if command.facing:
                facing = facing_name(facing_vector(command.facing))
            else:
                require(center is not None and center != origin, "a cone needs a facing (or a Space to face)")
                facing = facing_towards(origin, center)  # type: ignore[arg-type]
        except ValueError as error:
            raise Rejected(str(error)) from None
        squares = affected_cone(grid, origin, facing, size, walls_block=walls_block)
        rule = RULE_CONE
    covered = set(squares)
    targets = sorted(
        c.id for c in state.combatants.values()
        if not c.out_of_fight and c.position is not None and tuple(c.position) in covered
        and not (shape == "cone" and c.id == attacker.id)
    )
    return {"attacker": attacker, "weapon": weapon, "shape": shape, "size": size, "origin": origin, "center": center,
            "facing": facing, "flat": flat, "squares": squares, "targets": targets, "rule": rule}


def area_preview(system: Any, state: Any, command: R6AreaAttack) -> AreaPreview:
    """The table's preview of an area attack: its template and whom it would
    catch (the attacker's side flagged), from `plan_area_attack`; nothing is
    spent or rolled."""
    plan = plan_area_attack(system, state, command)
    attacker = plan["attacker"]
    relation = {cid: ("self" if cid == attacker.id else "ally" if state.combatants[cid].side == attacker.side else "enemy")
                for cid in plan["targets"]}
    notes = [f"one attack test ({plan['weapon'].skill}) against each one caught; a hit rolls the weapon's damage"]
    if plan["flat"]:
        notes.append(", ".join(f"{m.value:+d} {m.source}" for m in plan["flat"]))
    return AreaPreview(
        command="R6AreaAttack", shape=plan["shape"],
        origin=plan["center"] if plan["shape"] == "burst" else plan["origin"],
        squares=[tuple(sq) for sq in plan["squares"]], rule=plan["rule"],  # type: ignore[misc]
        caught=[CaughtInArea(combatant=cid, square=tuple(state.combatants[cid].position), relation=relation[cid])  # type: ignore[arg-type]
                for cid in plan["targets"]],
        allies_caught=[cid for cid in plan["targets"] if relation[cid] != "enemy"],
        notes=notes,
    )


def decide_area_attack(system: Any, decision: Decision, command: R6AreaAttack, dice: Dice) -> None:
    """R6-40/41: one attack test against everyone in the burst or cone."""
    state = decision.state
    plan = plan_area_attack(system, state, command)
    attacker, weapon, shape, size = plan["attacker"], plan["weapon"], plan["shape"], plan["size"]
    flat, squares, targets, rule = plan["flat"], plan["squares"], plan["targets"], plan["rule"]
    center, facing = plan["center"], plan["facing"]
    penalty = system.spend_action(decision, attacker.id, "action", action=f"area_{shape}", rule=rule)
    spend_round(decision, attacker.id, weapon, rule)
    attacker = decision.state.combatants[attacker.id]
    attack = rolling.roll_test(
        dice, state.settings, attacker, weapon.skill, purpose=f"{size} {shape} ({weapon.name or weapon.id})",
        rule=rule, action_penalty=penalty, flat=flat, details={"weapon": weapon.id, "shape": shape, "size": size},
    )
    decision.emit(R6AreaTargeted(
        attacker=attacker.id, weapon=weapon.id, shape=shape, size=size, squares=squares, targets=targets,
        center=center, facing=facing, rule=rule,
    ))
    damage = None
    once = state.settings.get("area_damage_roll", AREA_DEFAULTS["area_damage_roll"]) == "once"
    # Cover is measured from the burst's target Space (the blast), or from the cone's attacker.
    blast = msgspec.structs.replace(attacker, position=center) if shape == "burst" else attacker
    for target_id in targets:
        if decision.state.ended:
            break
        target = decision.state.combatants[target_id]
        if target.out_of_fight:
            continue  # dropped by an earlier target's damage (cannot happen today; kept for safety)
        defense, explanation = combat.defense_value(system, decision.state, blast, target, weapon.kind, "area")
        hit = attack.total >= defense
        points = attack.total - defense if hit else 0
        roll = msgspec.structs.replace(attack, target=defense, success=hit, details={**attack.details, "result_points": points})
        decision.emit(AttackResolved(
            attacker=attacker.id, target=target_id, weapon=weapon.id, roll=roll, hit=hit, kind=f"area_{shape}",
            details={"shape": shape, "size": size, "result_points": points, "defense": explanation},
        ))
        if not hit:
            continue
        if damage is None or not once:
            damage = rolling.roll_damage(dice, state.settings, attacker, weapon, rule=rule)
        combat.apply_damage_total(system, decision, target_id, damage.total, source=attacker.id, roll=damage,
                                  rule=rule, stun=weapon.stun, dice=dice)


# ----------------------------------------------------------------------- AI helper


def area_targets(state: Any, squares: list[Square], exclude: str = "") -> list[Any]:
    covered = set(squares)
    return [
        c for c in state.combatants.values()
        if not c.out_of_fight and c.position is not None and tuple(c.position) in covered and c.id != exclude
    ]


def choose_area_attack(system: Any, state: Any, attacker_id: str, *, min_enemies: int = 1) -> R6AreaAttack | None:
    """The AI's best area attack, deterministically: the burst centre (on an
    enemy) or cone facing that catches the most enemies and none of its own
    side (nor itself), ties broken by fewer Spaces then position/facing order.
    None when no area weapon is ready or nothing worth hitting is in reach."""
    attacker = state.combatants[attacker_id]
    if attacker.position is None or attacker.out_of_fight:
        return None
    grid = Grid(state.terrain)
    walls_block = bool(state.settings.get("area_walls_block", AREA_DEFAULTS["area_walls_block"]))
    origin = tuple(attacker.position)
    best: tuple[Any, ...] | None = None
    for weapon in attacker.weapons:
        try:
            area = weapon_area(weapon)
            require_weapon_ready(attacker, weapon)
        except Rejected:
            continue
        if area is None:
            continue
        shape, size = area
        options: list[tuple[dict[str, Any], list[Square]]] = []
        if shape == "burst":
            for enemy in sorted(state.combatants.values(), key=lambda c: c.id):
                if enemy.side == attacker.side or enemy.out_of_fight or enemy.position is None:
                    continue
                centre = tuple(enemy.position)
                gap = distance(origin, centre)
                band = burst_band(weapon, gap)
                if band is None or not grid.line_of_sight(origin, centre):
                    continue
                options.append(({"center": centre}, affected_burst(grid, centre, size, walls_block=walls_block)))
        else:
            for facing in FACINGS:
                options.append(({"facing": facing}, affected_cone(grid, origin, facing, size, walls_block=walls_block)))
        for order, (aim, squares) in enumerate(options):
            caught = area_targets(state, squares, exclude=attacker_id if shape == "cone" else "")
            if any(c.side == attacker.side for c in caught):
                continue
            enemies = len(caught)
            if enemies < min_enemies:
                continue
            key = (-enemies, len(squares), weapon.id, order)
            if best is None or key < best[0]:
                best = (key, weapon.id, aim)
    if best is None:
        return None
    _, weapon_id, aim = best
    return R6AreaAttack(command_id=next_command_id(state, attacker_id), actor=attacker_id, weapon=weapon_id, **aim)


EVOLVERS: dict[type, Any] = {}
