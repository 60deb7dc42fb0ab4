"""RonD6 special combat rules: R6-24, R6-26 .. R6-39."""

from __future__ import annotations

import pytest

from firelane.engine.systems.rond6 import SYSTEM, actions, rules
from firelane.engine.systems.rond6.aux_schemas import R6Move
from firelane.engine.systems.rond6.schemas import (
    R6Attack,
    R6Charge,
    R6DeclareActions,
    R6DropProne,
    R6Escape,
    R6Grapple,
    R6HeadsDown,
    R6Ready,
    R6SetWeapon,
    R6Stand,
)
from firelane.events.schemas import (
    ActionTaken,
    AttackResolved,
    ConditionApplied,
    ConditionRemoved,
    DamageDealt,
    EndTurn,
    Moved,
    PassReaction,
    ReactionWindowOpened,
    StateAdjusted,
    Terrain,
    Wall,
)
from firelane.events.schemas import (
    TestRolled as Rolled,
)
from tests.systems.rond6.r6helpers import (
    PISTOL,
    RIFLE,
    SPEAR,
    act,
    cmd,
    combatant,
    of_type,
    one,
    rejection,
    setup,
    start,
)

PISTOL2 = {**PISTOL, "id": "pistol2", "name": "second pistol"}


def duel(a_sheet: dict | None = None, b_at: tuple[int, int] = (3, 0), terrain: Terrain | None = None, b_first: bool = False,
         faces: list[int] | None = None, **b_sheet: object):
    faces = faces or ([2, 2, 2, 4, 4, 4] if b_first else [4, 4, 4, 2, 2, 2])
    return start(setup(combatant("a", "red", (0, 0), **(a_sheet or {})), combatant("b", "blue", b_at, **b_sheet), terrain=terrain), faces)


def attack(state, faces: list[int], count: int = 1, **fields: object) -> list:
    """a declares ``count`` actions and attacks b; b passes any defense window."""
    if state.combatants["a"].declared_actions == 0:
        act(state, cmd(R6DeclareActions, "a", count=count))
    events = act(state, cmd(R6Attack, "a", target="b", **fields), [] if _opens_window(state, fields) else faces)
    if state.window is None:
        return events
    return events + act(state, cmd(PassReaction, "b", window=state.window.window), faces)


def _opens_window(state, fields) -> bool:
    b = state.combatants["b"]
    return b.declared_actions == 0 or b.actions_used < b.declared_actions


RIFLE_HAND = {"weapons": [RIFLE, PISTOL], "readied": ["rifle"]}
KNIFE_HAND = {"readied": ["knife"]}


# --------------------------------------------------------------------------- R6-24


def test_r6_24_all_out_attack() -> None:
    """R6-24: a Full Action: +2D attack (melee weapons 4D -> 6D), +1D damage (STR+1D = 4D -> 5D),
    and no Active Defense until the start of the attacker's next turn."""
    state = duel(KNIFE_HAND, b_at=(1, 0))
    events = attack(state, [4, 4, 4, 4, 4, 4] + [2, 2, 2, 2, 2], option="all_out")
    assert one(events, ActionTaken).slot == "full"
    hit = one(events, AttackResolved)
    assert (hit.roll.details["code"], hit.roll.total, hit.roll.rule) == ("6D", 24, "R6-24")
    assert hit.roll.details["dice_modifiers"] == [{"source": "All-Out Attack", "rule": "R6-24", "dice": 2}]
    assert one(events, DamageDealt).roll.details["code"] == "5D"
    forgo = [e for e in of_type(events, ConditionApplied) if e.condition == "no_active_defense"][0]
    assert (forgo.rule, forgo.until) == ("R6-24", "start_of_turn")
    a = state.combatants["a"]
    assert actions.defense_blocked(SYSTEM, state, a, "dodge") == "a cannot use Active Defense until its next turn (All-Out Attack / Full Auto, R6-24/R6-31)"
    assert one(events, DamageDealt).details["damage_total"] == 18  # 10 + 8 result points: Stunned, 1 Wound
    act(state, cmd(EndTurn, "a"))
    events = act(state, cmd(EndTurn, "b"), [3, 3, 3, 1, 1])  # b's 1 Wound: initiative 2D
    assert any(isinstance(e, ConditionRemoved) and e.condition == "no_active_defense" for e in events)


