"""Optional rules of d100-zones: D100Z-09 cover, D100Z-10 flanking, D100Z-11 multi-attack,
D100Z-12 aimed shot, D100Z-13 suppressive fire, and D100Z-16 switching them per encounter."""

from __future__ import annotations

import pytest

from firelane.engine.core import SEQUENCER, Rejected
from firelane.engine.dice import FixedDice
from firelane.engine.systems.d100_zones import SYSTEM, rules
from firelane.engine.systems.d100_zones.schemas import D100ZAimedShot, D100ZAttack, D100ZMove, D100ZSuppressiveFire
from firelane.events.schemas import (
    ActionTaken,
    AttackResolved,
    ClaimReaction,
    ConditionApplied,
    ConditionRemoved,
    CoverFeature,
    DamageDealt,
    StartEncounter,
    StateAdjusted,
)
from firelane.events.schemas import TestRolled as RolledTest

from .helpers import HATCHET, KNIFE, MAUL, PISTOL, act, end_turn, fighter, make_setup, mods, of_type, one, rejection, start


def _shot(cover=(), a=None, b=None, **settings):
    return make_setup([fighter("a1", "red", (0, 5), **(a or {})), fighter("b1", "blue", (10, 5), **(b or {})), fighter("b2", "blue", (10, 12))], cover=cover, **settings)


# ---------------------------------------------------------------- D100Z-09 cover


def test_D100Z_09_soft_and_hard_cover_lower_the_attack_target() -> None:
    """D100Z-09: ranged attacks: soft cover -10, hard -20, applied to the attack roll's target (house default)."""
    state = start(_shot(cover=[CoverFeature(x=9, y=5, level="soft")]))
    attack = one(act(state, D100ZAttack(command_id="a", actor="a1", target="b1"), [46]), AttackResolved)
    assert mods(attack.roll) == [("Ranged skill", "D100Z-04", 55), ("soft cover", "D100Z-09", -10)]
    assert attack.roll.target == 45 and not attack.hit
    state = start(_shot(cover=[CoverFeature(x=10, y=5, level="hard")]))
    attack = one(act(state, D100ZAttack(command_id="a", actor="a1", target="b1"), [35, 50, 1, 1]), AttackResolved)
    assert attack.roll.target == 35 and attack.hit


def test_D100Z_09_heavy_cover_cannot_be_targeted_and_facing_matters() -> None:
    """D100Z-09: heavy cover: cannot be targeted directly; cover facing away from the shooter gives nothing."""
    state = start(_shot(cover=[CoverFeature(x=9, y=5, level="heavy")]))
    assert rejection(act(state, D100ZAttack(command_id="a", actor="a1", target="b1"))) == "b1 is behind heavy cover and cannot be targeted directly (D100Z-09)"
    state = start(_shot(cover=[CoverFeature(x=9, y=5, level="hard", facing=[(1, 0)])]))
    assert one(act(state, D100ZAttack(command_id="a", actor="a1", target="b1"), [99]), AttackResolved).roll.target == 55
    state = start(_shot(cover=[CoverFeature(x=9, y=5, level="hard", facing=[(-1, 0)])]))
    assert one(act(state, D100ZAttack(command_id="a", actor="a1", target="b1"), [99]), AttackResolved).roll.target == 35


def test_D100Z_09_melee_ignores_cover() -> None:
    """D100Z-09: melee attacks are not affected by cover."""
    state = start(make_setup([fighter("a1", "red", (9, 5)), fighter("b1", "blue", (10, 5))], cover=[CoverFeature(x=10, y=5, level="heavy")]))
    attack = one(act(state, D100ZAttack(command_id="a", actor="a1", target="b1"), [99]), AttackResolved)
    assert attack.weapon == "knife" and mods(attack.roll) == [("Melee skill", "D100Z-04", 60)]


def test_D100Z_09_cover_can_help_the_dodge_instead_and_can_be_switched_off() -> None:
    """D100Z-09: cover_applies_to="dodge" turns soft cover into +10 on the dodge; options.cover=false ignores cover."""
    state = start(_shot(cover=[CoverFeature(x=9, y=5, level="soft")], cover_applies_to="dodge"))
    attack = one(act(state, D100ZAttack(command_id="a", actor="a1", target="b1"), [30, 45]), AttackResolved)
    assert attack.roll.target == 55 and attack.defense.target == 50 and ("soft cover", "D100Z-09", 10) in mods(attack.defense)
    assert not attack.hit
    state = start(_shot(cover=[CoverFeature(x=9, y=5, level="heavy")], options={"cover": False}))
    assert one(act(state, D100ZAttack(command_id="a", actor="a1", target="b1"), [99]), AttackResolved).roll.target == 55


