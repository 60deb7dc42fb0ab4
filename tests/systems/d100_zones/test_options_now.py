"""d100-zones: what a combatant may do now (issue 9). Every listed command is
accepted; moves by destination walk the listed path and name the free attacks
they provoke with their odds; hit chances equal a brute-force count over the
d100 faces of the attack and the dodge; the GM settles 90+ complications."""

from __future__ import annotations

import copy
import random

import pytest

from firelane.engine.core import Rejected, command_json
from firelane.engine.seats import ENGINE_SEAT, GM
from firelane.engine.systems.d100_zones import SYSTEM
from firelane.engine.systems.d100_zones.schemas import D100ZAttack, D100ZMove
from firelane.events.schemas import AttackResolved, GMAdjust, GMRule, GMRuled, Moved

from ..options_helpers import (
    FacesThenOnes,
    as_command,
    check_listed_commands_sampling_moves,
    check_moves_follow_listed_paths,
    demo_states,
)
from .helpers import KNIFE, KNUCKLES, PISTOL, RIFLE, act, fighter, make_setup, one, rejection, start


def _options(state, cid):
    return next(c for c in SYSTEM.options(state, ENGINE_SEAT).combatants if c.combatant == cid)


def _landed_by_brute_force(state, command) -> float:
    """Try every attack face; for plain hits every dodge face too: the share that lands."""
    landed = 0.0
    for face in range(1, 101):
        events = SYSTEM.decide(copy.deepcopy(state), command, FacesThenOnes(face, 1))
        attack = [e for e in events if isinstance(e, AttackResolved)][0]
        if attack.details["outcome"] != "hit":
            landed += attack.hit / 100
            continue
        for dodge in range(1, 101):
            events = SYSTEM.decide(copy.deepcopy(state), command, FacesThenOnes(face, dodge))
            landed += [e for e in events if isinstance(e, AttackResolved)][0].hit / 10_000
    return landed


def test_every_listed_command_is_accepted_in_many_demo_states() -> None:
    """Issue 9: every option but the moves, and 25 moves at random, of every sampled state is accepted."""
    chooser = random.Random(9)
    states = commands = 0
    for system, state in demo_states("d100-zones", [bytes([n]) * 32 for n in range(2)], every=3):
        _options_now, count = check_listed_commands_sampling_moves(system, state, chooser)
        states, commands = states + 1, commands + count
    assert states > 10 and commands > 200


def test_moves_are_free_or_take_the_action_and_follow_the_listed_path() -> None:
    """D100Z-02/03: up to one zone (15 m) is free, up to 50 m takes the action; by destination the engine walks the listed path."""
    state = start(make_setup([fighter("a1", "red", (2, 2)), fighter("b1", "blue", (28, 18))]))
    moves = {m.to: m for m in _options(state, "a1").moves}
    assert moves[(9, 2)].mode == "free" and moves[(9, 2)].cost == 14.0
    assert moves[(10, 2)].mode == "action" and moves[(10, 2)].cost == 16.0
    assert (27, 2) in moves and (28, 2) not in moves  # 25 squares of 2 m = 50 m
    assert check_moves_follow_listed_paths(SYSTEM, state, SYSTEM.options(state, ENGINE_SEAT)) == len(moves)
    reason = rejection(act(state, D100ZMove(command_id="m", actor="a1", to=(28, 2))))
    assert reason.startswith("cannot move to (28, 2): destination (28, 2) is 26 steps away from (2, 2), and only 25 are left")


