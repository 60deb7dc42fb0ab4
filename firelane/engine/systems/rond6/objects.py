"""RonD6 breaking objects (R6-25): object Toughness and structural damage.

An object is attacked like any target: an Attack Test against the object's
Defense, then the Damage Total against its Damage Resistance Total. If the
Damage Total equals or exceeds it, the object suffers one level of structural
damage per Result Point of the attack.

House defaults (configurable per encounter via ``EncounterSetup.settings``):

* ``object_toughness_mode`` = ``"static"``: an object's Damage Resistance Total
  is its Toughness die code x 4 (+ pips), the same static rule R6-20 uses for
  characters' Base Toughness; ``"roll"`` rolls the Toughness dice instead
  (without a Wild Die).
* ``object_defense`` = ``"very easy"`` (5): the Defense of an object that does
  not name one (an unattended door or wall does not dodge).
* ``object_min_damage_levels`` = 1: an object that is damaged (Damage Total >=
  DR Total) takes at least one level even if the attack had no Result Points.
* ``objects`` = []: the breakable objects of an encounter (`ObjectProfile`
  dicts: id, name, construction, square, optional defense/toughness/structure).
  Any wall Space of the map can be attacked as ``"wall@x,y"``; its
  construction is ``wall_construction`` = ``"sturdy"`` (a brick wall, 3D).
* ``object_structure_levels`` = 3: an object with that many levels of
  structural damage is destroyed; a destroyed wall Space is removed from the
  map (it no longer blocks movement or sight). The text leaves the effect of
  each level to the GM; this is the engine's default.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from firelane.engine.core import Decision, Rejected, require
from firelane.engine.dice import Dice
from firelane.engine.grid import Grid, distance
from firelane.engine.systems.rond6 import rolling, rules
from firelane.engine.systems.rond6.movement import require_acting
from firelane.engine.systems.rond6.pools import DieCode, as_code, difficulty, roll_pool, state_store
from firelane.engine.systems.rond6.aux_schemas import R6BreakObject, R6ObjectDamaged
from firelane.events.schemas import Modifier, StateAdjusted

RULE_OBJECTS = "R6-25"

OBJECT_TOUGHNESS: dict[str, DieCode] = {
    "flimsy": DieCode(1),  # thatch, thin wooden door
    "tough": DieCode(2),  # hardwood door, most weapons
    "sturdy": DieCode(3),  # brick wall, reinforced interior door
    "very sturdy": DieCode(4),  # castle gate, heavy metal door
    "reinforced": DieCode(6),  # fortifications, vault door, jail cell
}
TOUGHNESS_MULTIPLIER = 4


class ObjectProfile(msgspec.Struct, frozen=True, kw_only=True):
    """An object on the map that can be attacked: what it is made of and where."""

    id: str
    name: str
    construction: str = "tough"
    square: tuple[int, int] | None = None
    defense: int | None = None  # None: the house default object_defense
    toughness: str | None = None  # a die code overriding the construction's (GM modification)
    structure_levels: int | None = None  # None: the house default object_structure_levels


def object_toughness(construction: str, override: str | None = None) -> DieCode:
    """R6-25: the Toughness of a construction (Flimsy 1D ... Reinforced 6D), or the GM's override."""
    if override:
        return as_code(override)
    key = " ".join(construction.strip().lower().replace("_", " ").replace("-", " ").split())
    if key not in OBJECT_TOUGHNESS:
        raise ValueError(f"unknown construction {construction!r}; known: {', '.join(OBJECT_TOUGHNESS)}")
    return OBJECT_TOUGHNESS[key]


def static_toughness(code: DieCode) -> int:
    """Static Damage Resistance Total of a Toughness code: dice x 4 + pips (house default)."""
    return code.dice * TOUGHNESS_MULTIPLIER + code.pips


def structural_damage(damage_total: int, resistance_total: int, result_points: int, minimum: int = 1) -> int:
    """R6-25: levels of structural damage: none below the DR Total, else one per Result Point
    (at least ``minimum``, the house default 1)."""
    if damage_total < resistance_total:
        return 0
    return max(minimum, result_points)


def object_settings(settings: Mapping[str, Any]) -> dict[str, Any]:
    return {key: settings.get(key, value) for key, value in OBJECT_DEFAULTS.items()}


OBJECT_DEFAULTS: dict[str, Any] = {
    "objects": [],
    "wall_construction": "sturdy",
    "object_toughness_mode": "static",
    "object_defense": "very easy",
    "object_min_damage_levels": 1,
    "object_structure_levels": 3,
}


# ======================================================================= decisions

WALL_PREFIX = "wall@"


def wall_id(square: tuple[int, int]) -> str:
    return f"{WALL_PREFIX}{square[0]},{square[1]}"


def find_object(state: Any, target: str) -> ObjectProfile:
    """The object an attack names: from the encounter's ``objects`` setting, or a wall Space."""
    for raw in state.settings.get("objects", []):
        profile = raw if isinstance(raw, ObjectProfile) else msgspec.convert(raw, ObjectProfile)
        if profile.id == target:
            return profile
    if target.startswith(WALL_PREFIX):
        try:
            x, y = (int(part) for part in target[len(WALL_PREFIX):].split(","))
        except ValueError:
            raise Rejected(f"a wall target is written 'wall@x,y', not {target!r}") from None
        require((x, y) in Grid(state.terrain).walls, f"there is no wall at ({x}, {y})")
        construction = object_settings(state.settings)["wall_construction"]
        return ObjectProfile(id=target, name=f"wall at ({x}, {y})", construction=construction, square=(x, y))
    known = [str(o.get("id") if isinstance(o, Mapping) else o.id) for o in state.settings.get("objects", [])]
    raise Rejected(f"unknown object {target!r}; objects here: {', '.join(known) or 'none'}, or wall@x,y")


