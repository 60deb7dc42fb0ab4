"""Browser tests: Debian's chromium driven by Python playwright, against a real
`firelane serve` on its own data directory.

The browser is ``FIRELANE_CHROMIUM``, else ``/usr/bin/chromium``, else
``chromium`` on PATH. Without one (or without playwright) the tests are
skipped with the reason; in CI (``CI`` set) they fail instead, so a CI run
can never pass them by skipping.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser.table_helpers import Table
from tests.cli_helpers import Served, serve_for_module


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() not in ("", "0", "false", "no")


def _chromium() -> str | None:
    for candidate in (os.environ.get("FIRELANE_CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium")):
        if candidate and Path(candidate).exists():
            return candidate
    return None


def _unavailable(reason: str) -> None:
    if _in_ci():
        pytest.fail(f"browser tests must run in CI: {reason}", pytrace=False)
    pytest.skip(reason)


# Flags for a headless chromium on a machine with no network but loopback
# (background networking would only be refused) and, as root, no sandbox.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    executable = _chromium()
    if executable is None:
        _unavailable("no chromium found (set FIRELANE_CHROMIUM, or apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("python playwright is not installed (pip install -e '.[test]')")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS, headless=True)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    yield from serve_for_module(tmp_path_factory, "table")


@pytest.fixture
def table(served: Served, browser: object, tmp_path: Path) -> Iterator[Table]:
    opened = Table(served, browser, tmp_path)
    try:
        yield opened
    finally:
        opened.close()
