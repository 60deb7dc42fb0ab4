"""D100Z-14 first aid in combat (and the house-default dying rule), D100Z-15 leaving Engaged range."""

from __future__ import annotations

from firelane.engine.systems.d100_zones import SYSTEM, rules
from firelane.engine.systems.d100_zones.schemas import D100ZAttack, D100ZFirstAid, D100ZFirstAidGiven, D100ZMove, D100ZRevived
from firelane.events.schemas import (
    ActionTaken,
    AttackResolved,
    ClaimReaction,
    CombatantDown,
    ConditionApplied,
    ConditionRemoved,
    DamageDealt,
    Moved,
    PassReaction,
    ReactionDenied,
    ReactionsOrdered,
    ReactionWindowOpened,
    StateAdjusted,
)

from .helpers import act, end_turn, fighter, make_setup, mods, of_type, one, rejection, start

# ---------------------------------------------------------------- D100Z-14 first aid


def _clinic(**a2):
    return make_setup([
        fighter("a1", "red", (0, 5)),                         # INT 60, Medicine 70
        fighter("a2", "red", (1, 5), **({"hp": 6, "max_hp": 15} | a2)),
        fighter("a3", "red", (0, 6)),
        fighter("b1", "blue", (20, 5)),
    ])


def test_D100Z_14_first_aid_rolls_int_and_heals_1d10_plus_skill_modifier() -> None:
    """D100Z-14: 40 <= INT 60 succeeds; heal 1d10 (5) + floor((70 - 50) / 10) = 7: 6 -> 13 HP."""
    assert [rules.first_aid_skill_modifier(s) for s in (30, 49, 50, 59, 60, 70, 95)] == [-2, -1, 0, 0, 1, 2, 4]
    state = start(_clinic())
    events = act(state, D100ZFirstAid(command_id="f", actor="a1", target="a2"), [40, 5])
    given = one(events, D100ZFirstAidGiven)
    assert given.roll.success and given.roll.target == 60 and given.roll.rule == "D100Z-14"
    assert given.heal.total == 7 and mods(given.heal) == [("Medicine 70: floor((skill - 50) / 10)", "D100Z-14", 2)]
    assert (given.healed, given.hp, given.critical) == (7, 13, False)
    assert state.combatants["a2"].hp == 13 and state.combatants["a2"].first_aid_received
    assert one(events, ActionTaken).action == "first_aid" and state.combatants["a1"].action_used


def test_D100Z_14_once_per_combat_per_target_even_after_a_failure() -> None:
    """D100Z-14: a failed roll (61 > 60) heals nothing, and the patient cannot be treated again this combat."""
    state = start(_clinic())
    events = act(state, D100ZFirstAid(command_id="f", actor="a1", target="a2"), [61])
    given = one(events, D100ZFirstAidGiven)
    assert not given.roll.success and given.heal is None and given.healed == 0 and state.combatants["a2"].hp == 6
    end_turn(state)
    assert state.active == "a2"
    end_turn(state)
    assert rejection(act(state, D100ZFirstAid(command_id="g", actor="a3", target="a2"))) == "a2 has already received first aid this combat (D100Z-14)"


def test_D100Z_14_healing_is_capped_and_never_negative() -> None:
    """D100Z-14: healing stops at max HP; with Medicine 30 (-2) a 1 heals nothing."""
    state = start(_clinic(hp=14))
    given = one(act(state, D100ZFirstAid(command_id="f", actor="a1", target="a2"), [40, 5]), D100ZFirstAidGiven)
    assert (given.heal.total, given.healed, given.hp) == (7, 1, 15)
    state = start(make_setup([fighter("a1", "red", (0, 5), medicine=30), fighter("a2", "red", (1, 5), hp=6, max_hp=15), fighter("b1", "blue", (20, 5))]))
    given = one(act(state, D100ZFirstAid(command_id="f", actor="a1", target="a2"), [40, 1]), D100ZFirstAidGiven)
    assert (given.heal.total, given.healed, given.hp) == (0, 0, 6)


