"""The table page's server side: its routes, GET …/view, and the demo's links,
against a real `firelane serve` (no browser: tests/browser/ drives the page)."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from firelane.engine.registry import demo_setup, get_system
from firelane.engine.simulate import run_headless
from firelane.engine.state import EncounterState
from firelane.events import codec
from firelane.events.envelope import StoredEvent
from firelane.events.schemas import AttackResolved, Die, Modifier, Roll
from firelane.web import table
from firelane.web.table import SegmentNarrator, TableFold, split_segments
from tests.cli_helpers import Served, firelane, serve_for_module, spawn


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    yield from serve_for_module(tmp_path_factory, "view")


def _ended_demo(served: Served, encounter: str) -> dict[str, str]:
    result = firelane("create", encounter, "--demo-setup", "bolt-and-blade", "--seed", "7", "--reproducible-dice", "--data-dir",
                      str(served.data_dir), "--json")
    assert result.returncode == 0, result.stderr
    tokens = {s["seat"]: s["token"] for s in json.loads(result.stdout)["seats"]}
    give_up = time.monotonic() + 60
    with httpx.Client(timeout=10) as http:
        while time.monotonic() < give_up:
            body = http.get(f"{served.api}/api/campaigns/default/encounters/{encounter}/state",
                            headers={"Authorization": f"Bearer {tokens['spectator']}"}).json()
            if body["state"] and body["state"]["seed_revealed"]:
                return tokens
            time.sleep(0.1)
    raise AssertionError("the demo fight did not end")


def _rolls_in(value: Any) -> int:
    if isinstance(value, dict):
        own = 1 if {"purpose", "dice", "modifiers", "total"} <= value.keys() else 0
        return own + sum(_rolls_in(v) for v in value.values())
    if isinstance(value, list):
        return sum(_rolls_in(v) for v in value)
    return 0


def test_the_page_and_its_assets_are_served(served: Served) -> None:
    with httpx.Client(timeout=10) as http:
        for path in ("/", "/table/default/anything", "/characters/default/anyone"):
            page = http.get(served.api + path)
            assert page.status_code == 200 and '<script type="module" src="/table/assets/app.js">' in page.text
        for asset, kind in (("app.js", "javascript"), ("campaign.js", "javascript"), ("style.css", "css"),
                            ("vendor/preact.module.js", "javascript")):
            response = http.get(f"{served.api}/table/assets/{asset}")
            assert response.status_code == 200 and kind in response.headers["content-type"], asset
        assert http.get(f"{served.api}/table/assets/nope.js").status_code == 404


def test_the_view_narrates_every_event_with_every_roll(served: Served) -> None:
    tokens = _ended_demo(served, "view-all")
    base = f"{served.api}/api/campaigns/default/encounters/view-all"
    with httpx.Client(timeout=10, headers={"Authorization": f"Bearer {tokens['spectator']}"}) as http:
        events = http.get(f"{base}/events?after=0").json()["events"]
        view = http.get(f"{base}/view?after=0").json()
        assert view["version"] == len(events) and view["title"] == "Ash Street crossing"
        assert [line["n"] for line in view["lines"]] == [e["n"] for e in events]
        assert [line["type"] for line in view["lines"]] == [e["type"] for e in events]
        # Every roll of every event is in its line, with each modifier's rule.
        for event, line in zip(events, view["lines"]):
            assert len(line["rolls"]) == _rolls_in(event["data"]), event["type"]
        assert sum(len(line["rolls"]) for line in view["lines"]) > 50
        # After V: only the later lines; at W: the state at version W.
        later = http.get(f"{base}/view?after=100").json()["lines"]
        assert [line["n"] for line in later] == list(range(101, len(events) + 1))
        at = http.get(f"{base}/view?at=40&lines=0").json()
        assert at["at"] == 40 and at["state"]["version"] == 40 and at["lines"] == [] and at["options"] is None
        moved = next(e for e in events if e["type"] == "Moved")
        before = http.get(f"{base}/view?at={moved['n'] - 1}&lines=0").json()["state"]["combatants"][moved["data"]["combatant"]]
        after = http.get(f"{base}/view?at={moved['n']}&lines=0").json()["state"]["combatants"][moved["data"]["combatant"]]
        assert after["position"] == moved["data"]["path"][-1] != before["position"]
        assert http.get(f"{base}/view?at=999999").status_code == 400
        assert http.get(f"{base}/view", headers={"Authorization": "Bearer nope"}).status_code == 403
        # The seat's options come with the live view: a spectator may do nothing.
        assert view["options"]["role"] == "spectator" and view["options"]["combatants"] == []
        assert view["previewable"] == ["BBAreaAttack", "BBOverwatch", "BBThrow"] and view["first_line"] == 1


def test_a_long_fights_narration_comes_in_pages(served: Served) -> None:
    """A page's first view asks for the newest lines only (``tail``); older
    ones come from …/lines, the N before a version."""
    tokens = _ended_demo(served, "view-paged")
    base = f"{served.api}/api/campaigns/default/encounters/view-paged"
    with httpx.Client(timeout=10, headers={"Authorization": f"Bearer {tokens['spectator']}"}) as http:
        version = http.get(f"{base}/view?after=0&lines=0").json()["version"]
        newest = http.get(f"{base}/view?after=0&tail=50").json()
        assert [line["n"] for line in newest["lines"]] == list(range(version - 49, version + 1))
        assert newest["first_line"] == 1
        older = http.get(f"{base}/lines?before={version - 49}&limit=100").json()
        assert [line["n"] for line in older["lines"]] == list(range(version - 149, version - 49))
        assert older["first_line"] == 1 and older["version"] == version
        whole = http.get(f"{base}/view?after=0").json()["lines"]
        assert older["lines"] == whole[version - 150:version - 50]  # the same lines, rolls and all
        assert [line["n"] for line in http.get(f"{base}/lines?before=4&limit=100").json()["lines"]] == [1, 2, 3]
        assert http.get(f"{base}/lines?before=1").json()["lines"] == []
        assert http.get(f"{base}/lines?before=10&limit=0").status_code == 400
        assert http.get(f"{base}/lines?before=10", headers={"Authorization": "Bearer nope"}).status_code == 403


def _stored(system_name: str, seed: bytes) -> list[StoredEvent]:
    """A headless demo fight's events as the log would give them back."""
    system = get_system(system_name)
    events = [e for _c, batch, _s in run_headless(system, demo_setup(system_name), seed) for e in batch]
    return [StoredEvent(entry_id=f"{1_700_000_000_000 + n}-0", version=n, encounter="lazy", type=entry.type,
                        schema=entry.schema, data=entry.data)
            for n, entry in enumerate((codec.encode_event(e) for e in events), start=1)]


