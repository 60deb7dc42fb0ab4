"""R6-42 natural healing and R6-43 assisted healing through the real RonD6 system: R6Heal."""

from __future__ import annotations

from firelane.engine.core import SEQUENCER
from firelane.engine.systems.rond6 import SYSTEM
from firelane.engine.systems.rond6.healing import DAY, choose_heal, recovery_time
from firelane.engine.systems.rond6.aux_schemas import R6Heal, R6Healed
from firelane.events.schemas import ActionTaken, ConditionRemoved

from tests.systems.rond6.test_aux_support import act, cid, declare, fighter, of_type, rejection, start


def scene(patient_wounds: int = 0, *, patient_at=(1, 0), **settings):  # type: ignore[no-untyped-def]
    state = start([
        fighter("a", "red", (0, 0), skills={"medicine": "4D"}),
        fighter("b", "red", patient_at, skills={"fortitude": "5D"}),
        fighter("z", "blue", (20, 10)),
    ], initiative=[5, 4, 3], **settings)
    state.combatants["b"].wounds = patient_wounds
    return state


def natural(state, faces=(), **kw):  # type: ignore[no-untyped-def]
    patient = state.combatants["b"]
    recovery = recovery_time(patient.wounds, "stunned" in patient.conditions)
    kw.setdefault("rested_minutes", recovery.minutes if recovery else 0)  # exactly the recovery time: no bonus die
    return act(state, R6Heal(command_id=cid("n"), actor=SEQUENCER, patient="b", kind="natural", **kw), faces)


def assisted(state, faces=(), actor: str = "a", **kw):  # type: ignore[no-untyped-def]
    return act(state, R6Heal(command_id=cid("h"), actor=actor, patient="b", kind="assisted", **kw), faces)


# ----------------------------------------------------------------------------- R6-42


def test_r6_42_success_heals_one_wound() -> None:
    """R6-42: Fortitude 5D - 2D (two Wounds) = 3D: 15 vs Standard 15 (house default) heals 1 Wound."""
    state = scene(2)
    events = natural(state, [5, 5, 5], rested_minutes=6 * DAY)
    healed = of_type(events, R6Healed)[0]
    assert healed.roll.details["code"] == "3D" and healed.roll.total == 15 and healed.roll.target == 15
    assert (healed.kind, healed.wounds_before, healed.wounds_after, healed.rule) == ("natural", 2, 1, "R6-42")
    assert state.combatants["b"].wounds == 1


def test_r6_42_two_result_points_heal_two_never_more() -> None:
    """R6-42: 17 vs 15 (2 Result Points) heals 2 Wounds; 30 vs 15 still only 2."""
    state = scene(2)
    natural(state, [6, 5, 5, 1])  # Wild Die 6 explodes into 1: 17
    assert state.combatants["b"].wounds == 0
    state = scene(3)
    state.combatants["b"].skills["fortitude"] = "8D"  # 8D - 3D = 5D
    natural(state, [6, 6, 6, 6, 6, 2])  # 5D: 6 x 5 and the Wild Die's explosion 2 = 32
    assert state.combatants["b"].wounds == 1


def test_r6_42_failure_and_critical_failure() -> None:
    """R6-42: a failure heals nothing; a critical failure (house default: a failed test with a
    complication on the Wild Die) adds a Wound; setting critical_failure "none" turns that off."""
    state = scene(1)
    events = natural(state, [2, 3, 3, 3])
    assert of_type(events, R6Healed)[0].wounds_after == 1 and state.combatants["b"].wounds == 1
    state = scene(1)
    events = natural(state, [1, 5, 5, 5])  # the 1 and a 5 removed: 10 < 15
    healed = of_type(events, R6Healed)[0]
    assert healed.critical_failure and healed.roll.total == 10 and healed.wounds_after == 2
    assert state.combatants["b"].wounds == 2
    state = scene(1, critical_failure="none")
    events = natural(state, [1, 5, 5, 5])
    assert not of_type(events, R6Healed)[0].critical_failure and state.combatants["b"].wounds == 1


