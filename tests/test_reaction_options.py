"""Window answers' options, typed per reaction: every claim the options offer
in the demo fights fits its reaction's type and the published JSON Schema of
commands, and a claim whose options do not fit is refused in one line."""

from __future__ import annotations

import jsonschema
import msgspec
import pytest

from firelane.engine.command_schema import command_schema
from firelane.engine.core import Rejected
from firelane.engine.registry import demo_setup, get_system
from firelane.engine.simulate import run_headless
from firelane.engine.state import EncounterState
from firelane.events.schemas import ClaimReaction

SYSTEMS = ("bolt-and-blade", "d100-degrees", "d100-zones", "rond6")


@pytest.mark.parametrize("name", ("bolt-and-blade", "d100-degrees", "rond6"))
def test_every_claim_the_options_offer_fits_its_reactions_type_and_the_schema(name: str) -> None:
    system = get_system(name)
    validator = jsonschema.Draft202012Validator(command_schema([system]))
    offered: set[str] = set()
    checked = 0

    def look(state: EncounterState) -> None:
        nonlocal checked
        window = state.window
        if window is None:
            return None
        for reactor in window.unanswered():
            for option in system.reaction_options(state, window, reactor):
                offered.add(option.reaction)
                for choice in option.choices:
                    claim = {**choice.command, "command_id": f"t{checked}"}
                    errors = [e.message for e in validator.iter_errors(claim)]
                    assert not errors, (claim, errors)
                    msgspec.convert(claim["options"], system.reaction_options_types[option.reaction])
                    checked += 1
        return None

    for seed in (b"typed-1", b"typed-2", b"typed-3"):
        for _ in run_headless(system, demo_setup(name), seed, gm=look):
            pass
    assert checked > 0 and offered <= set(system.reaction_options_types), offered - set(system.reaction_options_types)


def test_a_d100_zones_free_attack_offered_fits_its_type_and_the_schema() -> None:
    # Its demo squads never leave Engaged range, so the rule test's scene (D100Z-15) opens the window.
    from tests.systems.d100_zones.test_first_aid_and_disengaging import _engaged
    from tests.systems.d100_zones.helpers import act
    from firelane.engine.systems.d100_zones.schemas import D100ZMove

    system = get_system("d100-zones")
    validator = jsonschema.Draft202012Validator(command_schema([system]))
    state = _engaged()
    act(state, D100ZMove(command_id="m", actor="a1", path=[(4, 5), (3, 5)]))
    (option,) = system.reaction_options(state, state.window, "b1")
    assert option.reaction == "free_attack" and option.choices
    for choice in option.choices:
        assert choice.command["options"]["weapon"]
        assert validator.is_valid({**choice.command, "command_id": "c"})


@pytest.mark.parametrize(("name", "reaction", "options", "reason"), [
    ("bolt-and-blade", "dive_for_cover", {"to": "north"},
     "the options of dive_for_cover: Expected `array | null`, got `str` - at `options.to` (it takes to)"),
    ("bolt-and-blade", "reactive_fire", {"sqare": [1, 2]},
     "the options of reactive_fire: Object contains unknown field `sqare` (it takes square)"),
    ("bolt-and-blade", "return_fire", {"x": 1},
     "the options of return_fire: Object contains unknown field `x` (it takes none: send {})"),
    ("rond6", "dodge", {"declare": "two"},
     "the options of dodge: Expected `int | null`, got `str` - at `options.declare` (it takes declare)"),
    ("rond6", "resist", {"character_points": 1, "fate": True},
     "the options of resist: Object contains unknown field `fate` (it takes character_points, fate_point)"),
    ("rond6", "interrupt", {},
     "the options of interrupt: Object missing required field `command` (it takes command)"),
    ("d100-zones", "free_attack", {"weapon": 3},
     "the options of free_attack: Expected `str | null`, got `int` - at `options.weapon` (it takes weapon)"),
])
def test_a_claim_whose_options_do_not_fit_is_refused_in_one_line(name: str, reaction: str, options: dict, reason: str) -> None:
    system = get_system(name)
    with pytest.raises(Rejected) as refused:
        system.check_reaction_options(ClaimReaction(command_id="c", actor="x", window=1, reaction=reaction, options=options))
    assert refused.value.reason == reason
    system.check_reaction_options(ClaimReaction(command_id="c", actor="x", window=1, reaction=reaction,
                                                options={"command": {"type": "R6Wait"}} if reaction == "interrupt" else {}))


def test_the_schema_names_each_reactions_options_and_leaves_the_engines_commands_out() -> None:
    schema = command_schema([get_system("rond6")])
    claim = schema["$defs"]["ClaimReaction"]
    by_reaction = {rule["if"]["properties"]["reaction"]["const"]: rule["then"]["properties"]["options"]["$ref"]
                   for rule in claim["allOf"]}
    assert by_reaction["resist"] == "#/$defs/R6ResistOptions" and by_reaction["dodge"] == "#/$defs/R6DefenseOptions"
    assert schema["$defs"]["R6ResistOptions"]["properties"] == {
        "character_points": {"type": "integer", "default": 0}, "fate_point": {"type": "boolean", "default": False}}
    assert not {"StartEncounter", "CloseReactionWindow", "RestoreState", "TimeOutTurn"} & set(schema["$defs"])
    assert schema["$defs"]["GMSkipTurn"]["x-authority"] == "gm" and schema["$defs"]["EndTurn"]["x-authority"] == "combatant"
    validator = jsonschema.Draft202012Validator(schema)
    bad = {"type": "ClaimReaction", "command_id": "c", "actor": "x", "window": 1, "reaction": "resist",
           "options": {"character_points": "all"}}
    assert not validator.is_valid(bad)
    assert validator.is_valid({**bad, "options": {"character_points": 2}})


def test_the_engine_refuses_a_misshapen_claim_and_keeps_the_window_open() -> None:
    """BB-CMB-10: a Reactive Fire claim with a field it does not take is refused
    in one line when it is made; the window still waits for the reactor."""
    from tests.systems.bolt_and_blade.helpers import act, claim, move, rejected
    from tests.systems.bolt_and_blade.test_reactions import PATH, approach

    state = approach()
    act(state, move("m", *PATH))
    assert rejected(act(state, claim("w", 1, "reactive_fire", sqare=[3, 6]))) == (
        "the options of reactive_fire: Object contains unknown field `sqare` (it takes square)")
    # The system's own words where it checks the shape itself.
    assert rejected(act(state, claim("w", 1, "reactive_fire", square="near"))) == "reactive_fire option 'square' must be a square [x, y]"
    assert state.window is not None and state.window.unanswered() == ["w"]
