"""Every system's demo fights, pinned by the hash of their logs.

Moving a rule system's code (issue 18), or changing how the engine decides,
must not change what happens: these fights' logs are byte for byte those of
the engine when they were pinned (`scripts/demo_log_hashes.py` checks 50 or
more seeds per system against a saved run). A change to the rules or the AI
that changes fights on purpose updates the hashes here, with the script's
output, in the same commit.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

_SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "demo_log_hashes.py"
_spec = importlib.util.spec_from_file_location("demo_log_hashes", _SCRIPT)
assert _spec is not None and _spec.loader is not None
log_hashes = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(log_hashes)

PINNED = [
    # (system, variant, seed number, events, sha256 of the encoded events)
    ("bolt-and-blade", "demo", 0, 402, "0ab8affce3cf4f7b612bebf3a1404b33a814dbb2f340941a7e0b72bf27837b95"),
    ("bolt-and-blade", "demo", 2, 565, "a23d76be704d9e8def98981af520b3cd3b27556317f1707b51f28030aea420ce"),
    ("d100-degrees", "demo", 0, 119, "517445d7c699af9c9925e89512ab2f7672925917280fd2644439624b47bf9e77"),
    ("d100-degrees", "demo", 2, 211, "35fa20b1b64b182c4e3a4c71f2fb2904e1385359ec45d7b21ebddcb5e0d4dbeb"),
    ("d100-zones", "demo", 0, 306, "249319d7c3898ed5cf7aa6e613f4fd06936e5bebd019b45ac972c2b32df36340"),
    ("d100-zones", "demo", 1, 233, "7b5d4253c36fe157bf560215556aacb0242119a8d3f1195bf5c2a482b761ab0b"),
    # RonD6's seed 0 has a charge, healing and an area attack, 8 a strenuous run, 29 three charges;
    # the "rond6-defend" fights are full of Active Defense claims.
    ("rond6", "demo", 0, 506, "63d2b1819d62626538735c05172cee6c46cbe6ef122bd4110226d1bb51f08e9d"),
    ("rond6", "demo", 8, 375, "ae3add467421f665f3690f35eee8de5e7942273783cb495a1e10cb8815986f83"),
    ("rond6", "demo", 29, 1144, "2d962a5ffc242cfdf925874ce86ac16dc4eb625e04e5f533fee0309907fab348"),
    ("rond6", "rond6-defend", 0, 1243, "3121d55261e277b8968b9c3bda18bd90ee6b4506cb261c16f1957d7512322c18"),
    ("rond6", "rond6-defend", 1, 629, "848e40b673a2d819f374fee5ae38e2b7808d0bdf448bb35b7cc331eacf4fa836"),
    ("rond6", "demo", 1, 479, "5a84d98c5b0970d09dd1a44c647a7155ed2a161bc4ce7e2231f9396e06b88a8e"),
    ("rond6", "demo", 2, 1259, "8ebc08b1a9c9a7c4f721a597290c951b708643a07f468c40ea912a7065979382"),
]


@pytest.mark.parametrize(("system", "variant", "seed", "events", "sha256"), PINNED)
def test_a_demo_fight_logs_the_same_events_as_when_pinned(system: str, variant: str, seed: int, events: int,
                                                          sha256: str) -> None:
    assert log_hashes.log_hash(system, log_hashes.seed_of(system, seed), variant) == (sha256, events)
