"""d100-degrees: what a combatant may do now (issue 9). Every listed command is
accepted; moves by destination walk the listed path; hit chances equal a
brute-force count over every d100 face the engine could roll; unlisted
commands are refused with what is allowed."""

from __future__ import annotations

import copy

import msgspec
import pytest

from firelane.engine.wording import combatant_names, with_names
from firelane.engine.core import Rejected, command_json
from firelane.engine.dice import Dice
from firelane.engine.seats import ENGINE_SEAT
from firelane.engine.systems.d100_degrees import SYSTEM
from firelane.engine.systems.d100_degrees.schemas import D100DBasicAttack, D100DControlledFire, D100DMove
from firelane.events.schemas import AttackResolved, ClaimReaction, Die, Moved, TestRolled

from ..options_helpers import as_command, check_every_listed_command, check_moves_follow_listed_paths, decide_listed, demo_states
from .helpers import GUN, SWORD, act, fighter, make_setup, one, rejection, start


class FirstFace(Dice):
    """Shows ``face`` on the first die, then ones: enough for any follow-up roll."""

    def __init__(self, face: int) -> None:
        self.face, self.count = face, 0

    def roll(self, sides: int) -> Die:
        self.count += 1
        return Die(sides=sides, face=self.face if self.count == 1 else 1, at=-1, k=self.count - 1)


def _options(state, cid):
    return next(c for c in SYSTEM.options(state, ENGINE_SEAT).combatants if c.combatant == cid)


def test_every_listed_command_is_accepted_in_many_demo_states() -> None:
    """Issue 9: every option of every sampled state (all of them, not a sample) is accepted by decide."""
    states = commands = moves = 0
    for system, state in demo_states("d100-degrees", [bytes([n]) * 32 for n in range(4)], every=2):
        options, count = check_every_listed_command(system, state)
        moves += check_moves_follow_listed_paths(system, state, options)
        states, commands = states + 1, commands + count
    assert states > 20 and commands > 500 and moves > 50


def test_moves_list_every_reachable_square_with_the_engines_path() -> None:
    """House default movement: a Half Action of Agility Bonus metres; by destination the engine walks the listed path."""
    state = start(make_setup([fighter("a1", "red", (5, 5)), fighter("b1", "blue", (15, 5))], walls=[(6, 4), (6, 5), (6, 6)]))
    moves = {m.to: m for m in _options(state, "a1").moves}
    # Agility 34: Agility Bonus 3 -> 3 m = 3 squares: the 7x7 box less the start, the 3 walls,
    # and behind the wall the column x=8 and (7, 5), 4 steps away round it.
    assert len(moves) == 7 * 7 - 1 - 3 - 7 - 1 and all(len(m.path) <= 3 for m in moves.values())
    assert (7, 5) not in moves and (8, 3) not in moves
    around = moves[(7, 4)]
    assert around.cost == 3.0 and around.path == [(5, 4), (6, 3), (7, 4)] and around.threats == []
    moved = one(act(state, as_command(SYSTEM, around.command)), Moved)
    assert moved.path == around.path


def test_an_unreachable_destination_is_refused_with_what_is_reachable() -> None:
    state = start(make_setup([fighter("a1", "red", (5, 5)), fighter("b1", "blue", (15, 5))]))
    reason = rejection(act(state, D100DMove(command_id="m", actor="a1", to=(12, 5))))
    assert reason.startswith("cannot move to (12, 5): destination (12, 5) is 7 steps away from (5, 5), and only 3 are left; within 3 steps, reachable: ")
    assert rejection(act(state, D100DMove(command_id="m", actor="a1", to=(15, 5)))).startswith("cannot move to (15, 5): destination (15, 5) is occupied")
    assert rejection(act(state, D100DMove(command_id="m", actor="a1"))) == "a move needs a path or a destination ('to')"
    # Full paths keep working, and waypoints shape the way.
    assert one(act(start(make_setup([fighter("a1", "red", (5, 5)), fighter("b1", "blue", (15, 5))])),
                   D100DMove(command_id="m", actor="a1", path=[(6, 5), (7, 5)])), Moved).path == [(6, 5), (7, 5)]
    assert one(act(state, D100DMove(command_id="m", actor="a1", to=(7, 5), waypoints=[(6, 6)])), Moved).path == [(6, 6), (7, 5)]


@pytest.mark.parametrize("sheet", [{}, {"ballistic_skill": 95, "weapon_skill": 5}, {"ballistic_skill": 0}])
def test_attack_chances_equal_a_brute_force_count_over_the_d100(sheet) -> None:
    """D100D-06/07/08: the listed chance is the share of the 100 faces with which the engine's attack hits (jams included)."""
    setup = make_setup([fighter("a1", "red", (5, 5), **sheet), fighter("b1", "blue", (6, 5)), fighter("b2", "blue", (12, 5))])
    state = start(setup)
    attacks = _options(state, "a1").attacks
    assert {(a.target, a.mode) for a in attacks} == {
        ("b1", "basic_attack"), ("b1", "all_out_attack"),
        *{(t, f"controlled_fire rof {r}") for t in ("b1", "b2") for r in (1, 2, 3)}}
    for option in attacks:
        hits = 0
        for face in range(1, 101):
            trial = copy.deepcopy(state)
            events = SYSTEM.decide(trial, as_command(SYSTEM, option.command), FirstFace(face))
            resolved = [e for e in events if isinstance(e, AttackResolved) and e.target == option.target]
            said = [msgspec.structs.replace(m, source=with_names(m.source, combatant_names(state))) for m in resolved[0].roll.modifiers]
            assert said == option.modifiers and resolved[0].roll.target == option.target_number
            hits += resolved[0].hit
        assert option.hit_chance == hits / 100, option


