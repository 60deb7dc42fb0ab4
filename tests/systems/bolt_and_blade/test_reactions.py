"""Bolt & Blade reactions: Reactive Fire, Overwatch, Return Fire, Opportunity
Strike, ranged attacks in melee, Dive for Cover (BB-CMB-10..17)."""

from __future__ import annotations

from firelane.engine.core import SEQUENCER
from firelane.engine.systems.bolt_and_blade import SYSTEM
from firelane.engine.systems.bolt_and_blade.rules import exchange_outcome
from firelane.engine.systems.bolt_and_blade.schemas import BBAttackRecomputed, BBExchangeResolved, BBMovementStopped, BBOverwatch, BBReactiveFireChoice, BBShotHeld
from firelane.events.schemas import (
    ActionTaken,
    AttackResolved,
    ClaimReaction,
    CloseReactionWindow,
    ConditionApplied,
    ConditionRemoved,
    CoverFeature,
    DamageDealt,
    EligibleReactor,
    Moved,
    ReactionDenied,
    ReactionsOrdered,
    ReactionWindowOpened,
)
from firelane.events.schemas import (
    TestRolled as _Tested,
)

from .helpers import act, arena, attack, cid, claim, end, fighter, knife_only, move, of, one, pass_, rejected, sheet, start

NORTH = [(0, -1)]
WEST = [(-1, 0)]


def lane(extra: list = (), cover: list = (), order: list[str] | None = None, mover: dict | None = None, **settings):  # type: ignore[assignment]
    """m (red, knife) at (1, 5); w (blue, lasgun) at (10, 5), plus ``extra`` fighters."""
    fighters = [fighter("m", "red", (1, 5), **(mover or knife_only())), fighter("w", "blue", (10, 5), **sheet()), *extra]
    return start(arena(fighters, cover=list(cover), **settings), order or ["m", "w", *[f.id for f in extra]])


# ---------------------------------------------------------------- BB-CMB-10, -11


def test_reactive_fire_is_a_reaction_attack_at_the_mover() -> None:
    """BB-CMB-10: spend the Reaction for a ranged attack when an enemy moves through your fire lane."""
    state = lane()
    act(state, move("m", (1, 6), (1, 7)))
    events = act(state, claim("w", 1, "reactive_fire"), [6, 5])  # 6 + 2 + 2 (Exposed) = 10: hit; 1d8 = 5
    spent = one(events, ActionTaken)
    assert (spent.combatant, spent.action, spent.slot, spent.rule) == ("w", "reactive_fire", "reaction", "BB-CMB-10")
    shot = one(events, AttackResolved)
    assert shot.kind == "reactive_fire" and shot.hit and shot.roll.total == 10 and shot.roll.rule == "BB-CMB-10"
    assert one(events, DamageDealt).amount == 5 and state.combatants["m"].vitality == 15
    assert one(events, ReactionWindowOpened).trigger == "reactive_fire_choice"  # BB-CMB-12: m is asked
    assert one(act(state, pass_("m", 2)), BBReactiveFireChoice).choice == "continue"
    assert state.combatants["m"].position == (1, 7) and state.combatants["w"].reaction_used


def test_reactive_fire_requirements() -> None:
    """BB-CMB-10: no offer if Pinned, without a loaded ready ranged weapon, out of sight or out of range."""
    walled = arena([fighter("m", "red", (1, 5), **knife_only()), fighter("w", "blue", (10, 5), **sheet())], walls=[(5, y) for y in range(0, 12)])
    state = start(walled, ["m", "w"])
    assert not of(act(state, move("m", (1, 6))), ReactionWindowOpened)  # no sight through the wall
    state = lane()
    state.combatants["w"].conditions["pinned"] = ""
    assert not of(act(state, move("m", (1, 6))), ReactionWindowOpened)
    state = lane()
    state.combatants["w"].ammo["lasgun"] = 0
    assert not of(act(state, move("m", (1, 6))), ReactionWindowOpened)
    state = lane()
    state.combatants["w"].ready_weapon = "combat knife"
    assert not of(act(state, move("m", (1, 6))), ReactionWindowOpened)


def test_reactive_fire_out_of_range_is_not_offered() -> None:
    """BB-CMB-10: the mover must be within the weapon's range."""
    short = sheet(weapons=[{"name": "stub gun", "kind": "ranged", "category": "pistol", "range": [10, 30], "damage": "1d6", "traits": ["pistol", "ammo"], "magazine": 6}], ready_weapon="stub gun")
    state = start(arena([fighter("m", "red", (1, 5), **knife_only()), fighter("w", "blue", (10, 5), **short)]), ["m", "w"])
    events = act(state, move("m", (2, 5), (3, 5), (4, 5)))
    window = one(events, ReactionWindowOpened)  # only at (4, 5): 30 ft away
    assert state.combatants["m"].position == (4, 5) and window.continuation["rest"] == []


def test_reactive_fire_has_no_disadvantage_against_an_exposed_mover() -> None:
    """BB-CMB-11: no Disadvantage against an Exposed target, and a mover in the open is Exposed
    to w (BB-CMB-05), also on a cover square whose cover faces away from w."""
    flank = [CoverFeature(x=x, y=5, level="light", facing=NORTH) for x in range(0, 10)]
    for cover, step in (([], (1, 6)), (flank, (2, 5))):
        state = lane(cover=cover)
        act(state, move("m", step))
        events = act(state, claim("w", 1, "reactive_fire"), [3])
        shot = one(events, AttackResolved)
        assert shot.roll.details["mode"] == "normal" and shot.roll.total == 7 and ("m is Exposed", 2) in [(m.source, m.value) for m in shot.roll.modifiers]
        spent = [e for e in of(events, ActionTaken) if e.action == "reactive_fire"][0]
        assert spent.details["disadvantage_waived_by"] == ["the target is Exposed (BB-CMB-11)"]


