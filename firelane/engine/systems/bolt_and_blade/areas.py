"""Bolt & Blade area effects: templates, friendly fire, scatter, zones, line of effect.

Rule IDs BB-CMB-24..28. The main Bolt & Blade system plugs this module in: its
state holds ``zones: list[PersistentZone]``, it lists ``AREA_COMMANDS`` and
``AREA_EVENTS`` among its types, merges ``AREA_DEFAULT_SETTINGS`` into its
settings, sends the area commands to `decide_area_command`, area events to
`evolve_area_event`, and calls the round/turn/move hooks below. Everything this
module needs from the system is named in `AreaHost`.

What happens (see docs/systems/bolt-and-blade-areas.md for the full text):

- **Templates (BB-CMB-24, 28).** Frag and smoke grenades are a Burst at a point,
  a flamer a Cone from the wielder, a krak grenade a single target (an ordinary
  ranged attack through the system's ``resolve_weapon_attack``, with the Return
  Fire and Dive for Cover windows of any ranged attack on one creature, BB-CMB-14,
  -17; no blast, no scatter); psychic area powers use the template in their data. Shapes are drawn
  by `firelane.engine.templates`.
- **Preview and friendly fire (BB-CMB-24).** `BBPreviewArea` emits
  `BBAreaPreviewed`: who the template would catch, with allies (the user counts
  as one) and neutrals flagged. Friendly fire is allowed; the flags are also
  recorded on the `BBThrown`/`BBAreaResolved` events. House default
  ``bb_friendly_fire_confirmation`` (True): a throw or area attack whose aimed
  template catches allies or neutrals is refused, naming them, unless the
  command says ``confirm_friendly_fire=True`` — the warning of the text, and
  nothing stops the confirmed throw. An item with the ``no_friendly_fire``
  trait refuses outright when allies would be caught.
- **Scatter (BB-CMB-25).** House default: a throw is a ranged attack roll, d20 +
  the thrower's ranged attack bonus against DC ``bb_throw_dc`` (10); natural 1
  always misses, natural 20 always lands (BB-CORE-14); beyond normal range it has
  Disadvantage (BB-CORE-11). A miss drifts ``bb_scatter_dice`` (1d6) x
  ``bb_scatter_step_ft`` (5 ft) in the direction of a d8 (1 = north, clockwise),
  stopping on the last open square before a wall or the map edge. Placed charges
  and point-targeted powers (everything that is not thrown) never scatter.
- **Resolution (BB-CMB-24, 27).** Saves and damage resolve at the final point:
  the damage is rolled once per blast; every standing combatant in a template
  square the blast reaches (no wall between the point and the square) makes the
  item's save (Agility DC 13 for frag and flamer) and takes half damage, rounded
  down, on a success. Combatants in the template but behind a wall are listed
  as shielded.
- **Line of effect (BB-CMB-27).** Placement needs sight of the point from the
  user: no wall between them, and (house default ``bb_placement_through_smoke``
  False) no sight-blocking zone either. The blast's own reach is traced from
  the point, walls only (smoke does not stop a blast).
- **Persistent zones (BB-CMB-26).** An item with a ``zone`` (smoke: 3 rounds,
  blocks sight) leaves a `PersistentZone` on the squares its blast reached.
  Zones count down at the start of each round: a zone made in round R with N
  rounds lasts through round R + N - 1 and clears as round R + N starts. A
  combatant that starts its turn in a damaging zone, or enters one during a move,
  makes the zone's save and takes its damage — at most once per zone per turn
  (the first time it enters on a turn, or as it starts its turn there). Smoke
  blocks sight through and into its squares (`sight_blocked_by_zones`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

import msgspec

from firelane.engine.core import Decision, Rejected, require
from firelane.engine.dice import Dice
from firelane.engine.grid import Square, distance
from firelane.engine.state import Combatant, EncounterState
from firelane.engine.systems.bolt_and_blade.rules import d20_notes, parse_dice, roll_d20
from firelane.engine.systems.bolt_and_blade.sight import grid_of, wall_sight
# The zone record and the sight it blocks live a floor below (`zones`); they
# are named here too, where the area module's callers have always found them.
from firelane.engine.systems.bolt_and_blade.zones import PersistentZone, line_touches, sight_blocked_by_zones, sight_blocking_squares
from firelane.events import codec
from firelane.engine.templates import (
    COMPASS_NAMES,
    D8_DIRECTIONS,
    Template,
    TemplateError,
    draw,
    drift,
    feet_to_squares,
    split_by_line_of_effect,
)
from firelane.engine.systems.bolt_and_blade.area_schemas import (
    BB_AREA_COMMANDS,
    BB_AREA_EVENTS,
    BBAreaAttack,
    BBAreaPreviewed,
    BBAreaResolved,
    BBPreviewArea,
    BBScattered,
    BBThrow,
    BBThrown,
    BBZoneCreated,
    BBZoneEntered,
    BBZoneExpired,
    BBZoneTicked,
    CaughtCombatant,
)
from firelane.events.options_schemas import AreaPreview, CaughtInArea
from firelane.events.schemas import Command, Event, Modifier, Roll, TestRolled


AREA_COMMANDS: tuple[type[Command], ...] = BB_AREA_COMMANDS
AREA_EVENTS: tuple[type[Event], ...] = BB_AREA_EVENTS

# House defaults, merged into the Bolt & Blade system's default_settings; every
# one is configurable per encounter through EncounterSetup.settings.
AREA_DEFAULT_SETTINGS: dict[str, Any] = {
    "bb_throw_dc": 10,  # BB-CMB-25: a throw that misses this DC scatters
    "bb_scatter_dice": "1d6",  # BB-CMB-25: drift steps
    "bb_scatter_step_ft": 5,  # BB-CMB-25: feet per drift step
    "bb_friendly_fire_confirmation": True,  # BB-CMB-24: catching allies/neutrals needs confirm_friendly_fire
    "bb_neutral_sides": ["neutral"],  # BB-CMB-24: sides flagged as neutrals
    "bb_placement_through_smoke": False,  # BB-CMB-27: smoke blocks the sight placement needs
}

NO_FRIENDLY_FIRE = "no_friendly_fire"
THROWN = "thrown"
SINGLE_TARGET = "single_target"


# ---------------------------------------------------------------- what the system provides


class AreaHost(Protocol):
    """The parts of the Bolt & Blade system this module calls."""

    def spend_action(self, decision: Decision, combatant_id: str, slot: str = "action", *, action: str = "use wargear", rule: str = "BB-CORE-16", details: dict[str, Any] | None = None) -> None: ...

    def roll_save(self, decision: Decision, combatant_id: str, attribute: str, dc: int, dice: Dice, *, rule: str, purpose: str) -> TestRolled: ...

    def roll_damage(self, decision: Decision, expression: str, dice: Dice, *, modifiers: list[Modifier], rule: str, purpose: str) -> Roll: ...

    def apply_damage(self, decision: Decision, target_id: str, amount: int, *, source: str, roll: Roll | None, rule: str) -> Any: ...

    def resolve_weapon_attack(self, decision: Decision, attacker_id: str, target_id: str, weapon_name: str, dice: Dice, *, kind: str = "attack") -> Any: ...

    def area_item(self, state: EncounterState, combatant_id: str, name: str) -> Mapping[str, Any] | None:
        """The data of a weapon or power the combatant carries, or None."""
        ...

    def throw_modifiers(self, state: EncounterState, combatant_id: str, item_name: str) -> list[Modifier]:
        """The ranged attack bonus terms for throwing this item (ability, proficiency...)."""
        ...

    def attack_advantage(self, state: EncounterState, combatant_id: str) -> tuple[list[str], list[str]]:
        """(advantage sources, disadvantage sources) on the combatant's next attack roll."""
        ...

    def consume_item(self, decision: Decision, combatant_id: str, item_name: str) -> None:
        """Spend one use of a limited item (a grenade); raise Rejected if none is left."""
        ...


