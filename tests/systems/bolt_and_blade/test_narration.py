"""The Bolt & Blade sentences of the narration (firelane/engine/systems/bolt_and_blade/narration.py)."""

from __future__ import annotations

from firelane.projections.narration import Narrator

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
    from firelane.projections.narration import _with_names
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


def test_bb_cmb_25_a_scatter_reads_as_a_sentence_with_its_roll() -> None:
    """BB-CMB-25 in words: how far and which way the grenade drifted, and the drift roll (steps) as the audit writes it."""
    from firelane.engine.systems.bolt_and_blade.area_schemas import BBScattered, BBThrow
    from firelane.projections.audit import explain_roll

    state = start(arena([fighter("s", "red", (2, 10), **sheet(weapons=["frag grenade"], ready_weapon="frag grenade")),
                         fighter("c", "blue", (10, 10), **knife_only())]), ["s", "c"])
    # throw 3 + 2 < DC 10: drifts d6 3 steps east (d8 3); damage 2 + 2; c's save 19
    events = act(state, BBThrow(command_id="t", actor="s", target=(8, 10), weapon="frag grenade"), [3, 3, 3, 2, 2, 19])
    scattered = next(e for e in events if isinstance(e, BBScattered))
    line = next(line for line, e in zip(narrated(state, events), events) if e is scattered)
    assert line.startswith("S's frag grenade scatters 15 ft E, from (8,10) to (11,10) (BB-CMB-25)")
    assert explain_roll(scattered.roll, details=False) in line and "= 3" in line
