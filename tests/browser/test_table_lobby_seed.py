"""Client seeds in the lobby (docs/fairness.md section 3): while the fight
waits for the GM's Start, the page shows the seed's commitment and each
player adds a seed by clicks, a random one or typed; the Start records both
before the opening initiative, and the fight's first entry carries the
commitment the lobby showed."""

from __future__ import annotations

import json
import re

from tests.browser.table_helpers import Table, setup_with_players, wait_until
from tests.cli_helpers import firelane


def test_two_players_add_their_seeds_in_the_lobby_before_the_gm_starts(table: Table) -> None:
    setup = setup_with_players("bolt-and-blade")
    others = [c["id"] for c in setup["combatants"] if c["id"] not in setup["seats"][1]["combatants"]]
    for combatant in setup["combatants"]:
        combatant["policy"] = "human"
    setup["seats"].append({"id": "p2", "role": "player", "name": "Player Two", "combatants": others})
    path = table.tmp_path / "lobby.json"
    path.write_text(json.dumps(setup))
    store = ("--data-dir", str(table.served.data_dir))
    created = firelane("create", "lobby-seeds", "--setup", str(path), "--lobby", "--json", *store)
    assert created.returncode == 0, created.stderr
    seats = {s["seat"]: s for s in json.loads(created.stdout)["seats"]}

    one = table.open(seats["p1"]["link"], live=False)
    panel = one.locator(".lobby-seed")
    panel.wait_for(timeout=20_000)
    assert "the GM starts the fight" in one.locator(".lobby-wait .booting").inner_text()
    commitment = table.get("lobby-seeds", "seat", seats["p1"]["token"])["seed_commitment"]
    assert re.fullmatch(r"[0-9a-f]{64}", commitment) and commitment in panel.locator(".seed-commitment").inner_text()
    one.click(".lobby-seed .random-seed")
    chosen = one.locator(".lobby-seed input.client-seed").input_value()
    assert re.fullmatch(r"[0-9a-f]{32}", chosen)
    one.click(".lobby-seed .add-seed")
    one.locator(".lobby-seed-added").wait_for(timeout=20_000)
    assert chosen in one.locator(".lobby-seed-added").inner_text()
    assert one.locator(".client-seed-form").count() == 0  # one each

    two = table.open(seats["p2"]["link"], live=False)
    two.locator(".lobby-seed input.client-seed").wait_for(timeout=20_000)
    two.fill(".lobby-seed input.client-seed", "Player Two's own words")
    two.click(".lobby-seed .add-seed")
    two.locator(".lobby-seed-added").wait_for(timeout=20_000)
    watcher = table.open(seats["spectator"]["link"], live=False)
    watcher.locator(".lobby-seed .seed-commitment").wait_for(timeout=20_000)
    assert watcher.locator(".client-seed-form").count() == 0  # a spectator adds none
    table.shot(one, "lobby-seed-added")

    started = firelane("start", "lobby-seeds", *store)
    assert started.returncode == 0, started.stderr
    for page, seat in ((one, "p1"), (two, "p2")):
        page.locator(f".client-seeds li[data-seat='{seat}']").wait_for(timeout=30_000)
    assert chosen in one.locator(".client-seeds li[data-seat='p1']").inner_text()
    assert "Player Two's own words" in one.locator(".client-seeds li[data-seat='p2']").inner_text()
    events = wait_until(lambda: [e for e in table.events("lobby-seeds", seats["spectator"]["token"])
                                 if e["type"] == "InitiativeRolled"] and table.events("lobby-seeds", seats["spectator"]["token"]),
                        what="the opening initiative")
    types = [e["type"] for e in events]
    assert types[:3] == ["EncounterStarted", "ClientSeedAdded", "ClientSeedAdded"]
    assert types.index("InitiativeRolled") > 2
    assert events[0]["data"]["seed_commitment"] == commitment
    assert not table.errors, table.errors
