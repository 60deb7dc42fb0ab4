"""RonD6 AI, sample data and whole fights: determinism, sensible choices, headless
fights that end, and replay (also through the JSON codec) rebuilding the live state."""

from __future__ import annotations

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from firelane.engine.simulate import run_headless
from firelane.engine.state import copy_state
from firelane.engine.systems.rond6 import (
    SYSTEM,
    demo_setup,
    load_data,
    sheet_from_template,
)
from firelane.events import codec
from firelane.engine.systems.rond6.aux_schemas import R6Move
from firelane.engine.systems.rond6.schemas import (
    R6Attack,
    R6Charge,
    R6DeclareActions,
    R6Escape,
    R6Ready,
    R6Stand,
    R6Wait,
)
from firelane.events.schemas import ClaimReaction, CombatantSetup, EndTurn, PassReaction
from tests.systems.rond6.r6helpers import (
    KNIFE,
    RIFLE,
    act,
    cmd,
    combatant,
    setup,
    start,
)


def play(encounter, seed: bytes):
    log, final = [], None
    for _command, events, state in run_headless(SYSTEM, encounter, seed):
        log.extend(events)
        final = state
    return log, final


def rebuild(log) -> object:
    state = SYSTEM.initial_state()
    state.encounter = "headless"
    for event in log:
        SYSTEM.evolve(state, event)
    return state


# --------------------------------------------------------------------------- sample data


def test_sample_data_templates_build_and_the_demo_has_two_squads() -> None:
    """The catalogue's templates are valid sheets; the demo has two sides of 3-5 on its own map."""
    data = load_data()
    for name in data["templates"]:
        combatant_setup = CombatantSetup(id=name, name=name, side="x", position=(0, 0), sheet=sheet_from_template(name))
        built = SYSTEM.build_combatant(combatant_setup, SYSTEM.default_settings)
        assert built.weapons and built.attributes["Agility"]
    demo = demo_setup()
    sides = {c.side for c in demo.combatants}
    assert demo.system == "rond6" and len(sides) == 2
    assert all(3 <= sum(c.side == side for c in demo.combatants) <= 5 for side in sides)
    assert demo.terrain.walls and demo.terrain.cover
    assert {c.sheet.get("group") for c in demo.combatants} >= {"gangers"}


# --------------------------------------------------------------------------- whole fights


def test_demo_fights_end_with_a_winner_and_replay_exactly() -> None:
    """A demo fight between the AI squads ends (one side down) well within the round limit for
    most seeds, and replaying the log from the initial state rebuilds the final state."""
    ended = 0
    for n in range(8):
        log, final = play(demo_setup(), bytes([n]) * 32)
        assert final.ended and final.seed_revealed
        if final.winner is not None:
            ended += 1
            assert final.round <= 30
        assert rebuild(log) == final
    assert ended >= 7


def test_a_melee_brawl_with_charges_ends() -> None:
    """Knife fighters close in by Charge or moving and finish the fight."""
    encounter = setup(
        combatant("a", "red", (0, 0), weapons=[KNIFE], readied=["knife"]),
        combatant("b", "red", (0, 3), weapons=[KNIFE], readied=["knife"]),
        combatant("x", "blue", (9, 1), weapons=[KNIFE], readied=["knife"]),
        combatant("y", "blue", (9, 4), weapons=[KNIFE], readied=["knife"]),
    )
    log, final = play(encounter, b"m" * 32)
    assert final.winner in ("red", "blue")
    kinds = {type(e).__name__ for e in log}
    assert "AttackResolved" in kinds and "CombatantDown" in kinds
    assert rebuild(log) == final


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(min_size=32, max_size=32))
def test_property_replaying_the_json_log_rebuilds_the_live_state(seed: bytes) -> None:
    """For any seed: the events, encoded to JSON and decoded again, replay to the live final state."""
    codec.register_events(SYSTEM.event_types)
    log, final = play(demo_setup(), seed)
    state = SYSTEM.initial_state()
    state.encounter = "headless"
    for event in log:
        entry = codec.encode_event(event)
        SYSTEM.evolve(state, codec.decode_body(entry.type, entry.schema, entry.data))
    assert state == final


# --------------------------------------------------------------------------- the AI's choices


def ai(state, combatant_id: str):
    first = SYSTEM.choose_command(state, combatant_id)
    again = SYSTEM.choose_command(copy_state(state), combatant_id)
    assert first == again  # a pure function of the state
    return first


def test_ai_declares_one_action_and_uses_the_big_options_alone() -> None:
    """Alone in its round: Full Auto with an automatic weapon; All-Out Attack in melee."""
    state = start(setup(combatant("a", "red", (0, 0), weapons=[RIFLE], readied=["rifle"]), combatant("b", "blue", (3, 0))), [4, 4, 4, 2, 2, 2])
    declare = ai(state, "a")
    assert isinstance(declare, R6DeclareActions) and declare.count == 1
    act(state, declare)
    attack = ai(state, "a")
    assert isinstance(attack, R6Attack) and (attack.target, attack.option) == ("b", "full_auto")
    state = start(setup(combatant("a", "red", (0, 0), readied=["knife"]), combatant("b", "blue", (1, 0))), [4, 4, 4, 2, 2, 2])
    act(state, ai(state, "a"))
    assert ai(state, "a").option == "all_out"


