"""RonD6 damage and injuries: R6-19 (damage vs DR), R6-20 (Toughness, DR,
Character and Fate Points), R6-21 (injury levels), R6-22 (conditions),
R6-23 (Massive Damage)."""

from __future__ import annotations

import pytest

from firelane.engine.core import SEQUENCER
from firelane.engine.systems.rond6 import rules
from firelane.projections.narration import Narrator
from firelane.engine.systems.rond6.schemas import (
    R6ActionsDeclared,
    R6Attack,
    R6DamageRolled,
    R6DeclareActions,
    R6Interact,
    R6MortalWoundCheck,
    R6RecoverStun,
    R6ResistanceBoosted,
)
from firelane.events.schemas import (
    AttackResolved,
    ClaimReaction,
    CombatantDown,
    ConditionApplied,
    ConditionRemoved,
    DamageDealt,
    EndTurn,
    PassReaction,
    ReactionWindowOpened,
)
from firelane.events.schemas import (
    TestRolled as Rolled,
)
from tests.systems.rond6.r6helpers import (
    STUNNER,
    act,
    cmd,
    combatant,
    of_type,
    one,
    rejection,
    setup,
    start,
)

HIT = [4, 4, 4, 4]  # firearms 4D = 16 against Passive Defense 16: a hit with no result points


def fight(a_sheet: dict | None = None, **b_sheet: object):
    """a (red, first) at (0,0), b (blue) at (3,0), c (blue, far away) keeps the fight going.

    Initiative: a has Perception 5D (so it acts first even when wounded), b 3D, c 3D with a
    complication; Wounds take dice off initiative too (R6-21: all tests)."""
    a_sheet = {"attributes": {"Perception": "5D"}, **(a_sheet or {})}
    a_dice = max(1, 5 - rules.wound_penalty_dice(int(a_sheet.get("wounds", 0))))
    b_dice = max(1, 3 - rules.wound_penalty_dice(int(b_sheet.get("wounds", 0))))  # type: ignore[arg-type]
    return start(
        setup(combatant("a", "red", (0, 0), **a_sheet), combatant("b", "blue", (3, 0), **b_sheet), combatant("c", "blue", (20, 10))),
        [4] * a_dice + [3] * b_dice + [1, 1, 1],  # c: Wild Die 1 removes itself and one other: 1
    )


def hit_b(state, faces: list[int], **fields: object) -> list:
    act(state, cmd(R6DeclareActions, "a", count=1))
    act(state, cmd(R6Attack, "a", target="b", **fields))
    return act(state, cmd(PassReaction, "b", window=1), faces)


# --------------------------------------------------------------------------- R6-19


@pytest.mark.parametrize(("damage", "outcome"), [(11, (False, 0)), (12, (True, 0)), (17, (True, 0)), (18, (True, 1)), (29, (True, 2)), (30, (True, 3))])
def test_r6_19_damage_against_resistance(damage: int, outcome: tuple[bool, int]) -> None:
    """R6-19: less than DR: nothing; equal or more: Stunned; each full 6 over: a Wound."""
    assert rules.damage_outcome(damage, 12) == outcome


def test_r6_19_less_than_resistance_has_no_effect() -> None:
    """R6-19: damage 11 against DR 12: no lasting effect."""
    state = fight()
    damage = one(hit_b(state, HIT + [2, 2, 2, 2, 3]), DamageDealt)
    assert (damage.amount, damage.details["outcome"], damage.details["resistance_total"]) == (0, "no effect", 12)
    assert state.combatants["b"].conditions == {}


def test_r6_19_equal_stuns_and_six_over_wounds() -> None:
    """R6-19: 12 vs 12 stuns; 18 vs 12 stuns and wounds once."""
    state = fight()
    events = hit_b(state, HIT + [2, 2, 2, 3, 3])
    assert one(events, DamageDealt).details["outcome"] == "Stunned"
    assert one(events, ConditionApplied).condition == "stunned" and state.combatants["b"].wounds == 0
    state = fight()
    events = hit_b(state, HIT + [4, 4, 4, 3, 3])
    damage = one(events, DamageDealt)
    assert (damage.amount, damage.details["margin"], damage.details["outcome"]) == (1, 6, "Stunned and 1 Wound")
    assert state.combatants["b"].wounds == 1 and "stunned" in state.combatants["b"].conditions


