"""Property: whatever mix of aux commands (moves, runs, jumps, area attacks, breaking
objects, healing) is played with seeded dice, replaying the events from an empty
state rebuilds exactly the live state (R6-01, R6-09..12, R6-25, R6-40..43)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from firelane.engine.core import SEQUENCER, next_command_id
from firelane.engine.dice import SeededDice
from firelane.engine.systems.rond6 import SYSTEM
from firelane.engine.systems.rond6.areas import choose_area_attack
from firelane.engine.systems.rond6.movement import path_towards
from firelane.engine.systems.rond6.aux_schemas import R6AreaAttack, R6BreakObject, R6Heal, R6HoldBreath, R6Jump, R6Move
from firelane.engine.systems.rond6.schemas import R6DeclareActions
from firelane.events.schemas import (
    CombatantSetup,
    Command,
    EncounterSetup,
    EndTurn,
    PassReaction,
    StartEncounter,
    Terrain,
    Wall,
)

from tests.systems.rond6.test_aux_support import sheet

GRENADE = {"id": "grenade", "name": "grenade", "kind": "thrown", "skill": "throwing", "damage": "4D",
           "ranges": [4, 8, 12], "capacity": 3, "modes": ["burst:small"]}
AXE = {"id": "axe", "name": "axe", "kind": "melee", "skill": "melee_weapons", "damage": "STR+1D"}


def setup() -> EncounterSetup:
    def member(cid: str, side: str, position: tuple[int, int]) -> CombatantSetup:
        return CombatantSetup(id=cid, name=cid, side=side, position=position, sheet=sheet(
            weapons=[GRENADE, AXE], readied=["grenade", "axe"],
            skills={"throwing": "4D", "medicine": "3D+1", "melee_weapons": "4D", "fortitude": "2D"},
            attributes={"Perception": "2D"}))
    return EncounterSetup(
        system="rond6",
        combatants=[member("r1", "red", (1, 1)), member("r2", "red", (1, 3)), member("b1", "blue", (10, 1)), member("b2", "blue", (10, 4))],
        terrain=Terrain(width=14, height=8, walls=[Wall(5, 2), Wall(5, 3)], difficult=[(7, 1), (7, 2)]),
        settings={"objects": [{"id": "crate", "name": "crate", "construction": "flimsy", "square": [6, 5]}]},
    )


def pick(state, actor: str, choice: int) -> Command:  # type: ignore[no-untyped-def]
    me = state.combatants[actor]
    cid = next_command_id(state, actor)
    if me.declared_actions == 0:
        return R6DeclareActions(command_id=cid, actor=actor, count=2)
    if me.actions_used >= me.declared_actions or me.full_action:
        return EndTurn(command_id=cid, actor=actor)
    foes = sorted((c for c in state.combatants.values() if c.side != me.side and not c.out_of_fight), key=lambda c: c.id)
    friends = sorted((c for c in state.combatants.values() if c.side == me.side and c.id != actor), key=lambda c: c.id)
    goal = tuple(foes[0].position) if foes else (0, 0)
    if choice == 0:
        return R6Move(command_id=cid, actor=actor, path=path_towards(state, actor, goal, 2), pace="partial")
    if choice == 1:
        return R6Move(command_id=cid, actor=actor, path=path_towards(state, actor, goal, 7), pace="run")
    if choice == 2:
        return choose_area_attack(SYSTEM, state, actor) or R6AreaAttack(command_id=cid, actor=actor, weapon="grenade", center=goal)
    if choice == 3 and friends:
        patient = max(friends, key=lambda c: (c.wounds, c.id))
        return R6Heal(command_id=cid, actor=actor, patient=patient.id)
    if choice == 4:
        target = "crate" if max(abs(me.position[0] - 6), abs(me.position[1] - 5)) <= 1 else "wall@5,2"
        if target == "wall@5,2" and max(abs(me.position[0] - 5), abs(me.position[1] - 2)) > 1:
            return R6Move(command_id=cid, actor=actor, path=path_towards(state, actor, (6, 5), 2), pace="partial")
        return R6BreakObject(command_id=cid, actor=actor, target=target, weapon="axe")
    if choice == 5:
        step = path_towards(state, actor, goal, 1)
        return R6Jump(command_id=cid, actor=actor, path=step)
    if choice == 6:
        return R6HoldBreath(command_id=cid, actor=actor)
    return EndTurn(command_id=cid, actor=actor)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.binary(min_size=32, max_size=32), choices=st.lists(st.integers(0, 7), min_size=1, max_size=60))
def test_r6_aux_replay_of_random_aux_play_equals_live_state(seed: bytes, choices: list[int]) -> None:
    """R6-01/R6-09..12/R6-25/R6-40..43 property: the log alone rebuilds the live state."""
    state = SYSTEM.initial_state()
    state.encounter = "headless"
    log = []

    def play(command: Command) -> None:
        events = SYSTEM.decide_or_reject(state, command, SeededDice(seed, state.version))
        for event in events:
            SYSTEM.evolve(state, event)
        log.extend(events)

    play(StartEncounter(command_id="start", actor=SEQUENCER, setup=setup(), seed_commitment="x"))
    for choice in choices:
        if state.ended:
            break
        if state.window is not None:
            for reactor in state.window.unanswered():
                play(PassReaction(command_id=next_command_id(state, reactor), actor=reactor, window=state.window.window))
            continue
        if choice == 7 and any(c.wounds for c in state.combatants.values()):
            patient = min((c for c in state.combatants.values() if c.wounds), key=lambda c: c.id)
            play(R6Heal(command_id=f"gm@{state.version}", actor=SEQUENCER, patient=patient.id, kind="natural", rested_minutes=10**6))
            continue
        play(pick(state, state.active, choice))  # type: ignore[arg-type]
    rebuilt = SYSTEM.initial_state()
    rebuilt.encounter = "headless"
    for event in log:
        SYSTEM.evolve(rebuilt, event)
    assert rebuilt == state
