"""Campaign rules, pure: the aftermath each system writes back, and its
downtime (RonD6 R6-42/R6-43 with R6-21/R6-22, d100-zones D100Z-14 and its
house defaults, the Bolt & Blade and d100-degrees house defaults), with the
dice fixed face by face."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from firelane.engine.campaign import (
    CampaignError,
    CampaignState,
    DowntimeRequest,
    aftermath,
    create_character,
    evolve,
    finish_downtime,
    resolve_setup,
    start_downtime,
)
from firelane.engine.campaign_rules import Patient, RestRequest, campaign_rules
from firelane.engine.dice import FixedDice, SeededDice
from firelane.engine.registry import demo_setup, get_system
from firelane.engine.systems.bolt_and_blade.state import BoltAndBladeCombatant
from firelane.engine.systems.d100_degrees.state import D100DCombatant
from firelane.engine.systems.rond6.state import RonD6Combatant
from firelane.events.campaign_schemas import AftermathRecorded, CharacterRested, DowntimeEnded
from firelane.events.schemas import CombatantSetup, EncounterSetup

RONDE6 = campaign_rules("rond6")
ZONES = campaign_rules("d100-zones")
BOLT = campaign_rules("bolt-and-blade")
DEGREES = campaign_rules("d100-degrees")

R6_SHEET: dict[str, Any] = {
    "attributes": {"Agility": "3D", "Strength": "2D", "Perception": "3D", "Stamina": "3D", "Presence": "2D",
                   "Will Power": "3D", "Knowledge": "3D"},
    "skills": {"fortitude": "5D", "medicine": "4D", "firearms": "4D"},
    "weapons": [{"id": "pistol", "name": "pistol", "kind": "ranged", "damage": "4D", "ranges": [5, 15, 30], "capacity": 12}],
    "reloads": {"pistol": 2},
}


def r6(character: str = "p", *, rested_days: int = 0, **fields: Any) -> Patient:
    sheet = {**R6_SHEET, **fields}
    return Patient(character=character, name=character.title(), sheet=sheet, base_sheet=dict(R6_SHEET), rested_days=rested_days)


def rest(rules: Any, patients: list[Patient], faces: list[int], *, days: int = 1, healer: Patient | None = None,
         strenuous: bool = False, resupply: bool = False) -> list[Any]:
    dice = FixedDice(faces)
    results = rules.rest(patients, RestRequest(days=days, strenuous=strenuous, resupply=resupply, healer=healer), dice)
    assert dice.remaining == 0, f"{dice.remaining} fixed faces were not rolled"
    return results


# ----------------------------------------------------------------------------- RonD6 R6-42


def test_r6_42_natural_healing_waits_for_the_recovery_time_which_adds_up_across_rests() -> None:
    """R6-42: 2 Wounds need 3 days per Wound; 5 days is not enough (no die is rolled);
    one more day reaches 6: Stamina: Fortitude 5D less 2D for the Wounds (R6-21) at
    Standard 15; 4+5+6 = 15 heals 1 Wound and the count starts again."""
    (first,) = rest(RONDE6, [r6(wounds=2)], [], days=5)
    assert (first.sheet["wounds"], first.rested_days, first.rolls) == (2, 5, [])
    assert "needs 6 days (2 Wound(s) x 3 days) of rest, 5 day(s) so far (R6-42)" in first.notes[0]
    (second,) = rest(RONDE6, [r6(wounds=2, rested_days=5)], [4, 5, 6], days=1)
    (roll,) = second.rolls
    assert (roll.rule, roll.details["code"], roll.total, roll.target, roll.success) == ("R6-42", "3D", 15, 15, True)
    assert (second.sheet["wounds"], second.rested_days) == (1, 0)
    assert "healed 1 Wound, Wounds 2 -> 1 (R6-42)" in second.notes[-1]


def test_r6_42_resting_twice_the_recovery_time_adds_1d_and_two_result_points_heal_two_wounds() -> None:
    """R6-42: 12 days for 2 Wounds is twice the recovery time: +1D (5D - 2D + 1D = 4D);
    5+5+5+2 = 17 against 15 is 2 Result Points: heal 2 Wounds."""
    (result,) = rest(RONDE6, [r6(wounds=2)], [5, 5, 5, 2], days=12)
    (roll,) = result.rolls
    assert (roll.details["code"], roll.total, roll.details["result_points"]) == ("4D", 17, 2)
    assert {"source": "rested twice the recovery time", "rule": "R6-42", "dice": 1} in roll.details["dice_modifiers"]
    assert result.sheet["wounds"] == 0 and "(+1D: rested twice as long)" in result.notes[-1]


def test_r6_42_never_more_than_two_wounds_and_incapacitated_needs_two_weeks() -> None:
    """R6-42: Incapacitated (3 Wounds) recovers over 2 weeks; the -3D (R6-21) leaves
    2D; the Wild Die explodes 6, 6, 1 (13) + 6 = 19 vs 15, 4 Result Points, yet only
    2 Wounds heal; the Incapacitated condition goes with them."""
    (result,) = rest(RONDE6, [r6(wounds=3, conditions={"incapacitated": ""})], [6, 6, 6, 1], days=14)
    (roll,) = result.rolls
    assert (roll.details["code"], roll.total, roll.details["result_points"]) == ("2D", 19, 4)
    assert result.sheet["wounds"] == 1 and "conditions" not in result.sheet


def test_r6_42_a_strenuous_rest_tests_one_difficulty_level_higher_and_gets_no_bonus_die() -> None:
    """R6-42: travel during the recovery time: Moderate 20 instead of Standard 15, and
    no +1D even after twice the time; 5+5+5+4 = 19 fails: no recovery."""
    (result,) = rest(RONDE6, [r6(wounds=1)], [5, 5, 5, 4], days=6, strenuous=True)
    (roll,) = result.rolls
    assert (roll.details["code"], roll.target, roll.success) == ("4D", 20, False)
    assert result.sheet["wounds"] == 1 and "no recovery" in result.notes[-1]
    assert "one Difficulty Level higher: strenuous" in result.notes[-1]


def test_r6_42_a_critical_failure_adds_a_wound() -> None:
    """R6-42 Critical Failure (house default: a failure with a complication on the
    Wild Die, R6-01): the Wild Die's 1 and the highest other die go; 2+2 = 4 fails;
    the character suffers one more Wound."""
    (result,) = rest(RONDE6, [r6(wounds=1)], [1, 3, 2, 2], days=3)
    (roll,) = result.rolls
    assert (roll.total, roll.success, roll.details["complication"]) == (4, False, True)
    assert result.sheet["wounds"] == 2 and "a Critical Failure: one more Wound" in result.notes[-1]


# ----------------------------------------------------------------------------- RonD6 R6-43


def test_r6_43_assisted_healing_standard_plus_a_level_per_further_wound() -> None:
    """R6-43: 2 Wounds are Standard + 1 level = Moderate 20; the healer's Medicine 4D
    rolls 5+5+5+5 = 20: heals 1 Wound, which counts as treated."""
    healer = r6("doc")
    (result,) = rest(RONDE6, [r6(wounds=2)], [5, 5, 5, 5], healer=healer)
    (roll,) = result.rolls
    assert (roll.rule, roll.target, roll.total, roll.details["skill"]) == ("R6-43", 20, 20, "medicine")
    assert result.sheet["wounds"] == 1 and result.sheet["aux"] == {"treated_wounds": 1}
    assert "assisted healing by doc: Wounds 2 -> 1 (R6-43)" in result.notes


def test_r6_43_one_result_point_heals_two_wounds() -> None:
    """R6-43: 5+5+5+6 = 21 against 20 is 1 Result Point: the patient heals 2 Wounds."""
    (result,) = rest(RONDE6, [r6(wounds=2)], [5, 5, 5, 6], healer=r6("doc"))
    assert result.sheet["wounds"] == 0 and "aux" not in result.sheet


def test_r6_43_once_per_injury_and_a_new_wound_makes_the_patient_eligible_again() -> None:
    """R6-43: a patient whose Wound was already treated gets no second attempt (no
    die is rolled); a Wound from a later fight is a new injury."""
    treated = r6(wounds=1, aux={"treated_wounds": 1})
    (result,) = rest(RONDE6, [treated], [], healer=r6("doc"))
    assert result.sheet["wounds"] == 1 and result.rolls == []
    fought = RonD6Combatant(id="p", name="P", side="x", wounds=2, aux={"treated_wounds": 1})
    sheet, _notes = RONDE6.aftermath(treated.sheet, fought)
    assert sheet["wounds"] == 2 and sheet["aux"] == {"treated_wounds": 1}
    (again,) = rest(RONDE6, [msgspec.structs.replace(treated, sheet=sheet)], [5, 5, 5, 5], healer=r6("doc"))
    assert again.sheet["wounds"] == 1


def test_r6_43_a_healer_does_not_treat_itself_and_a_dying_healer_is_refused() -> None:
    """R6-43: "another character" provides the treatment."""
    doc = r6("doc", wounds=1)
    (result,) = rest(RONDE6, [doc], [], healer=doc)
    assert result.rolls == [] and result.sheet["wounds"] == 1
    with pytest.raises(ValueError, match="healer 'doc' is Mortally Wounded"):
        rest(RONDE6, [r6(wounds=1)], [], healer=r6("doc", wounds=4))


# ----------------------------------------------------------------------------- RonD6 R6-21, R6-22


def test_r6_21_mortally_wounded_rolls_strength_each_minute_and_dies_without_a_healer() -> None:
    """R6-21: at the end of each minute Strength (2D) against the minutes since the
    wound: minute 1 rolls 3+1 = 4 (lives); minute 2 rolls a complication, 0 < 2: dead."""
    (result,) = rest(RONDE6, [r6(wounds=4, conditions={"mortally_wounded": "", "unconscious": ""})], [3, 1, 1, 2])
    assert [roll.target for roll in result.rolls] == [1, 2]
    assert result.sheet["wounds"] == 5 and result.sheet["dead"] is True and result.sheet["conditions"] == {"dead": ""}
    assert RONDE6.status(result.sheet) == "dead"
    assert "died of the mortal wound at minute 2: Strength 0 < 2 (R6-21)" in result.notes


def test_r6_21_a_healer_saves_a_mortally_wounded_character_with_r6_43() -> None:
    """R6-21 and R6-43: in the first minute the healer's Medicine 4D against Very
    Difficult 30 (Standard + 3 levels): 6 (exploding 6, 3) + 5+5+5 = 30 heals 1 Wound:
    3 Wounds, Incapacitated, no longer dying; no Strength roll is needed."""
    patient = r6(wounds=4, conditions={"mortally_wounded": "", "unconscious": ""}, mortal_minutes=2)
    (result,) = rest(RONDE6, [patient], [6, 5, 5, 5, 6, 3], healer=r6("doc"))
    (roll,) = result.rolls
    assert (roll.rule, roll.target, roll.total) == ("R6-43", 30, 30)
    assert result.sheet["wounds"] == 3 and result.sheet["conditions"] == {"incapacitated": ""}
    assert "mortal_minutes" not in result.sheet and RONDE6.status(result.sheet) == "down"
    assert "is Incapacitated at 3 Wounds (R6-21)" in RONDE6.unfit(result.sheet)  # alive, not dying, not yet fit


def test_r6_22_a_day_of_rest_ends_fatigue_and_stunned_ends_without_a_roll() -> None:
    """R6-22: Fatigued recovers "after sufficient rest" (house default: a day that
    is not strenuous); Stunned ends after a round without actions."""
    (rested,) = rest(RONDE6, [r6(fatigue=2, conditions={"stunned": ""})], [])
    assert rested.sheet["fatigue"] == 0 and "conditions" not in rested.sheet
    (worked,) = rest(RONDE6, [r6(fatigue=2)], [], strenuous=True)
    assert worked.sheet["fatigue"] == 2


def test_rond6_aftermath_keeps_wounds_points_ammunition_and_the_lasting_injuries() -> None:
    """What a RonD6 fight leaves (R6-20 points spent, R6-21 injuries, ammunition):
    Mortally Wounded stays (dying, minutes counted on); Stunned does not."""
    final = RonD6Combatant(id="p", name="P", side="x", wounds=4, character_points=1, fate_points=0, mortal_minutes=2,
                           ammo={"pistol": 3}, reloads={"pistol": 1}, out_of_fight=True,
                           conditions={"stunned": "", "mortally_wounded": "", "unconscious": ""})
    sheet, notes = RONDE6.aftermath({**R6_SHEET, "character_points": 3, "fate_points": 1}, final)
    assert (sheet["wounds"], sheet["character_points"], sheet["fate_points"]) == (4, 1, 0)
    assert (sheet["ammo"], sheet["reloads"], sheet["mortal_minutes"]) == ({"pistol": 3}, {"pistol": 1}, 2)
    assert sheet["conditions"] == {"mortally_wounded": "", "unconscious": ""}
    assert RONDE6.status(sheet) == "dying" and "Mortally Wounded" in RONDE6.unfit(sheet)
    assert any("Stunned ends" in note for note in notes)
    knocked_out = RonD6Combatant(id="p", name="P", side="x", wounds=3, conditions={"unconscious": ""}, out_of_fight=True)
    sheet, notes = RONDE6.aftermath(dict(R6_SHEET), knocked_out)
    assert sheet["conditions"] == {"incapacitated": ""} and RONDE6.status(sheet) == "down"


def test_rond6_resupply_fills_magazines_and_the_reloads_it_was_created_with() -> None:
    (result,) = rest(RONDE6, [r6(ammo={"pistol": 2}, reloads={"pistol": 0})], [], resupply=True)
    assert (result.sheet["ammo"], result.sheet["reloads"]) == ({"pistol": 12}, {"pistol": 2})


# ----------------------------------------------------------------------------- d100-zones D100Z-14


def zone(character: str = "p", **fields: Any) -> Patient:
    sheet = {"hp": 12, "max_hp": 12, "intelligence": 60, "medicine": 70, **fields}
    return Patient(character=character, name=character, sheet=sheet)


def test_d100z_14_first_aid_after_the_fight_a_critical_stabilises_and_the_patient_comes_to() -> None:
    """D100Z-14: the healer rolls 8 <= INT 60, a critical; heals 1d10 (4) +
    floor((Medicine 70 - 50) / 10) = 6: -3 -> 3 HP, conscious again; then a day
    of rest adds 1 HP (house default)."""
    (result,) = rest(ZONES, [zone(hp=-3, conditions={"unconscious": "", "dying": ""})], [8, 4], healer=zone("doc"))
    test, heal = result.rolls
    assert (test.rule, test.total, test.target, test.details["critical"]) == ("D100Z-14", 8, 60, True)
    assert (heal.total, heal.details["healed"]) == (6, 6)
    assert result.sheet["hp"] == 4 and "conditions" not in result.sheet
    assert "stabilised by a critical first aid roll (D100Z-14)" in result.notes


def test_d100z_14_a_dying_patient_first_aid_does_not_stabilise_bleeds_out() -> None:
    """D100Z-14: 50 <= 60 heals 1 + 2 = 3, -3 -> 0 HP, but only a critical stabilises:
    still dying, it bleeds out (house default: dying); 61 fails outright; without a
    healer no die is rolled and the dying character dies."""
    (healed,) = rest(ZONES, [zone(hp=-3, conditions={"unconscious": "", "dying": ""})], [50, 1], healer=zone("doc"))
    assert healed.sheet["hp"] == 0 and ZONES.status(healed.sheet) == "dead"
    (failed,) = rest(ZONES, [zone(hp=-3, conditions={"unconscious": "", "dying": ""})], [61], healer=zone("doc"))
    assert ZONES.status(failed.sheet) == "dead" and "first aid by doc failed (D100Z-14)" in failed.notes
    (alone,) = rest(ZONES, [zone(hp=-1, conditions={"unconscious": "", "dying": ""})], [])
    assert ZONES.status(alone.sheet) == "dead" and alone.sheet["conditions"] == {"unconscious": "", "dead": ""}


def test_d100z_14_first_aid_is_once_per_patient_per_rest_dying_first_and_never_above_max_hp() -> None:
    """D100Z-14 outside combat: each patient once, the dying one first; a heal of
    10 + 2 on a patient 7 below its maximum heals 7."""
    dying = zone("a", hp=-2, conditions={"unconscious": "", "dying": ""})
    hurt = zone("b", hp=5)
    results = rest(ZONES, [hurt, dying], [9, 2, 30, 10], healer=zone("doc"), days=1)
    by_id = {r.character: r for r in results}
    assert by_id["a"].rolls[0].total == 9 and by_id["b"].rolls[0].total == 30
    assert by_id["b"].rolls[1].details == {"healed": 7, "capped_at_max_hp": True} and by_id["b"].sheet["hp"] == 12
    assert by_id["a"].sheet["hp"] == 3  # -2, + (2 + 2) first aid, + 1 for the day of rest


def test_d100_zones_house_default_a_day_of_rest_restores_one_hp_and_a_stabilised_character_comes_to() -> None:
    (result,) = rest(ZONES, [zone(hp=-2, conditions={"unconscious": "", "stabilised": ""})], [], days=3)
    assert result.sheet["hp"] == 1 and "conditions" not in result.sheet and ZONES.status(result.sheet) == "hurt"
    (worked,) = rest(ZONES, [zone(hp=5)], [], days=3, strenuous=True)
    assert worked.sheet["hp"] == 5


# ----------------------------------------------------------------------------- Bolt & Blade, d100-degrees


def test_bb_core_09_down_at_0_vitality_comes_back_and_a_day_of_rest_restores_it_all() -> None:
    """BB-CORE-09: at 0 Vitality the character is Down and cannot join a fight;
    house default: ranged weapons are reloaded after the fight, grenades stay spent;
    a full day's rest restores every point of Vitality; --resupply refills grenades."""
    setup = demo_setup("bolt-and-blade")
    created = create_character(CampaignState(campaign="c"), get_system("bolt-and-blade"), "kell", "Kell",
                               setup.combatants[0].sheet)
    sheet = created.sheet
    magazine = {w["name"]: w["magazine"] for w in sheet["weapons"]}
    final = BoltAndBladeCombatant(id="kell", name="Kell", side="x", vitality=0, out_of_fight=True,
                                  ammo={"bolt pistol": 1, "frag grenade": 0, "smoke grenade": 1}, jammed=["bolt pistol"])
    after, notes = BOLT.aftermath(sheet, final)
    assert after["vitality"] == 0 and after["ammo"] == {"bolt pistol": magazine["bolt pistol"], "frag grenade": 0, "smoke grenade": 1}
    assert BOLT.status(after) == "down" and "Down at 0 Vitality (BB-CORE-09)" in BOLT.unfit(after)
    assert "jam cleared by the reload: bolt pistol" in notes
    patient = Patient(character="kell", name="Kell", sheet=after, base_sheet=sheet)
    (rested,) = rest(BOLT, [patient], [], days=1)
    assert rested.sheet["vitality"] == sheet["max_vitality"] and rested.sheet["ammo"]["frag grenade"] == 0
    (worked,) = rest(BOLT, [patient], [], days=3, strenuous=True)
    assert worked.sheet["vitality"] == 0
    (supplied,) = rest(BOLT, [patient], [], days=1, resupply=True)
    assert supplied.sheet["ammo"]["frag grenade"] == magazine["frag grenade"]