# --------------------------------------------------------------------------- R6-20


def test_r6_20_toughness_and_damage_resistance_total() -> None:
    """R6-20: Base Toughness = Strength x 4; DR = Toughness + armour + specials; a Fate Point
    doubles Toughness and armour but not flat modifiers; Character Point dice add on top."""
    assert rules.static_value("3D") == 12 and rules.static_value("3D+2") == 14  # pips add one each (house)
    total, parts = rules.damage_resistance("3D", "2D", bonus=1)
    assert (total, parts) == (21, {"toughness": 12, "armor": 8, "bonus": 1, "character_points": 0})
    assert rules.damage_resistance("3D", "2D", bonus=1, fate_point=True)[0] == 41
    assert rules.damage_resistance("3D", "0D", character_point_dice=9)[0] == 21


def test_r6_20_armour_adds_to_resistance_in_play() -> None:
    """R6-20: armour 1D+2 adds 6: 20 damage against DR 18: Stunned only."""
    state = fight(armor="1D+2")
    damage = one(hit_b(state, HIT + [4, 4, 4, 4, 4]), DamageDealt)
    assert damage.details["resistance"] == {"toughness": 12, "armor": 6, "bonus": 0, "character_points": 0}
    assert (damage.details["resistance_total"], damage.amount, damage.details["outcome"]) == (18, 0, "Stunned")


def test_r6_20_character_points_add_wild_dice_to_resistance() -> None:
    """R6-20: a hit opens a window to spend Character Points; each adds a Wild Die (6 explodes)."""
    state = fight(character_points=2)
    events = hit_b(state, HIT + [4, 4, 4, 4, 4])  # 20 damage
    window = one(events, ReactionWindowOpened)
    assert (window.trigger, window.rule, window.reactors[0].reactions) == ("hit", "R6-20", ["resist"])
    rolled = one(events, R6DamageRolled)  # the damage roll is recorded in the decision that rolled it
    assert (rolled.target, rolled.roll.total, rolled.rule) == ("b", 20, "R6-19") and not of_type(events, DamageDealt)
    events = act(state, cmd(ClaimReaction, "b", window=2, reaction="resist", options={"character_points": 1}), [6, 3])
    boost = one(events, R6ResistanceBoosted)
    assert boost.character_points == 1 and boost.roll.total == 9 and boost.roll.details["extra_wild_dice"] == [[6, 3]]
    damage = one(events, DamageDealt)
    assert (damage.details["resistance_total"], damage.details["outcome"], damage.roll) == (21, "no effect", None)
    assert state.combatants["b"].character_points == 1 and state.combatants["b"].resistance_boost == {}


def test_r6_20_a_one_on_a_character_point_die_is_a_complication() -> None:
    """R6-20: each Character Point Wild Die is rolled "applying the normal Wild Die rules":
    a 1 is a complication (R6-01, house default "remove": that die goes). 20 damage against
    DR 12 + (1 removed) + 5 = 17: Stunned, no Wound. Before, the 1 counted silently: DR 18."""
    state = fight(character_points=2)
    hit_b(state, HIT + [4, 4, 4, 4, 4])  # 20 damage
    events = act(state, cmd(ClaimReaction, "b", window=2, reaction="resist", options={"character_points": 2}), [1, 5])
    boost = one(events, R6ResistanceBoosted)
    assert boost.roll.total == 5 and boost.roll.details["complication"] is True
    assert boost.roll.details["removed"] == [0] and boost.roll.details["extra_wild_complications"] == [0]
    assert "complication: extra Wild Die 1 shows 1 and is removed" in boost.roll.notes
    damage = one(events, DamageDealt)
    assert (damage.details["resistance_total"], damage.details["outcome"], damage.amount) == (17, "Stunned", 0)
    assert damage.details["resistance"]["character_points"] == 5
    # The narration shows the same numbers: the 1 dropped, +5 added.
    line = Narrator(colour=False).line(state.version, boost, state)
    assert "B spends 2 Character Points to resist (+5) (R6-20)" in line
    assert "d6:1(dropped) d6:5 = 5" in line and "complication: extra Wild Die 1 shows 1 and is removed" in line