def require_weapon_ready(combatant: Any, weapon: Any) -> None:
    """A weapon must be in hand (R6-37: readying one is an action); unarmed always is."""
    if weapon.kind != "unarmed" and combatant.readied:
        require(weapon.id in combatant.readied, f"{weapon.name or weapon.id} is not in hand; ready it first (R6-37)")
    if weapon.capacity:
        require(combatant.ammo.get(weapon.id, 0) > 0, f"{weapon.name or weapon.id} is out of ammunition; reload it (R6-37)")


def spend_round(decision: Decision, combatant_id: str, weapon: Any, rule: str) -> None:
    """One round (or the one grenade) of a weapon with a capacity is used."""
    if not weapon.capacity:
        return
    combatant = decision.state.combatants[combatant_id]
    ammo = dict(combatant.ammo)
    ammo[weapon.id] = max(0, ammo.get(weapon.id, 0) - 1)
    decision.emit(StateAdjusted(combatant=combatant_id, changes={"ammo": ammo}, reason=f"fired {weapon.name or weapon.id}", rule=rule))


def decide_break_object(system: Any, decision: Decision, command: R6BreakObject, dice: Dice) -> None:
    """R6-25: an attack on an object; structural damage by Result Points."""
    state = decision.state
    attacker = require_acting(system, state, command.actor)
    profile = find_object(state, command.target)
    config = object_settings(state.settings)
    damage_so_far = int(state_store(state).get("objects", {}).get(profile.id, 0))
    structure = profile.structure_levels or int(config["object_structure_levels"])
    require(damage_so_far < structure, f"{profile.name} is already destroyed")
    weapon = system.weapon(attacker, command.weapon)
    require_weapon_ready(attacker, weapon)
    flat = []
    if profile.square is not None:
        square = tuple(profile.square)
        gap = distance(attacker.position, square)
        if weapon.kind in ("melee", "unarmed"):
            require(gap <= max(1, weapon.reach), f"{profile.name} is {gap} Spaces away, beyond {weapon.name or weapon.id}'s reach ({weapon.reach})")
        else:
            band = rules.range_band(gap, weapon.ranges) if weapon.ranges else ("point_blank" if gap <= 1 else None)
            require(band is not None, f"{profile.name} is {gap} Spaces away, beyond {weapon.name or weapon.id}'s Long range")
            require(Grid(state.terrain).line_of_sight(attacker.position, square), f"no line of sight to {profile.name}")
            if rules.RANGE_MODIFIER[band]:
                flat.append(Modifier(source=f"range: {band.replace('_', ' ')}", rule=rules.R_RANGE, value=rules.RANGE_MODIFIER[band]))
    defense = profile.defense if profile.defense is not None else difficulty(config["object_defense"], settings=state.settings)
    toughness = object_toughness(profile.construction, profile.toughness)  # validated before any roll
    penalty = system.spend_action(decision, attacker.id, "action", action="break_object", rule=RULE_OBJECTS)
    spend_round(decision, attacker.id, weapon, RULE_OBJECTS)
    attacker = decision.state.combatants[attacker.id]
    attack = rolling.roll_test(
        dice, state.settings, attacker, weapon.skill, purpose=f"attack {profile.name}", rule=RULE_OBJECTS,
        target=defense, action_penalty=penalty, flat=flat, details={"weapon": weapon.id, "object": profile.id},
    )
    hit = bool(attack.success)
    event = R6ObjectDamaged(
        attacker=attacker.id, target=profile.id, name=profile.name, weapon=weapon.id, attack=attack, hit=hit,
        total_levels=damage_so_far, structure_levels=structure,
        square=tuple(profile.square) if profile.square is not None else None,  # type: ignore[arg-type]
    )
    if hit:
        damage = rolling.roll_damage(dice, state.settings, attacker, weapon, rule=RULE_OBJECTS)
        resistance_roll = None
        if config["object_toughness_mode"] == "roll":
            resistance_roll = roll_pool(dice, toughness, purpose=f"toughness of {profile.name}", rule=RULE_OBJECTS, wild=False)
            resistance = resistance_roll.total
        else:
            resistance = static_toughness(toughness)
        points = int(attack.details.get("result_points", 0))
        levels = structural_damage(damage.total, resistance, points, int(config["object_min_damage_levels"]))
        total = damage_so_far + levels
        event = msgspec.structs.replace(
            event, damage=damage, resistance=resistance, resistance_roll=resistance_roll,
            levels=levels, total_levels=total, destroyed=total >= structure,
        )
    decision.emit(event)


def _on_object_damaged(state: Any, event: R6ObjectDamaged) -> None:
    if not event.levels:
        return
    state_store(state).setdefault("objects", {})[event.target] = event.total_levels
    if event.destroyed and event.square is not None:
        square = tuple(event.square)
        terrain = state.terrain
        state.terrain = msgspec.structs.replace(
            terrain,
            walls=[w for w in terrain.walls if (w.x, w.y) != square],
            cover=[c for c in terrain.cover if (c.x, c.y) != square],
        )


EVOLVERS: dict[type, Any] = {R6ObjectDamaged: _on_object_damaged}
