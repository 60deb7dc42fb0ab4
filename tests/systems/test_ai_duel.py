"""The duel of the issue-9 AI against the frozen AI it replaced (tests/systems/ai_duel.py):
a couple of seeds here, that the machinery plays real fights with one AI a side;
the 200-seed run is the script's (``python -m tests.systems.ai_duel``)."""

from __future__ import annotations

import pytest

from firelane.engine.registry import demo_setup

from . import ai_duel


@pytest.mark.parametrize("system_name", sorted(ai_duel.FROZEN))
def test_a_duel_plays_whole_fights_with_the_sides_swapped(system_name: str) -> None:
    results = [ai_duel.duel(system_name, seed, new_side_first=seed % 2 == 0) for seed in range(2)]
    assert all(result in (0.0, 0.5, 1.0) for result in results)
    rate, tally = ai_duel.win_rate(system_name, 2)
    assert rate == sum(results) / 2 and sum(tally.values()) == 2


def test_the_frozen_ai_plays_the_other_side() -> None:
    """The old AI answers for "human" combatants: its commands differ from the new AI's somewhere in a fight."""
    from firelane.engine.registry import get_system
    from firelane.engine.simulate import run_headless

    system = get_system("d100-zones")
    play = ai_duel.frozen_player("d100-zones")
    differ = 0
    for _command, _events, state in run_headless(system, demo_setup("d100-zones"), b"f" * 32):
        if state.ended:
            break
        for cid in system.awaiting(state).combatants:
            new, old = system.choose_command(state, cid), play(state, cid)
            differ += new is not None and type(new) is type(old) and new != old
    assert differ > 0
