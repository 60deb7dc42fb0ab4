"""D100D-09: Suppressing Fire (arc, random targets by dice, leftover damage, Pinning tests) and Pinned."""

from __future__ import annotations

from firelane.engine.systems.d100_degrees import rules
from firelane.engine.systems.d100_degrees.schemas import (
    D100DAllOutAttack,
    D100DControlledFire,
    D100DSuppressingFire,
    D100DSuppressingFireResolved,
)
from firelane.events.schemas import (
    AttackResolved,
    CombatantDown,
    ConditionApplied,
    ConditionRemoved,
    DamageDealt,
    EndTurn,
    PassReaction,
    ReactionWindowOpened,
    TestRolled as RolledTest,
)

from .helpers import act, fighter, make_setup, of_type, one, rejection, start


def _field(**settings):
    return make_setup([
        fighter("a1", "red", (2, 5)),
        fighter("a2", "red", (6, 5)),     # an ally in the arc
        fighter("b1", "blue", (10, 5)),   # dead ahead
        fighter("b2", "blue", (10, 6)),   # 7.1 degrees off the line: inside the 30 degree arc
        fighter("b3", "blue", (10, 8)),   # 20.6 degrees off: outside
    ], **settings)


def test_D100D_09_arc_is_thirty_degrees_centred_on_the_chosen_direction() -> None:
    """D100D-09: forward 30 degree arc: up to 15 degrees either side of the line to 'toward'."""
    assert rules.in_arc((0, 0), (10, 0), (10, 2))        # 11.3 degrees
    assert not rules.in_arc((0, 0), (10, 0), (10, 3))    # 16.7 degrees
    assert rules.in_arc((0, 0), (1, 0), (20, -5))        # 14.0 degrees
    assert not rules.in_arc((0, 0), (1, 0), (-5, 0))     # behind
    assert not rules.in_arc((0, 0), (1, 0), (0, 0))      # the shooter's own square
    assert rules.in_arc((5, 5), (8, 8), (9, 10))         # 11.3 degrees off the diagonal


def test_D100D_09_suppressing_fire_hits_random_targets_one_per_degree_up_to_rof() -> None:
    """D100D-09: Full, BS 40 -20 +15 = 35; roll 12 -> 3 degrees -> 3 hits chosen by d2 among b1, b2;
    Pinning at -20 (the attack succeeded): WP 30 - 20 = 10."""
    state = start(_field())
    events = act(state, D100DSuppressingFire(command_id="s", actor="a1", toward=(12, 5)), [12, 1, 2, 1, 5, 50])
    fired = one(events, D100DSuppressingFireResolved)
    assert fired.in_arc == ["b1", "b2"]
    assert fired.roll.target == 35 and fired.roll.details["degrees_of_success"] == 3
    assert [(m.source, m.value) for m in fired.roll.modifiers] == [("Ballistic Skill", 40), ("Hard (-20)", -20), ("automatic fire: 5 x RoF 3", 15)]
    assert fired.hits == ["b1", "b2", "b1"] and fired.leftover_degrees == 0
    assert [r.dice[0].sides for r in fired.selection_rolls] == [2, 2, 2]
    assert [r.details["picked"] for r in fired.selection_rolls] == ["b1", "b2", "b1"]
    pinning = of_type(events, RolledTest)
    assert [(t.combatant, t.test, t.roll.target, t.success) for t in pinning] == [("b1", "pinning", 10, True), ("b2", "pinning", 10, False)]
    assert pinning[0].roll.modifiers[1].source == "Hard (-20)"
    assert one(events, ConditionApplied).combatant == "b2" and state.combatants["b2"].conditions == {"pinned": "end_of_turn:b2"}
    assert [r.combatant for r in one(events, ReactionWindowOpened).reactors] == ["b1", "b2"]
    act(state, PassReaction(command_id="p1", actor="b1", window=1))
    events = act(state, PassReaction(command_id="p2", actor="b2", window=1), [4, 5, 6])
    assert [(d.target, d.amount, d.remaining) for d in of_type(events, DamageDealt)] == [("b1", 7, 5), ("b2", 8, 4), ("b1", 9, 0)]
    assert one(events, CombatantDown).combatant == "b1"


