"""Bolt & Blade area effects through the real system: BB-CMB-24..28.

Sheets from the sample data: the guard sergeant throws at +4 (Agility +2,
grenade proficiency +2, level 3); a cultist saves Agility at +3 (modifier +1,
proficient +2), has Vitality 10 and Defense 12 (10 + cult rags 1 + Agility 1);
a guardsman saves Agility at +1 and has Vitality 12.

Initiative is rolled in combatant-ID order; the fixed faces put the sergeant
first.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from firelane.engine.core import SEQUENCER
from firelane.engine.dice import FixedDice, SeededDice
from firelane.engine.simulate import run_headless
from firelane.engine.systems.bolt_and_blade import SYSTEM, demo_setup, load_data, sheet_from_template
from firelane.projections.audit import sum_problem
from firelane.engine.systems.bolt_and_blade.areas import PersistentZone, choose_area_command, sight_blocked_by_zones
from firelane.engine.systems.bolt_and_blade.area_schemas import (
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
)
from firelane.engine.systems.bolt_and_blade.schemas import BBMove
from firelane.engine.systems.bolt_and_blade.schemas import BBAttackRecomputed, BBExchangeResolved
from firelane.events.schemas import (
    ActionTaken,
    ClaimReaction,
    CoverFeature,
    EligibleReactor,
    PassReaction,
    ReactionWindowOpened,
    AttackResolved,
    CombatantDown,
    CombatantSetup,
    Command,
    CommandRejected,
    ConditionApplied,
    DamageDealt,
    EncounterSetup,
    EndTurn,
    StartEncounter,
    Terrain,
    Wall,
)
from firelane.events.schemas import TestRolled as SaveRolled

SERGEANT_KIT = ["bolt pistol", "frag grenade", "smoke grenade", "krak grenade", "flamer"]
SAFE_CHARGE = {**load_data()["weapons"]["frag grenade"], "name": "safe charge", "traits": ["grenade", "explosive", "area", "no_friendly_fire"]}
FIRE_BOMB = {
    **load_data()["weapons"]["frag grenade"],
    "name": "fire bomb",
    "damage": "1d4",
    "traits": ["grenade", "incendiary", "area"],
    "template": {"shape": "burst", "size_ft": 5},
    "save": {"attribute": "agility", "dc": 12, "half": True},
    "persistent_rounds": 2,
}
PSYCHIC_STORM = {
    "name": "psychic storm",
    "kind": "power",
    "range": [60, 60],
    "damage": "1d6",
    "traits": ["psychic", "area"],
    "template": {"shape": "burst", "size_ft": 5},
    "save": {"attribute": "willpower", "dc": 12, "half": False},
}


def member(cid: str, side: str, template: str, position: tuple[int, int], **sheet: Any) -> CombatantSetup:
    return CombatantSetup(id=cid, name=cid, side=side, position=position, sheet=sheet_from_template(template, **sheet))


def sergeant(position: tuple[int, int] = (5, 10), weapons: list[Any] = SERGEANT_KIT) -> CombatantSetup:  # noqa: B006 - read only
    first = weapons[0] if isinstance(weapons[0], str) else weapons[0]["name"]
    return member("sgt", "imperium", "guard sergeant", position, weapons=list(weapons), ready_weapon=first)


def cultists(*positions: tuple[int, int]) -> list[CombatantSetup]:
    return [member(f"c{i}", "cult", "cultist", p) for i, p in enumerate(positions, start=1)]


def start(combatants: list[CombatantSetup], walls: list[tuple[int, int]] = (), **setting: Any) -> Any:  # type: ignore[assignment]
    """Start an encounter with the sergeant acting first (initiative 20, everyone else 1)."""
    setup = EncounterSetup(
        system="bolt-and-blade",
        combatants=combatants,
        settings=setting,
        terrain=Terrain(width=20, height=20, walls=[Wall(x, y) for x, y in walls]),
    )
    faces = [20 if cid == "sgt" else 1 for cid in sorted(c.id for c in combatants)]
    state = SYSTEM.initial_state()
    for event in SYSTEM.decide(state, StartEncounter(command_id="s", actor=SEQUENCER, setup=setup, seed_commitment=""), FixedDice(faces)):
        SYSTEM.evolve(state, event)
    assert state.active == "sgt"
    return state


def play(state: Any, command: Command, faces: list[int] = ()) -> list[Any]:  # type: ignore[assignment]
    dice = FixedDice(faces)
    events = SYSTEM.decide_or_reject(state, command, dice)
    for event in events:
        SYSTEM.evolve(state, event)
    assert dice.remaining == 0, f"{dice.remaining} fixed faces were not rolled"
    return events


def only(events: list[Any], kind: type) -> Any:
    found = [e for e in events if isinstance(e, kind)]
    assert len(found) == 1, f"expected one {kind.__name__}, got {found}"
    return found[0]


def of(events: list[Any], kind: type) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def damage_taken(events: list[Any]) -> list[tuple[str, int]]:
    return [(d.target, d.amount) for d in of(events, DamageDealt)]


def throw(target: tuple[int, int], weapon: str = "frag grenade", **kw: Any) -> BBThrow:
    return BBThrow(command_id=f"throw {weapon} {target}", actor="sgt", target=target, weapon=weapon, **kw)


# ---------------------------------------------------------------- BB-CMB-24: templates, preview, friendly fire


def test_bb_cmb_24_frag_resolves_saves_and_damage_at_the_point() -> None:
    """BB-CMB-24: frag at (10,10): c1 and c2 caught, c3 (3 squares off) not; 2d6 once, Agility DC 13 for half."""
    state = start([sergeant(), *cultists((10, 10), (11, 11), (13, 10))])
    # throw 12 + 4 = 16 >= 10; damage 4 + 5 = 9; c1 saves 5 + 3 = 8 (fails), c2 15 + 3 = 18 (half: 4)
    events = play(state, throw((10, 10)), [12, 4, 5, 5, 15])
    thrown = only(events, BBThrown)
    assert (thrown.on_target, thrown.roll.total, thrown.roll.target, thrown.roll.rule) == (True, 16, 10, "BB-CMB-25")
    assert [(m.source, m.value) for m in thrown.roll.modifiers] == [("Agility modifier", 2), ("proficiency (grenade)", 2)]
    resolved = only(events, BBAreaResolved)
    assert (resolved.shape, resolved.origin, len(resolved.squares)) == ("burst", (10, 10), 25)
    assert [(c.combatant, c.relation) for c in resolved.caught] == [("c1", "enemy"), ("c2", "enemy")]
    assert resolved.damage.total == 9 and [d.face for d in resolved.damage.dice] == [4, 5]
    saves = of(events, SaveRolled)
    assert [(s.combatant, s.roll.total, s.roll.target, s.success) for s in saves] == [("c1", 8, 13, False), ("c2", 18, 13, True)]
    assert damage_taken(events) == [("c1", 9), ("c2", 4)]
    assert (state.combatants["c1"].vitality, state.combatants["c2"].vitality, state.combatants["c3"].vitality) == (1, 6, 10)
    assert state.combatants["sgt"].ammo["frag grenade"] == 1 and state.combatants["sgt"].action_used
    assert only(events, ActionTaken).action == "attack"


def test_bb_cmb_24_preview_lists_who_is_caught_and_flags_allies_and_neutrals() -> None:
    """BB-CMB-24: the preview flags the trooper (ally) and the civilian (neutral); it spends nothing."""
    state = start([
        sergeant(),
        member("trooper", "imperium", "guardsman", (9, 9)),
        member("civ", "neutral", "cultist", (10, 11)),
        *cultists((10, 10), (11, 11)),
    ])
    events = play(state, BBPreviewArea(command_id="p", actor="sgt", weapon="frag grenade", target=(10, 10)))
    preview = only(events, BBAreaPreviewed)
    assert [(c.combatant, c.relation) for c in preview.caught] == [
        ("c1", "enemy"), ("c2", "enemy"), ("civ", "neutral"), ("trooper", "ally"),
    ]
    assert (preview.allies_caught, preview.neutrals_caught, preview.rule) == (["trooper"], ["civ"], "BB-CMB-24")
    assert len(events) == 1 and not state.combatants["sgt"].action_used
    assert state.combatants["sgt"].ammo["frag grenade"] == 2


def test_bb_cmb_24_friendly_fire_is_allowed_once_confirmed_and_flagged() -> None:
    """BB-CMB-24: house default asks for confirmation; confirmed, the blast hits the ally too and the events flag it."""
    state = start([sergeant(), member("trooper", "imperium", "guardsman", (9, 9)), *cultists((10, 10))])
    events = play(state, throw((10, 10)))
    assert only(events, CommandRejected).reason == (
        "frag grenade would catch trooper (ally); send confirm_friendly_fire=true to use it anyway (BB-CMB-24)"
    )
    # throw 10 + 4; damage 3 + 3 = 6; c1 saves 2 + 3 (fails), trooper 2 + 1 (fails)
    events = play(state, throw((10, 10), confirm_friendly_fire=True), [10, 3, 3, 2, 2])
    assert only(events, BBThrown).allies_caught == ["trooper"]
    assert only(events, BBAreaResolved).allies_caught == ["trooper"]
    assert damage_taken(events) == [("c1", 6), ("trooper", 6)]
    assert state.combatants["trooper"].vitality == 12 - 6


def test_bb_cmb_24_the_thrower_caught_in_its_own_blast_is_friendly_fire() -> None:
    """BB-CMB-24: a burst on an adjacent enemy catches the thrower: flagged as an ally catch ("self")."""
    state = start([sergeant((5, 10)), *cultists((6, 10))], bb_friendly_fire_confirmation=False)
    events = play(state, BBPreviewArea(command_id="p", actor="sgt", weapon="frag grenade", target=(6, 10)))
    preview = only(events, BBAreaPreviewed)
    assert [(c.combatant, c.relation) for c in preview.caught] == [("c1", "enemy"), ("sgt", "self")]
    assert preview.allies_caught == ["sgt"]


def test_bb_cmb_24_without_the_confirmation_setting_nothing_stops_the_throw() -> None:
    """BB-CMB-24: bb_friendly_fire_confirmation=false: the throw goes at once; every save halves 2 damage to 1."""
    state = start([sergeant(), member("trooper", "imperium", "guardsman", (9, 9)), *cultists((10, 10))], bb_friendly_fire_confirmation=False)
    events = play(state, throw((10, 10)), [10, 1, 1, 20, 20])
    assert damage_taken(events) == [("c1", 1), ("trooper", 1)]


def test_bb_cmb_24_an_item_that_forbids_friendly_fire_refuses() -> None:
    """BB-CMB-24: the no_friendly_fire trait refuses when allies would be caught, confirmed or not."""
    state = start([sergeant(weapons=[SAFE_CHARGE]), member("trooper", "imperium", "guardsman", (8, 8)), *cultists((10, 10))])
    events = play(state, throw((10, 10), weapon="safe charge", confirm_friendly_fire=True))
    assert only(events, CommandRejected).reason == "safe charge forbids friendly fire and would catch trooper (BB-CMB-24)"
    # aimed at (11,11) it misses the trooper: throw 15, 1 + 1 = 2 damage, c1 saves 1 + 3 (fails)
    events = play(state, throw((11, 11), weapon="safe charge"), [15, 1, 1, 1])
    assert damage_taken(events) == [("c1", 2)]


def test_bb_cmb_24_bad_area_commands_are_refused_with_reasons() -> None:
    """BB-CMB-24: unknown item, wrong command, off the map, out of range, not your turn, twice a turn."""
    state = start([sergeant((8, 10)), *cultists((10, 10))])
    cases = [
        (BBAreaAttack(command_id="1", actor="sgt", weapon="flamer"), "flamer needs a target point or a direction"),
        (BBAreaAttack(command_id="2", actor="sgt", weapon="flamer", direction=(2, 0)), "flamer: direction (2, 0) is not one of the eight grid directions"),
        (BBAreaAttack(command_id="3", actor="sgt", weapon="frag grenade", target=(10, 10)), "frag grenade is thrown; use BBThrow"),
        (BBThrow(command_id="4", actor="sgt", weapon="flamer", target=(10, 10)), "flamer is not thrown; use BBAreaAttack"),
        (BBThrow(command_id="5", actor="sgt", weapon="bolt pistol", target=(10, 10)), "'bolt pistol' is not an area weapon or power"),
        (BBThrow(command_id="6", actor="sgt", weapon="plasma gun", target=(10, 10)), "sgt does not carry 'plasma gun'"),
        (BBThrow(command_id="7", actor="c1", weapon="frag grenade", target=(8, 10)), "it is not c1's turn (active: sgt)"),
        (BBThrow(command_id="8", actor="sgt", weapon="frag grenade", target=(8, 25)), "(8, 25) is off the map"),
        (BBThrow(command_id="9", actor="nobody", weapon="frag grenade", target=(8, 12)), "unknown combatant 'nobody'"),
    ]
    for command, reason in cases:
        assert only(play(state, command), CommandRejected).reason == reason
    assert state.rejected_commands == len(cases) and not state.combatants["sgt"].action_used
    play(state, BBAreaAttack(command_id="f", actor="sgt", weapon="flamer", direction=(1, 0)), [1, 1, 1])
    events = play(state, throw((10, 10)))
    assert only(events, CommandRejected).reason == "sgt has already used its Action this turn"


def test_bb_cmb_24_out_of_grenades_is_refused() -> None:
    """BB-CMB-24: each throw spends a grenade carried; with none left the throw is refused."""
    state = start([sergeant(), *cultists((10, 10))])
    state.combatants["sgt"].ammo["smoke grenade"] = 0
    assert only(play(state, throw((10, 10), weapon="smoke grenade")), CommandRejected).reason == "sgt has no smoke grenade left"


# ---------------------------------------------------------------- BB-CMB-25: scatter


def test_bb_cmb_25_a_poor_throw_scatters_and_detonates_where_it_lands() -> None:
    """BB-CMB-25: 3 + 4 = 7 < DC 10: drifts 1d6 = 3 (15 ft) east (d8 = 3) from (10,10) to (13,10)."""
    state = start([sergeant(), *cultists((10, 10), (11, 11), (13, 10))])
    # throw 3; scatter d6 3, d8 3; damage 2 + 2 = 4; c2 saves 1 + 3 (fails), c3 19 + 3 (half: 2)
    events = play(state, throw((10, 10)), [3, 3, 3, 2, 2, 1, 19])
    thrown = only(events, BBThrown)
    assert (thrown.on_target, thrown.roll.total, thrown.roll.success) == (False, 7, False)
    scattered = only(events, BBScattered)
    assert (scattered.aimed, scattered.landed, scattered.direction, scattered.distance_squares) == ((10, 10), (13, 10), (1, 0), 3)
    assert (scattered.roll.total, scattered.distance_ft) == (3, 15.0) and [d.sides for d in scattered.roll.dice] == [6, 8] and scattered.roll.details["direction"] == "E"
    assert sum_problem(scattered.roll) is None  # 3 drift steps: the d6 kept, the d8 only points the way
    resolved = only(events, BBAreaResolved)
    assert resolved.origin == (13, 10) and [c.combatant for c in resolved.caught] == ["c2", "c3"]
    assert damage_taken(events) == [("c2", 4), ("c3", 2)]
    assert state.combatants["c1"].vitality == 10


def test_bb_cmb_25_natural_one_scatters_and_natural_twenty_lands_whatever_the_dc() -> None:
    """BB-CMB-25: with bb_throw_dc 2 a natural 1 still scatters (2 squares SW); with DC 30 a natural 20 still lands."""
    state = start([sergeant(), *cultists((15, 15))], bb_throw_dc=2)
    events = play(state, throw((10, 10), weapon="smoke grenade"), [1, 2, 6])
    assert not only(events, BBThrown).on_target and only(events, BBScattered).landed == (8, 12)
    state = start([sergeant(), *cultists((15, 15))], bb_throw_dc=30)
    events = play(state, throw((10, 10), weapon="smoke grenade"), [20])
    assert only(events, BBThrown).on_target and not of(events, BBScattered)
    assert only(events, BBZoneCreated).squares[0] == (8, 8)


def test_bb_cmb_25_drift_stops_before_a_wall() -> None:
    """BB-CMB-25: 6 squares north from (10,10) with a wall at (10,7): lands on (10,8)."""
    state = start([sergeant(), *cultists((15, 15))], walls=[(10, 7)])
    events = play(state, throw((10, 10), weapon="smoke grenade"), [2, 6, 1])
    assert only(events, BBScattered).landed == (10, 8)


def test_bb_cmb_25_throwing_beyond_normal_range_or_while_pinned_has_disadvantage() -> None:
    """BB-CMB-25 with BB-CORE-11: 40 ft with a 30/60 grenade rolls two d20 and keeps the lower."""
    state = start([sergeant((2, 10)), *cultists((15, 15))])
    events = play(state, throw((10, 10), weapon="smoke grenade"), [15, 4, 1, 1])
    roll = only(events, BBThrown).roll
    assert [d.face for d in roll.dice] == [15, 4] and roll.kept == [1] and roll.total == 8 and not roll.success
    assert roll.details["mode"] == "disadvantage"
    state = start([sergeant(), *cultists((15, 15))])
    SYSTEM.evolve(state, ConditionApplied(combatant="sgt", condition="pinned", rule="BB-CMB-19"))
    roll = only(play(state, throw((10, 10), weapon="smoke grenade"), [3, 12, 1, 1]), BBThrown).roll
    assert roll.kept == [0] and roll.total == 7 and "attacker is Pinned (BB-CMB-19)" in roll.notes[0]


def test_bb_cmb_16_a_frag_throw_with_an_enemy_in_melee_reach_has_disadvantage() -> None:
    """BB-CMB-16: a ranged attack with an enemy within your melee reach has Disadvantage, and a
    frag throw is one (a ranged attack roll against the throw DC), as a krak throw is: with c1
    beside the sergeant, two d20 (15, 8) keep the lower: 8 + 4 = 12, still on target."""
    state = start([sergeant(), *cultists((6, 10), (10, 10), (11, 11))])
    events = play(state, throw((10, 10)), [15, 8, 4, 5, 5, 15])
    roll = only(events, BBThrown).roll
    assert [d.face for d in roll.dice] == [15, 8] and roll.kept == [1] and roll.total == 12 and roll.success
    assert roll.details["mode"] == "disadvantage" and "ranged attack with an enemy in melee reach (BB-CMB-16)" in roll.notes[0]
    state = start([sergeant(), *cultists((6, 10), (10, 10))])
    asked = only(play(state, throw((10, 10), weapon="krak grenade")), ReactionWindowOpened)  # c2 may Return Fire first (BB-CMB-14)
    attack = only(play(state, PassReaction(command_id="p", actor="c2", window=asked.window), [10, 1]), AttackResolved)
    assert attack.roll.details["disadvantage"] == ["ranged attack with an enemy in melee reach (BB-CMB-16)"] and attack.roll.kept == [1] and not attack.hit


def test_bb_cmb_25_beyond_maximum_range_is_refused() -> None:
    """BB-CMB-25 / BB-CORE-11: 65 ft is beyond a 30/60 grenade."""
    state = start([sergeant((0, 0)), *cultists((13, 13))])
    assert only(play(state, throw((13, 13))), CommandRejected).reason == (
        "(13, 13) is 65 ft away, beyond frag grenade's maximum range of 60 ft"
    )


def test_bb_cmb_25_point_targeted_powers_never_scatter() -> None:
    """BB-CMB-25: a point-targeted power goes off where aimed: no throw roll, no drift."""
    state = start([sergeant(weapons=[PSYCHIC_STORM]), *cultists((10, 10), (11, 11))])
    # 1d6 = 4; Willpower DC 12 (cultist Willpower +0): c1 2 fails (4), c2 15 succeeds (no half: 0)
    events = play(state, BBAreaAttack(command_id="p", actor="sgt", weapon="psychic storm", target=(10, 10)), [4, 2, 15])
    assert not of(events, BBThrown) and not of(events, BBScattered)
    assert only(events, BBAreaResolved).origin == (10, 10)
    assert damage_taken(events) == [("c1", 4)]
    assert only(events, ActionTaken).action == "use power"


# ---------------------------------------------------------------- BB-CMB-26: persistent zones


def end_turn(state: Any, faces: list[int] = ()) -> list[Any]:  # type: ignore[assignment]
    return play(state, EndTurn(command_id=f"end@{state.version}", actor=state.active), faces)


def test_bb_cmb_26_smoke_lasts_three_rounds_and_clears_as_round_four_starts() -> None:
    """BB-CMB-26: smoke from round 1 ticks to 2 (round 2), 1 (round 3) and clears at the start of round 4."""
    state = start([sergeant(), *cultists((15, 15))])
    created = only(play(state, throw((10, 10), weapon="smoke grenade"), [15]), BBZoneCreated)
    assert (created.kind, created.rounds_left, created.blocks_sight, created.damage, len(created.squares)) == ("smoke", 3, True, "", 25)
    assert [z.id for z in state.zones] == [created.zone]
    timeline = []
    while state.round < 4:
        for event in end_turn(state):
            if isinstance(event, (BBZoneTicked, BBZoneExpired)):
                timeline.append((state.round, type(event).__name__, getattr(event, "rounds_left", None)))
    assert timeline == [(2, "BBZoneTicked", 2), (3, "BBZoneTicked", 1), (4, "BBZoneExpired", None)]
    assert state.zones == []


def test_bb_cmb_26_smoke_blocks_sight_and_the_system_sees_it() -> None:
    """BB-CMB-26: smoke blocks sight through, into and out of it; the system's sight test uses it."""
    state = start([sergeant(), *cultists((15, 10))])
    play(state, throw((10, 10), weapon="smoke grenade"), [15])
    assert sight_blocked_by_zones(state, (5, 10), (15, 10))
    assert sight_blocked_by_zones(state, (5, 10), (10, 10)) and sight_blocked_by_zones(state, (10, 10), (5, 10))
    assert not sight_blocked_by_zones(state, (5, 5), (15, 5))
    assert not SYSTEM.sees(state, (5, 10), (15, 10)) and SYSTEM.sees(state, (5, 5), (15, 5))


