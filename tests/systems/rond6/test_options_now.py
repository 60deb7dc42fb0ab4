"""RonD6: what a combatant may do now (issue 9). Exact Wild Die odds checked
against a brute-force walk over the dice `roll_pool` rolls; every listed
command accepted; moves by destination; fully formed window answers; the
GM's calls (complications, Setbacks) and commands."""

from __future__ import annotations

import random

import pytest

from firelane.engine.core import Rejected
from firelane.engine.dice import Dice
from firelane.engine.seats import ENGINE_SEAT, GM
from firelane.engine.systems.rond6 import SYSTEM, odds
from firelane.engine.systems.rond6.pools import DieCode, roll_pool
from firelane.engine.systems.rond6.aux_schemas import R6Move
from firelane.engine.systems.rond6.schemas import R6Attack, R6DeclareActions, R6MortalWoundCheck
from firelane.events.schemas import ConditionApplied, ConditionRemoved, Die, GMRule, Moved

from ..options_helpers import as_command, check_listed_commands_sampling_moves, check_moves_follow_listed_paths, demo_states
from .r6helpers import act, cmd, combatant, one, rejection, setup, start


class _Need(Exception):
    pass


class _Script(Dice):
    def __init__(self, faces: list[int]) -> None:
        self.faces, self.at = faces, 0

    def roll(self, sides: int) -> Die:
        if self.at == len(self.faces):
            raise _Need
        self.at += 1
        return Die(sides=sides, face=self.faces[self.at - 1], at=-1, k=self.at)


def brute_force(code: DieCode, *, stymied: bool, rule: str, extra: int, cut: int) -> tuple[dict[int, float], float]:
    """Walk every sequence of faces roll_pool asks for (sequences longer than ``cut`` dice left out): the totals and the mass left out."""
    totals: dict[int, float] = {}
    left_out = 0.0
    stack: list[tuple[list[int], float]] = [([], 1.0)]
    while stack:
        faces, weight = stack.pop()
        if len(faces) > cut:
            left_out += weight
            continue
        try:
            roll = roll_pool(_Script(faces), code, purpose="t", rule="R6-01", stymied=stymied, complication_rule=rule, extra_wild_dice=extra)
        except _Need:
            stack += [(faces + [face], weight / 6) for face in range(1, 7)]
            continue
        totals[roll.total] = totals.get(roll.total, 0.0) + weight
    return totals, left_out


@pytest.mark.parametrize("code", ["1D", "2D+1", "3D+2"])
@pytest.mark.parametrize("rule", ["remove", "remove_wild", "keep"])
@pytest.mark.parametrize("stymied,extra", [(False, 0), (True, 0), (False, 1)])
def test_R6_01_exact_pool_odds_equal_a_brute_force_walk_over_the_dice(code, rule, stymied, extra) -> None:
    """R6-01: the Wild Die explodes on 6 (not when Stymied), its 1 is a complication by the rule; the odds match every sequence of faces."""
    parsed = DieCode.parse(code)
    cut = parsed.dice + extra + 3
    walked, left_out = brute_force(parsed, stymied=stymied, rule=rule, extra=extra, cut=cut)
    exact = odds.pool_total(parsed, stymied=stymied, complication_rule=rule, extra_wild_dice=extra)
    assert sum(exact.values()) == pytest.approx(1.0, abs=1e-11)
    for target in range(0, 40):
        brute = sum(p for v, p in walked.items() if v >= target)
        assert brute <= odds.chance_at_least(exact, target) + 1e-12 <= brute + left_out + 2e-12
    if stymied:
        assert left_out == 0 and all(walked[v] == pytest.approx(exact.get(v, 0.0), abs=1e-15) for v in walked)


def test_opposed_odds_convolve_both_sides() -> None:
    """R6-16: an opposed roll: the attack reaches the defense's rolled total (ties to the attacker)."""
    one_die = {face: 1 / 6 for face in range(1, 7)}
    assert odds.opposed_chance(one_die, one_die) == pytest.approx(21 / 36)