# ---------------------------------------------------------------- D100Z-10 flanking


def _flank(*allies, **settings):
    return make_setup([fighter("a1", "red", (4, 5)), fighter("b1", "blue", (5, 5)), *allies], **settings)


def test_D100Z_10_allies_engaged_from_opposite_sides_flank_for_plus_ten() -> None:
    """D100Z-10: a2 east of b1, a1 west: +10: a roll of 61 hits Melee 60 + 10."""
    state = start(_flank(fighter("a2", "red", (6, 5))))
    events = act(state, D100ZAttack(command_id="a", actor="a1", target="b1"), [61, 50, 3])
    attack = one(events, AttackResolved)
    assert ("flanking with a2", "D100Z-10", 10) in mods(attack.roll) and attack.roll.target == 70 and attack.hit
    assert one(events, DamageDealt).amount == 4


def test_D100Z_10_flanking_never_gives_more_than_ten_and_needs_opposite_sides() -> None:
    """D100Z-10: three attackers still get +10 only; an ally at 90 degrees does not flank; 135 degrees does."""
    state = start(_flank(fighter("a2", "red", (6, 5)), fighter("a3", "red", (6, 6))))
    attack = one(act(state, D100ZAttack(command_id="a", actor="a1", target="b1"), [99]), AttackResolved)
    assert attack.roll.target == 70 and [m for m in mods(attack.roll) if m[1] == "D100Z-10"] == [("flanking with a2", "D100Z-10", 10)]
    state = start(_flank(fighter("a2", "red", (5, 4))))
    assert one(act(state, D100ZAttack(command_id="a", actor="a1", target="b1"), [99]), AttackResolved).roll.target == 60
    state = start(_flank(fighter("a2", "red", (6, 6))))
    assert one(act(state, D100ZAttack(command_id="a", actor="a1", target="b1"), [99]), AttackResolved).roll.target == 70
    assert rules.opposite_sides((5, 5), (4, 5), (6, 6), 135) and not rules.opposite_sides((5, 5), (4, 5), (5, 4), 135)


def test_D100Z_10_a_flanker_gets_plus_ten_on_a_ranged_attack_too() -> None:
    """D100Z-10 "Each flanker gets +10 to attack rolls against that enemy": a1 and a2 are
    Engaged with b1 from opposite sides; a1 fires its pistol point-blank: Ranged 55 + 10,
    so a roll of 61 hits (it missed before: only melee got the bonus)."""
    state = start(make_setup([fighter("a1", "red", (4, 5), weapons=[PISTOL, KNIFE]), fighter("b1", "blue", (5, 5)), fighter("a2", "red", (6, 5))]))
    events = act(state, D100ZAttack(command_id="a", actor="a1", target="b1", weapon="pistol"), [61, 50, 3])
    attack = one(events, AttackResolved)
    assert mods(attack.roll) == [("Ranged skill", "D100Z-04", 55), ("flanking with a2", "D100Z-10", 10)]
    assert attack.roll.target == 65 and attack.hit and one(events, DamageDealt).amount == 4


def test_D100Z_10_flanking_counts_for_unarmed_second_and_free_attacks() -> None:
    """D100Z-10 on every attack roll: a second attack (D100Z-11, fists: 50 - 20 + 10) and the
    free attack on leaving Engaged range (D100Z-15) get the +10 like the first."""
    state = start(make_setup([fighter("a1", "red", (4, 5), weapons=[KNIFE]), fighter("b1", "blue", (5, 5)), fighter("a2", "red", (6, 5))]))
    act(state, D100ZAttack(command_id="a", actor="a1", target="b1"), [99])
    second = one(act(state, D100ZAttack(command_id="b", actor="a1", target="b1", weapon="unarmed"), [99]), AttackResolved)
    assert mods(second.roll) == [("Brawling skill", "D100Z-04", 50), ("flanking with a2", "D100Z-10", 10), ("second attack, same weapon", "D100Z-11", -20)]
    state = start(_flank(fighter("a2", "red", (6, 5))), [20, 20, 80])  # b1 acts first and walks away
    assert state.active == "b1"
    act(state, D100ZMove(command_id="m", actor="b1", path=[(5, 6), (5, 7)]))
    act(state, ClaimReaction(command_id="c", actor="a1", window=1, reaction="free_attack"))
    events = act(state, ClaimReaction(command_id="c2", actor="a2", window=1, reaction="free_attack"), [99, 99])
    free = [e for e in of_type(events, AttackResolved)]
    assert [(a.attacker, a.kind) for a in free] == [("a1", "free_attack"), ("a2", "free_attack")]
    assert all(("flanking with a2" if a.attacker == "a1" else "flanking with a1", "D100Z-10", 10) in mods(a.roll) for a in free)