# ---------------------------------------------------------------- item profiles


class ZoneSpec(msgspec.Struct, frozen=True, kw_only=True):
    kind: str
    rounds: int
    blocks_sight: bool = False
    damage: str = ""
    save_attribute: str = ""
    save_dc: int = 0
    save_half: bool = True


class AreaProfile(msgspec.Struct, frozen=True, kw_only=True):
    """What an item does as an area effect, read from its data (`area_profile`)."""

    name: str
    shape: str  # "burst", "cone", "line", "single"
    size_ft: float = 0.0  # burst radius, cone or line length
    range_normal_ft: float | None = None
    range_max_ft: float | None = None
    damage: str = ""
    save_attribute: str = ""
    save_dc: int = 0
    save_half: bool = True
    thrown: bool = False
    zone: ZoneSpec | None = None
    traits: tuple[str, ...] = ()
    kind: str = ""  # the item's kind: "thrown", "ranged", "power"...

    @property
    def point_targeted(self) -> bool:
        """Placed at a point away from the user (burst, single) rather than drawn from the user."""
        return self.shape in ("burst", "single")


def _parse_range(value: Any) -> tuple[float | None, float | None]:
    if value in (None, "", 0):
        return None, None
    if isinstance(value, (int, float)):
        return float(value), float(value)
    if isinstance(value, (list, tuple)):
        return float(value[0]), float(value[-1])
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(?:/\s*(\d+(?:\.\d+)?))?\s*(?:ft)?\s*", str(value))
    if match is None:
        raise ValueError(f"cannot read range {value!r} (use '30/60')")
    normal = float(match.group(1))
    return normal, float(match.group(2) or normal)


ZONE_KIND_TRAITS: tuple[tuple[str, str], ...] = (
    ("smoke", "smoke"),
    ("gas", "gas"),
    ("toxin", "gas"),
    ("flame", "fire"),
    ("fire", "fire"),
    ("incendiary", "fire"),
)


def _zone_kind(traits: Iterable[str]) -> str:
    names = set(traits)
    for trait, kind in ZONE_KIND_TRAITS:
        if trait in names:
            return kind
    return "hazard"


def _save_fields(save: Any) -> tuple[str, int, bool]:
    if not save:
        return "", 0, True
    return str(save.get("attribute", "")).lower(), int(save.get("dc", 0)), bool(save.get("half", True))


