"""Area previews (`preview_area`): for every area action a system lists in its
options, the squares and the people the preview names are the ones the
command itself then covers and catches when it is decided with dice.

Each system's demo fight is played headless; at its turns every listed area
choice is previewed, then decided on a copy of the state, and the preview is
checked against the resolution's own event. RonD6 previews its Heads Down
(R6-32) and its Area Attacks (R6-40 bursts, R6-41 cones).
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from firelane.engine.core import Rejected
from firelane.engine.dice import SeededDice
from firelane.engine.grid import Grid
from firelane.engine.registry import demo_setup, get_system
from firelane.engine.simulate import run_headless
from firelane.engine.state import EncounterState, copy_state
from firelane.events import codec
from firelane.events.options_schemas import AreaPreview
from firelane.events.schemas import ActionTaken, AttackResolved, Event, TestRolled
from firelane.web.table import preview_area as table_preview

SEED = b"area-previews".ljust(32, b"-")


def _samples(name: str, every: int = 3, per_action: int = 3) -> list[tuple[EncounterState, Any, AreaPreview, list[Event]]]:
    """(state, command, preview, events when decided) for listed area choices along the demo fight."""
    system = get_system(name)
    found = []
    for i, (_command, _events, state) in enumerate(run_headless(system, demo_setup(name), SEED)):
        if state.window is not None or state.active is None or state.ended or i % every:
            continue
        for action in system.combatant_options(state, state.active).actions:
            if action.action not in system.previewable:
                continue
            for choice in action.choices[:per_action]:
                command = codec.decode_command(msgspec.json.encode({**choice.command, "command_id": "p"}),
                                               codec.command_union(system.command_types))
                before = msgspec.msgpack.encode(state)
                preview = system.preview_area(state, command)
                assert msgspec.msgpack.encode(state) == before, "a preview changed the state"
                events = system.decide(copy_state(state), command, SeededDice(SEED, state.branch_version))
                found.append((copy_state(state), command, preview, events))
    return found


def _caught(preview: AreaPreview) -> list[str]:
    return [c.combatant for c in preview.caught]


def _consistent(state: EncounterState, actor: str, preview: AreaPreview, *, self_is_ally: bool) -> None:
    squares = {tuple(s) for s in preview.squares}
    side = state.combatants[actor].side
    for caught in preview.caught:
        assert tuple(caught.square) in squares, f"{caught.combatant} caught outside the template"
        assert tuple(state.combatants[caught.combatant].position) == tuple(caught.square)
    allies = [c for c in _caught(preview) if state.combatants[c].side == side and (self_is_ally or c != actor)]
    assert sorted(preview.allies_caught) == sorted(allies)


def _of(events: list[Event], kind: type) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def test_bolt_and_blade_throws_and_area_attacks_catch_whom_the_preview_names() -> None:
    samples = _samples("bolt-and-blade")
    kinds = {type(command).__name__ for _s, command, _p, _e in samples}
    assert kinds == {"BBThrow", "BBAreaAttack", "BBOverwatch"}, kinds
    landed = 0
    for state, command, preview, events in samples:
        _consistent(state, command.actor, preview, self_is_ally=True)
        if type(command).__name__ == "BBOverwatch":  # the watched area (BB-CMB-13), drawn on hover (issue 19 item 13)
            (taken,) = [e for e in _of(events, ActionTaken) if e.action == "overwatch"]
            assert [tuple(s) for s in taken.details["area"]] == [tuple(s) for s in preview.squares] and not preview.caught
            continue
        if preview.shape == "single":  # a krak charge (BB-CMB-28): an attack on the one in the square
            assert [a.target for a in _of(events, AttackResolved)] == _caught(preview)
            continue
        (resolved,) = [e for e in events if type(e).__name__ == "BBAreaResolved"]
        thrown = [e for e in events if type(e).__name__ == "BBThrown"]
        if thrown:
            assert thrown[0].allies_caught == preview.allies_caught  # flagged where aimed, before any scatter
        if not thrown or thrown[0].on_target:
            landed += 1
            assert [tuple(s) for s in resolved.squares] == [tuple(s) for s in preview.squares]
            assert [c.combatant for c in resolved.caught] == _caught(preview)
            assert resolved.allies_caught == preview.allies_caught
    assert landed


def test_d100_degrees_suppressing_fire_catches_the_killzone_the_preview_draws() -> None:
    samples = _samples("d100-degrees", every=1)
    assert samples
    for state, command, preview, events in samples:
        assert preview.shape == "arc" and preview.rule == "D100D-09"
        _consistent(state, command.actor, preview, self_is_ally=False)
        (resolved,) = [e for e in events if type(e).__name__ == "D100DSuppressingFireResolved"]
        assert resolved.in_arc == _caught(preview)
        # everyone in the killzone tests for Pinning
        assert [t.combatant for t in _of(events, TestRolled) if t.test == "pinning"] == _caught(preview)
        assert tuple(command.toward) in {tuple(s) for s in preview.squares}


def test_d100_degrees_spares_allies_in_the_arc_unless_the_house_rule_says_otherwise() -> None:
    system = get_system("d100-degrees")
    state, command, preview, _events = next(s for s in _samples("d100-degrees", every=1)
                                            if any(c.side == s[0].combatants[s[1].actor].side and c.id != s[1].actor
                                                   and tuple(c.position) in {tuple(q) for q in s[2].squares}
                                                   for c in s[0].combatants.values() if not c.out_of_fight))
    side = state.combatants[command.actor].side
    inside = {tuple(q) for q in preview.squares}
    allies_in_arc = sorted(c.id for c in state.combatants.values() if c.side == side and c.id != command.actor
                           and not c.out_of_fight and tuple(c.position) in inside)
    assert preview.allies_caught == []
    assert preview.notes == [f"in the arc but spared (suppressing_fire_hits_allies is off): {', '.join(allies_in_arc)}"]
    state.settings["suppressing_fire_hits_allies"] = True
    hits_allies = system.preview_area(state, command)
    assert hits_allies.allies_caught == allies_in_arc and hits_allies.notes == []


def test_d100_zones_suppressive_fire_catches_everyone_the_preview_names() -> None:
    samples = _samples("d100-zones")
    assert samples
    for state, command, preview, events in samples:
        assert preview.shape == "zone" and preview.rule == "D100Z-13"
        _consistent(state, command.actor, preview, self_is_ally=False)
        (taken,) = [e for e in _of(events, ActionTaken) if e.action == "suppressive_fire"]
        assert taken.details["caught"] == _caught(preview)
        assert [t.combatant for t in _of(events, TestRolled) if t.test == "suppressive_fire"] == _caught(preview)


def test_d100_zones_the_engaged_zone_is_every_square_within_two_metres() -> None:
    """D100Z-02/13: Engaged is 0-2 m; on the demo's 2 m squares with nothing in the way, the 8 squares around the shooter."""
    samples = _samples("d100-zones", every=1, per_action=8)
    system = get_system("d100-zones")
    state, command, _preview, _events = samples[0]
    me = state.combatants[command.actor]
    x, y = me.position
    assert float(state.settings["square_metres"]) == 2.0
    around = {(x + dx, y + dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1) if (dx, dy) != (0, 0)}
    assert not around & Grid(state.terrain).walls and all(0 <= a < state.terrain.width and 0 <= b < state.terrain.height
                                                                     for a, b in around)
    # someone to catch in the engaged zone: an enemy next to the shooter
    enemy = next(c for c in state.combatants.values() if c.side != me.side and not c.out_of_fight)
    enemy.position = (x + 1, y)
    engaged = system.preview_area(state, msgspec.structs.replace(command, zone="engaged"))
    assert {tuple(s) for s in engaged.squares} == around
    assert enemy.id in _caught(engaged)