def test_D100Z_10_a_shooter_not_engaged_is_no_flanker() -> None:
    """D100Z-10: flankers are the allies engaged with the enemy; a1 shooting from 2 squares
    away, with a2 engaged on b1's far side, gets no bonus."""
    state = start(make_setup([fighter("a1", "red", (3, 5)), fighter("b1", "blue", (5, 5)), fighter("a2", "red", (6, 5))]))
    attack = one(act(state, D100ZAttack(command_id="a", actor="a1", target="b1"), [99]), AttackResolved)
    assert mods(attack.roll) == [("Ranged skill", "D100Z-04", 55)]


def test_D100Z_10_flanking_switched_off() -> None:
    state = start(_flank(fighter("a2", "red", (6, 5)), options={"flanking": False}))
    assert one(act(state, D100ZAttack(command_id="a", actor="a1", target="b1"), [99]), AttackResolved).roll.target == 60


# ---------------------------------------------------------------- D100Z-11 multi-attack


def _duel(weapons, **settings):
    return make_setup([fighter("a1", "red", (0, 5), weapons=weapons), fighter("b1", "blue", (1, 5)), fighter("b2", "blue", (20, 5))], **settings)


def test_D100Z_11_two_weapons_second_attack_at_minus_ten() -> None:
    """D100Z-11: knife then hatchet (one in each hand): the second attack at -10 (60 - 10 = 50)."""
    state = start(_duel([KNIFE, HATCHET]))
    act(state, D100ZAttack(command_id="a", actor="a1", target="b1", weapon="knife"), [99])
    events = act(state, D100ZAttack(command_id="b", actor="a1", target="b1", weapon="hatchet"), [50, 60, 2])
    spent = one(events, ActionTaken)
    assert (spent.action, spent.slot, spent.rule, spent.details["penalty"]) == ("second_attack", "free", "D100Z-11", -10)
    attack = one(events, AttackResolved)
    assert ("second attack, other hand", "D100Z-11", -10) in mods(attack.roll) and attack.roll.target == 50 and attack.hit
    assert one(events, DamageDealt).amount == 2
    assert rejection(act(state, D100ZAttack(command_id="c", actor="a1", target="b1"))) == "a1 has already attacked twice this turn (D100Z-11)"


def test_D100Z_11_one_weapon_twice_or_a_two_handed_weapon_second_attack_at_minus_twenty() -> None:
    """D100Z-11: the same weapon twice: -20; a two-handed weapon cannot be one of two: -20."""
    state = start(_duel([KNIFE, HATCHET]))
    act(state, D100ZAttack(command_id="a", actor="a1", target="b1", weapon="knife"), [99])
    attack = one(act(state, D100ZAttack(command_id="b", actor="a1", target="b1", weapon="knife"), [41]), AttackResolved)
    assert ("second attack, same weapon", "D100Z-11", -20) in mods(attack.roll) and attack.roll.target == 40 and not attack.hit
    state = start(_duel([MAUL, KNIFE]))
    act(state, D100ZAttack(command_id="a", actor="a1", target="b1", weapon="maul"), [99])
    assert one(act(state, D100ZAttack(command_id="b", actor="a1", target="b1", weapon="knife"), [99]), AttackResolved).roll.target == 40


def test_D100Z_11_second_attack_needs_the_option_and_a_first_attack() -> None:
    """D100Z-11 / D100Z-16: with options.multi_attack false the second attack is refused, naming the setting."""
    state = start(_duel([KNIFE, HATCHET], options={"multi_attack": False}))
    act(state, D100ZAttack(command_id="a", actor="a1", target="b1"), [99])
    reason = rejection(act(state, D100ZAttack(command_id="b", actor="a1", target="b1", weapon="hatchet")))
    assert reason == "a second attack (multi-attack) is an optional rule switched off for this encounter (settings options.multi_attack = false, D100Z-16)"