def test_attack_modifiers_carry_rule_ids() -> None:
    """D100D-05/07 and the Pinned house default appear as terms with their rules."""
    state = start(make_setup([fighter("a1", "red", (5, 5)), fighter("b1", "blue", (6, 5))]))
    state.combatants["a1"].conditions["pinned"] = "end_of_turn:a1"
    attacks = {(a.mode, a.target): a for a in _options(state, "a1").attacks}
    assert ("all_out_attack", "b1") not in attacks  # Pinned: no Full Actions (house default)
    shot = attacks[("controlled_fire rof 3", "b1")]
    assert [(m.source, m.rule, m.value) for m in shot.modifiers] == [
        ("Ballistic Skill", "D100D-07", 40), ("Challenging (+0)", "D100D-01", 0),
        ("automatic fire: 5 x RoF 3", "D100D-07", 15), ("Pinned", "house default: Pinned", -20)]
    assert shot.target_number == 35 and shot.hit_chance == 0.35


def test_evasion_window_lists_dodge_and_parry_with_exact_chances() -> None:
    """D100D-10: the window's options are dodge (Agility) and parry (Weapon Skill), each with its chance."""
    state = start(make_setup([fighter("a1", "red", (5, 5)), fighter("b1", "blue", (6, 5), agility=37, weapon_skill=52)]))
    act(state, D100DBasicAttack(command_id="x", actor="a1", target="b1"), [10])
    mine = _options(state, "b1")
    assert mine.window is not None and mine.window.deadline_ms == 30_000 and mine.window.awaited == ["b1"]
    chances = {r.reaction: r.choices[0].hit_chance for r in mine.window.reactions}
    assert chances == {"dodge": 0.37, "parry": 0.52}
    for reaction in mine.window.reactions:
        wins = 0
        for face in range(1, 101):
            trial = copy.deepcopy(state)
            events = SYSTEM.decide(trial, as_command(SYSTEM, reaction.choices[0].command), FirstFace(face))
            wins += one(events, TestRolled).success
        assert wins / 100 == reaction.choices[0].hit_chance
    assert mine.window.pass_command == {"type": "PassReaction", "actor": "b1", "window": state.window.window}


def test_suppressing_fire_and_clear_jam_are_listed_as_choices() -> None:
    """D100D-09: Suppressing Fire toward each enemy in sight, with who is caught; D100D-08: Clear Jam per jammed weapon."""
    state = start(make_setup([fighter("a1", "red", (2, 5)), fighter("b1", "blue", (12, 5)), fighter("b2", "blue", (12, 6))]))
    actions = {a.action: a for a in _options(state, "a1").actions}
    suppress = actions["D100DSuppressingFire"]
    assert {c.square for c in suppress.choices} == {(12, 5), (12, 6)}
    assert "the killzone catches: B1, B2" in suppress.choices[0].notes
    # BS 40 - 20 (Hard) + 15 (automatic, RoF 3) = 35; no jam below 97.
    assert suppress.choices[0].hit_chance == 0.35
    state.combatants["a1"].jammed = ["lasgun"]
    actions = {a.action: a for a in _options(state, "a1").actions}
    assert "D100DSuppressingFire" not in actions
    assert [c.command for c in actions["D100DClearJam"].choices] == [{"type": "D100DClearJam", "actor": "a1", "weapon": "lasgun"}]
    assert not [a for a in _options(state, "a1").attacks if a.weapon == "lasgun"]


def test_sampled_unlisted_commands_are_refused() -> None:
    """Issue 9: commands the options leave out are refused (out of reach, out of range, a RoF the weapon lacks)."""
    state = start(make_setup([fighter("a1", "red", (5, 5), weapons=[GUN, SWORD]), fighter("b1", "blue", (9, 5))]))
    listed = [a.command for a in _options(state, "a1").attacks]
    unlisted = [
        D100DBasicAttack(command_id="u", actor="a1", target="b1"),  # not in reach
        D100DControlledFire(command_id="u", actor="a1", target="b1", rof=4),  # RoF 4 > 3
        D100DControlledFire(command_id="u", actor="a1", target="a1"),
    ]
    for command in unlisted:
        assert command_json(command) not in listed
        with pytest.raises(Rejected):
            SYSTEM.decide(state, command, FirstFace(1))
    reachable = {m.to for m in _options(state, "a1").moves}
    for square in [(x, y) for x in range(20) for y in range(12)]:
        if square not in reachable:
            with pytest.raises(Rejected):
                SYSTEM.decide(state, D100DMove(command_id="u", actor="a1", to=square), FirstFace(1))
    decide_listed(SYSTEM, state, next(iter(_options(state, "a1").moves)).command)


def test_a_claim_in_the_evasion_window_is_the_listed_one() -> None:
    state = start(make_setup([fighter("a1", "red", (5, 5)), fighter("b1", "blue", (6, 5))]))
    act(state, D100DBasicAttack(command_id="x", actor="a1", target="b1"), [10])
    listed = [c.command for r in _options(state, "b1").window.reactions for c in r.choices]
    assert command_json(ClaimReaction(command_id="", actor="b1", window=state.window.window, reaction="dodge")) in listed
