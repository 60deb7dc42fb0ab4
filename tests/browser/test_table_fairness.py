"""The page's "Fair dice" panel (docs/fairness.md): a player takes a random
client seed and adds it by clicks; every seat sees it; once the GM ends the
fight, "Verify this fight" recomputes every die and checks every signature in
the browser (fairness.js, WebCrypto and the vendored BLAKE2b) and says so,
roll by roll."""

from __future__ import annotations

import re

from tests.browser.table_helpers import Table, setup_with_players, wait_until


def test_a_player_adds_a_random_client_seed_and_the_page_verifies_the_fight(table: Table) -> None:
    seats = table.create("fair-page", setup_with_players("bolt-and-blade", settings={"reaction_deadline_ms": 20_000}))
    player = table.open(seats["p1"]["link"])
    panel = player.locator(".panel.fairness")
    panel.wait_for(timeout=20_000)
    assert "No player has added a client seed yet" in panel.inner_text()
    player.click(".panel.fairness .random-seed")
    chosen = player.locator(".panel.fairness input.client-seed").input_value()
    assert re.fullmatch(r"[0-9a-f]{32}", chosen)
    player.click(".panel.fairness .add-seed")
    player.locator(".client-seeds li[data-seat='p1']").wait_for(timeout=20_000)
    assert chosen in player.locator(".client-seeds li[data-seat='p1']").inner_text()
    assert player.locator(".client-seed-form").count() == 0  # one each
    watcher = table.open(seats["spectator"]["link"])
    watcher.locator(".client-seeds li[data-seat='p1']").wait_for(timeout=20_000)
    assert watcher.locator(".client-seed-form").count() == 0  # a spectator adds none

    # Before the end: the signatures check, the dice wait for the seed.
    watcher.click(".panel.fairness .verify-fight")
    watcher.locator(".verify-result").wait_for(timeout=20_000)
    assert "once the fight has ended" in watcher.locator(".verify-summary").inner_text()

    ended = table.post("fair-page", seats["gm"]["token"], {"type": "EndEncounter", "command_id": "end", "actor": "gm"})
    assert ended.status_code == 200, ended.text
    wait_until(lambda: table.state("fair-page", seats["spectator"]["token"])["state"]["seed_revealed"],
               what="the seed's reveal")
    player.click(".panel.fairness .verify-fight")
    result = player.locator(".verify-result.ok")
    result.wait_for(timeout=30_000)
    summary = result.locator(".verify-summary").inner_text()
    assert summary.startswith("Verified: the seed matches its commitment; all ") and "dice" in summary
    assert re.search(r"\d+ signatures? valid \(entries 1 to \d+\), key [0-9a-f]{4}(-[0-9a-f]{4}){7}",
                     result.locator(".verify-signatures").inner_text())
    player.click(".verify-rolls summary")
    rolls = result.locator(".verify-rolls li")
    assert rolls.count() >= 1 and "✓" in rolls.first.inner_text() and "✗" not in result.inner_text()
    table.shot(player, "fairness-verified")
    assert not table.errors, table.errors
