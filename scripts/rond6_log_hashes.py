"""The hash of each RonD6 demo fight's log, seed by seed (issue 12).

A change that must not change the rules' outcomes (how the engine copies its
state, say) is checked by running this before and after it:

    .venv/bin/python scripts/rond6_log_hashes.py --seeds 50 --write /tmp/before.json
    (make the change)
    .venv/bin/python scripts/rond6_log_hashes.py --seeds 50 --compare /tmp/before.json

Each hash covers every event of the fight as the log holds it (type, schema,
encoded body), so two runs agree only if every event is byte-identical.
``--variant defend`` plays the demo with every combatant a 7D dodger and every
other one holding its ground (Wait, R6-08): fights full of Active Defense
claims, with and without a declaration, which the demo itself rarely has.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys

import msgspec

from firelane.engine.registry import demo_setup, get_system
from firelane.engine.simulate import run_headless
from firelane.events import codec
from firelane.events.schemas import EncounterSetup


def seed_of(n: int) -> bytes:
    return f"rond6-log-seed-{n}".encode().ljust(32, b".")


def defend_variant(setup: EncounterSetup) -> EncounterSetup:
    """The demo with a 7D dodge for everyone and every other combatant holding (tactic "hold")."""
    combatants = []
    for index, member in enumerate(setup.combatants):
        sheet = {**member.sheet, "skills": {**member.sheet.get("skills", {}), "dodge": "7D"}}
        if index % 2 == 0:
            sheet["tactic"] = "hold"
        combatants.append(msgspec.structs.replace(member, sheet=sheet))
    return msgspec.structs.replace(setup, combatants=combatants)


VARIANTS = {"demo": lambda setup: setup, "defend": defend_variant}


def log_hash(seed: bytes, variant: str = "demo") -> tuple[str, int]:
    """(sha256 of the fight's encoded events, number of events)."""
    digest = hashlib.sha256()
    count = 0
    setup = VARIANTS[variant](demo_setup("rond6"))
    for _command, events, _state in run_headless(get_system("rond6"), setup, seed):
        for event in events:
            entry = codec.encode_event(event)
            digest.update(f"{entry.type}/{entry.schema}/{len(entry.data)}:".encode())
            digest.update(entry.data)
            count += 1
    return digest.hexdigest(), count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=50)
    parser.add_argument("--variant", choices=sorted(VARIANTS), default="demo")
    parser.add_argument("--write", help="save the hashes to this JSON file")
    parser.add_argument("--compare", help="compare with the hashes saved in this JSON file")
    args = parser.parse_args()
    hashes = {}
    for n in range(args.seeds):
        digest, count = log_hash(seed_of(n), args.variant)
        hashes[str(n)] = {"sha256": digest, "events": count}
    if args.write:
        with open(args.write, "w") as out:
            json.dump(hashes, out, indent=1)
        print(f"{len(hashes)} fights, {sum(h['events'] for h in hashes.values())} events: written to {args.write}")
    if args.compare:
        with open(args.compare) as saved_file:
            saved = json.load(saved_file)
        differ = [n for n in hashes if saved.get(n) != hashes[n]]
        if differ:
            print(f"{len(differ)} of {len(hashes)} fights differ: seeds {', '.join(differ)}")
            return 1
        print(f"all {len(hashes)} fights identical ({sum(h['events'] for h in hashes.values())} events)")
    if not args.write and not args.compare:
        json.dump(hashes, sys.stdout, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
