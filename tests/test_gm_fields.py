"""The GM's hand, as a form sees it: every system describes its adjustable
fields (label, kind, range or choices, group) and the engine checks a
GMAdjust against exactly that description; a fallen combatant comes back
only through Revive; a call's valid rulings are in the options."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from firelane.engine.core import BaseRuleSystem
from firelane.engine.dice import FixedDice
from firelane.engine.gm_fields import GROUPS, value_problem
from firelane.engine.registry import demo_setup, get_system, register_system
from firelane.engine.seats import GM
from firelane.engine.simulate import run_headless
from firelane.events.options_schemas import GMField
from firelane.events.schemas import CommandRejected, GMAdjust, GMAdjusted
from tests.toy_system import TOY

register_system(TOY, "tests.toy_system")
SYSTEMS = ["bolt-and-blade", "d100-degrees", "d100-zones", "rond6", "toy"]


def _setup(name: str):
    if name == "toy":
        from tests.test_gm_and_rewind import table_setup

        return table_setup()
    return demo_setup(name)


def fight_with_a_fallen(name: str) -> Any:
    """A state of the system's sample fight (the AI on both sides) where
    someone is out of the fight and the fight goes on."""
    system = get_system(name)
    for _command, _events, state in run_headless(system, _setup(name), b"gm-fields" * 4):
        if state.ended:
            break
        if state.window is None and any(c.out_of_fight for c in state.combatants.values()):
            return msgspec.convert(msgspec.to_builtins(state), system.state_type)
    raise AssertionError(f"no one fell in {name}'s sample fight")


def adjust(system: BaseRuleSystem, state: Any, combatant: str, changes: dict[str, Any]) -> Any:
    """The one event a GMAdjust gives (the adjustment or its refusal), on a copy of ``state``."""
    trial = msgspec.convert(msgspec.to_builtins(state), system.state_type)
    events = system.decide_or_reject(trial, GMAdjust(command_id="g", actor=GM, combatant=combatant, changes=changes,
                                                     reason="the GM's call"), FixedDice([3] * 50))
    return events[0]


def samples(field: GMField) -> tuple[list[Any], list[Any]]:
    """Values the description allows and values it does not."""
    values = [c.value for c in field.choices]
    if field.kind == "number":
        low = field.low if field.low is not None else -1000
        high = field.high if field.high is not None else low + 50
        good = sorted({low, high, (low + high) // 2 if field.whole else (low + high) / 2})
        bad = ([low - 1] if field.low is not None else []) + ([high + 1] if field.high is not None else []) + [
            "3", True] + ([low + 0.5] if field.whole and high > low else [])
        return good, bad
    if field.kind == "yes_no":
        return [True, False], [1, "yes"]
    if field.kind == "choice":
        return values[:3] + ([None] if field.nullable else []), ["no such thing"] + ([] if field.nullable else [None])
    if field.kind == "choices":
        most = field.most if field.most is not None else len(values)
        return [[], values[:most]], [["no such thing"], values[:1] * 2 if values else [1]] + (
            [values[: most + 1]] if len(values) > most else [])
    if field.kind == "counts":
        good = [{c.value: (c.high if c.high is not None else field.high if field.high is not None else 3)} for c in field.choices[:2]]
        good += [{c.value: field.low or 0} for c in field.choices[:1]]
        bad = [{"no such thing": 1}] + [{c.value: (field.low or 0) - 1} for c in field.choices[:1]] + [
            {c.value: c.high + 1} for c in field.choices[:1] if c.high is not None]
        return good, bad
    return [], []


@pytest.mark.parametrize("name", SYSTEMS)
def test_the_form_and_the_engine_agree_on_every_described_field(name: str) -> None:
    """For each field the GM's options describe, of a standing and of a fallen
    combatant: what the description allows the engine takes, and what it
    refuses the engine refuses (with the same reason the form gives)."""
    system = get_system(name)
    state = fight_with_a_fallen(name)
    gm = system.options(state, GM).gm
    assert gm is not None and set(gm.fields) == set(state.combatants)
    checked = 0
    for cid, fields in gm.fields.items():
        combatant = state.combatants[cid]
        kinds = {f.field: f.kind for f in fields}
        assert [GROUPS.index(f.group) if f.group in GROUPS else len(GROUPS) for f in fields] == sorted(
            GROUPS.index(f.group) if f.group in GROUPS else len(GROUPS) for f in fields), "grouped in order"
        if combatant.out_of_fight:
            assert kinds.get("revive") == "revive" and "out_of_fight" not in kinds
            assert not set(kinds) & system.gm_vital_fields()
        else:
            assert "revive" not in kinds and kinds["out_of_fight"] == "yes_no"
        assert kinds["position"] == "square" and kinds["conditions"] == "conditions"
        for field in fields:
            assert field.label and "_" not in field.label, field
            good, bad = samples(field)
            for value in good:
                assert value_problem(field, value) is None, (field.field, value)
                event = adjust(system, state, cid, {field.field: value})
                assert isinstance(event, GMAdjusted), (cid, field.field, value, getattr(event, "reason", ""))
                checked += 1
            for value in bad:
                problem = value_problem(field, value)
                assert problem is not None, (field.field, value)
                event = adjust(system, state, cid, {field.field: value})
                assert isinstance(event, CommandRejected), (cid, field.field, value)
                checked += 1
    assert checked > 20


@pytest.mark.parametrize("name", SYSTEMS)
def test_a_fallen_combatant_comes_back_only_through_revive(name: str) -> None:
    system = get_system(name)
    state = fight_with_a_fallen(name)
    fallen = next(c for c in state.combatants.values() if c.out_of_fight)
    refused = adjust(system, state, fallen.id, {"out_of_fight": False})
    assert isinstance(refused, CommandRejected) and '"revive": true' in refused.reason, refused
    for field in system.gm_vital_fields():
        if field in ("dead", "mortal_minutes"):
            continue
        spec = next(s for s in system.gm_specs(fallen) if s.field == field)
        high = spec.high(state, fallen) if callable(spec.high) else spec.high
        event = adjust(system, state, fallen.id, {field: int(high if high is not None else 5)})
        if system.life(fallen) != "up":
            assert isinstance(event, CommandRejected) and "revive" in event.reason, (field, event)
    revived = adjust(system, state, fallen.id, {"revive": True})
    assert isinstance(revived, GMAdjusted) and revived.changes["out_of_fight"] is False, revived
    after = msgspec.convert(msgspec.to_builtins(state), system.state_type)
    system.evolve(after, revived)
    back = after.combatants[fallen.id]
    assert not back.out_of_fight and system.life(back) == "up" and "dead" not in back.conditions
    assert isinstance(adjust(system, after, fallen.id, {"revive": True}), CommandRejected)  # in the fight: no one to revive
    # The options say what Revive does.
    note = next(f for f in system.options(state, GM).gm.fields[fallen.id] if f.kind == "revive").note
    assert note.startswith("back in the fight"), note


def test_rond6_a_dead_characters_wounds_do_not_bring_it_back_and_revive_does() -> None:
    """Issue 19: `wounds=0` on a dead RonD6 character silently revived it."""
    system = get_system("rond6")
    state = fight_with_a_fallen("rond6")
    fallen = next(c for c in state.combatants.values() if c.out_of_fight)
    dead = msgspec.convert(msgspec.to_builtins(state), system.state_type)
    body = dead.combatants[fallen.id]
    body.wounds, body.dead, body.conditions = 5, True, {**body.conditions, "dead": ""}
    for changes in ({"wounds": 0}, {"dead": False}, {"conditions": {"remove": ["dead"]}}, {"wounds": 0, "dead": False}):
        refused = adjust(system, dead, fallen.id, changes)
        assert isinstance(refused, CommandRejected), changes
        assert refused.reason.startswith(f"{body.name} is dead: ") and "revive" in refused.reason, refused.reason
    revived = adjust(system, dead, fallen.id, {"revive": True})
    assert isinstance(revived, GMAdjusted)
    assert revived.changes["wounds"] == 3 and revived.changes["dead"] is False
    assert set(revived.changes["conditions"]["remove"]) >= {"dead"} and "incapacitated" in revived.changes["conditions"]["add"]
    # With the wounds the GM chooses, and not as one still dying.
    light = adjust(system, dead, fallen.id, {"revive": True, "wounds": 1})
    assert isinstance(light, GMAdjusted) and light.changes["wounds"] == 1 and "incapacitated" not in str(light.changes.get("conditions"))
    dying = adjust(system, dead, fallen.id, {"revive": True, "wounds": 4})
    assert isinstance(dying, CommandRejected) and dying.reason == f"{body.name}: Wounds must be a whole number from 0 to 3, not 4"


def test_a_calls_rulings_are_offered_as_its_valid_choices() -> None:
    from tests.systems.bolt_and_blade.test_gm import hit_with_cover_near

    system = get_system("bolt-and-blade")
    state = hit_with_cover_near()
    [call] = system.options(state, GM).gm.calls
    assert call.id == "dive_for_cover:1" and call.rulings == ["possible", "impossible"] and call.free_text is False


@pytest.mark.parametrize("name", SYSTEMS)
def test_health_fields_do_not_take_a_standing_combatant_out_by_themselves(name: str) -> None:
    """Setting a standing combatant's health to what reads as down or dead
    (without taking it out) would leave it fighting while fallen: refused,
    naming out_of_fight; with out_of_fight true it is taken out."""
    system = get_system(name)
    state = fight_with_a_fallen(name)
    standing = next(c for c in state.combatants.values() if not c.out_of_fight)
    health = {"bolt-and-blade": {"vitality": 0}, "d100-degrees": {"wounds": 0}, "d100-zones": {"hp": -3},
              "rond6": {"wounds": 4}, "toy": {"hp": 0}}[name]
    refused = adjust(system, state, standing.id, health)
    assert isinstance(refused, CommandRejected), refused
    if name == "rond6":
        assert refused.reason.endswith("not 4")  # its range for one in the fight ends at 3 (R6-21)
        dead = adjust(system, state, standing.id, {"dead": True})
        assert isinstance(dead, CommandRejected) and dead.reason.endswith("take " + standing.name + " out with out_of_fight: true")
    taken_out = adjust(system, state, standing.id, {"out_of_fight": True})
    assert isinstance(taken_out, GMAdjusted)
