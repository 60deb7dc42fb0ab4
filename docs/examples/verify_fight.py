#!/usr/bin/env python3
"""Check a firelane fight without firelane, from docs/fairness.md alone.

Needs only Python 3.10+ and the `cryptography` package (for Ed25519).

Get the log over the API (any seat's token will do, the spectator's too)::

    python verify_fight.py --url http://127.0.0.1:8740 --campaign C --encounter E --token TOKEN

or from a file holding the answer of ``GET /api/campaigns/<c>/encounters/<e>/log``
(its pages' ``entries`` joined into one list), with the key from
``GET …/signing-key`` (or ``firelane seats E --json``'s ``log_signing_key``)::

    python verify_fight.py log.json --public-key 64-HEX-DIGITS

It checks the seed against its commitment, recomputes every die of every roll,
checks every signed group and that the versions run on, and names every
failing entry by its version. Exit status: 0 the fight verifies, 1 it does
not, 2 the input could not be read. ``--json`` prints a summary instead.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Iterator

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

SEED_PERSONALIZATION = b"firelane-seed".ljust(16, b"\0")
CLIENT_SEEDS_DOMAIN = b"firelane-client-seeds:1"
GROUP_DOMAIN = b"firelane-log-group:1"
SIGNATURE_DOMAIN = b"firelane-log-signature:1:"


def lp(data: bytes) -> bytes:
    """Length-prefixed: 4-byte big-endian length, then the bytes (fairness.md, Notation)."""
    return len(data).to_bytes(4, "big") + data


def commitment_of(seed: bytes) -> str:
    return hashlib.blake2b(seed, digest_size=32, person=SEED_PERSONALIZATION).hexdigest()


def face(key: bytes, at: int, k: int, sides: int) -> int:
    """Section 2: rejection sampling over keyed BLAKE2b-64."""
    limit = 2**64 - (2**64 % sides)
    attempt = 0
    while True:
        message = f"{at}:{k}:{attempt}".encode("ascii")
        value = int.from_bytes(hashlib.blake2b(message, key=key, digest_size=8).digest(), "big")
        if value < limit:
            return value % sides + 1
        attempt += 1


def dice_key(seed: bytes, client_seeds: list[tuple[str, str]]) -> bytes:
    """Section 3: the seed itself with no client seed, else the mixed key."""
    if not client_seeds:
        return seed
    message = CLIENT_SEEDS_DOMAIN + b"".join(lp(s.encode()) + lp(c.encode()) for s, c in client_seeds)
    return hashlib.blake2b(message, key=seed, digest_size=32).digest()


def fingerprint(public_key: bytes) -> str:
    digest = hashlib.sha256(public_key).hexdigest()[:32]
    return "-".join(digest[i:i + 4] for i in range(0, 32, 4))


def rolls_in(value: Any, inside_rewind_state: bool = False) -> Iterator[dict]:
    """Every roll (an object with a string `purpose`, a string `rule` and an array `dice`) anywhere in a body."""
    if isinstance(value, dict):
        if isinstance(value.get("purpose"), str) and isinstance(value.get("rule"), str) \
                and isinstance(value.get("dice"), list):
            yield value
        for name, child in value.items():
            yield from rolls_in(child)
    elif isinstance(value, list):
        for child in value:
            yield from rolls_in(child)


def rolls_of(body: dict) -> Iterator[dict]:
    """A rewind's `state` is a saved state, not events: its rolls are not this entry's."""
    if body.get("type") == "EncounterRewound":
        body = {name: child for name, child in body.items() if name != "state"}
    return rolls_in(body)


@dataclass
class Report:
    entries: int = 0
    rolls: int = 0
    dice: int = 0
    signatures: int = 0
    signed_through: int = 0
    public_key: str = ""
    commitment_ok: bool = False
    seed_revealed: bool = False
    reproducible_dice: bool = False
    unsigned: str = ""
    client_seeds: list[tuple[int, str, str]] = field(default_factory=list)
    problems: list[tuple[int, str]] = field(default_factory=list)  # (version, what is wrong); 0: the log as a whole

    def fail(self, version: int, text: str) -> None:
        self.problems.append((version, text))

    @property
    def failing(self) -> list[int]:
        return sorted({v for v, _ in self.problems if v})

    @property
    def ok(self) -> bool:
        return self.seed_revealed and self.commitment_ok and not self.problems


def sum_problem(roll: dict) -> str | None:
    """Section 2, "The sums": why a roll's total does not follow from its dice and modifiers, or None."""
    dice = roll["dice"]
    if roll.get("none_kept"):
        counted: list[int] = []
    else:
        counted = list(roll.get("kept") or range(len(dice)))
    strays = [index for index in counted if not 0 <= index < len(dice)]
    if strays:
        return f"kept lists dice {strays} but the roll has {len(dice)}"
    dice_sum = sum(dice[index][1] for index in counted)
    modifiers = sum(modifier["value"] for modifier in roll.get("modifiers") or [])
    total = roll.get("total", 0)
    if roll.get("compare", ">=") == "<=":
        if total != dice_sum:
            return f"total {total} is not its dice ({dice_sum})"
        if roll.get("modifiers") and roll.get("target") != modifiers:
            return f"target {roll.get('target')} is not the sum of its modifiers ({modifiers})"
        return None
    if total != dice_sum + modifiers:
        return f"total {total} is not its dice ({dice_sum}) plus its modifiers ({modifiers:+d})"
    return None


