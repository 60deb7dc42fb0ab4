"""One combatant to a square, in every rule system (`firelane.engine.occupancy`, issue 19 item 1).

- A Bolt & Blade mover stopped part-way on an ally's square it was passing
  ("stop now" after Reactive Fire, BB-CMB-12) stops on the last square of its
  path it may end on; one that goes down there lies on that square.
- A move ends on no one's square, standing or down, in all four systems: the
  fallen are stepped over, never ended on (docs/systems).
- A property over 200 seeded AI fights per system: at every version no two
  standing combatants share a square (but for a Bolt & Blade mover passing an
  ally's square while a window interrupts its move, which it never ends on),
  and whenever no window is open, no one stands on a body either.
"""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from firelane.engine.occupancy import shared_squares
from firelane.engine.registry import demo_setup, get_system
from firelane.engine.simulate import run_headless
from firelane.engine.state import EncounterState, copy_state
from firelane.engine.systems.bolt_and_blade.schemas import BBMovementStopped
from firelane.events import codec
from firelane.events.schemas import CombatantDown, CommandRejected

from tests.systems.bolt_and_blade.helpers import act, arena, claim, fighter, knife_only, move, one, pass_, sheet, start

SYSTEMS = ["bolt-and-blade", "d100-degrees", "d100-zones", "rond6"]


# ---------------------------------------------------------------- Bolt & Blade: stopped on an ally's square


def _lane_through_ally(mover_vitality: int = 20):
    """m (red, knife) at (1, 5), its ally a at (1, 6) on its way south; w (blue,
    lasgun) at (10, 5) watches the column: entering (1, 6) opens w's fire lane."""
    fighters = [
        fighter("m", "red", (1, 5), **knife_only(vitality=mover_vitality)),
        fighter("a", "red", (1, 6), **knife_only()),
        fighter("w", "blue", (10, 5), **sheet()),
    ]
    return start(arena(fighters), ["m", "w", "a"])


def test_stop_now_on_an_allys_square_stops_on_the_last_square_it_may_end_on() -> None:
    """BB-CMB-12 (issue 19 repro: Kell through Vass, "stop now", both on one square):
    the mover hit in the fire lane on its ally's square chooses to stop; it stops
    on the last square of its path it may end on, its start here, and the ally
    keeps its square."""
    state = _lane_through_ally()
    events = act(state, move("m", (1, 6), (1, 7), on_reactive_fire="stop"))
    assert state.window is not None and state.combatants["m"].position == (1, 6)  # the window opens on a's square
    assert state.window.continuation["back_to"] == [1, 5]
    act(state, claim("w", 1, "reactive_fire"), [8, 4])  # hits for 4
    events = act(state, pass_("m", 2))  # the declared choice: stop
    stopped = one(events, BBMovementStopped)
    assert stopped.at == (1, 5) and stopped.unused_path == [(1, 7)] and stopped.rule == "BB-CMB-12"
    assert "A holds (1,6), so it stops on (1,5), the last square it may end on" in stopped.reason
    assert state.combatants["m"].position == (1, 5) and state.combatants["a"].position == (1, 6)
    assert shared_squares(state) == {}


def test_a_mover_that_goes_down_on_an_allys_square_lies_on_the_last_square_it_may_end_on() -> None:
    """BB-CORE-09: downed part-way on an ally's square, the mover lies on the last
    square of its path it could end on; the ally keeps its own."""
    state = _lane_through_ally(mover_vitality=4)
    act(state, move("m", (1, 6), (1, 7)))
    events = act(state, claim("w", 1, "reactive_fire"), [8, 4])  # hits for 4: Vitality 0
    one(events, CombatantDown)
    stopped = one(events, BBMovementStopped)
    assert stopped.at == (1, 5) and "so it lies on (1,5)" in stopped.reason
    assert state.combatants["m"].position == (1, 5) and state.combatants["a"].position == (1, 6)
    assert shared_squares(state, standing_only=False) == {}


