"""The Bolt & Blade sentences of the narration (firelane/frontends/narrate_systems.py)."""

from __future__ import annotations

from firelane.frontends.narrate import Narrator

from .helpers import act, arena, claim, fighter, knife_only, move, pass_, sheet, start


def narrated(state, events):  # type: ignore[no-untyped-def]
    narrator = Narrator(colour=False)
    return [narrator.line(0, event, state).strip().removeprefix("0 ") for event in events]


def test_a_held_shot_and_an_unanswered_choice_read_as_sentences() -> None:
    """BB-CMB-10 and BB-CMB-12 in words: who holds fire for whom and where; a choice the mover
    did not make itself says so."""
    state = start(arena([fighter("m", "red", (1, 5), **knife_only()), fighter("w", "blue", (12, 5), **sheet())]), ["m", "w"])
    act(state, move("m", (2, 6), (3, 6), (4, 6)))
    events = act(state, claim("w", 1, "reactive_fire", square=[4, 6]), [15, 3])
    lines = narrated(state, events)
    assert "W holds fire for M at (4,6) (BB-CMB-10)" in lines
    lines = narrated(state, act(state, pass_("m", 2)))
    assert "M keeps moving under W's fire (BB-CMB-12) — no answer: the move's declared choice" in lines


def test_every_roll_the_audit_explains_is_in_the_narration_line_of_its_event() -> None:
    """The audit (every Roll in every event, explained) and the narration agree on every number:
    each explained roll appears, as the audit writes it, in its event's narrated line (the
    initiative line gives each total). Demo fights of several seeds, blasts that catch no one
    and hits recomputed after a dive included."""
    from firelane.engine.simulate import run_headless
    from firelane.engine.systems.bolt_and_blade import SYSTEM, demo_setup
    from firelane.events.schemas import InitiativeRolled
    from firelane.frontends.narrate import _with_names
    from firelane.projections.audit import explain_roll, iter_rolls

    narrator = Narrator(colour=False)
    checked = set()
    for n in range(6):
        state = SYSTEM.initial_state()
        state.encounter = "headless"
        for _command, events, _state in run_headless(SYSTEM, demo_setup(), bytes([n + 1]) * 32):
            for event in events:
                SYSTEM.evolve(state, event)
                line = narrator.line(state.version, event, state)
                for _where, roll in iter_rolls(event):
                    if isinstance(event, InitiativeRolled):
                        assert f" {roll.total}" in line
                    else:
                        # (the narration names combatants where the audit keeps their ids)
                        explained = _with_names(explain_roll(roll, details=False), state)
                        assert explained in line, (type(event).__name__, explained, line)
                    checked.add(type(event).__name__)
    assert {"AttackResolved", "DamageDealt", "TestRolled", "BBAreaResolved", "BBThrown"} <= checked