def test_d100_degrees_house_default_one_wound_back_per_day_of_rest() -> None:
    final = D100DCombatant(id="v", name="V", side="x", weapon_skill=40, ballistic_skill=40, agility=30, wounds=0,
                           out_of_fight=True, jammed=["lasgun"])
    after, notes = DEGREES.aftermath({"wounds": 12, "max_wounds": 12}, final)
    assert after["wounds"] == 0 and DEGREES.status(after) == "down" and any("jam cleared" in n for n in notes)
    (rested,) = rest(DEGREES, [Patient(character="v", name="V", sheet=after)], [], days=3)
    assert rested.sheet["wounds"] == 3 and DEGREES.status(rested.sheet) == "hurt"
    (long_rest,) = rest(DEGREES, [Patient(character="v", name="V", sheet=after)], [], days=30)
    assert long_rest.sheet["wounds"] == 12 and DEGREES.status(long_rest.sheet) == "ready"


# ----------------------------------------------------------------------------- the campaign's decisions


def campaign_with(system: str, *ids: str) -> CampaignState:
    state = CampaignState(campaign="c")
    setup = demo_setup(system)
    for combatant in setup.combatants:
        if combatant.id in ids:
            evolve(state, create_character(state, get_system(system), combatant.id, combatant.name, combatant.sheet))
    return state