def test_r6_20_a_fate_point_doubles_toughness_and_armour() -> None:
    """R6-20: 30 damage against DR 12 would be 3 Wounds; with a Fate Point DR is 24: Stunned, 1 Wound."""
    state = fight(fate_points=1)
    hit_b(state, HIT + [6, 6, 6, 6, 6, 1])  # Wild 6 explodes into a 1: 31
    events = act(state, cmd(ClaimReaction, "b", window=2, reaction="resist", options={"fate_point": True}))
    damage = one(events, DamageDealt)
    assert (damage.details["damage_total"], damage.details["resistance_total"], damage.amount) == (31, 24, 1)
    assert state.combatants["b"].fate_points == 0


def test_r6_20_spending_more_than_you_have_is_refused() -> None:
    """R6-20: clear reasons when the points are not there."""
    state = fight(character_points=2)
    hit_b(state, HIT + [4, 4, 4, 4, 4])
    claim = lambda **o: act(state, cmd(ClaimReaction, "b", window=2, reaction="resist", options=o))  # noqa: E731
    assert rejection(claim(character_points=3)) == "b has 2 Character Points, not 3 (R6-20)"
    assert rejection(claim(fate_point=True)) == "b has no Fate Point (R6-20)"
    assert rejection(claim()) == "spend at least one Character Point or a Fate Point, or pass"


def test_r6_20_no_window_without_points_or_when_confused() -> None:
    """R6-20 / R6-22: nothing to spend (or Confused): the damage applies at once."""
    state = fight(character_points=2, conditions={"confused": ""})
    events = hit_b(state, [4, 4, 4, 4] + [4, 4, 4, 4, 4])  # 16 vs 16: a hit, 20 damage
    assert not of_type(events, ReactionWindowOpened) and one(events, DamageDealt).details["damage_total"] == 20


# --------------------------------------------------------------------------- R6-21


def test_r6_21_wound_penalties() -> None:
    """R6-21: 1-2 Wounds -1D each on all tests; Incapacitated (conscious) -3D."""
    assert [rules.wound_penalty_dice(w) for w in range(4)] == [0, 1, 2, 3]
    assert rules.wound_penalty_dice(0, incapacitated_conscious=True) == 3
    assert [rules.injury_level(w) for w in range(6)] == ["healthy", "wounded", "wounded", "incapacitated", "mortally wounded", "dead"]


def test_r6_21_wounds_reduce_the_wounded_characters_tests() -> None:
    """R6-21: an attacker with 2 Wounds rolls firearms 4D - 2D."""
    state = fight(a_sheet={"wounds": 2})
    attack = one(hit_b(state, [5, 5]), AttackResolved)
    assert attack.roll.details["code"] == "2D"
    assert attack.roll.details["dice_modifiers"] == [{"source": "2 Wounds", "rule": "R6-21", "dice": -2}]


def test_r6_21_third_wound_incapacitates_unless_a_standard_test_succeeds() -> None:
    """R6-21: at 3 Wounds a Standard Stamina or Will Power test (the better) keeps the character conscious at -3D."""
    state = fight(wounds=2)
    events = hit_b(state, HIT + [4, 4, 4, 3, 3] + [5, 5, 5])
    test = one(events, Rolled)
    assert (test.test, test.success, test.roll.total, test.roll.target, test.details["attribute"]) == ("incapacitated", True, 15, 15, "Stamina")
    assert "incapacitated" in state.combatants["b"].conditions and not state.combatants["b"].out_of_fight
    state = fight(wounds=2)
    events = hit_b(state, HIT + [4, 4, 4, 3, 3] + [2, 2, 2])
    assert one(events, CombatantDown).reason == "Incapacitated (3 Wounds): failed to stay conscious"
    assert "unconscious" in state.combatants["b"].conditions


