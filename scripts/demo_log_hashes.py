"""The hash of each system's demo fight's log, seed by seed.

A change that must not change the rules' outcomes (moving a rule system's
modules, how the engine copies its state) is checked by running this before
and after it:

    .venv/bin/python scripts/demo_log_hashes.py --seeds 50 --write /tmp/before.json
    (make the change)
    .venv/bin/python scripts/demo_log_hashes.py --seeds 50 --compare /tmp/before.json

Each hash covers every event of the pure loop's fight as the log holds it
(type, schema, encoded body), so two runs agree only if every event is
byte-identical. Without ``--system`` every registered system is run.
``--variant rond6-defend`` plays RonD6's demo with every combatant a 7D
dodger and every other one holding its ground (Wait, R6-08): fights full of
Active Defense claims, with and without a declaration, which the demo itself
rarely has.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys

import msgspec

from firelane.engine.registry import demo_setup, get_system, system_names
from firelane.engine.simulate import run_headless
from firelane.events import codec
from firelane.events.schemas import EncounterSetup


def seed_of(system: str, n: int) -> bytes:
    return f"{system}-log-seed-{n}".encode().ljust(32, b".")


def rond6_defend(setup: EncounterSetup) -> EncounterSetup:
    """RonD6's demo with a 7D dodge for everyone and every other combatant holding (tactic "hold")."""
    combatants = []
    for index, member in enumerate(setup.combatants):
        sheet = {**member.sheet, "skills": {**member.sheet.get("skills", {}), "dodge": "7D"}}
        if index % 2 == 0:
            sheet["tactic"] = "hold"
        combatants.append(msgspec.structs.replace(member, sheet=sheet))
    return msgspec.structs.replace(setup, combatants=combatants)


VARIANTS = {"demo": lambda setup: setup, "rond6-defend": rond6_defend}


def log_hash(system: str, seed: bytes, variant: str = "demo") -> tuple[str, int]:
    """(sha256 of the demo fight's encoded events, number of events)."""
    digest = hashlib.sha256()
    count = 0
    for _command, events, _state in run_headless(get_system(system), VARIANTS[variant](demo_setup(system)), seed):
        for event in events:
            entry = codec.encode_event(event)
            digest.update(f"{entry.type}/{entry.schema}/{len(entry.data)}:".encode())
            digest.update(entry.data)
            count += 1
    return digest.hexdigest(), count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=50)
    parser.add_argument("--system", action="append", help="a system's name (repeatable; default: all)")
    parser.add_argument("--variant", choices=sorted(VARIANTS), default="demo", help="the demo as it is, or a variant")
    parser.add_argument("--write", help="save the hashes to this JSON file")
    parser.add_argument("--compare", help="compare with the hashes saved in this JSON file")
    args = parser.parse_args()
    hashes: dict[str, dict[str, dict[str, object]]] = {}
    for system in args.system or system_names():
        hashes[system] = {}
        for n in range(args.seeds):
            digest, count = log_hash(system, seed_of(system, n), args.variant)
            hashes[system][str(n)] = {"sha256": digest, "events": count}
        print(f"{system}: {args.seeds} fights, {sum(h['events'] for h in hashes[system].values())} events",
              file=sys.stderr)
    if args.write:
        with open(args.write, "w") as out:
            json.dump(hashes, out, indent=1)
        print(f"written to {args.write}")
    if args.compare:
        with open(args.compare) as saved_file:
            saved = json.load(saved_file)
        differing = [f"{system} seed {n}" for system, runs in hashes.items() for n, run in runs.items()
                     if saved.get(system, {}).get(n) != run]
        if differing:
            print(f"{len(differing)} fights differ: {', '.join(differing[:20])}")
            return 1
        print(f"all {sum(len(runs) for runs in hashes.values())} fights identical to {args.compare}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
