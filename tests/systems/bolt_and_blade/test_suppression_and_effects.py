"""Bolt & Blade: cover and Take Cover, Suppress, Pinned, Aim, Bonus Actions,
temporary effects and marks, rounds and Reactions (BB-CMB-01, -04, -18..23, -30)."""

from __future__ import annotations

from firelane.engine.core import SEQUENCER
from firelane.engine.dice import FixedDice
from firelane.engine.systems.bolt_and_blade import SYSTEM
from firelane.engine.systems.bolt_and_blade.schemas import BBAim, BBMark, BBMarkMoved, BBRally, BBSuppress, BBTakeCover
from firelane.events.schemas import (
    ActionTaken,
    AttackResolved,
    ConditionApplied,
    ConditionRemoved,
    CoverFeature,
    InitiativeRolled,
    Moved,
    ReactionWindowOpened,
    StartEncounter,
    StateAdjusted,
)
from firelane.events.schemas import (
    TestRolled as _Tested,
)

from .helpers import act, arena, attack, cid, claim, end, fighter, knife_only, move, of, one, pass_, rejected, sheet, start

EAST = [(1, 0)]
WEST = [(-1, 0)]


# ---------------------------------------------------------------- BB-CMB-01


def test_initiative_and_reaction_regained_at_own_turn() -> None:
    """BB-CMB-01: d20 + Agility modifier order (house default, once); a Reaction returns at the start of its owner's turn."""
    setup = arena([fighter("m", "red", (1, 5), **knife_only(attributes={"agility": 16})), fighter("w", "blue", (10, 5), **sheet()), fighter("v", "blue", (10, 9), **sheet())])
    state = SYSTEM.initial_state()
    events = SYSTEM.decide(state, StartEncounter(command_id="s", actor=SEQUENCER, setup=setup, seed_commitment=""), FixedDice([10, 12, 13]))  # sorted ids: m, v, w
    for event in events:
        SYSTEM.evolve(state, event)
    rolled = one(events, InitiativeRolled)
    assert {e.combatant: e.total for e in rolled.entries} == {"m": 13, "v": 12, "w": 13}
    assert rolled.order == ["m", "w", "v"]  # m wins the tie on Agility modifier
    act(state, move("m", (1, 6)))
    act(state, claim("w", 1, "reactive_fire"))
    act(state, claim("v", 1, "reactive_fire"), [2, 3])  # w (initiative 13) resolves first
    assert state.combatants["w"].reaction_used and state.combatants["v"].reaction_used
    act(state, end("m"))
    # w's turn gives its Reaction back (BB-CMB-01), but it was spent this round (BB-CMB-03).
    assert state.active == "w" and state.combatants["w"].reaction_used and state.combatants["v"].reaction_used
    act(state, end("w"))
    act(state, end("v"))
    assert state.round == 2 and state.active == "m"
    assert not state.combatants["w"].reaction_used and not state.combatants["v"].reaction_used


def test_bb_cmb_03_a_reaction_spent_before_your_turn_is_not_regained_in_that_round() -> None:
    """BB-CMB-03 with BB-CMB-01: one Reaction per round, regained at the start of your turn.
    w fires at m1 in round 1 before its own turn; its turn in round 1 does not make it
    usable again in round 1 (m2 crosses its lane after w's turn: no offer); round 2 does."""
    setup = arena([fighter("m1", "red", (1, 5), **knife_only()), fighter("w", "blue", (10, 5), **sheet()), fighter("m2", "red", (1, 9), **knife_only())])
    state = start(setup, ["m1", "w", "m2"])
    act(state, move("m1", (1, 6)))
    act(state, claim("w", 1, "reactive_fire"), [2])  # a miss
    assert state.combatants["w"].reaction_used
    act(state, end("m1"))
    assert state.active == "w" and state.combatants["w"].reaction_used
    act(state, end("w"))
    events = act(state, move("m2", (1, 8), (1, 7)))
    assert not of(events, ReactionWindowOpened) and state.combatants["m2"].position == (1, 7)
    act(state, end("m2"))
    assert state.round == 2 and state.active == "m1" and not state.combatants["w"].reaction_used
    events = act(state, move("m1", (1, 5)))
    assert [r.combatant for r in one(events, ReactionWindowOpened).reactors] == ["w"]


