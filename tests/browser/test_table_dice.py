"""The page says when a fight's dice are reproducible (issue 17, item 4): its
view's JSON and a visible line in the header; the roster on the landing page
marks it too. A fight with secret random dice says nothing of the kind."""

from __future__ import annotations

from tests.browser.table_helpers import Table, setup_with_players, wait_until

WARNING = "reproducible dice: anyone who knows the seed text can predict every roll"


def test_the_page_shows_reproducible_dice_and_only_then(table: Table) -> None:
    setup = setup_with_players("bolt-and-blade", settings={"reaction_deadline_ms": 20_000})
    seeded = table.create("dice-seeded", setup, seed="7341")  # with --reproducible-dice
    secret = table.create("dice-secret", setup)
    for encounter, seats, reproducible in (("dice-seeded", seeded, True), ("dice-secret", secret, False)):
        token = seats["spectator"]["token"]
        view = wait_until(lambda: (v := table.get(encounter, "view?after=0&tail=5", token))["state"] and v,
                          what=f"{encounter} to start")
        assert view["reproducible_dice"] is reproducible and view["state"]["reproducible_dice"] is reproducible
        assert view["dice_warning"] == (WARNING if reproducible else "")
        page = table.open(seats["spectator"]["link"])
        header = page.locator(".app header")
        if reproducible:
            warning = header.locator(".dice-warning")
            assert warning.is_visible() and WARNING in warning.inner_text()
            wait_until(lambda: WARNING in page.locator(".narration .line[data-n='1']").inner_text(),
                       what="the first narration line to say so")
        else:
            assert header.locator(".dice-warning").count() == 0
            assert "reproducible" not in page.locator(".app").inner_text()
    context = table.browser.new_context()  # the landing page (no live status to wait for, as table.open does)
    table.contexts.append(context)
    landing = context.new_page()
    landing.goto(table.served.api + "/")
    landing.wait_for_selector("[data-encounter='dice-seeded']", timeout=20_000)
    assert "reproducible dice" in landing.locator("[data-encounter='dice-seeded']").inner_text()
    assert "reproducible" not in landing.locator("[data-encounter='dice-secret']").inner_text()
    assert not table.errors, table.errors