def test_r6_24_all_out_attack_is_melee_and_a_full_action() -> None:
    """R6-24: ranged weapons cannot All-Out Attack; nor can a character with two declared actions."""
    state = duel()
    act(state, cmd(R6DeclareActions, "a", count=2))
    assert rejection(act(state, cmd(R6Attack, "a", target="b", option="all_out"))) == "an All-Out Attack is a melee attack (R6-24)"
    state = duel(KNIFE_HAND, b_at=(1, 0))
    act(state, cmd(R6DeclareActions, "a", count=2))
    assert "a Full Action must be the round's only action (R6-07)" in rejection(act(state, cmd(R6Attack, "a", target="b", option="all_out")))


# --------------------------------------------------------------------------- R6-26


def test_r6_26_burst_fire_as_single_uses_one_round_and_minus_2d_damage() -> None:
    """R6-26: a Burst Fire weapon firing one round: -2D damage (6D -> 4D); a burst uses 3 rounds."""
    state = duel(RIFLE_HAND)
    events = attack(state, [5, 5, 5, 5] + [2, 2, 2, 2], option="burst_single")
    assert one(events, StateAdjusted).changes == {"ammo": {"rifle": 29, "pistol": 12}}
    damage = one(events, DamageDealt)
    assert damage.roll.details["code"] == "4D" and damage.roll.details["dice_modifiers"][0]["rule"] == "R6-26"
    state = duel(RIFLE_HAND)
    events = attack(state, [5, 5, 5, 5] + [2, 2, 2, 2, 2, 2])
    assert one(events, StateAdjusted).changes["ammo"]["rifle"] == 27 and one(events, DamageDealt).roll.details["code"] == "6D"


def test_r6_26_needs_burst_fire() -> None:
    """R6-26: only Burst Fire weapons fire as single."""
    state = duel()
    act(state, cmd(R6DeclareActions, "a", count=1))
    assert rejection(act(state, cmd(R6Attack, "a", target="b", option="burst_single"))) == "the pistol has no Burst Fire mode to fire as single (R6-26)"


# --------------------------------------------------------------------------- R6-27


def test_r6_27_called_shot_to_the_head() -> None:
    """R6-27: the target's size sets the modifier (head -10, house scale) and success brings the
    intended effect (head: +1D damage)."""
    state = duel()
    events = attack(state, [6, 6, 6, 6, 2] + [2] * 6, called_shot="head")  # 26 - 10 = 16 vs 16
    hit = one(events, AttackResolved)
    assert hit.hit and hit.details["called_shot"] == "head"
    assert [(m.rule, m.value) for m in hit.roll.modifiers] == [("R6-27", -10)]
    assert one(events, DamageDealt).roll.details["code"] == "6D"


def test_r6_27_called_shot_at_a_held_weapon_disarms() -> None:
    """R6-27: shooting the weapon out of a hand: the target loses what it holds, no damage."""
    state = duel()
    events = attack(state, [6, 6, 6, 6, 2], called_shot="held_item")
    assert not of_type(events, DamageDealt)
    disarm = of_type(events, StateAdjusted)[-1]
    assert (disarm.combatant, disarm.changes, disarm.rule) == ("b", {"readied": []}, "R6-27")
    assert state.combatants["b"].readied == []


def test_r6_27_called_shots_are_ranged_and_known() -> None:
    """R6-27: unknown locations and melee called shots are refused."""
    state = duel(KNIFE_HAND, b_at=(1, 0))
    act(state, cmd(R6DeclareActions, "a", count=1))
    assert rejection(act(state, cmd(R6Attack, "a", target="b", called_shot="knee", weapon="knife"))).startswith("unknown called shot 'knee'")
    assert rejection(act(state, cmd(R6Attack, "a", target="b", called_shot="limb", weapon="pistol"))) == "a's pistol is not in hand: Ready it first (R6-37)"
    assert rejection(act(state, cmd(R6Attack, "a", target="b", called_shot="limb", weapon="knife"))) == "a Called Shot is a ranged attack (R6-27)"


# --------------------------------------------------------------------------- R6-28