def test_bb_cmb_26_damaging_zone_burns_whoever_starts_a_turn_inside() -> None:
    """BB-CMB-26: a 2-round fire zone burns c1 as its turn starts (1d4 = 3, Agility DC 12 failed)."""
    state = start([sergeant(weapons=[FIRE_BOMB]), *cultists((10, 10), (15, 15))])
    # throw 15; blast 1d4 = 2, c1 saves 20 + 3 (half: 1)
    events = play(state, throw((10, 10), weapon="fire bomb"), [15, 2, 20])
    zone = only(events, BBZoneCreated)
    assert (zone.kind, zone.rounds_left, zone.damage, zone.save_attribute, zone.save_dc) == ("fire", 2, "1d4", "agility", 12)
    assert damage_taken(events) == [("c1", 1)]
    events = end_turn(state, [3, 5])  # c1's turn starts inside: 1d4 = 3, save 5 + 3 = 8 < 12
    entered = only(events, BBZoneEntered)
    assert (entered.combatant, entered.trigger, entered.zone) == ("c1", "turn_start", zone.zone)
    assert [(d.target, d.amount, d.rule) for d in of(events, DamageDealt)] == [("c1", 3, "BB-CMB-26")]
    assert state.combatants["c1"].vitality == 10 - 1 - 3
    events = end_turn(state)  # c2 starts its turn far away: nothing
    assert not of(events, BBZoneEntered)