def test_rond6_heads_down_tests_everyone_the_preview_names() -> None:
    samples = [sample for sample in _samples("rond6", every=1) if type(sample[1]).__name__ == "R6HeadsDown"]
    assert samples
    for state, command, preview, events in samples:
        assert preview.shape == "burst" and preview.rule == "R6-32"
        _consistent(state, command.actor, preview, self_is_ally=False)
        radius = int(state.settings.get("heads_down_radius", 1))
        cx, cy = command.center
        assert {tuple(s) for s in preview.squares} == {
            (x, y) for x in range(cx - radius, cx + radius + 1) for y in range(cy - radius, cy + radius + 1)
            if 0 <= x < state.terrain.width and 0 <= y < state.terrain.height}
        tested = [e.target for e in _of(events, AttackResolved) if e.kind == "heads_down"]
        assert tested == _caught(preview)


def test_rond6_area_attacks_cover_and_catch_what_the_preview_names() -> None:
    """R6-40: the burst's template and the combatants it catches are the ones
    the attack's R6AreaTargeted then records, its attack test against each."""
    from firelane.engine.systems.rond6.aux_schemas import R6AreaTargeted

    samples = [sample for sample in _samples("rond6", every=1, per_action=6) if type(sample[1]).__name__ == "R6AreaAttack"]
    assert samples
    for state, command, preview, events in samples:
        _consistent(state, command.actor, preview, self_is_ally=True)
        targeted = _of(events, R6AreaTargeted)
        assert len(targeted) == 1
        assert preview.shape == targeted[0].shape and preview.rule == targeted[0].rule
        assert [tuple(s) for s in preview.squares] == [tuple(s) for s in targeted[0].squares]
        assert _caught(preview) == targeted[0].targets
        assert [a.target for a in _of(events, AttackResolved)] == targeted[0].targets[:len(_of(events, AttackResolved))]


def test_a_preview_refuses_what_the_rules_refuse() -> None:
    state, command, _preview, _events = _samples("d100-zones")[0]
    system = get_system("d100-zones")
    other = next(cid for cid in state.combatants if cid != state.active)
    with pytest.raises(Rejected, match="turn"):
        system.preview_area(state, msgspec.structs.replace(command, actor=other))
    with pytest.raises(Rejected, match="unknown zone"):
        system.preview_area(state, msgspec.structs.replace(command, zone="orbit"))


class _Seat(msgspec.Struct):
    id: str
    combatants: list[str]


def test_the_table_previews_only_listed_area_commands_of_the_seats_own_combatants() -> None:
    state, command, preview, _events = _samples("d100-degrees", every=1)[0]
    system = get_system("d100-degrees")
    raw = {k: v for k, v in msgspec.to_builtins(command).items() if k != "command_id"}
    mine = _Seat(id="p1", combatants=[command.actor])
    assert table_preview(system, state, raw, mine) == msgspec.to_builtins(preview)
    with pytest.raises(PermissionError, match="does not control"):
        table_preview(system, state, raw, _Seat(id="p2", combatants=[]))
    with pytest.raises(ValueError, match=r"no preview for 'D100DMove' in d100-degrees \(previews: D100DSuppressingFire\)"):
        table_preview(system, state, {**raw, "type": "D100DMove"}, mine)
    refused = table_preview(system, state, {**raw, "toward": list(state.combatants[command.actor].position)}, mine)
    assert refused["squares"] == [] and "direction" in refused["refused"]
