"""The campaign's pages in real Chromium: the landing lists the characters as
the campaign stream has them and the encounters a page at a time; a
character's page shows its history (the fight it joined, its aftermath, the
rest with its rolls) and opens the fight's replay; an unknown character is
one line. Driven by clicks; the API and the CLI are read only to check."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import msgspec

from firelane.engine.registry import demo_setup, get_system
from tests.browser.table_helpers import Table, wait_until
from tests.cli_helpers import cli_ok


def raid_setup(tmp_path: Path) -> Path:
    """The d100-zones demo's rangers Ives and Pell, as campaign characters, against the raider Vex (AI all)."""
    demo = msgspec.to_builtins(demo_setup("d100-zones"))
    heroes = [{"id": c["id"], "character": c["id"], "side": c["side"], "position": c["position"]}
              for c in demo["combatants"] if c["id"] in ("rg-ives", "rg-pell")]
    foe = next(c for c in demo["combatants"] if c["id"] == "rd-vex")
    path = tmp_path / "raid.json"
    path.write_text(json.dumps({**demo, "combatants": heroes + [foe]}))
    return path


def api(table: Table, path: str) -> Any:
    response = table.http.get(f"{table.served.api}/api/campaigns/{path}")
    response.raise_for_status()
    return response.json()


def open_page(table: Table, url: str, ready: str) -> Any:
    """A page in its own browser context (as `Table.open`, for a page that is not a seat's)."""
    page = table.new_context().new_page()
    page.on("pageerror", lambda error: table.errors.append(f"{url}: {error}"))
    # The browser logs each refused request (a 404 unknown character, a 400/403 refused change)
    # as an error; the page shows those refusals itself, which the tests check.
    page.on("console", lambda message: table.errors.append(f"{url}: {message.text}") if message.type == "error"
            and not re.match(r"Failed to load resource: the server responded with a status of 4\d\d", message.text) else None)
    page.goto(url)
    page.wait_for_selector(ready)
    return page


def encounter_events(table: Table, campaign: str, encounter: str, token: str) -> list[dict[str, Any]]:
    response = table.http.get(f"{table.served.api}/api/campaigns/{campaign}/encounters/{encounter}/events?after=0",
                              headers={"Authorization": f"Bearer {token}"})
    response.raise_for_status()
    return response.json()["events"]


def shown_characters(page: Any) -> dict[str, dict[str, str]]:
    return page.eval_on_selector_all(".character-list tbody tr", """rows => Object.fromEntries(rows.map(r => [r.dataset.character, {
        name: r.querySelector('.open-character').textContent, status: r.querySelector('[data-status]').dataset.status,
        summary: r.querySelector('.summary').textContent, fights: r.querySelector('.fights').textContent,
        rests: r.querySelector('.rests').textContent}]))""")


def expected_characters(listing: dict[str, Any]) -> dict[str, dict[str, str]]:
    return {c["id"]: {"name": c["name"], "status": c["status"], "summary": c["summary"],
                      "fights": str(len(c["encounters"])), "rests": str(len(c["downtimes"]))} for c in listing["characters"]}


