"""Bolt & Blade core rules, BB-CORE-01..17, with fixed dice."""

from __future__ import annotations

import pytest

from firelane.engine.core import Decision
from firelane.engine.dice import FixedDice
from firelane.engine.systems.bolt_and_blade import SYSTEM
from firelane.engine.systems.bolt_and_blade.areas import PersistentZone
from firelane.engine.systems.bolt_and_blade.rules import (
    attribute_modifier,
    d20_mode,
    opposed_winner,
    parse_dice,
    proficiency_bonus,
    range_band,
    roll_d20,
)
from firelane.engine.systems.bolt_and_blade.schemas import (
    BBAim,
    BBDisengage,
    BBHelp,
    BBMark,
    BBReady,
    BBReload,
    BBSearch,
    BBTakeCover,
)
from firelane.events.schemas import (
    ActionTaken,
    AttackResolved,
    CombatantDown,
    ConditionApplied,
    ConditionRemoved,
    CoverFeature,
    DamageDealt,
    ReactionWindowOpened,
    StateAdjusted,
    TurnSkipped,
)
from firelane.events.schemas import (
    TestRolled as _Tested,
)

from .helpers import act, arena, attack, cid, end, fighter, knife_only, move, of, one, rejected, sheet, start


def duel(attacker_sheet: dict | None = None, target_sheet: dict | None = None, distance: int = 4, **settings) -> object:
    """a at (1, 1) acts first; b (knife only unless given) stands ``distance`` squares east."""
    setup = arena(
        [fighter("a", "red", (1, 1), **(attacker_sheet or sheet())), fighter("b", "blue", (1 + distance, 1), **(target_sheet or knife_only()))],
        **settings,
    )
    return start(setup, ["a", "b"])


# ---------------------------------------------------------------- BB-CORE-01..04


def test_check_meets_dc_with_attribute_and_proficiency() -> None:
    """BB-CORE-01: d20 + attribute modifier + proficiency (if proficient) >= DC succeeds."""
    state = duel(sheet(attributes={"intellect": 14}, proficiencies=["awareness"]))
    events = act(state, BBSearch(command_id=cid(), actor="a", dc=14), [10])
    test = one(events, _Tested)
    assert test.test == "intellect check (awareness)"
    assert [(m.source, m.value) for m in test.roll.modifiers] == [("Intellect modifier", 2), ("proficiency (awareness)", 2)]
    assert test.roll.total == 14 and test.roll.target == 14 and test.success  # meets the DC exactly
    # Not proficient: no bonus, 10 + 2 = 12 < 14 fails.
    state = duel(sheet(attributes={"intellect": 14}))
    test = one(act(state, BBSearch(command_id=cid(), actor="a", dc=14), [10]), _Tested)
    assert test.roll.total == 12 and not test.success


@pytest.mark.parametrize(("score", "modifier"), [(1, -5), (3, -4), (8, -1), (9, -1), (10, 0), (11, 0), (12, 1), (15, 2), (18, 4), (20, 5), (24, 7), (30, 10)])
def test_attribute_modifier_is_floor_of_half_score_minus_ten(score: int, modifier: int) -> None:
    """BB-CORE-02: modifier = floor((score - 10) / 2); scores may exceed 18."""
    assert attribute_modifier(score) == modifier


def test_six_attributes_and_unknown_ones_are_refused() -> None:
    """BB-CORE-02: six attributes, each a score and a modifier; an unknown attribute is a sheet error."""
    state = duel(sheet(attributes={"strength": 20, "agility": 7, "toughness": 13, "intellect": 10, "willpower": 18, "presence": 25}))
    a = state.combatants["a"]
    assert {name: a.modifier(name) for name in a.attributes} == {
        "strength": 5, "agility": -2, "toughness": 1, "intellect": 0, "willpower": 4, "presence": 7,
    }
    from firelane.engine.core import SEQUENCER
    from firelane.events.schemas import StartEncounter

    bad = arena([fighter("a", "red", (1, 1), **sheet(attributes={"luck": 12})), fighter("b", "blue", (3, 1), **knife_only())])
    events = SYSTEM.decide_or_reject(SYSTEM.initial_state(), StartEncounter(command_id="s", actor=SEQUENCER, setup=bad, seed_commitment=""), FixedDice([]))
    assert "unknown attributes ['luck']" in rejected(events)