def test_a_character_sheet_is_checked_by_its_system_and_named_once() -> None:
    state = CampaignState(campaign="c")
    system = get_system("rond6")
    with pytest.raises(CampaignError, match="character 'x': combatant 'x': sheet field 'wounds' must be between 0 and 4"):
        create_character(state, system, "x", "X", {**R6_SHEET, "wounds": 7})
    with pytest.raises(CampaignError, match="unknown sheet field 'wizardry'"):
        create_character(state, system, "x", "X", {**R6_SHEET, "wizardry": 3})
    with pytest.raises(CampaignError, match="character id 'no way' must be 1-64 characters"):
        create_character(state, system, "no way", "X", R6_SHEET)
    evolve(state, create_character(state, system, "x", "X", R6_SHEET))
    with pytest.raises(CampaignError, match="character 'x' already exists"):
        create_character(state, system, "x", "X", R6_SHEET)


def test_an_encounter_names_characters_and_gets_their_current_sheets() -> None:
    state = campaign_with("rond6", "vance", "okoro")
    state.characters["vance"].sheet = {**state.characters["vance"].sheet, "wounds": 2}
    setup = EncounterSetup(system="rond6", combatants=[
        CombatantSetup(id="v", character="vance", side="agents", position=(1, 1)),
        CombatantSetup(id="g", name="Goon", side="gang", position=(5, 5), sheet=R6_SHEET)])
    resolved, enlisted = resolve_setup(state, "e1", setup)
    assert resolved.combatants[0].name == "Agent Vance" and resolved.combatants[0].sheet["wounds"] == 2
    assert resolved.combatants[0].character == "vance"
    assert enlisted is not None and [(e.character, e.combatant) for e in enlisted.characters] == [("vance", "v")]
    evolve(state, enlisted)
    with pytest.raises(CampaignError, match=r"combatants\[0\] \(v\)\.character: 'vance' is in encounter 'e1', which has not ended"):
        resolve_setup(state, "e2", setup)
    again, _ = resolve_setup(state, "e1", setup)  # the same encounter, created again after a crash
    assert again == resolved

    def bad(**fields: Any) -> str:
        broken = msgspec.structs.replace(setup, combatants=[CombatantSetup(**{"id": "o", "side": "agents", **fields}),
                                                            setup.combatants[1]])
        with pytest.raises(CampaignError) as caught:
            resolve_setup(state, "e3", broken)
        return str(caught.value)

    assert "no character 'nobody' in campaign 'c' (known: okoro, vance)" in bad(character="nobody")
    assert "give a character or a sheet, not both" in bad(character="okoro", sheet=R6_SHEET)
    state.characters["okoro"].sheet = {**state.characters["okoro"].sheet, "wounds": 4}
    assert "Agent Okoro (okoro) is Mortally Wounded (R6-21)" in bad(character="okoro")
    other = campaign_with("d100-zones", "rg-ives")
    state.characters["rg-ives"] = other.characters["rg-ives"]
    assert "'rg-ives' is a d100-zones character, not rond6" in bad(character="rg-ives")


