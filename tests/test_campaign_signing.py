"""A campaign export is signed with its store's Ed25519 key (issue 17, item 5).

The attack that worked: change `EncounterEnded.winner` and a `CombatantDown`
reason in an export, recompute the hash chain (it needs no key): `campaign
verify` said "hash chain intact … all match", import took it, the roster showed
the forged winner. Now verify and import refuse any change, a file signed by
another key is refused unless the user names its fingerprint, and an unsigned
(format 1) file only when the user accepts it as unsigned.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from firelane.events.public_signing import SigningKey, fingerprint, parse_fingerprint, signature_valid
from firelane.actors.store import CliError, Store, store_signing_key
from firelane.actors.campaign_io import Trust, export_campaign, signed_message, verify_export
from firelane.redisio import connect
from firelane.redisio.datadir import DataDir
from tests.cli_helpers import cli_ok, cli_refused, REPO
from tests.toy_system import TOY

GENESIS = hashlib.blake2b(b"firelane-campaign-export", digest_size=32).digest()


# ------------------------------------------------------------------ what an attacker can do without the key


def items(path: Path) -> list[dict]:
    return [json.loads(line.split(b" ", 1)[1]) for line in path.read_bytes().splitlines()]


def write_chained(path: Path, payloads: list[bytes]) -> None:
    """Write lines with their chain recomputed, as anyone can (no key needed)."""
    chain, lines = GENESIS, []
    for payload in payloads:
        chain = hashlib.blake2b(chain + payload, digest_size=32).digest()
        lines.append(chain.hex().encode() + b" " + payload + b"\n")
    path.write_bytes(b"".join(lines))


def encoded(item: dict) -> bytes:
    return json.dumps(item, separators=(",", ":")).encode()


def resign(path: Path, key: SigningKey) -> None:
    """Sign the file again with ``key``, as an attacker with a key of their own would."""
    lines = items(path)
    write_chained(path, [encoded(item) for item in lines[:-1]])
    end_chain = bytes.fromhex(path.read_bytes().splitlines()[-1].split(b" ", 1)[0].decode())
    signature = {"x": "signature", "algorithm": "ed25519", "public_key": key.public_key.hex(),
                 "signature": key.sign(signed_message(end_chain)).hex()}
    write_chained(path, [encoded(item) for item in lines[:-1]] + [encoded(signature)])


def forge_winner_and_reason(source: Path, forged: Path) -> str:
    """The issue's attack: another winner, a CombatantDown's reason changed; the chain recomputed. Returns the forged winner."""
    lines = items(source)
    ended = next(item for item in lines if item.get("t") == "EncounterEnded")
    down = next(item for item in lines if item.get("t") == "CombatantDown")
    started = next(item for item in lines if item.get("t") == "EncounterStarted")
    sides = sorted({c["side"] for c in started["d"]["setup"]["combatants"]})
    ended["d"]["winner"] = next(side for side in sides if side != ended["d"]["winner"])
    down["d"]["reason"] = "slipped on a banana"
    write_chained(forged, [encoded(item) for item in lines])
    return ended["d"]["winner"]


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], Path, str]:
    """A store with a fight that ended with a winner and a combatant down, exported: (its --data-dir, the file, its key)."""
    directory = tmp_path_factory.mktemp("signed")
    store = ["--data-dir", str(directory / "data")]
    cli_ok("run", "raid", "--demo-setup", "toy", "--quiet", *store)
    path = directory / "default.firelane"
    said = cli_ok("campaign", "export", "default", str(path), *store)
    key = store_signing_key(DataDir(directory / "data"), create=False)
    assert key is not None and f"signed by this store's key {key.fingerprint}" in said
    return store, path, key.fingerprint


def test_the_issues_forgery_is_refused_by_verify_and_import(exported, tmp_path: Path) -> None:
    store, path, _key = exported
    forged = tmp_path / "forged.firelane"
    winner = forge_winner_and_reason(path, forged)
    assert winner not in cli_ok("encounters", *store)
    for command in (["campaign", "verify", str(forged)], ["campaign", "import", str(forged), "--as", "forged"]):
        line = cli_refused(*command, *store)
        assert line.endswith("the signature does not match the file: it was changed after it was signed"), line
    assert json.loads(cli_ok("encounters", "--json", "--campaign", "forged", *store))["total"] == 0
    # The genuine file still verifies, naming this store's key.
    assert "(this store's key)" in cli_ok("campaign", "verify", str(path), *store)


def test_a_file_signed_again_by_another_key_is_refused_unless_that_key_is_trusted(exported, tmp_path: Path) -> None:
    store, path, own = exported
    other = SigningKey.generate()
    resigned = tmp_path / "resigned.firelane"
    resigned.write_bytes(path.read_bytes())
    resign(resigned, other)
    line = cli_refused("campaign", "verify", str(resigned), *store)
    assert f"is signed by key {other.fingerprint}, not this store's ({own})" in line and f"--trust {other.fingerprint}" in line
    assert f"is signed by key {other.fingerprint}" in cli_refused("campaign", "import", str(resigned), "--as", "copy", *store)
    assert "not this store's" in cli_refused("campaign", "import", str(resigned), "--as", "copy",
                                         "--trust", SigningKey.generate().fingerprint, *store)  # another key trusted: no
    checked = cli_ok("campaign", "verify", str(resigned), "--trust", other.fingerprint, *store)
    assert f"signed by key {other.fingerprint} (a key you trust (--trust), not this store's)" in checked
    cli_ok("campaign", "import", str(resigned), "--as", "copy", "--trust", other.fingerprint, *store)
    assert json.loads(cli_ok("encounters", "--json", "--campaign", "copy", *store))["rows"][0]["winner"] == \
        json.loads(cli_ok("encounters", "--json", *store))["rows"][0]["winner"]
    # The forgery signed by the attacker's key: refused as theirs, whatever the chain says.
    forged = tmp_path / "forged.firelane"
    forge_winner_and_reason(path, forged)
    resign(forged, other)
    assert f"is signed by key {other.fingerprint}, not this store's" in cli_refused("campaign", "verify", str(forged), *store)


def test_a_stripped_signature_makes_an_unsigned_file_refused_as_such(exported, tmp_path: Path) -> None:
    store, path, _key = exported
    lines = items(path)
    lines[0]["version"] = 1  # the downgrade: a format-1 file has no signature line
    stripped = tmp_path / "stripped.firelane"
    write_chained(stripped, [encoded(item) for item in lines[:-1]])
    line = cli_refused("campaign", "import", str(stripped), "--as", "stripped", *store)
    assert "is an unsigned export (format 1, made before firelane signed its exports)" in line
    assert line.endswith("accept it anyway with --accept-unsigned")
    checked = cli_ok("campaign", "verify", str(stripped), "--accept-unsigned", *store)
    assert "UNSIGNED (accepted with --accept-unsigned: anyone could have made or changed it)" in checked
    # Cut after the end line of a format-2 file: cut short, refused.
    cut = tmp_path / "cut.firelane"
    cut.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:-1]))
    assert "without its signature line (cut short?)" in cli_refused("campaign", "verify", str(cut), *store)


@pytest.fixture
async def small_store(redis_url: str, tmp_path: Path):
    from firelane.actors.campaign import create_characters

    client = await connect(redis_url)
    try:
        store = Store(client=client, server_key=b"s" * 32, data_dir=DataDir(tmp_path / "data"), redis_display="test")
        await create_characters(store.event_log("small"), [(TOY, "ann", "Ann", {"hp": 3}, ""), (TOY, "bo", "Bo", {"hp": 2}, "")])
        yield store
    finally:
        await client.aclose()


async def test_any_change_to_any_line_is_refused(small_store: Store, tmp_path: Path) -> None:
    """Every line changed in turn, by one byte that keeps it valid JSON (a space), its chain recomputed or not."""
    path = tmp_path / "small.firelane"
    await export_campaign(small_store, "small", path, progress=False)
    own = Trust(own_key=small_store.signing_key().fingerprint)
    assert (await verify_export(path, trust=own, progress=False)).own_key
    raw_lines = path.read_bytes().splitlines()
    payloads = [line.split(b" ", 1)[1] for line in raw_lines]
    changed = tmp_path / "changed.firelane"
    for index in range(len(payloads)):
        variant = payloads[:index] + [payloads[index].replace(b"{", b"{ ", 1)] + payloads[index + 1:]
        write_chained(changed, variant)
        # The chain holds again, so the last line (the signature, or the changed signature line itself) refuses it.
        with pytest.raises(CliError, match=rf"line {len(payloads)}: the signature (does not match|line is not as)"):
            await verify_export(changed, trust=own, progress=False)
        unchained = raw_lines[:index] + [raw_lines[index].replace(b"{", b"{ ", 1)] + raw_lines[index + 1:]
        changed.write_bytes(b"\n".join(unchained) + b"\n")
        with pytest.raises(CliError, match=rf"line {index + 1}: the hash chain breaks here"):
            await verify_export(changed, trust=own, progress=False)
    write_chained(changed, payloads + [payloads[-2]])  # a line added after the signature, chained
    with pytest.raises(CliError, match="goes on after its signature"):
        await verify_export(changed, trust=own, progress=False)


# ------------------------------------------------------------------ the key


def test_the_stores_key_is_made_once_by_concurrent_processes_and_kept_600(tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert store_signing_key(DataDir(data), create=False) is None
    # Each process imports, says it is ready, then waits for the word to go: all of them make the key at once.
    go = tmp_path / "go"
    program = ("import os, sys, time; from firelane.redisio.datadir import DataDir; "
               "from firelane.actors.store import store_signing_key; open(sys.argv[2] + '.' + str(os.getpid()), 'w');"
               "[time.sleep(0.001) for _ in iter(lambda: os.path.exists(sys.argv[2]), True)];"
               "print(store_signing_key(DataDir(sys.argv[1])).fingerprint)")
    processes = [subprocess.Popen([sys.executable, "-c", program, str(data), str(go)], stdout=subprocess.PIPE, text=True,
                                  cwd=REPO) for _ in range(8)]
    deadline = time.monotonic() + 60
    while len(list(tmp_path.glob("go.*"))) < len(processes) and time.monotonic() < deadline:
        time.sleep(0.01)
    go.touch()
    printed = {process.communicate(timeout=60)[0].strip() for process in processes}
    key = store_signing_key(DataDir(data), create=False)
    assert key is not None and printed == {key.fingerprint}
    assert os.stat(data / "signing-key.pem").st_mode & 0o777 == 0o600
    assert sorted(p.name for p in data.iterdir()) == ["signing-key.pem"]  # no temporary file left behind
    assert store_signing_key(DataDir(data)).fingerprint == key.fingerprint  # kept


def test_signatures_and_fingerprints() -> None:
    key, other = SigningKey.generate(), SigningKey.generate()
    message = signed_message(b"\x01" * 32)
    signature = key.sign(message)
    assert signature_valid(key.public_key, message, signature)
    assert not signature_valid(other.public_key, message, signature)
    assert not signature_valid(key.public_key, message + b"x", signature)
    assert not signature_valid(key.public_key[:31], message, signature)
    assert SigningKey.from_pem(key.to_pem()).fingerprint == key.fingerprint == fingerprint(key.public_key)
    digest = hashlib.sha256(key.public_key).hexdigest()
    assert key.fingerprint == "-".join(digest[i:i + 4] for i in range(0, 32, 4))
    typed = key.fingerprint.replace("-", " ").upper()
    assert parse_fingerprint(typed) == parse_fingerprint(key.fingerprint.replace("-", ":")) == key.fingerprint
    with pytest.raises(ValueError, match="is not a key fingerprint"):
        parse_fingerprint(key.fingerprint[:-1])


def test_the_format_is_checkable_without_firelane(exported, capsys: pytest.CaptureFixture[str]) -> None:
    """docs/campaigns.md's check of a file, with hashlib and cryptography alone, run as written there."""
    _store, path, own = exported
    docs = (REPO / "docs" / "campaigns.md").read_text()
    snippet = re.search(r"```python\n(import hashlib, json\n.*?)```", docs, re.S)
    assert snippet, "docs/campaigns.md shows how to check a file"
    exec(snippet[1].replace('"saga.firelane"', repr(str(path))), {})  # noqa: S102 - our own documentation
    assert capsys.readouterr().out.strip() == own