def test_bb_cmb_01_a_reaction_spent_after_your_turn_waits_for_your_next_turn() -> None:
    """BB-CMB-01: a Reaction spent after your turn comes back at the start of your next
    turn, not when the next round starts: w fires at m2 after its turn in round 1; in
    round 2 m1 (first) crosses its lane with no offer; after w's turn starts, m2 gets one."""
    setup = arena([fighter("m1", "red", (1, 5), **knife_only()), fighter("w", "blue", (10, 5), **sheet()), fighter("m2", "red", (1, 9), **knife_only())])
    state = start(setup, ["m1", "w", "m2"])
    act(state, end("m1"))
    act(state, end("w"))
    act(state, move("m2", (1, 8)))
    act(state, claim("w", 1, "reactive_fire"), [2])
    act(state, end("m2"))
    assert state.round == 2 and state.combatants["w"].reaction_used
    assert not of(act(state, move("m1", (1, 6))), ReactionWindowOpened)
    act(state, end("m1"))
    assert state.active == "w" and not state.combatants["w"].reaction_used
    act(state, end("w"))
    assert [r.combatant for r in one(act(state, move("m2", (1, 7))), ReactionWindowOpened).reactors] == ["w"]


# ---------------------------------------------------------------- BB-CMB-04, -30


def cover_duel(cover: list[CoverFeature], attacker_at: tuple[int, int], **settings):
    setup = arena([fighter("a", "red", attacker_at, **sheet()), fighter("b", "blue", (6, 6), **knife_only())], cover=cover, **settings)
    return start(setup, ["a", "b"])


def test_directional_cover_light_heavy_total() -> None:
    """BB-CMB-04: cover only protects against attackers on its far side: light +2, heavy +5, total untargetable."""
    light = [CoverFeature(x=6, y=6, level="light", facing=WEST)]
    front = one(act(cover_duel(light, (1, 6)), attack("a", "b"), [9]), AttackResolved)
    assert front.defense.total == 12 and ("light cover", "BB-CMB-04", 2) in [(m.source, m.rule, m.value) for m in front.defense.modifiers]
    assert front.roll.total == 11 and not front.hit
    flank = one(act(cover_duel(light, (6, 1)), attack("a", "b"), [9, 1]), AttackResolved)  # from the north: no cover
    assert flank.defense.total == 10 and flank.hit
    behind = one(act(cover_duel(light, (11, 6)), attack("a", "b"), [9, 1]), AttackResolved)
    assert behind.defense.total == 10
    heavy = one(act(cover_duel([CoverFeature(x=6, y=6, level="heavy", facing=WEST)], (1, 6)), attack("a", "b"), [12]), AttackResolved)
    assert heavy.defense.total == 15 and not heavy.hit
    state = cover_duel([CoverFeature(x=6, y=6, level="total", facing=WEST)], (1, 6))
    assert rejected(act(state, attack("a", "b"))) == "b has total cover against a and cannot be targeted (BB-CMB-04); a's lasgun has no target it can attack from here"
    custom = one(act(cover_duel(light, (1, 6), cover_bonus={"light": 3, "heavy": 6}), attack("a", "b"), [9]), AttackResolved)
    assert custom.defense.total == 13


