"""The page in words (issue 19 items 7 and 13): a roll's details read as words
under its table, not as the raw data the rules wrote; two combatants of one
name are told apart on the map, in the tracker and in the narration."""

from __future__ import annotations

import re

import pytest

from tests.browser.table_helpers import Table, setup_with_players, wait_until

RAW = re.compile(r"[{}]|\b[a-z]+_[a-z_]+\b|\b(null|true|false|None|True|False)\b|\w=")


@pytest.mark.parametrize("system", ["rond6", "d100-zones"])
def test_roll_details_read_as_words_and_a_shared_name_is_told_apart(table: Table, system: str) -> None:
    setup = setup_with_players(system, settings={"turn_timer_ms": 1_500, "on_turn_timeout": "ai",
                                                 "reaction_deadline_ms": 1_500})
    first, second = [c for c in setup["combatants"] if c.get("policy") != "human"][:2]
    second["name"] = first["name"]  # as a GM may write two of a kind
    encounter = f"words-{system}"
    seats = table.create(encounter, setup)
    token = seats["spectator"]["token"]
    page = table.open(seats["spectator"]["link"])
    # the map's short labels and the tracker's names are unique
    wait_until(lambda: page.locator("svg.map [data-token]").count() == len(setup["combatants"]), what="every token")
    labels = page.eval_on_selector_all("svg.map [data-token] text.initials", "xs => xs.map(x => x.textContent)")
    assert len(set(labels)) == len(labels), labels
    names = page.eval_on_selector_all(".initiative .who", "xs => xs.map(x => x.textContent)")
    assert f"{first['name']} 1" in names and f"{first['name']} 2" in names, names
    # a line whose roll carries details the rules wrote as data
    def worded_roll() -> dict | None:
        lines = table.get(encounter, "view?after=0&tail=300", token)["lines"]
        return next((line for line in lines if any(roll["details"] and roll["said"] for roll in line["rolls"])), None)

    rolled = wait_until(worded_roll, timeout=60, what="a roll with details")
    line = page.locator(f".line[data-n='{rolled['n']}']")
    wait_until(lambda: line.count() == 1, what="its narration line")
    line.locator(".text").click()
    said = page.locator(".line.open .roll .notes.said")
    wait_until(lambda: said.count() >= 1, what="the roll's details in words")
    for text in said.all_inner_texts() + [line.inner_text()]:
        assert not RAW.search(text), text
    # the roll's explanation is said once, as its table, not again as text above it
    assert line.locator(".text .detail").count() == 0
    assert line.locator(".roll").count() >= 1
    assert not table.errors, table.errors