@pytest.mark.parametrize(("level", "bonus"), [(1, 2), (4, 2), (5, 3), (8, 3), (9, 4), (12, 4), (13, 5), (16, 5), (17, 6), (20, 6)])
def test_proficiency_bonus_by_level(level: int, bonus: int) -> None:
    """BB-CORE-03: +2 (1-4), +3 (5-8), +4 (9-12), +5 (13-16), +6 (17-20)."""
    assert proficiency_bonus(level) == bonus


def test_proficiency_table_is_a_setting_and_level_sets_attack_bonus() -> None:
    """BB-CORE-03: the table is a house default, configurable per encounter."""
    state = duel(sheet(level=5))
    events = act(state, attack("a", "b"), [3])  # 3 + 3 + 2 (b stands in the open: Exposed) = 8 < 10: a miss rolls no damage
    roll = one(events, AttackResolved).roll
    assert [(m.source, m.value) for m in roll.modifiers] == [("Agility modifier", 0), ("proficiency (basic)", 3), ("b is Exposed", 2)]
    state = duel(sheet(level=5), proficiency_table=[[1, 1], [5, 7]])
    roll = one(act(state, attack("a", "b"), [5, 4]), AttackResolved).roll
    assert roll.modifiers[1].value == 7 and roll.total == 14


def test_proficiency_applies_only_to_trained_weapons_and_proficient_saves() -> None:
    """BB-CORE-04: proficiency on attacks with trained weapons and on proficient saves only."""
    state = duel(sheet(weapon_proficiencies=["melee"]))
    events = act(state, attack("a", "b"), [7])  # lasgun untrained: 7 + 0 + 2 (Exposed) = 9 < 10, a miss
    roll = one(events, AttackResolved).roll
    assert [m.source for m in roll.modifiers] == ["Agility modifier", "b is Exposed"] and roll.total == 9 and not one(events, AttackResolved).hit
    state = duel(sheet(save_proficiencies=["willpower"]))
    decision = Decision(SYSTEM, state)
    trained = SYSTEM.roll_save(decision, "a", "willpower", 12, FixedDice([10]), rule="BB-CORE-06", purpose="fear")
    untrained = SYSTEM.roll_save(decision, "a", "toughness", 12, FixedDice([10]), rule="BB-CORE-06", purpose="poison")
    assert trained.roll.total == 12 and trained.success
    assert untrained.roll.total == 10 and not untrained.success


# ---------------------------------------------------------------- BB-CORE-05


def test_advantage_and_disadvantage_pure_rules() -> None:
    """BB-CORE-05: Advantage keeps the higher of two d20, Disadvantage the lower;
    any number of sources of each cancel to one d20."""
    assert d20_mode(["ambush"], []) == "advantage"
    assert d20_mode([], ["smoke", "pinned"]) == "disadvantage"
    assert d20_mode(["ambush"], ["smoke", "pinned", "long range"]) == "cancelled"
    assert d20_mode(["a", "b", "c"], ["d"]) == "cancelled"
    high = roll_d20(FixedDice([4, 17]), ["aim"], [])
    assert high.natural == 17 and high.kept == 1 and len(high.dice) == 2
    low = roll_d20(FixedDice([4, 17]), [], ["pinned"])
    assert low.natural == 4 and low.kept == 0
    one_die = roll_d20(FixedDice([11]), ["help"], ["pinned", "long range"])
    assert one_die.natural == 11 and len(one_die.dice) == 1 and one_die.mode == "cancelled"


