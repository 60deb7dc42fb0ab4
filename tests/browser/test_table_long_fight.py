"""A long fight at the table, in real Chromium: the page paints a few thousand
events with a bounded number of narration lines, "show earlier" brings older
ones, and the replay scrubbed far back shows (and scrolls to) its line."""

from __future__ import annotations

import msgspec

from firelane.engine.registry import demo_setup
from tests.browser.table_helpers import Table, narrated, wait_until

WINDOW = 300  # the narration's window (panels.js) and the first view's tail (connection.js)


def long_setup(rounds: int) -> dict:
    """The Bolt & Blade demo, everyone too tough to fall: the AI fights ``rounds`` rounds."""
    setup = msgspec.to_builtins(demo_setup("bolt-and-blade"))
    for combatant in setup["combatants"]:
        combatant["sheet"]["vitality"] = 100_000
    setup["settings"]["max_rounds"] = rounds
    return setup


def _lines_box_shows(page, n: int) -> bool:
    """Whether line ``n`` is inside the narration's scrolled box."""
    return page.evaluate("""n => {
        const box = document.querySelector('.narration .lines').getBoundingClientRect();
        const line = document.querySelector(`.narration .line[data-n="${n}"]`);
        if (!line) return false;
        const r = line.getBoundingClientRect();
        return r.bottom > box.top && r.top < box.bottom;
    }""", n)


def test_a_long_fight_paints_a_window_of_lines_and_shows_earlier_ones_on_demand(table: Table) -> None:
    seats = table.create("long", long_setup(40), seed="long-fight")
    token = seats["spectator"]["token"]
    ended = wait_until(lambda: (b := table.state("long", token))["state"] and b["state"]["seed_revealed"] and b, timeout=120,
                       what="the long fight to end")
    version = ended["version"]
    assert version >= 2_500, version

    page = table.open(seats["spectator"]["link"])
    wait_until(lambda: narrated(page) and narrated(page)[-1] == version, what="the newest line drawn")
    # The newest WINDOW lines, in order, and no more: nor in the DOM, nor fetched.
    assert narrated(page) == list(range(version - WINDOW + 1, version + 1))
    assert page.evaluate("() => window.__table.conn.lines.length") == WINDOW
    assert page.locator(".narration .count").get_attribute("data-events") == str(version)
    assert _lines_box_shows(page, version)  # stuck to the newest

    page.click(".narration .show-earlier")
    wait_until(lambda: len(narrated(page)) == 2 * WINDOW, what="the earlier lines")
    assert narrated(page) == list(range(version - 2 * WINDOW + 1, version + 1))

    # The replay at an early version: its line is fetched, drawn, marked and scrolled to; the DOM stays bounded.
    turns = [e["n"] for e in table.events("long", token) if e["type"] == "TurnStarted"]  # lines that say something
    early = next(n for n in turns if n >= 40)
    page.click(".to-replay")
    page.wait_for_selector(".replay-bar")
    page.locator(".replay-bar input[type='range']").fill(str(early))
    page.wait_for_selector(f".replay-bar[data-replay-at='{early}']")
    page.wait_for_selector(f".narration .line.current[data-n='{early}']")
    wait_until(lambda: _lines_box_shows(page, early), what=f"line {early} scrolled into view")
    drawn = narrated(page)
    assert drawn == list(range(drawn[0], drawn[-1] + 1)) and drawn[0] <= early <= drawn[-1]
    assert len(drawn) <= 2 * WINDOW
    # and forward again, to the middle of the fight
    middle = next(n for n in turns if n >= version // 2)
    page.locator(".replay-bar input[type='range']").fill(str(middle))
    page.wait_for_selector(f".narration .line.current[data-n='{middle}']")
    wait_until(lambda: _lines_box_shows(page, middle), what=f"line {middle} scrolled into view")
    assert len(narrated(page)) <= 2 * WINDOW
    assert not table.errors, table.errors
