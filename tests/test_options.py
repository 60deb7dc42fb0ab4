"""``options(state, seat)``: what a seat may do now, for every system.

The contract a frontend relies on: every command an option lists is accepted
by ``decide`` in that state, and a combatant that may do nothing says why.
(Each system's own tests check its numbers: modifiers, hit chances, paths.)
"""

from __future__ import annotations

import random

import msgspec
import pytest

from firelane.engine.core import Rejected
from firelane.engine.dice import SeededDice
from firelane.engine.registry import demo_setup, get_system
from firelane.engine.seats import ENGINE_SEAT
from firelane.engine.simulate import run_headless
from firelane.events import codec
from firelane.events.options_schemas import SeatOptions
from firelane.events.schemas import EndTurn

SYSTEMS = ["bolt-and-blade", "d100-degrees", "d100-zones", "rond6"]


def listed_commands(options: SeatOptions) -> list[dict]:
    commands = []
    for combatant in options.combatants:
        commands += [m.command for m in combatant.moves]
        commands += [a.command for a in combatant.attacks]
        commands += [choice.command for action in combatant.actions for choice in action.choices]
        if combatant.end_turn is not None:
            commands.append(combatant.end_turn)
        if combatant.window is not None:
            commands.append(combatant.window.pass_command)
            commands += [choice.command for reaction in combatant.window.reactions for choice in reaction.choices]
    return commands


def sampled_states(system_name: str, seed: bytes, every: int = 3):
    system = get_system(system_name)
    for index, (_command, _events, state) in enumerate(run_headless(system, demo_setup(system_name), seed)):
        if state.ended:
            return
        if index % every == 0:
            yield system, msgspec.msgpack.decode(msgspec.msgpack.encode(state), type=type(state))


@pytest.mark.parametrize("system_name", SYSTEMS)
def test_every_listed_command_is_accepted_by_decide(system_name: str) -> None:
    union = codec.command_union(get_system(system_name).command_types)
    chooser = random.Random(7)
    checked = 0
    for system, state in sampled_states(system_name, system_name.encode().ljust(32, b"o")):
        options = system.options(state, ENGINE_SEAT)
        assert options.version == state.version
        commands = listed_commands(options)
        for body in chooser.sample(commands, min(len(commands), 12)):
            command = msgspec.convert({**body, "command_id": "opt"}, union)
            try:
                system.decide(state, command, SeededDice(b"d" * 32, state.branch_version))
            except Rejected as rejection:
                raise AssertionError(f"listed but refused at v{state.version}: {body} — {rejection.reason}") from None
            checked += 1
    assert checked > 20


@pytest.mark.parametrize("system_name", SYSTEMS)
def test_a_combatant_that_may_not_act_says_why_and_its_end_turn_is_refused(system_name: str) -> None:
    seen = 0
    for system, state in sampled_states(system_name, b"w" * 32):
        for combatant in system.options(state, ENGINE_SEAT).combatants:
            if not combatant.why_not:
                continue
            assert combatant.end_turn is None and not combatant.moves and not combatant.attacks
            seen += 1
            if state.window is None and not state.combatants[combatant.combatant].out_of_fight:
                with pytest.raises(Rejected):
                    system.decide(state, EndTurn(command_id="x", actor=combatant.combatant), SeededDice(b"d" * 32, 0))
    assert seen > 0


def test_a_seat_sees_only_its_own_combatants_and_the_gm_its_commands() -> None:
    system = get_system("bolt-and-blade")
    setup = demo_setup("bolt-and-blade")
    human = [c.id for c in setup.combatants if c.side == setup.combatants[0].side]
    setup = msgspec.structs.replace(setup, combatants=[
        msgspec.structs.replace(c, policy="human") if c.id in human else c for c in setup.combatants])
    _command, _events, state = next(iter(run_headless(system, setup, b"s" * 32)))
    side = setup.combatants[0].side
    player = system.options(state, side)
    assert player.role == "player" and [c.combatant for c in player.combatants] == human
    engine = system.options(state, ENGINE_SEAT)
    assert {c.combatant for c in engine.combatants} == {c.id for c in setup.combatants} - set(human)
    gm = system.options(state, "gm")
    assert gm.combatants == [] and gm.gm is not None
    assert {"GMAdjust", "GMSkipTurn", "GMRule", "RewindEncounter", "EndEncounter"} == set(gm.gm.commands)
    assert set(gm.gm.sides) == {c.side for c in setup.combatants}
    with pytest.raises(Rejected, match="unknown seat"):
        system.options(state, "nobody")


def test_the_options_are_typed_in_the_json_schema() -> None:
    schema = msgspec.json.schema(SeatOptions)
    defs = schema["$defs"]
    assert {"SeatOptions", "CombatantOptions", "MoveOption", "AttackOption", "Threat", "WindowOptions",
            "ReactionOption", "Choice", "ActionOption", "GMOptions", "GMCall"} <= set(defs)
    assert defs["AttackOption"]["properties"]["hit_chance"]["type"] == "number"
    assert defs["MoveOption"]["properties"]["path"]["type"] == "array"