def test_a_stop_off_anyone_elses_square_stays_where_it_is() -> None:
    """BB-CMB-12: a stop on a free square stops there (no step back)."""
    state = start(arena([fighter("m", "red", (1, 5), **knife_only()), fighter("w", "blue", (10, 5), **sheet())]), ["m", "w"])
    act(state, move("m", (1, 6), (1, 7), on_reactive_fire="stop"))
    assert "back_to" not in state.window.continuation  # type: ignore[union-attr]
    act(state, claim("w", 1, "reactive_fire"), [8, 4])
    stopped = one(act(state, pass_("m", 2)), BBMovementStopped)
    assert stopped.at == (1, 6) and state.combatants["m"].position == (1, 6)


# ---------------------------------------------------------------- every system: a body is no end of a move


def _first_turn(name: str) -> EncounterState:
    system = get_system(name)
    for _command, _events, state in run_headless(system, demo_setup(name), b"occupancy".ljust(32, b"-")):
        if state.active is not None and state.window is None and system.combatant_options(state, state.active).moves:
            return copy_state(state)
    raise AssertionError(f"{name}: no turn with moves")


@pytest.mark.parametrize("name", SYSTEMS)
def test_a_move_never_ends_on_a_body(name: str) -> None:
    """docs/systems (each system): a fallen combatant keeps its square; a move
    may not end there, and the move options do not list it."""
    system = get_system(name)
    state = _first_turn(name)
    me = state.active
    assert me is not None
    option = system.combatant_options(state, me).moves[-1]
    square = tuple(option.to)
    # Someone far off is down, lying on that square (a test arrangement).
    other = next(c for c in sorted(state.combatants) if c != me and state.combatants[c].position is not None)
    state.combatants[other].position = square  # type: ignore[assignment]
    state.combatants[other].out_of_fight = True
    assert square not in {tuple(m.to) for m in system.combatant_options(state, me).moves}
    command = codec.decode_command(msgspec.json.encode({**option.command, "command_id": "c"}), codec.command_union(system.command_types))
    events = system.decide_or_reject(copy_state(state), command, _NoDice())
    assert isinstance(events[0], CommandRejected), events
    assert "lies there" in events[0].reason


class _NoDice:
    """Dice a refused command never rolls."""

    def __getattr__(self, name: str):  # pragma: no cover - only reached on a bug
        raise AssertionError(f"a refused move rolled dice ({name})")


# ---------------------------------------------------------------- the property over seeded AI fights


def _passing(state: EncounterState) -> set[str]:
    """Bolt & Blade movers standing, mid-move, on a square they pass (an
    interrupted move that carries where a stop would leave them)."""
    windows = [w for w in [state.window, *getattr(state, "suspended_windows", [])] if w is not None]
    found = set()
    for window in windows:
        for move in (window.continuation, window.continuation.get("move") or {}):
            if isinstance(move, dict) and move.get("back_to") and move.get("mover"):
                found.add(move["mover"])
    return found


def _check_fights(name: str, seeds: list[bytes]) -> None:
    system = get_system(name)
    setup = demo_setup(name)
    setup = msgspec.structs.replace(setup, settings={**setup.settings, "max_rounds": 2})  # the run time stays modest
    for seed in seeds:
        for _command, _events, state in run_headless(system, setup, seed):
            shared = shared_squares(state)
            allowed = _passing(state)
            for square, ids in shared.items():
                assert len(ids) == 2 and set(ids) & allowed, f"{name} seed {seed!r} v{state.version}: {ids} share {square}"
            if state.window is None and not getattr(state, "suspended_windows", None):
                assert shared_squares(state, standing_only=False) == {}, f"{name} seed {seed!r} v{state.version}: someone ended on a body"


@pytest.mark.parametrize("name", SYSTEMS)
@settings(max_examples=200, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow], database=None)
@given(seed=st.binary(min_size=32, max_size=32))
def test_no_two_standing_combatants_share_a_square_in_seeded_ai_fights(name: str, seed: bytes) -> None:
    """Issue 19 item 1: 200 seeded AI fights per system (two rounds each), every version checked."""
    _check_fights(name, [seed])
