"""The campaign's webhooks from the workshop's campaign home, by clicks in
Chromium: the GM (signed in: the cookie and its CSRF header) registers one,
sees it, reads its delivery log and removes it; a refused URL shows the API's
one line."""

from __future__ import annotations

from tests.browser.table_helpers import Table, wait_until
from tests.browser.workshop_helpers import gm_token, sign_in


def test_the_gm_registers_the_campaigns_webhooks_from_the_campaign_home(table: Table) -> None:
    gm = sign_in(table, "notified")
    hooks_url = f"{table.served.api}/api/campaigns/notified/hooks"
    as_gm = {"Authorization": f"Bearer {gm_token(table, 'notified')}"}
    panel = gm.locator(".panel.webhooks")
    wait_until(lambda: panel.get_attribute("data-hooks") == "0", what="the campaign's hooks to load")
    panel.locator("summary").click()
    assert panel.locator("h2").text_content() == "Notifications for the campaign"  # (shown in capitals by the style)
    assert panel.locator(".hook-kind-choice label").all_inner_texts() == ["a GM ruling is needed", "the fight ended"]
    panel.locator(".hook-url-input").fill("http://10.0.0.7/hook")
    panel.locator(".add-hook").click()
    wait_until(lambda: panel.locator(".error").count() and panel.locator(".error").inner_text() == (
        "url: 10.0.0.7 is this machine, loopback or a private address (10.0.0.7): refused unless the operator "
        "allows it (firelane serve --allow-private-hooks)"), what="the private URL to be refused")
    panel.locator(".hook-url-input").fill("https://93.184.215.14/services/T000/B000/slack-s3cret")
    panel.locator(".hook-format-input").select_option("slack")
    panel.locator("[data-kind='ended']").uncheck()
    panel.locator(".add-hook").click()
    gm.wait_for_selector(".panel.webhooks[data-hooks='1']")
    [kept] = table.http.get(hooks_url, headers=as_gm).json()["hooks"]
    assert (kept["scope"], kept["url"], kept["format"], kept["kinds"]) == (
        "campaign", "https://93.184.215.14/…", "slack", ["gm_ruling"])
    assert len(panel.locator(".hook-secret code").inner_text()) >= 24
    row = panel.locator(f"[data-hook='{kept['id']}']")
    assert row.locator(".hook-url").inner_text() == "https://93.184.215.14/…"
    assert row.locator(".hook-format").inner_text() == "Slack"
    assert row.locator(".hook-kinds").inner_text() == "a GM ruling is needed"
    row.locator(".hook-deliveries").click()
    assert row.locator(".delivery-none").inner_text() == "Nothing sent yet."
    table.shot(gm, "workshop-campaign-webhooks")
    row.locator(".remove-hook").click()
    gm.wait_for_selector(".panel.webhooks[data-hooks='0']")
    assert table.http.get(hooks_url, headers=as_gm).json()["hooks"] == []
    assert not table.errors, table.errors