def test_bb_cmb_26_a_zone_can_drop_a_combatant_at_its_turn_start() -> None:
    """BB-CMB-26: c1 (Vitality 3) shrugs off the blast but the fire takes it to 0 as its turn starts: Down, turn over."""
    state = start([sergeant((8, 10), weapons=[FIRE_BOMB]), member("c1", "cult", "cultist", (12, 12), vitality=3),
                   member("c2", "cult", "cultist", (15, 15))])
    # throw 15; blast 1d4 = 1, c1 saves 20 + 3: half of 1 is 0, no damage
    events = play(state, throw((12, 12), weapon="fire bomb"), [15, 1, 20])
    assert damage_taken(events) == [] and len(state.zones) == 1
    events = end_turn(state, [4, 2])  # c1 starts inside: 1d4 = 4, save 2 + 3 = 5 fails
    assert damage_taken(events) == [("c1", 4)] and only(events, CombatantDown).combatant == "c1"
    assert state.active == "c2"


# ---------------------------------------------------------------- BB-CMB-27: line of effect


def test_bb_cmb_27_a_wall_between_the_point_and_a_target_shields_it() -> None:
    """BB-CMB-27: frag at (10,10): c2 at (12,10) behind the wall at (11,10) is shielded; c1 beside the point is not."""
    state = start([sergeant(), *cultists((10, 11), (12, 10))], walls=[(11, 10)])
    events = play(state, throw((10, 10)), [15, 3, 4, 2])
    resolved = only(events, BBAreaResolved)
    assert [c.combatant for c in resolved.caught] == ["c1"] and resolved.blocked == ["c2"]
    assert (11, 10) not in resolved.squares and [12, 10] in resolved.details["shielded_squares"]  # details hold JSON lists
    assert damage_taken(events) == [("c1", 7)] and state.combatants["c2"].vitality == 10