def test_r6_28_charge_runs_straight_and_attacks_at_plus_2d() -> None:
    """R6-28: a Full Action: move 2+ spaces (up to 2x Move) straight at the target, +2D attack,
    then -1 Passive Defense until the charger's next turn."""
    state = duel(KNIFE_HAND, b_at=(4, 0))
    act(state, cmd(R6DeclareActions, "a", count=1))
    events = act(state, cmd(R6Charge, "a", target="b"))
    assert one(events, Moved).path == [(1, 0), (2, 0), (3, 0)] and one(events, Moved).rule == "R6-28"
    assert one(events, ActionTaken).slot == "full"
    events = act(state, cmd(PassReaction, "b", window=1), [3, 3, 3, 3, 3, 3] + [2] * 4)
    hit = one(events, AttackResolved)
    assert (hit.roll.details["code"], hit.roll.total, hit.hit) == ("6D", 18, True)
    act(state, cmd(EndTurn, "a"))
    act(state, cmd(R6DeclareActions, "b", count=1))
    events = act(state, cmd(R6Attack, "b", target="a"), [4, 4, 4, 3] + [2] * 5)  # 15 vs 16 - 1 = 15: hit
    defense = one(events, AttackResolved).details["defense"]
    assert defense["value"] == 15 and {"source": "charging", "rule": "R6-28", "value": -1} in defense["parts"]


def test_r6_28_charge_distance_limits_and_a_blocked_lane() -> None:
    """R6-28: at least 2 spaces, at most twice Move; the lane must be clear."""
    state = duel(KNIFE_HAND, b_at=(2, 0))
    act(state, cmd(R6DeclareActions, "a", count=1))
    assert rejection(act(state, cmd(R6Charge, "a", target="b"))) == "a Charge needs a run of at least 2 spaces; b is too close (R6-28)"
    state = duel(KNIFE_HAND, b_at=(14, 0))  # a 13-space run
    act(state, cmd(R6DeclareActions, "a", count=1))
    assert rejection(act(state, cmd(R6Charge, "a", target="b"))) == "b is beyond a's charge (up to twice Move 6: 12 spaces, R6-28)"
    state = duel(KNIFE_HAND, b_at=(5, 0), terrain=Terrain(walls=[Wall(2, 0)]))
    act(state, cmd(R6DeclareActions, "a", count=1))
    assert rejection(act(state, cmd(R6Charge, "a", target="b"))) == "the charge lane towards b is blocked at (2, 0) (R6-28)"
    state = duel(b_at=(4, 0))
    act(state, cmd(R6DeclareActions, "a", count=1))
    assert rejection(act(state, cmd(R6Charge, "a", target="b"))) == "a Charge ends in a melee attack (R6-28)"


WEAK = {"attributes": {"Strength": "2D+2", "Stamina": "2D+2"}, "skills": {"melee_weapons": "4D"}}


def test_r6_28_charge_reaches_twice_the_characters_move() -> None:
    """R6-28 "up to twice your Move", and the Move is the character's (R6-09): a's sheet says
    move 5, but Strength: Athletics 3D (its Strength) gives Move 6, so an 11-space charge goes."""
    state = duel(KNIFE_HAND, b_at=(12, 0))
    assert state.combatants["a"].move == 5
    act(state, cmd(R6DeclareActions, "a", count=1))
    events = act(state, cmd(R6Charge, "a", target="b"))
    assert len(one(events, Moved).path) == 11 and one(events, Moved).path[-1] == (11, 0)
    state = duel({**KNIFE_HAND, **WEAK}, b_at=(12, 0))  # Athletics and Fortitude 2D+2: Move 5
    act(state, cmd(R6DeclareActions, "a", count=1))
    assert rejection(act(state, cmd(R6Charge, "a", target="b"))) == "b is beyond a's charge (up to twice Move 5: 10 spaces, R6-28)"


def test_r6_28_the_ai_plans_a_charge_with_the_characters_move() -> None:
    """R6-28/R6-09: alone in its round, the AI charges an enemy 11 spaces away with Move 6;
    with Move 5 it moves instead."""
    state = duel(KNIFE_HAND, b_at=(12, 0))
    act(state, cmd(R6DeclareActions, "a", count=1))
    choice = SYSTEM.choose_command(state, "a")
    assert isinstance(choice, R6Charge) and choice.target == "b"
    state = duel({**KNIFE_HAND, **WEAK}, b_at=(12, 0))
    act(state, cmd(R6DeclareActions, "a", count=1))
    assert not isinstance(SYSTEM.choose_command(state, "a"), R6Charge)


