"""The d100-degrees AI, the demo encounter, whole headless fights and replay from the log."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from firelane.engine.systems.d100_degrees import SYSTEM, demo_setup, load_data, sheet
from firelane.events.d100_degrees_schemas import (
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


def test_ai_is_deterministic_and_picks_all_out_attack_in_melee() -> None:
    state = start(make_setup([fighter("a1", "red", (5, 5)), fighter("b1", "blue", (6, 5), wounds=20), fighter("b2", "blue", (6, 6), wounds=5)]))
    first = SYSTEM.choose_command(state, "a1")
    assert first == SYSTEM.choose_command(state, "a1")
    assert isinstance(first, D100DAllOutAttack) and first.target == "b2" and first.extra == ["b1"]
    act(state, D100DMove(command_id="m", actor="a1", path=[(5, 4)]))
    assert isinstance(SYSTEM.choose_command(state, "a1"), D100DBasicAttack)


def test_ai_claims_its_best_evasion_and_fires_or_moves() -> None:
    state = start(make_setup([fighter("a1", "red", (5, 5)), fighter("b1", "blue", (6, 5), agility=30, weapon_skill=50)]))
    act(state, D100DBasicAttack(command_id="c", actor="a1", target="b1"), [10])
    claim = SYSTEM.choose_command(state, "b1")
    assert isinstance(claim, ClaimReaction) and claim.reaction == "parry"
    assert SYSTEM.choose_command(state, "a1") is None  # not eligible in the window
    state = start(make_setup([fighter("a1", "red", (2, 5)), fighter("b1", "blue", (10, 5))]))
    shot = SYSTEM.choose_command(state, "a1")
    assert isinstance(shot, D100DControlledFire) and shot.rof == 3 and shot.target == "b1"
    state = start(make_setup([fighter("a1", "red", (2, 5), weapons=[SWORD]), fighter("b1", "blue", (10, 5))]))
    step = SYSTEM.choose_command(state, "a1")
    assert isinstance(step, D100DMove) and step.path == [(3, 5), (4, 5), (5, 5)]


def test_ai_suppresses_a_crowd_and_clears_a_jam() -> None:
    state = start(make_setup([
        fighter("a1", "red", (2, 5)),
        fighter("b1", "blue", (12, 5)), fighter("b2", "blue", (12, 6)), fighter("b3", "blue", (12, 4)),
    ]))
    choice = SYSTEM.choose_command(state, "a1")
    assert isinstance(choice, D100DSuppressingFire) and choice.toward == (12, 5) and choice.rof == 3
    state = start(make_setup([fighter("a1", "red", (2, 5), weapons=[GUN]), fighter("b1", "blue", (12, 5))]))
    state.combatants["a1"].jammed = ["lasgun"]
    assert isinstance(SYSTEM.choose_command(state, "a1"), D100DClearJam)