def test_D100Z_14_first_aid_needs_an_engaged_hurt_ally() -> None:
    state = start(make_setup([fighter("a1", "red", (0, 5)), fighter("a2", "red", (4, 5), hp=5, max_hp=15), fighter("b1", "blue", (1, 5))]))
    assert rejection(act(state, D100ZFirstAid(command_id="f", actor="a1", target="a2"))) == "a2 is 8 m away; first aid needs the patient Engaged (0-2 m)"
    assert rejection(act(state, D100ZFirstAid(command_id="f", actor="a1", target="b1"))) == "b1 is not an ally of a1"
    assert rejection(act(state, D100ZFirstAid(command_id="f", actor="a1", target="a1"))) == "a1 is not hurt"
    assert rejection(act(state, D100ZFirstAid(command_id="f", actor="a1", target="zz"))) == "unknown target 'zz'"


def _downed_ally():
    """b1 acts first and drops a2 with a critical knife blow: (3 + 1) x 2 = 8 against 4 HP (of 10) -> -4."""
    setup = make_setup([fighter("a1", "red", (0, 5)), fighter("a2", "red", (1, 5), hp=4, max_hp=10), fighter("b1", "blue", (2, 5))])
    state = start(setup, [20, 20, 80])
    events = act(state, D100ZAttack(command_id="k", actor="b1", target="a2"), [5, 3])
    assert one(events, CombatantDown).combatant == "a2" and state.combatants["a2"].hp == -4
    assert state.combatants["a2"].conditions == {"unconscious": "", "dying": ""}
    end_turn(state)
    assert state.active == "a1"
    return state


def test_D100Z_14_a_critical_stabilises_an_unconscious_ally() -> None:
    """D100Z-14: first aid rolling 5 (<= 10) stabilises the dying ally; 1 + 2 healed leaves it at -1 HP, still out."""
    state = _downed_ally()
    events = act(state, D100ZFirstAid(command_id="f", actor="a1", target="a2"), [5, 1])
    given = one(events, D100ZFirstAidGiven)
    assert given.critical and given.roll.notes == ["critical (<= 10): stabilises an unconscious ally (D100Z-14)"]
    assert (given.healed, given.hp) == (3, -1)
    assert one(events, ConditionRemoved).condition == "dying" and one(events, ConditionApplied).condition == "stabilised"
    assert state.combatants["a2"].conditions == {"unconscious": "", "stabilised": ""} and state.combatants["a2"].out_of_fight
    events = end_turn(state, [50, 50])  # a2 is skipped; round 2: the stabilised ally loses no HP
    assert not of_type(events, StateAdjusted) and state.combatants["a2"].hp == -1


def test_D100Z_14_healing_an_unconscious_ally_above_zero_brings_it_back() -> None:
    """D100Z-14 with the house default: healed to 7 HP (9 + 2 from -4) the ally comes to and fights on."""
    state = _downed_ally()
    events = act(state, D100ZFirstAid(command_id="f", actor="a1", target="a2"), [40, 9])
    assert one(events, D100ZRevived).hp == 7
    assert sorted(c.condition for c in of_type(events, ConditionRemoved)) == ["dying", "unconscious"]
    a2 = state.combatants["a2"]
    assert not a2.out_of_fight and a2.hp == 7 and a2.conditions == {}
    end_turn(state)
    assert state.active == "a2"


def test_D100Z_14_house_default_dying_loses_hp_each_round_until_dead() -> None:
    """House default: a dying combatant loses 1 HP at the start of each round and is dead at death_at_hp."""
    setup = make_setup([fighter("a1", "red", (0, 5)), fighter("a2", "red", (1, 5), hp=4), fighter("b1", "blue", (2, 5))], death_at_hp=-5)
    state = start(setup, [20, 20, 80])
    act(state, D100ZAttack(command_id="k", actor="b1", target="a2"), [5, 3])
    end_turn(state)
    events = end_turn(state, [50, 50])  # a2 is skipped; round 2 starts with the bleed
    adjusted = one(events, StateAdjusted)
    assert (adjusted.combatant, adjusted.changes, adjusted.rule) == ("a2", {"hp": -5}, "house default: dying")
    assert one(events, ConditionApplied).condition == "dead" and "dying" not in state.combatants["a2"].conditions
    assert state.active == "a1"
    assert rejection(act(state, D100ZFirstAid(command_id="f", actor="a1", target="a2"))) == "a2 is dead"


# ---------------------------------------------------------------- D100Z-15 leaving Engaged range


def _engaged(a1=None, **settings):
    setup = make_setup([
        fighter("a1", "red", (5, 5), **(a1 or {})),
        fighter("a2", "red", (0, 0)),
        fighter("b1", "blue", (6, 5)),
        fighter("b2", "blue", (5, 6)),
        fighter("b3", "blue", (20, 5)),
    ], **settings)
    return start(setup, [80, 15, 30, 60, 10])  # order: a1 80, b2 60, b1 30, a2 15, b3 10