def test_r6_42_recovery_time_rest_and_long_rest() -> None:
    """R6-42: not before 3 days per Wound; one level harder without rest; +1D after twice the time."""
    state = scene(2)
    assert rejection(natural(state, rested_minutes=5 * DAY)) == (
        "wounded needs 6 days (2 Wound(s) x 3 days) of recovery (8640 minutes), only 7200 passed"
    )
    events = natural(state, [5, 5, 5], rested_minutes=6 * DAY, rested=False)
    assert of_type(events, R6Healed)[0].roll.target == 20
    state = scene(2)
    events = natural(state, [5, 5, 5, 5], rested_minutes=12 * DAY)
    roll = of_type(events, R6Healed)[0].roll
    assert roll.details["code"] == "4D" and roll.total == 20
    assert {"source": "rested twice the recovery time", "rule": "R6-42", "dice": 1} in roll.details["dice_modifiers"]


def test_r6_42_stunned_recovers_after_a_minute() -> None:
    """R6-42: Stunned (no Wound) recovers after 1 minute; a success removes Stunned."""
    state = scene(0)
    state.combatants["b"].conditions["stunned"] = ""
    events = natural(state, [4, 4, 4, 4], rested_minutes=1)  # 5D, Stunned is physical -1D: 4D = 16
    assert of_type(events, R6Healed)[0].stunned_removed
    assert of_type(events, ConditionRemoved)[0].condition == "stunned"
    assert "stunned" not in state.combatants["b"].conditions


def test_r6_42_only_the_gm_orders_natural_healing_and_only_the_hurt_heal() -> None:
    """R6-42: natural healing is the GM's (sequencer's) command; the healthy and the dead cannot heal."""
    state = scene(1)
    declare(state, "a", 1)
    assert rejection(act(state, R6Heal(command_id=cid(), actor="a", patient="b", kind="natural"))) == (
        "natural healing takes days: only the GM/sequencer orders it"
    )
    state = scene(0)
    assert rejection(natural(state)) == "b is neither stunned nor wounded: nothing to heal"
    state = scene(5)
    state.combatants["b"].dead = True
    assert rejection(natural(state)) == "b is dead; healing cannot help"
    assert rejection(act(state, R6Heal(command_id=cid(), actor=SEQUENCER, patient="b", kind="magic"))) == (
        "unknown healing 'magic'; use 'natural' or 'assisted'"
    )


# ----------------------------------------------------------------------------- R6-43


def test_r6_43_medicine_at_standard_heals_one_wound() -> None:
    """R6-43: 1 Wound is Standard (15); Medicine 4D rolls 15: heals 1; an Action in combat."""
    state = scene(1)
    declare(state, "a", 1)
    events = assisted(state, [4, 4, 4, 3])
    healed = of_type(events, R6Healed)[0]
    assert (healed.roll.total, healed.roll.target, healed.roll.details["skill"]) == (15, 15, "medicine")
    assert (healed.kind, healed.healer, healed.wounds_after, healed.rule) == ("assisted", "a", 0, "R6-43")
    assert of_type(events, ActionTaken)[0].action == "assisted_healing"
    assert state.combatants["b"].wounds == 0


def test_r6_43_result_points_heal_two_and_each_wound_raises_the_difficulty() -> None:
    """R6-43: 2 Wounds is Moderate (20); 21 (1 Result Point) heals 2."""
    state = scene(2)
    declare(state, "a", 1)
    events = assisted(state, [5, 5, 5, 6])
    healed = of_type(events, R6Healed)[0]
    assert healed.roll.target == 20 and healed.roll.total == 21 and healed.wounds_after == 0


