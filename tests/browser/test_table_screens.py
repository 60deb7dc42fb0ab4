"""The table on a phone, a tablet, a small laptop and a desktop, in real
Chromium: nothing overlaps (the header, the map, an open prompt, the panels),
the map keeps its width (at least 90 % of a phone's), Replay stays on screen,
and a turn and a reaction are played by taps in touch-emulating contexts.
On a phone the map pans, pinch-zooms and selects by a tap."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.table_helpers import Table, page_version, show_tab, table_setup, wait_until

SIZES = {"phone": (390, 844), "tablet": (768, 1024), "laptop": (1024, 700), "desktop": (1440, 900)}
SEATS = {"alice": ["kell", "vass"], "bruno": ["ash", "mott"]}
OWNER = {combatant: seat for seat, combatants in SEATS.items() for combatant in combatants}


def two_players_setup() -> dict[str, Any]:
    """The Bolt & Blade table with both sides played by people: Alice the Imperium's, Bruno the cult's."""
    setup = table_setup(reaction_deadline_ms=60_000, max_rounds=6)
    for combatant in setup["combatants"]:
        combatant["policy"] = "human"
    setup["seats"] = [{"id": "gm", "role": "gm", "name": "Game master"},
                      *({"id": seat, "role": "player", "name": seat.title(), "combatants": mine} for seat, mine in SEATS.items())]
    return setup


def box(page: Any, selector: str) -> dict[str, float] | None:
    """The bounding box of the first visible element matching ``selector``."""
    return page.evaluate("""(selector) => {
        const el = [...document.querySelectorAll(selector)].find((e) => e.getClientRects().length && getComputedStyle(e).visibility !== "hidden");
        if (!el) return null;
        const r = el.getBoundingClientRect();
        return r.width && r.height ? {x: r.left, y: r.top, w: r.width, h: r.height} : null;
    }""", selector)


def overlap(a: dict[str, float], b: dict[str, float]) -> float:
    dx = min(a["x"] + a["w"], b["x"] + b["w"]) - max(a["x"], b["x"])
    dy = min(a["y"] + a["h"], b["y"] + b["h"]) - max(a["y"], b["y"])
    return max(0.0, dx) * max(0.0, dy)


def check_layout(page: Any, size: str, *, prompt: bool) -> dict[str, dict[str, float]]:
    """Nothing overlaps, nothing leaves the screen, the map keeps its width."""
    width, height = SIZES[size]
    parts = {"header": box(page, ".app > header"), "map": box(page, "svg.map"), "prompt": box(page, ".prompts"),
             "left": box(page, "aside.left"), "right": box(page, "aside.right"), "side": box(page, "aside.side")}
    shown = {name: found for name, found in parts.items() if found}
    assert shown.get("header") and shown.get("map"), shown
    assert bool(shown.get("prompt")) == prompt, shown
    names = sorted(shown)
    for i, first in enumerate(names):
        for second in names[i + 1:]:
            assert overlap(shown[first], shown[second]) < 1, (size, first, second, shown)
    for name, found in shown.items():
        assert found["x"] >= -0.5 and found["x"] + found["w"] <= width + 0.5, (size, name, found)
        assert found["y"] >= -0.5 and found["y"] + found["h"] <= height + 0.5, (size, name, found)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width
    replay = box(page, "header .to-replay")
    assert replay and replay["x"] + replay["w"] <= width and replay["y"] + replay["h"] <= shown["header"]["y"] + shown["header"]["h"], replay
    drawn = shown["map"]
    if size in ("phone", "tablet"):
        assert drawn["w"] >= 0.9 * width, (size, drawn)
    else:
        assert drawn["w"] >= 0.5 * width, (size, drawn)  # never squeezed to a strip (it was 320 px at 1024)
    assert drawn["h"] >= 180, (size, drawn)
    if size in ("phone", "tablet", "laptop"):
        assert shown.get("side"), "the panels are a tab away"
    return shown


def asked(table: Table, encounter: str, token: str, answered: set[tuple[str, int]]) -> dict[str, Any] | None:
    body = table.state(encounter, token)
    awaiting = body.get("awaiting") or {}
    if awaiting.get("kind") == "ended":
        return body
    waiting = [c for c in awaiting.get("combatants", []) if (c, awaiting.get("window")) not in answered]
    if awaiting.get("kind") in ("turn", "reactions") and waiting:
        body["who"] = waiting[0]
        return body
    return None


@pytest.mark.parametrize("size", list(SIZES))
def test_a_turn_and_a_reaction_by_taps_with_nothing_overlapping(table: Table, size: str) -> None:
    encounter = f"screens-{size}"
    seats = table.create(encounter, two_players_setup(), seed="screens-1")
    token = seats["gm"]["token"]
    width, height = SIZES[size]
    touch = size != "desktop"
    pages = {seat: table.open(seats[seat]["link"], width=width, height=height, touch=touch) for seat in SEATS}
    answered: set[tuple[str, int]] = set()
    played = {"turn": False, "reaction": False}
    for _ in range(60):
        body = wait_until(lambda: asked(table, encounter, token, answered), timeout=30, what="a player to be asked")
        awaiting = body["awaiting"]
        assert awaiting["kind"] != "ended", "the fight ended before a turn and a reaction were played"
        who = body["who"]
        page = pages[OWNER[who]]
        wait_until(lambda: page_version(page) >= body["version"], what="the page to catch up")
        before = len(table.events(encounter, token))
        tap = page.tap if touch else page.click
        if awaiting["kind"] == "reactions":
            prompt = page.locator(f"[data-prompt='{who}'][data-window='{awaiting['window']}']")
            prompt.wait_for()
            check_layout(page, size, prompt=True)
            assert prompt.locator(".countdown").is_visible()
            table.shot(page, f"table-{size}-prompt")
            choices = prompt.locator("button.choice")
            (choices.first if choices.count() else prompt.locator(".pass")).tap() if touch else \
                (choices.first if choices.count() else prompt.locator(".pass")).click()
            answered.add((who, awaiting["window"]))
            page.wait_for_selector(f"[data-prompt='{who}'][data-window='{awaiting['window']}']", state="detached")
            played["reaction"] = True
        else:
            show_tab(page, "act")
            card = page.locator(f"[data-mine='{who}']")
            card.locator(".end-turn").wait_for()
            if not played["turn"]:
                check_layout(page, size, prompt=False)
                targets = page.locator("svg.map .token.targetable:not(.ally-target)")
                if targets.count():
                    table.shot(page, f"table-{size}")
                    tap(f"svg.map .token.targetable:not(.ally-target)[data-token='{targets.first.get_attribute('data-token')}']")
                    page.locator(".attack-pop .confirm-attack").first.wait_for()
                    tap(".attack-pop .confirm-attack >> nth=0")
                else:
                    square = page.locator("svg.map rect.reach").first.get_attribute("data-square")
                    tap(f"svg.map rect.reach[data-square='{square}']")
                played["turn"] = True
            else:
                tap(f"[data-mine='{who}'] .end-turn")
        wait_until(lambda: len(table.events(encounter, token)) > before, what=f"{who}'s tap to land",
                   describe=lambda: page.locator(".toast").all_inner_texts())
        if all(played.values()):
            break
    assert all(played.values()), played
    events = table.events(encounter, token)
    assert any(e["type"] in ("AttackResolved", "Moved") and e["data"].get("attacker", e["data"].get("combatant")) in OWNER for e in events)
    assert any(e["type"] in ("ReactionClaimed", "ReactionPassed") for e in events), [e["type"] for e in events][-20:]
    assert not any(e["type"] == "CommandRejected" for e in events), [e["data"] for e in events if e["type"] == "CommandRejected"]
    assert not table.errors, table.errors


def touch(session: Any, kind: str, points: list[tuple[float, float]]) -> None:
    session.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": [{"x": x, "y": y, "id": i} for i, (x, y) in enumerate(points)]})


def view_box(page: Any) -> list[float]:
    return [float(v) for v in page.get_attribute("svg.map", "viewBox").split()]


def test_on_a_phone_the_map_pinch_zooms_pans_and_selects_by_a_tap(table: Table) -> None:
    seats = table.create("screens-pinch", two_players_setup(), seed="screens-2")
    page = table.open(seats["alice"]["link"], width=390, height=844, touch=True)
    page.wait_for_selector("svg.map [data-token='vass']")
    session = page.context.new_cdp_session(page)
    whole = view_box(page)
    drawn = box(page, "svg.map")
    cx, cy = drawn["x"] + drawn["w"] / 2, drawn["y"] + drawn["h"] / 2
    # Two fingers spread apart: the map zooms in around them.
    touch(session, "touchStart", [(cx - 30, cy), (cx + 30, cy)])
    for step in range(1, 11):
        touch(session, "touchMove", [(cx - 30 - 9 * step, cy), (cx + 30 + 9 * step, cy)])
    touch(session, "touchEnd", [])
    zoomed = wait_until(lambda: (b := view_box(page)) and b[2] < whole[2] * 0.6 and b, what="the pinch to zoom in")
    assert zoomed[2] == pytest.approx(whole[2] / 4, rel=0.15)  # the fingers spread 4 times as far apart
    # One finger drags: the map pans the other way, and nothing is selected or sent.
    touch(session, "touchStart", [(cx, cy)])
    for step in range(1, 8):
        touch(session, "touchMove", [(cx - 10 * step, cy)])
    touch(session, "touchEnd", [])
    panned = wait_until(lambda: (b := view_box(page)) and b[0] > zoomed[0] and page.wait_for_timeout(150) is None
                        and view_box(page) == b and b, what="the drag to pan (to its end)")
    assert panned[2] == pytest.approx(zoomed[2]) and panned[1] == pytest.approx(zoomed[1])
    page.tap(".zoom-fit")
    wait_until(lambda: view_box(page) == whole, what="the whole map again", describe=lambda: (view_box(page), whole, box(page, ".zoom-fit")))
    # A tap on one's own token selects it (its card too).
    page.locator("svg.map [data-token='vass'] .body").tap()
    wait_until(lambda: "selected" in page.get_attribute("svg.map [data-token='vass']", "class"), what="Vass selected")
    show_tab(page, "act")
    assert "selected" in page.get_attribute("[data-mine='vass']", "class")
    assert not table.errors, table.errors


def test_on_a_phone_the_narration_tab_opens_at_its_newest_line(table: Table) -> None:
    seats = table.create("screens-story", two_players_setup(), seed="screens-3")
    page = table.open(seats["alice"]["link"], width=390, height=844, touch=True)
    gm = table.open(seats["gm"]["link"])
    for _ in range(3):  # the GM skips turns: lines arrive while the narration's tab is closed
        version = page_version(page)
        gm.wait_for_selector(".gm [data-gm='skip']:not([disabled])")
        gm.click(".gm [data-gm='skip']")
        gm.click(".gm .confirm [data-confirm-yes='Skip']")
        wait_until(lambda: page_version(page) > version, what="the skip on the phone")
    assert not page.locator(".narration .lines").is_visible()
    page.tap(".tabs [data-tab='story']")
    last = page_version(page)
    newest = page.locator(f".narration .line[data-n='{last}']")
    newest.wait_for()
    wait_until(lambda: newest.evaluate("""l => { const box = l.closest('.lines').getBoundingClientRect(), r = l.getBoundingClientRect();
                                                 return r.bottom <= box.bottom + 1 && r.top >= box.top - 1; }"""),
               what="the newest line in view")
    assert not table.errors, table.errors