def _opts(state, cid):
    return next(c for c in SYSTEM.options(state, ENGINE_SEAT).combatants if c.combatant == cid)


def _duel(**b):
    return start(setup(combatant("a", "red", (1, 1)), combatant("b", "blue", (4, 1), **b)), [5, 5, 5, 2, 2, 2])


def test_before_declaring_one_action_is_taken_in_one_step_and_more_are_declared_with_their_penalty() -> None:
    """R6-05/06: before the round's declaration the options are what one action
    can do (each taken in one step: the engine declares the one action with it)
    and declaring more, each labelled with the penalty it brings (issue 19:
    nothing could be done before choosing "declare 1/2/3 actions")."""
    state = _duel()
    mine = _opts(state, "a")
    declare = next(a for a in mine.actions if a.action == "R6DeclareActions")
    counts = [(c.command["count"], c.command["fate_point"]) for c in declare.choices]
    assert counts[:2] == [(2, False), (3, False)]
    assert [c.label for c in declare.choices[:2]] == ["declare 2 actions: every roll this round at -1D",
                                                      "declare 3 actions: every roll this round at -2D"]
    assert declare.choices[0].notes and "R6-05" in declare.choices[0].notes[0]
    shot = next(a for a in mine.attacks if a.target == "b" and a.weapon == "pistol" and a.mode == "normal")
    assert mine.moves and shot.command["type"] == "R6Attack"
    # The listed attack's odds are those of one declared action: the same as after declaring one by hand.
    declared = _duel()
    act(declared, cmd(R6DeclareActions, "a", count=1))
    same = next(a for a in _opts(declared, "a").attacks if a.target == "b" and a.weapon == "pistol" and a.mode == "normal")
    assert (shot.hit_chance, shot.target_number, shot.modifiers) == (same.hit_chance, same.target_number, same.modifiers)


def test_attack_options_match_the_engine_roll_and_carry_the_exact_chance() -> None:
    """R6-13/15: the listed number to reach is the defense the engine uses; the chance is the pool's, exact."""
    state = _duel()
    act(state, cmd(R6DeclareActions, "a", count=1))
    attacks = {(a.weapon, a.mode): a for a in _opts(state, "a").attacks if a.target == "b"}
    shot = attacks[("pistol", "normal")]
    # Firearms 4D, no penalty with one action: the exact odds of 4D with a Wild Die against Passive Defense.
    expected = odds.chance_at_least(odds.pool_total(DieCode(4)), shot.target_number)
    assert shot.hit_chance == pytest.approx(expected) and shot.modifiers[0].source == "firearms 4D [dice]"
    assert ("pistol", "called shot") not in attacks and any(m.startswith("normal, called shot") for _w, m in attacks)
    assert any("defend actively" in note for note in shot.notes)
    act(state, as_command(SYSTEM, shot.command))
    act(state, as_command(SYSTEM, _opts(state, "b").window.pass_command), [3] * 12, exact=False)
    assert [e for e in state.gm_flags if e["kind"] == "complication"] == []


def test_defense_window_lists_each_declare_count_and_resist_lists_every_spend() -> None:
    """R6-16: an undeclared defender picks how many actions to declare; R6-20: every Character/Fate Point spend is listed."""
    state = _duel(character_points=2, fate_points=1)
    act(state, cmd(R6DeclareActions, "a", count=1))
    act(state, cmd(R6Attack, "a", target="b", weapon="pistol"))
    window = _opts(state, "b").window
    assert window is not None and window.trigger == "attack_declared"
    dodge = next(r for r in window.reactions if r.reaction == "dodge")
    assert [c.command["options"] for c in dodge.choices] == [{"declare": n} for n in range(1, len(dodge.choices) + 1)]
    act(state, as_command(SYSTEM, window.pass_command), [5] * 4 + [3] * 7, exact=False)  # the strike hits
    resist = _opts(state, "b").window
    assert resist is not None and resist.trigger == "hit"
    [spend] = resist.reactions
    assert [(c.command["options"]["character_points"], c.command["options"]["fate_point"]) for c in spend.choices] == [
        (1, False), (2, False), (0, True), (1, True), (2, True)]
    for choice in spend.choices:
        SYSTEM.decide(state, as_command(SYSTEM, choice.command), _Script([3] * 12))