def test_D100Z_15_each_adjacent_enemy_gets_a_free_attack_in_initiative_order() -> None:
    """D100Z-15: a1 leaves b1 and b2: a window for both; b2 (initiative 60) strikes before b1 (30); a1 dodges at -20."""
    state = _engaged()
    events = act(state, D100ZMove(command_id="m", actor="a1", path=[(4, 5), (3, 5)]))
    window = one(events, ReactionWindowOpened)
    assert (window.trigger, window.rule) == ("leave_engaged", "D100Z-15")
    assert [(r.combatant, r.reactions) for r in window.reactors] == [("b1", ["free_attack"]), ("b2", ["free_attack"])]
    assert not of_type(events, Moved) and state.combatants["a1"].position == (5, 5)
    act(state, ClaimReaction(command_id="c1", actor="b1", window=1, reaction="free_attack"))
    # b2: 50 <= Melee 60 hits; a1 dodges 25 > DEX 40 - 20; knife 1d6+1 = 2 + 1. b1: 70 misses.
    events = act(state, ClaimReaction(command_id="c2", actor="b2", window=1, reaction="free_attack"), [50, 25, 2, 70])
    assert [c.combatant for c in one(events, ReactionsOrdered).order] == ["b2", "b1"]
    attacks = of_type(events, AttackResolved)
    assert [(a.attacker, a.kind, a.hit) for a in attacks] == [("b2", "free_attack", True), ("b1", "free_attack", False)]
    assert mods(attacks[0].defense) == [("DEX", "D100Z-05", 40), ("dodging while leaving Engaged range", "D100Z-15", -20)]
    assert attacks[0].defense.target == 20
    assert [a.slot for a in of_type(events, ActionTaken)] == ["free", "free"]
    assert one(events, DamageDealt).amount == 3 and state.combatants["a1"].hp == 12
    assert one(events, Moved).path == [(4, 5), (3, 5)] and state.combatants["a1"].position == (3, 5)


def test_D100Z_15_a_mover_dropped_by_a_free_attack_does_not_move() -> None:
    """D100Z-15: the later claims are re-checked: b1's free attack is denied once a1 is down, and a1 stays put."""
    state = _engaged(a1={"hp": 3})
    act(state, D100ZMove(command_id="m", actor="a1", path=[(4, 5), (3, 5)]))
    act(state, ClaimReaction(command_id="c1", actor="b1", window=1, reaction="free_attack"))
    events = act(state, ClaimReaction(command_id="c2", actor="b2", window=1, reaction="free_attack"), [50, 25, 2])
    assert one(events, CombatantDown).combatant == "a1"
    denied = one(events, ReactionDenied)
    assert (denied.combatant, denied.reason) == ("b1", "a1 is already down")
    assert not of_type(events, Moved) and state.combatants["a1"].position == (5, 5)


def test_D100Z_15_only_the_enemies_left_behind_attack_and_passing_lets_the_move_go() -> None:
    """D100Z-15: stepping to (5, 4) stays engaged with b1 but leaves b2: only b2 may strike."""
    state = _engaged()
    events = act(state, D100ZMove(command_id="m", actor="a1", path=[(5, 4)]))
    assert [r.combatant for r in one(events, ReactionWindowOpened).reactors] == ["b2"]
    events = act(state, PassReaction(command_id="p", actor="b2", window=1))
    assert one(events, Moved).path == [(5, 4)]
    events = act(state, D100ZMove(command_id="m2", actor="a1", path=[(6, 4)]))
    assert not of_type(events, ReactionWindowOpened) and one(events, Moved).path == [(6, 4)]


def test_D100Z_15_free_attacks_are_melee_or_unarmed() -> None:
    state = _engaged()
    act(state, D100ZMove(command_id="m", actor="a1", path=[(4, 5), (3, 5)]))
    reason = rejection(act(state, ClaimReaction(command_id="c", actor="b1", window=1, reaction="free_attack", options={"weapon": "rifle"})))
    assert reason == "a free attack is a melee or unarmed attack; rifle is ranged"
    claim = SYSTEM.choose_command(state, "b1")
    assert isinstance(claim, ClaimReaction) and claim.reaction == "free_attack"