def area_profile(name: str, item: Mapping[str, Any]) -> AreaProfile | None:
    """Read an item's area effect from its Bolt & Blade data, or None if it has none.

    The data (firelane/engine/systems/bolt_and_blade/sample_data.json): ``template`` (``{"shape":
    "burst"|"cone"|"line", "size_ft": 10}``, or the short ``"burst 10"``; null
    for no template), ``range`` ([normal, maximum] ft or "30/60"), ``damage``
    ("2d6"), ``save`` (``{"attribute": "agility", "dc": 13, "half": true}``),
    ``kind`` "thrown" (it scatters, BB-CMB-25), ``traits`` ("single_target": a
    shaped charge; "no_friendly_fire"; "smoke"/"flame"/"gas" name a zone's
    kind), ``persistent_rounds`` and ``blocks_sight`` (a lingering zone that
    deals the item's damage and save to whoever enters or starts a turn
    inside, BB-CMB-26). A full ``zone`` object (kind, rounds, blocks_sight,
    damage, save) overrides the zone read from those fields.
    """
    traits = tuple(str(t).lower() for t in item.get("traits", ()) or ())
    kind = str(item.get("kind", "")).lower()
    thrown = kind == "thrown" or THROWN in traits
    area = item.get("area") or item.get("template")
    if isinstance(area, str):
        parts = area.split()
        area = {"shape": parts[0], "size_ft": float(parts[1]) if len(parts) > 1 else 0.0}
    if area:
        shape = str(area.get("shape", "")).lower()
        size = float(area.get("size_ft", area.get("radius_ft", area.get("length_ft", area.get("size", 0)))))
    elif SINGLE_TARGET in traits:
        shape, size = "single", 0.0
    else:
        return None
    normal, maximum = _parse_range(item.get("range"))
    save_attribute, save_dc, save_half = _save_fields(item.get("save"))
    damage = str(item.get("damage", "") or "")
    zone: ZoneSpec | None = None
    zone_data = item.get("zone")
    if zone_data:
        zone_attribute, zone_dc, zone_half = _save_fields(zone_data.get("save"))
        zone = ZoneSpec(
            kind=str(zone_data.get("kind", _zone_kind(traits))),
            rounds=int(zone_data.get("rounds", 1)),
            blocks_sight=bool(zone_data.get("blocks_sight", False)),
            damage=str(zone_data.get("damage", "") or ""),
            save_attribute=zone_attribute,
            save_dc=zone_dc,
            save_half=zone_half,
        )
    elif int(item.get("persistent_rounds", 0) or 0) > 0:
        zone = ZoneSpec(
            kind=_zone_kind(traits),
            rounds=int(item["persistent_rounds"]),
            blocks_sight=bool(item.get("blocks_sight", False)),
            damage=damage,
            save_attribute=save_attribute,
            save_dc=save_dc,
            save_half=save_half,
        )
    return AreaProfile(
        name=name,
        shape=shape,
        size_ft=size,
        range_normal_ft=normal,
        range_max_ft=maximum,
        damage=damage,
        save_attribute=save_attribute,
        save_dc=save_dc,
        save_half=save_half,
        thrown=thrown,
        zone=zone,
        traits=traits,
        kind=kind,
    )


def require_profile(system: AreaHost, state: EncounterState, combatant_id: str, name: str) -> AreaProfile:
    item = system.area_item(state, combatant_id, name)
    require(item is not None, f"{combatant_id} does not carry {name!r}")
    try:
        profile = area_profile(name, item)  # type: ignore[arg-type]
    except (ValueError, TypeError) as exc:
        raise Rejected(f"{name!r} has unreadable area data: {exc}") from None
    require(profile is not None, f"{name!r} is not an area weapon or power")
    return profile  # type: ignore[return-value]


# ---------------------------------------------------------------- relations and sight


def relation(state: EncounterState, actor: str, other: str) -> str:
    """How ``other`` stands to ``actor``: "self", "ally", "neutral" or "enemy"."""
    if other == actor:
        return "self"
    them = state.combatants[other]
    if them.side in set(state.settings.get("bb_neutral_sides", AREA_DEFAULT_SETTINGS["bb_neutral_sides"])):
        return "neutral"
    return "ally" if them.side == state.combatants[actor].side else "enemy"


def placement_visible(state: EncounterState, user: Square, point: Square) -> bool:
    """BB-CMB-27: whether the user sees the point a template is placed at."""
    if not wall_sight(state).clear(user, point):  # `Grid.line_of_sight`
        return False
    if state.settings.get("bb_placement_through_smoke", AREA_DEFAULT_SETTINGS["bb_placement_through_smoke"]):
        return True
    return not sight_blocked_by_zones(state, user, point)


# ---------------------------------------------------------------- templates in play


class Footprint(msgspec.Struct, frozen=True, kw_only=True):
    """A template placed on the map: the squares its effect reaches and who is in them."""

    template: Template
    reached: list[Square]
    shielded: list[Square]
    caught: list[CaughtCombatant]
    blocked: list[str]

    def flagged(self, *relations: str) -> list[str]:
        return [c.combatant for c in self.caught if c.relation in relations]


