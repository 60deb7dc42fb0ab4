"""D100D-05 All Out Attack, D100D-06 Basic Attack, D100D-07 Controlled Fire, D100D-08 Jam."""

from __future__ import annotations

from firelane.engine.systems.d100_degrees import rules
from firelane.engine.systems.d100_degrees.schemas import (
    D100DAllOutAttack,
    D100DBasicAttack,
    D100DClearJam,
    D100DControlledFire,
)
from firelane.events.schemas import (
    ActionTaken,
    AttackResolved,
    ConditionApplied,
    ConditionRemoved,
    DamageDealt,
    EndTurn,
    ReactionWindowOpened,
    StateAdjusted,
)

from .helpers import GUN, PISTOL, SWORD, act, fighter, make_setup, of_type, one, rejection, start


def _duel(**a_sheet):
    return make_setup([fighter("a1", "red", (5, 5), **a_sheet), fighter("b1", "blue", (6, 5)), fighter("b2", "blue", (15, 9))])


def test_D100D_05_all_out_attack_adds_five_times_agility_bonus() -> None:
    """D100D-05: Full Action, WS +0 with +5 x Agility Bonus (Ag 34 -> +15): 45 + 15 = 60."""
    state = start(_duel())
    events = act(state, D100DAllOutAttack(command_id="c", actor="a1", target="b1"), [58])
    attack = one(events, AttackResolved)
    assert attack.roll.target == 60 and attack.hit and attack.kind == "all_out_attack"
    assert ("All Out Attack: 5 x Agility Bonus 3", "D100D-05", 15) in [(m.source, m.rule, m.value) for m in attack.roll.modifiers]
    assert attack.roll.details["degrees_of_success"] == 2
    assert one(events, ActionTaken).slot == "full"
    assert one(events, ConditionApplied).condition == "all_out_attack"
    assert state.combatants["a1"].conditions == {"all_out_attack": "start_of_turn:a1"}


def test_D100D_05_after_all_out_attack_no_evasion_until_next_turn_even_on_a_miss() -> None:
    """D100D-05: hit or miss, the attacker cannot make Evasion reactions until its next turn."""
    state = start(_duel())
    events = act(state, D100DAllOutAttack(command_id="c", actor="a1", target="b1"), [99])
    assert not one(events, AttackResolved).hit and "all_out_attack" in state.combatants["a1"].conditions
    act(state, EndTurn(command_id="e", actor="a1"))
    # b1 hits a1: no window opens for a1 (no dodge, no parry); damage lands at once.
    events = act(state, D100DBasicAttack(command_id="b", actor="b1", target="a1"), [45, 4])
    assert not of_type(events, ReactionWindowOpened)
    assert one(events, DamageDealt).amount == 6 and state.combatants["a1"].wounds == 6
    act(state, EndTurn(command_id="e2", actor="b1"))
    events = act(state, EndTurn(command_id="e3", actor="b2"))
    removed = one(events, ConditionRemoved)
    assert (removed.combatant, removed.condition, removed.rule) == ("a1", "all_out_attack", "D100D-05")
    assert state.active == "a1" and state.combatants["a1"].conditions == {}


def test_D100D_06_basic_attack_is_a_half_action_weapon_skill_plus_zero() -> None:
    """D100D-06: Half Action, WS 45 +0: 45 hits with 1 degree, 46 misses."""
    state = start(_duel())
    events = act(state, D100DBasicAttack(command_id="c", actor="a1", target="b1"), [46])
    attack = one(events, AttackResolved)
    assert attack.roll.target == 45 and not attack.hit and attack.roll.rule == "D100D-06"
    assert [(m.source, m.value) for m in attack.roll.modifiers] == [("Weapon Skill", 45), ("Challenging (+0)", 0)]
    assert state.combatants["a1"].half_actions_used == 1
    events = act(state, D100DBasicAttack(command_id="d", actor="a1", target="b1"), [45])
    assert one(events, AttackResolved).hit and one(events, AttackResolved).roll.details["degrees_of_success"] == 1


