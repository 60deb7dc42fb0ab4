"""D100D-03 damage with the Multiplier, D100D-04 extra targets along a chain."""

from __future__ import annotations

from firelane.engine.systems.d100_degrees import rules
from firelane.engine.systems.d100_degrees.schemas import D100DBasicAttack, D100DControlledFire
from firelane.events.schemas import (
    AttackResolved,
    CombatantDown,
    DamageDealt,
    PassReaction,
    ReactionWindowOpened,
)

from .helpers import GUN, PISTOL, act, fighter, make_setup, of_type, one, rejection, start


def test_D100D_03_damage_is_weapon_damage_plus_multiplier_per_extra_degree_minus_armour() -> None:
    """D100D-03: 1d10+2 sword, 4 degrees -> +3 x Multiplier 2; armour 2 (house default) subtracts."""
    state = start(make_setup([fighter("a1", "red", (5, 5)), fighter("b1", "blue", (6, 5), armour=2, armour_name="flak"), fighter("b2", "blue", (15, 9))]))
    events = act(state, D100DBasicAttack(command_id="c", actor="a1", target="b1"), [12])  # WS 45: 1 + 4 - 1 = 4 degrees
    assert one(events, AttackResolved).roll.details["degrees_of_success"] == 4
    events = act(state, PassReaction(command_id="p", actor="b1", window=1), [6])
    damage = one(events, DamageDealt)
    assert damage.amount == 6 + 2 + 3 * 2 - 2 == 12
    assert [(m.source, m.rule, m.value) for m in damage.roll.modifiers] == [
        ("sword damage bonus (1d10+2)", "D100D-03", 2),
        ("3 extra degrees of success x Multiplier 2", "D100D-03", 6),
        ("armour flak", "house default: armour", -2),
    ]
    assert damage.remaining == 0 and state.combatants["b1"].wounds == 0
    assert one(events, CombatantDown).combatant == "b1" and state.combatants["b1"].out_of_fight


def test_D100D_03_one_degree_deals_plain_weapon_damage_and_armour_can_be_switched_off() -> None:
    """D100D-03: a bare success (1 degree) adds no Multiplier; armour_reduces_damage=false ignores armour."""
    setup = make_setup([fighter("a1", "red", (5, 5)), fighter("b1", "blue", (6, 5), armour=4), fighter("b2", "blue", (15, 9))], armour_reduces_damage=False)
    state = start(setup)
    act(state, D100DBasicAttack(command_id="c", actor="a1", target="b1"), [45])
    damage = one(act(state, PassReaction(command_id="p", actor="b1", window=1), [3]), DamageDealt)
    assert damage.amount == 5 and state.combatants["b1"].wounds == 7


def test_D100D_04_trading_two_degrees_buys_one_more_target() -> None:
    """D100D-04 math: the first degree makes the hit; two more buy each extra target; the rest add damage."""
    assert rules.trade_degrees_for_targets(1, 2) == (0, 0)
    assert rules.trade_degrees_for_targets(2, 2) == (0, 1)
    assert rules.trade_degrees_for_targets(3, 2) == (1, 0)
    assert rules.trade_degrees_for_targets(6, 2) == (2, 1)
    assert rules.trade_degrees_for_targets(6, 0) == (0, 5)


def _melee_pair():
    return make_setup([
        fighter("a1", "red", (5, 5)),
        fighter("b1", "blue", (6, 5)),
        fighter("b2", "blue", (6, 6)),
        fighter("b3", "blue", (15, 9)),
    ])


def test_D100D_04_melee_chain_hits_two_targets_with_three_degrees() -> None:
    """D100D-04: 3 degrees -> the second target in the chain is hit too, base damage each."""
    state = start(_melee_pair())
    events = act(state, D100DBasicAttack(command_id="c", actor="a1", target="b1", extra=["b2"]), [23])
    attacks = of_type(events, AttackResolved)
    assert [(a.target, a.hit) for a in attacks] == [("b1", True), ("b2", True)]
    assert attacks[1].details["chain_position"] == 2 and attacks[1].details["extra_targets_hit"] == 1
    window = one(events, ReactionWindowOpened)
    assert [r.combatant for r in window.reactors] == ["b1", "b2"]
    act(state, PassReaction(command_id="p1", actor="b1", window=1))
    events = act(state, PassReaction(command_id="p2", actor="b2", window=1), [4, 7])
    assert [(d.target, d.amount) for d in of_type(events, DamageDealt)] == [("b1", 6), ("b2", 9)]