def draw_for(state: EncounterState, profile: AreaProfile, user: Square, point: Square | None, direction: tuple[int, int] | None) -> Template:
    """The template ``profile`` makes when used from ``user`` at ``point`` / towards ``direction``."""
    square_size = state.terrain.square_size
    size = feet_to_squares(profile.size_ft, square_size)
    try:
        if profile.point_targeted:
            if point is None:
                raise Rejected(f"{profile.name} needs a target point")
            return draw(profile.shape, point, size)
        if point is not None:
            return draw(profile.shape, user, size, point)
        if direction is None:
            raise Rejected(f"{profile.name} needs a target point or a direction")
        return draw(profile.shape, user, size, direction, towards_is_point=False)
    except TemplateError as exc:
        raise Rejected(f"{profile.name}: {exc}") from None


def footprint(state: EncounterState, actor: str, template: Template) -> Footprint:
    """Who a template at its place catches (line of effect from its source) and who a wall shields."""
    grid = grid_of(state)
    reached, shielded = split_by_line_of_effect(grid, template.source, template.squares)
    reached_set, shielded_set = set(reached), set(shielded)
    caught: list[CaughtCombatant] = []
    blocked: list[str] = []
    for cid in sorted(state.combatants):
        combatant = state.combatants[cid]
        if combatant.out_of_fight or combatant.position is None:
            continue
        square = tuple(combatant.position)
        if square in reached_set:
            caught.append(CaughtCombatant(combatant=cid, square=square, relation=relation(state, actor, cid)))  # type: ignore[arg-type]
        elif square in shielded_set:
            blocked.append(cid)
    return Footprint(template=template, reached=reached, shielded=shielded, caught=caught, blocked=blocked)


# ---------------------------------------------------------------- dice helpers


def half_damage(amount: int) -> int:
    """Half damage on a successful save, rounded down (the d20 convention)."""
    return amount // 2


def roll_throw(
    state: EncounterState,
    actor: str,
    profile: AreaProfile,
    modifiers: list[Modifier],
    advantage: list[str],
    disadvantage: list[str],
    dice: Dice,
) -> Roll:
    """BB-CMB-25 house default: d20 + ranged attack bonus vs DC ``bb_throw_dc``.

    Advantage and Disadvantage follow BB-CORE-05 (any of both cancel); natural
    1 misses and natural 20 lands (BB-CORE-14).
    """
    dc = int(state.settings.get("bb_throw_dc", AREA_DEFAULT_SETTINGS["bb_throw_dc"]))
    d20 = roll_d20(dice, advantage, disadvantage)
    notes = d20_notes(d20)
    natural = d20.natural
    total = natural + sum(m.value for m in modifiers)
    if natural == 1:
        success = False
        notes.append("natural 1: the throw goes wide (BB-CORE-14)")
    elif natural == 20:
        success = True
        notes.append("natural 20: the throw lands on the mark")
    else:
        success = total >= dc
    return Roll(
        purpose=f"throw {profile.name}",
        rule="BB-CMB-25",
        dice=d20.dice,
        modifiers=modifiers,
        total=total,
        kept=[d20.kept],
        target=dc,
        compare=">=",
        success=success,
        notes=notes,
        details={"natural": natural, "mode": d20.mode, "dc": dc},
    )


def roll_scatter(state: EncounterState, dice: Dice) -> tuple[Roll, tuple[int, int], int, float]:
    """BB-CMB-25: roll the drift; returns (roll, direction vector, squares, feet).

    The roll adds up from its parts: its total is the number of drift steps,
    the distance dice (kept) plus the expression's bonus (a modifier); the d8
    only points the way (listed, not counted). The feet are those steps times
    ``bb_scatter_step_ft``, recorded beside it (`BBScattered.distance_ft`)."""
    try:
        expression = parse_dice(str(state.settings.get("bb_scatter_dice", AREA_DEFAULT_SETTINGS["bb_scatter_dice"])))
    except ValueError as exc:
        raise Rejected(f"setting bb_scatter_dice: {exc}") from None
    step_ft = float(state.settings.get("bb_scatter_step_ft", AREA_DEFAULT_SETTINGS["bb_scatter_step_ft"]))
    distance_dice = dice.roll_many(expression.count, expression.sides) if expression.count else []
    direction_die = dice.roll(8)
    rolled = sum(d.face for d in distance_dice) + expression.bonus
    steps = max(0, rolled)
    modifiers = []
    if expression.bonus:
        modifiers.append(Modifier(source=f"{expression} bonus", rule="BB-CMB-25", value=expression.bonus))
    if steps != rolled:  # a negative bonus cannot pull the grenade back past the point aimed at
        modifiers.append(Modifier(source="drift is never negative", rule="BB-CMB-25", value=steps - rolled))
    count = len(distance_dice)
    feet = steps * step_ft
    squares = feet_to_squares(feet, state.terrain.square_size)
    vector = D8_DIRECTIONS[direction_die.face - 1]
    roll = Roll(
        purpose="scatter",
        rule="BB-CMB-25",
        dice=[*distance_dice, direction_die],
        modifiers=modifiers,
        total=steps,
        kept=list(range(count)),
        none_kept=count == 0,
        notes=[f"drifts {steps} x {step_ft:g} ft = {feet:g} ft {COMPASS_NAMES[vector]} (d8 {direction_die.face})"],
        details={"steps": steps, "step_ft": step_ft, "feet": feet, "squares": squares, "direction": COMPASS_NAMES[vector], "d8": direction_die.face},
    )
    return roll, vector, squares, feet