def test_r6_28_a_weapon_set_against_the_charge_strikes_first_with_plus_2d_damage() -> None:
    """R6-28: b sets its spear; a charges; the set spear strikes the charger first, +2D damage (STR+2D: 5D -> 7D)."""
    state = duel(KNIFE_HAND, b_at=(4, 0), b_first=True, weapons=[SPEAR], readied=["spear"])
    act(state, cmd(R6DeclareActions, "b", count=1))
    assert one(act(state, cmd(R6SetWeapon, "b")), StateAdjusted).changes == {"set_weapon": "spear"}
    act(state, cmd(EndTurn, "b"))
    act(state, cmd(R6DeclareActions, "a", count=1))
    # b's set strike (melee weapons 4D 16 vs a's 16 - 1 charging) and its damage 7D (14 vs 12: Stunned),
    # then a's charge attack: Stunned -1D: 6D - 1D = 5D (15 vs 16: miss).
    events = act(state, cmd(R6Charge, "a", target="b"), [4, 4, 4, 4] + [2] * 7 + [3, 3, 3, 3, 3])
    first, second = of_type(events, AttackResolved)
    assert (first.attacker, first.kind, first.hit) == ("b", "set_vs_charge", True)
    damage = one(events, DamageDealt)
    assert damage.roll.details["code"] == "7D" and damage.roll.details["dice_modifiers"] == [{"source": "weapon set against the charge", "rule": "R6-28", "dice": 2}]
    assert (second.attacker, second.roll.details["code"], second.hit) == ("a", "5D", False)


# --------------------------------------------------------------------------- R6-29


@pytest.mark.parametrize(("attackers", "pips"), [(1, 0), (2, 1), (3, 2), (4, 3), (6, 3)])
def test_r6_29_coordinated_bonus_table(attackers: int, pips: int) -> None:
    """R6-29: 2 attackers +1, 3 +2, 4 or more +1D (three pips)."""
    assert rules.coordinated_bonus_pips(attackers) == pips


def coordinated(allies: int):
    members = [combatant("a", "red", (0, 0))] + [combatant(f"c{i}", "red", (0, i + 1)) for i in range(allies)] + [combatant("b", "blue", (3, 0))]
    # Rolled in ID order: a, b, c0.. ; allies first (6s would explode, so 5s), then a, then b.
    faces = [4, 4, 4, 1, 1, 1] + [5, 5, 5] * allies
    state = start(setup(*members), faces)
    for i in range(allies):
        assert state.active == f"c{i}"
        act(state, cmd(R6DeclareActions, f"c{i}", count=2))
        act(state, cmd(EndTurn, f"c{i}"))
    assert state.active == "a"
    return state


def test_r6_29_coordinated_attack_gives_every_participant_the_bonus() -> None:
    """R6-29: a and c0 (who holds a declared action) attack b together: +1 each."""
    state = coordinated(1)
    act(state, cmd(R6DeclareActions, "a", count=1))
    act(state, cmd(R6Attack, "a", target="b", coordinate_with=["c0"]))
    # a: 15 + 1 = 16 hits (damage 5D: 10, no effect); c0: 3D (2 declared) 12 + 1 = 13 misses.
    events = act(state, cmd(PassReaction, "b", window=1), [4, 4, 4, 3] + [2] * 5 + [4, 4, 4])
    first, second = of_type(events, AttackResolved)
    assert (first.attacker, first.roll.total, first.hit) == ("a", 16, True)
    assert (second.attacker, second.roll.total, second.hit) == ("c0", 13, False)
    assert all(m.rule == "R6-29" and m.value == 1 for m in first.roll.modifiers + second.roll.modifiers)
    assert one(events, DamageDealt).source == "a"