def test_the_landing_lists_the_characters_and_a_character_page_shows_its_history_and_opens_the_replay(
        table: Table, tmp_path: Path) -> None:
    store = ["--data-dir", str(table.served.data_dir), "--campaign", "heroes"]
    cli_ok("characters", "--create-demo", "d100-zones", "--side", "rangers", *store)
    cli_ok("run", "raid", "--setup", str(raid_setup(tmp_path)), "--seed", "raid", "--reproducible-dice", "--quiet", *store)  # serve runs it to its end
    seats = {row["seat"]: row for row in json.loads(cli_ok("seats", "raid", "--json", *store))["seats"]}

    # A spectator watched the fight (the table remembers the seat), then goes to the campaign's page.
    page = table.open(seats["spectator"]["link"])
    page.goto(f"{table.served.api}/?campaign=heroes")
    page.wait_for_selector(".character-list tbody tr")
    after_fight = api(table, "heroes/characters")
    assert shown_characters(page) == expected_characters(after_fight)
    hurt = {c["id"]: c for c in after_fight["characters"] if c["encounters"] == ["raid"]}
    assert set(hurt) == {"rg-ives", "rg-pell"}
    # The fight is over: they came back, with what the aftermath gave them.
    assert all(c["engaged_in"] == "" for c in hurt.values()) and page.locator("[data-engaged]").count() == 0
    table.shot(page, "table-campaign")

    rested = cli_ok("rest", "--party", "--days", "2", "--healer", "rg-pell", "--seed", "s", "--reproducible-dice", *store)
    assert "seed revealed" in rested
    page.reload()
    page.wait_for_selector(".character-list tbody tr")
    after_rest = api(table, "heroes/characters")
    assert after_rest != after_fight
    assert shown_characters(page) == expected_characters(after_rest)

    # One character: where it stands, and its history in the projection's words, oldest first.
    page.click(".character-list tr[data-character='rg-pell'] .open-character")
    page.wait_for_selector(".character-page .history .entry")
    assert page.url == f"{table.served.api}/characters/heroes/rg-pell"
    pell = api(table, "heroes/characters/rg-pell")
    assert page.text_content(".character-page h1.name") == pell["character"]["name"]
    assert page.text_content(".character-page .standing .summary") == pell["character"]["summary"]
    assert page.get_attribute(".character-page .standing [data-status]", "data-status") == pell["character"]["status"]
    entries = page.eval_on_selector_all(".history .entry", """xs => xs.map(x => ({version: Number(x.dataset.version),
        type: x.dataset.type, text: x.querySelector('.text').textContent}))""")
    assert entries == [{"version": h["version"], "type": h["type"], "text": h["text"]} for h in pell["history"]]
    types = [entry["type"] for entry in entries]
    assert types == ["CharacterCreated", "CharactersEnlisted", "AftermathRecorded", "DowntimeStarted", "CharacterRested"]
    aftermath = pell["history"][2]["event"]
    came_back = next(o for o in aftermath["characters"] if o["character"] == "rg-pell")
    aftermath_text = entries[2]["text"]
    assert aftermath_text.startswith(f"came back from raid (won by {aftermath['winner']}")
    words = get_system("d100-zones").labels
    for change in came_back["changes"]:  # what the fight changed, as the history says it, in words
        assert f"{words.word('fields', change['field'])} from {change['before']} to {change['after']}" in aftermath_text
    # The rest with its rolls: each die, total and rule as the event has them.
    rest = pell["history"][4]["event"]
    assert rest["rolls"], "with the healer's seed, Pell's first aid rolls"
    shown_rolls = page.eval_on_selector_all(".history .entry[data-type='CharacterRested'] .roll", """rs => rs.map(r => ({
        purpose: r.querySelector('.roll-head b').textContent, rule: r.dataset.rule,
        faces: [...r.querySelectorAll('.die')].map(d => Number(d.textContent)), total: Number(r.querySelector('.roll-total b').textContent)}))""")
    assert shown_rolls == [{"purpose": roll["purpose"], "rule": roll["rule"], "faces": [die[1] for die in roll["dice"]],
                            "total": roll["total"]} for roll in rest["rolls"]]
    # Only the entries that name an encounter link to its replay.
    linked = page.eval_on_selector_all(".history .entry", "xs => xs.map(x => x.querySelector('.replay-link')?.dataset.encounter || null)")
    assert linked == [None, "raid", "raid", None, None]
    table.shot(page, "table-character")

    # Through to the fight's replay, on the seat this browser sat at.
    final_version = len(encounter_events(table, "heroes", "raid", seats["spectator"]["token"]))
    page.click(".history .entry[data-type='AftermathRecorded'] .replay-link")
    page.wait_for_selector(f".replay-bar[data-replay-at='{final_version}']", timeout=20_000)
    assert page.url.startswith(f"{table.served.api}/table/heroes/raid#token=") and page.url.endswith("&replay")
    assert page.get_attribute(".app header .seat", "data-role") == "spectator"
    assert not table.errors, table.errors