def upcast_scattered_v1(body: dict[str, Any]) -> dict[str, Any]:
    """`BBScattered` schema 1 -> 2: schema 1's roll total was the distance in
    feet (d6:3 d8:3 = 15), not a sum of its parts. The feet move to
    ``distance_ft``; the roll's total becomes its kept dice (the drift steps:
    schema 1 recorded no bonus, so a drift bonus of a non-default
    ``bb_scatter_dice`` is not recoverable and is said so in a note)."""
    roll = dict(body["roll"])
    body = {**body, "distance_ft": float(roll["total"])}
    dice = roll.get("dice", [])
    kept = roll.get("kept") or list(range(len(dice)))
    faces = [die[1] if isinstance(die, list) else die["face"] for die in dice]
    roll["total"] = sum(faces[i] for i in kept if 0 <= i < len(faces))
    roll["notes"] = [*roll.get("notes", []), "recorded under schema 1: total recomputed as the kept dice; the feet are in distance_ft"]
    body["roll"] = roll
    return body


codec.register_upcaster("BBScattered", 1, upcast_scattered_v1)


# ---------------------------------------------------------------- deciding commands


def decide_area_command(system: AreaHost, decision: Decision, command: Command, dice: Dice) -> None:
    """Validate and resolve a `BBThrow`, `BBAreaAttack` or `BBPreviewArea`."""
    state = decision.state
    actor = command.actor
    user = _require_acting(state, actor)
    if isinstance(command, BBPreviewArea):
        _preview(system, decision, command, user)
    elif isinstance(command, BBThrow):
        _throw(system, decision, command, user, dice)
    elif isinstance(command, BBAreaAttack):
        _area_attack(system, decision, command, user, dice)
    else:
        raise Rejected(f"{type(command).__name__} is not an area command")


def _require_acting(state: EncounterState, actor: str) -> Combatant:
    user = state.combatants.get(actor)
    if user is None:
        raise Rejected(f"unknown combatant {actor!r}")
    require(state.active == actor, f"it is not {actor}'s turn (active: {state.active})")
    require(not user.out_of_fight, f"{actor} is out of the fight")
    require(user.position is not None, f"{actor} is not on the map")
    return user


def validate_point(state: EncounterState, profile: AreaProfile, user: Combatant, point: Square) -> None:
    """Range and placement sight for a template placed at ``point`` (BB-CMB-27, BB-CORE-11)."""
    grid = grid_of(state)
    point = (int(point[0]), int(point[1]))
    require(grid.in_bounds(point), f"{point} is off the map")
    require(point not in grid.walls, f"{point} is a wall")
    origin: Square = tuple(user.position)  # type: ignore[arg-type, assignment]
    if profile.range_max_ft is not None:
        feet = grid.distance_units(origin, point)
        require(
            feet <= profile.range_max_ft,
            f"{point} is {feet:g} ft away, beyond {profile.name}'s maximum range of {profile.range_max_ft:g} ft",
        )
    require(placement_visible(state, origin, point), f"{user.id} cannot see {point} to place {profile.name} (BB-CMB-27)")


def aimed_footprint(state: EncounterState, profile: AreaProfile, user: Combatant, point: Square | None, direction: tuple[int, int] | None) -> Footprint:
    if point is not None:
        point = (int(point[0]), int(point[1]))
        if profile.point_targeted:
            validate_point(state, profile, user, point)
        else:
            require(point != tuple(user.position), f"{profile.name} needs a point other than {user.id}'s own square")  # type: ignore[arg-type]
    template = draw_for(state, profile, tuple(user.position), point, direction)  # type: ignore[arg-type]
    return footprint(state, user.id, template)


def _check_friendly_fire(state: EncounterState, profile: AreaProfile, aimed: Footprint, confirmed: bool) -> None:
    """BB-CMB-24: friendly fire is allowed, unless the item forbids it; house default: confirm it."""
    allies = aimed.flagged("ally", "self")
    neutrals = aimed.flagged("neutral")
    if NO_FRIENDLY_FIRE in profile.traits and allies:
        raise Rejected(f"{profile.name} forbids friendly fire and would catch {', '.join(allies)} (BB-CMB-24)")
    needs_confirmation = bool(state.settings.get("bb_friendly_fire_confirmation", AREA_DEFAULT_SETTINGS["bb_friendly_fire_confirmation"]))
    if needs_confirmation and (allies or neutrals) and not confirmed:
        caught = ", ".join([*(f"{a} (ally)" for a in allies), *(f"{n} (neutral)" for n in neutrals)])
        raise Rejected(f"{profile.name} would catch {caught}; send confirm_friendly_fire=true to use it anyway (BB-CMB-24)")


def _spend_action(system: AreaHost, decision: Decision, actor: str, profile: AreaProfile) -> None:
    """The Action an area use costs: an attack with a weapon or grenade, Use Power for a power."""
    action = "use power" if profile.kind == "power" else "attack"
    system.spend_action(decision, actor, "action", action=action, details={"item": profile.name, "shape": profile.shape})


