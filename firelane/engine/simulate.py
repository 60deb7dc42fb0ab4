"""Run a whole encounter in memory, no Redis, no trio: the pure reference loop.

Used by rule tests (a full AI fight), the benchmark's baseline, and the crash
test's reference run. The live runtime (actors + sequencer) must produce the
same events as this loop for the same setup and seed, because AI policies are
deterministic functions of the state and dice are a function of the seed and
the log position.

Reaction windows follow the live sequencer's rule: every reactor answers from
the state in which the window opened (answers are buffered, nothing is written
while a window collects them), and the answers are applied in the order the
window lists its reactors. So the log does not depend on which reactor's
message happened to arrive first.
"""

from __future__ import annotations

from collections.abc import Iterator

from firelane.engine.core import SEQUENCER, BaseRuleSystem, next_command_id
from firelane.engine.dice import SeededDice, commit_seed
from firelane.engine.state import EncounterState
from firelane.events.schemas import (
    Command,
    CommandRejected,
    EncounterSetup,
    EndEncounter,
    EndTurn,
    Event,
    PassReaction,
    SeedRevealed,
    StartEncounter,
)


class StalledEncounter(RuntimeError):
    pass


def fallback_command(state: EncounterState, combatant: str) -> Command:
    """What a combatant does when its policy has nothing (or was just rejected):
    pass the open window, or end its turn."""
    command_id = next_command_id(state, combatant)
    if state.window is not None:
        return PassReaction(command_id=command_id, actor=combatant, window=state.window.window)
    return EndTurn(command_id=command_id, actor=combatant)


def next_ai_command(system: BaseRuleSystem, state: EncounterState, last_rejected: set[str]) -> Command | None:
    """The next command the AI side gives, or None when nobody is awaited."""
    awaiting = system.awaiting(state)
    if not awaiting.combatants:
        return None
    combatant = awaiting.combatants[0]
    if combatant in last_rejected:
        return fallback_command(state, combatant)
    return system.choose_command(state, combatant) or fallback_command(state, combatant)


def window_answers(system: BaseRuleSystem, state: EncounterState, last_rejected: set[str]) -> list[Command]:
    """Every unanswered reactor's answer to the open window, decided on this one
    state, in the window's reactor order (empty when no window is open)."""
    if state.window is None:
        return []
    answers = []
    for combatant in state.window.unanswered():
        if combatant in last_rejected:
            answers.append(fallback_command(state, combatant))
        else:
            answers.append(system.choose_command(state, combatant) or fallback_command(state, combatant))
    return answers


def run_headless(
    system: BaseRuleSystem,
    setup: EncounterSetup,
    seed: bytes,
    *,
    encounter: str = "headless",
    max_commands: int = 10_000,
) -> Iterator[tuple[Command, list[Event], EncounterState]]:
    """Yield (command, events, state after) for every command until the encounter ends."""
    state = system.initial_state()
    state.encounter = encounter
    start = StartEncounter(command_id="start", actor=SEQUENCER, setup=setup, seed_commitment=commit_seed(seed))
    pending: Command | None = start
    rejected_last: set[str] = set()
    queued: list[Command] = []
    for _ in range(max_commands):
        if pending is None and not queued:
            queued = window_answers(system, state, rejected_last)
        if pending is None and queued:
            pending = queued.pop(0)
        if pending is None:
            pending = next_ai_command(system, state, rejected_last)
        if pending is None:
            break
        command = pending
        pending = None
        events = system.decide_or_reject(state, command, SeededDice(seed, state.version))
        for event in events:
            system.evolve(state, event)
        rejected_last = {command.actor} if any(isinstance(e, CommandRejected) for e in events) else set()
        if state.ended and not state.seed_revealed:
            reveal = SeedRevealed(seed=seed.hex())
            system.evolve(state, reveal)
            events = [*events, reveal]
        yield command, events, state
        if state.ended:
            return
    if not state.ended:
        stop = EndEncounter(command_id="stop", actor=SEQUENCER, reason=f"command limit ({max_commands}) reached")
        events = system.decide_or_reject(state, stop, SeededDice(seed, state.version))
        for event in events:
            system.evolve(state, event)
        yield stop, events, state