def test_two_disadvantages_and_one_advantage_cancel_in_play() -> None:
    """BB-CORE-05: a Pinned shooter (dis) at long range (dis) on a Helped target (adv) rolls one d20."""
    setup = arena([
        fighter("a", "red", (1, 1), **sheet()),
        fighter("h", "red", (15, 2), **knife_only()),
        fighter("b", "blue", (14, 1), **knife_only()),  # 65 ft: beyond the lasgun's 60
    ])
    state = start(setup, ["h", "a", "b"])
    act(state, BBHelp(command_id=cid(), actor="h", target="b"))
    act(state, end("h"))
    state.combatants["a"].conditions["pinned"] = ""
    events = act(state, attack("a", "b"), [12, 3])  # exactly one d20, then 1d8 damage
    roll = one(events, AttackResolved).roll
    assert len(roll.dice) == 1 and roll.details["mode"] == "cancelled"
    assert sorted(roll.details["disadvantage"]) == ["attacker is Pinned (BB-CMB-19)", "beyond normal range (65 ft > 60 ft, BB-CORE-11)"]
    assert roll.total == 16 and one(events, DamageDealt).amount == 3  # 12 + 2 + 2 (b is Exposed)
    assert "helped" not in state.combatants["b"].conditions  # used up by the attack


def test_bb_core_05_shooting_through_smoke_has_disadvantage_and_smoke_hides_from_reactions() -> None:
    """BB-CORE-05: "Shooting through smoke or darkness" is a Disadvantage: a fires at b through a
    smoke screen (two d20, the lower kept: 4 + 2 + 2 = 8 < 10). b cannot see a through it, so it
    has no Return Fire (BB-CMB-14: "a visible enemy"), and a no Reactive Fire at b moving behind it."""
    state = duel(sheet(), sheet(), distance=5)  # a at (1, 1), b at (6, 1), both with lasguns
    state.zones.append(PersistentZone(id="smoke", kind="smoke", squares=[(3, y) for y in range(0, 12)], rounds_left=3, creator="b", blocks_sight=True))
    events = act(state, attack("a", "b"), [15, 4])
    shot = one(events, AttackResolved)
    assert not of(events, ReactionWindowOpened)
    assert shot.roll.details["disadvantage"] == ["shooting through smoke (BB-CORE-05)"] and shot.roll.kept == [1] and shot.roll.total == 8 and not shot.hit
    act(state, end("a"))
    events = act(state, move("b", (6, 2), (6, 3)))
    assert not of(events, ReactionWindowOpened) and state.combatants["b"].position == (6, 3)


# ---------------------------------------------------------------- BB-CORE-06


@pytest.mark.parametrize("attribute", ["strength", "agility", "toughness", "intellect", "willpower", "presence"])
def test_save_is_d20_plus_save_bonus_for_each_attribute(attribute: str) -> None:
    """BB-CORE-06: d20 + save bonus (modifier, proficiency, other bonuses) vs DC, any of the six attributes."""
    state = duel(sheet(attributes={attribute: 16}, save_proficiencies=[attribute], save_bonuses={attribute: 1}))
    decision = Decision(SYSTEM, state)
    save = SYSTEM.roll_save(decision, "a", attribute, 15, FixedDice([9]), rule="BB-CORE-06", purpose="test")
    assert [m.value for m in save.roll.modifiers] == [3, 2, 1]
    assert save.roll.total == 15 and save.success and save.test == f"{attribute} save"
    assert decision.events == [save]


# ---------------------------------------------------------------- BB-CORE-07, -08


def test_attack_hits_when_total_meets_defense() -> None:
    """BB-CORE-07: d20 + attack bonus >= Defense hits; ranged attacks use Agility."""
    state = duel(sheet(attributes={"agility": 14, "strength": 6}))
    events = act(state, attack("a", "b"), [4, 5])  # 4 + 2 (Agility) + 2 (proficiency) + 2 (b in the open: Exposed) = 10 = Defense 10
    hit = one(events, AttackResolved)
    assert hit.hit and hit.roll.total == 10 and hit.roll.target == 10
    assert one(events, DamageDealt).amount == 5 and state.combatants["b"].vitality == 15
    state = duel(sheet(attributes={"agility": 14}))
    miss = one(act(state, attack("a", "b"), [3]), AttackResolved)
    assert not miss.hit and miss.roll.total == 9


def test_melee_attacks_use_strength_and_add_it_to_damage() -> None:
    """BB-CORE-07: melee attacks use Strength (the knife adds it to damage too)."""
    state = duel(sheet(attributes={"strength": 16, "agility": 6}), distance=1)
    events = act(state, attack("a", "b", "combat knife"), [5, 2])
    hit = one(events, AttackResolved)
    assert hit.roll.modifiers[0].source == "Strength modifier" and hit.roll.total == 5 + 3 + 2
    assert one(events, DamageDealt).amount == 2 + 3


