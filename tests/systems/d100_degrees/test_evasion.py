"""D100D-10: Evasion reactions (dodge, parry) through reaction windows."""

from __future__ import annotations

from firelane.engine.core import SEQUENCER
from firelane.engine.systems.d100_degrees.schemas import D100DBasicAttack, D100DControlledFire
from firelane.events.schemas import (
    ActionTaken,
    ClaimReaction,
    CloseReactionWindow,
    DamageDealt,
    EndTurn,
    PassReaction,
    ReactionsOrdered,
    ReactionWindowOpened,
)
from firelane.events.schemas import TestRolled as RolledTest

from .helpers import GUN, act, fighter, make_setup, of_type, one, rejection, start


def _shootout():
    return make_setup([fighter("a1", "red", (2, 5)), fighter("b1", "blue", (10, 5)), fighter("b2", "blue", (11, 9))])


def test_D100D_10_a_hit_opens_a_window_and_a_successful_dodge_cancels_it() -> None:
    """D100D-10: the hit target may dodge (Agility 34, Challenging): a roll of 30 succeeds and no damage is dealt."""
    state = start(_shootout())
    events = act(state, D100DControlledFire(command_id="c", actor="a1", target="b1"), [23])
    window = one(events, ReactionWindowOpened)
    assert (window.trigger, window.rule, window.actor) == ("hit:controlled_fire", "D100D-10", "a1")
    assert [(r.combatant, r.reactions) for r in window.reactors] == [("b1", ["dodge"])]
    assert state.window is not None and not of_type(events, DamageDealt)
    events = act(state, ClaimReaction(command_id="d", actor="b1", window=1, reaction="dodge"), [30])
    dodge = one(events, RolledTest)
    assert (dodge.test, dodge.success, dodge.roll.target, dodge.roll.rule) == ("dodge", True, 34, "D100D-10")
    assert dodge.roll.modifiers[0].source == "Agility"
    assert dodge.details["effect"] == "cancels every hit of this attack on the evader"
    assert one(events, ActionTaken).slot == "reaction" and state.combatants["b1"].reaction_used
    assert not of_type(events, DamageDealt) and state.combatants["b1"].wounds == 12 and state.window is None


def test_D100D_10_a_failed_dodge_lets_the_hit_land() -> None:
    """D100D-10: dodge roll 35 > Agility 34: the damage is dealt."""
    state = start(_shootout())
    act(state, D100DControlledFire(command_id="c", actor="a1", target="b1"), [45])
    events = act(state, ClaimReaction(command_id="d", actor="b1", window=1, reaction="dodge"), [35, 5])
    assert not one(events, RolledTest).success
    assert one(events, DamageDealt).amount == 5 + 3 + 2


def test_D100D_10_parry_is_offered_only_against_melee_with_a_melee_weapon() -> None:
    """D100D-10: parry tests Weapon Skill and only answers melee attacks by a defender holding a melee weapon."""
    state = start(make_setup([fighter("a1", "red", (5, 5)), fighter("b1", "blue", (6, 5)), fighter("b2", "blue", (4, 5), weapons=[GUN])]))
    events = act(state, D100DBasicAttack(command_id="c", actor="a1", target="b1"), [40])
    assert [(r.combatant, r.reactions) for r in one(events, ReactionWindowOpened).reactors] == [("b1", ["dodge", "parry"])]
    events = act(state, ClaimReaction(command_id="p", actor="b1", window=1, reaction="parry"), [45])
    parry = one(events, RolledTest)
    assert (parry.test, parry.success, parry.roll.target) == ("parry", True, 45)
    assert parry.roll.modifiers[0].source == "Weapon Skill" and not of_type(events, DamageDealt)
    # b2 holds only a gun: against melee it can only dodge
    events = act(state, D100DBasicAttack(command_id="c2", actor="a1", target="b2"), [40])
    assert [(r.combatant, r.reactions) for r in one(events, ReactionWindowOpened).reactors] == [("b2", ["dodge"])]
    assert rejection(act(state, ClaimReaction(command_id="x", actor="b2", window=2, reaction="parry"))) == "b2 cannot use 'parry' here; offered: dodge"


def test_D100D_10_one_evasion_per_round() -> None:
    """D100D-10 house default: one Evasion per round; a second hit in the round lands with no window; a new round restores it."""
    state = start(_shootout())
    act(state, D100DControlledFire(command_id="c", actor="a1", target="b1"), [23])
    act(state, ClaimReaction(command_id="d", actor="b1", window=1, reaction="dodge"), [1])
    events = act(state, D100DControlledFire(command_id="c2", actor="a1", target="b1"), [45, 2])
    assert not of_type(events, ReactionWindowOpened)
    assert one(events, DamageDealt).amount == 2 + 3 + 2
    for cid, who in (("e1", "a1"), ("e2", "b1"), ("e3", "b2")):
        act(state, EndTurn(command_id=cid, actor=who))
    assert state.round == 2 and not state.combatants["b1"].reaction_used
    events = act(state, D100DControlledFire(command_id="c3", actor="a1", target="b1"), [45])
    assert [r.combatant for r in one(events, ReactionWindowOpened).reactors] == ["b1"]


def test_D100D_10_window_answers_are_validated_and_a_timeout_counts_as_passing() -> None:
    """D100D-10: only the hit target may react; the sequencer's deadline closes the window and the hit lands."""
    state = start(_shootout())
    act(state, D100DControlledFire(command_id="c", actor="a1", target="b1"), [45])
    assert rejection(act(state, ClaimReaction(command_id="x", actor="b2", window=1, reaction="dodge"))) == "b2 is not eligible to react in window 1"
    assert rejection(act(state, D100DControlledFire(command_id="y", actor="a1", target="b1"))).startswith("waiting for reactions in window 1 (b1)")
    events = act(state, CloseReactionWindow(command_id="t", actor=SEQUENCER, window=1), [6])
    assert one(events, ReactionsOrdered).timed_out == ["b1"]
    assert one(events, DamageDealt).amount == 6 + 3 + 2


def test_D100D_10_passing_spends_nothing() -> None:
    """D100D-10: passing keeps the reaction for a later hit in the round."""
    state = start(_shootout())
    act(state, D100DControlledFire(command_id="c", actor="a1", target="b1"), [45])
    act(state, PassReaction(command_id="p", actor="b1", window=1), [1])
    assert not state.combatants["b1"].reaction_used
    events = act(state, D100DControlledFire(command_id="c2", actor="a1", target="b1"), [45])
    assert one(events, ReactionWindowOpened).reactors[0].combatant == "b1"
