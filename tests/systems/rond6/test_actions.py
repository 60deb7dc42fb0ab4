"""RonD6 actions: declaring them and the multiple-action penalty (R6-05), the
Multi-Action Limit (R6-06), Free and Full Actions (R6-07) and Wait (R6-08)."""

from __future__ import annotations

import pytest

from firelane.engine.systems.rond6 import rules
from firelane.engine.systems.rond6.schemas import (
    R6ActionDeclared,
    R6ActionLost,
    R6ActionsDeclared,
    R6Attack,
    R6DeclareActions,
    R6Defend,
    R6FreeAction,
    R6InterruptQueued,
    R6Ready,
    R6Wait,
)
from firelane.events.schemas import (
    ActionTaken,
    AttackResolved,
    ClaimReaction,
    CombatantDown,
    DamageDealt,
    EndTurn,
    InitiativeRolled,
    Moved,
    PassReaction,
    ReactionWindowOpened,
    Terrain,
    Wall,
)
from tests.systems.rond6.r6helpers import (
    act,
    cmd,
    combatant,
    of_type,
    one,
    rejection,
    setup,
    start,
)


def duel(**b_sheet: object):
    """a (red, acts first) at (0,0) against b (blue) at (3,0), 3 spaces: pistol Short range."""
    return start(setup(combatant("a", "red", (0, 0)), combatant("b", "blue", (3, 0), **b_sheet)), [4, 4, 4, 2, 2, 2])


@pytest.mark.parametrize(("actions", "penalty"), [(1, 0), (2, 1), (3, 2), (4, 3), (5, 4), (6, 5)])
def test_r6_05_penalty_table(actions: int, penalty: int) -> None:
    """R6-05: each action beyond the first gives -1D to every action (2: -1D ... 6: -5D)."""
    assert rules.multi_action_penalty(actions) == penalty


def test_r6_05_declared_actions_reduce_every_action_but_not_damage() -> None:
    """R6-05: declare 3 actions: the attack rolls firearms 4D - 2D = 2D; its damage keeps 5D."""
    state = duel()
    declared = one(act(state, cmd(R6DeclareActions, "a", count=3)), R6ActionsDeclared)
    assert (declared.count, declared.penalty_dice, declared.limit) == (3, 2, 3)
    act(state, cmd(R6Attack, "a", target="b"))
    events = act(state, cmd(PassReaction, "b", window=1), [5, 6])  # 2D, the Wild Die first: 5 + 6
    attack = one(events, AttackResolved)
    assert attack.roll.details["code"] == "2D"
    assert attack.roll.details["dice_modifiers"] == [{"source": "multiple actions (3 declared)", "rule": "R6-05", "dice": -2}]
    assert attack.roll.total == 11 and attack.roll.target == 16 and not attack.hit
    assert state.combatants["a"].actions_used == 1


def test_r6_05_penalty_never_goes_below_1d_and_damage_is_not_reduced() -> None:
    """R6-05: 5 actions = -4D on firearms 4D: 1D, never less; damage 5D is never reduced."""
    state = start(setup(combatant("a", "red", (0, 0), attributes={"Agility": "5D"}), combatant("b", "blue", (1, 0))), [4, 4, 4, 2, 2, 2])
    act(state, cmd(R6DeclareActions, "a", count=5))
    act(state, cmd(R6Attack, "a", target="b"))
    events = act(state, cmd(PassReaction, "b", window=1), [6, 6, 2, 3, 3, 3, 3, 3])  # 1D: Wild 6, 6, 2 = 14 +5 point blank
    attack = one(events, AttackResolved)
    assert attack.roll.details["code"] == "1D" and attack.roll.total == 19 and attack.hit
    assert "never below 1D (R6-05): rolled 1D" in attack.roll.notes
    damage = one(events, DamageDealt)  # 15 rolled + 3 result points (house default)
    assert damage.roll.details["code"] == "5D" and damage.details["damage_total"] == 18


def test_r6_05_initiative_is_never_reduced_by_multiple_actions() -> None:
    """R6-05: the next round's initiative rolls full Perception whatever was declared."""
    state = duel()
    act(state, cmd(R6DeclareActions, "a", count=3))
    act(state, cmd(EndTurn, "a"))
    events = act(state, cmd(EndTurn, "b"), [1, 1, 1, 2, 2, 2])
    entry = one(events, InitiativeRolled).entries[0]
    assert entry.combatant == "a" and entry.roll.details["code"] == "3D"