def test_a_bulk_fold_narrates_its_newest_events_and_the_older_ones_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    stored = _stored("bolt-and-blade", b"lazy3".ljust(32, b"-"))  # a 513-event fight with a blast in it
    eager = TableFold("lazy")
    for event in stored:
        eager.apply(event)
    monkeypatch.setattr(table, "_EAGER_LINES", 50)
    lazy = TableFold("lazy")
    lazy.catch_up(stored)
    last = len(stored)
    assert sorted(lazy.lines) == list(range(last - 49, last + 1))
    assert lazy.state == eager.state and lazy.versions == eager.versions == list(range(1, last + 1))
    # Older lines, narrated when asked for (from the nearest checkpoint), are the lines an eager fold makes.
    for wanted in (lazy.versions_before(last - 49, 120), lazy.versions_before(30, 100), [last - 200, last - 199]):
        missing = lazy.missing(wanted)
        assert missing
        base = lazy.base_for(missing[0])
        lazy.narrate(missing, stored[base:])
        assert [lazy.lines[v] for v in wanted] == [eager.lines[v] for v in wanted]
    assert lazy.versions_before(30, 100) == list(range(1, 30))
    for version in range(last + 1):
        assert lazy.area_at(version) == eager.area_at(version)
    assert any(eager.area_at(v) for v in range(last + 1))


def test_narration_segments_keep_the_narrators_colours() -> None:
    state = EncounterState(system="toy")
    from firelane.engine.state import Combatant

    state.combatants = {"kell": Combatant(id="kell", name="Kell", side="imperium"),
                        "ash": Combatant(id="ash", name="Ash", side="cult")}
    roll = Roll(purpose="attack", rule="BB-CORE-07", dice=[Die(sides=20, face=17)],
                modifiers=[Modifier(source="agility", rule="BB-CORE-03", value=2)], total=19, target=14, success=True)
    event = AttackResolved(attacker="kell", target="ash", weapon="bolt pistol", roll=roll, hit=True)
    segments = SegmentNarrator().segments(event, state)
    text = "".join(t for t, _ in segments)
    assert text.startswith("Kell → Ash with bolt pistol: HIT")
    classes = {t.strip(): c for t, c in segments}
    assert classes["Kell"] == "side1 bold" and classes["Ash"] == "side0 bold"  # sides in sorted order: cult, imperium
    assert classes["HIT"] == "red bold"
    detail = [t for t, c in segments if "detail" in c.split()]
    assert detail and "BB-CORE-03" in detail[0]  # the roll's explanation, shown on demand


def test_split_segments_nests_and_merges() -> None:
    o, s, c = "\x1e", "\x1f", "\x1d"
    assert split_segments(f"a {o}dim{s}b {o}red{s}c{c}{c} d") == [["a ", ""], ["b ", "dim detail"], ["c", "dim red detail"], [" d", ""]]
    assert split_segments(f"{o}dim{s}all quiet{c}") == [["all quiet", "dim"]]


