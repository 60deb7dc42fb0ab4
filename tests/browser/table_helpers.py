"""Helpers for the browser tests: create encounters on the served store, open
a seat's join link in its own browser context, read outcomes from the API.

The tests play through the page only (clicks); the API is read here only to
check outcomes, never to play."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import msgspec

from firelane.engine.registry import demo_setup
from tests.cli_helpers import REPO, Served, firelane

TABLE_SETUP = REPO / "docs" / "examples" / "bolt-and-blade-table.json"
SCREENSHOTS = os.environ.get("FIRELANE_SCREENSHOTS")  # a folder: the tests save each view's screenshot there
REPORT_CSP_VIOLATIONS = """window.addEventListener("securitypolicyviolation", (e) => console.error(
  `CSP violation: ${e.effectiveDirective} refused ${e.blockedURI || "an inline script or style"} (${e.sourceFile}:${e.lineNumber})`));"""


def setup_with_players(system: str, human_side: str | None = None, *, settings: dict[str, Any] | None = None) -> dict[str, Any]:
    """A system's demo setup with one side played by a player seat "p1"."""
    setup = msgspec.to_builtins(demo_setup(system))
    sides = sorted({c["side"] for c in setup["combatants"]})
    side = human_side or sides[0]
    humans = [c["id"] for c in setup["combatants"] if c["side"] == side]
    for combatant in setup["combatants"]:
        if combatant["id"] in humans:
            combatant["policy"] = "human"
    setup["seats"] = [{"id": "gm", "role": "gm", "name": "GM"},
                      {"id": "p1", "role": "player", "name": "Player One", "combatants": humans}]
    setup["settings"] = {**setup.get("settings", {}), **(settings or {})}
    return setup


def table_setup(**settings: Any) -> dict[str, Any]:
    setup = json.loads(TABLE_SETUP.read_text())
    setup["settings"] = {**setup["settings"], **settings}
    return setup


class Table:
    """One test's encounters and browser pages on the module's server."""

    def __init__(self, served: Served, browser: Any, tmp_path: Path) -> None:
        self.served = served
        self.browser = browser
        self.tmp_path = tmp_path
        self.contexts: list[Any] = []
        self.http = httpx.Client(timeout=15)
        self.errors: list[str] = []

    def close(self) -> None:
        for context in self.contexts:
            context.close()
        self.http.close()

    # ------------------------------------------------------------ encounters

    def create(self, encounter: str, setup: dict[str, Any], *, seed: str | None = None) -> dict[str, dict[str, str]]:
        """Create an encounter; each seat's token and join link."""
        path = self.tmp_path / f"{encounter}.json"
        path.write_text(json.dumps(setup))
        result = firelane("create", encounter, "--setup", str(path), "--data-dir", str(self.served.data_dir), "--json",
                          *(["--seed", seed, "--reproducible-dice"] if seed else []))
        assert result.returncode == 0, result.stderr
        seats = json.loads(result.stdout)["seats"]
        return {seat["seat"]: {"token": seat["token"], "link": seat["link"]} for seat in seats}

    def url(self, encounter: str, what: str) -> str:
        return f"{self.served.api}/api/campaigns/default/encounters/{encounter}/{what}"

    def get(self, encounter: str, what: str, token: str) -> Any:
        response = self.http.get(self.url(encounter, what), headers={"Authorization": f"Bearer {token}"})
        response.raise_for_status()
        return response.json()

    def events(self, encounter: str, token: str) -> list[dict[str, Any]]:
        return self.get(encounter, "events?after=0", token)["events"]

    def state(self, encounter: str, token: str) -> dict[str, Any]:
        return self.get(encounter, "state", token)

    def post(self, encounter: str, token: str, command: dict[str, Any]) -> httpx.Response:
        return self.http.post(self.url(encounter, "commands?wait=10"), headers={"Authorization": f"Bearer {token}"},
                              content=json.dumps(command))

    # ------------------------------------------------------------ pages

    def new_context(self, *, width: int = 1440, height: int = 880, touch: bool = False, **options: Any) -> Any:
        """A browser context of this test whose pages report each Content-Security-Policy
        violation as a console error (which the tests' error checks then catch). ``touch``:
        a phone's or tablet's (touch events, a mobile viewport); ``options``: playwright's own
        (e.g. ``timezone_id``, ``locale``)."""
        extra = {"has_touch": True, "is_mobile": True, "device_scale_factor": 2} if touch else {}
        extra.update(options)
        context = self.browser.new_context(viewport={"width": width, "height": height}, **extra)
        context.add_init_script(REPORT_CSP_VIOLATIONS)
        self.contexts.append(context)
        return context

    def open(self, link: str, *, width: int = 1440, height: int = 880, touch: bool = False, live: bool = True,
             **options: Any) -> Any:
        page = self.new_context(width=width, height=height, touch=touch, **options).new_page()
        self.watch(page, link)
        page.goto(link)
        if live:
            page.wait_for_selector(".app header .status.live", timeout=20_000)
        return page

    def watch(self, page: Any, link: str) -> None:
        """Collect the page's errors and console errors (a missing favicon's 404 included) in `errors`."""
        page.on("pageerror", lambda error: self.errors.append(f"{link}: {error}"))
        page.on("console", lambda message: self.errors.append(f"{link}: {message.text}") if message.type == "error" else None)

    def end_turn(self, page: Any, encounter: str, token: str, who: str, version: int) -> None:
        """Click ``who``'s End turn on ``page`` (the log at ``version``) and wait for it to land."""
        page.click(f"[data-mine='{who}'] .end-turn")
        wait_until(lambda: self.state(encounter, token)["version"] > version, what=f"{who}'s End turn to land")

    def shot(self, page: Any, name: str) -> None:
        if SCREENSHOTS:
            Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(Path(SCREENSHOTS) / f"{name}.png"))


def narrated(page: Any) -> list[int]:
    """The versions of the narration lines on the page, in order."""
    return page.eval_on_selector_all(".narration .line", "lines => lines.map(l => Number(l.dataset.n))")


def wait_until(predicate: Callable[[], Any], *, timeout: float = 20, what: str = "the condition",
               describe: Callable[[], Any] | None = None) -> Any:
    give_up = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > give_up:
            raise AssertionError(f"timed out waiting for {what}" + (f"; {describe()}" if describe else ""))
        time.sleep(0.05)


def show_tab(page: Any, tab: str) -> None:
    """Open a panel's tab where the layout tabs the panels (medium and narrow); the wide one shows them all."""
    button = page.locator(f".tabs [data-tab='{tab}']")
    if button.count() and button.get_attribute("aria-selected") != "true":
        button.click()


def page_version(page: Any) -> int:
    return page.evaluate("() => window.__table.conn.view ? window.__table.conn.view.version : 0")