# ---------------------------------------------------------------- BB-CMB-12


def test_damaged_mover_may_stop_and_become_pinned() -> None:
    """BB-CMB-12: a mover damaged by Reactive Fire continues, or stops at once and becomes Pinned."""
    state = lane(extra=[fighter("v", "blue", (10, 9), **sheet())], order=["m", "w", "v"])
    act(state, move("m", (1, 6), (1, 7), (1, 8), on_reactive_fire="stop"))
    act(state, claim("v", 1, "reactive_fire"))
    events = act(state, claim("w", 1, "reactive_fire"), [8, 4])  # w (initiative 15) shoots first and hits for 4
    assert [c.combatant for c in one(events, ReactionsOrdered).order] == ["w", "v"]
    asked = one(events, ReactionWindowOpened)
    assert (asked.trigger, asked.nested_in, asked.continuation["default"]) == ("reactive_fire_choice", 1, "stop")
    events = act(state, pass_("m", 2))  # no answer: the declared choice stands
    assert (one(events, BBReactiveFireChoice).choice, one(events, BBReactiveFireChoice).answered) == ("stop", False)
    pinned = one(events, ConditionApplied)
    assert (pinned.condition, pinned.until, pinned.rule) == ("pinned", "start_of_turn:w", "BB-CMB-12")
    stopped = one(events, BBMovementStopped)
    assert stopped.at == (1, 6) and stopped.unused_path == [(1, 7), (1, 8)]
    denied = one(events, ReactionDenied)
    assert (denied.combatant, denied.reason) == ("v", "m has already stopped")
    assert state.combatants["m"].position == (1, 6) and not state.combatants["v"].reaction_used
    assert rejected(act(state, move("m", (2, 6)))) == "m's movement was stopped this turn"


def test_damaged_mover_continues_by_default() -> None:
    """BB-CMB-12: the house default choice is to continue."""
    state = lane()
    act(state, move("m", (1, 6), (1, 7), (1, 8)))
    act(state, claim("w", 1, "reactive_fire"), [10, 2])
    events = act(state, pass_("m", 2))
    assert one(events, BBReactiveFireChoice).choice == "continue" and not of(events, BBMovementStopped)
    assert state.combatants["m"].position == (1, 8) and "pinned" not in state.combatants["m"].conditions


def test_bb_cmb_12_the_mover_chooses_when_the_damage_lands() -> None:
    """BB-CMB-12: "the target must choose": when the damage lands the mover is asked, in a
    window addressed to it alone (continue or stop); its answer overrides the choice its move
    declared, and answering spends no Reaction."""
    state = lane()
    act(state, move("m", (1, 6), (1, 7), (1, 8)))  # declared: continue (the default)
    events = act(state, claim("w", 1, "reactive_fire"), [10, 2])
    asked = one(events, ReactionWindowOpened)
    assert (asked.trigger, asked.actor, asked.rule, asked.deadline_ms) == ("reactive_fire_choice", "w", "BB-CMB-12", 30_000)
    assert asked.reactors == [EligibleReactor(combatant="m", reactions=["continue", "stop"])] and asked.continuation["default"] == "continue"
    assert not of(events, BBReactiveFireChoice) and state.window.window == 2
    events = act(state, claim("m", 2, "stop"))
    choice = one(events, BBReactiveFireChoice)
    assert (choice.choice, choice.answered, choice.attacker) == ("stop", True, "w")
    assert one(events, BBMovementStopped).at == (1, 6) and "pinned" in state.combatants["m"].conditions
    assert not state.combatants["m"].reaction_used and state.window is None
    assert rejected(act(state, claim("m", 2, "stop"))) == "reaction window 2 is not open (no window is open)"


def test_bb_cmb_12_a_timed_out_choice_keeps_the_declared_one() -> None:
    """BB-CMB-12: if the mover does not answer by the deadline, the sequencer closes the window
    and the choice its move declared stands (here: stop, and Pinned)."""
    state = lane()
    act(state, move("m", (1, 6), (1, 7), (1, 8), on_reactive_fire="stop"))
    act(state, claim("w", 1, "reactive_fire"), [10, 2])
    events = act(state, CloseReactionWindow(command_id=cid(), actor=SEQUENCER, window=2))
    assert one(events, ReactionsOrdered).timed_out == ["m"]
    assert (one(events, BBReactiveFireChoice).choice, one(events, BBReactiveFireChoice).answered) == ("stop", False)
    assert state.combatants["m"].position == (1, 6) and "pinned" in state.combatants["m"].conditions


def test_bb_cmb_12_the_ai_takes_the_declared_choice() -> None:
    """BB-CMB-12: an AI mover answers the prompt with the choice its move declared."""
    state = lane()
    act(state, move("m", (1, 6), (1, 7), (1, 8), on_reactive_fire="stop"))
    act(state, claim("w", 1, "reactive_fire"), [10, 2])
    answer = SYSTEM.choose_command(state, "m")
    assert isinstance(answer, ClaimReaction) and (answer.window, answer.reaction) == (2, "stop")


# ---------------------------------------------------------------- BB-CMB-13


def overwatch_state():
    """w (blue, lasgun) at (10, 5) acts first and watches around (3, 5); m (red)
    waits at (1, 10) among crates that face north (not towards w)."""
    flank = [CoverFeature(x=x, y=y, level="light", facing=NORTH) for x in range(0, 6) for y in range(3, 12)]
    setup = arena([fighter("m", "red", (1, 10), **knife_only()), fighter("w", "blue", (10, 5), **sheet())], cover=flank)
    state = start(setup, ["w", "m"])
    events = act(state, BBOverwatch(command_id=cid(), actor="w", center=(3, 5)))
    return state, events