def test_r6_29_four_attackers_get_plus_1d_and_no_more_join() -> None:
    """R6-29: four attackers: +1D each; a fifth is refused (at most four benefit)."""
    state = coordinated(4)
    act(state, cmd(R6DeclareActions, "a", count=1))
    assert rejection(act(state, cmd(R6Attack, "a", target="b", coordinate_with=["c0", "c1", "c2", "c3"]))) == (
        "at most 4 attackers benefit from a Coordinated Attack (R6-29)"
    )
    events = act(state, cmd(R6Attack, "a", target="b", coordinate_with=["c0", "c1", "c2"]))
    assert one(events, ReactionWindowOpened).reactors[0].combatant == "b"
    events = act(state, cmd(PassReaction, "b", window=1), [2] * 5 + [2] * 4 * 3)
    assert [a.roll.details["code"] for a in of_type(events, AttackResolved)] == ["5D", "4D", "4D", "4D"]


def test_r6_29_allies_need_a_held_action() -> None:
    """R6-29: an ally without a declared action left cannot join."""
    state = start(setup(combatant("a", "red", (0, 0)), combatant("c", "red", (0, 1)), combatant("b", "blue", (3, 0))), [4, 4, 4, 1, 1, 1, 2, 2, 2])
    act(state, cmd(R6DeclareActions, "a", count=1))
    assert rejection(act(state, cmd(R6Attack, "a", target="b", coordinate_with=["c"]))) == (
        "c cannot join the Coordinated Attack: c has not declared its number of actions this round: send R6DeclareActions first (R6-05)"
    )
    assert rejection(act(state, cmd(R6Attack, "a", target="b", coordinate_with=["b"]))) == "b is not on a's side"


# --------------------------------------------------------------------------- R6-30


def test_r6_30_grapple_and_escape_by_opposed_fighting_once_per_action() -> None:
    """R6-30: a grabs b (Fighting vs Defense); b escapes with Strength: Fighting opposed by a's,
    one attempt per action; equal or more breaks free."""
    state = duel(b_at=(1, 0))
    act(state, cmd(R6DeclareActions, "a", count=1))
    window = one(act(state, cmd(R6Grapple, "a", target="b")), ReactionWindowOpened)
    assert window.reactors[0].reactions == ["dodge", "block"]
    events = act(state, cmd(PassReaction, "b", window=1), [5, 5, 5])  # 3D+1: 16 vs 16
    grabbed = one(events, ConditionApplied)
    assert (grabbed.condition, grabbed.details) == ("grappled", {"by": "a"}) and state.combatants["b"].grappled_by == "a"
    act(state, cmd(EndTurn, "a"))
    act(state, cmd(R6DeclareActions, "b", count=2))
    events = act(state, cmd(R6Escape, "b"), [3, 3, 3, 4, 4])  # hold 10; escape 2D+1 (2 declared) = 9
    hold, escape = of_type(events, Rolled)
    assert (hold.combatant, hold.roll.total, escape.roll.total, escape.roll.target, escape.success) == ("a", 10, 9, 10, False)
    assert rejection(act(state, cmd(R6Move, "b", path=[(2, 0)]))) == "b is grappled by a and cannot move: Escape first (R6-30)"
    events = act(state, cmd(R6Escape, "b"), [3, 3, 3, 5, 4])  # 10 vs 10: free
    assert one(events, ConditionRemoved).condition == "grappled" and state.combatants["b"].grappled_by == ""
    assert rejection(act(state, cmd(R6Escape, "b"))) == "b is not grappled (R6-30)"


# --------------------------------------------------------------------------- R6-31


def test_r6_31_full_auto() -> None:
    """R6-31: Full Action, +1D attack, +2D damage, 10 rounds, no Active Defense until the next turn."""
    state = duel(RIFLE_HAND)
    events = attack(state, [2, 2, 2, 2, 2], option="full_auto")
    miss = one(events, AttackResolved)
    assert (miss.roll.details["code"], miss.roll.rule) == ("5D", "R6-31")
    assert state.combatants["a"].ammo["rifle"] == 20 and "no_active_defense" in state.combatants["a"].conditions
    state = duel(RIFLE_HAND)
    events = attack(state, [5, 5, 5, 5, 5] + [1, 1, 1, 1, 1, 1, 1, 1], option="full_auto")
    assert one(events, DamageDealt).roll.details["code"] == "8D"