def _preview(system: AreaHost, decision: Decision, command: BBPreviewArea, user: Combatant) -> None:
    state = decision.state
    profile = require_profile(system, state, user.id, command.weapon)
    aimed = aimed_footprint(state, profile, user, command.target, command.direction)
    decision.emit(
        BBAreaPreviewed(
            combatant=user.id,
            weapon=profile.name,
            shape=profile.shape,
            origin=aimed.template.source,
            squares=aimed.reached,
            caught=aimed.caught,
            allies_caught=aimed.flagged("ally", "self"),
            neutrals_caught=aimed.flagged("neutral"),
            blocked=aimed.blocked,
        )
    )


def preview_area(system: AreaHost, state: EncounterState, command: Command) -> AreaPreview:
    """BB-CMB-24 for the table: the template a `BBThrow` or `BBAreaAttack`
    would place where it is aimed (before any scatter) and who it catches,
    allies flagged, from the same footprint `BBPreviewArea` reports."""
    if not isinstance(command, (BBThrow, BBAreaAttack)):
        raise Rejected(f"{type(command).__name__} is not an area command")
    user = _require_acting(state, command.actor)
    profile = require_profile(system, state, user.id, command.weapon)
    if isinstance(command, BBThrow):
        require(profile.thrown, f"{profile.name} is not thrown; use BBAreaAttack")
        aimed = aimed_footprint(state, profile, user, command.target, None)
    else:
        require(not profile.thrown, f"{profile.name} is thrown; use BBThrow")
        aimed = aimed_footprint(state, profile, user, command.target, command.direction)
    neutrals = aimed.flagged("neutral")
    return AreaPreview(
        command=type(command).__struct_config__.tag, shape=profile.shape, origin=aimed.template.source,
        squares=aimed.reached, allies_caught=aimed.flagged("ally", "self"), blocked=aimed.blocked, rule="BB-CMB-24",
        caught=[CaughtInArea(combatant=c.combatant, square=c.square, relation=c.relation) for c in aimed.caught],
        notes=[f"neutrals caught: {', '.join(neutrals)}"] if neutrals else [],
    )


def _throw(system: AreaHost, decision: Decision, command: BBThrow, user: Combatant, dice: Dice) -> None:
    state = decision.state
    profile = require_profile(system, state, user.id, command.weapon)
    require(profile.thrown, f"{profile.name} is not thrown; use BBAreaAttack")
    require(profile.point_targeted, f"{profile.name} is a {profile.shape}; use BBAreaAttack")
    point: Square = (int(command.target[0]), int(command.target[1]))
    if profile.shape == "single":
        _throw_single_target(system, decision, profile, user, point, dice)
        return
    _spend_action(system, decision, user.id, profile)
    system.consume_item(decision, user.id, profile.name)
    aimed = aimed_footprint(state, profile, user, point, None)
    _check_friendly_fire(state, profile, aimed, command.confirm_friendly_fire)
    advantage, disadvantage = system.attack_advantage(decision.state, user.id)
    disadvantage = list(disadvantage)
    if profile.range_normal_ft is not None:
        feet = grid_of(state).distance_units(tuple(user.position), point)  # type: ignore[arg-type]
        if feet > profile.range_normal_ft:
            disadvantage.append(f"beyond normal range ({feet:g} ft > {profile.range_normal_ft:g} ft, BB-CORE-11)")
    throw = roll_throw(decision.state, user.id, profile, system.throw_modifiers(decision.state, user.id, profile.name), list(advantage), disadvantage, dice)
    decision.emit(
        BBThrown(
            combatant=user.id,
            weapon=profile.name,
            aimed=point,
            roll=throw,
            on_target=bool(throw.success),
            allies_caught=aimed.flagged("ally", "self"),
            neutrals_caught=aimed.flagged("neutral"),
        )
    )
    landed = point
    if not throw.success:
        scatter, vector, squares, feet = roll_scatter(decision.state, dice)
        landed = drift(grid_of(decision.state), point, vector, squares)
        decision.emit(
            BBScattered(
                combatant=user.id,
                weapon=profile.name,
                aimed=point,
                landed=landed,
                direction=vector,
                distance_squares=distance(point, landed),
                roll=scatter,
                distance_ft=feet,
            )
        )
    final = footprint(decision.state, user.id, draw_for(decision.state, profile, tuple(user.position), landed, None))  # type: ignore[arg-type]
    detonate(system, decision, user.id, profile, final, dice)


def _throw_single_target(system: AreaHost, decision: Decision, profile: AreaProfile, user: Combatant, point: Square, dice: Dice) -> None:
    """BB-CMB-28: a krak grenade is a shaped charge: an ordinary ranged attack on the creature there."""
    state = decision.state
    _spend_action(system, decision, user.id, profile)
    system.consume_item(decision, user.id, profile.name)
    validate_point(state, profile, user, point)
    targets = [c.id for c in state.combatants.values() if not c.out_of_fight and c.position is not None and tuple(c.position) == point]
    require(bool(targets), f"no creature at {point} for {profile.name}: it is a single-target charge (BB-CMB-28)")
    require(targets[0] != user.id, f"{user.id} cannot target itself with {profile.name}")
    system.resolve_weapon_attack(decision, user.id, targets[0], profile.name, dice, kind="attack")