def test_bb_cmb_27_placement_needs_sight_of_the_point() -> None:
    """BB-CMB-27: a wall between thrower and point, or smoke in the way, forbids the placement."""
    state = start([sergeant(), *cultists((10, 10))], walls=[(7, 10)])
    assert only(play(state, throw((10, 10))), CommandRejected).reason == "sgt cannot see (10, 10) to place frag grenade (BB-CMB-27)"
    state = start([sergeant(), *cultists((10, 10))])
    state.zones.append(PersistentZone(id="z", kind="smoke", squares=[(8, 10)], rounds_left=3, creator="c1", blocks_sight=True))
    assert only(play(state, throw((10, 10))), CommandRejected).reason == "sgt cannot see (10, 10) to place frag grenade (BB-CMB-27)"


def test_bb_cmb_27_placement_through_smoke_is_a_setting() -> None:
    """BB-CMB-27: with bb_placement_through_smoke a grenade may be lobbed into smoke; smoke never stops a blast."""
    state = start([sergeant(), *cultists((10, 10))], bb_placement_through_smoke=True)
    state.zones.append(PersistentZone(id="z", kind="smoke", squares=[(8, 10), (10, 10)], rounds_left=3, creator="c1", blocks_sight=True))
    events = play(state, throw((10, 10)), [15, 1, 1, 1])
    assert [c.combatant for c in only(events, BBAreaResolved).caught] == ["c1"]


