"""The orders editor in real Chromium: a player gives a standing order by
clicks, sees it in words, removes it; the API keeps exactly what the page shows."""

from __future__ import annotations

from tests.browser.table_helpers import Table, setup_with_players, wait_until


def test_a_player_gives_and_removes_standing_orders_on_the_page(table: Table) -> None:
    setup = setup_with_players("bolt-and-blade", settings={"reaction_deadline": "2h", "turn_timer": "1d"})
    seats = table.create("orders-page", setup)
    token = seats["p1"]["token"]
    first = setup["seats"][1]["combatants"][0]
    name = next(c["name"] for c in setup["combatants"] if c["id"] == first)
    page = table.open(seats["p1"]["link"])
    panel = page.locator(".panel.orders")
    panel.wait_for()
    assert panel.get_attribute("data-orders") == "0"
    if panel.locator(".order-combatant").count():
        panel.locator(".order-combatant").select_option(first)
    panel.locator(".order-on").select_option("fire_lane")
    panel.locator(".order-do").select_option("reactive_fire")
    panel.locator(".order-times").fill("1")
    panel.locator(".add-order").click()
    page.wait_for_selector(".panel.orders[data-orders='1']")
    assert panel.locator(".order-text").inner_text() == f"{name}: when an enemy crosses my fire lane, Reactive Fire (once)"
    # A second: how the turn is spent when it runs out of time.
    panel.locator(".order-on").select_option("turn")
    panel.locator(".order-do").select_option("BBTakeCover")
    panel.locator(".order-times").fill("0")
    panel.locator(".add-order").click()
    page.wait_for_selector(".panel.orders[data-orders='2']")
    kept = table.get("orders-page", "orders", token)["orders"]
    assert [(o["combatant"], o["on"], o["do"], o["times"]) for o in kept] == [
        (first, "fire_lane", "reactive_fire", 1), (first, "turn", "BBTakeCover", 0)]
    table.shot(page, "table-standing-orders")
    page.locator(f"[data-order='{kept[0]['id']}'] .remove-order").click()
    page.wait_for_selector(".panel.orders[data-orders='1']")
    wait_until(lambda: [o["id"] for o in table.get("orders-page", "orders", token)["orders"]] == [kept[1]["id"]],
               what="the removal to be kept")
    # The GM's page has no orders editor (only a player's seat gives orders).
    gm = table.open(seats["gm"]["link"])
    assert gm.locator(".panel.orders").count() == 0
    assert not table.errors, table.errors