def _area_attack(system: AreaHost, decision: Decision, command: BBAreaAttack, user: Combatant, dice: Dice) -> None:
    state = decision.state
    profile = require_profile(system, state, user.id, command.weapon)
    require(not profile.thrown, f"{profile.name} is thrown; use BBThrow")
    require(profile.shape != "single", f"{profile.name} has no area; attack with it normally")
    _spend_action(system, decision, user.id, profile)
    system.consume_item(decision, user.id, profile.name)
    aimed = aimed_footprint(state, profile, user, command.target, command.direction)
    _check_friendly_fire(state, profile, aimed, command.confirm_friendly_fire)
    # Placed and point-targeted effects never scatter (BB-CMB-25): they go off where aimed.
    final = footprint(decision.state, user.id, aimed.template)
    detonate(system, decision, user.id, profile, final, dice)


# ---------------------------------------------------------------- resolution


def detonate(system: AreaHost, decision: Decision, actor: str, profile: AreaProfile, final: Footprint, dice: Dice) -> None:
    """Saves and damage at the final point (BB-CMB-24), then any lingering zone (BB-CMB-26)."""
    damage: Roll | None = None
    if profile.damage:
        damage = system.roll_damage(decision, profile.damage, dice, modifiers=[], rule="BB-CMB-24", purpose=f"{profile.name} blast damage")
    decision.emit(
        BBAreaResolved(
            combatant=actor,
            weapon=profile.name,
            shape=profile.shape,
            origin=final.template.source,
            squares=final.reached,
            caught=final.caught,
            blocked=final.blocked,
            damage=damage,
            allies_caught=final.flagged("ally", "self"),
            neutrals_caught=final.flagged("neutral"),
            details={"shielded_squares": final.shielded},
        )
    )
    if damage is not None:
        for caught in final.caught:
            _harm(system, decision, caught.combatant, damage, profile.save_attribute, profile.save_dc, profile.save_half, source=actor, what=profile.name, rule="BB-CMB-24", dice=dice)
    if profile.zone is not None and final.reached:
        spec = profile.zone
        decision.emit(
            BBZoneCreated(
                zone=f"{spec.kind}-{actor}-v{decision.state.version}",
                kind=spec.kind,
                squares=list(final.reached),
                rounds_left=spec.rounds,
                creator=actor,
                blocks_sight=spec.blocks_sight,
                damage=spec.damage,
                save_attribute=spec.save_attribute,
                save_dc=spec.save_dc,
                save_half=spec.save_half,
                source=profile.name,
            )
        )


def _harm(
    system: AreaHost,
    decision: Decision,
    target: str,
    damage: Roll,
    save_attribute: str,
    save_dc: int,
    save_half: bool,
    *,
    source: str,
    what: str,
    rule: str,
    dice: Dice,
) -> None:
    """One creature's save against an area's damage, then the damage it takes."""
    if decision.state.combatants[target].out_of_fight:
        return  # already down (e.g. by an earlier zone this move): nothing left to hurt
    amount = damage.total
    if save_attribute and save_dc:
        save = system.roll_save(decision, target, save_attribute, save_dc, dice, rule=rule, purpose=f"{save_attribute.title()} save against {what}")
        if save.success:
            amount = half_damage(amount) if save_half else 0
    if amount > 0:
        system.apply_damage(decision, target, amount, source=source, roll=damage, rule=rule)


# ---------------------------------------------------------------- zones over time


def on_round_start(system: AreaHost, decision: Decision, dice: Dice) -> None:
    """BB-CMB-26: every zone counts down one round as a round starts; at zero it clears."""
    for zone in list(getattr(decision.state, "zones", [])):
        left = zone.rounds_left - 1
        if left <= 0:
            decision.emit(BBZoneExpired(zone=zone.id, reason=f"{zone.kind} clears at the start of round {decision.state.round}"))
        else:
            decision.emit(BBZoneTicked(zone=zone.id, rounds_left=left))


def _damaging_zones(state: EncounterState) -> list[PersistentZone]:
    return [zone for zone in getattr(state, "zones", []) if zone.damage]


def current_turn(state: EncounterState) -> str:
    """The key of the turn being played, "r<round>:<active>"."""
    return f"r{state.round}:{state.active or '-'}"


def on_turn_start(system: AreaHost, decision: Decision, combatant_id: str, dice: Dice) -> None:
    """BB-CMB-26: a combatant starting its turn inside a damaging zone is affected by it."""
    combatant = decision.state.combatants[combatant_id]
    if combatant.out_of_fight or combatant.position is None:
        return
    here = tuple(combatant.position)
    for zone in _damaging_zones(decision.state):
        if here in {tuple(s) for s in zone.squares}:
            _zone_affects(system, decision, zone.id, combatant_id, "turn_start", dice)


def on_enter_squares(system: AreaHost, decision: Decision, combatant_id: str, squares: Iterable[Square], dice: Dice) -> None:
    """BB-CMB-26: a combatant entering a damaging zone is affected.

    At most once per zone per turn: the first time it enters the zone on a turn,
    unless the zone already affected it this turn (it started the turn inside).
    The host may call this for a whole path or square by square.
    """
    path = [tuple(s) for s in squares]
    for zone in _damaging_zones(decision.state):
        inside = {tuple(s) for s in zone.squares}
        if any(square in inside for square in path):
            _zone_affects(system, decision, zone.id, combatant_id, "enter", dice)


