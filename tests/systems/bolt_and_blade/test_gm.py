"""Bolt & Blade and the GM: the calls the rules leave to the GM, and the ranges of GMAdjust."""

from __future__ import annotations

from firelane.engine.core import GM
from firelane.engine.seats import ENGINE_SEAT
from firelane.engine.systems.bolt_and_blade.schemas import BBAttack
from firelane.events.schemas import ActionTaken, CommandRejected, CoverFeature, GMAdjust, GMAdjusted, GMRule, GMRuled, Moved, TestRolled

from .helpers import act, arena, claim, fighter, knife_only, of, one, rejected, sheet, start
from firelane.engine.systems.bolt_and_blade import SYSTEM


def hit_with_cover_near() -> object:
    """a (lasgun) at (10, 5) hits b at (5, 5) (12 + 2 + 2 = 16 vs Defense 10); heavy cover at (5, 4) faces a."""
    setup = arena([fighter("a", "red", (10, 5), **sheet()), fighter("b", "blue", (5, 5), **knife_only())],
                  cover=[CoverFeature(x=5, y=4, level="heavy", facing=[(1, 0)])])
    state = start(setup, ["a", "b"])
    act(state, BBAttack(command_id="x", actor="a", target="b"), [12])
    assert state.window is not None and state.window.trigger == "ranged_hit"
    return state


def rule(call: str, ruling: str) -> GMRule:
    return GMRule(command_id=f"gm-{ruling}", actor=GM, call=call, ruling=ruling, reason="the shrine is rubble")


def test_bb_cmb_17_a_dive_window_leaves_the_gm_a_call_on_whether_the_move_is_possible() -> None:
    """BB-CMB-17 "you still move into cover if the GM says the movement is physically
    possible": while a dive window is open the GM sees the call; once ruled it is settled."""
    state = hit_with_cover_near()
    gm = SYSTEM.options(state, "gm").gm
    assert gm is not None and [c.id for c in gm.calls] == ["dive_for_cover:1"]
    assert "physically possible" in gm.calls[0].text and "BB-CMB-17" in gm.calls[0].text
    events = act(state, rule("dive_for_cover:1", "Impossible"))
    assert one(events, GMRuled).call == "dive_for_cover:1"
    assert state.gm_calls_settled == {"dive_for_cover:1": "impossible"}
    assert SYSTEM.options(state, "gm").gm.calls == []  # type: ignore[union-attr]


def test_bb_cmb_17_ruled_impossible_a_failed_dive_stays_where_it_was() -> None:
    """BB-CMB-17: the save fails (3 + 0 < 16): ruled impossible, b does not move; the hit stands."""
    state = hit_with_cover_near()
    act(state, rule("dive_for_cover:1", "impossible"))
    events = act(state, claim("b", 1, "dive_for_cover", to=[5, 4]), [3, 4])  # save 3; lasgun 1d8 = 4
    assert not one(events, TestRolled).success and of(events, Moved) == []
    assert state.combatants["b"].position == (5, 5) and state.combatants["b"].vitality == 16
    assert one(events, ActionTaken).action == "dive_for_cover"  # the Reaction is spent all the same


def test_bb_cmb_17_by_default_and_ruled_possible_a_failed_dive_still_moves() -> None:
    """BB-CMB-17, house default: with no ruling (or "possible") a failed dive still moves into the cover."""
    for ruling in (None, "possible"):
        state = hit_with_cover_near()
        if ruling is not None:
            act(state, rule("dive_for_cover:1", ruling))
        events = act(state, claim("b", 1, "dive_for_cover", to=[5, 4]), [3, 4])
        assert one(events, Moved).path == [(5, 4)] and state.combatants["b"].position == (5, 4)


def test_bb_cmb_17_a_successful_dive_moves_whatever_the_ruling() -> None:
    """BB-CMB-17: on a success the diver moves into cover (the GM's call is about a failure)."""
    state = hit_with_cover_near()
    act(state, rule("dive_for_cover:1", "impossible"))
    events = act(state, claim("b", 1, "dive_for_cover", to=[5, 4]), [18])
    assert one(events, TestRolled).success and state.combatants["b"].position == (5, 4)


