"""RonD6 attacks and defenses: R6-13 (attack vs Defense, result points), R6-14
(range bands, reach), R6-15 (Passive Defense), R6-16 (Active Defense), R6-17
(Full Defense), R6-18 (interaction attacks)."""

from __future__ import annotations

import pytest

from firelane.engine.systems.rond6 import rules
from firelane.engine.systems.rond6.schemas import (
    R6ActionsDeclared,
    R6Attack,
    R6DeclareActions,
    R6Defend,
    R6DefenseRolled,
    R6Interact,
    R6Ready,
)
from firelane.events.schemas import (
    AttackResolved,
    ClaimReaction,
    ConditionApplied,
    CoverFeature,
    DamageDealt,
    EndTurn,
    PassReaction,
    ReactionWindowOpened,
    StateAdjusted,
    Terrain,
    Wall,
)
from tests.systems.rond6.r6helpers import (
    KNIFE,
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


def duel(b_at: tuple[int, int] = (3, 0), terrain: Terrain | None = None, a_sheet: dict | None = None, **b_sheet: object):
    """a (red, acts first) at (0,0) against b (blue)."""
    return start(setup(combatant("a", "red", (0, 0), **(a_sheet or {})), combatant("b", "blue", b_at, **b_sheet), terrain=terrain),
                 [4, 4, 4, 2, 2, 2])


def attack(state, faces: list[int], **fields: object) -> list:
    """a declares one action and attacks b; b passes its defense window."""
    act(state, cmd(R6DeclareActions, "a", count=1))
    events = act(state, cmd(R6Attack, "a", target="b", **fields))
    if state.window is None:
        return events
    return act(state, cmd(PassReaction, "b", window=state.window.window), faces)


# --------------------------------------------------------------------------- R6-13


def test_r6_13_an_attack_that_beats_defense_hits_and_the_excess_is_result_points() -> None:
    """R6-13: firearms 4D = 20 against Passive Defense 16: a hit with 4 Result Points, which
    increase the damage (house default ``result_points_to_damage``): 10 + 4."""
    state = duel()
    events = attack(state, [5, 5, 5, 5, 2, 2, 2, 2, 2])
    hit = one(events, AttackResolved)
    assert (hit.hit, hit.roll.total, hit.roll.target, hit.details["result_points"]) == (True, 20, 16, 4)
    assert hit.roll.rule == "R6-13" and hit.details["defense"]["kind"] == "passive"
    damage = one(events, DamageDealt)
    assert damage.details["damage_total"] == 14
    assert [(m.source, m.rule, m.value) for m in damage.roll.modifiers] == [("result points", "R6-13", 4)]


def test_r6_13_result_points_can_be_kept_out_of_damage() -> None:
    """R6-13: with ``result_points_to_damage`` off, the damage is the roll alone."""
    state = start(setup(combatant("a", "red", (0, 0)), combatant("b", "blue", (3, 0)), result_points_to_damage=False), [4, 4, 4, 2, 2, 2])
    damage = one(attack(state, [5, 5, 5, 5, 2, 2, 2, 2, 2]), DamageDealt)
    assert damage.details["damage_total"] == 10 and damage.roll.modifiers == []


def test_r6_13_equal_to_defense_hits_with_no_result_points() -> None:
    """R6-13: equal or more hits."""
    state = duel()
    hit = one(attack(state, [4, 4, 4, 4, 2, 2, 2, 2, 2]), AttackResolved)
    assert (hit.hit, hit.roll.total, hit.details["result_points"]) == (True, 16, 0)


def test_r6_13_less_than_defense_misses() -> None:
    """R6-13: below the Defense the attack misses: no damage is rolled."""
    state = duel()
    events = attack(state, [4, 4, 4, 3])
    assert not one(events, AttackResolved).hit and not of_type(events, DamageDealt)


def test_r6_13_bad_targets_and_weapons_are_refused() -> None:
    """R6-13: clear reasons for impossible attacks."""
    state = duel()
    act(state, cmd(R6DeclareActions, "a", count=1))
    assert rejection(act(state, cmd(R6Attack, "a", target="nobody"))) == "unknown combatant 'nobody'"
    assert rejection(act(state, cmd(R6Attack, "a", target="a"))) == "a cannot target itself"
    assert rejection(act(state, cmd(R6Attack, "a", target="b", weapon="bazooka"))) == "a has no weapon 'bazooka'; it has: pistol, knife, unarmed"
    assert rejection(act(state, cmd(R6Attack, "a", target="b", weapon="knife"))) == "a's knife is not in hand: Ready it first (R6-37)"
    assert rejection(act(state, cmd(R6Attack, "a", target="b", option="wild"))).startswith("unknown attack option 'wild'")
    state.combatants["b"].out_of_fight = True
    assert rejection(act(state, cmd(R6Attack, "a", target="b"))) == "b is already out of the fight"


def test_r6_13_an_empty_gun_cannot_fire() -> None:
    """R6-13 with R6-37: no rounds loaded, no shot."""
    state = duel(a_sheet={"ammo": {"pistol": 0}})
    act(state, cmd(R6DeclareActions, "a", count=1))
    assert rejection(act(state, cmd(R6Attack, "a", target="b"))) == "the pistol has 0 rounds loaded, needs 1: Ready it to reload (R6-37)"


# --------------------------------------------------------------------------- R6-14


def test_r6_14_range_bands() -> None:
    """R6-14: Point Blank 1 space, then Short/Medium/Long by the weapon; beyond Long: None."""
    ranges = [5, 15, 30]
    assert [rules.range_band(d, ranges) for d in (0, 1, 2, 5, 6, 15, 16, 30, 31)] == [
        "point_blank", "point_blank", "short", "short", "medium", "medium", "long", "long", None,
    ]
    assert rules.RANGE_MODIFIER == {"point_blank": 5, "short": 0, "medium": -5, "long": -10}


@pytest.mark.parametrize(("spaces", "band", "modifier"), [(1, "point_blank", 5), (10, "medium", -5), (20, "long", -10)])
def test_r6_14_range_modifiers_apply_to_the_attack(spaces: int, band: str, modifier: int) -> None:
    """R6-14: +5 Point Blank, -5 Medium, -10 Long on the attack test."""
    state = duel(b_at=(spaces, 0))
    hit = one(attack(state, [4, 4, 4, 4] + ([2] * 5 if 16 + modifier >= 16 else [])), AttackResolved)
    assert hit.details["range_band"] == band
    assert [(m.rule, m.value) for m in hit.roll.modifiers] == [("R6-14", modifier)]
    assert hit.roll.total == 16 + modifier


def test_r6_14_beyond_long_range_and_out_of_sight_are_refused() -> None:
    """R6-14: targets beyond Long range cannot be attacked; walls block the line of fire."""
    state = duel(b_at=(31, 0), terrain=Terrain(width=40))
    act(state, cmd(R6DeclareActions, "a", count=1))
    assert rejection(act(state, cmd(R6Attack, "a", target="b"))) == "b is 31 spaces away, beyond the pistol's Long range of 30 (R6-14)"
    state = duel(terrain=Terrain(walls=[Wall(2, 0)]))
    act(state, cmd(R6DeclareActions, "a", count=1))
    assert rejection(act(state, cmd(R6Attack, "a", target="b"))) == "a has no line of sight to b"


def test_r6_14_unarmed_only_at_point_blank_and_reach_extends_melee() -> None:
    """R6-14: unarmed attacks only at Point Blank; melee 1 space unless the weapon has Reach."""
    state = duel(b_at=(2, 0), a_sheet={"weapons": [KNIFE, SPEAR], "readied": ["knife", "spear"]})
    act(state, cmd(R6DeclareActions, "a", count=1))
    assert rejection(act(state, cmd(R6Attack, "a", target="b", weapon="unarmed"))) == (
        "b is 2 spaces from a: out of reach for the unarmed (unarmed attacks only reach Point Blank (1 space), R6-14)"
    )
    assert rejection(act(state, cmd(R6Attack, "a", target="b", weapon="knife"))) == (
        "b is 2 spaces from a: out of reach for the knife (its reach is 1, R6-14)"
    )
    events = act(state, cmd(R6Attack, "a", target="b", weapon="spear"))
    assert one(events, ReactionWindowOpened).reactors[0].reactions == ["dodge"]  # b holds no melee weapon to parry


# --------------------------------------------------------------------------- R6-15


def test_r6_15_passive_defense_is_standard_plus_agility_minus_two_plus_modifiers() -> None:
    """R6-15: Standard 15 + (Agility 4D - 2) + 2 (a shield) = 19."""
    assert rules.passive_defense(15, 3) == 16
    assert rules.passive_defense(15, 4, bonus=2) == 19
    state = duel(attributes={"Agility": "4D+2"}, passive_defense_bonus=2)
    hit = one(attack(state, [4, 4, 4, 6]), AttackResolved)  # 4+4+4+6 (Wild 4) = 18 < 19
    assert hit.details["defense"]["value"] == 19 and not hit.hit
    assert [p["rule"] for p in hit.details["defense"]["parts"]] == ["R6-15", "R6-15", "R6-15"]


def test_r6_15_cover_raises_passive_defense_and_total_cover_blocks() -> None:
    """R6-15 (modifiers): light cover +5, heavy +10 (house defaults); total cover cannot be shot through."""
    terrain = Terrain(cover=[CoverFeature(x=3, y=0, level="heavy", facing=[(-1, 0)])])
    state = duel(terrain=terrain)
    hit = one(attack(state, [6, 5, 5, 5, 5, 2, 2, 2, 2, 2]), AttackResolved)  # Wild 6 explodes to 5: 26 vs 15+1+10
    assert hit.details["defense"]["value"] == 26 and hit.hit is True
    state = duel(terrain=Terrain(cover=[CoverFeature(x=2, y=0, level="total")]))
    act(state, cmd(R6DeclareActions, "a", count=1))
    assert rejection(act(state, cmd(R6Attack, "a", target="b"))) == "b is behind total cover from a"


# --------------------------------------------------------------------------- R6-16


def test_r6_16_active_defense_is_an_opposed_roll_that_replaces_passive_defense() -> None:
    """R6-16: b dodges (an action: it declares 2 off its turn, so -1D): dodge 3D = 15
    replaces Passive 16; a's 16 equals or beats it: hit."""
    state = duel()
    act(state, cmd(R6DeclareActions, "a", count=1))
    window = one(act(state, cmd(R6Attack, "a", target="b")), ReactionWindowOpened)
    assert (window.trigger, window.rule, window.reactors[0].reactions) == ("attack_declared", "R6-16", ["dodge"])
    events = act(state, cmd(ClaimReaction, "b", window=1, reaction="dodge"), [5, 5, 5, 4, 4, 4, 4, 2, 2, 2, 2, 2])
    declared = one(events, R6ActionsDeclared)
    assert (declared.combatant, declared.count, declared.off_turn) == ("b", 2, True)
    defense = one(events, R6DefenseRolled)
    assert defense.roll.details["code"] == "3D" and defense.roll.total == 15
    assert defense.roll.details["dice_modifiers"][0]["rule"] == "R6-05"
    hit = one(events, AttackResolved)
    assert hit.hit and hit.details["defense"] == {"kind": "active", "skill": "dodge", "value": 15, "rule": "R6-16"}
    assert state.combatants["b"].actions_used == 1


def test_r6_16_a_winning_defender_adds_its_result_points_to_passive_defense() -> None:
    """R6-16: dodge 17 beats the attack 16: miss, and +1 to Passive Defense until b's next turn."""
    state = duel()
    act(state, cmd(R6DeclareActions, "a", count=2))
    act(state, cmd(R6Attack, "a", target="b"))
    events = act(state, cmd(ClaimReaction, "b", window=1, reaction="dodge", options={"declare": 1}), [5, 6, 6, 6, 4, 4, 4])
    # b declared 1: dodge 4D with the Wild Die 5: 5+6+6+6 = 23; a: 3D (2 declared) 4+4+4 = 12: missed by 11
    assert one(events, R6DefenseRolled).roll.total == 23
    miss = one(events, AttackResolved)
    assert not miss.hit and miss.roll.total == 12
    bonus = one(events, StateAdjusted)
    assert bonus.changes == {"defense_bonus": 11} and bonus.rule == "R6-16"


def test_r6_16_the_defense_stands_until_the_defenders_next_turn() -> None:
    """R6-16: a second attack meets the standing dodge without a new window; b's turn ends it."""
    state = duel()
    act(state, cmd(R6DeclareActions, "a", count=2))
    act(state, cmd(R6Attack, "a", target="b"))
    act(state, cmd(ClaimReaction, "b", window=1, reaction="dodge"), [3, 3, 3, 2, 2, 2])  # dodge 9, a misses with 6
    assert state.combatants["b"].defense_bonus == 3
    events = act(state, cmd(R6Attack, "a", target="b"), [3, 3, 2])  # no new window: 8 vs the standing 9
    assert not of_type(events, ReactionWindowOpened)
    second = one(events, AttackResolved)
    assert not second.hit and second.details["defense"] == {"kind": "active", "skill": "dodge", "value": 9, "rule": "R6-16"}
    assert state.combatants["b"].active_defense == {"dodge": 9}
    events = act(state, cmd(EndTurn, "a"))
    cleared = one(events, StateAdjusted)
    assert cleared.changes == {"active_defense": {}, "defense_bonus": 0} and cleared.rule == "R6-16"
    assert state.active == "b" and state.combatants["b"].active_defense == {}


def test_r6_16_parry_is_offered_against_melee_weapons_and_block_against_unarmed() -> None:
    """R6-16 table: Dodge against anything, Parry (Melee Weapons, with a melee weapon in hand) against
    melee weapons, Block (Fighting) against unarmed attacks."""
    state = duel(b_at=(1, 0), a_sheet={"readied": ["knife"]}, readied=["knife"])
    act(state, cmd(R6DeclareActions, "a", count=2))
    assert one(act(state, cmd(R6Attack, "a", target="b")), ReactionWindowOpened).reactors[0].reactions == ["dodge", "parry"]
    act(state, cmd(PassReaction, "b", window=1), [1, 1, 1])  # 3D (-1D), Wild Die 1: complication
    assert one(act(state, cmd(R6Attack, "a", target="b", weapon="unarmed")), ReactionWindowOpened).reactors[0].reactions == ["dodge", "block"]


def test_r6_16_no_window_without_an_action_to_spend() -> None:
    """R6-16: Active Defense spends an action; a defender with none left gets no window."""
    state = start(setup(combatant("a", "red", (0, 0)), combatant("b", "blue", (3, 0))), [2, 2, 2, 4, 4, 4])
    assert state.active == "b"
    act(state, cmd(R6DeclareActions, "b", count=1))
    assert rejection(act(state, cmd(R6Defend, "b", skill="parry"))) == "b has no melee weapon in hand to parry with (R6-16)"
    act(state, cmd(R6Ready, "b", weapon="knife"))
    act(state, cmd(EndTurn, "b"))
    act(state, cmd(R6DeclareActions, "a", count=1))
    events = act(state, cmd(R6Attack, "a", target="b"), [2, 2, 2, 2])
    assert not of_type(events, ReactionWindowOpened)
    assert one(events, AttackResolved).details["defense"]["kind"] == "passive"


# --------------------------------------------------------------------------- R6-17


def test_r6_17_full_defense_adds_2d_and_is_a_full_action() -> None:
    """R6-17: Full Defense: a Full Action, +2D to the Active Defense (dodge 4D + 2D = 6D)."""
    state = start(setup(combatant("a", "red", (0, 0)), combatant("b", "blue", (3, 0))), [2, 2, 2, 4, 4, 4])
    assert state.active == "b"
    act(state, cmd(R6DeclareActions, "b", count=1))
    events = act(state, cmd(R6Defend, "b", skill="dodge", full=True), [3, 3, 3, 3, 3, 3])
    defense = one(events, R6DefenseRolled)
    assert (defense.full, defense.rule, defense.roll.details["code"], defense.roll.total) == (True, "R6-17", "6D", 18)
    assert defense.roll.details["dice_modifiers"] == [{"source": "Full Defense", "rule": "R6-17", "dice": 2}]
    act(state, cmd(EndTurn, "b"))
    act(state, cmd(R6DeclareActions, "a", count=1))
    events = act(state, cmd(R6Attack, "a", target="b"), [5, 4, 4, 4])  # 17 < 18, no window needed
    assert not of_type(events, ReactionWindowOpened)
    miss = one(events, AttackResolved)
    assert not miss.hit and miss.details["defense"]["value"] == 18
    assert [e.changes for e in of_type(events, StateAdjusted)] == [{"ammo": {"pistol": 11}}, {"defense_bonus": 1}]
    assert state.combatants["b"].defense_bonus == 1


# --------------------------------------------------------------------------- R6-18


def test_r6_18_interaction_attack_buys_effects_with_result_points() -> None:
    """R6-18: Intimidation (Persuasion) 25 vs Resolve passive 16: 9 result points buy
    Setback + lose the next action (6) and Untrained (3) — house choice, dearest first."""
    state = duel(a_sheet={"skills": {"persuasion (intimidation)": "5D"}})
    act(state, cmd(R6DeclareActions, "a", count=1))
    window = one(act(state, cmd(R6Interact, "a", target="b", interaction="intimidation")), ReactionWindowOpened)
    assert window.reactors[0].reactions == ["resolve"]
    events = act(state, cmd(PassReaction, "b", window=1), [5, 5, 5, 5, 5])
    hit = one(events, AttackResolved)
    assert (hit.kind, hit.hit, hit.roll.total, hit.details["result_points"]) == ("interaction", True, 25, 9)
    assert hit.details["defense"]["value"] == 16
    applied = {(e.condition, e.details["cost"]) for e in of_type(events, ConditionApplied)}
    assert applied == {("setback", 6), ("untrained", 3)}
    b = state.combatants["b"]
    assert b.readied == [] and b.actions_lost == 1  # Setback: dropped its pistol; next action lost
    act(state, cmd(EndTurn, "a"))
    declared = one(act(state, cmd(R6DeclareActions, "b", count=2)), R6ActionsDeclared)
    assert declared.lost == 1 and state.combatants["b"].actions_used == 1


def test_r6_18_chosen_effects_and_fatigue() -> None:
    """R6-18: the attacker may name the effects: Stymied (1) and Fatigued (2) for 3 points."""
    state = duel(a_sheet={"skills": {"persuasion (taunt)": "4D"}})
    act(state, cmd(R6DeclareActions, "a", count=1))
    act(state, cmd(R6Interact, "a", target="b", interaction="taunt", effects=[1, 2]))
    events = act(state, cmd(PassReaction, "b", window=1), [5, 5, 5, 4])  # 19 vs 16: 3 points
    assert [(e.condition, e.until) for e in of_type(events, ConditionApplied)] == [("stymied", "end_of_next_turn"), ("fatigued", "")]
    assert state.combatants["b"].fatigue == 1


def test_r6_18_effects_table_and_house_choice() -> None:
    """R6-18: costs 1..6; one effect at most once per attack; the house buys the dearest first."""
    assert rules.INTERACTION_EFFECTS[6] == ("setback", "lose_action")
    assert rules.choose_effects(0) == [] and rules.choose_effects(5) == [5] and rules.choose_effects(7) == [6, 1]
    assert rules.choose_effects(21) == [6, 3, 2, 1]  # 5 and 4 would repeat Setback / losing the action
    assert rules.validate_effects([6, 4], 10) == "the same effect may not be applied twice in one interaction attack"
    assert rules.validate_effects([3, 2], 4) == "effects cost 5 result points but the attack has 4"


def test_r6_18_bad_interactions_are_refused() -> None:
    """R6-18: unknown interactions, repeated effects, out of reach."""
    state = duel()
    act(state, cmd(R6DeclareActions, "a", count=1))
    assert rejection(act(state, cmd(R6Interact, "a", target="b", interaction="flirt"))).startswith("unknown interaction 'flirt'")
    assert rejection(act(state, cmd(R6Interact, "a", target="b", interaction="trick", effects=[6, 5]))) == (
        "the same effect may not be applied twice in one interaction attack (R6-18)"
    )
    assert rejection(act(state, cmd(R6Interact, "a", target="b", interaction="maneuver"))) == "b is 3 spaces away; a maneuver reaches 1 (R6-18)"