def test_defense_is_a_sum_of_named_sources_with_rule_ids() -> None:
    """BB-CORE-08: Defense = base + armour + Agility + cover + other sources, each named in the breakdown."""
    target = knife_only(attributes={"agility": 14}, armour="flak armour", defense_sources=[{"source": "storm shield", "value": 2, "kind": "shield"}])
    setup = arena(
        [fighter("a", "red", (1, 1), **sheet()), fighter("b", "blue", (5, 1), **target)],
        cover=[CoverFeature(x=5, y=1, level="light", facing=[(-1, 0)])],
    )
    state = start(setup, ["a", "b"])
    events = act(state, attack("a", "b"), [14])
    defense = one(events, AttackResolved).defense
    assert [(m.source, m.rule, m.value) for m in defense.modifiers] == [
        ("base Defense", "BB-CORE-08", 10),
        ("armour: flak armour", "BB-CORE-08", 2),
        ("Agility modifier", "BB-CORE-08", 2),
        ("light cover", "BB-CMB-04", 2),
        ("shield: storm shield", "BB-CORE-08", 2),
    ]
    assert defense.total == 18 and one(events, AttackResolved).roll.target == 18 and not one(events, AttackResolved).hit


# ---------------------------------------------------------------- BB-CORE-09, -10


def test_vitality_zero_is_down_and_out_of_the_fight() -> None:
    """BB-CORE-09: at 0 Vitality the character is Down; its turns are skipped."""
    setup = arena([
        fighter("a", "red", (1, 1), **sheet()),
        fighter("b", "blue", (5, 1), **knife_only(vitality=6)),
        fighter("c", "blue", (9, 9), **knife_only()),
    ])
    state = start(setup, ["a", "b", "c"])
    events = act(state, attack("a", "b"), [15, 8])
    assert one(events, DamageDealt).remaining == 0
    down = one(events, CombatantDown)
    assert down.combatant == "b" and down.rule == "BB-CORE-09"
    assert state.combatants["b"].out_of_fight and state.combatants["b"].vitality == 0
    events = act(state, end("a"))
    assert one(events, TurnSkipped).combatant == "b" and state.active == "c"


def test_opposed_check_higher_wins_and_the_defender_holds_ties() -> None:
    """BB-CORE-10: both roll; higher wins; a tie goes to the side not acting (house default)."""
    state = duel(sheet(attributes={"agility": 14}, proficiencies=["stealth"]), knife_only(attributes={"willpower": 14}, proficiencies=["awareness"]))
    decision = Decision(SYSTEM, state)
    result = SYSTEM.opposed_check(decision, "a", "b", ("agility", "stealth"), ("willpower", "awareness"), FixedDice([10, 11]), purpose="hide")
    assert (result.actor_roll.total, result.defender_roll.total) == (14, 15) and result.winner == "b" and not result.tie
    tie = SYSTEM.opposed_check(decision, "a", "b", ("agility", "stealth"), ("willpower", "awareness"), FixedDice([12, 12]), purpose="hide")
    assert tie.tie and tie.winner == "b"
    assert opposed_winner(14, 14, "actor") == ("actor", True)
    state = duel(sheet(), knife_only(), opposed_tie="actor")
    tie = SYSTEM.opposed_check(Decision(SYSTEM, state), "a", "b", ("strength", None), ("strength", None), FixedDice([7, 7]), purpose="grapple")
    assert tie.winner == "a"


# ---------------------------------------------------------------- BB-CORE-11


def test_range_bands_forty_one_twenty() -> None:
    """BB-CORE-11: 40/120: 40 ft normal, 41-120 Disadvantage, 121+ no attack."""
    assert [range_band(ft, 40, 120) for ft in (5, 40, 41, 45, 120, 121, 125)] == ["normal", "normal", "long", "long", "long", "out", "out"]