def test_an_unknown_character_is_one_line_and_the_way_back(table: Table, tmp_path: Path) -> None:
    store = ["--data-dir", str(table.served.data_dir), "--campaign", "lonely"]
    cli_ok("characters", "--create-demo", "bolt-and-blade", *store)
    page = open_page(table, f"{table.served.api}/characters/lonely/nobody", ".character-page [data-error]")
    error = page.text_content(".character-page [data-error]")
    answer = table.http.get(f"{table.served.api}/api/campaigns/lonely/characters/nobody")
    assert answer.status_code == 404 and error == answer.json()["error"]
    assert error.startswith("no character 'nobody' in campaign 'lonely'") and "\n" not in error
    assert page.locator(".character-page .history, .character-page h1").count() == 0
    page.click(".character-page a.back")
    page.wait_for_selector(".character-list tbody tr")
    assert set(shown_characters(page)) == {c["id"] for c in api(table, "lonely/characters")["characters"]}
    assert not table.errors, table.errors


def test_the_encounters_list_pages_and_each_row_opens_its_replay(table: Table, tmp_path: Path) -> None:
    store = ["--data-dir", str(table.served.data_dir), "--campaign", "many"]
    names = [f"skirmish-{i}" for i in range(5)]
    for name in names:
        cli_ok("create", name, "--demo-setup", "d100-degrees", *store)
    seats = {row["seat"]: row for row in json.loads(cli_ok("seats", names[3], "--json", *store))["seats"]}
    page = table.open(seats["spectator"]["link"])  # this browser sat at skirmish-3
    page.goto(f"{table.served.api}/?campaign=many&per_page=2")
    page.wait_for_selector(".encounter-list tbody tr")
    roster = [row["encounter"] for row in api(table, "many/encounters")["encounters"]]
    assert sorted(roster) == sorted(names)

    def shown() -> list[str]:
        return page.eval_on_selector_all(".encounter-list tbody tr", "rows => rows.map(r => r.dataset.encounter)")

    assert shown() == roster[:2]
    page.click(".campaign-encounters button.more")
    wait_until(lambda: shown() == roster[:4], what="the second page")
    page.click(".campaign-encounters button.more")
    wait_until(lambda: shown() == roster, what="the last page")
    assert page.locator(".campaign-encounters button.more").count() == 0
    assert page.get_attribute(".campaign-encounters [data-total]", "data-total") == "5"
    # Each row links to its replay, with the token of the seat this browser opened, where it opened one.
    hrefs = page.eval_on_selector_all(".encounter-list .replay-link", "xs => xs.map(x => x.getAttribute('href'))")
    token = seats["spectator"]["token"]
    assert hrefs == [f"/table/many/{e}#token={token}&replay" if e == names[3] else f"/table/many/{e}#replay" for e in roster]
    page.click(f".encounter-list tr[data-encounter='{names[3]}'] .replay-link")
    page.wait_for_selector(".replay-bar", timeout=20_000)
    assert page.get_attribute(".app header .seat", "data-role") == "spectator"
    assert not table.errors, table.errors