def test_the_aftermath_writes_back_only_the_enlisted_and_a_broken_rule_releases_them() -> None:
    state = campaign_with("rond6", "vance")
    setup = EncounterSetup(system="rond6", combatants=[CombatantSetup(id="v", character="vance", side="a", position=(0, 0)),
                                                       CombatantSetup(id="g", name="G", side="b", position=(3, 0), sheet=R6_SHEET)])
    assert aftermath(state, "e1", "rond6", get_system("rond6").initial_state()) is None  # nobody waits for e1
    _resolved, enlisted = resolve_setup(state, "e1", setup)
    evolve(state, enlisted)
    final = get_system("rond6").initial_state()
    final.combatants = {"v": RonD6Combatant(id="v", name="V", side="a", wounds=2, character_points=0)}
    final.winner, final.end_reason, final.round, final.version = "a", "last side standing", 4, 99
    event = aftermath(state, "e1", "rond6", final)
    assert isinstance(event, AftermathRecorded) and event.final_version == 99 and event.problem == ""
    (outcome,) = event.characters
    assert outcome.sheet["wounds"] == 2 and outcome.status == "hurt"
    assert {c.field for c in outcome.changes} >= {"wounds", "character_points"}
    evolve(state, event)
    assert state.characters["vance"].engaged_in == "" and state.characters["vance"].sheet["wounds"] == 2
    # A system whose rules break: the characters come back as they went in.
    _resolved, enlisted = resolve_setup(state, "e2", setup)
    evolve(state, enlisted)
    final.combatants = {"v": "not a combatant"}  # type: ignore[dict-item]
    broken = aftermath(state, "e2", "rond6", final)
    assert broken is not None and "the rond6 aftermath rules failed" in broken.problem
    assert broken.characters[0].sheet == state.characters["vance"].sheet


