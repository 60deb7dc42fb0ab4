"""R6-40 burst and R6-41 cone attacks through the real RonD6 system: R6AreaAttack."""

from __future__ import annotations

from firelane.engine.systems.rond6 import SYSTEM
from firelane.engine.systems.rond6.areas import choose_area_attack
from firelane.engine.systems.rond6.aux_schemas import R6AreaAttack, R6AreaTargeted
from firelane.events.schemas import AttackResolved, DamageDealt, StateAdjusted, Terrain, Wall

from tests.systems.rond6.test_aux_support import act, cid, declare, fighter, of_type, rejection, replayed, start

GRENADE = {"id": "grenade", "name": "grenade", "kind": "thrown", "skill": "throwing", "damage": "5D",
           "ranges": [5, 10, 15], "capacity": 2, "modes": ["burst:medium"]}
FLAMER = {"id": "flamer", "name": "flamer", "kind": "ranged", "skill": "firearms", "damage": "6D",
          "ranges": [3, 6, 9], "modes": ["cone:small"]}
PISTOL = {"id": "pistol", "name": "pistol", "kind": "ranged", "skill": "firearms", "damage": "4D", "ranges": [5, 10, 20]}


def grenadier(position=(2, 0), **kw):  # type: ignore[no-untyped-def]
    return fighter("a", "red", position, weapons=[GRENADE, PISTOL], skills={"throwing": "4D"}, **kw)


def throw(state, faces=(), **kw):  # type: ignore[no-untyped-def]
    return act(state, R6AreaAttack(command_id=cid("g"), actor="a", **kw), faces)


def burst_scene(**settings):  # type: ignore[no-untyped-def]
    return start([
        grenadier(),
        fighter("b", "blue", (6, 0), attributes={"Agility": "2D"}),  # Passive Defense 15
        fighter("c", "blue", (8, 2), attributes={"Agility": "4D"}),  # 17
        fighter("d", "blue", (10, 0)),  # 4 Spaces from the centre: outside a Medium Burst
        fighter("e", "red", (4, 3)),  # an ally inside the burst (16)
    ], initiative=[5, 4, 4, 4, 4], **settings)


def test_r6_40_burst_hits_everyone_in_the_radius_whose_defense_it_beats() -> None:
    """R6-40: a Medium Burst (radius 3) on (6,0): one attack test (16) against each Passive Defense;
    one damage roll (5D = 20) for every hit, through the main system's damage (DR 12: Stunned + 1 Wound)."""
    state = burst_scene()
    declare(state, "a", 1)
    events = throw(state, [5, 5, 4, 2, 4, 4, 4, 4, 4], weapon="grenade", center=(6, 0))
    area = of_type(events, R6AreaTargeted)[0]
    assert (area.shape, area.size, area.center, area.rule) == ("burst", "medium", (6, 0), "R6-40")
    assert area.targets == ["b", "c", "e"]
    assert len(area.squares) == 4 * 7  # y -3..-1 is off the map
    results = {r.target: r for r in of_type(events, AttackResolved)}
    assert {t: (r.roll.total, r.roll.target, r.hit) for t, r in results.items()} == {
        "b": (16, 15, True), "c": (16, 17, False), "e": (16, 16, True),
    }
    assert results["b"].details["result_points"] == 1 and results["b"].kind == "area_burst"
    damage = {d.target: d for d in of_type(events, DamageDealt)}
    assert set(damage) == {"b", "e"}
    assert damage["b"].details["damage_total"] == 20 and damage["b"].details["resistance_total"] == 12
    assert damage["b"].roll is damage["e"].roll or damage["b"].roll == damage["e"].roll  # rolled once
    assert (state.combatants["b"].wounds, state.combatants["c"].wounds, state.combatants["e"].wounds) == (1, 0, 1)
    assert "stunned" in state.combatants["b"].conditions and state.combatants["d"].wounds == 0
    assert of_type(events, StateAdjusted)[0].changes == {"ammo": {"grenade": 1}}


def test_r6_40_damage_can_be_rolled_for_each_target() -> None:
    """R6-40 setting area_damage_roll "each": every hit target gets its own damage roll."""
    state = burst_scene(area_damage_roll="each")
    declare(state, "a", 1)
    events = throw(state, [5, 5, 4, 2, 4, 4, 4, 4, 4, 2, 2, 2, 2, 2], weapon="grenade", center=(6, 0))
    totals = {d.target: d.details["damage_total"] for d in of_type(events, DamageDealt)}
    assert totals == {"b": 20, "e": 10}
    assert state.combatants["e"].wounds == 0  # 10 < DR 12: no effect


def test_r6_40_range_modifier_to_the_target_space_and_self_in_the_burst() -> None:
    """R6-40 with R6-14: the target Space adjacent is Point Blank (+5); the thrower inside its own burst is affected."""
    state = start([grenadier(position=(5, 5)), fighter("b", "blue", (6, 5))])
    declare(state, "a", 1)
    events = throw(state, [3, 3, 3, 3, 1, 1, 1, 1, 1], weapon="grenade", center=(6, 5))
    area = of_type(events, R6AreaTargeted)[0]
    assert area.targets == ["a", "b"]
    attack = of_type(events, AttackResolved)[0].roll
    assert attack.total == 12 + 5 and [m.value for m in attack.modifiers] == [5]


