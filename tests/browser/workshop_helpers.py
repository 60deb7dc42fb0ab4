"""Helpers for the workshop's browser tests: the GM signs in with the link
`firelane campaign token` prints and then does everything by clicks and drags
on the workshop pages (docs/workshop-api.md; web/assets/workshop/). The API is
read here only to check outcomes."""

from __future__ import annotations

import re
from typing import Any

from tests.browser.table_helpers import Table, wait_until
from tests.cli_helpers import firelane


# The browser logs every 4xx answer; the page shows the refusal's own line, which the tests check where they expect one.
REFUSED = re.compile(r"Failed to load resource: the server responded with a status of 4\d\d")


def gm_token(table: Table, campaign: str) -> str:
    """The campaign's GM token, as the CLI prints it (with its sign-in link, or alone)."""
    result = firelane("campaign", "token", "--campaign", campaign, "--data-dir", str(table.served.data_dir))
    assert result.returncode == 0, result.stderr
    found = re.search(r"#gm=([A-Za-z0-9_.~%-]+)", result.stdout)
    return found.group(1) if found else result.stdout.strip().split()[-1]


def sign_in(table: Table, campaign: str, *, width: int = 1440, height: int = 900) -> Any:
    """A GM's page, signed in to ``campaign`` by its sign-in link, at the campaign home."""
    page = table.new_context(width=width, height=height).new_page()
    page.on("pageerror", lambda error: table.errors.append(f"workshop: {error}"))
    page.on("console", lambda message: table.errors.append(f"workshop: {message.text}") if message.type == "error"
            and "favicon" not in message.text and not REFUSED.search(message.text) else None)
    page.goto(f"{table.served.api}/workshop/{campaign}#gm={gm_token(table, campaign)}")
    page.wait_for_selector(".ws-home", timeout=20_000)
    assert "#gm=" not in page.url  # the token leaves the address bar at once
    return page


def map_point(page: Any, square: tuple[int, int]) -> tuple[float, float]:
    """The middle of a square of the builder's map, in page coordinates."""
    svg = page.locator("svg.ws-map")
    box = svg.bounding_box()
    width = int(svg.get_attribute("data-width"))
    height = int(svg.get_attribute("data-height"))
    return (box["x"] + (square[0] + 0.5) * box["width"] / width, box["y"] + (square[1] + 0.5) * box["height"] / height)


def scroll_to_square(page: Any, square: tuple[int, int]) -> None:
    """Scroll the map so ``square`` is in view (a big map is bigger than its box)."""
    page.evaluate("""([x, y]) => {
        const svg = document.querySelector("svg.ws-map"), box = svg.parentElement;
        const cell = svg.getBoundingClientRect().width / Number(svg.dataset.width);
        box.scrollLeft = Math.max(0, (x + 0.5) * cell - box.clientWidth / 2);
        box.scrollTop = Math.max(0, (y + 0.5) * cell - box.clientHeight / 2);
    }""", list(square))


def paint_line(page: Any, tool: str, start: tuple[int, int], end: tuple[int, int]) -> None:
    """Press at ``start`` with ``tool`` and drag to ``end``: one stroke."""
    page.click(f"[data-tool={tool}]")
    page.locator(".ws-map-scroll").scroll_into_view_if_needed()
    x0, y0 = map_point(page, start)
    x1, y1 = map_point(page, end)
    page.mouse.move(x0, y0)
    page.mouse.down()
    page.mouse.move(x1, y1, steps=12)
    page.mouse.up()


def drag_onto_map(page: Any, carry_label: str, square: tuple[int, int]) -> None:
    """Drag a token from the lists under the map (a character or an archetype) onto ``square``."""
    page.click("[data-tool=tokens]")
    item = page.locator(f"[data-carry='{carry_label}']").first
    item.scroll_into_view_if_needed()
    box = item.bounding_box()
    page.mouse.move(box["x"] + 12, box["y"] + box["height"] / 2)
    page.mouse.down()
    scroll_to_square(page, square)
    x, y = map_point(page, square)
    page.mouse.move(x, y, steps=8)
    page.mouse.up()


def wait_checked(page: Any) -> None:
    """Wait until the builder's checks have answered for the latest edit and found nothing."""
    wait_until(lambda: page.locator(".ws-checks[data-checking='0'] .ok").count() > 0, timeout=20,
               what="the builder's checks to pass",
               describe=lambda: page.locator(".ws-checks").inner_text() + " | " + " | ".join(page.locator(".problem, .ws-problems li").all_inner_texts()))


def token_square(page: Any, name: str) -> tuple[int, int]:
    at = page.locator(f"svg.ws-map [data-token]:has(title:text-matches('^{re.escape(name)} \\\\('))").get_attribute("data-pos")
    x, y = at.split(",")
    return int(x), int(y)


def join(table: Table, link: str, *, width: int = 1440, height: int = 880) -> Any:
    """A player's page at an invite link, in its own browser context; the fight may not have started yet."""
    page = table.new_context(width=width, height=height).new_page()
    page.on("pageerror", lambda error: table.errors.append(f"{link}: {error}"))
    page.on("console", lambda message: table.errors.append(f"{link}: {message.text}") if message.type == "error"
            and "favicon" not in message.text and "404" not in message.text else None)
    page.goto(link)
    page.wait_for_selector(".app header .status.live, .booting:text('not started'), .lobby-line", timeout=20_000)
    return page