def test_a_rest_is_checked_first_then_rolled_at_the_streams_position_and_its_seed_revealed() -> None:
    state = campaign_with("rond6", "vance", "okoro")
    state.characters["vance"].sheet = {**state.characters["vance"].sheet, "wounds": 1}
    with pytest.raises(CampaignError, match="--days must be a whole number of days from 1 to 3650"):
        start_downtime(state, DowntimeRequest(characters=["vance"], days=0), "c")
    with pytest.raises(CampaignError, match="no character 'zed'"):
        start_downtime(state, DowntimeRequest(characters=["zed"], days=1), "c")
    bolt = campaign_with("bolt-and-blade", "sgt-kell")
    state.characters["sgt-kell"] = bolt.characters["sgt-kell"]
    with pytest.raises(CampaignError, match="bolt-and-blade rest has no care a healer gives"):
        start_downtime(state, DowntimeRequest(characters=["sgt-kell"], days=1, healer="sgt-kell"), "c")
    started = start_downtime(state, DowntimeRequest(characters=["vance", "sgt-kell"], days=3, healer="okoro"), "commit")
    assert (started.downtime, started.seed_commitment, started.characters) == (1, "commit", ["vance", "sgt-kell"])
    evolve(state, started)
    with pytest.raises(CampaignError, match="downtime 1 has not finished"):
        start_downtime(state, DowntimeRequest(characters=["vance"], days=1), "c")
    seed = b"s" * 32
    events = finish_downtime(state, seed)
    assert isinstance(events[-1], DowntimeEnded) and events[-1].seed == seed.hex()
    rested = {e.character: e for e in events if isinstance(e, CharacterRested)}
    assert set(rested) == {"vance", "sgt-kell"}
    medicine = rested["vance"].rolls[0]
    assert medicine.rule == "R6-43"  # the healer's Medicine test comes first, rolled from the rest's seed
    positions = [(die.at, die.k) for event in rested.values() for roll in event.rolls for die in roll.dice]
    assert {at for at, _k in positions} == {state.version} and len(set(positions)) == len(positions)
    replay = SeededDice(seed, state.version)
    assert [die.face for die in medicine.dice] == [replay.roll(6).face for _ in medicine.dice]