def test_overwatch_watches_an_area_until_your_next_turn() -> None:
    """BB-CMB-13: Overwatch is an Action on a visible area, lasting until the start of your next turn."""
    state, events = overwatch_state()
    assert one(events, ActionTaken).action == "overwatch" and state.combatants["w"].action_used
    applied = one(events, ConditionApplied)
    assert (applied.condition, applied.until) == ("overwatch", "start_of_turn:w")
    assert sorted(state.combatants["w"].overwatch_area) == sorted((x, y) for x in range(1, 6) for y in range(3, 8))
    act(state, end("w"))
    events = act(state, end("m"))
    assert "overwatch" in [e.condition for e in of(events, ConditionRemoved)] and state.combatants["w"].overwatch_area == []
    state = lane(order=["w", "m"], walls=[(8, 1), (8, 2), (9, 2)])
    assert rejected(act(state, BBOverwatch(command_id=cid(), actor="w", center=(8, 0)))) == "w cannot see (8, 0)"


def test_overwatch_fire_has_no_disadvantage_and_a_hit_stops_the_mover_unless_it_saves() -> None:
    """BB-CMB-13: no Disadvantage in the watched area; a hit stops movement unless an Agility save beats the attack roll."""
    state, _ = overwatch_state()
    act(state, end("w"))
    events = act(state, move("m", (1, 9), (2, 8), (3, 7), (4, 7)))  # (1, 9) and (2, 8) lie outside the area
    assert one(events, ReactionWindowOpened).continuation["fire_squares"] == {"w": [[1, 9], [2, 8], [3, 7], [4, 7]]}
    # w holds its fire for (3, 7), in its watched area: 9 + 2 + 2 (Exposed: no cover facing w) = 13 hits; 1d8 = 3; save 12 < 13
    events = act(state, claim("w", 1, "reactive_fire", square=[3, 7]), [9, 3, 12])
    assert one(events, BBShotHeld).square == (3, 7) and [m.path for m in of(events, Moved)] == [[(2, 8), (3, 7)]]
    shot = one(events, AttackResolved)
    assert shot.roll.details["mode"] == "normal" and shot.details["overwatch"] and shot.roll.total == 13 and shot.hit
    save = one(events, _Tested)
    assert save.roll.target == 13 and not save.success and save.roll.rule == "BB-CMB-13"
    stopped = one(events, BBMovementStopped)
    assert stopped.rule == "BB-CMB-13" and stopped.unused_path == [(4, 7)] and state.combatants["m"].position == (3, 7)


def test_overwatch_hit_saved_against_keeps_moving() -> None:
    """BB-CMB-13: succeeding on the Agility save (>= the attack roll) lets the mover go on."""
    state, _ = overwatch_state()
    act(state, end("w"))
    act(state, move("m", (1, 9), (2, 8), (3, 7), (3, 6)))
    events = act(state, claim("w", 1, "reactive_fire", square=[3, 7]), [9, 3, 13])  # the save meets the attack roll of 13
    assert one(events, _Tested).success and not of(events, BBMovementStopped)
    events = act(state, pass_("m", 2))  # the damage asks the BB-CMB-12 choice; the default goes on
    assert one(events, BBReactiveFireChoice).choice == "continue" and state.combatants["m"].position == (3, 6)


# ---------------------------------------------------------------- BB-CMB-14


def test_exchange_outcomes() -> None:
    """BB-CMB-14: one hits -> it hits; both miss -> nothing; both hit -> higher total; tied totals -> both."""
    assert exchange_outcome(15, True, 8, False)[:2] == (True, False)
    assert exchange_outcome(8, False, 15, True)[:2] == (False, True)
    assert exchange_outcome(8, False, 9, False)[:2] == (False, False)
    assert exchange_outcome(16, True, 14, True)[:2] == (True, False)
    assert exchange_outcome(14, True, 16, True)[:2] == (False, True)
    assert exchange_outcome(14, True, 14, True)[:2] == (True, True)


def duel():
    return start(arena([fighter("a", "red", (1, 5), **sheet()), fighter("b", "blue", (6, 5), **sheet())]), ["a", "b"])


def test_return_fire_opposed_exchange_higher_total_wins() -> None:
    """BB-CMB-14: a visible enemy's ranged attack lets the target Return Fire; both hit: the higher total lands."""
    state = duel()
    events = act(state, attack("a", "b"))
    window = one(events, ReactionWindowOpened)
    assert window.trigger == "ranged_attack" and window.reactors[0].reactions == ["return_fire"]
    assert not of(events, AttackResolved)  # the attack waits for the answer
    events = act(state, claim("b", 1, "return_fire"), [12, 10, 5])
    exchange = one(events, BBExchangeResolved)
    assert (exchange.attacker_total, exchange.defender_total) == (16, 14)  # both stand in the open: +2 each (BB-CMB-05)
    assert (exchange.attacker_hits, exchange.defender_hits) == (True, False)
    attacks = of(events, AttackResolved)
    assert [(a.attacker, a.kind, a.hit) for a in attacks] == [("a", "attack", True), ("b", "return_fire", False)]
    assert one(events, DamageDealt).target == "b" and state.combatants["b"].vitality == 15 and state.combatants["a"].vitality == 20