def test_r6_31_needs_full_auto_and_the_rounds() -> None:
    """R6-31: only Full Auto weapons, with enough rounds."""
    state = duel()
    act(state, cmd(R6DeclareActions, "a", count=1))
    assert rejection(act(state, cmd(R6Attack, "a", target="b", option="full_auto"))) == "the pistol has no Full Auto mode (R6-31)"
    state = duel({**RIFLE_HAND, "ammo": {"rifle": 9}})
    act(state, cmd(R6DeclareActions, "a", count=1))
    assert rejection(act(state, cmd(R6Attack, "a", target="b", option="full_auto"))) == (
        "the assault rifle has 9 rounds loaded, needs 10: Ready it to reload (R6-37)"
    )


# --------------------------------------------------------------------------- R6-32


def test_r6_32_heads_down_pins_everyone_in_the_area_who_fails_will_power() -> None:
    """R6-32: Full Action; the attack test becomes an Intimidation against everyone in the area;
    a target failing the opposed Will Power test seeks cover (prone) and loses its next action,
    and suffers the Intimidation effects its result points buy."""
    encounter = setup(
        combatant("a", "red", (0, 0), **RIFLE_HAND),
        combatant("b", "blue", (5, 0)),
        combatant("c", "blue", (6, 1), skills={"resolve": "6D"}),
        combatant("d", "blue", (8, 0)),
    )
    state = start(encounter, [5, 5, 5, 2, 2, 2, 2, 2, 2, 1, 1, 1])
    act(state, cmd(R6DeclareActions, "a", count=1))
    events = act(state, cmd(R6HeadsDown, "a", center=(5, 0)), [5, 5, 5, 5] + [2, 2, 2] + [4] * 6)
    resolved = {e.target: e for e in of_type(events, AttackResolved)}
    assert set(resolved) == {"b", "c"}  # d is outside the radius of 1
    assert (resolved["b"].hit, resolved["b"].roll.total, resolved["b"].defense.total, resolved["b"].details["result_points"]) == (True, 20, 6, 14)
    assert resolved["c"].hit is False and resolved["c"].defense.total == 24
    b = state.combatants["b"]
    assert "prone" in b.conditions and b.actions_lost == 1
    assert {"setback", "untrained", "stymied"} <= set(b.conditions) and b.fatigue == 1
    assert state.combatants["a"].ammo["rifle"] == 20
    assert "prone" not in state.combatants["c"].conditions


def test_r6_32_needs_automatic_or_rapid_fire() -> None:
    """R6-32: a weapon without automatic or rapid fire cannot lay down Heads Down fire."""
    state = duel(KNIFE_HAND)
    act(state, cmd(R6DeclareActions, "a", count=1))
    assert rejection(act(state, cmd(R6HeadsDown, "a", center=(3, 0)))) == "Heads Down needs automatic or rapid fire; the knife has neither (R6-32)"


# --------------------------------------------------------------------------- R6-33


def test_r6_33_lunge_extends_reach_by_one_at_minus_1d_attack_and_damage() -> None:
    """R6-33: a Reach weapon (spear, reach 2) lunges 3 spaces: -1D attack (4D -> 3D), -1D damage (5D -> 4D); a basic action."""
    state = duel({"weapons": [SPEAR], "readied": ["spear"]})
    act(state, cmd(R6DeclareActions, "a", count=1))
    assert rejection(act(state, cmd(R6Attack, "a", target="b"))) == "b is 3 spaces from a: out of reach for the spear (its reach is 2, R6-14)"
    events = attack(state, [6, 6, 5, 1] + [2, 2, 2, 2], option="lunge")
    hit = one(events, AttackResolved)
    assert (hit.roll.details["code"], hit.roll.total, hit.hit) == ("3D", 18, True)
    assert one(events, ActionTaken).slot == "action"
    assert one(events, DamageDealt).roll.details["code"] == "4D"


def test_r6_33_lunge_needs_reach() -> None:
    """R6-33: only weapons with the Reach property lunge."""
    state = duel(KNIFE_HAND)
    act(state, cmd(R6DeclareActions, "a", count=1))
    assert rejection(act(state, cmd(R6Attack, "a", target="b", option="lunge"))) == "a Lunge needs a melee weapon with Reach; the knife has none (R6-33)"


# --------------------------------------------------------------------------- R6-34


