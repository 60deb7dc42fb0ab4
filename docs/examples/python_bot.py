#!/usr/bin/env python3
"""A minimal bot that plays one seat over HTTP, written from the README's
"Plugging in a frontend" and "Protocol" sections alone (Python's standard
library only: no firelane import, no packages).

    python python_bot.py --api http://127.0.0.1:8740 --campaign default --encounter night-raid --token TOKEN

It reads its seat's options (`GET …/options`), answers each window once (its
first reaction's first choice, else the pass), and on its combatant's turn
attacks once with the best chance to hit (else moves once), then ends the
turn, until the fight has ended. It prints one JSON line at the end:
{"ok", "seat", "commands", "rejected", "windows", "winner"}.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any


class Seat:
    def __init__(self, api: str, campaign: str, encounter: str, token: str) -> None:
        self.base = (f"{api.rstrip('/')}/api/campaigns/{urllib.parse.quote(campaign)}"
                     f"/encounters/{urllib.parse.quote(encounter)}")
        self.headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        self.ids = itertools.count(1)
        self.sent = 0
        self.rejected: list[str] = []

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, headers=self.headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=90) as answer:
                return answer.status, json.load(answer)
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"{}")

    def send(self, option_command: dict, wait: bool) -> None:
        """An option's `command` as it is, with a command id of ours."""
        command = {**option_command, "command_id": f"bot-{next(self.ids)}"}
        self.sent += 1
        status, answer = self.call("POST", "/commands" + ("?wait=30" if wait else ""), command)
        if status >= 400:
            self.rejected.append(answer.get("error", str(status)))
        elif answer.get("rejected"):
            self.rejected.extend(e["data"].get("reason", "") for e in answer.get("events", [])
                                 if e["type"] == "CommandRejected")


def play(seat: Seat, timeout: float) -> dict:
    deadline = time.monotonic() + timeout
    answered: set[tuple[str, int]] = set()  # (combatant, window): each window is answered once
    acted: dict[str, int] = {}  # combatant -> actions taken this turn
    while time.monotonic() < deadline:
        status, options = seat.call("GET", "/options")
        if status != 200:
            time.sleep(0.2)
            continue
        if options["waiting"]["kind"] == "ended":
            break
        did = False
        for mine in options.get("combatants", []):
            name = mine["combatant"]
            window = mine.get("window")
            if window and name in window.get("awaited", []) and (name, window["window"]) not in answered:
                answered.add((name, window["window"]))
                choices = [c for r in window.get("reactions", []) for c in r.get("choices", [])]
                seat.send(choices[0]["command"] if choices else window["pass_command"], wait=False)
                did = True
            elif mine.get("its_turn"):
                done = acted.get(name, 0)
                attacks = sorted(mine.get("attacks", []), key=lambda a: -a.get("hit_chance", 0))
                if done == 0 and attacks:
                    seat.send(attacks[0]["command"], wait=True)
                elif done == 0 and mine.get("moves"):
                    seat.send(max(mine["moves"], key=lambda m: m.get("cost", 0))["command"], wait=True)
                elif mine.get("end_turn"):
                    end = mine["end_turn"]
                    seat.send(end.get("command", end), wait=True)
                    done = -1
                acted[name] = done + 1
                did = True
            else:
                acted.pop(name, None)
        if not did:
            time.sleep(0.1)
    status, events = seat.call("GET", "/events")
    ended = [e for e in events.get("events", []) if e["type"] == "EncounterEnded"]
    return {"ok": bool(ended), "seat": options.get("seat"), "commands": seat.sent, "rejected": seat.rejected,
            "windows": len(answered), "winner": ended[0]["data"].get("winner") if ended else None}


def main() -> int:
    parser = argparse.ArgumentParser(description="Play one seat of a firelane encounter over HTTP.")
    parser.add_argument("--api", default="http://127.0.0.1:8740")
    parser.add_argument("--campaign", default="default")
    parser.add_argument("--encounter", required=True)
    parser.add_argument("--token", required=True, help="the seat's token (firelane seats ENCOUNTER --json)")
    parser.add_argument("--timeout", type=float, default=120, help="give up after this many seconds")
    args = parser.parse_args()
    summary = play(Seat(args.api, args.campaign, args.encounter, args.token), args.timeout)
    print(json.dumps(summary))
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