def test_a_ruling_the_call_does_not_take_or_no_call_at_all_is_refused() -> None:
    state = hit_with_cover_near()
    assert rejected(act(state, rule("dive_for_cover:1", "maybe"))) == (
        "the ruling on dive_for_cover:1 is one of possible, impossible (BB-CMB-17), not 'maybe'")
    assert state.gm_calls_settled == {} and state.gm_rulings == []
    assert rejected(act(state, rule("dive_for_cover:7", "possible"))) == "no pending GM call 'dive_for_cover:7'; pending: dive_for_cover:1"
    act(state, claim("b", 1, "dive_for_cover", to=[5, 4]), [18])
    assert state.window is None and SYSTEM.gm_calls(state) == {}


# ---------------------------------------------------------------- GMAdjust ranges


def adjust(combatant: str, **changes: object) -> GMAdjust:
    return GMAdjust(command_id=f"adj-{sorted(changes)}", actor=GM, combatant=combatant, changes=dict(changes), reason="house ruling")


def test_gm_adjust_keeps_bolt_and_blade_values_in_their_ranges() -> None:
    """BB-CORE-09, -17: the GM sets Vitality within 1..max (0 only for one out of the
    fight), ammunition within the magazine, a carried ready weapon, known jams and
    marks, movement not negative; each refusal names the field and the range."""
    fighters = [fighter("a", "red", (1, 1), **sheet()), fighter("b", "blue", (8, 1), **knife_only()), fighter("c", "blue", (9, 1), **knife_only())]
    state = start(arena(fighters), ["a", "b", "c"])
    assert rejected(act(state, adjust("a", vitality=25))) == "a's vitality must be from 1 to its max_vitality 20 (got 25)"
    assert rejected(act(state, adjust("a", vitality=0))) == (
        "a's vitality must be from 1 to its max_vitality 20 (got 0); Vitality 0 is Down (BB-CORE-09): set out_of_fight: true to take it out")
    assert rejected(act(state, adjust("a", ammo={"lasgun": 31}))) == "a: sheet field 'ammo.lasgun' must be from 0 to 30 (got 31)"
    assert rejected(act(state, adjust("a", ammo={"plasma gun": 3}))) == "a: sheet field 'ammo.plasma gun' is for a weapon not carried; carried: lasgun, combat knife"
    assert rejected(act(state, adjust("a", ready_weapon="plasma gun"))).startswith("a: sheet field 'ready_weapon' names 'plasma gun', which is not carried")
    assert rejected(act(state, adjust("a", jammed=["bolter"]))) == "a does not carry 'bolter'; carried: lasgun, combat knife"
    assert rejected(act(state, adjust("a", max_vitality=5))) == "a's max_vitality must be at least 1 and its vitality 20 (got 5)"
    assert rejected(act(state, adjust("a", movement_ft=-5))) == "a: sheet field 'movement_ft' must be at least 0 (got -5)"
    assert rejected(act(state, adjust("a", marks={"Mark the Guilty": "b"}))) == "a has no mark feature 'Mark the Guilty'; features: none"
    events = act(state, adjust("a", vitality=7, ammo={"lasgun": 3}, jammed=["lasgun"]))
    assert one(events, GMAdjusted).changes == {"vitality": 7, "ammo": {"lasgun": 3}, "jammed": ["lasgun"]}
    assert (state.combatants["a"].vitality, state.combatants["a"].ammo["lasgun"], state.combatants["a"].jammed) == (7, 3, ["lasgun"])
    act(state, adjust("b", out_of_fight=True))
    assert not of(act(state, adjust("b", vitality=0)), CommandRejected)  # one out of the fight may be at 0


def test_the_engine_seat_options_show_no_gm_calls() -> None:
    state = hit_with_cover_near()
    assert SYSTEM.options(state, ENGINE_SEAT).gm is None
