"""Webhooks and deadlines on the table page, in real Chromium: a player
registers a webhook by clicks (URL, body shape, which notifications), reads
its delivery log and removes it; a long deadline is shown in the viewer's own
time zone."""

from __future__ import annotations

import datetime
import zoneinfo

from tests.browser.table_helpers import Table, setup_with_players, wait_until


def test_a_player_registers_reads_and_removes_a_webhook_on_the_page(table: Table) -> None:
    seats = table.create("hooked-page", setup_with_players("bolt-and-blade", settings={"turn_timer": "1d"}))
    token = seats["p1"]["token"]
    page = table.open(seats["p1"]["link"])
    panel = page.locator(".panel.webhooks")
    panel.wait_for()
    wait_until(lambda: panel.get_attribute("data-hooks") == "0", what="the hooks to load")
    panel.locator("summary").click()
    # A player is offered what concerns a player, all ticked.
    assert panel.locator(".hook-kind-choice label").all_inner_texts() == [
        "your turn", "a reaction awaits you", "the fight ended"]
    # Refused with the API's one line (the server does not allow loopback receivers here).
    # (the two refusals below are 400s, which Chromium also logs: they are expected, and counted)
    panel.locator(".hook-url-input").fill("http://me:pw@example.com/hook")
    panel.locator(".add-hook").click()
    assert panel.locator(".error").inner_text() == (
        "url: must not carry credentials (user:password@): put a secret in the path or use the signature")
    panel.locator(".hook-url-input").fill("http://127.0.0.1:9/x")
    panel.locator(".add-hook").click()
    wait_until(lambda: panel.locator(".error").inner_text() == (
        "url: 127.0.0.1 is this machine, loopback or a private address (127.0.0.1): refused unless the operator "
        "allows it (firelane serve --allow-private-hooks)"), what="the loopback URL to be refused")
    # A public address (a literal: no name to resolve); told only of the end, so nothing is sent during the test.
    panel.locator(".hook-url-input").fill("http://93.184.215.14/discord-s3cret")
    panel.locator(".hook-format-input").select_option("discord")
    panel.locator("[data-kind='window']").uncheck()
    panel.locator("[data-kind='your_turn']").uncheck()
    panel.locator(".add-hook").click()
    page.wait_for_selector(".panel.webhooks[data-hooks='1']")
    [kept] = table.get("hooked-page", "hooks", token)["hooks"]
    assert (kept["url"], kept["format"], kept["kinds"]) == ("http://93.184.215.14/…", "discord", ["ended"])
    assert len(panel.locator(".hook-secret code").inner_text()) >= 24  # shown once
    row = panel.locator(f"[data-hook='{kept['id']}']")
    assert row.locator(".hook-url").inner_text() == "http://93.184.215.14/…"  # never the path (its secret)
    assert row.locator(".hook-kinds").inner_text() == "the fight ended"
    assert panel.locator(".error").count() == 0
    row.locator(".hook-deliveries").click()
    assert row.locator(".delivery-none").inner_text() == "Nothing sent yet."
    table.shot(page, "table-webhooks")
    row.locator(".remove-hook").click()
    page.wait_for_selector(".panel.webhooks[data-hooks='0']")
    assert table.get("hooked-page", "hooks", token)["hooks"] == []
    # The GM's seat is offered the GM's notifications; a spectator has no panel.
    gm = table.open(seats["gm"]["link"])
    gm.locator(".panel.webhooks summary").click()
    assert gm.locator(".panel.webhooks .hook-kind-choice label").all_inner_texts() == [
        "a GM ruling is needed", "the fight ended"]
    spectator = table.open(seats["spectator"]["link"])
    assert spectator.locator(".panel.webhooks").count() == 0
    refusals = [e for e in table.errors if e.endswith("Failed to load resource: the server responded with a status of 400 ()")]
    assert len(refusals) == 2 and len(table.errors) == 2, table.errors


def test_a_long_deadline_is_shown_in_the_viewers_time_zone(table: Table) -> None:
    """The same turn's deadline on one player's page in two time zones: each
    shows its own local date and time of the one instant (data-due, UTC)."""
    # (windows for the player pass after a second: the AI side's turns do not wait on an absent player)
    setup = setup_with_players("bolt-and-blade", settings={"turn_timer": "1d", "reaction_deadline": "1s"})
    seats = table.create("zoned", setup)
    token = seats["p1"]["token"]
    mine = set(setup["seats"][1]["combatants"])
    wait_until(lambda: (a := table.get("zoned", "view?lines=0", token)["awaiting"]).get("turn_deadline_at")
               and a["combatants"][0] in mine, timeout=90, what="the player's turn with its timer",
               describe=lambda: table.get("zoned", "view?lines=0", token)["awaiting"])
    shown = {}
    for zone in ("Asia/Kolkata", "America/Los_Angeles"):
        page = table.open(seats["p1"]["link"], timezone_id=zone, locale="en-GB")
        clock = page.locator(".countdown[data-due]").first
        clock.wait_for(timeout=20_000)
        due = datetime.datetime.fromisoformat(clock.get_attribute("data-due").replace("Z", "+00:00"))
        local = due.astimezone(zoneinfo.ZoneInfo(zone))
        text = clock.inner_text()
        shown[zone] = text.split("due ")[1]
        assert f"left · due {local.strftime('%a')} {local.day} {local.strftime('%b')}, {local.strftime('%H:%M')}" in text, (
            zone, text, local)
        assert clock.get_attribute("title").startswith("due ")
    assert shown["Asia/Kolkata"] != shown["America/Los_Angeles"]  # 13½ hours apart
    assert not table.errors, table.errors