def _zone_affects(system: AreaHost, decision: Decision, zone_id: str, combatant_id: str, trigger: str, dice: Dice) -> None:
    state = decision.state
    zone = next((z for z in getattr(state, "zones", []) if z.id == zone_id), None)
    turn = current_turn(state)
    if zone is None or state.combatants[combatant_id].out_of_fight or zone.affected.get(combatant_id) == turn:
        return
    decision.emit(BBZoneEntered(zone=zone.id, combatant=combatant_id, trigger=trigger, turn=turn))
    damage = system.roll_damage(decision, zone.damage, dice, modifiers=[], rule="BB-CMB-26", purpose=f"{zone.kind} zone damage")
    _harm(system, decision, combatant_id, damage, zone.save_attribute, zone.save_dc, zone.save_half, source=zone.creator, what=f"{zone.kind} ({zone.source or zone.id})", rule="BB-CMB-26", dice=dice)


# ---------------------------------------------------------------- evolve


def evolve_area_event(system: Any, state: EncounterState, event: Event) -> None:
    """Apply the area events that change state (zones); the others are records."""
    zones: list[PersistentZone] = state.zones  # type: ignore[attr-defined]
    if isinstance(event, BBZoneCreated):
        zones.append(
            PersistentZone(
                id=event.zone,
                kind=event.kind,
                squares=[tuple(s) for s in event.squares],  # type: ignore[misc]
                rounds_left=event.rounds_left,
                creator=event.creator,
                blocks_sight=event.blocks_sight,
                damage=event.damage,
                save_attribute=event.save_attribute,
                save_dc=event.save_dc,
                save_half=event.save_half,
                source=event.source,
            )
        )
    elif isinstance(event, BBZoneTicked):
        for zone in zones:
            if zone.id == event.zone:
                zone.rounds_left = event.rounds_left
    elif isinstance(event, BBZoneExpired):
        zones[:] = [zone for zone in zones if zone.id != event.zone]
    elif isinstance(event, BBZoneEntered):
        for zone in zones:
            if zone.id == event.zone:
                zone.affected[event.combatant] = event.turn


# ---------------------------------------------------------------- AI


def _uses_left(combatant: Combatant, item_name: str) -> int | None:
    """Uses left of a limited item from the sheet's ammunition, or None when unlimited."""
    ammo = getattr(combatant, "ammo", None) or getattr(combatant, "carried", None)
    if not isinstance(ammo, dict) or item_name not in ammo:
        return None
    return int(ammo[item_name])


def choose_area_command(system: AreaHost, state: EncounterState, combatant_id: str, command_id: str, *, min_enemies: int = 2) -> Command | None:
    """A deterministic AI choice of an area attack worth making now, or None.

    Considers every area item the combatant carries with uses left: a thrown
    burst aimed at each standing enemy's square (in range and in sight), an area
    weapon's template aimed at each enemy (cones from the wielder). A choice
    must catch at least ``min_enemies`` enemies (one for a cone: the flamer is
    its wielder's main weapon) and no ally, neutral or the user itself, before
    any scatter. The best catches the most enemies, then is nearest, then has
    the smallest point. Smoke and single-target charges are left to the
    system's own AI. Pure: no dice, the same state gives the same choice.
    """
    me = state.combatants[combatant_id]
    if me.out_of_fight or me.position is None or getattr(me, "action_used", False):
        return None
    origin: Square = tuple(me.position)  # type: ignore[assignment]
    enemies = sorted(
        (c for c in state.combatants.values() if not c.out_of_fight and c.position is not None and relation(state, combatant_id, c.id) == "enemy"),
        key=lambda c: (distance(origin, tuple(c.position)), c.id),  # type: ignore[arg-type]
    )
    best: tuple[tuple[int, int, Square], Command] | None = None
    for item_name in _area_item_names(system, state, combatant_id):
        item = system.area_item(state, combatant_id, item_name)
        profile = area_profile(item_name, item) if item is not None else None
        if profile is None or profile.shape == "single" or (profile.zone is not None and not profile.damage):
            continue
        left = _uses_left(me, item_name)
        if left is not None and left <= 0:
            continue
        needed = 1 if profile.shape in ("cone", "line") else min_enemies
        for enemy in enemies:
            point: Square = tuple(enemy.position)  # type: ignore[assignment]
            try:
                aimed = aimed_footprint(state, profile, me, point, None)
            except Rejected:
                continue
            if aimed.flagged("ally", "self", "neutral"):
                continue
            caught = len(aimed.flagged("enemy"))
            if caught < needed:
                continue
            key = (-caught, distance(origin, point), point)
            if best is not None and key >= best[0]:
                continue
            if profile.thrown:
                command: Command = BBThrow(command_id=command_id, actor=combatant_id, target=point, weapon=item_name)
            else:
                command = BBAreaAttack(command_id=command_id, actor=combatant_id, weapon=item_name, target=point)
            best = (key, command)
    return best[1] if best is not None else None


def _area_item_names(system: AreaHost, state: EncounterState, combatant_id: str) -> list[str]:
    """Names of the weapons and powers on the combatant's sheet, in sheet order."""
    combatant = state.combatants[combatant_id]
    names: list[str] = []
    for entry in [*getattr(combatant, "weapons", []), *getattr(combatant, "powers", [])]:
        name = entry if isinstance(entry, str) else getattr(entry, "name", None)
        if isinstance(name, str) and name not in names:
            names.append(name)
    return names