# ---------------------------------------------------------------- BB-CMB-28: item templates


def test_bb_cmb_28_frag_is_a_burst() -> None:
    """BB-CMB-28: a frag grenade's template is the 10-ft burst: the 5 x 5 squares around the point."""
    state = start([sergeant(), *cultists((15, 15))])
    preview = only(play(state, BBPreviewArea(command_id="p", actor="sgt", weapon="frag grenade", target=(10, 10))), BBAreaPreviewed)
    assert preview.shape == "burst" and set(preview.squares) == {(x, y) for x in range(8, 13) for y in range(8, 13)}


def test_bb_cmb_28_krak_is_a_single_target_shaped_charge_with_no_blast() -> None:
    """BB-CMB-28: krak on c1's square is a ranged attack on c1 (10 + 4 + 2 for c1 Exposed in the open = 16 vs Defense 12, 3d8 = 12): c2 beside it is untouched."""
    state = start([sergeant(), *cultists((10, 10), (11, 11))])
    asked = only(play(state, throw((10, 10), weapon="krak grenade")), ReactionWindowOpened)  # c1 may Return Fire first (BB-CMB-14)
    events = play(state, PassReaction(command_id="p", actor="c1", window=asked.window), [10, 3, 4, 5])
    attack = only(events, AttackResolved)
    assert (attack.attacker, attack.target, attack.weapon, attack.hit, attack.roll.total, attack.defense.total) == ("sgt", "c1", "krak grenade", True, 16, 12)
    assert damage_taken(events) == [("c1", 12)] and only(events, CombatantDown).combatant == "c1"
    assert not of(events, BBAreaResolved) and not of(events, BBScattered) and not of(events, BBThrown)
    assert state.combatants["c2"].vitality == 10 and state.combatants["sgt"].ammo["krak grenade"] == 0