def test_return_fire_tied_totals_both_hit_and_both_miss_is_nothing() -> None:
    """BB-CMB-14: tied totals: both attacks hit; both miss: no one hits."""
    state = duel()
    act(state, attack("a", "b"))
    events = act(state, claim("b", 1, "return_fire"), [10, 10, 4, 6])
    assert [(d.target, d.amount) for d in of(events, DamageDealt)] == [("b", 4), ("a", 6)]
    assert one(events, BBExchangeResolved).outcome == "both hit with tied totals: both land"
    state = duel()
    act(state, attack("a", "b"))
    events = act(state, claim("b", 1, "return_fire"), [3, 5])
    assert not of(events, DamageDealt) and one(events, BBExchangeResolved).outcome == "both miss"
    assert state.combatants["b"].reaction_used and state.combatants["a"].action_used


def test_passing_on_return_fire_resolves_the_attack_normally() -> None:
    """BB-CMB-14: without Return Fire the declared attack resolves alone."""
    state = duel()
    act(state, attack("a", "b"))
    events = act(state, pass_("b", 1), [8, 7])
    assert one(events, AttackResolved).hit and one(events, DamageDealt).amount == 7 and not state.combatants["b"].reaction_used


# ---------------------------------------------------------------- BB-CMB-15, -16


def test_opportunity_strike_on_leaving_reach() -> None:
    """BB-CMB-15: a hostile creature leaving your melee reach lets you make one melee attack with your Reaction."""
    state = start(arena([fighter("m", "red", (2, 5), **knife_only()), fighter("e", "blue", (3, 5), **knife_only(attributes={"strength": 14}))]), ["m", "e"])
    events = act(state, move("m", (2, 4), (1, 4), (0, 4)))  # (2, 4) is still within reach; (1, 4) leaves it
    assert one(events, Moved).path == [(2, 4)] and one(events, ReactionWindowOpened).trigger == "leaving_reach"
    events = act(state, claim("e", 1, "opportunity_strike"), [7, 3])  # 7 + 2 + 2 = 11 >= 10; 1d4 + 2
    strike = one(events, AttackResolved)
    assert (strike.kind, strike.weapon, strike.hit, strike.roll.total) == ("opportunity_strike", "combat knife", True, 11)
    assert one(events, DamageDealt).amount == 5
    assert state.combatants["m"].position == (0, 4)


def test_moving_within_reach_provokes_nothing() -> None:
    """BB-CMB-15: only leaving the reach triggers the strike."""
    state = start(arena([fighter("m", "red", (2, 5), **knife_only()), fighter("e", "blue", (3, 5), **knife_only())]), ["m", "e"])
    events = act(state, move("m", (2, 4), (3, 4), (4, 4)))
    assert not of(events, ReactionWindowOpened) and state.combatants["m"].position == (4, 4)


def test_ranged_attack_in_melee_reach() -> None:
    """BB-CMB-16: Disadvantage with an enemy in melee reach; pistols ignore it; heavy weapons cannot fire."""
    setup = arena([fighter("a", "red", (1, 5), **sheet(weapons=["lasgun", "bolt pistol", "heavy stubber"])), fighter("b", "blue", (2, 5), **knife_only())])
    state = start(setup, ["a", "b"])
    roll = one(act(state, attack("a", "b"), [3, 4]), AttackResolved).roll
    assert roll.details["disadvantage"] == ["ranged attack with an enemy in melee reach (BB-CMB-16)"]
    state = start(setup, ["a", "b"])
    state.combatants["a"].ready_weapon = "bolt pistol"
    roll = one(act(state, attack("a", "b"), [3]), AttackResolved).roll
    assert roll.details["disadvantage"] == [] and len(roll.dice) == 1
    state = start(setup, ["a", "b"])
    state.combatants["a"].ready_weapon = "heavy stubber"
    assert rejected(act(state, attack("a", "b"))) == "heavy stubber is a heavy weapon and cannot fire while a is engaged in melee (BB-CMB-16); a's heavy stubber has no target it can attack from here"


# ---------------------------------------------------------------- BB-CMB-17


def dive_setup():
    setup = arena(
        [fighter("a", "red", (1, 5), **sheet()), fighter("b", "blue", (6, 5), **knife_only())],
        cover=[CoverFeature(x=6, y=6, level="heavy", facing=WEST)],
    )
    return start(setup, ["a", "b"])


def test_dive_for_cover_success_recomputes_the_hit() -> None:
    """BB-CMB-17: hit by a ranged attack with cover within 5 ft: Agility save vs the attack roll; success: move into cover, recompute."""
    state = dive_setup()
    events = act(state, attack("a", "b"), [10])  # 10 + 2 + 2 (b is Exposed) = 14 >= 10: a hit
    assert one(events, AttackResolved).hit
    window = one(events, ReactionWindowOpened)
    assert window.trigger == "ranged_hit" and window.reactors[0].reactions == ["dive_for_cover"]
    assert not of(events, DamageDealt)
    events = act(state, claim("b", 1, "dive_for_cover"), [14])
    save = one(events, _Tested)
    assert save.roll.target == 14 and save.success
    assert one(events, Moved).path == [(6, 6)] and state.combatants["b"].position == (6, 6)
    recomputed = one(events, BBAttackRecomputed)  # 14 without the Exposed +2 vs heavy cover
    assert recomputed.defense.total == 15 and recomputed.attack_total == 12 and not recomputed.hit
    assert not of(events, DamageDealt) and state.combatants["b"].vitality == 20


def test_dive_for_cover_failure_the_hit_stands_but_you_still_move() -> None:
    """BB-CMB-17: failure: the attack hits as normal; you still move into cover."""
    state = dive_setup()
    act(state, attack("a", "b"), [10])
    events = act(state, claim("b", 1, "dive_for_cover"), [5, 6])
    assert not one(events, _Tested).success and not of(events, BBAttackRecomputed)
    assert state.combatants["b"].position == (6, 6) and one(events, DamageDealt).amount == 6