def test_leaving_engaged_range_lists_each_free_attack_with_its_exact_odds() -> None:
    """D100Z-15: a move out of Engaged range provokes a free attack; the mover dodges at -20."""
    state = start(make_setup([fighter("a1", "red", (5, 5), dexterity=45), fighter("b1", "blue", (6, 5), melee=70),
                              fighter("b2", "blue", (20, 5))]))
    move = {m.to: m for m in _options(state, "a1").moves}[(3, 5)]
    assert move.path == [(4, 5), (3, 5)]
    [threat] = move.threats
    assert (threat.reactor, threat.reaction, threat.at, threat.rule) == ("b1", "free_attack", (4, 5), "D100Z-15")
    # Knife at Melee 70: 01-10 lands; 11-70 lands unless the dodge at 45-20 = 25 succeeds (25 faces).
    assert threat.hit_chance == pytest.approx(0.10 + 0.60 * 0.75)
    act(state, as_command(SYSTEM, move.command))
    window = _options(state, "b1").window
    assert window is not None and window.trigger == "leave_engaged"
    [free] = window.reactions
    assert [c.command["options"] for c in free.choices] == [{"weapon": "knife"}, {"weapon": "unarmed"}]
    assert free.choices[0].hit_chance == threat.hit_chance
    claim = as_command(SYSTEM, free.choices[0].command)
    assert _landed_by_brute_force(state, claim) == pytest.approx(threat.hit_chance)


def test_attack_chances_equal_a_brute_force_count_over_attack_and_dodge_faces() -> None:
    """D100Z-04/05: a critical lands, 90+ misses, a plain hit lands when the dodge fails; cover and flanking counted."""
    state = start(make_setup([fighter("a1", "red", (5, 5), weapons=[RIFLE, KNIFE]), fighter("a2", "red", (7, 5)),
                              fighter("b1", "blue", (6, 5), dexterity=30), fighter("b2", "blue", (15, 5))]))
    attacks = {(a.target, a.weapon): a for a in _options(state, "a1").attacks if a.target != "a2"}
    assert set(attacks) == {("b1", "rifle"), ("b1", "knife"), ("b1", "unarmed"), ("b2", "rifle")}  # and the ally a2, flagged
    knife = attacks[("b1", "knife")]
    assert [(m.source, m.rule, m.value) for m in knife.modifiers] == [("Melee skill", "D100Z-04", 60), ("flanking with A2", "D100Z-10", 10)]
    for option in (knife, attacks[("b2", "rifle")]):
        assert _landed_by_brute_force(state, as_command(SYSTEM, option.command)) == pytest.approx(option.hit_chance)


def test_second_attack_options_carry_the_multi_attack_penalty() -> None:
    """D100Z-11: after the first attack, a second one at -10 with the other hand's one-handed weapon, else -20."""
    state = start(make_setup([fighter("a1", "red", (5, 5), weapons=[PISTOL, KNIFE, KNUCKLES]), fighter("b1", "blue", (6, 5))]))
    act(state, D100ZAttack(command_id="a", actor="a1", target="b1", weapon="knife"), [95])
    seconds = {a.weapon: a for a in _options(state, "a1").attacks}
    assert {w: a.modifiers[-1].value for w, a in seconds.items()} == {"pistol": -10, "knife": -20, "knuckles": -20, "unarmed": -20}
    assert all(a.mode == "second attack" for a in seconds.values())


def test_a_90_plus_attack_is_a_gm_call_until_ruled() -> None:
    """D100Z-04: 90+ is an automatic miss and "your GM decides the consequence": a pending GM call with a stable id."""
    state = start(make_setup([fighter("a1", "red", (5, 5)), fighter("b1", "blue", (6, 5))]))
    act(state, D100ZAttack(command_id="a", actor="a1", target="b1", weapon="knife"), [93])
    calls = SYSTEM.options(state, GM).gm.calls
    assert [(c.id, c.text) for c in calls] == [("complication-1", "A1 rolled 93 attacking B1 with knife (round 1): an automatic "
                                                "miss, and something goes wrong; the GM decides the consequence (D100Z-04)")]
    ruled = act(state, GMRule(command_id="r", actor=GM, call="complication-1", ruling="a1 drops the knife", reason="table"))
    assert one(ruled, GMRuled).call == "complication-1"
    assert SYSTEM.options(state, GM).gm.calls == []
    assert rejection(act(state, GMRule(command_id="r2", actor=GM, call="complication-1", ruling="again"))) == (
        "no pending GM call 'complication-1'; pending: none")


