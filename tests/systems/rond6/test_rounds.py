"""RonD6 rounds, initiative and lost turns: R6-02, R6-03, R6-04 (and R6-38's initiative part)."""

from __future__ import annotations

from firelane.engine.systems.rond6 import rules
from firelane.events.schemas import (
    EndTurn,
    InitiativeRolled,
    RoundStarted,
    TurnSkipped,
    TurnStarted,
)
from tests.systems.rond6.r6helpers import act, cmd, combatant, one, setup, start


def test_r6_02_initiative_is_perception_plus_bonus_rolled_every_round() -> None:
    """R6-02: each round starts with a Perception (+ initiative bonus) roll; highest acts first."""
    encounter = setup(combatant("a", "red", (0, 0)), combatant("b", "blue", (3, 0), initiative_bonus="0D+2"))
    state = start(encounter, [2, 3, 4, 3, 3, 3])  # a: 9; b: 3D+2 = 9+2 = 11
    assert state.turn_order == ["b", "a"]
    assert state.combatants["a"].initiative == 9 and state.combatants["b"].initiative == 11
    assert state.active == "b" and state.round == 1
    act(state, cmd(EndTurn, "b"))
    events = act(state, cmd(EndTurn, "a"), [5, 5, 5, 1, 2, 2])  # round 2: a 15; b's Wild Die 1: complication
    assert one(events, RoundStarted).round == 2
    rolled = one(events, InitiativeRolled)
    assert rolled.rule == "R6-02"
    by_id = {e.combatant: e for e in rolled.entries}
    assert by_id["a"].total == 15
    # b: 1 (Wild Die) and the highest other die (2) are removed: 2 + 2 pips = 4.
    assert by_id["b"].total == 4 and by_id["b"].roll.details["complication"] is True
    assert rolled.order == ["a", "b"] and state.active == "a"


def test_r6_02_a_group_of_similar_npcs_shares_one_roll() -> None:
    """R6-02: the GM rolls once for a group of similar NPCs (same ``group`` on one side)."""
    encounter = setup(
        combatant("a", "red", (0, 0)),
        combatant("c", "blue", (5, 0), group="thugs"),
        combatant("d", "blue", (6, 0), group="thugs", attributes={"Perception": "2D"}),
    )
    state = start(encounter, [2, 2, 2, 4, 4, 5])  # a: 6; the thugs roll once with c's Perception: 13
    rolled = state.combatants
    assert rolled["c"].initiative == 13 and rolled["d"].initiative == 13
    assert state.turn_order == ["c", "d", "a"]


def test_r6_02_groups_can_be_switched_off() -> None:
    """R6-02: the grouping is a house default (``initiative_groups``); off, every NPC rolls."""
    encounter = setup(
        combatant("a", "red", (0, 0)),
        combatant("c", "blue", (5, 0), group="thugs"),
        combatant("d", "blue", (6, 0), group="thugs"),
        initiative_groups=False,
    )
    state = start(encounter, [2, 2, 2, 4, 4, 5, 3, 3, 3])
    assert [state.combatants[c].initiative for c in ("a", "c", "d")] == [6, 13, 9]


def test_r6_03_ties_go_to_higher_agility_then_combat_skill_then_id() -> None:
    """R6-03: tied totals: Initiative Priority talent, then Agility, then best combat skill, then ID."""
    encounter = setup(
        combatant("a", "red", (0, 0)),
        combatant("b", "blue", (3, 0), attributes={"Agility": "3D+1"}),
        combatant("c", "blue", (4, 0), skills={"firearms": "5D"}),
        combatant("d", "blue", (5, 0)),
        combatant("e", "blue", (6, 0), talents={"Initiative Priority": 1}, attributes={"Agility": "2D"}),
    )
    state = start(encounter, [3, 3, 3] * 5)  # everyone 9
    assert state.turn_order == ["e", "b", "c", "a", "d"]
    assert {c.initiative for c in state.combatants.values()} == {9}