def test_no_dive_without_cover_nearby() -> None:
    """BB-CMB-17: no window when no cover lies within 5 ft."""
    state = start(arena([fighter("a", "red", (1, 5), **sheet()), fighter("b", "blue", (6, 5), **knife_only())], cover=[CoverFeature(x=8, y=5, level="heavy", facing=WEST)]), ["a", "b"])
    events = act(state, attack("a", "b"), [10, 2])
    assert not of(events, ReactionWindowOpened) and one(events, DamageDealt).amount == 2


def test_a_later_reaction_on_a_fallen_mover_is_denied() -> None:
    """BB-CMB-10: a Reactive Fire made pointless by an earlier one (the mover is down) is denied with the reason."""
    state = lane(extra=[fighter("v", "blue", (10, 9), **sheet())], order=["m", "w", "v"], mover=knife_only(vitality=3))
    act(state, move("m", (1, 6), (1, 7)))
    act(state, claim("v", 1, "reactive_fire"))
    events = act(state, claim("w", 1, "reactive_fire"), [15, 6])
    assert state.combatants["m"].out_of_fight
    denied = one(events, ReactionDenied)
    assert (denied.combatant, denied.reason) == ("v", "m is already down")
    assert events[-1].__class__.__name__ == "EncounterEnded" and state.winner == "blue"


def lane_with_cover_beside_the_path(**settings):
    """m (red, knife) at (1, 5) runs north along x=1; w (blue, lasgun) at (10, 5);
    heavy cover facing w (east) on (2, 7), one step beside the path."""
    return lane(cover=[CoverFeature(x=2, y=7, level="heavy", facing=[(1, 0)])], **settings)


def test_bb_cmb_17_a_mover_hit_by_reactive_fire_dives_for_cover_in_a_nested_window() -> None:
    """BB-CMB-17 with BB-CMB-10: Reactive Fire that hits a mover with cover within 5 ft lets it Dive
    for Cover; the dive window is nested in the fire-lane window and the move ends in the cover square."""
    state = lane_with_cover_beside_the_path()
    act(state, move("m", (1, 6), (1, 7), (1, 8), (1, 9)))
    events = act(state, claim("w", 1, "reactive_fire"), [12])  # 12 + 2 + 2 (Exposed) = 16 >= 10: a hit
    assert one(events, AttackResolved).hit and not of(events, DamageDealt)
    nested = one(events, ReactionWindowOpened)
    assert (nested.window, nested.trigger, nested.nested_in, nested.reactors[0].combatant) == (2, "ranged_hit", 1, "m")
    assert state.window.window == 2 and [w.window for w in state.suspended_windows] == [1]
    events = act(state, claim("m", 2, "dive_for_cover"), [17])  # Agility save 17 >= 16
    assert one(events, _Tested).success and one(events, Moved).path == [(2, 7)]
    recomputed = one(events, BBAttackRecomputed)  # heavy cover +5, no longer Exposed (+2 gone): 14 vs 15
    assert (recomputed.attack_total, recomputed.defense.total, recomputed.hit) == (14, 15, False)
    assert not of(events, DamageDealt) and state.combatants["m"].vitality == 20
    stopped = one(events, BBMovementStopped)
    assert stopped.at == (2, 7) and stopped.unused_path == [(1, 7), (1, 8), (1, 9)] and stopped.rule == "BB-CMB-17"
    assert [type(e).__name__ for e in events][-2:] == ["ReactionWindowResumed", "ReactionWindowClosed"]
    assert state.window is None and state.combatants["m"].position == (2, 7)
    assert state.combatants["m"].reaction_used and state.combatants["w"].reaction_used


def test_bb_cmb_17_a_failed_dive_from_reactive_fire_takes_the_hit_and_still_moves_into_cover() -> None:
    """BB-CMB-17: on a failed save the Reactive Fire hit stands and deals its damage; the diver still
    ends in the cover square, and since the dive already ended the move there is no BB-CMB-12 choice."""
    state = lane_with_cover_beside_the_path()
    act(state, move("m", (1, 6), (1, 7), (1, 8), on_reactive_fire="stop"))
    act(state, claim("w", 1, "reactive_fire"), [12])
    events = act(state, claim("m", 2, "dive_for_cover"), [3, 6])  # save 3 < 16 fails; 1d8 = 6 damage
    assert not one(events, _Tested).success and not of(events, BBAttackRecomputed)
    assert one(events, DamageDealt).amount == 6 and state.combatants["m"].vitality == 14
    assert one(events, BBMovementStopped).reason == "dived for cover" and not of(events, BBReactiveFireChoice)
    assert state.combatants["m"].position == (2, 7) and "pinned" not in state.combatants["m"].conditions


def test_bb_cmb_17_passing_the_dive_lets_the_reactive_fire_hit_land_and_the_move_go_on() -> None:
    """BB-CMB-17: a mover that does not dive takes the hit and, by default, keeps moving."""
    state = lane_with_cover_beside_the_path()
    act(state, move("m", (1, 6), (1, 7), (1, 8)))
    act(state, claim("w", 1, "reactive_fire"), [12])
    events = act(state, pass_("m", 2), [4])
    events += act(state, pass_("m", 3))  # then the BB-CMB-12 choice, nested in the fire-lane window too
    assert one(events, DamageDealt).amount == 4 and one(events, BBReactiveFireChoice).choice == "continue"
    assert state.combatants["m"].position == (1, 8) and not state.combatants["m"].reaction_used


