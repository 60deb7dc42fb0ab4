"""The players' map draws the encounter's background image (issue 20 item 3):
the one the GM placed in the workshop (docs/workshop-api.md: offset in squares,
image pixels a square), fetched with the seat's own token, under the grid."""

from __future__ import annotations

import io

import httpx
from PIL import Image

from tests.browser.table_helpers import Table, table_setup, wait_until
from tests.cli_helpers import firelane

SQUARE = 40  # map.js draws a square 40 units wide


def test_a_players_map_draws_the_background_where_the_gm_placed_it(table: Table) -> None:
    store = ("--data-dir", str(table.served.data_dir))
    gm = firelane("campaign", "token", "--token-only", "--campaign", "default", *store)
    assert gm.returncode == 0, gm.stderr
    # 4 × 3 squares at 20 image pixels a square: one solid colour, easy to find on the page.
    picture = io.BytesIO()
    Image.new("RGB", (80, 60), (200, 30, 160)).save(picture, "PNG")
    workshop = f"{table.served.api}/api/workshop/campaigns/default"
    with httpx.Client(headers={"Authorization": f"Bearer {gm.stdout.strip()}"}, timeout=30) as http:
        image = http.post(f"{workshop}/images", content=picture.getvalue(), headers={"Content-Type": "image/png"})
        assert image.status_code == 201, image.text
        placed = {"image": image.json()["image"], "offset": [1.5, 2], "scale": 20}
        draft = http.post(f"{workshop}/drafts", json={"id": "lit", "setup": table_setup(reaction_deadline_ms=60_000),
                                                      "background": placed})
        assert draft.status_code == 201, draft.text
        lobby = http.post(f"{workshop}/drafts/lit/lobby", json={"version": 1})
        assert lobby.status_code == 200, lobby.text
        seats = {s["id"]: s for s in lobby.json()["seats"]}
        started = http.post(f"{workshop}/encounters/lit/start", json={})
        assert started.status_code == 200, started.text

    page = table.new_context().new_page()
    link = table.served.api + seats["alice"]["link"]
    table.watch(page, link)
    fetched: list[int] = []
    page.on("response", lambda r: fetched.append(r.status) if "/encounters/lit/background" in r.url else None)
    page.goto(link)
    page.wait_for_selector(".app header .status.live", timeout=20_000)
    background = page.locator("svg.map image.background")
    background.wait_for(state="attached")
    drawn = {name: float(background.get_attribute(name)) for name in ("x", "y", "width", "height")}
    assert drawn == {"x": 1.5 * SQUARE, "y": 2 * SQUARE, "width": 4 * SQUARE, "height": 3 * SQUARE}
    wait_until(lambda: fetched == [200], what="the image fetched with the seat's token")
    # Under the grid and the tokens: drawn before them.
    order = page.eval_on_selector("svg.map", """svg => [...svg.querySelectorAll("image.background, rect[fill='url(#grid)'], .token")]
        .map(e => e.matches("image.background") ? "image" : e.matches(".token") ? "token" : "grid")""")
    assert order[0] == "image" and "grid" in order and "token" in order
    # Seen on screen: the middle of square (3, 3), inside the image, is the image's colour.
    point = page.evaluate("""([x, y]) => { const svg = document.querySelector("svg.map"), p = svg.createSVGPoint();
        p.x = x; p.y = y; const q = p.matrixTransform(svg.getScreenCTM()); return [q.x, q.y]; }""", [3.5 * SQUARE, 3.5 * SQUARE])
    shot = Image.open(io.BytesIO(page.screenshot(clip={"x": point[0] - 2, "y": point[1] - 2, "width": 4, "height": 4})))
    r, g, b = shot.convert("RGB").getpixel((2, 2))
    assert abs(r - 200) < 40 and g < 80 and abs(b - 160) < 40, (r, g, b)
    assert not table.errors, table.errors