def test_the_gm_adjusts_and_is_refused_in_one_line_with_the_campaign_token_in_the_link(table: Table, tmp_path: Path) -> None:
    store = ["--data-dir", str(table.served.data_dir), "--campaign", "guild"]
    cli_ok("characters", "--create-demo", "d100-zones", "--side", "rangers", *store)
    token = cli_ok("campaign", "token", "--token-only", *store).strip()
    # Quinn is in a fight that waits for its player: the release is refused while it is under way.
    demo = msgspec.to_builtins(demo_setup("d100-zones"))
    quinn = {"id": "rg-quinn", "character": "rg-quinn", "side": "rangers", "position": [1, 1], "policy": "human"}
    foe = next(c for c in demo["combatants"] if c["id"] == "rd-vex")
    (tmp_path / "hold.json").write_text(json.dumps({**demo, "combatants": [quinn, foe]}))
    cli_ok("create", "hold", "--setup", str(tmp_path / "hold.json"), *store)

    plain = open_page(table, f"{table.served.api}/characters/guild/rg-moss", ".character-page .history .entry")
    assert plain.locator(".gm-hand").count() == 0  # no GM token in the link: nothing to change with
    page = open_page(table, f"{table.served.api}/characters/guild/rg-moss#gm={token}", ".character-page .gm-hand")
    before = api(table, "guild/characters/rg-moss")
    assert page.is_disabled(".gm-hand .adjust-button")  # no reason yet
    page.fill(".gm-hand input[name=reason]", "field training")
    page.select_option(".gm-hand select[name=mode]", "add")
    page.fill(".gm-hand input[name=field]", "medicine")
    page.fill(".gm-hand input[name=value]", "5")
    page.click(".gm-hand .adjust-button")
    page.wait_for_selector(".history .entry[data-type='CharacterAdjusted']")
    after = api(table, "guild/characters/rg-moss")
    assert after["character"]["sheet"]["medicine"] == before["character"]["sheet"]["medicine"] + 5
    adjusted = after["history"][-1]
    assert adjusted["event"]["reason"] == "field training" and adjusted["event"]["via"] == "api"
    assert page.text_content(".history .entry[data-type='CharacterAdjusted'] .text") == adjusted["text"]
    assert page.get_attribute(".gm-hand .answer", "data-ok") == "1"

    # What the rules refuse: one line, and nothing written.
    page.select_option(".gm-hand select[name=mode]", "set")
    page.fill(".gm-hand input[name=field]", "hp")
    page.fill(".gm-hand input[name=value]", "0")
    page.click(".gm-hand .adjust-button")
    page.wait_for_selector(".gm-hand .answer[data-ok='0']")
    assert page.text_content(".gm-hand .answer") == (
        "Refused: character 'rg-moss': combatant 'rg-moss': sheet field 'hp' must be at least 1 (got 0)")
    assert api(table, "guild/characters/rg-moss")["history"] == after["history"]

    # Retired, then back in play: the status the campaign gives.
    page.select_option(".gm-hand select[name=mode]", "retire")
    page.click(".gm-hand .adjust-button")
    page.wait_for_selector(".standing [data-status='retired']")
    assert api(table, "guild/characters/rg-moss")["character"]["status"] == "retired"
    page.select_option(".gm-hand select[name=mode]", "revive")
    page.click(".gm-hand .adjust-button")
    page.wait_for_selector(".standing [data-status='ready']")
    assert api(table, "guild/characters/rg-moss")["character"]["status"] == "ready"

    # Another token is refused, in one line.
    forged = open_page(table, f"{table.served.api}/characters/guild/rg-moss#gm=not-the-token", ".character-page .gm-hand")
    forged.fill(".gm-hand input[name=reason]", "x")
    forged.fill(".gm-hand input[name=field]", "medicine")
    forged.fill(".gm-hand input[name=value]", "1")
    forged.click(".gm-hand .adjust-button")
    forged.wait_for_selector(".gm-hand .answer[data-ok='0']")
    assert forged.text_content(".gm-hand .answer") == "Refused: this token is not the campaign's GM token"

    # Release: offered for a character in a fight; refused while the fight is under way.
    wait_until(lambda: api(table, "guild/encounters")["encounters"][0]["status"] == "running", timeout=30,
               what="serve to start the fight")
    held = open_page(table, f"{table.served.api}/characters/guild/rg-quinn#gm={token}", ".character-page .gm-hand")
    assert held.get_attribute(".standing [data-engaged]", "data-engaged") == "hold"
    held.fill(".gm-hand input[name=reason]", "we ran out of time")
    held.click(".gm-hand .release-button")
    held.wait_for_selector(".gm-hand .answer[data-ok='0']")
    refusal = held.text_content(".gm-hand .answer")
    assert refusal.startswith("Refused: encounter 'hold' is under way (round ") and refusal.endswith(
        "a character leaves a fight with its aftermath; end it first (the GM's EndEncounter)")
    assert api(table, "guild/characters/rg-quinn")["character"]["engaged_in"] == "hold"
    assert not table.errors, table.errors
