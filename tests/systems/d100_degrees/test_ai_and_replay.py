"""The d100-degrees AI, the demo encounter, whole headless fights and replay from the log."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from firelane.engine.core import command_json
from firelane.engine.systems.d100_degrees import SYSTEM, ai, demo_setup, load_data, options, sheet
from firelane.engine.systems.d100_degrees.schemas import (
    D100DAllOutAttack,
    D100DBasicAttack,
    D100DClearJam,
    D100DControlledFire,
    D100DMove,
    D100DSuppressingFire,
)
from firelane.events.schemas import ClaimReaction, EncounterSetup

from ..percentile_helpers import fight_and_replay
from .helpers import GUN, SWORD, act, fighter, make_setup, start


def _fight(setup: EncounterSetup, seed: bytes):
    return fight_and_replay(SYSTEM, setup, seed)


def test_demo_setup_is_valid_and_uses_the_sample_data() -> None:
    setup = demo_setup()
    data = load_data()
    assert setup.system == "d100-degrees" and len(setup.combatants) == 8
    assert {c.side for c in setup.combatants} == {"guard", "gang"}
    assert set(data) >= {"weapons", "armour", "templates", "demo"}
    guardsman = sheet("guardsman")
    assert guardsman["armour"] == 3 and guardsman["weapons"][0]["name"] == "lasgun"
    state = start(setup)
    assert state.settings["square_metres"] == 1.0 and state.active is not None


def test_ai_fights_end_with_a_winner_and_replay_to_the_same_state() -> None:
    """Two AI squads fight to the end in a sensible number of rounds, and the log rebuilds the state exactly."""
    rounds = []
    for n in range(10):
        final, rebuilt, _ = _fight(demo_setup(), bytes([n]) * 32)
        assert final.ended and final.winner in {"guard", "gang"}, final.end_reason
        assert rebuilt == final
        rounds.append(final.round)
    assert max(rounds) <= 15


@settings(max_examples=8, deadline=None)
@given(st.binary(min_size=32, max_size=32))
def test_replaying_the_log_rebuilds_the_live_state_for_any_seed(seed: bytes) -> None:
    """Property: for any seed, folding the yielded events from initial_state gives a state == the live one."""
    final, rebuilt, log = _fight(demo_setup(), seed)
    assert rebuilt == final and final.ended


def _best_listed(state, cid: str):
    """The listed attack or Suppressing Fire worth most per Half Action, by the AI's own scoring."""
    me = state.combatants[cid]
    turn = options.turn_options(state, cid)
    scored = [(ai.attack_value(state, me, a) / (2 if a.mode == "all_out_attack" else 1), a.command)
              for a in turn.attacks if options.ALLY_NOTE not in a.notes]
    scored += [(ai.suppressing_value(state, me, c) / 2, c.command)
               for action in turn.actions if action.action == "D100DSuppressingFire" for c in action.choices]
    return max(scored, key=lambda item: item[0])


def test_ai_is_deterministic_and_picks_the_listed_attack_worth_most() -> None:
    """Issue 9: the AI takes a listed command, the one its expected-worth score
    ranks first (D100D-04..07: chains, RoF, Basic or All Out)."""
    state = start(make_setup([fighter("a1", "red", (5, 5)), fighter("b1", "blue", (6, 5), wounds=20), fighter("b2", "blue", (6, 6), wounds=5)]))
    first = SYSTEM.choose_command(state, "a1")
    assert first == SYSTEM.choose_command(state, "a1")
    value, command = _best_listed(state, "a1")
    assert value > 0 and command_json(first) == command
    assert first.target == "b2"  # the weaker enemy first: a hit takes a bigger share of what it has left
    act(state, D100DMove(command_id="m", actor="a1", path=[(5, 4)]))
    second = SYSTEM.choose_command(state, "a1")
    assert not isinstance(second, D100DAllOutAttack | D100DSuppressingFire)  # one Half Action left


def test_all_out_attack_is_worth_taking_only_when_it_beats_two_basic_attacks() -> None:
    """D100D-05/06: the AI weighs an All Out Attack (+5 x Agility Bonus, a Full
    Action) against two Basic Attacks (each a Half Action)."""
    state = start(make_setup([fighter("a1", "red", (5, 5), weapons=[SWORD]), fighter("b1", "blue", (6, 5))]))
    turn = options.turn_options(state, "a1")
    me = state.combatants["a1"]
    basic = next(a for a in turn.attacks if a.mode == "basic_attack" and not a.command["extra"])
    all_out = next(a for a in turn.attacks if a.mode == "all_out_attack" and not a.command["extra"])
    chosen = SYSTEM.choose_command(state, "a1")
    expected = D100DAllOutAttack if ai.attack_value(state, me, all_out) / 2 > ai.attack_value(state, me, basic) else D100DBasicAttack
    assert isinstance(chosen, expected)


def test_ai_claims_its_best_evasion_and_fires_or_moves() -> None:
    state = start(make_setup([fighter("a1", "red", (5, 5)), fighter("b1", "blue", (6, 5), agility=30, weapon_skill=50)]))
    act(state, D100DBasicAttack(command_id="c", actor="a1", target="b1"), [10])
    claim = SYSTEM.choose_command(state, "b1")
    assert isinstance(claim, ClaimReaction) and claim.reaction == "parry"
    assert SYSTEM.choose_command(state, "a1") is None  # not eligible in the window
    state = start(make_setup([fighter("a1", "red", (2, 5)), fighter("b1", "blue", (10, 5))]))
    shot = SYSTEM.choose_command(state, "a1")
    assert isinstance(shot, D100DControlledFire) and shot.target == "b1"
    assert command_json(shot) == _best_listed(state, "a1")[1]
    state = start(make_setup([fighter("a1", "red", (2, 5), weapons=[SWORD]), fighter("b1", "blue", (10, 5))]))
    step = SYSTEM.choose_command(state, "a1")
    # A listed move (by destination) onto the shortest way to the enemy: 3 m of Agility Bonus 3.
    assert isinstance(step, D100DMove) and step.to == (5, 5) and not step.path
    assert command_json(step) in [m.command for m in options.turn_options(state, "a1").moves]


def test_suppressing_fire_is_scored_by_the_killzone_it_catches() -> None:
    """D100D-09: one random hit per degree and a Pinning test for everyone caught; more enemies caught, more worth."""
    crowd = start(make_setup([
        fighter("a1", "red", (2, 5)),
        fighter("b1", "blue", (12, 5)), fighter("b2", "blue", (12, 6)), fighter("b3", "blue", (12, 4)),
    ]))
    alone = start(make_setup([fighter("a1", "red", (2, 5)), fighter("b1", "blue", (12, 5))]))

    def worth(state) -> float:
        turn = options.turn_options(state, "a1")
        choice = next(c for a in turn.actions if a.action == "D100DSuppressingFire" for c in a.choices if c.square == (12, 5))
        return ai.suppressing_value(state, state.combatants["a1"], choice)

    assert worth(crowd) > worth(alone) > 0
    assert SYSTEM.choose_command(crowd, "a1") is not None


def test_ai_clears_a_jam_when_no_gun_is_left() -> None:
    state = start(make_setup([fighter("a1", "red", (2, 5), weapons=[GUN]), fighter("b1", "blue", (12, 5))]))
    state.combatants["a1"].jammed = ["lasgun"]
    assert isinstance(SYSTEM.choose_command(state, "a1"), D100DClearJam)