def test_r6_21_fourth_wound_is_mortal_and_the_minutes_are_rolled() -> None:
    """R6-21: 4 Wounds: Mortally Wounded and unconscious; each minute roll Strength; less than
    the minutes since the wound and the character dies."""
    state = fight(wounds=3)
    events = hit_b(state, HIT + [4, 4, 4, 3, 3])
    assert {e.condition for e in of_type(events, ConditionApplied)} >= {"mortally_wounded", "unconscious"}
    assert one(events, CombatantDown).reason == "Mortally Wounded (4 Wounds): unconscious"
    events = act(state, cmd(R6MortalWoundCheck, SEQUENCER, combatant="b"), [2, 2, 2])
    assert one(events, Rolled).success and state.combatants["b"].mortal_minutes == 1
    state.combatants["b"].mortal_minutes = 9
    events = act(state, cmd(R6MortalWoundCheck, SEQUENCER, combatant="b"), [1, 2, 2])  # complication: 2 < 10
    assert not one(events, Rolled).success and state.combatants["b"].dead
    assert rejection(act(state, cmd(R6MortalWoundCheck, SEQUENCER, combatant="b"))) == "b is already dead"
    assert rejection(act(state, cmd(R6MortalWoundCheck, "a", combatant="b"))) == "R6MortalWoundCheck is the GM's (sequencer's) command"
    assert rejection(act(state, cmd(R6MortalWoundCheck, SEQUENCER, combatant="a"))) == "a is not Mortally Wounded"


def test_r6_21_fifth_wound_kills() -> None:
    """R6-21: 5 Wounds: the character dies immediately."""
    state = fight(wounds=3)
    events = hit_b(state, HIT + [6, 6, 4, 4, 4, 3])  # Wild 6 -> 3: 27 vs 12: 2 Wounds -> 5
    assert one(events, CombatantDown).reason == "killed (5 Wounds)" and state.combatants["b"].dead


# --------------------------------------------------------------------------- R6-22


def test_r6_22_stunned_and_fatigued_hinder_physical_tests_cumulatively() -> None:
    """R6-22: Stunned -1D, each Fatigue -1D to physical tests (firearms is Agility), with Wounds."""
    state = fight(a_sheet={"conditions": {"stunned": ""}, "fatigue": 1, "wounds": 1})
    attack = one(hit_b(state, [5]), AttackResolved)
    assert attack.roll.details["code"] == "1D"
    assert [m["source"] for m in attack.roll.details["dice_modifiers"]] == ["1 Wound", "Stunned (physical test)", "Fatigued x1 (physical test)"]


def test_r6_22_stunned_recovers_with_a_fortitude_test() -> None:
    """R6-22: a Standard Stamina: Fortitude test (an action) removes Stunned."""
    state = fight(a_sheet={"conditions": {"stunned": ""}})
    act(state, cmd(R6DeclareActions, "a", count=1))
    events = act(state, cmd(R6RecoverStun, "a"), [6, 6, 3])  # Stamina 3D - 1D (Stunned): Wild 6 -> 3, 6 = 15
    assert one(events, Rolled).success and one(events, ConditionRemoved).condition == "stunned"
    assert rejection(act(state, cmd(R6RecoverStun, "a"))) == "a is not Stunned"


def test_r6_22_stunned_recovers_after_a_full_round_without_actions() -> None:
    """R6-22 / R6-21: one full round taking no actions removes Stunned."""
    state = fight()
    hit_b(state, HIT + [2, 2, 2, 3, 3])  # b Stunned in round 1
    act(state, cmd(EndTurn, "a"))
    act(state, cmd(EndTurn, "b"))
    act(state, cmd(EndTurn, "c"), [4] * 5 + [3, 3, 3, 1, 1, 1])  # round 2 (Stunned does not touch Perception)
    assert "stunned" in state.combatants["b"].conditions
    for actor in ("a", "b"):
        act(state, cmd(EndTurn, actor))
    events = act(state, cmd(EndTurn, "c"), [4] * 5 + [3, 3, 3, 1, 1, 1])
    removed = one(events, ConditionRemoved)
    assert (removed.combatant, removed.condition, removed.reason) == ("b", "stunned", "a full round without actions")


def test_r6_22_fatigue_beyond_three_knocks_out() -> None:
    """R6-22: up to 3 Fatigue conditions; a fourth and the character falls unconscious."""
    state = fight(a_sheet={"skills": {"persuasion (trick)": "4D"}}, fatigue=3)
    act(state, cmd(R6DeclareActions, "a", count=1))
    act(state, cmd(R6Interact, "a", target="b", interaction="trick", effects=[2]))
    events = act(state, cmd(PassReaction, "b", window=1), [5, 5, 5, 5])
    assert state.combatants["b"].fatigue == 4
    assert one(events, CombatantDown).reason == "unconscious from Fatigue (4 levels)"