def test_r6_05_declare_first_and_only_once() -> None:
    """R6-05: the number of actions is declared before any roll, once per round
    (an action sent before the declaration declares one action first)."""
    first = duel()
    events = act(first, cmd(R6Attack, "a", target="b"))
    assert type(events[0]).__name__ == "R6ActionsDeclared" and events[0].count == 1
    state = duel()
    assert rejection(act(state, cmd(R6DeclareActions, "a", count=0))) == "declare at least one action, not 0 (R6-05)"
    act(state, cmd(R6DeclareActions, "a", count=1))
    assert rejection(act(state, cmd(R6DeclareActions, "a", count=1))) == "a already declared 1 actions this round (R6-05)"
    assert rejection(act(state, cmd(R6DeclareActions, "b", count=1))) == "it is not b's turn (active: a)"


def test_r6_05_no_more_actions_than_declared() -> None:
    """R6-05: once the declared actions are spent, another action is refused."""
    state = duel()
    act(state, cmd(R6DeclareActions, "a", count=1))
    act(state, cmd(R6Wait, "a"))
    assert rejection(act(state, cmd(R6Ready, "a", weapon="knife"))) == "a has 0 of its 1 declared actions left this round, needs 1 (R6-05)"


def test_r6_06_multi_action_limit_is_agility_dice() -> None:
    """R6-06: Agility 3D allows 3 actions; a fourth is refused with the reason."""
    state = duel()
    assert rejection(act(state, cmd(R6DeclareActions, "a", count=4))) == (
        "a can declare at most 3 actions (Multi-Action Limit: Agility 3D + Quickness 0, R6-06)"
    )
    assert one(act(state, cmd(R6DeclareActions, "a", count=3)), R6ActionsDeclared).limit == 3


def test_r6_06_quickness_adds_up_to_three_and_a_fate_point_doubles() -> None:
    """R6-06: +1 per Quickness rank up to 3; a Fate Point doubles the limit for the round."""
    assert rules.multi_action_limit("3D+2", 2) == 5
    assert rules.multi_action_limit("4D", 5) == 7
    assert rules.multi_action_limit("3D", 1, fate_point=True) == 8
    state = start(setup(combatant("a", "red", (0, 0), talents={"Quickness": 1}, fate_points=1), combatant("b", "blue", (3, 0))), [4, 4, 4, 2, 2, 2])
    assert "at most 4 actions" in rejection(act(state, cmd(R6DeclareActions, "a", count=5)))
    declared = one(act(state, cmd(R6DeclareActions, "a", count=8, fate_point=True)), R6ActionsDeclared)
    assert (declared.limit, declared.fate_point, declared.penalty_dice, declared.rule) == (8, True, 7, "R6-06")
    assert state.combatants["a"].fate_points == 0 and state.combatants["a"].action_limit_doubled_round == 1


def test_r6_06_a_fate_point_needs_a_fate_point() -> None:
    """R6-06: no Fate Point, no doubling."""
    state = duel()
    assert rejection(act(state, cmd(R6DeclareActions, "a", count=6, fate_point=True))) == "a has no Fate Point to spend (R6-06)"


def test_r6_07_free_actions_need_no_declaration_and_spend_no_action() -> None:
    """R6-07: Free Actions (speaking, shouting...) need no roll or action; the GM limits them (3 a turn)."""
    state = duel()
    for _ in range(3):
        taken = one(act(state, cmd(R6FreeAction, "a", action="shout", text="Drop it!")), ActionTaken)
        assert (taken.slot, taken.rule) == ("free", "R6-07")
    assert state.combatants["a"].actions_used == 0 and state.combatants["a"].declared_actions == 0
    assert rejection(act(state, cmd(R6FreeAction, "a", action="speak"))) == "a has already taken 3 Free Actions this turn (R6-07)"


def test_r6_07_unknown_free_action_is_refused() -> None:
    """R6-07: only listed Free Actions."""
    state = duel()
    assert "unknown Free Action 'fly'" in rejection(act(state, cmd(R6FreeAction, "a", action="fly")))


