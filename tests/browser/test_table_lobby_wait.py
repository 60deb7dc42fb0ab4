"""A player who opens their invite link while the encounter is still a lobby
(issue 20 item 4): the page says the GM starts the fight and who is here, live;
the GM's Start brings the table to life without a reload."""

from __future__ import annotations

import json

from tests.browser.table_helpers import Table, table_setup, wait_until
from tests.cli_helpers import firelane


def test_a_player_in_the_lobby_sees_who_is_here_and_the_table_goes_live_at_the_start(table: Table) -> None:
    path = table.tmp_path / "waiting.json"
    path.write_text(json.dumps(table_setup(reaction_deadline_ms=60_000)))
    store = ("--data-dir", str(table.served.data_dir))
    created = firelane("create", "waiting", "--setup", str(path), "--lobby", "--json", *store)
    assert created.returncode == 0, created.stderr
    seats = {s["seat"]: s for s in json.loads(created.stdout)["seats"]}

    alice = table.open(seats["alice"]["link"], live=False)
    line = alice.locator(".lobby-wait .lobby-line")
    line.wait_for(timeout=20_000)
    assert line.inner_text() == "waiting waits in the lobby: the GM starts the fight."
    assert "waiting for the engine" not in alice.locator(".lobby-wait").inner_text()
    present = alice.locator(".lobby-wait .lobby-present")
    wait_until(lambda: present.inner_text() == "Here now: Alice (you).", what="Alice to see herself here")

    bruno = table.open(seats["bruno"]["link"], live=False)
    bruno.locator(".lobby-wait .lobby-line").wait_for(timeout=20_000)
    wait_until(lambda: present.inner_text() == "Here now: Alice (you), Bruno.", what="Bruno's arrival on Alice's page")
    wait_until(lambda: bruno.locator(".lobby-wait .lobby-present").inner_text() == "Here now: Alice, Bruno (you).",
               what="Bruno to see both")
    assert table.get("waiting", "events?after=0", seats["alice"]["token"])["events"] == []  # nothing rolled yet

    started = firelane("start", "waiting", *store)
    assert started.returncode == 0, started.stderr
    for page in (alice, bruno):  # no reload: the first event brings the table
        page.locator("svg.map").wait_for(timeout=30_000)
        page.locator(".app header .status.live").wait_for(timeout=20_000)
        assert page.locator(".lobby-wait").count() == 0
    assert not table.errors, table.errors
