"""The d100-zones AI, the demo encounter, whole headless fights and replay from the log."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from firelane.engine.registry import get_system
from firelane.engine.core import command_json
from firelane.engine.systems.d100_zones import SYSTEM, ai, demo_setup, load_data, options, sheet
from firelane.engine.systems.d100_zones.schemas import (
    D100ZAimedShot,
    D100ZAttack,
    D100ZFirstAid,
    D100ZMove,
    D100ZSuppressiveFire,
)
from firelane.events.schemas import CoverFeature, EncounterSetup

from ..percentile_helpers import fight_and_replay
from .helpers import HATCHET, KNIFE, act, end_turn, fighter, make_setup, start


def _fight(setup: EncounterSetup, seed: bytes):
    return fight_and_replay(SYSTEM, setup, seed)


def test_registry_and_demo_setup() -> None:
    assert get_system("d100-zones") is SYSTEM
    setup = demo_setup()
    assert setup.system == "d100-zones" and len(setup.combatants) == 8
    assert {c.side for c in setup.combatants} == {"rangers", "raiders"}
    assert set(load_data()) >= {"weapons", "armour", "templates", "demo"}
    assert sheet("ranger")["dr"] == 2 and sheet("gunslinger")["weapons"][1]["name"] == "holdout_pistol"
    state = start(setup, [50] * 8)
    assert state.settings["square_metres"] == 2.0 and state.active is not None


def test_ai_fights_end_with_a_winner_and_replay_to_the_same_state() -> None:
    """Two AI squads fight to the end in a sensible number of rounds; the log rebuilds the state exactly."""
    rounds = []
    for n in range(10):
        final, rebuilt, _ = _fight(demo_setup(), bytes([n]) * 32)
        assert final.ended and final.winner in {"rangers", "raiders"}, final.end_reason
        assert rebuilt == final
        rounds.append(final.round)
    assert max(rounds) <= 15


def test_ai_fights_end_with_every_option_off() -> None:
    """D100Z-16: the AI copes with the optional rules switched off."""
    base = demo_setup()
    off = {name: False for name in ("str_bonus", "cover", "flanking", "multi_attack", "aimed_shot", "suppressive_fire")}
    setup = EncounterSetup(system=base.system, combatants=base.combatants, terrain=base.terrain, settings={"options": off})
    for n in range(3):
        final, rebuilt, _ = _fight(setup, bytes([100 + n]) * 32)
        assert final.ended and final.winner is not None and rebuilt == final


@settings(max_examples=8, deadline=None)
@given(st.binary(min_size=32, max_size=32))
def test_replaying_the_log_rebuilds_the_live_state_for_any_seed(seed: bytes) -> None:
    """Property: for any seed, folding the yielded events from initial_state gives a state == the live one."""
    final, rebuilt, _ = _fight(demo_setup(), seed)
    assert rebuilt == final and final.ended


def _top_listed(state, cid: str) -> dict:
    """The listed attack, Suppressive Fire or Aimed Shot the AI's scoring ranks first."""
    me = state.combatants[cid]
    listed = options.other_actions(SYSTEM, state, me) if not me.attacks else []
    return ai._best(state, me, options.attack_options(state, me), listed)


def test_ai_attacks_engaged_enemies_then_makes_its_second_attack() -> None:
    """Issue 9: the AI's attacks are listed options, the best-scored ones (D100Z-04, D100Z-11)."""
    state = start(make_setup([fighter("a1", "red", (0, 5), weapons=[KNIFE, HATCHET]), fighter("b1", "blue", (1, 5)), fighter("b2", "blue", (20, 5))]))
    first = SYSTEM.choose_command(state, "a1")
    assert first == SYSTEM.choose_command(state, "a1")
    assert isinstance(first, D100ZAttack) and first.target == "b1" and first.weapon in ("knife", "hatchet")
    assert command_json(first) == _top_listed(state, "a1")
    act(state, first, [99])
    second = SYSTEM.choose_command(state, "a1")
    seconds = options.attack_options(state, state.combatants["a1"])
    other = "hatchet" if first.weapon == "knife" else "knife"
    assert {(a.weapon, a.modifiers[-1].value) for a in seconds if a.target == "b1"} >= {(other, -10), (first.weapon, -20)}
    assert isinstance(second, D100ZAttack) and command_json(second) == _top_listed(state, "a1")
    act(state, second, [99])
    assert SYSTEM.choose_command(state, "a1") is None


def test_ai_shoots_aims_suppresses_moves_and_gives_first_aid() -> None:
    state = start(make_setup([fighter("a1", "red", (0, 5)), fighter("b1", "blue", (10, 5))]))
    choice = SYSTEM.choose_command(state, "a1")
    assert isinstance(choice, D100ZAttack | D100ZSuppressiveFire | D100ZAimedShot) and command_json(choice) == _top_listed(state, "a1")
    # Behind hard cover a poor shot is worth less than aiming (+20 next turn, D100Z-12) or suppressing (DEX tests, D100Z-13).
    state = start(make_setup([fighter("a1", "red", (0, 5), ranged=45), fighter("b1", "blue", (10, 5))], cover=[CoverFeature(x=9, y=5, level="hard")]))
    assert isinstance(SYSTEM.choose_command(state, "a1"), D100ZAimedShot | D100ZSuppressiveFire)
    state = start(make_setup([fighter("a1", "red", (0, 5)), fighter("b1", "blue", (4, 5)), fighter("b2", "blue", (4, 6)), fighter("b3", "blue", (5, 3))]))
    choice = SYSTEM.choose_command(state, "a1")
    assert isinstance(choice, D100ZSuppressiveFire) and choice.zone == "close"
    # D100Z-13 catches everyone in the zone: with an ally there the AI shoots one enemy instead.
    state = start(make_setup([fighter("a1", "red", (0, 5)), fighter("a2", "red", (3, 7)),
                              fighter("b1", "blue", (4, 5)), fighter("b2", "blue", (4, 6)), fighter("b3", "blue", (5, 3))]))
    assert isinstance(SYSTEM.choose_command(state, "a1"), D100ZAttack)
    state = start(make_setup([fighter("a1", "red", (0, 5), weapons=[KNIFE]), fighter("b1", "blue", (20, 5))]))
    move = SYSTEM.choose_command(state, "a1")
    assert isinstance(move, D100ZMove) and move.to == (19, 5) and not move.path  # by destination, as listed
    assert command_json(move) in [m.command for m in options.move_options(state, state.combatants["a1"])]
    state = start(make_setup([fighter("a1", "red", (0, 5), weapons=[KNIFE]), fighter("b1", "blue", (6, 5))]))
    move = SYSTEM.choose_command(state, "a1")
    assert isinstance(move, D100ZMove) and move.to == (5, 5)
    state = start(make_setup([fighter("a1", "red", (0, 5)), fighter("a2", "red", (1, 5), hp=4, max_hp=10), fighter("b1", "blue", (2, 5))]), [20, 20, 80])
    act(state, D100ZAttack(command_id="k", actor="b1", target="a2"), [5, 3])
    end_turn(state)
    assert state.active == "a1"
    assert isinstance(SYSTEM.choose_command(state, "a1"), D100ZFirstAid)