def test_bolt_pistol_range_in_play() -> None:
    """BB-CORE-11: a bolt pistol hits normally at 40 ft, with Disadvantage at 45 ft, refuses at 125 ft."""
    pistol = sheet(weapons=["bolt pistol"], ready_weapon="bolt pistol")
    state = duel(pistol, distance=8)
    roll = one(act(state, attack("a", "b"), [5]), AttackResolved).roll  # 5 + 2 + 2 (b is Exposed): a miss
    assert len(roll.dice) == 1 and roll.details["range_band"] == "normal" and roll.total == 9
    state = duel(pistol, distance=9)
    roll = one(act(state, attack("a", "b"), [15, 4]), AttackResolved).roll
    assert len(roll.dice) == 2 and roll.kept == [1] and roll.total == 8 and roll.details["disadvantage"] == ["beyond normal range (45 ft > 40 ft, BB-CORE-11)"]
    state = duel(pistol, distance=25)
    assert rejected(act(state, attack("a", "b"))) == "b is 125 ft away, beyond bolt pistol's maximum range of 120 ft (BB-CORE-11); a's bolt pistol has no target it can attack from here"


# ---------------------------------------------------------------- BB-CORE-12..15


def test_natural_twenty_is_a_critical_hit_dice_twice_modifiers_once() -> None:
    """BB-CORE-12: damage dice rolled twice, modifiers added once."""
    state = duel(sheet(attributes={"strength": 14}), knife_only(armour="carapace armour", attributes={"agility": 18}), distance=1)
    events = act(state, attack("a", "b", "combat knife"), [20, 3, 4])  # 20 + 2 + 2 = 24 vs 18; 2d4 + 2
    hit = one(events, AttackResolved)
    assert hit.hit and hit.critical and "natural 20: Critical Hit (BB-CORE-12)" in hit.roll.notes
    damage = one(events, DamageDealt)
    assert [d.face for d in damage.roll.dice] == [3, 4] and damage.amount == 9 and damage.roll.rule == "BB-CORE-12"
    # A natural 20 hits even when the total falls short of Defense.
    state = duel(sheet(attributes={"agility": 6}), knife_only(armour="carapace armour", defense_sources=[{"source": "refractor field", "value": 12}]))
    events = act(state, attack("a", "b"), [20, 2, 7])
    assert one(events, AttackResolved).roll.total == 22 and one(events, AttackResolved).roll.target == 26  # 20 - 2 + 2 + 2 (Exposed) and one(events, AttackResolved).hit and one(events, DamageDealt).amount == 9


def test_natural_twenty_on_a_save_is_flagged_not_automatic() -> None:
    """BB-CORE-13: a natural 20 on a check or save is no automatic success; it is flagged best outcome."""
    state = duel(sheet(attributes={"willpower": 4}))
    save = SYSTEM.roll_save(Decision(SYSTEM, state), "a", "willpower", 25, FixedDice([20]), rule="BB-CORE-06", purpose="terror")
    assert save.roll.total == 17 and not save.success and save.roll.details["best_outcome"] is True
    check = SYSTEM.roll_save(Decision(SYSTEM, state), "a", "willpower", 15, FixedDice([20]), rule="BB-CORE-06", purpose="fear")
    assert check.success and check.roll.details["best_outcome"]


def test_natural_one_misses_and_dangerous_traits_trigger() -> None:
    """BB-CORE-14: a natural 1 misses whatever the total; jam, overheat and perils weapons suffer their consequence."""
    jammer = sheet(attributes={"agility": 30}, weapons=["autogun"], ready_weapon="autogun")
    state = duel(jammer)
    events = act(state, attack("a", "b"), [1])
    miss = one(events, AttackResolved)
    assert not miss.hit and miss.roll.total == 1 + 10 + 2 + 2 and "natural 1: the attack misses (BB-CORE-14)" in miss.roll.notes
    assert [e.changes for e in of(events, StateAdjusted)] == [{"ammo": {"autogun": 23}}, {"jammed": ["autogun"]}]
    assert state.combatants["a"].jammed == ["autogun"]
    act(state, end("a"))
    act(state, end("b"))
    assert rejected(act(state, attack("a", "b"))) == "autogun is jammed: Reload to clear it"
    act(state, BBReload(command_id=cid(), actor="a"))
    assert state.combatants["a"].jammed == [] and state.combatants["a"].ammo["autogun"] == 24

    plasma = sheet(weapons=["plasma gun"], ready_weapon="plasma gun")
    state = duel(plasma)
    events = act(state, attack("a", "b"), [1, 4])  # natural 1, then 1d6 overheat burn
    assert one(events, ConditionApplied).condition == "overheated:plasma gun"
    burn = one(events, DamageDealt)
    assert burn.target == "a" and burn.amount == 4 and burn.rule == "BB-CORE-14" and state.combatants["a"].vitality == 16

    force = sheet(weapons=[{"name": "force staff", "kind": "ranged", "category": "basic", "range": [30, 60], "damage": "1d6", "traits": ["perils"]}], ready_weapon="force staff")
    state = duel(force)
    events = act(state, attack("a", "b"), [1, 5, 3])  # natural 1; Willpower save 5 vs DC 12 fails; 1d6 = 3
    assert one(events, _Tested).success is False and one(events, DamageDealt).amount == 3