def test_gm_adjustments_keep_to_their_ranges() -> None:
    state = start(make_setup([fighter("a1", "red", (5, 5)), fighter("b1", "blue", (6, 5))]))
    assert rejection(act(state, GMAdjust(command_id="g", actor=GM, combatant="b1", changes={"hp": 16}, reason="x"))) == (
        "hp must be between -10 (death) and b1's max_hp 15, not 16")
    assert rejection(act(state, GMAdjust(command_id="g", actor=GM, combatant="b1", changes={"melee": 101}, reason="x"))) == (
        "melee must be between 0 and 100, not 101")
    act(state, GMAdjust(command_id="g", actor=GM, combatant="b1", changes={"hp": 3}, reason="bled"))
    assert state.combatants["b1"].hp == 3


def test_sampled_unlisted_commands_are_refused() -> None:
    """Issue 9: attacks the options leave out (out of reach, behind the action) are refused."""
    state = start(make_setup([fighter("a1", "red", (5, 5)), fighter("b1", "blue", (15, 5))]))
    listed = [a.command for a in _options(state, "a1").attacks]
    for command in (D100ZAttack(command_id="u", actor="a1", target="b1", weapon="knife"),
                    D100ZAttack(command_id="u", actor="a1", target="b1", weapon="unarmed")):
        assert command_json(command) not in listed
        with pytest.raises(Rejected):
            SYSTEM.decide(state, command, FacesThenOnes(50))
    act(state, D100ZAttack(command_id="a", actor="a1", target="b1", weapon="rifle"), [95])
    state.settings["options"]["multi_attack"] = False
    assert _options(state, "a1").attacks == []
    with pytest.raises(Rejected):
        SYSTEM.decide(state, D100ZAttack(command_id="u", actor="a1", target="b1", weapon="rifle"), FacesThenOnes(50))
    assert one(act(state, as_command(SYSTEM, _options(state, "a1").moves[0].command)), Moved)


def test_attacks_on_allies_are_listed_flagged_accepted_and_exact() -> None:
    """D100Z-04/05: the engine accepts an attack on an ally; it is listed, flagged, with its exact landing chance."""
    from firelane.engine.systems.d100_zones import options

    state = start(make_setup([fighter("a1", "red", (5, 5), weapons=[KNIFE, PISTOL]), fighter("a2", "red", (6, 5)),
                              fighter("a3", "red", (15, 5)), fighter("b1", "blue", (20, 5))]))
    on_allies = [a for a in _options(state, "a1").attacks if a.target in ("a2", "a3")]
    assert {(a.target, a.weapon) for a in on_allies} == {("a2", "knife"), ("a2", "unarmed"), ("a2", "pistol"), ("a3", "pistol")}
    for attack in on_allies:
        assert options.ALLY_NOTE in attack.notes
        assert attack.hit_chance == pytest.approx(_landed_by_brute_force(state, as_command(SYSTEM, attack.command)))
    assert not [a for a in _options(state, "a1").attacks if a.target == "b1" and options.ALLY_NOTE in a.notes]
    # Unlisted: the knife on a3, 20 m away, is refused (melee needs Engaged range).
    unlisted = D100ZAttack(command_id="u", actor="a1", target="a3", weapon="knife")
    assert command_json(unlisted) not in [a.command for a in _options(state, "a1").attacks]
    with pytest.raises(Rejected):
        SYSTEM.decide(copy.deepcopy(state), unlisted, FacesThenOnes(1))
    # The AI never takes one.
    assert SYSTEM.choose_command(state, "a1").target == "b1"  # type: ignore[union-attr]


def test_the_ai_s_move_is_the_listed_move_to_its_destination() -> None:
    """Issue 9: the one MoveOption the AI builds (`move_option`) is the listed one for that square."""
    from firelane.engine.systems.d100_zones import options

    state = start(make_setup([fighter("a1", "red", (0, 5), weapons=[KNIFE]), fighter("b1", "blue", (20, 5))]))
    move = SYSTEM.choose_command(state, "a1")
    assert isinstance(move, D100ZMove)
    listed = {m.to: m for m in options.move_options(state, state.combatants["a1"])}
    assert command_json(move) == listed[move.to].command
