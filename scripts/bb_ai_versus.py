#!/usr/bin/env python3
"""The Bolt & Blade AI against the AI before issue 12, on the 8-combatant demo.

Usage:
    ./dev firelane ... (not needed)   .venv/bin/python scripts/bb_ai_versus.py [--seeds 200]

Two checks, over the same seeds:

1. **Same decisions**: each seed's fight with the current AI on both sides has
   the same log as with the AI before the rewrite on both sides (what a dive
   claim names aside: the old AI left it to the engine, the new one names the
   same square, as the options list it).
2. **Head to head**: the current AI plays one side and the old AI the other,
   then the sides swap; the current AI's win rate over those fights (a draw
   counts half). Deciding the same, it wins exactly half.

The old AI is the frozen copy kept for this in tests/systems/bolt_and_blade/frozen_ai.py.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from firelane.engine.simulate import run_headless  # noqa: E402
from firelane.engine.systems.bolt_and_blade import SYSTEM, BoltAndBladeSystem, ai, demo_setup  # noqa: E402
from tests.systems.bolt_and_blade import frozen_ai  # noqa: E402
from tests.systems.bolt_and_blade.test_ai_options import FROZEN, comparable  # noqa: E402


class HeadToHead(BoltAndBladeSystem):
    """The current AI for the combatants of ``side``, the old one for the others."""

    def __init__(self, side: str) -> None:
        self.side = side

    def choose_command(self, state, combatant):  # type: ignore[no-untyped-def]
        mine = state.combatants[combatant].side == self.side
        return (ai if mine else frozen_ai).choose_command(state, combatant)


def seed_of(n: int) -> bytes:
    return n.to_bytes(4, "big") * 8


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=200)
    args = parser.parse_args()
    setup = demo_setup()
    sides = sorted({c.side for c in setup.combatants})
    began = time.perf_counter()
    different = []
    for n in range(args.seeds):
        new = comparable([e for _c, events, _s in run_headless(SYSTEM, setup, seed_of(n)) for e in events])
        old = comparable([e for _c, events, _s in run_headless(FROZEN, setup, seed_of(n)) for e in events])
        if new != old:
            different.append(n)
    print(f"same decisions: {args.seeds - len(different)} of {args.seeds} seeds identical" + (f"; different: {different}" if different else ""))
    wins = draws = games = 0
    for side in sides:
        system = HeadToHead(side)
        for n in range(args.seeds):
            final = None
            for _c, _events, state in run_headless(system, setup, seed_of(n)):
                final = state
            games += 1
            if final.winner == side:  # type: ignore[union-attr]
                wins += 1
            elif final.winner is None:  # type: ignore[union-attr]
                draws += 1
    rate = (wins + draws / 2) / games
    print(f"head to head: the current AI won {wins}, drew {draws} of {games} fights ({len(sides)} sides x {args.seeds} seeds): win rate {rate:.3f}")
    print(f"({time.perf_counter() - began:.0f} s)")
    if different or rate < 0.5:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
