"""The narration: one readable line per event, for every system's demo."""

from __future__ import annotations

import pytest

from firelane.engine.registry import demo_setup, get_system
from firelane.engine.simulate import run_headless
from firelane.frontends.narrate import Narrator
from firelane.frontends.narrate_systems import SENTENCES


@pytest.mark.parametrize("system_name", ["bolt-and-blade", "d100-degrees", "d100-zones", "rond6"])
def test_every_event_of_a_demo_fight_narrates_without_raw_tags_for_known_events(system_name: str) -> None:
    system = get_system(system_name)
    narrator = Narrator(colour=False)
    lines = []
    state = system.initial_state()
    state.encounter = "headless"
    all_events = [e for _c, events, _s in run_headless(system, demo_setup(system_name), b"n" * 32) for e in events]
    for version, event in enumerate(all_events, start=1):
        system.evolve(state, event)
        line = narrator.line(version, event, state)
        lines.append(line)
        tag = type(event).__struct_config__.tag
        if tag in SENTENCES:
            assert f" {tag} " not in line, line  # a sentence, not the field dump
    text = "\n".join(lines)
    assert "Encounter over:" in text and "Initiative" in text
    assert "\x1b[" not in text  # no colour codes when colour is off


def test_colour_marks_hits_and_sides() -> None:
    system = get_system("bolt-and-blade")
    narrator = Narrator(colour=True)
    state = system.initial_state()
    state.encounter = "headless"
    coloured = []
    for _c, events, _s in run_headless(system, demo_setup("bolt-and-blade"), b"c" * 32):
        for event in events:
            system.evolve(state, event)
            coloured.append(narrator.line(state.version, event, state))
    joined = "\n".join(coloured)
    assert "\x1b[31;1mHIT" in joined and "\x1b[36;1m" in joined and "\x1b[35;1m" in joined