def test_take_cover_improves_one_step() -> None:
    """BB-CMB-30: none -> light -> heavy; heavy -> total only if the cover fully blocks line of sight."""
    open_ground = cover_duel([], (1, 6), )
    act(open_ground, end("a"))
    act(open_ground, BBTakeCover(command_id=cid(), actor="b"))
    act(open_ground, end("b"))
    hunkered = one(act(open_ground, attack("a", "b"), [9]), AttackResolved)  # hunkered down: light cover from anywhere
    assert hunkered.defense.total == 12 and not hunkered.hit
    light = cover_duel([CoverFeature(x=6, y=6, level="light", facing=WEST)], (1, 6))
    act(light, end("a"))
    events = act(light, BBTakeCover(command_id=cid(), actor="b"))
    assert one(events, ActionTaken).details == {"from": "light", "to": "heavy"}
    act(light, end("b"))
    assert one(act(light, attack("a", "b"), [12]), AttackResolved).defense.total == 15
    heavy = cover_duel([CoverFeature(x=6, y=6, level="heavy", facing=WEST)], (1, 6))
    act(heavy, end("a"))
    assert rejected(act(heavy, BBTakeCover(command_id=cid(), actor="b"))) == "the heavy cover at (6, 6) cannot be improved: it does not fully block line of sight (BB-CMB-30)"
    tall = cover_duel([CoverFeature(x=6, y=6, level="heavy_tall", facing=WEST)], (1, 6))
    act(tall, end("a"))
    act(tall, BBTakeCover(command_id=cid(), actor="b"))
    act(tall, end("b"))
    assert rejected(act(tall, attack("a", "b"))) == "b has total cover against a and cannot be targeted (BB-CMB-04); a's lasgun has no target it can attack from here"
    act(tall, end("a"))
    act(tall, move("b", (6, 7)))
    assert not tall.combatants["b"].taking_cover  # moving gives the position up


# ---------------------------------------------------------------- BB-CMB-18..20


def suppress_setup(weapon: str = "heavy stubber", **sheet_fields):
    ready = weapon if isinstance(weapon, str) else weapon["name"]  # type: ignore[index]
    gunner = sheet(attributes={"agility": 14}, weapons=[weapon, "combat knife"], ready_weapon=ready, **sheet_fields)
    setup = arena([
        fighter("s", "red", (1, 5), **gunner),
        fighter("t1", "blue", (6, 5), **sheet()),
        fighter("t2", "blue", (7, 6), **knife_only(attributes={"willpower": 12})),
        fighter("t3", "blue", (9, 5), **knife_only()),
    ])
    return start(setup, ["s", "t1", "t2", "t3"])


def test_suppress_pins_on_a_failed_willpower_save() -> None:
    """BB-CMB-18: Willpower save DC 8 + proficiency + Agility modifier for everyone in a 10-ft area; failure Pins until the start of your next turn."""
    state = suppress_setup()
    events = act(state, BBSuppress(command_id=cid(), actor="s", area=[(6, 5), (7, 5), (6, 6), (7, 6)]), [11, 11])
    saves = of(events, _Tested)
    assert [(s.combatant, s.roll.total, s.roll.target, s.success) for s in saves] == [("t1", 11, 12, False), ("t2", 12, 12, True)]
    pinned = one(events, ConditionApplied)
    assert (pinned.combatant, pinned.condition, pinned.until, pinned.rule) == ("t1", "pinned", "start_of_turn:s", "BB-CMB-18")
    assert one(events, ActionTaken).details["dc"] == 12 and "t3" not in [s.combatant for s in saves]
    for cid_ in ("s", "t1", "t2", "t3"):
        act(state, end(cid_))
    assert "pinned" not in state.combatants["t1"].conditions  # expired as s's turn started


def test_suppress_validation() -> None:
    """BB-CMB-18: Ammo, Burst or Heavy trait; a 10-ft area; within normal range."""
    state = suppress_setup()
    assert rejected(act(state, BBSuppress(command_id=cid(), actor="s", area=[(6, 5), (8, 5)]))) == "the area must fit in a 10-ft box (BB-CMB-18)"
    assert rejected(act(state, BBSuppress(command_id=cid(), actor="s", area=[(18, 5)]))) == "(18, 5) is beyond heavy stubber's normal range of 80 ft (BB-CMB-18)"
    rifle = {"name": "hunting rifle", "kind": "ranged", "category": "basic", "range": [60, 180], "damage": "1d10", "traits": []}
    state = suppress_setup(weapon=rifle)  # type: ignore[arg-type]
    assert rejected(act(state, BBSuppress(command_id=cid(), actor="s", area=[(6, 5)]))) == "hunting rifle has no Ammo, Burst or Heavy trait and cannot Suppress (BB-CMB-18)"