def test_r6_07_a_full_action_is_the_only_action_of_the_round() -> None:
    """R6-07: a Full Action needs a single declared action and leaves nothing else that round."""
    state = duel()
    act(state, cmd(R6DeclareActions, "a", count=2))
    assert rejection(act(state, cmd(R6Defend, "a", skill="dodge", full=True))) == (
        "a declared 2 actions; a Full Action must be the round's only action (R6-07)"
    )
    state = duel()
    act(state, cmd(R6DeclareActions, "a", count=1))
    events = act(state, cmd(R6Defend, "a", skill="dodge", full=True), [3, 3, 3, 3, 3, 3])
    assert one(events, ActionTaken).slot == "full" and state.combatants["a"].full_action
    assert rejection(act(state, cmd(R6Wait, "a"))) == "a took a Full Action this round and can take no other action (R6-07)"


def test_r6_08_a_waiting_character_interrupts_before_the_declared_action_resolves() -> None:
    """R6-08: a declares Wait (an action) with one action left; b declares an attack; a's
    interruption resolves first and drops b, so b's declared attack is lost."""
    state = start(
        setup(combatant("a", "red", (0, 0), skills={"firearms": "5D"}), combatant("b", "blue", (3, 0), wounds=2),
              combatant("c", "blue", (20, 10))),
        # b's 2 Wounds take 2D off its initiative (R6-21): 1D. c's Wild Die 1 removes its highest other die.
        [4, 4, 4, 5, 1, 1, 1],
    )
    assert state.turn_order == ["a", "b", "c"]
    act(state, cmd(R6DeclareActions, "a", count=2))
    waited = act(state, cmd(R6Wait, "a"))
    assert one(waited, ActionTaken).action == "wait" and state.combatants["a"].waiting
    assert not of_type(waited, ReactionWindowOpened)
    act(state, cmd(EndTurn, "a"))
    act(state, cmd(R6DeclareActions, "b", count=1))
    events = act(state, cmd(R6Attack, "b", target="a"))
    assert one(events, R6ActionDeclared).command["target"] == "a"
    window = one(events, ReactionWindowOpened)
    assert (window.trigger, window.rule, [r.combatant for r in window.reactors]) == ("action_declared", "R6-08", ["a"])
    assert not of_type(events, AttackResolved)
    events = act(state, cmd(ClaimReaction, "a", window=1, reaction="interrupt", options={"command": {"type": "R6Attack", "target": "b"}}))
    assert one(events, R6InterruptQueued).command["actor"] == "a"
    assert one(events, ReactionWindowOpened).trigger == "attack_declared"  # b may dodge a's interruption
    # a: firearms 5D - 1D (2 declared) = 4D: 16 vs b's Passive Defense 16 -> hit; 5D damage 25 vs DR 12: 2 Wounds.
    events = act(state, cmd(PassReaction, "b", window=2), [4, 4, 4, 4, 5, 5, 5, 5, 5])
    attack = one(events, AttackResolved)
    assert (attack.attacker, attack.hit, attack.roll.total) == ("a", True, 16)
    assert one(events, DamageDealt).details["wounds_total"] == 4
    assert one(events, CombatantDown).combatant == "b"
    lost = one(events, R6ActionLost)
    assert (lost.combatant, lost.action, lost.reason) == ("b", "R6Attack", "b is out of the fight")
    assert state.combatants["a"].actions_used == 2 and not state.combatants["a"].waiting
    assert state.active == "c"


def test_r6_08_the_declared_action_resolves_after_a_failed_interruption() -> None:
    """R6-08: the interruption resolves first; then the declared action goes ahead."""
    state = duel()
    act(state, cmd(R6DeclareActions, "a", count=2))
    act(state, cmd(R6Wait, "a"))
    act(state, cmd(EndTurn, "a"))
    act(state, cmd(R6DeclareActions, "b", count=1))
    act(state, cmd(R6Attack, "b", target="a"))
    act(state, cmd(ClaimReaction, "a", window=1, reaction="interrupt", options={"command": {"type": "R6Attack", "target": "b"}}))
    # a misses (3D: 2+2+2 = 6 vs 16). b's attack then resolves: a has no action left, so no
    # defense window: firearms 4D 20 vs 16 hits; damage 5D 10 + 4 result points vs DR 12: Stunned.
    events = act(state, cmd(PassReaction, "b", window=2), [2, 2, 2, 5, 5, 5, 5, 2, 2, 2, 2, 2])
    attacks = of_type(events, AttackResolved)
    assert [(x.attacker, x.hit) for x in attacks] == [("a", False), ("b", True)]
    assert one(events, DamageDealt).details["outcome"] == "Stunned"
    assert not of_type(events, R6ActionLost)