# ---------------------------------------------------------------- D100Z-12 aimed shot


def test_D100Z_12_aimed_shot_takes_the_turn_then_plus_twenty_ignoring_soft_cover() -> None:
    """D100Z-12: aim (whole turn, no movement); next turn's attack: 55 + 20, soft cover ignored: 75."""
    state = start(_shot(cover=[CoverFeature(x=9, y=5, level="soft")]))
    events = act(state, D100ZAimedShot(command_id="aim", actor="a1", target="b1"))
    spent = one(events, ActionTaken)
    assert (spent.action, spent.rule, spent.details["target"]) == ("aimed_shot", "D100Z-12", "b1")
    assert state.combatants["a1"].aim_target == "b1"
    assert rejection(act(state, D100ZMove(command_id="m", actor="a1", path=[(0, 6)]))) == "a1 aimed this turn and cannot move in the same turn (D100Z-12)"
    assert rejection(act(state, D100ZAttack(command_id="x", actor="a1", target="b1"))) == "a1 has already used its action this turn (aimed_shot); an attack needs it"
    end_turn(state)
    end_turn(state)
    end_turn(state, [80, 20, 10])  # round 2: a1 first again
    events = act(state, D100ZAttack(command_id="a", actor="a1", target="b1"), [75, 80, 1, 1])
    attack = one(events, AttackResolved)
    assert mods(attack.roll) == [("Ranged skill", "D100Z-04", 55), ("aimed shot", "D100Z-12", 20)]
    assert attack.roll.target == 75 and attack.hit and "aimed shot: +20 and soft cover ignored (D100Z-12)" in attack.roll.notes
    assert one(events, StateAdjusted).changes == {"aim_target": None} and state.combatants["a1"].aim_target is None


def test_D100Z_12_aimed_shot_does_not_ignore_hard_cover_and_is_spent_by_any_attack() -> None:
    """D100Z-12: hard cover still counts (+20 - 20); attacking someone else spends the aim without the bonus."""
    state = start(_shot(cover=[CoverFeature(x=9, y=5, level="hard")]))
    act(state, D100ZAimedShot(command_id="aim", actor="a1", target="b1"))
    end_turn(state)
    end_turn(state)
    end_turn(state, [80, 20, 10])
    assert one(act(state, D100ZAttack(command_id="a", actor="a1", target="b1"), [99]), AttackResolved).roll.target == 55
    state = start(_shot())
    act(state, D100ZAimedShot(command_id="aim", actor="a1", target="b1"))
    end_turn(state)
    end_turn(state)
    end_turn(state, [80, 20, 10])
    assert one(act(state, D100ZAttack(command_id="a", actor="a1", target="b2"), [99]), AttackResolved).roll.target == 55
    assert state.combatants["a1"].aim_target is None


def test_D100Z_12_no_aiming_after_moving_and_moving_breaks_the_aim() -> None:
    """D100Z-12: you cannot move and aim in the same turn; a later move spends the aim (house default)."""
    state = start(_shot())
    act(state, D100ZMove(command_id="m", actor="a1", path=[(0, 6)]))
    assert rejection(act(state, D100ZAimedShot(command_id="aim", actor="a1", target="b1"))) == (
        "Aimed Shot takes the whole turn and a1 has already moved this turn (D100Z-12)")
    state = start(_shot())
    act(state, D100ZAimedShot(command_id="aim", actor="a1", target="b1"))
    end_turn(state)
    end_turn(state)
    end_turn(state, [80, 20, 10])
    events = act(state, D100ZMove(command_id="m", actor="a1", path=[(0, 6)]))
    assert one(events, StateAdjusted).reason == "moving breaks the aim (house default)" and state.combatants["a1"].aim_target is None


def test_D100Z_12_aimed_shot_switched_off() -> None:
    """D100Z-12 / D100Z-16: options.aimed_shot false refuses the command, naming the setting."""
    state = start(_shot(options={"aimed_shot": False}))
    assert rejection(act(state, D100ZAimedShot(command_id="aim", actor="a1", target="b1"))) == (
        "Aimed Shot is an optional rule switched off for this encounter (settings options.aimed_shot = false, D100Z-16)")


# ---------------------------------------------------------------- D100Z-13 suppressive fire