def group_bytes(campaign: str, encounter: str, first_version: int, entries: list[dict]) -> bytes:
    parts = [lp(GROUP_DOMAIN), lp(campaign.encode()), lp(encounter.encode()), lp(str(first_version).encode())]
    for e in entries:
        for value in (str(e["n"]), e["t"], str(e["s"]), e["c"], e["k"], e["q"], e["d"]):
            parts.append(lp(value.encode()))
    return b"".join(parts)


def check_signatures(report: Report, campaign: str, encounter: str, entries: list[dict], public_key: bytes) -> None:
    key = Ed25519PublicKey.from_public_bytes(public_key)
    group: list[dict] = []
    first = 1  # a group begins right after the previous group's last entry, whatever version stands there
    for entry in entries:
        group.append(entry)
        if not entry.get("g"):
            continue
        message = SIGNATURE_DOMAIN + hashlib.sha256(group_bytes(campaign, encounter, first, group)).digest()
        runs_on = [e["n"] for e in group] == list(range(first, first + len(group)))
        try:
            key.verify(bytes.fromhex(entry["g"]), message)
            valid = runs_on
        except (InvalidSignature, ValueError):
            valid = False
        if valid:
            report.signatures += 1
            report.signed_through = entry["n"]
        else:
            report.fail(entry["n"], f"the signature of the group of versions {first} to {entry['n']} does not match")
        first = entry["n"] + 1
        group = []
    if group:
        report.unsigned = f"versions {group[0]['n']} to {group[-1]['n']} are not signed yet"


def verify(campaign: str, encounter: str, entries: list[dict], published_key: str | None) -> Report:
    report = Report(entries=len(entries))
    if not entries:
        report.fail(0, "the log is empty")
        return report
    bodies = []
    for entry in entries:
        try:
            bodies.append(json.loads(entry["d"]))
        except ValueError:
            report.fail(entry["n"], "its body is not JSON")
            bodies.append({})
    start = bodies[0]
    if start.get("type") != "EncounterStarted":
        report.fail(entries[0]["n"], "the first entry is not EncounterStarted")
    report.reproducible_dice = bool(start.get("reproducible_dice"))

    # Section 4: the signatures.
    report.public_key = start.get("log_public_key") or ""
    if not report.public_key:
        report.unsigned = "the log is not signed (written before firelane signed its logs)"
    else:
        if published_key is not None and published_key.lower() != report.public_key:
            report.fail(entries[0]["n"], "the log's key is not the one published for the encounter")
        try:
            check_signatures(report, campaign, encounter, entries, bytes.fromhex(report.public_key))
        except ValueError:
            report.fail(entries[0]["n"], "the log's public key is not 32 bytes of hex")

    # Section 1: the seed.
    revealed = [(e["n"], b["seed"]) for e, b in zip(entries, bodies) if b.get("type") == "SeedRevealed"]
    if not revealed:
        report.fail(0, "the seed is not revealed (the fight has not ended)")
        return report
    report.seed_revealed = True
    seed_hex = revealed[-1][1]
    for version, other in revealed[:-1]:
        if other != seed_hex:
            report.fail(version, "it reveals another seed than the last SeedRevealed")
    seed = bytes.fromhex(seed_hex)
    report.commitment_ok = commitment_of(seed) == start.get("seed_commitment")
    if not report.commitment_ok:
        report.fail(revealed[-1][0], "the revealed seed does not match the commitment")

    # Sections 2 and 3: every die, as the versions run on (section 5 says what a gap or a copy does).
    branch = 0
    base = 0
    base_from: int | None = None  # after a gap: the batch may have begun among the missing entries
    expected = 1
    previous_command: str | None = None
    seen: dict[tuple[int, int], int] = {}
    client_seeds: list[tuple[str, str]] = []
    for entry, body in zip(entries, bodies):
        version = entry["n"]
        gap = False
        if version < expected:
            report.fail(version, f"version {version} appears again after version {expected - 1}")
            continue  # a copy: its dice were checked where it belongs
        if version > expected:
            for missing in range(expected, version):
                report.fail(missing, f"version {missing} is missing (deleted from the log)")
            base_from = branch
            branch += version - expected
            gap = True
        expected = version + 1
        command = entry["c"]
        if not command or command != previous_command:
            base = branch
            previous_command = command
            if base_from is not None and not gap:
                base_from = None
        kind = body.get("type")
        key = dice_key(seed, client_seeds)
        for roll in rolls_of(body):
            report.rolls += 1
            mismatch = sum_problem(roll)
            if mismatch:
                report.fail(version, f"{roll['purpose']} ({roll['rule']}): {mismatch}")
            for die in roll["dice"]:
                report.dice += 1
                sides, shown, at, k = die
                where = f"{roll['purpose']} ({roll['rule']}) die {k} at {at}"
                if at == -1:
                    report.fail(version, f"{where}: fixed test dice in a real log")
                    continue
                if (at, k) in seen:
                    if seen[(at, k)] != shown:
                        report.fail(version, f"{where}: face {shown}, but the same die showed {seen[(at, k)]} before")
                    continue
                seen[(at, k)] = shown
                if base_from is not None and base_from <= at <= base:
                    base, base_from = at, None
                if at != base:
                    report.fail(version, f"{where}: drawn at {at}, but its command was decided at {base}")
                face_from_seed = face(key, at, k, sides)
                if shown != face_from_seed:
                    report.fail(version, f"{where}: face {shown} but the seed gives {face_from_seed}")
        if kind == "EncounterRewound":
            branch = body["branch_version"]
            seen = {position: f for position, f in seen.items() if position[0] < branch}
            client_seeds = [(s, c) for s, c in body.get("state", {}).get("client_seeds", [])]
        else:
            branch += 1
            if kind == "ClientSeedAdded":
                client_seeds.append((body["seat"], body["client_seed"]))
                report.client_seeds.append((version, body["seat"], body["client_seed"]))
    return report


