"""The d100-zones commands and events through the codec, and properties of zones and attack results."""

from __future__ import annotations

from hypothesis import given, strategies as st

from firelane.engine.dice import FixedDice
from firelane.engine.registry import get_system
from firelane.engine.systems.d100_zones import rules
from firelane.engine.systems.percentile import percentile_test
from firelane.events import codec
from firelane.engine.systems.d100_zones.schemas import D100ZFirstAidGiven, D100ZSuppressiveFire
from firelane.events.schemas import Modifier


def test_commands_and_events_go_through_the_codec() -> None:
    system = get_system("d100-zones")
    union = codec.command_union(system.command_types)
    command = codec.decode_command(b'{"type":"D100ZSuppressiveFire","command_id":"1","actor":"a","zone":"close"}', union)
    assert command == D100ZSuppressiveFire(command_id="1", actor="a", zone="close")
    roll = percentile_test(FixedDice([7]), purpose="first aid", rule="D100Z-14", modifiers=[Modifier(source="INT", rule="D100Z-14", value=60)])
    event = D100ZFirstAidGiven(healer="a", target="b", roll=roll, healed=3, hp=5, critical=True)
    entry = codec.encode_event(event)
    assert codec.decode_body(entry.type, entry.schema, entry.data) == event


@given(st.floats(min_value=0, max_value=500, allow_nan=False), st.floats(min_value=0, max_value=500, allow_nan=False))
def test_D100Z_02_zones_only_get_farther_with_distance(a: float, b: float) -> None:
    """D100Z-02 property: zone bands and zone moves never shrink as the distance grows."""
    near, far = sorted((a, b))
    assert rules.ZONE_NAMES.index(rules.zone_of(near)) <= rules.ZONE_NAMES.index(rules.zone_of(far))
    assert rules.zone_moves(near) <= rules.zone_moves(far)


@given(st.integers(min_value=1, max_value=100), st.integers(min_value=-50, max_value=150))
def test_D100Z_04_criticals_always_hit_and_90_plus_always_misses(face: int, target: int) -> None:
    """D100Z-04 property: <= 10 hits whatever the skill; 90+ misses whatever the skill."""
    outcome = rules.attack_outcome(face, target)
    if face <= 10:
        assert outcome == "critical"
    elif face >= 90:
        assert outcome == "fumble"
    else:
        assert outcome == ("hit" if face <= target else "miss")