def test_r6_40_bad_area_attacks_are_rejected() -> None:
    """R6-40: no area profile, no target Space, beyond Long range, no line of sight, no grenades left."""
    terrain = Terrain(width=30, height=20, walls=[Wall(4, 5)])
    state = start([grenadier(position=(2, 5)), fighter("b", "blue", (20, 10))], terrain=terrain)
    declare(state, "a", 1)
    assert rejection(throw(state, weapon="pistol", center=(6, 5))) == "pistol is not an area weapon (no burst or cone profile)"
    assert rejection(throw(state, weapon="grenade")) == "a medium burst needs a target Space (center)"
    assert rejection(throw(state, weapon="grenade", center=(18, 5))) == "(18, 5) is 16 Spaces away, beyond grenade's Long range"
    assert rejection(throw(state, weapon="grenade", center=(6, 5))) == "no line of sight to (6, 5)"
    state.combatants["a"].ammo["grenade"] = 0
    assert rejection(throw(state, weapon="grenade", center=(2, 8))) == "grenade is out of ammunition; reload it (R6-37)"
    assert state.combatants["a"].actions_used == 0


def cone_scene():  # type: ignore[no-untyped-def]
    return start([
        fighter("a", "red", (5, 5), weapons=[FLAMER], skills={"firearms": "3D"}),
        fighter("b", "blue", (7, 5), attributes={"Agility": "2D"}),  # 15
        fighter("c", "blue", (6, 4), attributes={"Agility": "4D"}),  # 17
        fighter("d", "blue", (4, 5)),  # behind the attacker
        fighter("f", "blue", (9, 5)),  # beyond a Small Cone (3 long)
    ], initiative=[5, 4, 4, 4, 4])


def test_r6_41_cone_hits_the_spaces_ahead_never_the_attacker() -> None:
    """R6-41: a Small Cone facing east from (5,5) covers x 6..8, y 4..6; attack 15 hits b (15), misses c (17);
    6D damage 18 vs DR 12: Stunned and 1 Wound."""
    state = cone_scene()
    declare(state, "a", 1)
    events = throw(state, [5, 5, 5, 3, 3, 3, 3, 3, 3], facing="e")
    area = of_type(events, R6AreaTargeted)[0]
    assert (area.shape, area.size, area.facing, area.rule) == ("cone", "small", "e", "R6-41")
    assert sorted(area.squares) == sorted((x, y) for x in range(6, 9) for y in range(4, 7))
    assert area.targets == ["b", "c"]
    hits = {r.target: r.hit for r in of_type(events, AttackResolved)}
    assert hits == {"b": True, "c": False}
    assert state.combatants["b"].wounds == 1 and state.combatants["d"].wounds == 0


def test_r6_41_cone_faces_a_target_space_and_refuses_bad_facings() -> None:
    """R6-41: without a facing the cone faces the given Space; unknown facings are refused."""
    state = cone_scene()
    declare(state, "a", 1)
    events = throw(state, [2, 2, 2], center=(5, 9))
    assert of_type(events, R6AreaTargeted)[0].facing == "s"
    state = cone_scene()
    declare(state, "a", 1)
    assert rejection(throw(state, facing="up")) == "unknown facing 'up'; use one of n, ne, e, se, s, sw, w, nw"
    assert rejection(throw(state)) == "a cone needs a facing (or a Space to face)"


def test_r6_40_ai_helper_aims_at_enemies_only() -> None:
    """R6-40 AI helper: a burst centred on enemies that catches none of its own side; None when it must."""
    state = start([grenadier(), fighter("b", "blue", (12, 0)), fighter("c", "blue", (13, 2)), fighter("e", "red", (2, 8))])
    command = choose_area_attack(SYSTEM, state, "a")
    assert command is not None and command.weapon == "grenade" and command.center in {(12, 0), (13, 2)}
    assert command == choose_area_attack(SYSTEM, state, "a")  # deterministic
    state.combatants["e"].position = (12, 1)  # an ally right next to both enemies
    assert choose_area_attack(SYSTEM, state, "a") is None


def test_r6_40_r6_41_replay_rebuilds_the_state() -> None:
    """R6-40/41: replaying the log of an area attack gives the live state."""
    from firelane.engine.core import SEQUENCER
    from firelane.engine.dice import FixedDice
    from firelane.events.schemas import EncounterSetup, StartEncounter

    setup = EncounterSetup(system="rond6", combatants=[grenadier(), fighter("b", "blue", (6, 0))], terrain=Terrain(width=30, height=20))
    state = SYSTEM.initial_state()
    state.encounter = "test"
    log = SYSTEM.decide(state, StartEncounter(command_id="s", actor=SEQUENCER, setup=setup, seed_commitment="x"), FixedDice([5, 4]))
    for event in log:
        SYSTEM.evolve(state, event)
    log += declare(state, "a", 1)  # type: ignore[arg-type]
    log += throw(state, [5, 5, 5, 5, 4, 4, 4, 4, 4], weapon="grenade", center=(6, 0))
    assert state.combatants["b"].wounds == 1
    assert replayed(log) == state
