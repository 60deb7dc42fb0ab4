""""While you were away" in real Chromium: a player's page, opened again after
the fight went on without it, opens on a digest of what happened (who acted,
what awaits it), then the live table; the API gives the same digest."""

from __future__ import annotations

from tests.browser.table_helpers import Table, setup_with_players, wait_until


def test_a_page_opened_again_begins_with_what_happened_while_away(table: Table) -> None:
    seats = table.create("away", setup_with_players("bolt-and-blade", settings={"turn_timer": "1d",
                                                                                 "reaction_deadline": "2s"}))
    token = seats["p1"]["token"]
    page = table.open(seats["p1"]["link"])
    mine = set(page.eval_on_selector_all("[data-mine]", "xs => xs.map(x => x.dataset.mine)"))
    # Wait for one of the player's turns, with the page open: that version is seen.
    view = wait_until(lambda: (v := table.get("away", "view?lines=0", token))["awaiting"]["kind"] == "turn"
                      and v["awaiting"]["combatants"][0] in mine and v, timeout=60, what="the player's turn")
    seen = view["version"]
    wait_until(lambda: page.evaluate("() => Object.entries(localStorage).find(([k]) => k.includes('/away/p1'))?.[1]")
               == str(seen), what="the page to note what it has seen")
    assert page.locator(".digest").count() == 0  # nothing missed yet
    page.goto("about:blank")
    # Away: the player's turn is ended over the API; the fight goes on to the player's next turn (the AI side
    # playing, or straight to another of the player's combatants).
    who = view["awaiting"]["combatants"][0]
    assert table.post("away", token, {"type": "EndTurn", "command_id": "away-1", "actor": who}).status_code == 200
    wait_until(lambda: (v := table.get("away", "view?lines=0", token))["version"] > seen + 1
               and v["awaiting"]["kind"] in ("turn", "ended") and (v["awaiting"]["kind"] == "ended"
                                                                  or v["awaiting"]["combatants"][0] in mine),
               timeout=60, what="the fight to come back to the player")
    digest = table.get("away", f"digest?since={seen}", token)
    assert digest["since"] == seen and digest["events"] > 0 and digest["acted"]
    page.goto(seats["p1"]["link"])
    card = page.locator(".digest")
    card.wait_for(timeout=20_000)
    assert card.get_attribute("data-since") == str(seen)
    shown = card.locator(".digest-lines li").all_inner_texts()
    assert shown[0].startswith("Acted: ") and shown == digest["summary"][:len(shown)]
    table.shot(page, "table-while-you-were-away")
    if digest["awaits"] and digest["awaits"][0].get("deadline_at"):
        assert card.locator(".digest-due li").first.get_attribute("data-due") == digest["awaits"][0]["deadline_at"]
    card.locator(".digest-close").click()
    card.wait_for(state="detached")
    page.wait_for_selector(".app header .status.live")  # the live table
    assert not table.errors, table.errors
