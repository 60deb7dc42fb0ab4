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

from collections.abc import Callable, Iterator

from firelane.engine.core import SEQUENCER, BaseRuleSystem, Rejected, next_command_id, reject, resting_points
from firelane.engine.dice import SeededDice, commit_seed, dice_key
from firelane.engine.state import EncounterState
from firelane.events.schemas import (
    Command,
    CommandRejected,
    EncounterSetup,
    EndEncounter,
    EndTurn,
    Event,
    PassReaction,
    RewindEncounter,
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


# The people at a table: what a human combatant's player does in a state
# (None: nothing yet). Without them, the AI plays every combatant.
People = Callable[[EncounterState, str], "Command | None"]


def _answer(system: BaseRuleSystem, state: EncounterState, combatant: str, last_rejected: set[str],
            people: People | None) -> Command | None:
    if combatant in last_rejected:
        return fallback_command(state, combatant)
    if people is not None and state.combatants[combatant].policy == "human":
        return people(state, combatant)
    return system.choose_command(state, combatant) or fallback_command(state, combatant)


def next_ai_command(system: BaseRuleSystem, state: EncounterState, last_rejected: set[str],
                    people: People | None = None) -> Command | None:
    """The next command the awaited combatant gives, or None when nobody is awaited."""
    awaiting = system.awaiting(state)
    if not awaiting.combatants:
        return None
    return _answer(system, state, awaiting.combatants[0], last_rejected, people)


def window_answers(system: BaseRuleSystem, state: EncounterState, last_rejected: set[str],
                   people: People | None = None) -> list[Command]:
    """Every unanswered reactor's answer to the open window, decided on this one
    state, in the window's reactor order (empty when no window is open)."""
    if state.window is None:
        return []
    answers = []
    for combatant in state.window.unanswered():
        answer = _answer(system, state, combatant, last_rejected, people)
        if answer is not None:
            answers.append(answer)
    return answers


def run_headless(
    system: BaseRuleSystem,
    setup: EncounterSetup,
    seed: bytes,
    *,
    encounter: str = "headless",
    max_commands: int = 10_000,
    people: People | None = None,
    gm: Callable[[EncounterState], Command | None] | None = None,
    reproducible_dice: bool = False,
    log_public_key: str = "",
) -> Iterator[tuple[Command, list[Event], EncounterState]]:
    """Yield (command, events, state after) for every command until the encounter ends.

    ``people``: the players of "human" combatants (without them the AI plays
    everyone); ``gm``: the GM, asked before anyone else at every step between
    commands (a command it returns goes first). A GM's RewindEncounter is
    carried out as the live sequencer does (the state folded to the version
    asked for, restored). ``reproducible_dice``: the start says so, as a live
    fight created with a seed text does. ``log_public_key``: the key the
    start publishes, as a live fight's does (the store's: its log is signed).
    """
    state = system.initial_state()
    state.encounter = encounter
    start = StartEncounter(command_id="start", actor=SEQUENCER, setup=setup, seed_commitment=commit_seed(seed),
                           reproducible_dice=reproducible_dice, log_public_key=log_public_key)
    pending: Command | None = start
    rejected_last: set[str] = set()
    queued: list[Command] = []
    history: list[Event] = []  # every event so far, for a rewind to fold
    batch_ids: list[str] = []  # the command of each event (a batch per command), for the rewind's resting points
    for _ in range(max_commands):
        if pending is None and not queued and gm is not None and state.started:
            pending = gm(state)
        if pending is None and not queued:
            queued = window_answers(system, state, rejected_last, people)
        if pending is None and queued:
            pending = queued.pop(0)
        if pending is None:
            pending = next_ai_command(system, state, rejected_last, people)
        if pending is None:
            break
        command = pending
        pending = None
        if isinstance(command, RewindEncounter):
            queued = []  # answers decided on the abandoned branch go with it
            try:
                system.check_rewind(state, command, resting_points(batch_ids))
                past = system.initial_state()
                past.encounter = encounter
                for event in history[: command.to_version]:
                    system.evolve(past, event)
                command = system.rewind_to(state, command, past, resting_points(batch_ids))
            except Rejected as rejection:
                events = [reject(command, rejection.reason)]
                for event in events:
                    system.evolve(state, event)
                history += events
                batch_ids += [command.command_id] * len(events)
                rejected_last = {command.actor}
                yield command, events, state
                continue
        # Decided in place (nothing copied); a refusal after events were applied
        # spoils the state, which is then rebuilt from the history.
        applied = system.apply(state, command, SeededDice(dice_key(seed, state.client_seeds), state.branch_version), in_place=True)
        events = applied.events
        if applied.spoiled:
            state = system.initial_state()
            state.encounter = encounter
            for event in history:
                system.evolve(state, event)
            system.evolve(state, events[0])
        history += events
        batch_ids += [command.command_id] * len(events)
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
        events = system.decide_or_reject(state, stop, SeededDice(dice_key(seed, state.client_seeds), state.branch_version))
        for event in events:
            system.evolve(state, event)
        yield stop, events, state