def test_r6_03_tiebreak_values_are_recorded() -> None:
    """R6-03: the tie-break values (talent, Agility pips, combat skill pips) are pure and recorded."""
    assert rules.initiative_tiebreak({"Initiative Priority": 1}, "3D+1", "5D") == [1, 10, 15]
    assert rules.initiative_order([("x", 9, [0, 9, 12]), ("w", 9, [0, 9, 12]), ("y", 9, [0, 10, 3]), ("z", 10, [0, 1, 1])]) == ["z", "y", "w", "x"]


def test_r6_04_surprised_unconscious_and_immobilised_characters_lose_their_turn() -> None:
    """R6-04: unconscious, immobilised or surprised characters lose their turn."""
    encounter = setup(
        combatant("a", "red", (0, 0)),
        combatant("b", "blue", (3, 0), surprised=True),
        combatant("c", "blue", (4, 0), conditions={"unconscious": ""}),
        combatant("d", "blue", (5, 0), conditions={"immobilised": ""}),
    )
    # Rolled in ID order; b is Surprised: -1D initiative in the first round (R6-38), so two dice.
    state = start(encounter, [4, 4, 4, 5, 5, 3, 3, 3, 2, 2, 2])  # a 12, b 10, c 9, d 6
    assert state.turn_order == ["a", "b", "c", "d"] and state.active == "a"
    events = act(state, cmd(EndTurn, "a"), [2] * 12)  # round 2: b is no longer surprised and rolls 3D
    skipped = [(e.combatant, e.reason) for e in events if isinstance(e, TurnSkipped)]
    assert skipped == [("b", "surprised (R6-04, R6-38)"), ("c", "unconscious (R6-04)"), ("d", "immobilised (R6-04)")]
    assert state.round == 2


def test_r6_04_surprise_only_costs_the_first_round() -> None:
    """R6-04 with R6-38: a surprised character acts normally from the second round."""
    encounter = setup(combatant("a", "red", (0, 0)), combatant("b", "blue", (3, 0), surprised=True))
    state = start(encounter, [4, 4, 4, 6, 1, 3])  # a 12; b rolls 2D (-1D): Wild 6, 1, reroll 3 = 10
    assert state.combatants["b"].initiative == 10
    assert state.combatants["b"].conditions == {}
    events = act(state, cmd(EndTurn, "a"), [2, 2, 2, 5, 5, 5])  # b skipped; round 2: a 6, b 15 with 3D again
    assert [e.combatant for e in events if isinstance(e, TurnSkipped)] == ["b"]
    assert state.round == 2 and state.active == "b"
    assert one(events, InitiativeRolled).entries[1].total == 15
    assert any(isinstance(e, TurnStarted) and e.combatant == "b" for e in events)


def test_r6_05_an_action_before_the_declaration_declares_one_action_and_is_taken() -> None:
    """R6-05 (issue 19, the common case in one tap): an attack sent before the
    round's declaration records the declaration of one action (no penalty),
    then the attack, in one answer; a second action that round is refused, as
    after declaring one by hand; a refused first action declares nothing."""
    from firelane.engine.systems.rond6.schemas import R6ActionsDeclared, R6Attack
    from firelane.events.schemas import ActionTaken, CommandRejected, PassReaction

    state = start(setup(combatant("a", "red", (1, 1)), combatant("b", "blue", (4, 1))), [5, 5, 5, 2, 2, 2])
    refused = act(state, cmd(R6Attack, "a", target="nobody", weapon="pistol"))
    assert isinstance(refused[0], CommandRejected) and state.combatants["a"].declared_actions == 0
    events = act(state, cmd(R6Attack, "a", target="b", weapon="pistol"), [3] * 4, exact=False)
    declared = one(events, R6ActionsDeclared)
    assert (declared.count, declared.penalty_dice, declared.fate_point) == (1, 0, False)
    assert events.index(declared) == 0
    taken = one(events, ActionTaken)
    assert taken.details["declared"] == 1 and taken.details["penalty_dice"] == 0
    assert (state.combatants["a"].declared_actions, state.combatants["a"].actions_used) == (1, 1)
    act(state, PassReaction(command_id="b-pass", actor="b", window=state.window.window), [3] * 12, exact=False)
    again = act(state, cmd(R6Attack, "a", target="b", weapon="pistol"))
    assert isinstance(again[0], CommandRejected)
    assert again[0].reason == "a has 0 of its 1 declared actions left this round, needs 1 (R6-05)"
