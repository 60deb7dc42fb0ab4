"""The pages under the server's Content-Security-Policy in real Chromium: the
table (GM, player, spectator), the campaign's front page and a character's
page load, connect their WebSocket and draw with no violation reported, and
the policy is really enforced (an inline script, an inline handler and a
string run as code are refused, and reported: the reporter every browser test uses is live)."""

from __future__ import annotations

from tests.browser.table_helpers import Table, table_setup, wait_until
from tests.cli_helpers import firelane


def test_every_page_runs_under_the_policy_with_no_violation(table: Table) -> None:
    seats = table.create("csp", table_setup(reaction_deadline_ms=20_000))
    pages = {seat: table.open(seats[seat]["link"]) for seat in ("gm", "alice", "spectator")}
    for seat, page in pages.items():  # each drew its map and follows the fight live
        page.wait_for_selector("svg.map [data-token]")
        assert page.locator(".app header .status.live").count() == 1, seat
    created = firelane("characters", "--create-demo", "d100-zones", "--side", "rangers", "--campaign", "csp",
                       "--data-dir", str(table.served.data_dir))
    assert created.returncode == 0, created.stderr
    front = table.new_context().new_page()
    front.on("console", lambda message: table.errors.append(f"front: {message.text}") if message.type == "error" else None)
    front.goto(f"{table.served.api}/?campaign=csp")
    front.wait_for_selector(".character-list tbody tr")
    character = front.locator(".character-list tbody tr").first.get_attribute("data-character")
    front.goto(f"{table.served.api}/characters/csp/{character}")
    front.wait_for_selector(f".character-page[data-character='{character}'] h1.name")
    assert not table.errors, table.errors


def test_the_policy_refuses_inline_script_and_eval_and_says_so(table: Table) -> None:
    seats = table.create("csp-enforced", table_setup(reaction_deadline_ms=20_000))
    page = table.open(seats["spectator"]["link"])
    ran_inline = page.evaluate("""() => {
        const script = document.createElement("script");
        script.textContent = "window.__inlineRan = true";
        document.head.append(script);
        return window.__inlineRan === true;
    }""")
    # A handler in an attribute, and a string run as code later by the page itself (eval's kin).
    page.evaluate("""() => {
        document.body.setAttribute("onclick", "window.__handlerRan = true");
        document.body.click();
        setTimeout("window.__timeoutRan = true", 0);
    }""")

    def reported() -> bool:
        page.wait_for_timeout(50)  # lets playwright deliver the page's console messages
        return sum("CSP violation: script-src" in error for error in table.errors) >= 3

    wait_until(reported, what="each violation reported", describe=lambda: table.errors)
    assert ran_inline is False
    assert page.evaluate("() => [window.__inlineRan, window.__handlerRan, window.__timeoutRan]") == [None, None, None]
    table.errors.clear()  # expected here: this test made them on purpose