def _zone_field(**settings):
    return make_setup([
        fighter("a1", "red", (0, 5)),
        fighter("a2", "red", (3, 3)),    # an ally of the shooter in the close zone
        fighter("b1", "blue", (4, 5)),   # 8 m: close
        fighter("b2", "blue", (5, 8)),   # 10 m: close
        fighter("b3", "blue", (12, 5)),  # 24 m: far
    ], **settings)


def test_D100Z_13_everyone_in_the_zone_rolls_dex_or_takes_base_damage() -> None:
    """D100Z-13 "All creatures in that zone must roll DEX": the shooter's ally a2 too
    (it passes, 20 <= 40, and is suppressed); b1 passes (30) and is suppressed; b2 fails (50)
    and takes 2d6+1 = 3 + 3 + 1."""
    state = start(_zone_field())
    events = act(state, D100ZSuppressiveFire(command_id="s", actor="a1", zone="close"), [20, 30, 50, 3, 3])
    spent = one(events, ActionTaken)
    assert (spent.action, spent.rule, spent.details["caught"]) == ("suppressive_fire", "D100Z-13", ["a2", "b1", "b2"])
    tests = of_type(events, RolledTest)
    assert [(t.combatant, t.success, t.roll.target) for t in tests] == [("a2", True, 40), ("b1", True, 40), ("b2", False, 40)]
    applied = of_type(events, ConditionApplied)
    assert [(c.combatant, c.condition, c.until) for c in applied] == [
        ("a2", "suppressed", "end_of_turn:a2"), ("b1", "suppressed", "end_of_turn:b1"),
    ]
    assert state.combatants["b1"].suppressed == {"by": "a1", "origin": [0, 5], "zone": "close"}
    damage = one(events, DamageDealt)
    assert (damage.target, damage.amount, damage.rule) == ("b2", 7, "D100Z-13") and state.combatants["b2"].hp == 8


def test_D100Z_13_an_ally_in_the_zone_who_fails_takes_the_damage() -> None:
    """D100Z-13: the shooter's ally is a creature in the zone like any other: failing DEX (60 > 40) it takes 2d6+1."""
    state = start(_zone_field())
    events = act(state, D100ZSuppressiveFire(command_id="s", actor="a1", zone="close"), [60, 2, 4, 30, 30])
    damage = one(events, DamageDealt)
    assert (damage.target, damage.source, damage.amount) == ("a2", "a1", 7) and state.combatants["a2"].hp == 8


def test_D100Z_13_house_rule_spares_the_shooters_allies() -> None:
    """House rule suppressive_fire_hits_allies = false: a2 is not caught."""
    state = start(_zone_field(suppressive_fire_hits_allies=False))
    events = act(state, D100ZSuppressiveFire(command_id="s", actor="a1", zone="close"), [30, 50, 3, 3])
    assert one(events, ActionTaken).details["caught"] == ["b1", "b2"]
    assert [t.combatant for t in of_type(events, RolledTest)] == ["b1", "b2"]


def test_D100Z_13_heavy_cover_does_not_stop_fire_into_the_zone() -> None:
    """D100Z-09 heavy cover "cannot be targeted directly"; Suppressive Fire targets no one
    directly, so b1 behind heavy cover rolls DEX too. House rule
    heavy_cover_shields_from_suppressive_fire = true spares it."""
    cover = [CoverFeature(x=3, y=5, level="heavy")]
    state = start(_zone_field(cover=cover, suppressive_fire_hits_allies=False))
    assert rejection(act(state, D100ZAttack(command_id="a", actor="a1", target="b1"))) == "b1 is behind heavy cover and cannot be targeted directly (D100Z-09)"
    events = act(state, D100ZSuppressiveFire(command_id="s", actor="a1", zone="close"), [30, 30])
    assert one(events, ActionTaken).details["caught"] == ["b1", "b2"]
    state = start(_zone_field(cover=cover, suppressive_fire_hits_allies=False, heavy_cover_shields_from_suppressive_fire=True))
    events = act(state, D100ZSuppressiveFire(command_id="s", actor="a1", zone="close"), [30])
    assert one(events, ActionTaken).details["caught"] == ["b2"]


def test_D100Z_13_the_house_rules_are_switches() -> None:
    with pytest.raises(Rejected, match="setting suppressive_fire_hits_allies must be true or false, not 'no'"):
        SYSTEM.settings_for(_zone_field(suppressive_fire_hits_allies="no"))


