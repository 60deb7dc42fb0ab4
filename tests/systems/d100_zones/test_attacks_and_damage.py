"""D100Z-04 attack results, D100Z-05 dodge, D100Z-06 damage, D100Z-07 brawling bonus, D100Z-08 STR bonus."""

from __future__ import annotations

import pytest

from firelane.engine.systems.d100_zones import rules
from firelane.engine.systems.d100_zones.schemas import D100ZAttack
from firelane.events.schemas import AttackResolved, CombatantDown, ConditionApplied, DamageDealt

from .helpers import KNIFE, KNUCKLES, PISTOL, RIFLE, act, fighter, make_setup, mods, of_type, one, rejection, start


def _range(a=None, b=None, **settings):
    return make_setup([fighter("a1", "red", (0, 5), **(a or {})), fighter("b1", "blue", (10, 5), **(b or {}))], **settings)


def _melee(a=None, b=None, **settings):
    return make_setup([fighter("a1", "red", (0, 5), **(a or {})), fighter("b1", "blue", (1, 5), **(b or {}))], **settings)


@pytest.mark.parametrize(("face", "target", "outcome"), [(1, 5, "critical"), (10, 0, "critical"), (11, 55, "hit"), (55, 55, "hit"), (56, 55, "miss"), (89, 95, "hit"), (90, 95, "fumble"), (100, 120, "fumble")])
def test_D100Z_04_attack_outcome_table(face: int, target: int, outcome: str) -> None:
    """D100Z-04: <= 10 critical (auto-hit), 90+ automatic miss, otherwise <= skill hits."""
    assert rules.attack_outcome(face, target) == outcome


def test_D100Z_04_a_plain_hit_is_dodged_or_lands() -> None:
    """D100Z-04/05: 30 <= Ranged 55 hits; the defender rolls 50 > DEX 40 and fails: 2d6+1 = 4 + 5 + 1 lands."""
    state = start(_range())
    events = act(state, D100ZAttack(command_id="a", actor="a1", target="b1"), [30, 50, 4, 5])
    attack = one(events, AttackResolved)
    assert attack.hit and not attack.critical and attack.details == {"outcome": "hit", "dodged": False}
    assert mods(attack.roll) == [("Ranged skill", "D100Z-04", 55)] and attack.roll.target == 55
    assert attack.defense is not None and attack.defense.rule == "D100Z-05" and attack.defense.target == 40 and attack.defense.success is False
    assert one(events, DamageDealt).amount == 10 and state.combatants["b1"].hp == 5


def test_D100Z_05_a_dodge_at_or_under_dex_stops_the_hit() -> None:
    """D100Z-05: the defender rolls <= DEX (40 vs 40): the attack does not land."""
    state = start(_range())
    events = act(state, D100ZAttack(command_id="a", actor="a1", target="b1"), [30, 40])
    attack = one(events, AttackResolved)
    assert not attack.hit and attack.details == {"outcome": "hit", "dodged": True} and attack.defense.success is True
    assert not of_type(events, DamageDealt) and state.combatants["b1"].hp == 15


def test_D100Z_05_a_dodge_of_90_or_more_fails_even_under_dex() -> None:
    """D100Z-05: a dodge roll of 90+ fails even when DEX is 95; the attack lands."""
    state = start(_range(b={"dexterity": 95}))
    events = act(state, D100ZAttack(command_id="a", actor="a1", target="b1"), [30, 92, 1, 1])
    attack = one(events, AttackResolved)
    assert attack.hit and attack.defense.success is False and attack.defense.notes == ["90+: the dodge fails (D100Z-05)"]
    assert one(events, DamageDealt).amount == 3