def test_bb_cmb_13_diving_from_an_overwatch_hit_replaces_the_overwatch_save() -> None:
    """BB-CMB-13 with BB-CMB-17: an Overwatch hit dodged by a successful dive neither damages nor
    calls for the Agility save that would stop the move; the dive itself ends the move."""
    crates = [CoverFeature(x=x, y=y, level="light", facing=NORTH) for x in range(0, 6) for y in range(3, 12) if (x, y) != (4, 6)]
    barricade = CoverFeature(x=4, y=6, level="heavy", facing=[(1, 0)])  # faces w, one step from (3, 7)
    state = start(arena([fighter("m", "red", (1, 10), **knife_only()), fighter("w", "blue", (10, 5), **sheet())], cover=[*crates, barricade]), ["w", "m"])
    act(state, BBOverwatch(command_id=cid(), actor="w", center=(3, 5)))
    act(state, end("w"))
    act(state, move("m", (1, 9), (2, 8), (3, 7), (4, 7)))
    events = act(state, claim("w", 1, "reactive_fire", square=[3, 7]), [9])  # held for (3, 7), in the area: 9 + 2 + 2 = 13 >= 10
    assert one(events, AttackResolved).details["overwatch"]
    dive = one(events, ReactionWindowOpened)
    assert (dive.window, dive.trigger, dive.continuation["overwatch"]) == (2, "ranged_hit", True)
    events = act(state, claim("m", 2, "dive_for_cover"), [20])
    assert [t.roll.rule for t in of(events, _Tested)] == ["BB-CMB-17"]  # the dive's save only, no Overwatch save
    assert not one(events, BBAttackRecomputed).hit and not of(events, DamageDealt)
    stopped = one(events, BBMovementStopped)
    assert (stopped.at, stopped.rule, stopped.unused_path) == ((4, 6), "BB-CMB-17", [(4, 7)])


# ---------------------------------------------------------------- BB-CMB-10: where along the lane


def approach(cover: list = (), pistol: bool = True):  # type: ignore[assignment]
    """m (red, knife) at (1, 5) runs east along y = 6 towards w (blue, bolt pistol 40/120 ft) at (12, 5):
    (2, 6) and (3, 6) are 50 and 45 ft away (beyond normal range), (4, 6) on are within 40 ft."""
    gun = sheet(weapons=["bolt pistol"], ready_weapon="bolt pistol") if pistol else sheet()
    return start(arena([fighter("m", "red", (1, 5), **knife_only()), fighter("w", "blue", (12, 5), **gun)], cover=list(cover)), ["m", "w"])


PATH = [(x, 6) for x in range(2, 8)]


def test_bb_cmb_10_the_reactor_names_where_along_the_path_it_fires() -> None:
    """BB-CMB-10: the fire-lane window offers w the squares of m's path it sees and has in range;
    w passes over the long shot at the first one and names (7, 6): the shot waits until m gets
    there and is rolled at normal range (one d20: 3 + 2 + 2 for Exposed = 7, a miss)."""
    state = approach()
    events = act(state, move("m", *PATH))
    window = one(events, ReactionWindowOpened)
    assert one(events, Moved).path == [(2, 6)] and window.continuation["fire_squares"] == {"w": [[x, 6] for x in range(2, 8)]}
    events = act(state, claim("w", 1, "reactive_fire", square=[7, 6]), [3])
    held = one(events, BBShotHeld)
    assert (held.reactor, held.mover, held.square, held.window) == ("w", "m", (7, 6), 1)
    assert [m.path for m in of(events, Moved)] == [[(3, 6), (4, 6), (5, 6), (6, 6), (7, 6)]]
    shot = one(events, AttackResolved)
    assert shot.roll.details["range_band"] == "normal" and len(shot.roll.dice) == 1 and shot.roll.total == 7 and not shot.hit
    assert [e.details["square"] for e in of(events, ActionTaken)] == [[7, 6]]
    assert state.combatants["m"].position == (7, 6) and state.combatants["w"].reaction_used and state.held_shots == []


def test_bb_cmb_10_a_claim_for_a_square_not_offered_is_refused_with_the_offered_ones() -> None:
    """BB-CMB-10: the claim is checked when it is made: only an offered square may be named."""
    state = approach()
    act(state, move("m", *PATH))
    assert rejected(act(state, claim("w", 1, "reactive_fire", square=[9, 9]))) == (
        "(9, 9) is not a square of the move that w may fire at; offered: (2, 6), (3, 6), (4, 6), (5, 6), (6, 6), (7, 6) (BB-CMB-10)"
    )
    assert rejected(act(state, claim("w", 1, "reactive_fire", square="near"))) == "reactive_fire option 'square' must be a square [x, y]"
    assert state.window is not None and state.window.unanswered() == ["w"]


def test_bb_cmb_10_a_shot_held_for_a_square_the_mover_never_reaches_is_denied_and_costs_nothing() -> None:
    """BB-CMB-10: v fires at once and hits; m stops there, Pinned (BB-CMB-12); w, holding its fire
    for (7, 6), is denied with the reason and keeps its Reaction."""
    state = start(arena([fighter("m", "red", (1, 5), **knife_only()), fighter("w", "blue", (12, 5), **sheet()), fighter("v", "blue", (12, 9), **sheet())]), ["m", "w", "v"])
    act(state, move("m", *PATH, on_reactive_fire="stop"))
    act(state, claim("w", 1, "reactive_fire", square=[7, 6]))
    act(state, claim("v", 1, "reactive_fire", square=[2, 6]), [15, 4])  # v fires now and hits for 4
    events = act(state, pass_("m", 2))
    assert one(events, BBMovementStopped).at == (2, 6)
    denied = one(events, ReactionDenied)
    assert (denied.window, denied.combatant, denied.reason) == (1, "w", "m stopped at (2, 6) before reaching (7, 6)")
    assert not state.combatants["w"].reaction_used and state.combatants["v"].reaction_used and state.held_shots == []