def test_natural_one_on_a_save_is_flagged_not_automatic_failure() -> None:
    """BB-CORE-15: a natural 1 on a check or save is no automatic failure; it invites a complication."""
    state = duel(sheet(attributes={"agility": 30}, save_proficiencies=["agility"]))
    save = SYSTEM.roll_save(Decision(SYSTEM, state), "a", "agility", 12, FixedDice([1]), rule="BB-CORE-06", purpose="leap")
    assert save.roll.total == 13 and save.success and save.roll.details["complication"] is True
    assert any("complication" in note for note in save.roll.notes)


# ---------------------------------------------------------------- BB-CORE-16, -17


def test_turn_economy_one_action_one_bonus_movement() -> None:
    """BB-CORE-16: Movement, one Action, one Bonus Action, one Reaction per round."""
    state = duel(sheet(features=["Mark the Guilty"]))
    act(state, BBAim(command_id=cid(), actor="a"))
    assert rejected(act(state, BBMark(command_id=cid(), actor="a", target="b", mark="Mark the Guilty"))) == "a has already used its Bonus Action this turn (one per turn, BB-CMB-22)"
    act(state, attack("a", "b"), [2])
    assert rejected(act(state, attack("a", "b"))) == "a has already used its Action this turn"
    assert rejected(act(state, BBDisengage(command_id=cid(), actor="a"))) == "a has already used its Action this turn"
    assert rejected(act(state, move("a", *[(1, y) for y in range(2, 9)]))) == "the path costs 35 ft but a has only 30 ft of movement left"
    act(state, move("a", *[(1, y) for y in range(2, 8)]))
    assert state.combatants["a"].position == (1, 7) and state.combatants["a"].movement_used_ft == 30


def test_actions_ready_reload_help_take_cover_disengage() -> None:
    """BB-CORE-17: the common actions exist and each spends the Action."""
    state = duel(sheet(weapons=["lasgun", "bolt pistol", "combat knife"]), distance=1)
    events = act(state, BBReady(command_id=cid(), actor="a", weapon="bolt pistol"))
    assert one(events, ActionTaken).action == "ready" and state.combatants["a"].ready_weapon == "bolt pistol"
    act(state, end("a"))
    act(state, end("b"))
    state.combatants["a"].ammo["bolt pistol"] = 2
    act(state, BBReload(command_id=cid(), actor="a", weapon="bolt pistol"))
    assert state.combatants["a"].ammo["bolt pistol"] == 8
    act(state, end("a"))
    act(state, end("b"))
    events = act(state, BBHelp(command_id=cid(), actor="a", target="b"))
    assert one(events, ConditionApplied).condition == "helped" and state.combatants["a"].action_used
    act(state, end("a"))
    act(state, end("b"))
    events = act(state, BBTakeCover(command_id=cid(), actor="a"))
    assert state.combatants["a"].taking_cover and one(events, ActionTaken).action == "take_cover"
    act(state, end("a"))
    act(state, end("b"))
    events = act(state, BBDisengage(command_id=cid(), actor="a"))
    assert one(events, ConditionApplied).condition == "disengaged" and one(events, ConditionApplied).until == "end_of_turn:a"
    events = act(state, end("a"))
    assert one(events, ConditionRemoved).condition == "disengaged"


