"""Setups a person writes are refused, with one line naming the field, when
a number is out of its range, a field is unknown (at any level), or an id is
one the engine keeps for itself; the encounter ID stays free. Stored logs,
which decode setups leniently, read as ever."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import msgspec
import pytest

from firelane.engine.core import BASE_SETTING_RANGES, setting_problem
from firelane.engine.registry import demo_setup, get_system, register_system
from firelane.engine.setup_check import SetupError, check_setup, decode_setup
from firelane.events import codec
from tests.cli_helpers import firelane
from tests.toy_system import TOY

register_system(TOY, "tests.toy_system")

SYSTEMS = ("bolt-and-blade", "d100-degrees", "d100-zones", "rond6")
HUMANS = {"system": "toy", "combatants": [
    {"id": "a", "name": "Ann", "side": "red", "position": [0, 0], "policy": "human", "sheet": {"speed": 9}},
    {"id": "b", "name": "Bo", "side": "blue", "position": [3, 0], "policy": "human"}]}


def refused(setup: dict) -> str:
    """The one line a setup is refused with."""
    with pytest.raises(SetupError) as error:
        decoded = decode_setup(json.dumps(setup).encode(), source="setup.json")
        check_setup(get_system(decoded.system), decoded)
    message = str(error.value)
    assert "\n" not in message
    return message


def changed(change) -> dict:
    setup = copy.deepcopy(HUMANS)
    change(setup)
    return setup


# -- the three, through `firelane create --setup` ------------------------------


@pytest.mark.parametrize(("change", "line"), [
    (lambda s: s.update(settings={"reaction_deadline_ms": -1}),
     "settings.reaction_deadline_ms: must be a whole number from 1 to 2,592,000,000, not -1"),
    (lambda s: s.update(colour="red"),
     "{path}: colour: unknown field; known: system, combatants, terrain, settings, name, seats"),
    (lambda s: s["combatants"][1].update(id="engine"),
     "combatants[1].id: 'engine' is reserved (the engine's own names: engine, gm, sequencer, spectator)"),
], ids=["negative-deadline", "unknown-top-level-field", "combatant-named-engine"])
def test_create_refuses_with_one_line_naming_the_field_and_leaves_the_id_free(
        redis_url: str, tmp_path: Path, change, line: str) -> None:
    path = tmp_path / "setup.json"
    path.write_text(json.dumps(changed(change)))
    result = firelane("create", "fight", "--setup", str(path), "--redis", redis_url)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.strip().splitlines() == [f"firelane: error: {line.format(path=path)}"]
    path.write_text(json.dumps(HUMANS))
    assert firelane("create", "fight", "--setup", str(path), "--redis", redis_url).returncode == 0  # the id was free


# -- unknown fields, at every level a person writes -------------------------------------


@pytest.mark.parametrize(("change", "field"), [
    (lambda s: s.update(sytem="toy"), "sytem"),
    (lambda s: s["combatants"][0].update(hp=3), "combatants[0].hp"),
    (lambda s: s.update(terrain={"width": 8, "height": 8, "heigth": 9}), "terrain.heigth"),
    (lambda s: s.update(terrain={"cover": [{"x": 1, "y": 1, "level": "light", "facing": [], "side": 1}]}),
     "terrain.cover[0].side"),
    (lambda s: s.update(seats=[{"id": "al", "combatants": ["a", "b"], "colour": "red"}]), "seats[0].colour"),
])
def test_an_unknown_field_is_refused_at_every_level(change, field: str) -> None:
    assert refused(changed(change)).startswith(f"setup.json: {field}: unknown field; known: ")


def test_a_stored_setup_with_a_field_this_engine_does_not_know_still_reads() -> None:
    """Logs decode setups leniently (an older or newer firelane may have written
    more): the strict check is for what a person writes."""
    body = json.dumps({"type": "EncounterStarted", "encounter": "old", "seed_commitment": "00",
                       "setup": {**changed(lambda s: s["combatants"][0].update(hp=3)), "colour": "red"}}).encode()
    started = codec.decode_body("EncounterStarted", 1, body)
    assert [c.id for c in started.setup.combatants] == ["a", "b"]


# -- reserved ids ---------------------------------------------------------------------


@pytest.mark.parametrize("name", ["engine", "gm", "sequencer", "spectator"])
def test_the_engines_own_names_are_no_combatant_id_nor_a_players_seat(name: str) -> None:
    assert refused(changed(lambda s: s["combatants"][0].update(id=name))).startswith(f"combatants[0].id: {name!r} is reserved")
    # A side's players' seat is named after the side.
    assert refused(changed(lambda s: s["combatants"][0].update(side=name))).startswith(
        f"combatants[0] (a).side: {name!r} would name its players' seat")


def test_the_gm_and_spectator_seat_ids_take_their_roles_only() -> None:
    assert refused(changed(lambda s: s.update(seats=[{"id": "gm", "combatants": ["a", "b"]}]))) == (
        "seats[0].id: 'gm' is the id of the GM's seat: give it role 'gm', or another id")
    assert refused(changed(lambda s: s.update(seats=[{"id": "spectator", "combatants": ["a", "b"]}]))) == (
        "seats[0].id: 'spectator' is the id of the spectators' seat: give it role 'spectator', or another id")
    for seat in ("engine", "sequencer"):
        assert refused(changed(lambda s: s.update(seats=[{"id": seat, "combatants": ["a", "b"]}]))) == (
            f"seats[0].id: {seat!r} is reserved for the engine")


# -- every numeric setting of every system has its range ---------------------------------


def _numbers(value, pattern: str):
    if isinstance(value, bool):
        return
    if isinstance(value, (int, float)):
        yield pattern
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _numbers(item, pattern + ".*")
    elif isinstance(value, list):
        for item in value:
            yield from _numbers(item, pattern + ".*")


def _matches(pattern: str, declared: str) -> bool:
    parts, wanted = pattern.split("."), declared.split(".")
    return len(parts) == len(wanted) and all(w == p or p == "*" for p, w in zip(parts, wanted))


@pytest.mark.parametrize("name", SYSTEMS)
def test_every_number_among_a_systems_settings_has_a_range(name: str) -> None:
    system = get_system(name)
    ranges = {**BASE_SETTING_RANGES, **system.setting_ranges}
    for setting, value in {**system.base_settings, **system.default_settings}.items():
        for pattern in _numbers(value, setting):
            assert any(_matches(pattern, declared) for declared in ranges), f"{name}: {pattern} has no range"
        # The defaults are in range.
        assert setting_problem(setting, value, ranges) is None, (name, setting)


@pytest.mark.parametrize("name", SYSTEMS)
def test_a_setting_out_of_its_range_is_refused_naming_it(name: str) -> None:
    system = get_system(name)
    base = msgspec.to_builtins(demo_setup(name))
    tried = 0
    for setting, (low, high, whole, _nullable) in {**BASE_SETTING_RANGES, **system.setting_ranges}.items():
        if "*" in setting:
            continue
        for bad in (low - 1, high + 1, "7") + ((low + 0.5,) if whole else ()):
            setup = copy.deepcopy(base)
            setup["settings"] = {**setup.get("settings", {}), setting: bad}
            message = refused(setup)
            assert message.startswith(f"settings.{setting}: must be "), message
            tried += 1
    assert tried >= 12
    # In a table of numbers: the entry is named.
    table = next((s for s in system.setting_ranges if s.endswith(".*") and s.count("*") == 1), None)
    if table is not None:
        key = table.split(".")[0]
        entry = next(iter({**system.base_settings, **system.default_settings}[key]))
        setup = copy.deepcopy(base)
        setup["settings"] = {**setup.get("settings", {}), key: {entry: -5000}}
        assert refused(setup).startswith(f"settings.{key}.{entry}: must be ")