def test_pinned_attacks_with_disadvantage_and_no_reactive_fire() -> None:
    """BB-CMB-19: Pinned: Disadvantage on attacks and no Reactive Fire."""
    state = suppress_setup()
    act(state, BBSuppress(command_id=cid(), actor="s", area=[(6, 5), (7, 5), (6, 6), (7, 6)]), [3, 15])
    # s moves through t1's lane: t1 is Pinned, so it is not offered Reactive Fire.
    events = act(state, move("s", (1, 6)))
    assert not of(events, ReactionWindowOpened)
    act(state, end("s"))
    assert one(act(state, attack("t1", "s")), ReactionWindowOpened).trigger == "ranged_attack"
    shot = one(act(state, pass_("s", 1), [16, 7]), AttackResolved)  # s lets it come
    assert shot.roll.details["disadvantage"] == ["attacker is Pinned (BB-CMB-19)"]
    assert shot.roll.dice[shot.roll.kept[0]].face == 7 and shot.roll.total == 11 and not shot.hit  # 7 + 2 + 2 (s is Exposed) < Defense 12


def test_pinned_move_cost_and_rally() -> None:
    """BB-CMB-19: a Pinned creature pays double to cross open ground, and may Rally with its Action."""
    state = suppress_setup()
    act(state, BBSuppress(command_id=cid(), actor="s", area=[(6, 5), (7, 5), (6, 6), (7, 6)]), [3, 15])
    act(state, end("s"))
    events = act(state, move("t1", (6, 4)))  # open ground while Pinned: 10 ft; s may fire
    assert one(events, Moved).cost == 10
    act(state, claim("s", 1, "reactive_fire"))  # t1, lasgun ready, may Return Fire (BB-CMB-14)
    act(state, pass_("t1", 2), [1])  # it passes; the shot misses
    events = act(state, move("t1", (6, 3), (6, 2)))
    assert one(events, Moved).cost == 20 and state.combatants["t1"].movement_used_ft == 30
    assert rejected(act(state, move("t1", (6, 1)))) == "the path costs 10 ft but t1 has only 0 ft of movement left"
    events = act(state, BBRally(command_id=cid(), actor="t1"))
    assert one(events, ConditionRemoved).reason == "rallied" and "pinned" not in state.combatants["t1"].conditions
    assert rejected(act(state, BBRally(command_id=cid(), actor="t1"))) == "t1 is not Pinned"


def test_suppress_spends_three_rounds_and_las_runs_hot() -> None:
    """BB-CMB-20: Suppress spends 3 rounds; a las weapon spends 3 charges and cannot Reactive Fire until the start of your next turn."""
    state = suppress_setup()
    act(state, BBSuppress(command_id=cid(), actor="s", area=[(9, 5)]), [15])
    assert state.combatants["s"].ammo["heavy stubber"] == 57
    state = suppress_setup(weapon="lasgun")
    events = act(state, BBSuppress(command_id=cid(), actor="s", area=[(9, 5)]), [15])
    assert [e.changes for e in of(events, StateAdjusted)] == [{"ammo": {"lasgun": 27}}]
    hot = one(events, ConditionApplied)
    assert (hot.condition, hot.until, hot.rule) == ("las_overheated", "start_of_turn:s", "BB-CMB-20")
    act(state, end("s"))
    events = act(state, move("t1", (6, 4)))  # through s's fire lane: not offered, the pack runs hot
    assert not of(events, ReactionWindowOpened)
    for cid_ in ("t1", "t2", "t3"):
        act(state, end(cid_))
    assert "las_overheated" not in state.combatants["s"].conditions
    state.combatants["s"].ammo["lasgun"] = 2
    assert rejected(act(state, BBSuppress(command_id=cid(), actor="s", area=[(9, 5)]))) == "Suppress needs 3 rounds; lasgun has 2 (BB-CMB-20)"


# ---------------------------------------------------------------- BB-CMB-21..23


def aim_duel(**settings):
    setup = arena([fighter("a", "red", (1, 5), **sheet(features=["Mark the Guilty"])), fighter("b", "blue", (6, 5), **knife_only()), fighter("c", "blue", (6, 8), **knife_only())], cover=[CoverFeature(x=1, y=6, level="light", facing=EAST)], **settings)
    return start(setup, ["a", "b", "c"])