def test_r6_08_waiting_needs_an_unused_declared_action() -> None:
    """R6-08: a waiter whose declared actions are all spent cannot interrupt."""
    state = duel()
    act(state, cmd(R6DeclareActions, "a", count=1))
    act(state, cmd(R6Wait, "a"))
    act(state, cmd(EndTurn, "a"))
    act(state, cmd(R6DeclareActions, "b", count=1))
    events = act(state, cmd(R6Attack, "b", target="a"), [2, 2, 2, 2])
    assert not of_type(events, ReactionWindowOpened)  # no interruption, and no action left to dodge with
    assert one(events, AttackResolved).attacker == "b"


def test_r6_08_unused_actions_and_waiting_are_lost_at_the_end_of_the_round() -> None:
    """R6-08: unused declared actions (and the Wait) do not carry into the next round."""
    state = duel()
    act(state, cmd(R6DeclareActions, "a", count=3))
    act(state, cmd(R6Wait, "a"))
    act(state, cmd(EndTurn, "a"))
    act(state, cmd(EndTurn, "b"), [3, 3, 3, 2, 2, 2])
    a = state.combatants["a"]
    assert state.round == 2 and (a.declared_actions, a.actions_used, a.waiting) == (0, 0, False)


def test_r6_08_an_interruption_must_be_a_valid_action() -> None:
    """R6-08: the claim names the interrupting action; an impossible one is refused."""
    state = duel()
    act(state, cmd(R6DeclareActions, "a", count=2))
    act(state, cmd(R6Wait, "a"))
    act(state, cmd(EndTurn, "a"))
    act(state, cmd(R6DeclareActions, "b", count=1))
    act(state, cmd(R6Attack, "b", target="a"))
    assert "an interruption needs options" in rejection(act(state, cmd(ClaimReaction, "a", window=1, reaction="interrupt")))
    assert rejection(act(state, cmd(ClaimReaction, "a", window=1, reaction="interrupt", options={"command": {"type": "R6Attack", "target": "zed"}}))) == "unknown combatant 'zed'"
    assert rejection(act(state, cmd(ClaimReaction, "a", window=1, reaction="interrupt", options={"command": {"type": "R6Wait"}}))) == "waiting again is not an interruption (R6-08)"


def test_r6_08_an_interruption_can_be_a_move_that_spoils_the_declared_attack() -> None:
    """R6-08: a Waits; when b declares a shot at it, a interrupts with a Partial Move behind a
    wall; b's attack then has no line of sight and is lost."""
    state = start(setup(combatant("a", "red", (0, 0)), combatant("b", "blue", (3, 0)), terrain=Terrain(walls=[Wall(1, 1), Wall(2, 1)])),
                  [4, 4, 4, 2, 2, 2])
    act(state, cmd(R6DeclareActions, "a", count=2))
    act(state, cmd(R6Wait, "a"))
    act(state, cmd(EndTurn, "a"))
    act(state, cmd(R6DeclareActions, "b", count=1))
    act(state, cmd(R6Attack, "b", target="a"))
    move = {"type": "R6Move", "path": [[0, 1], [0, 2]], "pace": "partial"}
    events = act(state, cmd(ClaimReaction, "a", window=1, reaction="interrupt", options={"command": move}))
    assert one(events, Moved).path == [(0, 1), (0, 2)] and state.combatants["a"].position == (0, 2)
    lost = one(events, R6ActionLost)
    assert (lost.combatant, lost.reason) == ("b", "b has no line of sight to a")
    assert not of_type(events, AttackResolved) and state.combatants["b"].actions_used == 0
