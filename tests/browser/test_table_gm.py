"""The GM's tools and rewinds in real Chromium, by clicks (issue 19, items 3,
9 and 11): a typed, grouped form checked before it sends; Skip, Rewind,
Revive and End confirmed first; ⟲ only where a rewind can land; the undone
branch marked on every page, after a reload and in the replay scrubber; the
GM's refusals narrated to the GM alone; a RonD6 turn in one tap, its attacks
grouped. At desktop (1440x900) and phone (390x844) sizes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.browser.table_helpers import Table, narrated, page_version, setup_with_players, show_tab, table_setup, wait_until

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1440, "height": 900}


def gm_events(table: Table, encounter: str, token: str, kind: str) -> list[dict[str, Any]]:
    return [e for e in table.events(encounter, token) if e["type"] == kind and e["c"].startswith("gm/")]


def refusals_of_the_gm(table: Table, encounter: str, token: str) -> list[dict[str, Any]]:
    return [e for e in table.events(encounter, token) if e["type"] == "CommandRejected" and e["data"]["actor"] == "gm"]


def field(gm: Any, name: str) -> Any:
    return gm.locator(f".gm .field[data-field='{name}']")


def choose(gm: Any, combatant: str) -> None:
    gm.select_option(".gm select[data-gm='who']", combatant)
    gm.wait_for_selector(f".gm .adjust-form[data-adjust='{combatant}']")


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_gm_adjusts_through_a_typed_grouped_form_checked_before_it_sends(table: Table, size: dict[str, int]) -> None:
    encounter = f"gm-form-{size['width']}"
    seats = table.create(encounter, table_setup(reaction_deadline_ms=60_000), seed="gm-form")
    token = seats["gm"]["token"]
    gm = table.open(seats["gm"]["link"], **size)
    gm.wait_for_selector(".gm .adjust-form")
    choose(gm, "kell")
    legends = gm.eval_on_selector_all(".gm .adjust-form legend", "ls => ls.map(l => l.textContent)")
    assert legends[:2] == ["Health", "Place"] and "Weapons and ammunition" in legends and "Conditions" in legends
    labels = gm.eval_on_selector_all(".gm .adjust-form .field > label", "ls => ls.map(l => l.textContent)")
    assert labels and not any("_" in text for text in labels), labels
    before = len(table.events(encounter, token))
    gm_options = json.loads(gm.evaluate("() => JSON.stringify(window.__table.conn.view.options.gm)"))
    # Out of range: the form says why, and sends nothing.
    vitality = field(gm, "vitality")
    most = int(vitality.locator("input").get_attribute("max"))
    vitality.locator("input").fill(str(most + 5))
    assert vitality.locator(".problem").text_content().endswith(f"from 1 to {most}, not {most + 5}")
    assert gm.locator(".gm [data-gm='apply']").is_disabled()
    vitality.locator("input").fill("3")
    ammo = field(gm, "ammo").locator("input").first
    ammo.fill("2")
    gm.fill(".gm label.reason input", "the medic's work")
    table.shot(gm, f"table-gm-form-{size['width']}")
    gm.click(".gm [data-gm='apply']")
    adjusted = wait_until(lambda: gm_events(table, encounter, token, "GMAdjusted"), what="the GM's adjustment")
    ammo_field = next(f for f in gm_options["fields"]["kell"] if f["field"] == "ammo")
    assert adjusted[0]["data"]["changes"] == {"vitality": 3, "ammo": {**ammo_field["value"], ammo_field["choices"][0]["value"]: 2}}
    assert adjusted[0]["data"]["reason"] == "the medic's work"
    assert refusals_of_the_gm(table, encounter, token) == [] and len(table.events(encounter, token)) > before
    # The form shows the new values, and nothing is left to apply.
    wait_until(lambda: field(gm, "vitality").locator("input").input_value() == "3", what="the form to show Vitality 3")
    assert gm.locator(".gm [data-gm='apply']").is_disabled() and "changed" not in field(gm, "vitality").get_attribute("class")
    assert not table.errors, table.errors


def test_skip_and_end_ask_first_and_a_fallen_combatant_comes_back_only_through_revive(table: Table) -> None:
    seats = table.create("gm-confirm", table_setup(reaction_deadline_ms=60_000), seed="gm-confirm")
    token = seats["gm"]["token"]
    gm = table.open(seats["gm"]["link"])
    gm.wait_for_selector(".gm [data-gm='skip']:not([disabled])")
    gm.click(".gm [data-gm='skip']")
    gm.wait_for_selector(".gm .confirm[data-confirm='Skip']")
    gm.click(".gm .confirm .cancel")
    assert gm.locator(".gm .confirm").count() == 0 and gm_events(table, "gm-confirm", token, "GMRuled") == []
    gm.click(".gm [data-gm='skip']")
    gm.click(".gm .confirm [data-confirm-yes='Skip']")
    ruled = wait_until(lambda: gm_events(table, "gm-confirm", token, "GMRuled"), what="the skip")
    assert ruled[0]["data"]["ruling"].startswith("skip ")
    # Take Mott out with the form; then only Revive brings him back.
    choose(gm, "mott")
    field(gm, "out_of_fight").locator("input").check()
    gm.click(".gm [data-gm='apply']")
    wait_until(lambda: table.state("gm-confirm", token)["state"]["combatants"]["mott"]["out_of_fight"], what="Mott out")
    gm.wait_for_selector(".gm [data-gm='revive']")
    assert field(gm, "vitality").count() == 0 and field(gm, "out_of_fight").count() == 0
    gm.click(".gm [data-gm='revive']")
    confirm = gm.locator(".gm .confirm[data-confirm='Revive']")
    assert "Back in the fight" in confirm.text_content()
    table.shot(gm, "table-gm-revive")
    gm.click(".gm .confirm [data-confirm-yes='Revive']")
    wait_until(lambda: not table.state("gm-confirm", token)["state"]["combatants"]["mott"]["out_of_fight"], what="Mott revived")
    revived = gm_events(table, "gm-confirm", token, "GMAdjusted")[-1]["data"]["changes"]
    assert revived["out_of_fight"] is False
    assert table.state("gm-confirm", token)["state"]["combatants"]["mott"]["vitality"] >= 1
    # End asks first too.
    gm.click(".gm [data-gm='end']")
    gm.wait_for_selector(".gm .confirm[data-confirm='End']")
    gm.click(".gm .confirm .cancel")
    assert not table.state("gm-confirm", token)["state"]["ended"]
    gm.click(".gm [data-gm='end']")
    gm.click(".gm .confirm [data-confirm-yes='End']")
    wait_until(lambda: table.state("gm-confirm", token)["state"]["ended"], what="the end")
    assert refusals_of_the_gm(table, "gm-confirm", token) == []
    assert not table.errors, table.errors


def _rewind_marks(gm: Any) -> list[int]:
    return gm.eval_on_selector_all(".narration .line", "ls => ls.filter(l => l.querySelector('.rewind-here')).map(l => Number(l.dataset.n))")


def test_a_rewind_is_offered_only_where_it_can_land_and_its_undone_branch_is_marked_everywhere(table: Table) -> None:
    seats = table.create("gm-undone", table_setup(reaction_deadline_ms=60_000), seed="gm-undone")
    token = seats["gm"]["token"]
    gm = table.open(seats["gm"]["link"])
    alice = table.open(seats["alice"]["link"], **PHONE)
    # Two skipped turns and an adjustment make a few commands to rewind over.
    for _ in range(2):
        gm.wait_for_selector(".gm [data-gm='skip']:not([disabled])")
        count = len(table.events("gm-undone", token))
        gm.click(".gm [data-gm='skip']")
        gm.click(".gm .confirm [data-confirm-yes='Skip']")
        wait_until(lambda: len(table.events("gm-undone", token)) > count, what="the skip")
    choose(gm, "mott")
    field(gm, "out_of_fight").locator("input").check()
    gm.click(".gm [data-gm='apply']")
    down = wait_until(lambda: next((e for e in table.events("gm-undone", token) if e["type"] == "GMAdjusted"), None), what="Mott out")
    events = table.events("gm-undone", token)
    wait_until(lambda: page_version(gm) == len(table.events("gm-undone", token)), what="the GM's page to catch up")
    # ⟲ only on a version between two commands (the next event begins another command's answer).
    marks = _rewind_marks(gm)
    by_version = {e["n"]: e for e in table.events("gm-undone", token)}
    assert marks, "no ⟲ at all"
    for n in marks:
        assert n + 1 in by_version and (not by_version[n]["c"] or by_version[n + 1]["c"] != by_version[n]["c"]), n
    inside = [n for n in by_version if n + 1 in by_version and by_version[n]["c"] and by_version[n + 1]["c"] == by_version[n]["c"]]
    assert inside and not set(inside) & set(marks)
    target = max(n for n in marks if n < down["n"])
    gm.locator(f".line[data-n='{target}']").hover()
    gm.locator(f".line[data-n='{target}'] .rewind-here").click()
    gm.fill(".gm label.reason input", "Mott was behind the crates")
    gm.click(".gm [data-gm='rewind']")
    question = gm.locator(".gm .confirm[data-confirm='Rewind']").text_content()
    last = page_version(gm)
    undoing = f"Event {target + 1} will be undone: it stays" if last == target + 1 else f"Events {target + 1}–{last} will be undone: they stay"
    assert f"just after event {target}?" in question and undoing in question, question
    gm.click(".gm .confirm [data-confirm-yes='Rewind']")
    rewind = wait_until(lambda: next((e for e in table.events("gm-undone", token) if e["type"] == "EncounterRewound"), None),
                        what="the rewind")
    undone = list(range(target + 1, rewind["n"]))
    assert rewind["undoes"] == [[target + 1, rewind["n"] - 1]]
    assert table.state("gm-undone", token)["state"]["combatants"]["mott"]["out_of_fight"] is False

    def marked(page: Any) -> list[int]:
        return page.eval_on_selector_all(".narration .line.undone", "ls => ls.map(l => Number(l.dataset.n))")

    for page in (gm, alice):
        wait_until(lambda: marked(page) == undone, what="the undone lines marked", describe=lambda: marked(page))
        line = page.locator(f".line[data-n='{down['n']}']")
        assert line.locator(".undone-tag").text_content() == "undone"
        assert f"undone by the GM's rewind at event {rewind['n']}" in line.get_attribute("title")
        assert "Mott was behind the crates" in line.get_attribute("title")
    assert not set(_rewind_marks(gm)) & set(undone)  # no ⟲ into the undone branch
    table.shot(gm, "table-gm-undone")
    show_tab(alice, "story")  # on a phone the narration is a tab away
    table.shot(alice, "table-undone-phone")
    alice.reload()
    alice.wait_for_selector(".app header .status.live")
    wait_until(lambda: marked(alice) == undone, what="the undone lines marked after a reload")
    assert narrated(alice)[-1] == page_version(alice)
    assert not table.errors, table.errors


def test_the_replay_follows_the_branch_that_stands_and_reaches_the_undone_one(table: Table) -> None:
    seats = table.create("gm-replay", table_setup(reaction_deadline_ms=60_000), seed="gm-replay")
    token = seats["gm"]["token"]
    gm = table.open(seats["gm"]["link"])
    gm.wait_for_selector(".gm [data-gm='skip']:not([disabled])")
    choose(gm, "mott")
    field(gm, "out_of_fight").locator("input").check()
    gm.click(".gm [data-gm='apply']")
    wait_until(lambda: table.state("gm-replay", token)["state"]["combatants"]["mott"]["out_of_fight"], what="Mott out")
    down = next(e for e in table.events("gm-replay", token) if e["type"] == "GMAdjusted")["n"]
    wait_until(lambda: page_version(gm) == len(table.events("gm-replay", token)), what="the GM's page to catch up")
    target = max(n for n in _rewind_marks(gm) if n < down)
    gm.locator(f".line[data-n='{target}']").hover()
    gm.locator(f".line[data-n='{target}'] .rewind-here").click()
    gm.click(".gm [data-gm='rewind']")
    gm.click(".gm .confirm [data-confirm-yes='Rewind']")
    rewind = wait_until(lambda: next((e["n"] for e in table.events("gm-replay", token) if e["type"] == "EncounterRewound"), None),
                        what="the rewind")
    spectator = table.open(seats["spectator"]["link"] + "&replay")
    bar = spectator.locator(".replay-bar")
    bar.wait_for()
    wait_until(lambda: bar.locator(".undone-chip").count() == 1, what="the undone branch's chip")
    spectator.click(".replay-bar button[title='start']")
    for _ in range(target):
        spectator.click(".replay-bar button[title='one on']")
    spectator.wait_for_selector(f".replay-bar[data-replay-at='{target}']")
    # One on from the rewind's target steps over the undone branch, to the rewind.
    spectator.click(".replay-bar button[title='one on']")
    spectator.wait_for_selector(f".replay-bar[data-replay-at='{rewind}']")
    spectator.click(".replay-bar button[title='one back']")
    spectator.wait_for_selector(f".replay-bar[data-replay-at='{target}']")
    # The undone branch is one click away, and says what it is; Mott is down there.
    spectator.click(".replay-bar .undone-chip")
    spectator.wait_for_selector(f".replay-bar[data-replay-at='{target + 1}']")
    assert f"undone by the GM's rewind at event {rewind}" in spectator.locator(".undone-banner").text_content()
    for _ in range(down - target - 1):
        spectator.click(".replay-bar button[title='one on']")
    spectator.wait_for_selector(f".replay-bar[data-replay-at='{down}']")
    spectator.wait_for_selector(".initiative .entry.down[data-initiative='mott']")
    table.shot(spectator, "table-replay-undone")
    spectator.click(".replay-bar .to-standing")
    spectator.wait_for_selector(f".replay-bar[data-replay-at='{rewind}']")
    spectator.wait_for_selector(".initiative .entry[data-initiative='mott']:not(.down)")
    assert not table.errors, table.errors


def test_the_gms_refused_commands_are_narrated_to_the_gm_alone(table: Table) -> None:
    seats = table.create("gm-quiet", table_setup(reaction_deadline_ms=60_000), seed="gm-quiet")
    token = seats["gm"]["token"]
    gm = table.open(seats["gm"]["link"])
    alice = table.open(seats["alice"]["link"])
    # A command the form would not send (a stale page, another program on the GM's seat).
    refused = table.post("gm-quiet", token, {"type": "GMAdjust", "command_id": "stale", "actor": "gm", "combatant": "kell",
                                             "changes": {"vitality": 999}, "reason": "x"}).json()
    assert refused["rejected"]
    n = refused["events"][0]["n"]
    gm.wait_for_selector(f".narration .line[data-n='{n}']")
    wait_until(lambda: page_version(alice) >= n, what="Alice's page to catch up")
    assert alice.locator(f".narration .line[data-n='{n}']").count() == 0
    assert not table.errors, table.errors


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_a_rond6_turn_is_one_tap_and_its_attacks_are_grouped(table: Table, size: dict[str, int]) -> None:
    """R6-05 at the table: before declaring, the player picks an attack and it is
    taken (one action declared with it); more actions are offered with their penalty."""
    encounter = f"r6-tap-{size['width']}"
    seats = table.create(encounter, setup_with_players("rond6", settings={"reaction_deadline_ms": 60_000}), seed="r6-tap")
    token = seats["gm"]["token"]
    page = table.open(seats["p1"]["link"], **size)
    mine = set(page.eval_on_selector_all("[data-mine]", "xs => xs.map(x => x.dataset.mine)"))
    answered: set[tuple[str, int]] = set()
    for _ in range(40):  # pass every prompt until one of the player's turns
        body = wait_until(lambda: (b := table.state(encounter, token)) and (b["awaiting"] or {}).get("kind") in ("turn", "reactions")
                          and {c for c in b["awaiting"]["combatants"] if (c, b["awaiting"].get("window")) not in answered} & mine
                          and b, timeout=60, what="the player to be asked", describe=lambda: table.state(encounter, token)["awaiting"])
        awaiting = body["awaiting"]
        if awaiting["kind"] == "turn":
            break
        asked = next(c for c in awaiting["combatants"] if c in mine and (c, awaiting["window"]) not in answered)
        prompt = page.locator(f"[data-prompt='{asked}'][data-window='{awaiting['window']}']")
        prompt.locator(".pass").click()
        answered.add((asked, awaiting["window"]))
        prompt.wait_for(state="detached")
    who = awaiting["combatants"][0]
    assert table.state(encounter, token)["state"]["combatants"][who]["declared_actions"] == 0
    card = page.locator(f"[data-mine='{who}']")
    card.locator(".attack-group").first.wait_for()
    options = json.loads(page.evaluate("() => JSON.stringify(window.__table.conn.view.options)"))
    attacks = next(c for c in options["combatants"] if c["combatant"] == who)["attacks"]
    groups = card.locator(".attack-group")
    pairs = {(a["target"], a["weapon"]) for a in attacks}
    assert groups.count() == len(pairs) < len(attacks)  # one row per target and weapon, the other ways in its menu
    assert card.locator(".attack-group select.variants").count() >= 1
    card.locator("[data-action='R6DeclareActions'] button.action").click()
    more = card.locator(".sub-choices button.choice").first
    assert more.text_content().startswith("declare 2 actions: every roll this round at -1D")
    assert "R6-05" in card.locator(".sub-choices .explain").first.text_content()
    table.shot(page, f"table-rond6-turn-{size['width']}")
    card.locator("[data-action='R6DeclareActions'] button.action").click()  # closed again
    before = len(table.events(encounter, token))
    card.locator(".attack-group button.do").first.click()
    events = wait_until(lambda: (es := table.events(encounter, token)) and any(e["type"] == "R6ActionDeclared" for e in es[before:])
                        and es[before:], what="the attack to land")
    assert events[0]["type"] == "R6ActionsDeclared" and events[0]["data"]["count"] == 1 and events[0]["data"]["combatant"] == who
    assert not [e for e in events if e["type"] == "CommandRejected"]
    assert not table.errors, table.errors
