"""docs/fairness.md's test vectors are the code's: every ```json test-vector
block in it is recomputed here by firelane's own functions, and by the page's
verifier (fairness.js) under node where node is found."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from firelane.engine.dice import commit_seed, derive_face, dice_key
from firelane.events.envelope import StoredEvent
from firelane.events.log_signing import entry_bytes, group_digest, signed_message
from firelane.events.public_signing import SigningKey, signature_valid
from firelane.projections.audit import verify
from tests.cli_helpers import REPO

SPEC = REPO / "docs" / "fairness.md"
BLOCK = re.compile(r"```json test-vector\n(.*?)\n```", re.DOTALL)


def vectors() -> list[dict]:
    found = [json.loads(block) for block in BLOCK.findall(SPEC.read_text(encoding="utf-8"))]
    assert {v["kind"] for v in found} == {"commitment", "die-detail", "dice", "client-seeds", "signed-group",
                                          "lobby-fight"}
    return found


def fields(entry: dict) -> tuple[bytes, ...]:
    return (str(entry["n"]).encode(), entry["t"].encode(), str(entry["s"]).encode(), entry["c"].encode(),
            entry["k"].encode(), entry["q"].encode(), entry["d"].encode())


@pytest.mark.parametrize("vector", vectors(), ids=lambda v: v["kind"])
def test_each_vector_of_the_spec_is_what_the_code_computes(vector: dict) -> None:
    kind = vector["kind"]
    if kind == "commitment":
        assert commit_seed(bytes.fromhex(vector["seed"])) == vector["commitment"]
    elif kind == "die-detail":
        key = bytes.fromhex(vector["key"])
        assert vector["message"] == f"{vector['at']}:{vector['k']}:{vector['attempt']}"
        digest = hashlib.blake2b(vector["message"].encode(), key=key, digest_size=8).digest()
        assert digest.hex() == vector["digest"]
        assert int.from_bytes(digest, "big") == int(vector["value"])
        assert 2**64 - 2**64 % vector["sides"] == int(vector["limit"])
        assert derive_face(key, vector["at"], vector["k"], vector["sides"]) == vector["face"] == int(vector["value"]) % 6 + 1
    elif kind == "dice":
        key = bytes.fromhex(vector["key"])
        assert [[at, k, sides, derive_face(key, at, k, sides)] for at, k, sides, _face in vector["dice"]] == vector["dice"]
    elif kind == "client-seeds":
        key = dice_key(bytes.fromhex(vector["seed"]), [tuple(pair) for pair in vector["client_seeds"]])
        assert key.hex() == vector["dice_key"]
        assert [[at, k, sides, derive_face(key, at, k, sides)] for at, k, sides, _face in vector["dice"]] == vector["dice"]
    elif kind == "lobby-fight":
        seed = bytes.fromhex(vector["seed"])
        key = dice_key(seed, [tuple(pair) for pair in vector["client_seeds"]])
        assert key.hex() == vector["dice_key"]
        assert [[at, k, sides, derive_face(key, at, k, sides)] for at, k, sides, _f in vector["opening_dice"]] == vector["opening_dice"]
        alone = [[at, k, sides, derive_face(seed, at, k, sides)] for at, k, sides, _f in vector["opening_dice"]]
        assert alone == vector["opening_dice_from_the_seed_alone"] != vector["opening_dice"]
        stored = [StoredEvent(entry_id=f"1-{e['n']}", version=e["n"], encounter=vector["encounter"], type=e["t"],
                              schema=e["s"], data=e["d"].encode(), command_id=e["c"], causation=e["k"],
                              inbox_cursor=e["q"], signature=e["g"]) for e in vector["entries"]]
        report = verify(stored, campaign=vector["campaign"])
        assert report.ok and report.commitment_ok, report.problems
        assert report.signatures >= 1 and report.signed_through == stored[-1].version
        assert [[seat, text] for _v, seat, text in report.client_seeds] == vector["client_seeds"]
        assert report.dice == len(vector["opening_dice"])
    elif kind == "signed-group":
        key = SigningKey(Ed25519PrivateKey.from_private_bytes(bytes.fromhex(vector["private_key_seed"])))
        assert key.public_key.hex() == vector["public_key"] and key.fingerprint == vector["fingerprint"]
        entries = [entry_bytes(*fields(entry)) for entry in vector["entries"]]
        assert entries[0].hex() == vector["first_entry_bytes"]
        digest = group_digest(vector["campaign"], vector["encounter"], vector["first_version"], entries)
        assert digest.hex() == vector["group_digest"]
        assert key.sign(signed_message(digest)).hex() == vector["signature"]  # Ed25519 signatures are deterministic
        assert signature_valid(key.public_key, signed_message(digest), bytes.fromhex(vector["signature"]))


@pytest.mark.skipif(shutil.which("node") is None, reason="node is needed to run the page's verifier")
def test_the_pages_verifier_computes_the_same_vectors(tmp_path: Path) -> None:
    found = vectors()
    path = tmp_path / "vectors.json"
    path.write_text(json.dumps(found))
    done = subprocess.run([shutil.which("node"), str(REPO / "tests" / "node" / "spec_vectors.mjs"), str(path)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    for vector, computed in zip(found, json.loads(done.stdout), strict=True):
        kind = vector["kind"]
        if kind == "commitment":
            assert computed == {"commitment": vector["commitment"]}
        elif kind == "dice":
            assert computed == {"dice": vector["dice"]}
        elif kind == "die-detail":
            assert computed == {"dice": [[vector["at"], vector["k"], vector["sides"], vector["face"]]]}
        elif kind == "client-seeds":
            assert computed == {"dice_key": vector["dice_key"], "dice": vector["dice"]}
        elif kind == "lobby-fight":
            assert computed == {"ok": True, "problems": [], "dice": len(vector["opening_dice"]),
                                "client_seeds": vector["client_seeds"], "dice_key": vector["dice_key"],
                                "opening_dice": vector["opening_dice"]}
        else:
            assert computed == {"first_entry_bytes": vector["first_entry_bytes"], "group_digest": vector["group_digest"],
                                "valid": True}