def test_r6_22_stymied_loses_the_wild_die_reroll_and_untrained_rolls_the_attribute() -> None:
    """R6-22: Stymied: a 6 on the Wild Die is not rerolled; Untrained: attribute only (Agility 3D)."""
    state = fight(a_sheet={"conditions": {"stymied": "", "untrained": ""}})
    attack = one(hit_b(state, [6, 5, 5, 2, 2, 2, 2, 2]), AttackResolved)
    assert attack.roll.details["code"] == "3D" and attack.roll.total == 16 and attack.roll.details["exploded"] == 0
    assert "Stymied (R6-22): the Wild Die's 6 is not rerolled" in attack.roll.notes
    assert "Untrained (R6-22): attribute only" in attack.roll.notes


def test_r6_22_confused_is_minus_five() -> None:
    """R6-22: Confused: -5 to tests."""
    state = fight(a_sheet={"conditions": {"confused": ""}})
    attack = one(hit_b(state, [5, 5, 5, 5]), AttackResolved)
    assert attack.roll.total == 15 and not attack.hit
    assert [(m.source, m.rule, m.value) for m in attack.roll.modifiers] == [("Confused", "R6-22", -5)]


def test_r6_22_stun_damage_takes_two_wounds_off_and_knocks_out_for_minutes() -> None:
    """R6-22 Stun Damage: Wounds -2 (minimum Stunned); unconscious for (damage - DR) minutes."""
    state = fight(a_sheet={"weapons": [STUNNER], "readied": ["stunner"]})
    state.combatants["b"].position = (1, 0)
    events = hit_b(state, [4, 4, 4, 4] + [5, 5, 5, 5, 5])  # 16 + 5 point blank; 25 vs 12: 2 Wounds -> 0
    damage = one(events, DamageDealt)
    assert (damage.amount, damage.details["stun_damage"], damage.details["margin"]) == (0, True, 13)
    knocked = [e for e in of_type(events, ConditionApplied) if e.condition == "unconscious"][0]
    assert knocked.until == "minutes:13" and knocked.details["minutes"] == 13
    assert one(events, CombatantDown).reason == "knocked out by Stun Damage for 13 minutes"
    assert state.combatants["b"].wounds == 0


# --------------------------------------------------------------------------- R6-23


def test_r6_23_massive_damage_limits_the_next_turn_to_one_action() -> None:
    """R6-23: 2+ Wounds from one attack: until the end of its next turn one action only,
    unless a Standard Stamina: Fortitude test at the start of that turn succeeds."""
    state = fight()
    events = hit_b(state, HIT + [5, 5, 5, 5, 4])  # 24 vs 12: 2 Wounds
    massive = [e for e in of_type(events, ConditionApplied) if e.condition == "massive_damage"][0]
    assert (massive.rule, massive.until) == ("R6-23", "end_of_next_turn")
    # b's turn: Fortitude (Stamina 3D - 2D Wounds - 1D Stunned = 1D floor): 2 < 15, still reeling.
    events = act(state, cmd(EndTurn, "a"), [2])
    test = one(events, Rolled)
    assert (test.test, test.success, test.roll.details["code"]) == ("massive damage", False, "1D")
    assert rejection(act(state, cmd(R6DeclareActions, "b", count=2))) == "b can declare at most 1 actions (Massive Damage allows one action (R6-23))"
    act(state, cmd(R6DeclareActions, "b", count=1))
    removed = one(act(state, cmd(EndTurn, "b")), ConditionRemoved)
    assert (removed.condition, removed.reason) == ("massive_damage", "end of its turn")


def test_r6_23_a_fortitude_test_shrugs_massive_damage_off() -> None:
    """R6-23: a successful Standard Stamina: Fortitude test at the start of the turn ends the restriction."""
    state = fight()
    hit_b(state, HIT + [5, 5, 5, 5, 4])
    events = act(state, cmd(EndTurn, "a"), [6, 6, 3])  # 1D: Wild 6, 6, 3 = 15
    assert one(events, Rolled).success
    assert one(events, ConditionRemoved).condition == "massive_damage"
    assert one(act(state, cmd(R6DeclareActions, "b", count=3)), R6ActionsDeclared).count == 3