def test_D100Z_04_critical_auto_hits_no_dodge_double_damage() -> None:
    """D100Z-04: a 7 hits even with Ranged 5, the target cannot dodge, damage (3 + 4 + 1) x 2 - DR 2 = 14."""
    state = start(_range(a={"ranged": 5}, b={"dr": 2, "armour_name": "vest"}))
    events = act(state, D100ZAttack(command_id="a", actor="a1", target="b1"), [7, 3, 4])
    attack = one(events, AttackResolved)
    assert attack.hit and attack.critical and attack.defense is None and attack.roll.success is True
    assert attack.roll.notes == ["critical (<= 10): automatic hit, double damage, no dodge (D100Z-04)"]
    damage = one(events, DamageDealt)
    assert damage.amount == 14 and damage.roll.details["before_doubling"] == 8 and damage.roll.details["after_doubling"] == 16
    assert mods(damage.roll) == [("rifle (2d6+1)", "D100Z-06", 1), ("critical hit: double damage", "D100Z-04", 8), ("armour DR vest", "D100Z-06", -2)]


def test_D100Z_04_ninety_or_more_misses_with_a_complication() -> None:
    """D100Z-04: 90+ is an automatic miss, even with skill 95, and something goes wrong (flagged for the GM)."""
    state = start(_range(a={"ranged": 95}))
    events = act(state, D100ZAttack(command_id="a", actor="a1", target="b1"), [90])
    attack = one(events, AttackResolved)
    assert not attack.hit and attack.roll.success is False and attack.defense is None
    assert attack.roll.details["complication"] is True and attack.details["outcome"] == "fumble"
    assert "complication" in attack.roll.notes[0]


def test_D100Z_04_a_plain_miss_needs_no_dodge() -> None:
    state = start(_range())
    events = act(state, D100ZAttack(command_id="a", actor="a1", target="b1"), [56])
    assert not one(events, AttackResolved).hit and one(events, AttackResolved).defense is None


def test_D100Z_04_skill_by_weapon_and_reach_checks() -> None:
    """D100Z-04: Melee, Ranged or Brawling by weapon; melee needs Engaged; ranged needs range and sight."""
    state = start(make_setup([fighter("a1", "red", (0, 5), weapons=[PISTOL, KNIFE]), fighter("b1", "blue", (10, 5)), fighter("b2", "blue", (25, 5)), fighter("b3", "blue", (0, 9))], walls=[(0, 7)]))
    assert rejection(act(state, D100ZAttack(command_id="a", actor="a1", target="b1", weapon="knife"))) == (
        "b1 is 20 m away (far); melee attacks need the target Engaged (0-2 m) (D100Z-04)")
    assert rejection(act(state, D100ZAttack(command_id="a", actor="a1", target="b2"))) == "b2 is 50 m away, out of range of pistol (40 m)"
    assert rejection(act(state, D100ZAttack(command_id="a", actor="a1", target="b3"))) == "a1 has no line of sight to b3"
    assert rejection(act(state, D100ZAttack(command_id="a", actor="a1", target="zz"))) == "unknown target 'zz'"
    assert rejection(act(state, D100ZAttack(command_id="a", actor="a1", target="a1"))) == "a1 cannot attack itself"
    assert rejection(act(state, D100ZAttack(command_id="a", actor="a1", target="b1", weapon="bow"))) == "a1 has no weapon named 'bow'; has: pistol, knife, unarmed"
    state = start(_melee())
    events = act(state, D100ZAttack(command_id="a", actor="a1", target="b1"), [61])
    attack = one(events, AttackResolved)
    assert attack.weapon == "knife" and mods(attack.roll) == [("Melee skill", "D100Z-04", 60)]


def test_D100Z_06_damage_is_dice_plus_bonuses_minus_dr_never_below_zero() -> None:
    """D100Z-06: 2d6+1 showing 1 and 1 is 3, less DR 5: 0 damage."""
    state = start(_range(b={"dr": 5}))
    events = act(state, D100ZAttack(command_id="a", actor="a1", target="b1"), [20, 80, 1, 1])
    damage = one(events, DamageDealt)
    assert damage.amount == 0 and damage.roll.details["formula"] == "dice + bonuses - DR" and state.combatants["b1"].hp == 15


