"""The issue-9 AI against the AI it replaced: whole demo fights, one side each.

The new AI (each system's ``choose_command``, which picks from the options)
plays one side of the system's demo encounter and the frozen copy of the AI
before issue 9 (`tests.systems.frozen_ai`, kept only here) plays the other;
the sides swap every seed, so neither AI always has the demo's stronger side.
A fight is won by the side the engine names winner; a fight without one
(the round limit) counts half to each.

Run: ``.venv/bin/python -m tests.systems.ai_duel --system d100-degrees --seeds 200``
(tests/systems/test_ai_duel.py runs a few seeds of it in the suite); ``--mirror``
plays the old AI on both sides (the seeds' own bias), ``--cost`` times both AIs.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from collections.abc import Callable

import msgspec

from firelane.engine.registry import demo_setup, get_system
from firelane.engine.simulate import fallback_command, run_headless
from firelane.engine.state import EncounterState
from firelane.events.schemas import Command

FROZEN = {"d100-degrees": "d100_degrees", "d100-zones": "d100_zones", "rond6": "rond6"}


def frozen_player(system_name: str) -> Callable[[EncounterState, str], Command | None]:
    """Today's AI before issue 9, as a player of "human" combatants."""
    system = get_system(system_name)
    module = importlib.import_module(f"tests.systems.frozen_ai.{FROZEN[system_name]}")
    choose = module.choose_command if system_name == "rond6" else module.choose

    def play(state: EncounterState, combatant: str) -> Command | None:
        return choose(system, state, combatant) or fallback_command(state, combatant)

    return play


def duel(system_name: str, seed: int, new_side_first: bool, *, mirror: bool = False) -> float:
    """One fight: 1 if the new AI's side wins, 0 if it loses, 0.5 without a winner.
    ``mirror``: the frozen AI on both sides (the same seeds and sides): how far
    from 50 % the seeds alone put the score."""
    system = get_system(system_name)
    setup = demo_setup(system_name)
    sides = list(dict.fromkeys(c.side for c in setup.combatants))
    new_side = sides[0] if new_side_first else sides[1]
    setup = msgspec.structs.replace(setup, combatants=[
        c if c.side == new_side and not mirror else msgspec.structs.replace(c, policy="human") for c in setup.combatants])
    state = None
    for _command, _events, state in run_headless(system, setup, f"duel-{seed}".encode().ljust(32, b"."),
                                                 people=frozen_player(system_name)):
        pass
    assert state is not None and state.ended
    if state.winner is None:
        return 0.5
    return 1.0 if state.winner == new_side else 0.0


def win_rate(system_name: str, seeds: int, *, mirror: bool = False) -> tuple[float, dict[str, int]]:
    tally = {"won": 0, "lost": 0, "drawn": 0}
    score = 0.0
    for seed in range(seeds):
        result = duel(system_name, seed, new_side_first=seed % 2 == 0, mirror=mirror)
        score += result
        tally["won" if result == 1 else "lost" if result == 0 else "drawn"] += 1
    return score / seeds, tally


def cpu_per_command(system_name: str, seeds: int = 20, repeats: int = 3) -> tuple[float, float, int]:
    """CPU milliseconds per AI command, old AI and new, over the same states
    (every state of the demo fights of ``seeds`` seeds, every awaited
    combatant): the best of ``repeats`` timings each."""
    system = get_system(system_name)
    old = frozen_player(system_name)
    calls = []
    for seed in range(seeds):
        for _command, _events, state in run_headless(system, demo_setup(system_name), f"cost-{seed}".encode().ljust(32, b".")):
            if state.ended:
                break
            copy = msgspec.msgpack.decode(msgspec.msgpack.encode(state), type=type(state))
            calls += [(copy, cid) for cid in system.awaiting(copy).combatants]

    def timed(choose: Callable[[EncounterState, str], object]) -> float:
        best = float("inf")
        for _ in range(repeats):
            started = time.process_time()
            for state, cid in calls:
                choose(state, cid)
            best = min(best, time.process_time() - started)
        return best / len(calls) * 1000

    return timed(old), timed(system.choose_command), len(calls)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--system", action="append", choices=sorted(FROZEN), help="rule system (repeatable; default: all three)")
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--mirror", action="store_true", help="the old AI on both sides: the seeds' own bias")
    parser.add_argument("--cost", action="store_true", help="CPU per AI command, old and new, instead of the duel")
    args = parser.parse_args(argv)
    for name in args.system or sorted(FROZEN):
        if args.cost:
            old_ms, new_ms, count = cpu_per_command(name)
            print(f"{name}: {count} AI commands: old AI {old_ms:.3f} ms, new AI {new_ms:.3f} ms CPU each, ratio {new_ms / old_ms:.1f}")
            continue
        started = time.process_time()
        rate, tally = win_rate(name, args.seeds, mirror=args.mirror)
        who = "old AI (mirror) on the new AI's side" if args.mirror else "new AI"
        print(f"{name}: {who} scores {rate:.1%} over {args.seeds} seeds "
              f"(won {tally['won']}, lost {tally['lost']}, no winner {tally['drawn']}; {time.process_time() - started:.0f} s CPU)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