def test_D100Z_13_suppressed_creatures_spend_their_action_to_leave_the_zone() -> None:
    """D100Z-13: b1 may move inside the close zone freely; leaving it costs the action (no attack after)."""
    state = start(_zone_field())
    act(state, D100ZSuppressiveFire(command_id="s", actor="a1", zone="close"), [20, 30, 50, 3, 3])
    end_turn(state)
    end_turn(state)
    assert state.active == "b1"
    events = act(state, D100ZMove(command_id="m", actor="b1", path=[(5, 5)]))  # 10 m from the origin: still close
    assert not of_type(events, ActionTaken)
    events = act(state, D100ZMove(command_id="m2", actor="b1", path=[(6, 5), (7, 5), (8, 5)]))  # 16 m: far
    spent = one(events, ActionTaken)
    assert (spent.action, spent.rule) == ("move", "D100Z-13")
    assert spent.details["because"] == ["leaving the close zone under suppressive fire"]
    assert rejection(act(state, D100ZAttack(command_id="a", actor="b1", target="a1"))) == "b1 has already used its action this turn (move); an attack needs it"
    events = end_turn(state)
    assert one(events, ConditionRemoved).condition == "suppressed" and state.combatants["b1"].suppressed == {}


def test_D100Z_13_a_suppressed_creature_that_already_acted_cannot_leave() -> None:
    state = start(_zone_field())
    act(state, D100ZSuppressiveFire(command_id="s", actor="a1", zone="close"), [20, 30, 50, 3, 3])
    end_turn(state)
    end_turn(state)
    act(state, D100ZAttack(command_id="a", actor="b1", target="a1"), [99])
    reason = rejection(act(state, D100ZMove(command_id="m", actor="b1", path=[(5, 5), (6, 5), (7, 5), (8, 5)])))
    assert reason == "leaving the close zone under suppressive fire costs the action, and b1 has already used it (attack) (D100Z-13)"


def test_D100Z_13_zone_choice_dex_of_90_and_switch() -> None:
    """D100Z-13: the far zone catches b3 only; a DEX roll of 90+ fails (house default, like a dodge); the option can be off."""
    state = start(_zone_field())
    events = act(state, D100ZSuppressiveFire(command_id="s", actor="a1", zone="far"), [90, 1, 1])
    assert one(events, ActionTaken).details["caught"] == ["b3"] and not one(events, RolledTest).success
    assert one(events, DamageDealt).amount == 3
    state = start(_zone_field())
    assert rejection(act(state, D100ZSuppressiveFire(command_id="s", actor="a1", zone="distant"))) == "no one to suppress in the distant zone within range and sight of rifle"
    assert rejection(act(state, D100ZSuppressiveFire(command_id="s", actor="a1", zone="nearby"))) == "unknown zone 'nearby'; zones: engaged, close, far, distant"
    state = start(_zone_field(options={"suppressive_fire": False}))
    assert rejection(act(state, D100ZSuppressiveFire(command_id="s", actor="a1", zone="close"))) == (
        "Suppressive Fire is an optional rule switched off for this encounter (settings options.suppressive_fire = false, D100Z-16)")


# ---------------------------------------------------------------- D100Z-16 switches


def test_D100Z_16_options_are_switched_per_encounter_and_validated() -> None:
    """D100Z-16: settings.options turns each optional rule on or off; unknown or non-boolean switches are refused."""
    state = start(_shot(options={"cover": False}))
    assert state.settings["options"] == {"str_bonus": True, "cover": False, "flanking": True, "multi_attack": True, "aimed_shot": True, "suppressive_fire": True}

    def started(**settings):
        return SYSTEM.decide_or_reject(SYSTEM.initial_state(), StartEncounter(command_id="s", actor=SEQUENCER, setup=_shot(**settings), seed_commitment="x"), FixedDice([1, 1, 1]))

    assert rejection(started(options={"sneak": True})) == (
        "unknown optional rules: sneak; known: str_bonus, cover, flanking, multi_attack, aimed_shot, suppressive_fire (D100Z-16)")
    assert rejection(started(options={"cover": "yes"})) == "option 'cover' must be true or false, not 'yes' (D100Z-16)"
    assert rejection(started(options=["cover"])) == "settings 'options' must be an object of optional-rule switches (D100Z-16)"
    assert rejection(started(cover_applies_to="armour")) == "cover_applies_to must be 'attack' or 'dodge', not 'armour'"