def test_r6_34_two_weapons_are_two_actions_and_the_off_hand_has_minus_1d() -> None:
    """R6-34: a weapon in each hand: two actions (-1D each), the off hand another -1D."""
    state = duel({"weapons": [PISTOL, PISTOL2], "readied": ["pistol", "pistol2"]})
    act(state, cmd(R6DeclareActions, "a", count=1))
    assert rejection(act(state, cmd(R6Attack, "a", target="b", off_hand_weapon="pistol2"))) == (
        "a has 1 of its 1 declared actions left this round, needs 2 (R6-05)"
    )
    state = duel({"weapons": [PISTOL, PISTOL2], "readied": ["pistol", "pistol2"]})
    events = attack(state, [2, 2, 2] + [2, 2], count=2, off_hand_weapon="pistol2")
    main, off = of_type(events, AttackResolved)
    assert (main.weapon, main.roll.details["code"]) == ("pistol", "3D")
    assert (off.weapon, off.roll.details["code"], off.roll.rule) == ("pistol2", "2D", "R6-34")
    assert len([e for e in events if isinstance(e, ActionTaken)]) == 2


def test_r6_34_ambidextrous_ignores_the_off_hand_penalty() -> None:
    """R6-34: the Ambidextrous talent removes the off-hand -1D."""
    state = duel({"weapons": [PISTOL, PISTOL2], "readied": ["pistol", "pistol2"], "talents": {"Ambidextrous": 1}})
    events = attack(state, [2, 2, 2] + [2, 2, 2], count=2, off_hand_weapon="pistol2")
    assert [a.roll.details["code"] for a in of_type(events, AttackResolved)] == ["3D", "3D"]


# --------------------------------------------------------------------------- R6-35


@pytest.mark.parametrize(("b_at", "weapon", "modifiers"), [
    ((3, 0), "pistol", [("R6-35", -5)]),
    ((1, 0), "pistol", [("R6-14", 5)]),
    ((1, 0), "knife", [("R6-35", 5)]),
])
def test_r6_35_prone_targets(b_at: tuple[int, int], weapon: str, modifiers: list) -> None:
    """R6-35: ranged attacks against a prone target -5 unless Point Blank; melee +5."""
    state = duel({"readied": ["pistol", "knife"]}, b_at=b_at, conditions={"prone": ""})
    attack_event = one(attack(state, [2, 2, 2, 2], weapon=weapon), AttackResolved)
    assert [(m.rule, m.value) for m in attack_event.roll.modifiers] == modifiers


def test_r6_35_dropping_is_free_standing_costs_an_action_and_crawling_is_half_move() -> None:
    """R6-35: drop prone (a Free Action, house default); crawl at half Move; stand up: an action."""
    state = duel()
    events = act(state, cmd(R6DropProne, "a"))
    assert one(events, ActionTaken).slot == "free" and "prone" in state.combatants["a"].conditions
    assert rejection(act(state, cmd(R6DropProne, "a"))) == "a is already prone"
    act(state, cmd(R6DeclareActions, "a", count=2))
    # Crawling halves Move 5 (the aux movement rules round it); a Partial Move is half of that: 1 Space.
    assert rejection(act(state, cmd(R6Move, "a", path=[(0, 1), (0, 2)], pace="partial"))).startswith("a Partial Move covers at most 1 Spaces")
    events = act(state, cmd(R6Stand, "a"))
    assert one(events, ActionTaken).action == "stand" and one(events, ConditionRemoved).condition == "prone"
    assert rejection(act(state, cmd(R6Stand, "a"))) == "a is not prone"


# --------------------------------------------------------------------------- R6-36


def test_r6_36_rapid_fire_adds_attack_and_damage_per_extra_round() -> None:
    """R6-36: 3 rounds from a semi-automatic pistol: +2 attack, +2D damage; a basic action
    (no more than half the 12 rounds)."""
    state = duel()
    events = attack(state, [4, 4, 4, 2] + [2] * 7, shots=3)
    assert one(events, ActionTaken).slot == "action"
    hit = one(events, AttackResolved)
    assert hit.roll.total == 16 and [(m.rule, m.value) for m in hit.roll.modifiers] == [("R6-36", 2)]
    assert one(events, DamageDealt).roll.details["code"] == "7D" and state.combatants["a"].ammo["pistol"] == 9


