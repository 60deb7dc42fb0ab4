"""Shared checks for the options property tests of each rule system (issue 9):
states sampled from demo fights, every listed command decided, moves by
destination compared with the listed path."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import msgspec

from firelane.engine.core import BaseRuleSystem, Rejected
from firelane.engine.dice import Dice, SeededDice
from firelane.engine.registry import demo_setup, get_system
from firelane.engine.seats import ENGINE_SEAT
from firelane.engine.simulate import run_headless
from firelane.engine.state import EncounterState
from firelane.events import codec
from firelane.events.options_schemas import SeatOptions
from firelane.events.schemas import Command, Die, Moved

from ..test_options import listed_commands


def demo_states(system_name: str, seeds: list[bytes], every: int = 1) -> Iterator[tuple[BaseRuleSystem, EncounterState]]:
    """Copies of every ``every``-th state of the demo fight, for each seed."""
    system = get_system(system_name)
    for seed in seeds:
        for index, (_command, _events, state) in enumerate(run_headless(system, demo_setup(system_name), seed)):
            if state.ended:
                break
            if index % every == 0:
                yield system, msgspec.msgpack.decode(msgspec.msgpack.encode(state), type=type(state))


def as_command(system: BaseRuleSystem, body: dict[str, Any]) -> Command:
    return msgspec.convert({**body, "command_id": "opt"}, codec.command_union(system.command_types))


def decide_listed(system: BaseRuleSystem, state: EncounterState, body: dict[str, Any], seed: bytes = b"d" * 32) -> list:
    """Decide a listed command; a refusal fails the test with the reason."""
    try:
        return system.decide(state, as_command(system, body), SeededDice(seed, state.branch_version))
    except Rejected as rejection:
        raise AssertionError(f"listed but refused at v{state.version}: {body} — {rejection.reason}") from None


def check_every_listed_command(system: BaseRuleSystem, state: EncounterState) -> tuple[SeatOptions, int]:
    """Decide every command the engine seat's options list (not a sample)."""
    options = system.options(state, ENGINE_SEAT)
    commands = listed_commands(options)
    for body in commands:
        decide_listed(system, state, body)
    return options, len(commands)


def check_moves_follow_listed_paths(system: BaseRuleSystem, state: EncounterState, options: SeatOptions, *, whole: bool = True) -> int:
    """Each listed move (a destination only) walks the listed path: all of it, or
    (``whole`` false: a failed movement test may stop a run short) its start."""
    checked = 0
    for combatant in options.combatants:
        for move in combatant.moves:
            assert "path" not in move.command or not move.command["path"], "a listed move names its destination only"
            events = decide_listed(system, state, move.command)
            moved = [e for e in events if isinstance(e, Moved) and e.combatant == combatant.combatant]
            if moved:  # a window (free attacks, a Wait interrupt) may hold the move back
                walked = [tuple(sq) for sq in moved[0].path]
                if whole:
                    assert walked == [tuple(sq) for sq in move.path]
                else:
                    assert walked == [tuple(sq) for sq in move.path][: len(walked)]
                assert move.path[-1] == tuple(move.to)
            checked += 1
    return checked


class FacesThenOnes(Dice):
    """Shows the given faces first, then ones: enough for any follow-up roll,
    so one decision can be tried with each face of the die that matters."""

    def __init__(self, *faces: int) -> None:
        self.faces, self.count = list(faces), 0

    def roll(self, sides: int) -> Die:
        face = self.faces[self.count] if self.count < len(self.faces) else 1
        self.count += 1
        return Die(sides=sides, face=min(face, sides), at=-1, k=self.count - 1)


def check_listed_commands_sampling_moves(
    system: BaseRuleSystem, state: EncounterState, chooser: random.Random, moves: int = 25
) -> tuple[SeatOptions, int]:
    """Decide every listed command but the moves, and ``moves`` of those picked at random."""
    options = system.options(state, ENGINE_SEAT)
    commands = listed_commands(options)
    all_moves = [m.command for c in options.combatants for m in c.moves]
    others = [c for c in commands if c not in all_moves]
    picked = others + chooser.sample(all_moves, min(moves, len(all_moves)))
    for body in picked:
        decide_listed(system, state, body)
    return options, len(picked)
