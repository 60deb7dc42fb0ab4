"""The d100-degrees commands and events through the codec, and properties of the degree math."""

from __future__ import annotations

from hypothesis import given, strategies as st

from firelane.engine.dice import FixedDice
from firelane.engine.registry import get_system
from firelane.engine.systems.d100_degrees import rules
from firelane.events import codec
from firelane.engine.systems.d100_degrees.schemas import D100DBasicAttack, D100DSuppressingFire, D100DSuppressingFireResolved


def test_commands_decode_from_frontend_json_with_walked_squares() -> None:
    """D100D-04: a chain mixes combatant IDs and [x, y] squares in one JSON list."""
    union = codec.command_union(get_system("d100-degrees").command_types)
    command = codec.decode_command(b'{"type":"D100DBasicAttack","command_id":"1","actor":"a","target":"b","extra":[[3,4],"c"]}', union)
    assert command == D100DBasicAttack(command_id="1", actor="a", target="b", extra=[(3, 4), "c"])
    command = codec.decode_command(b'{"type":"D100DSuppressingFire","command_id":"2","actor":"a","toward":[9,9],"rof":2}', union)
    assert command == D100DSuppressingFire(command_id="2", actor="a", toward=(9, 9), rof=2)


def test_system_events_round_trip_through_the_codec() -> None:
    get_system("d100-degrees")  # registers the event types
    roll = rules.characteristic_test(FixedDice([12]), purpose="Suppressing Fire", rule="D100D-09", characteristic="Ballistic Skill", value=40, difficulty="hard")
    event = D100DSuppressingFireResolved(attacker="a", weapon="lasgun", toward=(5, 5), in_arc=["b"], roll=roll, hits=["b"], leftover_degrees=1)
    entry = codec.encode_event(event)
    assert entry.type == "D100DSuppressingFireResolved"
    assert codec.decode_body(entry.type, entry.schema, entry.data) == event


@given(st.integers(min_value=1, max_value=100), st.integers(min_value=1, max_value=150))
def test_D100D_01_degrees_grow_with_the_margin(face: int, target: int) -> None:
    """D100D-01 property: a success has at least 1 degree; a lower roll never has fewer degrees."""
    if face <= target:
        degrees = rules.degrees_of_success(face, target)
        assert degrees >= 1
        if face > 1:
            assert rules.degrees_of_success(face - 1, target) >= degrees
        assert degrees == 1 + target // 10 - face // 10
    else:
        assert rules.degrees_of_failure(face, target) >= 1


@given(st.integers(min_value=1, max_value=20), st.integers(min_value=0, max_value=6))
def test_D100D_04_trading_never_spends_more_degrees_than_won(won: int, declared: int) -> None:
    """D100D-04 property: extra targets x 2 + damage degrees == the degrees beyond the first."""
    extra, left = rules.trade_degrees_for_targets(won, declared)
    assert 0 <= extra <= declared and left >= 0 and 2 * extra + left == won - 1