def test_moves_by_destination_walk_the_listed_path_at_each_pace() -> None:
    """R6-09/11: partial, full and run moves to every reachable Space; an unreachable one is refused with what is reachable."""
    state = _duel()
    act(state, cmd(R6DeclareActions, "a", count=2))
    moves = _opts(state, "a").moves
    # A Full Action needs a single declared action; on this dry floor with nothing to climb no swim or climb is listed (R6-12).
    assert {m.mode for m in moves} == {"partial", "run"}
    assert check_moves_follow_listed_paths(SYSTEM, state, SYSTEM.options(state, ENGINE_SEAT), whole=False) == len(moves)
    partial = next(m for m in moves if m.mode == "partial" and m.to == (3, 3))
    moved = one(act(state, as_command(SYSTEM, partial.command)), Moved)
    assert moved.path == partial.path
    reason = rejection(act(state, cmd(R6Move, "a", to=(4, 1))))
    assert reason.startswith("cannot move to (4, 1): destination (4, 1) is occupied; at a partial walk")


def test_every_listed_command_is_accepted_in_many_demo_states() -> None:
    chooser = random.Random(6)
    states = commands = 0
    for system, state in demo_states("rond6", [bytes([n]) * 32 for n in range(2)], every=4):
        _o, count = check_listed_commands_sampling_moves(system, state, chooser, moves=10)
        states, commands = states + 1, commands + count
    assert states > 10 and commands > 100


def test_the_gm_settles_a_setback_and_sends_the_mortal_wound_check() -> None:
    """R6-22: a Setback is a GM call until the GM rules it resolved; R6-21's check is the GM's command."""
    state = _duel()
    SYSTEM.evolve(state, ConditionApplied(combatant="b", condition="setback", rule="R6-18"))
    calls = {c.id: c.text for c in SYSTEM.options(state, GM).gm.calls}
    setback = next(cid for cid in calls if cid.startswith("setback-"))
    events = act(state, GMRule(command_id="g", actor=GM, call=setback, ruling="resolved: b finds its footing"))
    assert one(events, ConditionRemoved).condition == "setback"
    assert setback not in {c.id for c in SYSTEM.options(state, GM).gm.calls}
    assert R6MortalWoundCheck.authority == "gm"
    assert rejection(act(state, R6MortalWoundCheck(command_id="m", actor=GM, combatant="b"))) != "unknown combatant 'gm'"


def test_a_wild_die_complication_is_a_gm_call() -> None:
    """R6-01: a 1 on the Wild Die is flagged for the GM with a stable id until ruled on."""
    state = _duel()
    act(state, cmd(R6DeclareActions, "a", count=1))
    act(state, cmd(R6Attack, "a", target="b", weapon="pistol"))
    act(state, as_command(SYSTEM, _opts(state, "b").window.pass_command), [1, 3, 3, 3], exact=False)
    attack = [f for f in state.gm_flags if f["kind"] == "complication"]
    assert attack[0]["id"] == "complication-1" and attack[0]["combatant"] == "a"
    calls = {c.id for c in SYSTEM.options(state, GM).gm.calls}
    assert "complication-1" in calls
    act(state, GMRule(command_id="g", actor=GM, call="complication-1", ruling="a's pistol snags on its holster"))
    assert "complication-1" not in {c.id for c in SYSTEM.options(state, GM).gm.calls}
    with pytest.raises(Rejected, match="no pending GM call 'complication-99'"):
        SYSTEM.decide(state, GMRule(command_id="g", actor=GM, call="complication-99", ruling="x"), _Script([]))
