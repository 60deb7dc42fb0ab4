"""Why an enemy cannot be targeted, in real Chromium: the options'
`untargetable` (each enemy with its reason in words and, where a square
blocks the line, that square) marks the enemy's token with a ⊘; hovering or
tapping it shows the reason, the line of sight and the square that blocks
it, and the acting combatant's card lists each."""

from __future__ import annotations

from typing import Any

from tests.browser.table_helpers import Table, page_version, setup_with_players, wait_until


def _players_turn(table: Table, encounter: str, token: str, page: Any) -> str:
    answered: set[tuple[str, int]] = set()
    mine = set(page.eval_on_selector_all("[data-mine]", "xs => xs.map(x => x.dataset.mine)"))
    for _ in range(40):
        body = wait_until(lambda: (b := table.state(encounter, token)) and (b["awaiting"] or {}).get("kind") in ("turn", "reactions")
                          and {c for c in b["awaiting"]["combatants"] if (c, b["awaiting"].get("window")) not in answered} & mine
                          and b, timeout=60, what="the player to be asked")
        awaiting = body["awaiting"]
        wait_until(lambda: page_version(page) >= body["version"], what="the page to catch up")
        who = next(c for c in awaiting["combatants"] if c in mine and (c, awaiting.get("window")) not in answered)
        if awaiting["kind"] == "turn":
            return who
        prompt = page.locator(f"[data-prompt='{who}'][data-window='{awaiting['window']}']")
        prompt.locator(".pass").click()
        answered.add((who, awaiting["window"]))
        prompt.wait_for(state="detached")
    raise AssertionError("no turn of the player's")


def test_an_enemy_that_cannot_be_targeted_says_why_on_hover_and_tap(table: Table) -> None:
    encounter = "sight-rond6"
    seats = table.create(encounter, setup_with_players("rond6", settings={"reaction_deadline_ms": 60_000}), seed="ally-1")
    token = seats["gm"]["token"]
    page = table.open(seats["p1"]["link"], width=1440, height=900)
    who = _players_turn(table, encounter, token, page)
    options = page.evaluate("() => window.__table.conn.view.options")
    blocked = next(c for c in options["combatants"] if c["combatant"] == who)["untargetable"]
    assert blocked, "the seed gives the player no enemy out of sight"
    first = blocked[0]
    enemy = first["combatant"]
    assert first["words"] and "_" not in first["words"]
    mark = page.locator(f"svg.map [data-token='{enemy}']")
    assert "untargetable" in mark.get_attribute("class") and mark.locator(".no-line-badge").count() == 1
    assert mark.locator(".target-ring").count() == 0
    mark.locator(".body").hover()
    tip = page.locator(f".why-not-tip[data-why-not='{enemy}']")
    tip.wait_for()
    assert first["words"] in tip.text_content()
    assert page.locator(f"svg.map .sight-line[data-why-not='{enemy}'] line").count() == 1
    if first.get("blocking_square"):
        x, y = first["blocking_square"]
        assert page.locator(f"svg.map .sight-line .blocking[data-blocking='{x},{y}']").count() == 1
    table.shot(page, "table-why-not")
    # A tap keeps the reason shown once the pointer has gone; a tap on the map clears it.
    mark.locator(".body").click()
    page.mouse.move(2, 2)
    tip.wait_for()
    page.locator(f"[data-mine='{who}'] [data-untargetable='{enemy}']").wait_for()
    assert first["words"] in page.locator(f"[data-mine='{who}'] [data-untargetable='{enemy}']").text_content()
    assert not table.errors, table.errors