def test_bb_cmb_10_shots_held_for_one_square_resolve_in_claim_order_and_a_stop_ends_them() -> None:
    """BB-CMB-10 with BB-CMB-12: w and v both hold their fire for (5, 6); there w (initiative 15)
    fires first and hits; m, asked, stops and is Pinned: v's shot is denied as a later claim at a
    stopped mover is (Reactive Fire answers movement), and v keeps its Reaction."""
    state = start(arena([fighter("m", "red", (1, 5), **knife_only()), fighter("w", "blue", (12, 5), **sheet()), fighter("v", "blue", (12, 9), **sheet())]), ["m", "w", "v"])
    act(state, move("m", *PATH))
    act(state, claim("v", 1, "reactive_fire", square=[5, 6]))
    events = act(state, claim("w", 1, "reactive_fire", square=[5, 6]), [15, 4])
    assert [(h.reactor, h.square) for h in of(events, BBShotHeld)] == [("w", (5, 6)), ("v", (5, 6))]
    assert one(events, AttackResolved).attacker == "w" and state.combatants["m"].position == (5, 6)
    events = act(state, claim("m", 2, "stop"))
    denied = one(events, ReactionDenied)
    assert (denied.combatant, denied.reason) == ("v", "m has already stopped")
    assert state.combatants["m"].position == (5, 6) and not state.combatants["v"].reaction_used and state.held_shots == []


def test_bb_cmb_10_a_shot_held_for_a_fallen_mover_lapses() -> None:
    """BB-CMB-10: v's shot now drops m (Vitality 3); w's shot held for (7, 6) is denied: m fell first."""
    setup = arena([
        fighter("m", "red", (1, 5), **knife_only(vitality=3)), fighter("r", "red", (1, 15), **knife_only()),
        fighter("w", "blue", (12, 5), **sheet()), fighter("v", "blue", (12, 9), **sheet()),
    ])
    state = start(setup, ["m", "w", "v", "r"])
    act(state, move("m", *PATH))
    act(state, claim("w", 1, "reactive_fire", square=[7, 6]))
    events = act(state, claim("v", 1, "reactive_fire"), [15, 6])
    assert state.combatants["m"].out_of_fight and not state.ended
    denied = one(events, ReactionDenied)
    assert (denied.window, denied.combatant, denied.reason) == (1, "w", "m fell before reaching (7, 6)")
    assert not state.combatants["w"].reaction_used and state.held_shots == []


def test_bb_cmb_10_the_ai_names_the_square_with_the_best_chance() -> None:
    """BB-CMB-10: the AI names a square too: the best chance to hit, the earliest of equals
    ((4, 6): the first square within the bolt pistol's normal range)."""
    state = approach()
    act(state, move("m", *PATH))
    answer = SYSTEM.choose_command(state, "w")
    assert isinstance(answer, ClaimReaction) and answer.reaction == "reactive_fire" and answer.options == {"square": [4, 6]}


def test_bb_cmb_11_reactive_fire_at_a_covered_square_has_disadvantage_unless_the_mover_dashes() -> None:
    """BB-CMB-11: Reactive Fire has Disadvantage by default: w names (5, 6), where light cover faces
    it, so m is not Exposed there: two d20, the lower kept (6 + 2 = 8 vs Defense 12). Against a
    Dashing mover (BB-CMB-07) the same shot has none."""
    cover = [CoverFeature(x=5, y=6, level="light", facing=[(1, 0)])]
    state = approach(cover, pistol=False)
    act(state, move("m", *PATH))
    events = act(state, claim("w", 1, "reactive_fire", square=[5, 6]), [15, 6])
    shot = one(events, AttackResolved)
    assert shot.roll.details["disadvantage"] == ["Reactive Fire (BB-CMB-11)"] and shot.roll.kept == [1] and shot.roll.total == 8
    assert shot.defense.total == 12 and not shot.hit
    state = approach(cover, pistol=False)
    act(state, move("m", *PATH, mode="dash"))
    events = act(state, claim("w", 1, "reactive_fire", square=[5, 6]), [6])
    shot = one(events, AttackResolved)
    assert shot.roll.details["disadvantage"] == [] and len(shot.roll.dice) == 1
    assert [e for e in of(events, ActionTaken) if e.action == "reactive_fire"][0].details["disadvantage_waived_by"] == ["the target is Dashing (BB-CMB-07)"]


# ---------------------------------------------------------------- BB-CMB-14 / -17 against Reactive Fire and Return Fire


def test_bb_cmb_14_a_mover_may_return_fire_at_reactive_fire() -> None:
    """BB-CMB-14: a Reactive Fire is a ranged attack against the mover, so a mover with a ready
    ranged weapon and its Reaction may Return Fire: a window nested in the fire-lane window, then
    the Opposed Exchange. Both hit, w's higher total lands (12 + 4 = 16 vs 10 + 4 = 14)."""
    state = lane(mover=sheet())
    act(state, move("m", (1, 6), (1, 7)))
    events = act(state, claim("w", 1, "reactive_fire"))
    answer = one(events, ReactionWindowOpened)
    assert (answer.trigger, answer.nested_in, answer.actor, answer.continuation["kind"]) == ("ranged_attack", 1, "w", "reactive_attack")
    assert answer.reactors == [EligibleReactor(combatant="m", reactions=["return_fire"])] and not of(events, AttackResolved)
    events = act(state, claim("m", 2, "return_fire"), [12, 10, 5])
    exchange = one(events, BBExchangeResolved)
    assert (exchange.attacker, exchange.defender, exchange.attacker_total, exchange.defender_total) == ("w", "m", 16, 14)
    assert [(a.attacker, a.kind, a.hit) for a in of(events, AttackResolved)] == [("w", "reactive_fire", True), ("m", "return_fire", False)]
    assert one(events, DamageDealt).target == "m" and state.combatants["m"].vitality == 15
    assert one(events, ReactionWindowOpened).trigger == "reactive_fire_choice"  # the damage still asks BB-CMB-12
    events = act(state, pass_("m", 3))
    assert one(events, BBReactiveFireChoice).choice == "continue" and state.combatants["m"].position == (1, 7)
    assert state.combatants["m"].reaction_used and state.combatants["w"].reaction_used