def test_bb_cmb_14_a_krak_throw_opens_return_fire_before_the_roll() -> None:
    """BB-CMB-14, BB-CMB-28 (issue 19 item 14): a krak grenade thrown at c1 is a ranged attack
    against it, so c1 (autogun ready, its Reaction unspent) is offered Return Fire before the roll,
    as it is against a lasgun shot. c1 claims: the Opposed Exchange rolls the throw (10 + 4 + 2 =
    16, hits Defense 12) and c1's autogun (2: misses): the krak hits for 3d8 = 12. The grenade was
    spent once, as it was thrown."""
    state = start([sergeant(), *cultists((10, 10))])
    (offered,) = [c for a in SYSTEM.combatant_options(state, "sgt").actions if a.action == "BBThrow"
                  for c in a.choices if c.command["weapon"] == "krak grenade"]
    assert "c1 may Return Fire first: an Opposed Exchange (BB-CMB-14)" in offered.notes  # the options say so beforehand
    events = play(state, throw((10, 10), weapon="krak grenade"))
    asked = only(events, ReactionWindowOpened)
    assert (asked.trigger, asked.actor, asked.rule) == ("ranged_attack", "sgt", "BB-CMB-14")
    assert asked.reactors == [EligibleReactor(combatant="c1", reactions=["return_fire"])]
    assert not of(events, AttackResolved) and state.combatants["sgt"].ammo["krak grenade"] == 0
    events = play(state, ClaimReaction(command_id="rf", actor="c1", window=asked.window, reaction="return_fire"), [10, 2, 3, 4, 5])
    exchange = only(events, BBExchangeResolved)
    assert (exchange.attacker, exchange.defender, exchange.attacker_total, exchange.attacker_hits, exchange.defender_hits) == ("sgt", "c1", 16, True, False)
    krak = [e for e in of(events, AttackResolved) if e.attacker == "sgt"][0]
    assert (krak.weapon, krak.hit) == ("krak grenade", True)
    assert damage_taken(events) == [("c1", 12)] and state.combatants["sgt"].ammo["krak grenade"] == 0


def test_bb_cmb_17_a_krak_hit_opens_dive_for_cover() -> None:
    """BB-CMB-17, BB-CMB-28 (issue 19 item 14): hit by a krak grenade (a ranged attack) with cover
    within 5 ft, c1 may Dive for Cover, as from a lasgun hit. c1 has no ranged weapon ready (no
    Return Fire); the throw hits (10 + 4 + 2 = 16 vs 12); c1 dives to (11, 10), heavy cover facing
    west (+5): its save 15 + 3 = 18 beats the roll 16, the hit is recomputed against Defense 17 and
    misses: no damage."""
    setup = EncounterSetup(
        system="bolt-and-blade",
        combatants=[sergeant(), member("c1", "cult", "cultist", (10, 10), weapons=["cultist blade"], ready_weapon="cultist blade")],
        terrain=Terrain(width=20, height=20, cover=[CoverFeature(x=11, y=10, level="heavy", facing=[(-1, 0)])]),
    )
    state = SYSTEM.initial_state()
    for event in SYSTEM.decide(state, StartEncounter(command_id="s", actor=SEQUENCER, setup=setup, seed_commitment=""), FixedDice([1, 20])):
        SYSTEM.evolve(state, event)
    events = play(state, throw((10, 10), weapon="krak grenade"), [10])
    assert only(events, AttackResolved).hit
    asked = only(events, ReactionWindowOpened)
    assert (asked.trigger, asked.rule, asked.reactors) == ("ranged_hit", "BB-CMB-17", [EligibleReactor(combatant="c1", reactions=["dive_for_cover"])])
    assert not of(events, DamageDealt)
    events = play(state, ClaimReaction(command_id="d", actor="c1", window=asked.window, reaction="dive_for_cover", options={"to": [11, 10]}), [15])
    assert state.combatants["c1"].position == (11, 10)
    recomputed = only(events, BBAttackRecomputed)
    assert not recomputed.hit and not of(events, DamageDealt) and state.combatants["c1"].vitality == 10


