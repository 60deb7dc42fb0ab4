"""The RonD6 demo fights' logs, pinned by hash (issue 12).

How the engine decides (copies of the state or none, probes) must not change
what happens: these fights' logs are byte for byte those of the engine before
issue 12 (`scripts/rond6_log_hashes.py` checks 50 or more seeds against a saved
run). A change to the rules or the AI that changes the fights on purpose
updates the hashes here, with the script's output, in the same commit.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

_SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "rond6_log_hashes.py"
_spec = importlib.util.spec_from_file_location("rond6_log_hashes", _SCRIPT)
assert _spec is not None and _spec.loader is not None
log_hashes = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(log_hashes)

PINNED = [
    # (variant, seed number, events, sha256): seed 0 has a charge, healing and an area attack,
    # 8 a strenuous run, 29 three charges; the "defend" fights are full of Active Defense claims.
    ("demo", 0, 506, "63d2b1819d62626538735c05172cee6c46cbe6ef122bd4110226d1bb51f08e9d"),
    ("demo", 8, 375, "ae3add467421f665f3690f35eee8de5e7942273783cb495a1e10cb8815986f83"),
    ("demo", 29, 1144, "112dbbadee4aeadbc77748bd5a6b7b05dc7dcb29217c2fa351d0926e88a44ebe"),
    ("defend", 0, 1243, "3121d55261e277b8968b9c3bda18bd90ee6b4506cb261c16f1957d7512322c18"),
    ("defend", 1, 629, "848e40b673a2d819f374fee5ae38e2b7808d0bdf448bb35b7cc331eacf4fa836"),
]


@pytest.mark.parametrize(("variant", "seed", "events", "sha256"), PINNED)
def test_a_demo_fight_logs_the_same_events_as_before(variant: str, seed: int, events: int, sha256: str) -> None:
    assert log_hashes.log_hash(log_hashes.seed_of(seed), variant) == (sha256, events)