def test_bb_cmb_14_overwatch_fire_may_be_returned_too() -> None:
    """BB-CMB-14 with BB-CMB-13: an Overwatch shot is a ranged attack too, and m may answer it:
    w's shot misses (5 + 2 + 2 for Exposed = 9 < 10), m's Return Fire hits (11 + 2 + 2 = 15):
    w takes the damage, no Overwatch save is called for, and m walks on."""
    state, _ = overwatch_state()
    state.combatants["m"].weapons = state.combatants["w"].weapons
    state.combatants["m"].ready_weapon = "lasgun"
    state.combatants["m"].ammo = {"lasgun": 30}
    act(state, end("w"))
    act(state, move("m", (1, 9), (2, 8), (3, 7), (3, 6)))
    events = act(state, claim("w", 1, "reactive_fire", square=[3, 7]))
    answer = one(events, ReactionWindowOpened)
    assert (answer.window, answer.trigger, answer.continuation["overwatch"]) == (2, "ranged_attack", True)
    events = act(state, claim("m", 2, "return_fire"), [5, 11, 6])
    exchange = one(events, BBExchangeResolved)
    assert (exchange.attacker_total, exchange.defender_total, exchange.outcome) == (9, 15, "only the return fire hits")
    assert [(d.target, d.amount) for d in of(events, DamageDealt)] == [("w", 6)] and not of(events, _Tested)
    assert state.combatants["m"].position == (3, 6) and state.window is None


def test_bb_cmb_17_a_shooter_hit_by_return_fire_may_dive_for_cover() -> None:
    """BB-CMB-17: "when you are hit by a ranged attack": a's attack misses (3 + 4 = 7) and b's Return
    Fire hits (12 + 4 = 16); a still has its Reaction and heavy cover a step away, so it may Dive
    for Cover (a window nested in the Return Fire window): its save of 20 succeeds, the hit is
    recomputed (16 - 2 for Exposed = 14 vs 15) and misses."""
    setup = arena([fighter("a", "red", (1, 5), **sheet()), fighter("b", "blue", (6, 5), **sheet())], cover=[CoverFeature(x=1, y=6, level="heavy", facing=[(1, 0)])])
    state = start(setup, ["a", "b"])
    act(state, attack("a", "b"))
    events = act(state, claim("b", 1, "return_fire"), [3, 12])
    assert one(events, BBExchangeResolved).outcome == "only the return fire hits" and not of(events, DamageDealt)
    dive = one(events, ReactionWindowOpened)
    assert (dive.window, dive.trigger, dive.nested_in, dive.actor, dive.reactors) == (2, "ranged_hit", 1, "b", [EligibleReactor(combatant="a", reactions=["dive_for_cover"])])
    events = act(state, claim("a", 2, "dive_for_cover"), [20])
    recomputed = one(events, BBAttackRecomputed)
    assert (recomputed.attacker, recomputed.target, recomputed.attack_total, recomputed.defense.total, recomputed.hit) == ("b", "a", 14, 15, False)
    explained = recomputed.attack  # the audit's account of the 14
    assert [(m.source, m.rule, m.value) for m in explained.modifiers] == [("the attack roll", "BB-CORE-07", 16), ("a no longer Exposed", "BB-CMB-05", -2)]
    assert (explained.total, explained.target, explained.success) == (14, 15, False)
    assert not of(events, DamageDealt) and not of(events, AttackResolved)  # the declared attack is not rolled again
    assert state.combatants["a"].position == (1, 6) and state.combatants["a"].reaction_used and state.window is None


# ---------------------------------------------------------------- BB-CMB-13: where an Overwatch may be centred (issue 19 item 13)


def test_bb_cmb_13_overwatch_is_never_centred_on_a_wall_and_its_preview_draws_the_watched_area() -> None:
    """BB-CMB-13: an Overwatch watches "a visible ... piece of battlefield space": a wall square
    is none. The engine refuses it and the options do not offer it; the preview of a legal
    centre draws exactly the squares the command then watches."""
    from firelane.engine.systems.bolt_and_blade.schemas import BBOverwatch

    state = start(arena([fighter("w", "blue", (2, 5), **sheet()), fighter("m", "red", (12, 5), **knife_only())], walls=[(6, 4), (6, 5), (6, 6)]), ["w", "m"])
    assert rejected(act(state, BBOverwatch(command_id=cid(), actor="w", center=(6, 5)))) == "(6, 5) is a wall: an Overwatch watches open ground"
    listed = next(a for a in SYSTEM.combatant_options(state, "w").actions if a.action == "BBOverwatch")
    centres = {tuple(c.square) for c in listed.choices}
    assert (6, 5) not in centres and (6, 4) not in centres and (5, 5) in centres
    command = BBOverwatch(command_id=cid(), actor="w", center=(5, 5))
    preview = SYSTEM.preview_area(state, command)
    assert (preview.command, preview.shape, preview.origin, preview.rule) == ("BBOverwatch", "overwatch", (5, 5), "BB-CMB-13")
    assert (6, 5) not in preview.squares and (4, 4) in preview.squares
    events = act(state, command)
    taken = one(events, ActionTaken)
    assert [tuple(s) for s in taken.details["area"]] == [tuple(s) for s in preview.squares]