def test_ai_stands_reloads_and_breaks_free_before_attacking() -> None:
    """Preparations first: stand up, break a grapple, reload; declared as extra actions."""
    state = start(setup(combatant("a", "red", (0, 0), ammo={"pistol": 0}, reloads={"pistol": 1}, conditions={"prone": ""}),
                        combatant("b", "blue", (3, 0))), [4, 4, 4, 2, 2, 2])
    declare = ai(state, "a")
    assert declare.count == 3
    act(state, declare)
    assert isinstance(ai(state, "a"), R6Stand)
    act(state, ai(state, "a"))
    ready = ai(state, "a")
    assert isinstance(ready, R6Ready) and ready.reload
    act(state, ready)
    assert isinstance(ai(state, "a"), R6Attack)
    state = start(setup(combatant("a", "red", (0, 0)), combatant("b", "blue", (1, 0))), [4, 4, 4, 2, 2, 2])
    state.combatants["a"].grappled_by = "b"
    act(state, ai(state, "a"))
    assert isinstance(ai(state, "a"), R6Escape)


def listed_move_path(state, move: R6Move) -> list[tuple[int, int]]:
    """The path the options show for a move by destination (the path the engine walks)."""
    from firelane.engine.core import command_json
    from firelane.engine.systems.rond6 import SYSTEM, options

    option = options.move_option(SYSTEM, state, state.combatants[move.actor], move.to, move.pace, move.mode)
    assert option is not None and option.command == command_json(move)
    return option.path


def test_ai_moves_towards_enemies_out_of_reach_and_holders_wait() -> None:
    """Out of reach: move closer (or charge in melee); a "hold" combatant Waits instead."""
    state = start(setup(combatant("a", "red", (0, 0), readied=["knife"]), combatant("b", "blue", (15, 0))), [4, 4, 4, 2, 2, 2])
    act(state, ai(state, "a"))
    move = ai(state, "a")
    # By destination, as the options list it (issue 9): the listed path starts towards b.
    assert isinstance(move, R6Move) and move.to is not None and not move.path
    assert listed_move_path(state, move)[0] == (1, 0)
    state = start(setup(combatant("a", "red", (0, 0), readied=["knife"]), combatant("b", "blue", (5, 0))), [4, 4, 4, 2, 2, 2])
    act(state, ai(state, "a"))
    assert isinstance(ai(state, "a"), R6Charge)
    state = start(setup(combatant("a", "red", (0, 0), tactic="hold", readied=["knife"]), combatant("b", "blue", (20, 0))), [4, 4, 4, 2, 2, 2])
    act(state, ai(state, "a"))
    assert isinstance(ai(state, "a"), R6Wait)
    act(state, ai(state, "a"))
    assert ai(state, "a") is None  # nothing else to do: the driver ends the turn


def test_ai_in_windows() -> None:
    """Defense only when it beats Passive Defense; interrupt an enemy in reach; spend points on wounding hits."""
    state = start(setup(combatant("a", "red", (0, 0)), combatant("b", "blue", (3, 0), skills={"dodge": "7D"}),
                        combatant("c", "blue", (3, 3))), [4, 4, 4, 2, 2, 2, 1, 1, 1])
    act(state, cmd(R6DeclareActions, "a", count=1))
    act(state, cmd(R6Attack, "a", target="b"))
    claim = ai(state, "b")
    assert isinstance(claim, ClaimReaction) and claim.reaction == "dodge"  # 7D - 1D: 21 > 16
    state = start(setup(combatant("a", "red", (0, 0)), combatant("b", "blue", (3, 0))), [4, 4, 4, 2, 2, 2])
    act(state, cmd(R6DeclareActions, "a", count=1))
    act(state, cmd(R6Attack, "a", target="b"))
    assert isinstance(ai(state, "b"), PassReaction)  # dodge 4D - 1D: 10.5 < 16
    state = start(setup(combatant("a", "red", (0, 0)), combatant("b", "blue", (3, 0), fate_points=1, wounds=1)), [4, 4, 4, 2, 2])
    act(state, cmd(R6DeclareActions, "a", count=1))
    act(state, cmd(R6Attack, "a", target="b"))
    act(state, ai(state, "b"), [5, 5, 5, 5] + [6, 6, 6, 6, 6, 2])  # b passes; hit 20, damage 32 + 4
    resist = ai(state, "b")
    # The listed claim (issue 9) names both spends: no Character Points, the Fate Point.
    assert isinstance(resist, ClaimReaction) and resist.options == {"character_points": 0, "fate_point": True}
    state = start(setup(combatant("a", "red", (0, 0)), combatant("b", "blue", (3, 0))), [4, 4, 4, 2, 2, 2])
    act(state, cmd(R6DeclareActions, "a", count=2))
    act(state, cmd(R6Wait, "a"))
    act(state, cmd(EndTurn, "a"))
    act(state, cmd(R6DeclareActions, "b", count=1))
    act(state, cmd(R6Attack, "b", target="a"))
    interrupt = ai(state, "a")
    # The listed interrupting attack (issue 9): the full command, every field spelled out.
    attack = interrupt.options["command"]
    assert interrupt.reaction == "interrupt" and (attack["type"], attack["target"], attack["weapon"], attack["option"]) == ("R6Attack", "b", "pistol", "normal")
    assert msgspec.to_builtins(interrupt)["window"] == 1
