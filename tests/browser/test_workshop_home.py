"""The GM's campaign home by clicks in Chromium (issue 20): a character
made from the form, edited with a reason, retired and revived; a rest;
drafts duplicated and deleted (after a confirmation); an ended fight
archived; the campaign exported and imported; signing out; and what the
page says uses names, not ids."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.browser.table_helpers import Table, wait_until
from tests.browser.workshop_helpers import sign_in
from tests.cli_helpers import firelane


def characters_of(table: Table, campaign: str) -> dict[str, Any]:
    response = table.http.get(f"{table.served.api}/api/campaigns/{campaign}/characters")
    response.raise_for_status()
    return {c["name"]: c for c in response.json()["characters"]}


def test_characters_rests_and_encounters_from_the_campaign_home(table: Table, tmp_path: Path) -> None:
    gm = sign_in(table, "home")
    # A character from the form, starting from an archetype: its fields with labels and ranges.
    gm.click("[data-do=new-character]")
    form = gm.locator("form[data-form=new]")
    form.locator("[data-field=character-name]").fill("Oska")
    form.locator("select[data-character-system]").select_option(label="Bolt & Blade")
    vitality = form.locator(".ws-field[data-field=vitality]")
    vitality.wait_for()
    assert "Vitality" in vitality.locator("label").inner_text() and "1–500" in vitality.locator("label").inner_text()
    vitality.locator("input").fill("777")
    assert "Vitality must be 1–500, not 777" in vitality.locator(".problem").inner_text()
    vitality.locator("input").fill("21")
    form.locator("[data-do=save-character]").click()
    row = gm.locator(".ws-characters li[data-character=Oska]")
    row.wait_for()
    assert characters_of(table, "home")["Oska"]["sheet"]["vitality"] == 21

    # Edited, with its reason kept in the character's history.
    row.locator("[data-do=edit]").click()
    edit = row.locator("form[data-form=edit]")
    # Past what the campaign's rules allow: their one line, next to the form; nothing changes.
    edit.locator(".ws-field[data-field=vitality] input").fill("25")
    edit.locator("input[placeholder^='why']").fill("a cybernetic heart")
    edit.locator("[data-do=save-character]").click()
    refusal = edit.locator("[data-error]")
    refusal.wait_for()
    assert "vitality" in refusal.inner_text() and "\n" not in refusal.inner_text().strip()
    assert characters_of(table, "home")["Oska"]["sheet"]["vitality"] == 21
    edit.locator(".ws-field[data-field=vitality] input").fill("21")
    edit.locator(".ws-field[data-field=movement_ft] input").fill("35")
    edit.locator("[data-do=save-character]").click()
    wait_until(lambda: characters_of(table, "home")["Oska"]["sheet"].get("movement_ft") == 35, what="the edit",
               describe=lambda: gm.locator(".ws-characters").inner_text())
    history = table.http.get(f"{table.served.api}/api/campaigns/home/characters/{characters_of(table, 'home')['Oska']['id']}").json()["history"]
    assert any("a cybernetic heart" in entry["text"] for entry in history)

    # Retired, then revived, each confirmed.
    row.locator("[data-do=retire]").click()
    gm.click("[data-confirm-yes=Retire]")
    wait_until(lambda: characters_of(table, "home")["Oska"]["retired"], what="the retirement")
    gm.locator(".ws-characters li[data-character=Oska] [data-do=revive]").click()
    gm.click("[data-confirm-yes=Revive]")
    wait_until(lambda: not characters_of(table, "home")["Oska"]["retired"], what="the revival")

    # A rest of three days: its lines.
    gm.click("[data-do=rest]")
    rest = gm.locator("form.ws-rest")
    rest.locator("input[type=number]").fill("3")
    rest.locator("[data-do=rest-now]").click()
    rest.locator(".ws-rest-lines li").first.wait_for()
    assert "3 day" in rest.locator(".ws-rest-lines").inner_text()

    # Drafts: made, duplicated, one deleted after a confirmation.
    gm.fill("input[aria-label=\"the new encounter's name\"]", "Cellar")
    gm.click("[data-do=new-encounter]")
    gm.wait_for_selector(".ws-builder")
    gm.click(".ws-head .back")
    drafts = gm.locator(".ws-state[data-state=draft]")
    drafts.locator("li[data-encounter=Cellar]").wait_for()
    drafts.locator("li[data-encounter=Cellar] [data-do=duplicate]").click()
    drafts.locator("li[data-encounter='Cellar (copy)']").wait_for()
    drafts.locator("li[data-encounter=Cellar] [data-do=delete]").click()
    gm.click("[data-confirm-yes=Delete]")
    wait_until(lambda: drafts.locator("li[data-encounter=Cellar]").count() == 0, what="the draft deleted")
    assert drafts.locator("li[data-encounter='Cellar (copy)']").count() == 1

    # An ended fight (the AI's own, made from the CLI) is archived from the page.
    made = firelane("create", "brawl", "--demo-setup", "bolt-and-blade", "--campaign", "home", "--data-dir", str(table.served.data_dir))
    assert made.returncode == 0, made.stderr
    ended = gm.locator(".ws-state[data-state=ended] li[data-encounter]")
    wait_until(lambda: ended.count() == 1, timeout=120, what="the AI's fight to end")
    name = ended.first.get_attribute("data-encounter")
    ended.first.locator("[data-do=archive]").click()
    gm.locator(f".ws-state[data-state=archived] li[data-encounter='{name}']").wait_for()
    # Words, not ids: no encounter or character shows by its id where it has a name.
    text = gm.locator(".ws-home").inner_text()
    assert "cellar-copy" not in text

    # Exported, and imported as a campaign of its own, which the browser is signed in to at once.
    with gm.expect_download() as download:
        gm.click(".ws-campaign-bar a:text('Export')")
    exported = tmp_path / "home.campaign"
    download.value.save_as(exported)
    gm.click("[data-do=new-campaign]")
    gm.fill("input[aria-label=\"the new campaign's name\"]", "home-again")
    gm.set_input_files(".ws-new-campaign input[type=file]", str(exported))
    gm.wait_for_selector(".ws-home[data-campaign=home-again]")
    gm.locator(".ws-characters li[data-character=Oska]").wait_for()
    assert set(gm.locator("select[data-campaigns] option").all_inner_texts()) >= {"home", "home-again"}

    # Signing out: the page asks for the sign-in link again.
    gm.click("button:text('Sign out')")
    gm.wait_for_selector(".ws-signed-out")
    assert table.errors == []