def test_r6_36_more_than_half_the_ammunition_is_a_full_action() -> None:
    """R6-36: 7 of 12 rounds is more than half: a Full Action; more rounds than loaded are refused."""
    state = duel()
    act(state, cmd(R6DeclareActions, "a", count=2))
    assert "a Full Action must be the round's only action (R6-07)" in rejection(act(state, cmd(R6Attack, "a", target="b", shots=7)))
    assert rejection(act(state, cmd(R6Attack, "a", target="b", shots=13))) == "the pistol has 12 rounds loaded, needs 13: Ready it to reload (R6-37)"
    state = duel(RIFLE_HAND)
    act(state, cmd(R6DeclareActions, "a", count=1))
    assert rejection(act(state, cmd(R6Attack, "a", target="b", shots=2))) == "Rapid Fire needs a semi-automatic weapon; the assault rifle is not (R6-36)"
    state = duel()
    events = attack(state, [1, 1, 1, 1], shots=7)
    assert one(events, ActionTaken).slot == "full"


# --------------------------------------------------------------------------- R6-37


def test_r6_37_ready_draws_and_reloads_as_an_action() -> None:
    """R6-37: drawing or reloading a weapon is an action."""
    state = duel({"ammo": {"pistol": 0}, "reloads": {"pistol": 1}})
    act(state, cmd(R6DeclareActions, "a", count=3))
    events = act(state, cmd(R6Ready, "a", weapon="pistol", reload=True))
    assert one(events, ActionTaken).rule == "R6-37"
    assert one(events, StateAdjusted).changes == {"ammo": {"pistol": 12}, "reloads": {"pistol": 0}}
    assert rejection(act(state, cmd(R6Ready, "a", weapon="pistol", reload=True))) == "the pistol is already fully loaded"
    events = act(state, cmd(R6Ready, "a", weapon="knife"))
    assert state.combatants["a"].readied == ["pistol", "knife"]
    assert rejection(act(state, cmd(R6Ready, "a", weapon="knife"))) == "the knife is already in hand"
    assert state.combatants["a"].actions_used == 2


def test_r6_37_no_reload_left() -> None:
    """R6-37: reloading needs a spare magazine."""
    state = duel({"ammo": {"pistol": 3}})
    act(state, cmd(R6DeclareActions, "a", count=1))
    assert rejection(act(state, cmd(R6Ready, "a", weapon="pistol", reload=True))) == "a has no reload left for the pistol"


# --------------------------------------------------------------------------- R6-38


def test_r6_38_surprise_no_active_defense_against_the_first_attack() -> None:
    """R6-38: a Surprised character cannot actively defend against the first attack on it;
    later attacks may be dodged; and its first-round initiative is -1D."""
    state = duel(surprised=True, faces=[4, 4, 4, 2, 2])
    assert state.combatants["b"].initiative == 4  # Perception 3D - 1D (R6-38)
    act(state, cmd(R6DeclareActions, "a", count=2))
    events = act(state, cmd(R6Attack, "a", target="b"), [2, 2, 2])
    assert not of_type(events, ReactionWindowOpened)
    first = one(events, AttackResolved)
    assert first.details["surprise_spent"] is True and first.details["defense"]["surprised"] is True
    assert state.combatants["b"].surprise_spent
    events = act(state, cmd(R6Attack, "a", target="b"))
    assert one(events, ReactionWindowOpened).reactors[0].reactions == ["dodge"]


# --------------------------------------------------------------------------- R6-39


def test_r6_39_sweep() -> None:
    """R6-39: Full Action, +1D attack, -3D damage (6D -> 3D), automatic or rapid fire only."""
    state = duel(RIFLE_HAND)
    events = attack(state, [4, 4, 4, 4, 4] + [2, 2, 2], option="sweep")
    hit = one(events, AttackResolved)
    assert (hit.roll.details["code"], hit.roll.rule, hit.hit) == ("5D", "R6-39", True)
    assert one(events, ActionTaken).slot == "full"
    assert one(events, DamageDealt).roll.details["code"] == "3D" and state.combatants["a"].ammo["rifle"] == 20
    state = duel(KNIFE_HAND)
    act(state, cmd(R6DeclareActions, "a", count=1))
    assert rejection(act(state, cmd(R6Attack, "a", target="b", option="sweep"))) == "a Sweep needs automatic or rapid fire; the knife has neither (R6-39)"
