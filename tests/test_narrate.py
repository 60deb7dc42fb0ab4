"""The narration: one readable line per event, for every system's demo."""

from __future__ import annotations

import pytest

from firelane.engine.registry import demo_setup, get_system
from firelane.engine.simulate import run_headless
from firelane.projections.narration import Narrator, describe_options


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
        if tag in system.sentences:
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


def narrate_demo(system_name: str, seed: bytes) -> list[str]:
    system = get_system(system_name)
    narrator = Narrator(colour=False)
    state = system.initial_state()
    state.encounter = "headless"
    lines = []
    for _c, events, _s in run_headless(system, demo_setup(system_name), seed):
        for event in events:
            system.evolve(state, event)
            lines.append(narrator.line(state.version, event, state))
    return lines


@pytest.mark.parametrize("system_name", ["bolt-and-blade", "d100-degrees", "d100-zones", "rond6"])
def test_the_narration_shows_no_python_reprs_nor_internal_ids(system_name: str) -> None:
    """Issue 9: no `ammo={'autogun': 23}`, no `start_of_turn:flamer-grue`, no
    `ReactionWindowResumed window=7`, no combatant ids where a name is meant."""
    import re

    lines = narrate_demo(system_name, b"r" * 32)
    text = "\n".join(lines)
    ids = [c.id for c in demo_setup(system_name).combatants if len(c.id) >= 3]
    for line in lines:
        assert not re.search(r"\{'|': |\[\(|=\{|=\[", line), line
        assert "start_of_turn:" not in line and "end_of_turn:" not in line, line
        assert "ReactionWindowResumed" not in line, line
        for cid in ids:
            assert not re.search(rf"(?<![A-Za-z0-9_.-]){re.escape(cid)}(?![A-Za-z0-9_.-])", line), (cid, line)
    assert "Encounter over:" in text


def test_windows_say_their_number_deadline_and_who_is_awaited_and_rounds_their_order() -> None:
    lines = narrate_demo("bolt-and-blade", b"w" * 32)
    opened = [line for line in lines if "⚡ window" in line]
    assert opened and all("s to answer" in line and "waiting for" in line for line in opened)
    ordered = [line for line in lines if "arbiter order" in line]
    assert ordered and all(line.split()[1] == "window" for line in ordered)
    later_rounds = [line for line in lines if "══ Round" in line and "Round 1 ══" not in line]
    assert later_rounds and all("initiative order:" in line for line in later_rounds)


def test_the_options_of_an_ended_fight_say_it_has_ended() -> None:
    system = get_system("d100-degrees")
    *_, (_command, _events, state) = run_headless(system, demo_setup("d100-degrees"), b"e" * 32)
    assert state.ended
    lines = describe_options(system.options(state, "gm"))
    assert lines[0] == f"seat gm (gm) at version {state.version}: the encounter has ended"