def test_D100D_06_melee_needs_reach_and_a_melee_weapon() -> None:
    """D100D-06: out-of-reach targets and missing weapons are refused with a reason."""
    state = start(make_setup([fighter("a1", "red", (5, 5)), fighter("b1", "blue", (7, 5))]))
    assert rejection(act(state, D100DBasicAttack(command_id="c", actor="a1", target="b1"))) == "b1 is 2 m away, out of range of sword (1 m)"
    assert rejection(act(state, D100DBasicAttack(command_id="c", actor="a1", target="b1", weapon="lasgun"))) == "lasgun is a ranged weapon, not a melee one"
    assert rejection(act(state, D100DBasicAttack(command_id="c", actor="a1", target="b1", weapon="axe"))) == "a1 has no weapon named 'axe'; has: lasgun, sword"
    state = start(make_setup([fighter("a1", "red", (5, 5), weapons=[GUN]), fighter("b1", "blue", (6, 5))]))
    assert rejection(act(state, D100DBasicAttack(command_id="c", actor="a1", target="b1"))) == "a1 has no melee weapon"


def _range(**a_sheet):
    return make_setup([fighter("a1", "red", (2, 5), **a_sheet), fighter("b1", "blue", (10, 5)), fighter("b2", "blue", (15, 9))], walls=[(6, 9), (6, 10), (6, 11)])


def test_D100D_07_controlled_fire_automatic_adds_five_times_selected_rof() -> None:
    """D100D-07: Half Action, BS 40 +0; automatic fire +5 x the selected RoF (3 -> +15, 2 -> +10)."""
    state = start(_range())
    events = act(state, D100DControlledFire(command_id="c", actor="a1", target="b1"), [55])
    attack = one(events, AttackResolved)
    assert attack.roll.target == 55 and attack.hit and attack.roll.rule == "D100D-07"
    assert ("automatic fire: 5 x RoF 3", "D100D-07", 15) in [(m.source, m.rule, m.value) for m in attack.roll.modifiers]
    state = start(_range())
    events = act(state, D100DControlledFire(command_id="c", actor="a1", target="b1", rof=2), [51])
    assert one(events, AttackResolved).roll.target == 50 and not one(events, AttackResolved).hit


def test_D100D_07_single_shot_weapon_gets_no_automatic_bonus() -> None:
    """D100D-07: a non-automatic weapon tests plain BS +0."""
    state = start(_range(weapons=[PISTOL]))
    events = act(state, D100DControlledFire(command_id="c", actor="a1", target="b1"), [41])
    assert one(events, AttackResolved).roll.target == 40 and not one(events, AttackResolved).hit


def test_D100D_07_range_sight_and_rate_of_fire_are_checked() -> None:
    """D100D-07: out of range, no line of sight, unavailable RoF: refused."""
    state = start(make_setup([
        fighter("a1", "red", (0, 0), weapons=[dict(PISTOL, range_m=10)]), fighter("b1", "blue", (19, 11)),
        fighter("b2", "blue", (0, 8)), fighter("b3", "blue", (5, 0)),
    ], walls=[(0, 5)]))
    assert rejection(act(state, D100DControlledFire(command_id="c", actor="a1", target="b1"))) == "b1 is 19 m away, out of range of revolver (10 m)"
    assert rejection(act(state, D100DControlledFire(command_id="c", actor="a1", target="b2"))) == "a1 has no line of sight to b2"
    assert rejection(act(state, D100DControlledFire(command_id="c", actor="a1", target="b3", rof=2))) == "rate of fire 2 is not available on revolver (1 to 1)"
    assert rejection(act(state, D100DControlledFire(command_id="c", actor="a1", target="b3", weapon="sword"))) == "a1 has no weapon named 'sword'; has: revolver"


