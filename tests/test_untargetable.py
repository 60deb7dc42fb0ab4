"""Why an enemy cannot be targeted (issue 19 item 10): `CombatantOptions.untargetable`.

On a combatant's turn the options list each standing enemy no listed attack
targets, with the reason the map gives — the wall square that blocks the line
of sight, out of the reach of every weapon carried, or cover no attack passes
(BB-CMB-04 total, D100Z-09 heavy, R6-13 total) — in a sentence with names.
"""

from __future__ import annotations

import re

import msgspec
import pytest

from firelane.engine.grid import Grid, distance
from firelane.engine.registry import demo_setup, get_system
from firelane.engine.simulate import run_headless
from firelane.engine.state import EncounterState, copy_state
from firelane.events.schemas import CoverFeature

SYSTEMS = ["bolt-and-blade", "d100-degrees", "d100-zones", "rond6"]
SNAKE = re.compile(r"\b[a-z]+_[a-z_]+\b")


def _turns(name: str, seed: bytes = b"u" * 32, every: int = 3):
    system = get_system(name)
    for i, (_command, _events, state) in enumerate(run_headless(system, demo_setup(name), seed)):
        if state.active is not None and state.window is None and not state.ended and i % every == 0:
            yield system, state


@pytest.mark.parametrize("name", SYSTEMS)
def test_every_untargetable_enemy_is_named_with_a_true_reason(name: str) -> None:
    """Along a demo fight: each entry is a standing enemy no attack option targets; a wall
    named blocks the line; one out of range is beyond every weapon's reach; the words
    name both sides and carry no ids or snake_case."""
    codes = set()
    for system, state in _turns(name):
        me = state.combatants[state.active]  # type: ignore[index]
        options = system.combatant_options(state, me.id)
        targets = {a.target for a in options.attacks}
        here = tuple(me.position)
        for entry in options.untargetable:
            enemy = state.combatants[entry.combatant]
            there = tuple(enemy.position)
            assert enemy.side != me.side and not enemy.out_of_fight and entry.combatant not in targets
            assert entry.words.startswith(f"{enemy.name}: ") and me.name in entry.words
            assert enemy.id not in entry.words.replace(enemy.name, "") and not SNAKE.search(entry.words), entry.words
            codes.add(entry.reason_code)
            if entry.reason_code == "no_line_of_sight":
                grid = Grid(state.terrain)
                assert entry.blocking_square in grid.walls and not grid.line_of_sight(here, there)
                assert f"the wall at ({entry.blocking_square[0]}, {entry.blocking_square[1]})" in entry.words
            elif entry.reason_code == "out_of_range":
                assert distance(here, there) > system.attack_reach_squares(state, me)
    assert "no_line_of_sight" in codes


def _with_cover(state: EncounterState, *cover: CoverFeature) -> EncounterState:
    found = copy_state(state)
    found.terrain = msgspec.structs.replace(found.terrain, walls=[], cover=list(cover))
    return found


def _open_field(name: str) -> tuple[EncounterState, str, str]:
    """A demo turn on the demo map with its walls taken away: (state, the active
    combatant, the nearest enemy it can attack)."""
    for system, state in _turns(name, every=1):
        open_state = _with_cover(state)
        me = open_state.active
        here = tuple(open_state.combatants[me].position)  # type: ignore[index]
        # An enemy out of melee reach: cover stops shots, not a blade at arm's length.
        far = [a.target for a in system.combatant_options(open_state, me).attacks  # type: ignore[arg-type]
               if distance(here, tuple(open_state.combatants[a.target].position)) > 2
               and open_state.combatants[a.target].side != open_state.combatants[me].side]  # type: ignore[index]
        if far:
            return open_state, me, far[0]  # type: ignore[return-value]
    raise AssertionError(f"{name}: no turn with an attack")


@pytest.mark.parametrize(("name", "level", "code_rule"), [
    ("bolt-and-blade", "total", "BB-CMB-04"),
    ("rond6", "total", "R6-13"),
    ("d100-zones", "heavy", "D100Z-09"),
])
def test_an_enemy_behind_cover_no_attack_passes_is_listed_with_it(name: str, level: str, code_rule: str) -> None:
    """BB-CMB-04 (total cover cannot be targeted), R6-13 (total cover blocks), D100Z-09 (with
    the cover option, heavy cover cannot be targeted directly): the enemy is untargetable for
    its cover, and the words say so."""
    system = get_system(name)
    state, me, enemy_id = _open_field(name)
    if name == "d100-zones":
        state.settings["options"] = {**state.settings["options"], "cover": True}
    enemy = state.combatants[enemy_id]
    there = tuple(enemy.position)
    feature = CoverFeature(x=there[0], y=there[1], level="heavy_tall" if name == "bolt-and-blade" else level)
    covered = _with_cover(state, feature)
    if name == "bolt-and-blade":
        covered.combatants[enemy_id].taking_cover = True  # heavy behind sight-blocking cover, Taking Cover: total (BB-CMB-30)
    options = system.combatant_options(covered, me)
    assert enemy_id not in {a.target for a in options.attacks}
    (entry,) = [u for u in options.untargetable if u.combatant == enemy_id]
    assert (entry.reason_code, entry.rule) == ("full_cover", code_rule)
    assert entry.words.startswith(f"{enemy.name}: {level} cover") and entry.words.endswith("no attack gets through")


def test_an_enemy_beyond_every_weapon_is_out_of_range() -> None:
    """BB-CORE-11: beyond a weapon's maximum range there is no attack: an enemy farther than
    every weapon carried reaches is listed as out of range, with the distance in feet."""
    system = get_system("bolt-and-blade")
    state, me, enemy_id = _open_field("bolt-and-blade")
    far = copy_state(state)
    far.terrain = msgspec.structs.replace(far.terrain, width=200)
    reach = system.attack_reach_squares(far, far.combatants[me])
    far.combatants[enemy_id].position = (int(far.combatants[me].position[0] + reach + 1), int(far.combatants[me].position[1]))
    (entry,) = [u for u in system.combatant_options(far, me).untargetable if u.combatant == enemy_id]
    assert entry.reason_code == "out_of_range" and entry.blocking_square is None
    assert f"{int(reach + 1)} squares ({(reach + 1) * 5:g} ft) away" in entry.words