def test_D100Z_06_zero_hp_knocks_out_and_the_fight_ends() -> None:
    """D100Z-06 with the house default: at 0 HP a combatant is unconscious and dying."""
    state = start(_range(b={"hp": 4}))
    events = act(state, D100ZAttack(command_id="a", actor="a1", target="b1"), [20, 80, 1, 2])
    assert one(events, DamageDealt).remaining == 0 and one(events, CombatantDown).combatant == "b1"
    assert [c.condition for c in of_type(events, ConditionApplied)] == ["unconscious", "dying"]
    assert state.ended and state.winner == "red"


@pytest.mark.parametrize(("skill", "bonus"), [(30, 0), (50, 0), (69, 0), (70, 1), (89, 1), (90, 2), (100, 2)])
def test_D100Z_07_brawling_bonus_table(skill: int, bonus: int) -> None:
    """D100Z-07: Brawling 50-69 +0, 70-89 +1, 90-100 +2 (below 50: +0, house default)."""
    assert rules.brawling_bonus(skill) == bonus


def test_D100Z_07_unarmed_damage_gets_the_brawling_bonus() -> None:
    """D100Z-07: knuckles 1d4+1 with Brawling 75: 3 + 1 + 1 = 5; the attack rolls against Brawling."""
    state = start(_melee(a={"brawling": 75, "weapons": [KNUCKLES]}))
    events = act(state, D100ZAttack(command_id="a", actor="a1", target="b1", weapon="knuckles"), [20, 60, 3])
    assert mods(one(events, AttackResolved).roll) == [("Brawling skill", "D100Z-04", 75)]
    damage = one(events, DamageDealt)
    assert damage.amount == 5 and ("Brawling 75", "D100Z-07", 1) in mods(damage.roll)


def test_D100Z_07_bare_fists_use_the_house_default_and_brawling() -> None:
    """D100Z-07: with no weapon in hand an engaged fighter punches (house default 1d4) + Brawling bonus 90 -> +2."""
    state = start(_melee(a={"brawling": 90, "weapons": [RIFLE]}))
    events = act(state, D100ZAttack(command_id="a", actor="a1", target="b1", weapon="unarmed"), [20, 60, 2])
    assert one(events, AttackResolved).weapon == "unarmed"
    assert one(events, DamageDealt).amount == 4


def test_D100Z_08_strength_bonus_applies_before_doubling() -> None:
    """D100Z-08 (option): STR 78 gives +2 melee damage, added before a critical doubles: (3 + 1 + 2) x 2 = 12."""
    assert [rules.strength_bonus(s) for s in (40, 50, 59, 60, 78, 100)] == [0, 0, 0, 1, 2, 5]
    state = start(_melee(a={"strength": 78}))
    events = act(state, D100ZAttack(command_id="a", actor="a1", target="b1", weapon="knife"), [5, 3])
    damage = one(events, DamageDealt)
    assert damage.amount == 12 and ("STR 78", "D100Z-08", 2) in mods(damage.roll)
    assert damage.roll.details["formula"] == "(dice + bonuses) x 2 - DR"


def test_D100Z_08_strength_bonus_is_melee_only_and_switchable() -> None:
    """D100Z-08: no STR bonus for ranged attacks, nor when options.str_bonus is false."""
    state = start(_range(a={"strength": 78}))
    events = act(state, D100ZAttack(command_id="a", actor="a1", target="b1"), [20, 60, 3, 3])
    assert one(events, DamageDealt).amount == 7
    state = start(_melee(a={"strength": 78}, options={"str_bonus": False}))
    events = act(state, D100ZAttack(command_id="a", actor="a1", target="b1", weapon="knife"), [5, 3])
    assert one(events, DamageDealt).amount == 8
