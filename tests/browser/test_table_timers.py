"""Clocks at the table, in real Chromium: a human's turn timer (settings
``turn_timer_ms`` and ``on_turn_timeout``) counts down on the player's card
and, when it runs out, the turn passes as the setting says and the narration
says so."""

from __future__ import annotations

import pytest

from tests.browser.table_helpers import Table, table_setup, wait_until

TIMER_MS = 7_000


def _left_ms(page, selector: str) -> int:
    return int(page.locator(selector).get_attribute("data-left-ms"))


@pytest.mark.parametrize("then", ["end_turn", "ai"])
def test_a_turn_timer_counts_down_and_its_end_passes_the_turn(table: Table, then: str) -> None:
    encounter = f"timer-{then.replace('_', '-')}"
    # The cult is the AI's; Vass's player never answers, so Vass's turns run out too.
    seats = table.create(encounter, table_setup(turn_timer_ms=TIMER_MS, on_turn_timeout=then, reaction_deadline_ms=2_000))
    token = seats["gm"]["token"]
    page = table.open(seats["alice"]["link"])
    countdown = "[data-mine='kell'] .turn .countdown"
    page.wait_for_selector(countdown, timeout=60_000)
    turn = wait_until(lambda: next((e for e in reversed(table.events(encounter, token))
                                    if e["type"] == "TurnStarted" and e["data"]["combatant"] == "kell"), None),
                      what="Kell's turn")
    assert turn["data"]["deadline_ms"] == TIMER_MS
    first = _left_ms(page, countdown)
    page.wait_for_timeout(1_200)
    second = _left_ms(page, countdown)
    assert 0 < second < first <= TIMER_MS, (first, second)
    assert first - second >= 800  # it counts real time down, not a frozen number
    assert page.locator(countdown + " span").text_content().endswith(" s")

    timed_out = wait_until(lambda: next((e for e in table.events(encounter, token) if e["n"] > turn["n"]
                                         and e["type"] == "TurnTimedOut" and e["data"]["combatant"] == "kell"), None),
                           timeout=TIMER_MS / 1000 + 20, what="Kell's time to run out")
    assert timed_out["data"]["then"] == then
    events = table.events(encounter, token)
    after = [e for e in events if e["n"] > timed_out["n"]]
    if then == "end_turn":
        assert after[0]["type"] == "TurnEnded" and after[0]["data"]["combatant"] == "kell"
        words = "Sergeant Kell's time is up: the turn ends"
    else:
        # The AI plays the rest of Kell's turn: Kell acts before the turn ends.
        ended = next(e for e in after if e["type"] == "TurnEnded" and e["data"]["combatant"] == "kell")
        acts = [e for e in after if e["n"] < ended["n"] and kell_acts(e)]
        assert acts, [(e["type"], e["data"]) for e in after[:8]]
        words = "Sergeant Kell's time is up: the AI plays the rest of it"
    line = page.locator(f".narration .line[data-n='{timed_out['n']}'][data-type='TurnTimedOut']")
    line.wait_for()
    assert words in line.text_content()
    # The card says the turn is over: no countdown, no End turn for Kell.
    page.wait_for_selector(f"[data-mine='kell'] .end-turn", state="detached", timeout=20_000)
    assert not table.errors, table.errors


def kell_acts(event: dict) -> bool:
    data = event["data"]
    return "kell" in (data.get("combatant"), data.get("attacker")) and event["type"] not in ("TurnEnded", "TurnStarted")