def test_D100D_08_roll_at_or_above_100_minus_rof_jams_and_blocks_the_weapon() -> None:
    """D100D-08: RoF 3 -> a roll of 97+ jams; a jammed weapon cannot fire until cleared."""
    assert rules.jams(97, 3) and not rules.jams(96, 3) and rules.jams(99, 1) and not rules.jams(98, 1)
    state = start(_range())
    events = act(state, D100DControlledFire(command_id="c", actor="a1", target="b1"), [97])
    jam = one(events, StateAdjusted)
    assert (jam.changes, jam.rule) == ({"jammed": ["lasgun"]}, "D100D-08")
    assert jam.reason == "lasgun jammed: roll 97 >= 100 - RoF 3 = 97"
    assert one(events, AttackResolved).roll.details["jam_threshold"] == 97
    assert state.combatants["a1"].jammed == ["lasgun"]
    reason = rejection(act(state, D100DControlledFire(command_id="d", actor="a1", target="b1")))
    assert reason == "lasgun is jammed; clear it first (D100DClearJam) (D100D-08)"


def test_D100D_08_a_jammed_shot_misses_even_when_the_test_succeeds() -> None:
    """D100D-08 house default jam_misses: BS 90 + 15 = 105, roll 98 would hit (2 degrees) but jams and misses."""
    state = start(_range(ballistic_skill=90))
    events = act(state, D100DControlledFire(command_id="c", actor="a1", target="b1"), [98])
    attack = one(events, AttackResolved)
    assert not attack.hit and attack.roll.success is False and attack.roll.details["degrees_lost_to_jam"] == 2
    assert "the jammed shot misses (house default)" in attack.roll.notes
    state = start(make_setup([fighter("a1", "red", (2, 5), ballistic_skill=90), fighter("b1", "blue", (10, 5), agility=0)], jam_misses=False))
    events = act(state, D100DControlledFire(command_id="c", actor="a1", target="b1"), [98])
    assert one(events, AttackResolved).hit and state.combatants["a1"].jammed == ["lasgun"]


def test_D100D_08_clearing_a_jam_is_a_full_action_by_default() -> None:
    """D100D-08 house default: clearing a jam is a Full Action (clear_jam_action), no test."""
    state = start(_range())
    act(state, D100DControlledFire(command_id="c", actor="a1", target="b1"), [100])
    reason = rejection(act(state, D100DClearJam(command_id="j", actor="a1")))
    assert reason == "Clear Jam is a Full Action and a1 has already used 1 Half Action this turn (D100D-02)"
    for cid, who in (("e1", "a1"), ("e2", "b1"), ("e3", "b2")):
        act(state, EndTurn(command_id=cid, actor=who))
    events = act(state, D100DClearJam(command_id="j", actor="a1"))
    assert one(events, ActionTaken).slot == "full" and one(events, StateAdjusted).changes == {"jammed": []}
    assert state.combatants["a1"].jammed == []
    assert rejection(act(state, D100DClearJam(command_id="k", actor="a1"))) == "a1 has no jammed weapon"


def test_D100D_08_clear_jam_as_a_half_action_when_configured() -> None:
    """D100D-08: clear_jam_action = "half" makes clearing a Half Action."""
    state = start(make_setup([fighter("a1", "red", (2, 5)), fighter("b1", "blue", (10, 5))], clear_jam_action="half"))
    act(state, D100DControlledFire(command_id="c", actor="a1", target="b1"), [99])
    events = act(state, D100DClearJam(command_id="j", actor="a1", weapon="lasgun"))
    assert one(events, ActionTaken).slot == "half" and state.combatants["a1"].half_actions_used == 2
    assert state.combatants["a1"].jammed == []


def test_D100D_08_melee_attacks_never_jam() -> None:
    """D100D-08 applies to Ballistic Skill tests only: a melee roll of 100 just misses."""
    state = start(make_setup([fighter("a1", "red", (5, 5), weapons=[SWORD, GUN]), fighter("b1", "blue", (6, 5))]))
    events = act(state, D100DBasicAttack(command_id="c", actor="a1", target="b1"), [100])
    assert not of_type(events, StateAdjusted) and state.combatants["a1"].jammed == []
