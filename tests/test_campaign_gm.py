"""The GM's hand over a campaign's characters, pure: adjustments between fights
(points awarded, R6-20; Wounds, HP, Vitality, ammunition and grenades set;
renamed, retired, revived), each changed field checked by the system exactly
as a fight's start checks a sheet and every refusal one line naming what is
wrong; and the release of characters from an encounter that never started or
ended without their aftermath. The rest after a revival rolls fixed dice."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from firelane.engine.campaign import (
    ENDED,
    NOT_STARTED,
    Adjustment,
    CampaignError,
    CampaignState,
    CharacterBusy,
    DowntimeRequest,
    adjust_character,
    aftermath,
    create_character,
    evolve,
    party,
    release_characters,
    resolve_setup,
    start_downtime,
)
from firelane.engine.campaign_rules import Patient, RestRequest, campaign_rules
from firelane.engine.dice import FixedDice
from firelane.engine.registry import demo_setup, get_system
from firelane.engine.systems.rond6.state import RonD6Combatant
from firelane.events.campaign_schemas import CharacterAdjusted, CharactersReleased
from firelane.events.schemas import CombatantSetup, EncounterSetup
from firelane.projections.characters import history_text


def campaign_with(system: str, *ids: str) -> CampaignState:
    state = CampaignState(campaign="c")
    for combatant in demo_setup(system).combatants:
        if combatant.id in ids:
            evolve(state, create_character(state, get_system(system), combatant.id, combatant.name, combatant.sheet))
    return state


def adjusted(state: CampaignState, character: str, **wanted: Any) -> CharacterAdjusted:
    """Adjust (reason "test" unless given) and fold the event in."""
    event = adjust_character(state, get_system(state.characters[character].system), character,
                             Adjustment(**{"reason": "test", **wanted}), via="cli")
    evolve(state, event)
    return event


def refused(state: CampaignState, character: str, **wanted: Any) -> str:
    with pytest.raises(CampaignError) as caught:
        system = state.characters[character].system if character in state.characters else "rond6"
        adjust_character(state, get_system(system), character, Adjustment(**{"reason": "test", **wanted}))
    message = str(caught.value)
    assert "\n" not in message
    return message


def harm(state: CampaignState, character: str, **fields: Any) -> None:
    """What a fight left on a character (as its aftermath would have written it)."""
    found = state.characters[character]
    found.sheet = {**found.sheet, **fields}
    found.status = campaign_rules(found.system).status(found.sheet)


# ------------------------------------------------------------------ adjustments


def test_r6_20_the_gm_awards_character_and_fate_points_and_renames_between_fights() -> None:
    state = campaign_with("rond6", "vance")
    event = adjusted(state, "vance", set={"fate_points": 2, "name": "Kell the Bold"}, add={"character_points": 3},
                     reason="end of session")
    assert [(c.field, c.before, c.after) for c in event.changes] == [("character_points", 2, 5), ("fate_points", 0, 2)]
    assert (event.name, event.renamed_from, event.status, event.via) == ("Kell the Bold", "Agent Vance", "ready", "cli")
    vance = state.characters["vance"]
    assert (vance.name, vance.sheet["character_points"], vance.sheet["fate_points"]) == ("Kell the Bold", 5, 2)
    assert vance.changed_at == state.version == 2
    assert history_text(event, "vance") == ("adjusted by the GM (end of session): ready; renamed from Agent Vance to "
                                            "Kell the Bold, character points from 2 to 5, fate points from 0 to 2")
    assert history_text(event, "okoro") is None
    # Spending is adding a negative amount; the sheet's other fields stay as they were, in their order.
    event = adjusted(state, "vance", add={"fate_points": -1})
    assert [(c.field, c.before, c.after) for c in event.changes] == [("fate_points", 2, 1)]
    assert list(vance.sheet) == list(state.characters["vance"].sheet)


def test_each_refusal_is_one_line_naming_what_is_wrong() -> None:
    state = campaign_with("rond6", "vance")
    assert refused(state, "nobody", set={"fate_points": 1}) == "no character 'nobody' in campaign 'c' (known: vance)"
    assert refused(state, "vance", set={"fate_points": 1}, reason=" ") == (
        "give a reason (--reason TEXT): it goes into the character's history")
    # The system's own check, exactly as a fight's start makes it.
    assert refused(state, "vance", set={"fate_points": -1}) == (
        "character 'vance': combatant 'vance': sheet field 'fate_points' must be at least 0 (got -1)")
    assert refused(state, "vance", add={"fate_points": -1}) == (
        "character 'vance': combatant 'vance': sheet field 'fate_points' must be at least 0 (got -1)")
    assert refused(state, "vance", set={"wounds": 5}) == (
        "character 'vance': combatant 'vance': sheet field 'wounds' must be between 0 and 4 (got 5)")
    assert refused(state, "vance", set={"wizardry": 3}).startswith(
        "character 'vance': combatant 'vance': unknown sheet field 'wizardry' (known: ")
    assert refused(state, "vance", set={"skills.firearms": 5}).startswith("character 'vance': combatant 'vance': ")
    # The paths and the adjustment itself.
    assert refused(state, "vance", set={"side": "gang"}) == "sheet field 'side': 'side' is the encounter's to set, not the sheet's"
    assert refused(state, "vance", set={"weapons.5.damage": "9D"}) == (
        "sheet field 'weapons.5.damage': weapons has no item '5' (it has 3, from 0)")
    assert refused(state, "vance", set={"weapons.0.damage.x": 1}) == (
        "sheet field 'weapons.0.damage.x': weapons.0.damage is not an object or a list")
    assert refused(state, "vance", add={"skills.firearms": 1}) == "sheet field 'skills.firearms' is '5D', not a number to add to"
    assert refused(state, "vance", unset=["wounds"]) == "sheet field 'wounds' is not on the sheet"
    assert refused(state, "vance", set={"name": ""}) == "name: must be 1 to 200 characters of text"
    assert refused(state, "vance", set={"fate_points": 0}) == "the adjustment changes nothing on 'vance'"
    assert refused(state, "vance", retire=True, revive=True) == "retire and revive contradict each other: give one"
    assert refused(state, "vance", revive=True) == "'vance' is neither retired nor dead (ready): nothing to revive"
    assert refused(state, "vance", set={f"skills.s{n}": "1D" for n in range(101)}) == (
        "an adjustment changes at most 100 fields (this one 101)")
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"add": {"fate_points": True}, "reason": "x"}, Adjustment)  # a flag is not an amount
    with pytest.raises(msgspec.ValidationError, match="unknown field `sett`"):
        msgspec.convert({"sett": {"fate_points": 1}, "reason": "x"}, Adjustment)
    assert state.version == 1  # nothing was decided


def test_a_character_in_a_fight_is_not_adjusted_and_the_refusal_names_the_fight() -> None:
    state = campaign_with("rond6", "vance")
    setup = EncounterSetup(system="rond6", combatants=[
        CombatantSetup(id="v", character="vance", side="agents", position=(1, 1)),
        CombatantSetup(id="g", name="Goon", side="gang", position=(5, 5), sheet=demo_setup("rond6").combatants[-1].sheet)])
    _resolved, enlisted = resolve_setup(state, "raid", setup)
    evolve(state, enlisted)
    with pytest.raises(CharacterBusy) as caught:
        adjust_character(state, get_system("rond6"), "vance", Adjustment(add={"fate_points": 1}, reason="x"))
    assert str(caught.value) == ("'vance' is in encounter 'raid', which has not ended: adjust it after the fight "
                                 "(one that never started can free it: firelane character release vance)")


def test_bb_core_09_a_down_character_is_judged_by_the_fields_the_gm_sets_grenades_and_vitality() -> None:
    state = campaign_with("bolt-and-blade", "sgt-kell")
    harm(state, "sgt-kell", vitality=0, ammo={"bolt pistol": 8, "frag grenade": 0, "smoke grenade": 1})
    assert state.characters["sgt-kell"].status == "down"
    # A grenade back: the Vitality a fight's start would refuse (0) is not what is judged.
    event = adjusted(state, "sgt-kell", set={"ammo.frag grenade": 1})
    assert event.status == "down" and state.characters["sgt-kell"].sheet["ammo"]["frag grenade"] == 1
    assert refused(state, "sgt-kell", set={"ammo.frag grenade": 3}) == (
        "character 'sgt-kell': combatant 'sgt-kell': sheet field 'ammo.frag grenade' must be from 0 to 2 (got 3)")
    assert refused(state, "sgt-kell", set={"vitality": 0}) == (
        "character 'sgt-kell': combatant 'sgt-kell': sheet field 'vitality' must be at least 1 (got 0)")
    assert refused(state, "sgt-kell", set={"vitality": 19}) == (
        "character 'sgt-kell': combatant 'sgt-kell': sheet field 'vitality' must not exceed max_vitality 18 (got 19)")
    event = adjusted(state, "sgt-kell", set={"vitality": 7})
    assert event.status == "hurt" and [(c.field, c.before, c.after) for c in event.changes] == [("vitality", 0, 7)]


def test_d100_degrees_wounds_set_on_a_downed_character() -> None:
    state = campaign_with("d100-degrees", "sgt-varn")
    harm(state, "sgt-varn", wounds=0)
    assert adjusted(state, "sgt-varn", set={"wounds": 3}).status == "hurt"
    assert refused(state, "sgt-varn", set={"wounds": 15}) == (
        "character 'sgt-varn': combatant 'sgt-varn': sheet field 'max_wounds' must be at least 15 (got 14)")


def test_d100_zones_hp_set_ends_dying_and_a_dead_character_revived_rests_back_to_its_feet() -> None:
    state = campaign_with("d100-zones", "rg-ives")
    harm(state, "rg-ives", hp=-3, conditions={"dying": ""})
    event = adjusted(state, "rg-ives", add={"medicine": 5})  # a dying character's skill: its HP are not judged
    assert event.status == "dying" and state.characters["rg-ives"].sheet["medicine"] == 50
    assert refused(state, "rg-ives", set={"hp": 0}) == (
        "character 'rg-ives': combatant 'rg-ives': sheet field 'hp' must be at least 1 (got 0)")
    event = adjusted(state, "rg-ives", set={"hp": 4})
    assert event.status == "hurt" and "conditions" not in state.characters["rg-ives"].sheet
    assert event.notes == ["at 4 HP: no longer dying"]

    harm(state, "rg-ives", hp=-9, conditions={"dead": ""})
    assert state.characters["rg-ives"].status == "dead"
    event = adjusted(state, "rg-ives", revive=True, reason="the medic's miracle")
    assert (event.status, event.sheet["hp"], event.sheet["conditions"]) == ("down", 0, {"unconscious": "", "stabilised": ""})
    assert event.notes == ["revived at 0 HP, unconscious and stabilised (house default: rest heals it)"]
    # Rest (first aid by a healer, then natural rest): the D100Z-14 roll on fixed faces.
    zones = campaign_rules("d100-zones")
    patient = Patient(character="rg-ives", name="Ives", sheet=state.characters["rg-ives"].sheet)
    healer = Patient(character="rg-pell", name="Pell", sheet={**patient.sheet, "hp": 12, "conditions": {}})
    dice = FixedDice([30, 6])  # INT 50: 30 passes; 1d10 = 6, Medicine 50 adds 0
    (result,) = zones.rest([patient], RestRequest(days=2, healer=healer), dice)
    assert dice.remaining == 0 and result.sheet["hp"] == 8 and zones.status(result.sheet) == "hurt"
    assert "conditions" not in result.sheet  # came to above 0 HP


def test_r6_21_wounds_the_gm_sets_bring_their_injury_and_a_dead_character_revives_incapacitated() -> None:
    state = campaign_with("rond6", "vance")
    event = adjusted(state, "vance", set={"wounds": 4}, reason="the fall")
    assert event.status == "dying"
    assert state.characters["vance"].sheet["conditions"] == {"mortally_wounded": "", "unconscious": ""}
    assert state.characters["vance"].sheet["mortal_minutes"] == 0
    assert event.notes == ["Mortally Wounded at 4 Wounds (R6-21): dying, 0 minutes since the wound"]
    event = adjusted(state, "vance", set={"wounds": 1}, reason="patched up")
    assert event.status == "hurt" and {"conditions", "mortal_minutes"}.isdisjoint(state.characters["vance"].sheet)

    harm(state, "vance", wounds=5, dead=True, conditions={"dead": ""})
    assert adjusted(state, "vance", add={"fate_points": 1}).status == "dead"  # points still go to the dead
    event = adjusted(state, "vance", revive=True, reason="it was a clone")
    sheet = state.characters["vance"].sheet
    assert (event.status, sheet["wounds"], sheet["conditions"], "dead" in sheet) == ("down", 3, {"incapacitated": ""}, False)


def test_a_retired_character_fights_no_fight_rests_no_rest_until_revived() -> None:
    state = campaign_with("rond6", "vance", "okoro")
    event = adjusted(state, "vance", retire=True, reason="settles down")
    assert (event.status, event.retired, event.changes) == ("retired", True, [])
    assert history_text(event, "vance") == "adjusted by the GM (settles down): retired; no sheet change"
    assert refused(state, "vance", retire=True) == "'vance' is retired already"
    assert party(state) == ["okoro"]
    with pytest.raises(CampaignError, match=r"^'vance' is retired; revive it first \(firelane character adjust vance --revive\)$"):
        start_downtime(state, DowntimeRequest(characters=["vance"], days=1), "c")
    with pytest.raises(CampaignError, match="^healer 'vance' is retired$"):
        start_downtime(state, DowntimeRequest(characters=["okoro"], days=1, healer="vance"), "c")
    setup = EncounterSetup(system="rond6", combatants=[
        CombatantSetup(id="v", character="vance", side="agents", position=(1, 1)),
        CombatantSetup(id="o", character="okoro", side="gang", position=(5, 5))])
    with pytest.raises(CampaignError, match=r"^combatants\[0\] \(v\)\.character: Agent Vance \(vance\) is retired; revive"):
        resolve_setup(state, "e1", setup)
    event = adjusted(state, "vance", revive=True, reason="one last job")
    assert (event.status, event.retired) == ("ready", False) and party(state) == ["okoro", "vance"]
    assert resolve_setup(state, "e1", setup)[1] is not None


# ------------------------------------------------------------------ releases


def enlist(state: CampaignState, encounter: str, *characters: str) -> None:
    combatants = [CombatantSetup(id=f"{c}-c", character=c, side="agents", position=(n, 0)) for n, c in enumerate(characters)]
    foe = CombatantSetup(id="goon", name="Goon", side="gang", position=(9, 9), sheet=demo_setup("rond6").combatants[-1].sheet)
    _resolved, enlisted = resolve_setup(state, encounter, EncounterSetup(system="rond6", combatants=[*combatants, foe]))
    evolve(state, enlisted)


def test_characters_released_from_an_encounter_that_never_started_come_back_as_they_went() -> None:
    state = campaign_with("rond6", "vance", "okoro")
    harm(state, "vance", wounds=1)
    enlist(state, "raid", "vance", "okoro")
    state.characters["vance"].rested_days = 4
    event = release_characters(state, ["vance"], "we ran out of time", encounter="raid", system="rond6",
                               encounter_status=NOT_STARTED, via="cli")
    (outcome,) = event.characters
    assert (outcome.character, outcome.combatant, outcome.sheet, outcome.status) == (
        "vance", "vance-c", state.characters["vance"].sheet, "hurt")
    assert history_text(event, "vance") == "released by the GM from raid before it started (we ran out of time): hurt"
    evolve(state, event)
    vance = state.characters["vance"]
    assert (vance.engaged_in, vance.rested_days) == ("", 4)  # it never fought: its rest goes on counting
    assert state.enlisted == {"raid": {"okoro": "okoro-c"}}
    # Free to fight elsewhere; the encounter's aftermath no longer writes it back.
    enlist(state, "ambush", "vance")
    final = get_system("rond6").initial_state()
    final.combatants = {"vance-c": RonD6Combatant(id="vance-c", name="V", side="agents", wounds=3),
                        "okoro-c": RonD6Combatant(id="okoro-c", name="O", side="agents", wounds=0)}
    written = aftermath(state, "raid", "rond6", final)
    assert written is not None and [o.character for o in written.characters] == ["okoro"]


def test_a_character_released_from_an_ended_encounter_comes_back_with_what_the_fight_did() -> None:
    state = campaign_with("rond6", "vance", "okoro")
    enlist(state, "raid", "vance", "okoro")
    state.characters["vance"].rested_days = 4
    final = get_system("rond6").initial_state()
    final.combatants = {"vance-c": RonD6Combatant(id="vance-c", name="V", side="agents", wounds=2, character_points=0)}
    final.version = 77
    event = release_characters(state, ["vance"], "the engine died", encounter="raid", system="rond6",
                               encounter_status=ENDED, final=final)
    assert isinstance(event, CharactersReleased) and event.final_version == 77
    (outcome,) = event.characters
    assert outcome.sheet["wounds"] == 2 and outcome.status == "hurt"
    assert {c.field for c in outcome.changes} >= {"wounds", "character_points"}
    assert history_text(event, "vance").startswith(
        "released by the GM from raid, which had ended (the engine died): hurt; character points from 2 to 0")
    evolve(state, event)
    assert state.characters["vance"].sheet["wounds"] == 2 and state.characters["vance"].rested_days == 0


def test_a_release_is_refused_with_one_line() -> None:
    state = campaign_with("rond6", "vance", "okoro")
    enlist(state, "raid", "vance")

    def refusal(characters: list[str], reason: str = "r", status: str = NOT_STARTED, encounter: str = "raid") -> str:
        with pytest.raises(CampaignError) as caught:
            release_characters(state, characters, reason, encounter=encounter, system="rond6", encounter_status=status)
        return str(caught.value)

    assert refusal(["okoro"]) == "'okoro' is in no encounter: nothing to release it from"
    assert refusal(["vance"], encounter="other") == "'vance' is in encounter 'raid', not in 'other': nothing to release it from"
    assert refusal(["nobody"]) == "no character 'nobody' in campaign 'c' (known: okoro, vance)"
    assert refusal(["vance"], reason="") == "give a reason (--reason TEXT): it goes into the character's history"
    assert refusal(["vance"], status="under way") == "encounter 'raid' is under way: end it first (the GM's EndEncounter)"
    assert refusal(["vance"], status=ENDED) == "encounter 'raid': its final state is needed to release from it"


def test_r6_21_an_incapacitated_character_fights_no_fight_until_a_wound_heals() -> None:
    """R6-21, R6-42, R6-43 (issue 19 item 12): a RonD6 character left at 3 Wounds is
    Incapacitated (-3D to everything, or unconscious) until rest or a healer takes a
    Wound off: its status is "down", not "hurt", and no fight enlists it; at 2 Wounds
    it is hurt and fit again."""
    state = campaign_with("rond6", "vance", "okoro")
    harm(state, "vance", wounds=3, conditions={"incapacitated": ""})
    assert state.characters["vance"].status == "down"
    with pytest.raises(CampaignError, match=r"Agent Vance \(vance\) is Incapacitated at 3 Wounds \(R6-21\); rest first: "
                                            r"a healer's Medicine test heals a Wound \(R6-43"):
        enlist(state, "raid", "vance", "okoro")
    harm(state, "vance", wounds=2, conditions={})
    assert state.characters["vance"].status == "hurt"
    enlist(state, "raid", "vance", "okoro")
    assert state.characters["vance"].engaged_in == "raid"
