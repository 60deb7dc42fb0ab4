"""The builder's deadlines in human units, by clicks in Chromium (issue 22):
a turn timer and a reaction deadline typed as a number with minutes, hours or
days; what the end of a turn's time does for the table; and, per player seat,
what the end of its deadlines does (pass, the AI plays, the GM is asked). A
setup written with durations ("1h30m") is read as the same; an out-of-range
deadline is one line next to its field."""

from __future__ import annotations

import json
from typing import Any

from tests.browser.table_helpers import Table, wait_until
from tests.browser.workshop_helpers import sign_in
from tests.cli_helpers import REPO

CORRIDOR = REPO / "docs" / "examples" / "bolt-and-blade-corridor.json"


def exported(page: Any) -> dict[str, Any]:
    page.click("[data-tab=json]")
    return json.loads(page.locator("textarea[data-json=export]").input_value())


def test_deadlines_and_what_their_end_does_are_set_in_human_units(table: Table) -> None:
    gm = sign_in(table, "deadlines")
    gm.fill("input[aria-label=\"the new encounter's name\"]", "By post")
    gm.select_option("select[data-new-system]", label="Bolt & Blade")
    gm.click("[data-do=new-encounter]")
    gm.wait_for_selector(".ws-builder [data-carry]")
    setup = json.loads(CORRIDOR.read_text())
    setup["settings"] = {"max_rounds": 12, "turn_timer": "1h30m"}
    setup["seats"] = [{"id": "gm", "role": "gm", "name": "GM"},
                      {"id": "ann", "role": "player", "name": "Ann", "combatants": ["kell"]},
                      {"id": "bo", "role": "player", "name": "Bo", "combatants": ["vass"]}]
    gm.click("[data-tab=json]")
    gm.click("summary:text('Paste setup JSON')")
    gm.fill("textarea[data-json=import]", json.dumps(setup))
    gm.click("[data-do=import-text]")
    gm.click("[data-tab=settings]")
    # A setup's "1h30m" is shown as 90 minutes.
    timer = gm.locator(".ws-settings .ws-field[data-field=turn_timer_ms]")
    assert timer.locator("select.ws-unit").input_value() == "m" and timer.locator("input").input_value() == "90"
    assert "Turn timer" in timer.locator("label").inner_text() and "0 to 30 d" in timer.locator("label").inner_text()
    # Two days for a turn: the number, then the unit.
    timer.locator("input").fill("2")
    timer.locator("select.ws-unit").select_option("d")
    deadline = gm.locator(".ws-settings .ws-field[data-field=reaction_deadline_ms]")
    deadline.locator("select.ws-unit").select_option("h")
    deadline.locator("input").fill("31")
    deadline.locator("select.ws-unit").select_option("d")
    assert deadline.locator(".problem").first.inner_text() == "Reaction deadline must be from 1 ms to 30 d, not 31 d"
    deadline.locator("input").fill("6")
    deadline.locator("select.ws-unit").select_option("h")
    wait_until(lambda: deadline.locator(".problem").count() == 0, what="the deadline's problem to go")
    # What the end of a turn's time does, for the table; and per seat.
    gm.locator(".ws-field[data-field=on_turn_timeout] select").select_option(label="Ask the GM")
    seats = gm.locator(".ws-seat-timeouts")
    assert seats.locator(".ws-seat-name").all_inner_texts() == ["Ann", "Bo"]
    seats.locator("[data-seat-timeout=ann] select").select_option(label="the AI plays for them")
    seats.locator("[data-seat-timeout=bo] select").select_option(label="pass (end the turn, no reaction)")
    table.shot(gm, "workshop-builder-deadlines")
    settings = exported(gm)["settings"]
    assert settings == {"max_rounds": 12, "turn_timer_ms": 2 * 86_400_000, "reaction_deadline_ms": 6 * 3_600_000,
                        "on_turn_timeout": "gm", "on_timeout": {"ann": "ai", "bo": "pass"}}
    # Back to "as for the whole table" for Bo: only Ann's choice is kept.
    gm.click("[data-tab=settings]")
    seats.locator("[data-seat-timeout=bo] select").select_option(label="as for the whole table")
    assert exported(gm)["settings"]["on_timeout"] == {"ann": "ai"}
    # The draft saves whole with the server's checks, and reads back the same.
    gm.click("[data-do=save]")
    gm.wait_for_selector("[data-do=save]:text('Saved')")
    assert not table.errors, table.errors