def test_r6_43_once_per_injury_tracking() -> None:
    """R6-43: once per injury (house default: after a success every remaining Wound counts as treated)."""
    state = scene(2)
    declare(state, "a", 2)  # Medicine 4D - 1D = 3D
    events = assisted(state, [2, 2, 2])  # 6 < 20: failed, not counted
    assert of_type(events, R6Healed)[0].wounds_after == 2 and state.combatants["b"].aux.get("treated_wounds", 0) == 0
    events = assisted(state, [6, 6, 6, 2])  # 6 + 6 + 6 + 2 (explosion) = 20: heals 1
    assert of_type(events, R6Healed)[0].treated_wounds == 1
    assert state.combatants["b"].wounds == 1 and state.combatants["b"].aux["treated_wounds"] == 1
    state.combatants["a"].declared_actions = 3
    assert rejection(assisted(state)) == "b has already had its successful assisted healing for these injuries (R6-43: once per injury)"
    state.combatants["b"].wounds = 2  # a new Wound
    events = assisted(state, [3, 3])  # three actions declared: 4D - 2D = 2D
    assert of_type(events, R6Healed)[0].roll.target == 20


def test_r6_43_stunned_patient_is_easy() -> None:
    """R6-43: a Stunned patient (no Wound) is Easy (10); success removes Stunned."""
    state = scene(0)
    state.combatants["b"].conditions["stunned"] = ""
    declare(state, "a", 1)
    events = assisted(state, [3, 3, 2, 2])
    assert of_type(events, R6Healed)[0].roll.target == 10
    assert "stunned" not in state.combatants["b"].conditions


def test_r6_43_reach_and_who_may_heal() -> None:
    """R6-43: in combat the patient must be within 1 Space; the GM may name a healer between fights."""
    state = scene(1, patient_at=(3, 0))
    declare(state, "a", 1)
    assert rejection(assisted(state)) == "b is not within 1 Space(s) of a"
    assert rejection(act(state, R6Heal(command_id=cid(), actor=SEQUENCER, patient="b"))) == (
        "the GM/sequencer names the healer of an assisted healing"
    )
    events = act(state, R6Heal(command_id=cid(), actor=SEQUENCER, patient="b", healer="a"), [4, 4, 4, 3])
    assert of_type(events, R6Healed)[0].wounds_after == 0 and not of_type(events, ActionTaken)
    state = scene(1)
    assert rejection(act(state, R6Heal(command_id=cid(), actor="z", patient="b"))).startswith("it is not z's turn")


def test_r6_43_healing_below_incapacitated_revives() -> None:
    """R6-43 (house default healing_revives): a patient knocked out at 3 Wounds and healed to 2 is back in the fight."""
    state = scene(3)
    state.combatants["b"].conditions["unconscious"] = ""
    state.combatants["b"].out_of_fight = True
    declare(state, "a", 1)
    events = assisted(state, [5, 5, 5, 5])  # Difficult 25 for 3 Wounds: 4D = 20 fails
    assert of_type(events, R6Healed)[0].roll.target == 25 and state.combatants["b"].out_of_fight
    state.combatants["a"].declared_actions = 2
    events = assisted(state, [6, 6, 6, 6, 1])  # 4D - 1D = 3D: 6 + 6 + 6 + 6 + 1 = 25
    healed = of_type(events, R6Healed)[0]
    assert healed.revived and healed.wounds_after == 2
    assert not state.combatants["b"].out_of_fight and "unconscious" not in state.combatants["b"].conditions


def test_r6_43_ai_helper_treats_the_most_wounded_neighbour() -> None:
    """R6-43 AI helper: a medic treats the most wounded untreated ally within reach."""
    state = scene(1)
    command = choose_heal(SYSTEM, state, "a")
    assert command is not None and command.patient == "b" and command.kind == "assisted"
    state.combatants["b"].aux["treated_wounds"] = 1
    assert choose_heal(SYSTEM, state, "a") is None
    assert choose_heal(SYSTEM, state, "b") is None  # no Medicine on its sheet


def test_r6_43_successful_treatment_of_wounds_also_ends_stunned() -> None:
    """R6-43 (house default): a Stunned and wounded patient treated successfully loses a Wound and Stunned."""
    state = scene(1)
    state.combatants["b"].conditions["stunned"] = ""
    declare(state, "a", 1)
    events = assisted(state, [4, 4, 4, 3])
    healed = of_type(events, R6Healed)[0]
    assert healed.roll.target == 15 and healed.wounds_after == 0 and healed.stunned_removed
    assert "stunned" not in state.combatants["b"].conditions