def test_aim_bonus_action_plus_two_on_next_ranged_attack() -> None:
    """BB-CMB-21: Aim (Bonus Action, not after moving): +2 on the next ranged attack this turn."""
    state = aim_duel()
    events = act(state, BBAim(command_id=cid(), actor="a"))
    assert one(events, ActionTaken).slot == "bonus" and not state.combatants["a"].action_used
    events = act(state, attack("a", "b"), [4, 2])  # 4 + 2 + 2 (b is Exposed) + 2 (Aim) = 10
    hit = one(events, AttackResolved)
    assert ("Aim", "BB-CMB-21", 2) in [(m.source, m.rule, m.value) for m in hit.roll.modifiers] and hit.roll.total == 10 and hit.hit
    assert one(events, ConditionRemoved).reason == "used by the attack"
    state = aim_duel()
    act(state, move("a", (1, 4)))
    assert rejected(act(state, BBAim(command_id=cid(), actor="a"))) == "a has moved this turn and cannot Aim (BB-CMB-21)"


def test_aim_gm_option_after_minor_movement_in_cover_and_expiry() -> None:
    """BB-CMB-21: the GM option allows Aim after 5 ft of movement into cover; unused Aim ends with the turn."""
    state = aim_duel(aim_after_minor_move_in_cover=True)
    act(state, move("a", (1, 6)))
    act(state, BBAim(command_id=cid(), actor="a"))
    events = act(state, end("a"))
    assert [(e.condition, e.reason) for e in of(events, ConditionRemoved)] == [("aiming", "expired (end_of_turn of a)")]


def test_one_bonus_action_per_turn_and_reactions_do_not_spend_it() -> None:
    """BB-CMB-22: one Bonus Action per turn, never converted into an Action; spending the Reaction never spends it."""
    state = aim_duel()
    act(state, BBAim(command_id=cid(), actor="a"))
    assert rejected(act(state, BBMark(command_id=cid(), actor="a", target="b", mark="Mark the Guilty"))) == "a has already used its Bonus Action this turn (one per turn, BB-CMB-22)"
    act(state, attack("a", "b"), [2])
    assert rejected(act(state, attack("a", "c"))) == "a has already used its Action this turn"  # the unused... bonus does not become an Action
    act(state, end("a"))
    act(state, move("b", (6, 4)))
    act(state, claim("a", 1, "reactive_fire"), [1])
    assert state.combatants["a"].reaction_used and not state.combatants["b"].bonus_used


def test_temporary_effects_and_single_bearer_marks() -> None:
    """BB-CMB-23: "until your next attack" is consumed; turn-boundary effects expire; a mark has one bearer."""
    state = aim_duel()
    events = act(state, BBMark(command_id=cid(), actor="a", target="b", mark="Mark the Guilty"))
    assert one(events, BBMarkMoved).bearer == "b" and "mark:Mark the Guilty" in state.combatants["b"].conditions
    roll = one(act(state, attack("a", "b"), [3]), AttackResolved).roll  # 3 + 2 + 2 (b is Exposed) + 2 (the mark) = 9: a miss
    assert ("Mark the Guilty on b", "BB-CMB-23", 2) in [(m.source, m.rule, m.value) for m in roll.modifiers] and roll.total == 9
    for cid_ in ("a", "b", "c"):
        act(state, end(cid_))
    events = act(state, BBMark(command_id=cid(), actor="a", target="c", mark="Mark the Guilty"))
    removed = one(events, ConditionRemoved)
    assert (removed.combatant, removed.condition) == ("b", "mark:Mark the Guilty")
    assert one(events, BBMarkMoved).previous == "b" and state.combatants["a"].marks == {"Mark the Guilty": "c"}
    assert "mark:Mark the Guilty" in state.combatants["c"].conditions and "mark:Mark the Guilty" not in state.combatants["b"].conditions
    assert rejected(act(state, BBMark(command_id=cid(), actor="b", target="a", mark="Mark the Guilty"))) == "it is not b's turn (active: a)"