def test_D100D_04_too_few_degrees_leave_the_extra_target_unhit() -> None:
    """D100D-04: with 2 degrees the spare degree adds damage and the chained target is missed."""
    state = start(_melee_pair())
    events = act(state, D100DBasicAttack(command_id="c", actor="a1", target="b1", extra=["b2"]), [33])
    attacks = of_type(events, AttackResolved)
    assert [(a.target, a.hit) for a in attacks] == [("b1", True), ("b2", False)]
    assert "too few degrees" in attacks[1].details["missed_because"]
    events = act(state, PassReaction(command_id="p1", actor="b1", window=1), [4])
    assert one(events, DamageDealt).amount == 4 + 2 + 2


def test_D100D_04_melee_targets_limited_by_agility_bonus() -> None:
    """D100D-04: melee: at most Agility Bonus targets in total."""
    setup = make_setup([
        fighter("a1", "red", (5, 5), agility=24),
        fighter("b1", "blue", (6, 5)), fighter("b2", "blue", (6, 6)), fighter("b3", "blue", (6, 4)),
    ])
    state = start(setup)
    reason = rejection(act(state, D100DBasicAttack(command_id="c", actor="a1", target="b1", extra=["b2", "b3"])))
    assert reason == "3 targets exceed the limit of 2 (Agility Bonus 2, D100D-04)"


def _ranged_line(**extra_b):
    return make_setup([
        fighter("a1", "red", (2, 5)),
        fighter("b1", "blue", (10, 5)),
        fighter("b2", "blue", (14, 5), **extra_b),
        fighter("b3", "blue", (18, 10)),
    ])


def test_D100D_04_ranged_chain_walks_through_an_empty_square() -> None:
    """D100D-04: a link more than 2 m from the previous target can be reached by walking fire through an empty square."""
    state = start(_ranged_line())
    reason = rejection(act(state, D100DControlledFire(command_id="c", actor="a1", target="b1", extra=["b2"])))
    assert reason == "b2 is 4 m from the previous link (b1); each link must be within 2 m (D100D-04)"
    # BS 40 + 15 (auto RoF 3) = 55; roll 23 -> 1 + 5 - 2 = 4 degrees: one extra target, one left for damage
    events = act(state, D100DControlledFire(command_id="c", actor="a1", target="b1", extra=[(12, 5), "b2"]), [23])
    assert [(a.target, a.hit) for a in of_type(events, AttackResolved)] == [("b1", True), ("b2", True)]
    act(state, PassReaction(command_id="p1", actor="b1", window=1))
    events = act(state, PassReaction(command_id="p2", actor="b2", window=1), [1, 2])
    assert [(d.target, d.amount) for d in of_type(events, DamageDealt)] == [("b1", 1 + 3 + 2), ("b2", 2 + 3 + 2)]


def test_D100D_04_walked_squares_must_be_empty_and_chains_end_on_a_target() -> None:
    """D100D-04: only empty spaces can be walked through; the chain ends on a combatant."""
    setup = make_setup([
        fighter("a1", "red", (2, 5)), fighter("a2", "red", (12, 5)),
        fighter("b1", "blue", (10, 5)), fighter("b2", "blue", (14, 5)),
    ])
    state = start(setup)
    reason = rejection(act(state, D100DControlledFire(command_id="c", actor="a1", target="b1", extra=[(12, 5), "b2"])))
    assert reason == "chain square (12, 5) is not empty; only empty spaces can be walked through (D100D-04)"
    reason = rejection(act(state, D100DControlledFire(command_id="c", actor="a1", target="b1", extra=[(11, 4)])))
    assert reason == "an attack chain cannot end in an empty square (D100D-04)"
    reason = rejection(act(state, D100DControlledFire(command_id="c", actor="a1", target="b1", extra=["b1"])))
    assert reason == "b1 appears twice in the attack chain"


def test_D100D_04_ranged_targets_limited_by_rate_of_fire() -> None:
    """D100D-04: ranged: at most the (selected) rate of fire in targets."""
    state = start(make_setup([
        fighter("a1", "red", (2, 5), weapons=[PISTOL]), fighter("b1", "blue", (10, 5)), fighter("b2", "blue", (11, 5)),
    ]))
    reason = rejection(act(state, D100DControlledFire(command_id="c", actor="a1", target="b1", extra=["b2"])))
    assert reason == "2 targets exceed the limit of 1 (selected rate of fire 1, D100D-04)"
    state = start(make_setup([
        fighter("a1", "red", (2, 5), weapons=[GUN]), fighter("b1", "blue", (10, 5)), fighter("b2", "blue", (11, 5)),
    ]))
    reason = rejection(act(state, D100DControlledFire(command_id="c", actor="a1", target="b1", extra=["b2"], rof=1)))
    assert reason == "2 targets exceed the limit of 1 (selected rate of fire 1, D100D-04)"