def test_health_of_each_system() -> None:
    class BB:
        vitality, max_vitality = 7, 14

    class Zones:
        hp, max_hp = 3, 12

    class RonD6:
        wounds, fatigue, dead = 3, 0, False

    assert get_system("bolt-and-blade").health(BB()) == {"value": 7, "max": 14, "label": "vitality"}
    assert get_system("d100-zones").health(Zones()) == {"value": 3, "max": 12, "label": "HP"}
    assert get_system("rond6").health(RonD6()) == {"value": 2, "max": 5, "label": "incapacitated", "wounds": 3}


def test_range_bands_are_the_systems_own() -> None:
    state = get_system("d100-zones").initial_state()
    assert [band["name"] for band in get_system("d100-zones").range_bands(state)] == ["engaged", "close", "far"]
    assert get_system("bolt-and-blade").range_bands(get_system("bolt-and-blade").initial_state()) == []


def test_the_demo_prints_where_to_replay_it_in_a_browser(tmp_path: Path) -> None:
    data = tmp_path / "data"
    result = firelane("demo", "--seed", "2", "--quiet", "--data-dir", str(data))
    assert result.returncode == 0, result.stderr
    match = re.search(r"replay it in a browser: firelane serve, then open (http://127\.0\.0\.1:8740/table/default/(\S+)#token=(\S+)&replay)",
                      result.stdout)
    assert match, result.stdout
    seats = json.loads(firelane("seats", match.group(2), "--json", "--data-dir", str(data)).stdout)["seats"]
    assert match.group(3) == next(s["token"] for s in seats if s["seat"] == "spectator")


def test_a_paced_demo_serves_the_table_while_it_runs(tmp_path: Path) -> None:
    process = spawn("demo", "--seed", "2", "--quiet", "--pace", "0.05", "--data-dir", str(tmp_path / "data"))
    try:
        assert process.stderr is not None
        for line in process.stderr:
            match = re.search(r"watch it in a browser: (http://127\.0\.0\.1:\d+)/table/default/(\S+)#token=(\S+)", line)
            if match:
                break
        else:
            raise AssertionError("no browser link")
        api, encounter, token = match.groups()
        with httpx.Client(timeout=10) as http:
            assert '<script type="module" src="/table/assets/app.js">' in http.get(f"{api}/table/default/{encounter}").text
            view = http.get(f"{api}/api/campaigns/default/encounters/{encounter}/view",
                            headers={"Authorization": f"Bearer {token}"}).json()
            assert view["seat"]["role"] == "spectator" and not view["state"]["ended"]  # paced: still running
        out, _err = process.communicate(timeout=120)
        assert process.returncode == 0
        assert "winner" in out and f"/table/default/{encounter}#token={token}&replay" in out
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()


def test_the_view_gives_a_long_turn_timer_as_an_absolute_time(served: Served, tmp_path: Path) -> None:
    """A turn timer set in human units ("24h") is shown as milliseconds and as
    an ISO 8601 time (UTC) a page turns into its viewer's own time."""
    from tests.browser.table_helpers import setup_with_players

    # The timer runs on a human's turn only: wait for one of the players' side.
    # (Windows the players' side does not answer close after a second: the fight comes round quickly.)
    setup = setup_with_players("bolt-and-blade", settings={"turn_timer": "24h", "reaction_deadline": "1s"})
    path = tmp_path / "long.json"
    path.write_text(json.dumps(setup))
    result = firelane("create", "long-timer", "--setup", str(path), "--data-dir", str(served.data_dir), "--json")
    assert result.returncode == 0, result.stderr
    tokens = {s["seat"]: s["token"] for s in json.loads(result.stdout)["seats"]}
    base = f"{served.api}/api/campaigns/default/encounters/long-timer"
    give_up = time.monotonic() + 90
    with httpx.Client(timeout=10, headers={"Authorization": f"Bearer {tokens['p1']}"}) as http:
        while time.monotonic() < give_up:
            view = http.get(f"{base}/view?lines=0").json()
            awaiting = view.get("awaiting") or {}
            if awaiting.get("turn_deadline_at_ms"):
                break
            time.sleep(0.1)
        else:
            raise AssertionError(f"no human's turn came: {view}"[:3000])
    at_ms = awaiting["turn_deadline_at_ms"]
    assert 0 <= at_ms - view["now_ms"] <= 86_400_000 and at_ms - view["now_ms"] > 86_400_000 - 60_000
    assert awaiting["turn_deadline_at"] == table.iso_time(at_ms) and awaiting["turn_deadline_at"].endswith("Z")
    from datetime import datetime

    assert datetime.fromisoformat(awaiting["turn_deadline_at"].replace("Z", "+00:00")).timestamp() * 1000 == at_ms