def test_damage_expressions_parse_and_reject_nonsense() -> None:
    """BB-CORE-12: weapon damage expressions ("2d6+3") whose dice a critical doubles."""
    expression = parse_dice("2d6+3")
    assert (expression.count, expression.sides, expression.bonus) == (2, 6, 3)
    assert str(parse_dice("1d10")) == "1d10" and parse_dice("4").bonus == 4 and parse_dice("").count == 0
    with pytest.raises(ValueError, match="not a dice expression"):
        parse_dice("2x6")
    state = duel()
    damage = SYSTEM.roll_damage(Decision(SYSTEM, state), "2d6+3", FixedDice([1, 2, 3, 4]), modifiers=[], rule="BB-CORE-12", purpose="test", critical=True)
    assert damage.total == 1 + 2 + 3 + 4 + 3 and [m.value for m in damage.modifiers] == [3]


def test_bad_commands_are_rejected_with_reasons() -> None:
    """BB-CORE-16: illegal actions are refused with a clear reason and change nothing."""
    from firelane.engine.systems.bolt_and_blade.schemas import BBOverwatch, BBSuppress

    setup = arena([fighter("a", "red", (1, 1), **sheet()), fighter("f", "red", (1, 3), **knife_only()), fighter("b", "blue", (5, 1), **knife_only())])
    state = start(setup, ["a", "b", "f"])
    assert rejected(act(state, attack("a", "zed"))) == "unknown target 'zed'; lasgun can attack: b"
    assert rejected(act(state, attack("a", "f", "combat knife"))) == "f is on a's side; a's combat knife has no target it can attack from here"
    assert rejected(act(state, attack("a", "b", "plasma gun"))) == "a does not carry 'plasma gun'"
    assert rejected(act(state, attack("b", "a"))) == "it is not b's turn (active: a)"
    assert rejected(act(state, attack("a", "b", "combat knife"))) == "b is 20 ft away, beyond combat knife's reach of 5 ft; a's combat knife has no target it can attack from here"
    assert rejected(act(state, move("a", (1, 2), mode="fly"))) == "unknown move mode 'fly'; use one of tactical, dash, evade"
    assert rejected(act(state, move("a", (1, 2), on_reactive_fire="duck"))) == "on_reactive_fire must be 'continue' or 'stop', not 'duck'"
    assert rejected(act(state, move("a", (1, 2), (1, 3)))) == "illegal path: cannot end the move on (1, 3): f stands there"
    assert rejected(act(state, move("a", (2, 1), (3, 1), (4, 1), (5, 1)))) == "illegal path: (5, 1) is held by the enemy b"
    assert rejected(act(state, BBOverwatch(command_id=cid(), actor="a", center=(9, 9), radius_ft=20))) == "an Overwatch area is at most 10 ft in radius"
    assert rejected(act(state, BBSuppress(command_id=cid(), actor="a", area=[(5, 1)], weapon="combat knife"))) == "a has no ranged weapon 'combat knife' to Suppress with"
    state.combatants["a"].ammo["lasgun"] = 0
    assert rejected(act(state, attack("a", "b"))) == "lasgun is out of ammunition: Reload"
    assert state.rejected_commands == 12 and state.combatants["a"].position == (1, 1) and not state.combatants["a"].action_used


def test_bb_core_17_use_power_spends_the_action_on_a_catalogue_power() -> None:
    """BB-CORE-17: Use Power: a psychic power from the sample data (psychic storm, a 10-ft burst,
    Willpower DC 13 for half) spends the Action as "use power" and resolves at the chosen point."""
    from firelane.engine.systems.bolt_and_blade.area_schemas import BBAreaAttack

    state = duel(sheet(weapons=["lasgun", "psychic storm"]), distance=6)
    events = act(state, BBAreaAttack(command_id=cid(), actor="a", weapon="psychic storm", target=state.combatants["b"].position),
                 [5, 4, 10])  # 2d6 = 9 damage; b's Willpower save 10 < 13 fails: full damage
    spent = [e for e in events if isinstance(e, ActionTaken)]
    assert [(e.action, e.slot) for e in spent] == [("use power", "action")] and state.combatants["a"].action_used
    assert one(events, DamageDealt).amount == 9 and state.combatants["b"].vitality == 11
    assert rejected(act(state, attack("a", "b"))) == "a has already used its Action this turn"