def test_D100D_09_remaining_degrees_add_damage_to_each_hit() -> None:
    """D100D-09: RoF 2 selected: 40 - 20 + 10 = 30; roll 5 -> 4 degrees: 2 hits, 2 left -> +2 x Multiplier 2 each."""
    state = start(_field())
    events = act(state, D100DSuppressingFire(command_id="s", actor="a1", toward=(12, 5), rof=2), [5, 2, 2, 11, 11])
    fired = one(events, D100DSuppressingFireResolved)
    assert fired.hits == ["b2", "b2"] and fired.leftover_degrees == 2
    assert sorted(c.combatant for c in of_type(events, ConditionApplied)) == ["b1", "b2"]
    events = act(state, PassReaction(command_id="p", actor="b2", window=1), [1, 1])
    damage = of_type(events, DamageDealt)
    assert [d.amount for d in damage] == [1 + 3 + 4, 1 + 3 + 4]
    assert damage[0].roll.modifiers[1].source == "2 extra degrees of success x Multiplier 2"
    assert damage[0].roll.modifiers[1].rule == "D100D-09"
    assert state.combatants["b2"].out_of_fight


def test_D100D_09_failed_attack_still_forces_pinning_tests_at_minus_ten() -> None:
    """D100D-09: on a failed BS test nobody is hit, and the Pinning test is Difficult (-10): WP 30 -> 20."""
    state = start(_field())
    events = act(state, D100DSuppressingFire(command_id="s", actor="a1", toward=(12, 5)), [80, 20, 21])
    fired = one(events, D100DSuppressingFireResolved)
    assert fired.hits == [] and fired.roll.success is False and fired.selection_rolls == []
    assert [(t.combatant, t.roll.target, t.success) for t in of_type(events, RolledTest)] == [("b1", 20, True), ("b2", 20, False)]
    assert of_type(events, RolledTest)[0].roll.modifiers[1].source == "Difficult (-10)"
    assert not of_type(events, ReactionWindowOpened) and not of_type(events, DamageDealt)
    assert state.combatants["b2"].conditions == {"pinned": "end_of_turn:b2"}


def test_D100D_09_single_candidate_needs_no_selection_die_and_allies_can_be_included() -> None:
    """D100D-09: with one candidate every hit lands on it; suppressing_fire_hits_allies adds the shooter's allies."""
    state = start(_field())
    events = act(state, D100DSuppressingFire(command_id="s", actor="a1", toward=(10, 9)), [35, 50])
    fired = one(events, D100DSuppressingFireResolved)
    assert fired.in_arc == ["b3"] and fired.hits == ["b3"] and fired.selection_rolls == []
    state = start(_field(suppressing_fire_hits_allies=True))
    events = act(state, D100DSuppressingFire(command_id="s", actor="a1", toward=(12, 5)), [90, 1, 1, 1])
    assert one(events, D100DSuppressingFireResolved).in_arc == ["a2", "b1", "b2"]


def test_D100D_09_suppressing_fire_jams_and_needs_a_direction() -> None:
    """D100D-09 with D100D-08: a Suppressing Fire roll >= 100 - RoF jams the weapon."""
    state = start(_field())
    assert rejection(act(state, D100DSuppressingFire(command_id="s", actor="a1", toward=(2, 5)))).startswith("Suppressing Fire needs a direction")
    events = act(state, D100DSuppressingFire(command_id="s", actor="a1", toward=(12, 5)), [98, 1, 1])
    assert one(events, D100DSuppressingFireResolved).jammed and state.combatants["a1"].jammed == ["lasgun"]


