"""Reading the packaged sample data (``firelane/data/*.json``).

This reads static files shipped inside the package; it is the only I/O in the
percentile systems and it never runs during `decide` or `evolve`.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

DATA_DIR = Path(__file__).resolve().parents[3] / "data"


@lru_cache(maxsize=None)
def _read(filename: str) -> str:
    return (DATA_DIR / filename).read_text(encoding="utf-8")


def load_json(filename: str) -> dict[str, Any]:
    """A fresh copy of a packaged JSON file (callers may modify it)."""
    return json.loads(_read(filename))