def test_bb_cmb_24_area_items_open_no_reaction_windows() -> None:
    """BB-CMB-14, -17, -24 (issue 19 item 14): a frag grenade is thrown at a point, not at a
    creature, and those caught save (BB-CMB-24): no Return Fire, no Dive for Cover, though c1 has
    an autogun ready and its Reaction."""
    state = start([sergeant(), *cultists((10, 10))])
    events = play(state, throw((10, 10)), [15, 4, 5, 5])
    assert not of(events, ReactionWindowOpened) and state.window is None
    assert only(events, BBAreaResolved).caught[0].combatant == "c1"


def test_bb_cmb_28_krak_needs_a_creature_in_the_square() -> None:
    """BB-CMB-28: a krak grenade at an empty square is refused: it is not a blast."""
    state = start([sergeant(), *cultists((10, 10))])
    assert only(play(state, throw((9, 9), weapon="krak grenade")), CommandRejected).reason == (
        "no creature at (9, 9) for krak grenade: it is a single-target charge (BB-CMB-28)"
    )


def test_bb_cmb_28_smoke_is_a_persistent_burst_zone() -> None:
    """BB-CMB-28: smoke makes a 5 x 5 zone for 3 rounds that blocks sight and deals no damage."""
    state = start([sergeant(), *cultists((10, 10))])
    events = play(state, throw((10, 10), weapon="smoke grenade"), [15])
    assert only(events, BBAreaResolved).damage is None and not of(events, DamageDealt)
    zone = state.zones[0]
    assert (zone.kind, zone.rounds_left, zone.blocks_sight, zone.creator, zone.source) == ("smoke", 3, True, "sgt", "smoke grenade")
    assert set(zone.squares) == {(x, y) for x in range(8, 13) for y in range(8, 13)}


def test_bb_cmb_28_flamer_is_a_cone_from_the_wielder() -> None:
    """BB-CMB-28: a 15-ft flamer cone east from (8,10) covers 7 squares: c1, c2 caught, c3 at (12,10) beyond it."""
    state = start([sergeant((8, 10)), *cultists((10, 10), (11, 11), (12, 10))])
    # 2d6 = 12; saves c1 10 + 3 = 13 (half: 6), c2 9 + 3 = 12 (fails: 12)
    events = play(state, BBAreaAttack(command_id="f", actor="sgt", weapon="flamer", direction=(1, 0)), [6, 6, 10, 9])
    resolved = only(events, BBAreaResolved)
    assert resolved.shape == "cone" and resolved.origin == (8, 10)
    assert set(resolved.squares) == {(9, 10), (10, 9), (10, 10), (10, 11), (11, 9), (11, 10), (11, 11)}
    assert [c.combatant for c in resolved.caught] == ["c1", "c2"]
    assert damage_taken(events) == [("c1", 6), ("c2", 12)]
    assert not of(events, BBThrown) and not of(events, BBScattered)
    assert state.combatants["sgt"].ammo["flamer"] == 5


def test_bb_cmb_28_flamer_aimed_at_a_point() -> None:
    """BB-CMB-28: a cone aimed at a point rather than a compass direction."""
    state = start([sergeant((8, 10)), *cultists((11, 11), (11, 8))])
    events = play(state, BBAreaAttack(command_id="f", actor="sgt", weapon="flamer", target=(11, 11)), [1, 1, 1])
    assert [c.combatant for c in only(events, BBAreaResolved).caught] == ["c1"]


def test_bb_cmb_28_psychic_area_power_uses_the_template_in_its_data() -> None:
    """BB-CMB-28: a power with a 5-ft burst in its data covers the 3 x 3 squares around its point."""
    state = start([sergeant(weapons=[PSYCHIC_STORM]), *cultists((15, 15))])
    preview = only(play(state, BBPreviewArea(command_id="p", actor="sgt", weapon="psychic storm", target=(10, 10))), BBAreaPreviewed)
    assert preview.shape == "burst" and set(preview.squares) == {(x, y) for x in range(9, 12) for y in range(9, 12)}


# ---------------------------------------------------------------- AI and replay


def test_ai_helper_throws_where_it_catches_most_enemies_and_no_ally() -> None:
    """BB-CMB-24: the AI helper is deterministic and never aims at its own side."""
    state = start([sergeant(weapons=["frag grenade"]), member("trooper", "imperium", "guardsman", (9, 10)), *cultists((10, 10), (11, 11), (13, 10))])
    choice = choose_area_command(SYSTEM, state, "sgt", "sgt@1")
    assert choice == BBThrow(command_id="sgt@1", actor="sgt", target=(13, 10), weapon="frag grenade")
    assert choose_area_command(SYSTEM, state, "sgt", "sgt@1") == choice