def fetch_log(url: str, campaign: str, encounter: str, token: str) -> tuple[list[dict], str]:
    base = f"{url.rstrip('/')}/api/campaigns/{urllib.parse.quote(campaign)}/encounters/{urllib.parse.quote(encounter)}"
    headers = {"Authorization": f"Bearer {token}"}

    def get(path: str) -> Any:
        with urllib.request.urlopen(urllib.request.Request(base + path, headers=headers), timeout=30) as answer:
            return json.load(answer)

    entries: list[dict] = []
    after = ""
    while True:
        page = get(f"/log?limit=1000" + (f"&after={urllib.parse.quote(after)}" if after else ""))
        if not page["entries"]:
            break
        entries.extend(page["entries"])
        after = page["entries"][-1]["id"]
    return entries, get("/signing-key")["public_key"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Check a firelane fight from its log (docs/fairness.md).")
    parser.add_argument("log", nargs="?", help="a file with the …/log answer (entries of every page)")
    parser.add_argument("--public-key", help="the published key (…/signing-key's public_key)")
    parser.add_argument("--campaign", help="the campaign (default: the file's `campaign`)")
    parser.add_argument("--encounter", help="the encounter (default: the file's `encounter`)")
    parser.add_argument("--url", help="the server, e.g. http://127.0.0.1:8740: read the log over the API")
    parser.add_argument("--token", help="a seat's token, for --url")
    parser.add_argument("--json", action="store_true", help="print a JSON summary")
    args = parser.parse_args(argv)
    try:
        if args.url:
            if not (args.campaign and args.encounter and args.token):
                parser.error("--url needs --campaign, --encounter and --token")
            entries, published = fetch_log(args.url, args.campaign, args.encounter, args.token)
            campaign, encounter = args.campaign, args.encounter
        elif args.log:
            with open(args.log, encoding="utf-8") as file:
                document = json.load(file)
            entries = document["entries"]
            campaign = args.campaign or document["campaign"]
            encounter = args.encounter or document["encounter"]
            published = args.public_key or document.get("public_key")
        else:
            parser.error("give a log file or --url")
    except (OSError, ValueError, KeyError) as error:
        print(f"verify_fight: cannot read the log: {error}", file=sys.stderr)
        return 2
    report = verify(campaign, encounter, entries, published)
    if args.json:
        print(json.dumps({
            "ok": report.ok, "entries": report.entries, "rolls": report.rolls, "dice": report.dice,
            "signatures": report.signatures, "signed_through": report.signed_through,
            "public_key": report.public_key, "commitment_ok": report.commitment_ok,
            "reproducible_dice": report.reproducible_dice, "unsigned": report.unsigned,
            "client_seeds": report.client_seeds, "failing": report.failing,
            "problems": [{"version": v, "problem": p} for v, p in report.problems],
        }))
    else:
        print(f"{campaign}/{encounter}: {report.entries} entries, {report.rolls} rolls, {report.dice} dice")
        if report.public_key:
            print(f"signed by key {fingerprint(bytes.fromhex(report.public_key))}: "
                  f"{report.signatures} groups, through version {report.signed_through}")
        if report.unsigned:
            print(report.unsigned)
        if report.reproducible_dice:
            print("reproducible dice: anyone who knows the seed text can predict every roll")
        for version, seat, text in report.client_seeds:
            print(f"client seed from {seat} at version {version}: {text!r}")
        for version, problem in report.problems:
            print(f"version {version}: {problem}" if version else problem)
        print("the fight verifies" if report.ok else "the fight does NOT verify")
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