def test_D100D_09_pinned_attacks_at_minus_twenty_no_full_actions_and_it_wears_off() -> None:
    """D100D-09 Pinned (house default): -20 on attack tests, no Full Actions; ends at the end of the pinned one's next turn."""
    state = start(_field())
    act(state, D100DSuppressingFire(command_id="s", actor="a1", toward=(12, 5)), [80, 20, 21])
    act(state, EndTurn(command_id="e1", actor="a1"))
    act(state, EndTurn(command_id="e2", actor="a2"))
    act(state, EndTurn(command_id="e3", actor="b1"))
    assert state.active == "b2"
    reason = rejection(act(state, D100DAllOutAttack(command_id="x", actor="b2", target="a1")))
    assert reason == "b2 is Pinned and cannot take Full Actions such as All Out Attack (house default)"
    events = act(state, D100DControlledFire(command_id="f", actor="b2", target="a2"), [99])
    attack = one(events, AttackResolved)
    assert attack.roll.target == 40 + 15 - 20
    assert ("Pinned", "house default: Pinned", -20) in [(m.source, m.rule, m.value) for m in attack.roll.modifiers]
    events = act(state, EndTurn(command_id="e4", actor="b2"))
    removed = one(events, ConditionRemoved)
    assert (removed.combatant, removed.condition, removed.rule) == ("b2", "pinned", "D100D-09")
    assert state.combatants["b2"].conditions == {}


AUTOGUN = {"name": "autogun", "kind": "ranged", "damage": "1d10+3", "multiplier": 1, "range_m": 30, "rof": 10, "automatic": True}


def test_D100D_09_a_successful_test_that_jams_still_pins_at_hard() -> None:
    """D100D-09: Pinning is Hard (-20) "if the Ballistic Skill test was successful".
    BS 60 - 20 + 5 x RoF 10 = 90; a roll of 90 succeeds and jams (>= 100 - 10, D100D-08),
    so the shot misses (house default jam_misses), yet the test did succeed:
    the Pinning tests are at WP 30 - 20 = 10, not at -10."""
    state = start(make_setup([
        fighter("a1", "red", (2, 5), ballistic_skill=60, weapons=[AUTOGUN]),
        fighter("b1", "blue", (10, 5)),
        fighter("b2", "blue", (10, 6)),
    ]))
    events = act(state, D100DSuppressingFire(command_id="s", actor="a1", toward=(12, 5)), [90, 15, 5])
    fired = one(events, D100DSuppressingFireResolved)
    assert (fired.roll.total, fired.roll.target, fired.jammed, fired.roll.success, fired.hits) == (90, 90, True, False, [])
    assert fired.roll.details["degrees_lost_to_jam"] == 1
    pinning = of_type(events, RolledTest)
    assert [(t.combatant, t.roll.target, t.details["difficulty"], t.success) for t in pinning] == [
        ("b1", 10, "hard", False),
        ("b2", 10, "hard", True),
    ]
    assert pinning[0].roll.modifiers[1].source == "Hard (-20)" and pinning[0].details["ballistic_skill_test_succeeded"] is True
    assert state.combatants["b1"].conditions == {"pinned": "end_of_turn:b1"} and "pinned" not in state.combatants["b2"].conditions


def test_D100D_09_a_failed_test_pins_at_difficult() -> None:
    """D100D-09: a failed Ballistic Skill test (and a jam on it) leaves the Pinning tests Difficult (-10)."""
    state = start(make_setup([
        fighter("a1", "red", (2, 5), ballistic_skill=40, weapons=[AUTOGUN]),
        fighter("b1", "blue", (10, 5)),
    ]))
    events = act(state, D100DSuppressingFire(command_id="s", actor="a1", toward=(12, 5)), [95, 15])
    fired = one(events, D100DSuppressingFireResolved)
    assert (fired.roll.target, fired.jammed, fired.roll.success) == (70, True, False)
    pinning = one(events, RolledTest)
    assert (pinning.roll.target, pinning.details["difficulty"], pinning.success) == (20, "difficult", True)