@settings(max_examples=25, deadline=None)
@given(st.binary(min_size=8, max_size=8), st.sampled_from(["frag grenade", "smoke grenade", "krak grenade", "fire bomb"]), st.tuples(st.integers(7, 12), st.integers(7, 12)).filter(lambda p: p not in {(9, 12), (9, 13)}))
def test_replaying_area_events_rebuilds_the_live_state(seed: bytes, weapon: str, point: tuple[int, int]) -> None:
    """BB-CMB-24..26: seeded throws (each turn, by whoever acts), scatter, saves, damage, zones and their
    ticks and burns replay from the events to an equal state."""
    kit = ["frag grenade", "smoke grenade", "krak grenade", FIRE_BOMB]
    combatants = [
        member("sgt", "imperium", "guard sergeant", (5, 10), weapons=kit, ready_weapon="frag grenade"),
        member("trooper", "imperium", "guardsman", (6, 12), weapons=kit, ready_weapon="frag grenade"),
        *[member(f"c{i}", "cult", "cultist", p, weapons=kit, ready_weapon="frag grenade") for i, p in enumerate([(10, 10), (11, 11), (12, 9)], 1)],
    ]
    setup = EncounterSetup(system="bolt-and-blade", combatants=combatants, settings={"bb_friendly_fire_confirmation": False},
                           terrain=Terrain(width=20, height=20, walls=[Wall(9, 12), Wall(9, 13)]))
    state = SYSTEM.initial_state()
    log: list[Any] = []

    def run(command: Command) -> list[Any]:
        events = SYSTEM.decide_or_reject(state, command, SeededDice(seed, state.version))
        for event in events:
            SYSTEM.evolve(state, event)
        log.extend(events)
        return events

    run(StartEncounter(command_id="s", actor=SEQUENCER, setup=setup, seed_commitment=""))
    thrown = 0
    for _ in range(15):
        if state.ended or state.active is None:
            break
        actor = state.active
        target = point
        if weapon == "krak grenade":
            enemies = sorted(SYSTEM.standing_enemies(state, actor), key=lambda e: e.id)
            target = enemies[0].position if enemies else point
        events = run(BBThrow(command_id=f"t@{state.version}", actor=actor, target=target, weapon=weapon))
        thrown += not any(isinstance(e, CommandRejected) for e in events)
        if state.active == actor:
            run(EndTurn(command_id=f"e@{state.version}", actor=actor))
    assert thrown >= 1
    replayed = SYSTEM.initial_state()
    for event in log:
        SYSTEM.evolve(replayed, event)
    assert replayed == state


def test_demo_fight_with_grenades_ends_and_replays() -> None:
    """BB-CMB-24..28 in play: the demo's AI squads (frag and smoke grenades carried) fight to an end; replay equals live."""
    for seed in (b"area-1", b"area-2", b"area-3"):
        log: list[Any] = []
        final = None
        for _command, events, state in run_headless(SYSTEM, demo_setup(), seed):
            log.extend(events)
            final = state
        assert final is not None and final.ended
        replayed = SYSTEM.initial_state()
        replayed.encounter = "headless"
        for event in log:
            SYSTEM.evolve(replayed, event)
        assert replayed == final


def test_bb_cmb_26_walking_into_a_damaging_zone_burns_once_per_move() -> None:
    """BB-CMB-26: the sergeant walks through a fire zone (8..10, 9..11): burned entering (8,10), not again at (9,10), (10,10)."""
    blade_only = member("c1", "cult", "cultist", (15, 15), weapons=["cultist blade"], ready_weapon="cultist blade")
    state = start([sergeant(weapons=[FIRE_BOMB]), blade_only])
    play(state, throw((9, 10), weapon="fire bomb"), [15, 2])  # the blast catches nobody
    # entering: 1d4 = 3, the sergeant's Agility save 5 + 2 = 7 < 12
    events = play(state, BBMove(command_id="m", actor="sgt", path=[(6, 10), (7, 10), (8, 10), (9, 10), (10, 10)]), [3, 5])
    assert [(e.combatant, e.trigger) for e in of(events, BBZoneEntered)] == [("sgt", "enter")]
    assert [(d.target, d.amount, d.rule) for d in of(events, DamageDealt)] == [("sgt", 3, "BB-CMB-26")]
    assert state.combatants["sgt"].position == (10, 10) and state.combatants["sgt"].vitality == 18 - 3


def test_bb_cmb_25_a_scatter_record_written_under_schema_1_is_upcast_to_add_up() -> None:
    """BB-CMB-25: schema 1 of BBScattered gave the distance in feet as the roll's
    total (d6:3 d8:3 = 15); read back it records 3 drift steps and 15 ft apart."""
    from firelane.events import codec

    body = (b'{"type":"BBScattered","combatant":"sgt","weapon":"frag grenade","aimed":[10,10],"landed":[13,10],'
            b'"direction":[1,0],"distance_squares":3,"roll":{"purpose":"scatter","rule":"BB-CMB-25",'
            b'"dice":[[6,3,-1,0],[8,3,-1,1]],"modifiers":[],"total":15,"kept":[0]}}')
    event = codec.decode_body("BBScattered", 1, body)
    assert isinstance(event, BBScattered) and (event.roll.total, event.distance_ft) == (3, 15.0)
    assert sum_problem(event.roll) is None
