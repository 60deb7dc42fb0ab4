"""What a verifier reads over HTTP (docs/fairness.md), from a real `firelane
serve`, every exchange checked against the published OpenAPI document: the
signing key (the one `seats --json` published at creation) and the log's
entries as stored, paged, whose signatures and dice check."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from firelane.events.envelope import StoredEvent
from firelane.projections.audit import verify
from tests.api_contract import api_contract  # noqa: F401 - the fixture
from tests.cli_helpers import Served, create_seats, firelane

pytestmark = pytest.mark.usefixtures("api_contract")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    server = Served(tmp_path_factory.mktemp("fair-api") / "data")
    try:
        yield server  # (the contract check reads the server's OpenAPI document after each test)
    finally:
        code, stderr = server.stop()
        assert code == 0, stderr


def test_the_api_gives_the_key_and_the_log_as_stored(served: Served, tmp_path: Path) -> None:
    tokens = create_seats(served, "checked", tmp_path)
    published = json.loads(firelane("seats", "checked", "--data-dir", str(served.data_dir), "--json").stdout)
    base = f"{served.api}/api/campaigns/default/encounters/checked"
    with httpx.Client(timeout=30) as http:
        watcher = {"Authorization": f"Bearer {tokens['spectator']}"}
        key = http.get(f"{base}/signing-key", headers=watcher).json()
        assert key == published["log_signing_key"] and key["algorithm"] == "Ed25519"
        ended = http.post(f"{base}/commands", params={"wait": 10}, headers={"Authorization": f"Bearer {tokens['gm']}"},
                          content=json.dumps({"type": "EndEncounter", "command_id": "end", "actor": "gm"}))
        assert ended.status_code == 200, ended.text
        entries, after = [], "0-0"
        give_up = time.monotonic() + 20
        while not entries or entries[-1]["t"] != "SeedRevealed":  # the reveal follows the end
            assert time.monotonic() < give_up, "the seed was never revealed"
            page = http.get(f"{base}/log", params={"after": after, "limit": 3}, headers=watcher).json()
            entries += page["entries"]  # paged by 3, as a client reading a long log would
            if page["entries"]:
                after = page["entries"][-1]["id"]
            else:
                time.sleep(0.05)
        assert http.get(f"{base}/log", params={"after": "no"}, headers=watcher).status_code == 400
        assert http.get(f"{base}/log").status_code == 401
    assert [e["n"] for e in entries] == list(range(1, len(entries) + 1)) and entries[-1]["t"] == "SeedRevealed"
    assert json.loads(entries[0]["d"])["log_public_key"] == key["public_key"]
    stored = [StoredEvent(entry_id=e["id"], version=e["n"], encounter="checked", type=e["t"], schema=e["s"],
                          data=e["d"].encode(), command_id=e["c"], causation=e["k"], inbox_cursor=e["q"], signature=e["g"])
              for e in entries]
    report = verify(stored, campaign="default")
    assert report.ok, report.problems
    assert report.signatures >= 1 and report.signed_through == len(entries) and report.log_public_key == key["public_key"]
