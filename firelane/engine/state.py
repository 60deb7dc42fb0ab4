"""Encounter state shared by every rule system.

State is a tree of mutable msgspec Structs: cheap to copy (`copy_state`
round-trips through msgpack), comparable with ``==`` (the replay property test
relies on it) and encodable for projection checkpoints. A rule system extends
`Combatant` and `EncounterState` with its own fields.
"""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec

from firelane.events.schemas import EligibleReactor, OrderedClaim, SeatSetup, Terrain


class Combatant(msgspec.Struct, kw_only=True):
    id: str
    name: str
    side: str
    position: tuple[int, int] | None = None
    initiative: int = 0
    out_of_fight: bool = False
    reaction_used: bool = False
    conditions: dict[str, str] = {}  # condition -> expiry ("" = until removed)
    policy: str = "ai"


class Claim(msgspec.Struct, kw_only=True):
    combatant: str
    reaction: str
    options: dict[str, Any] = {}


class ReactionWindow(msgspec.Struct, kw_only=True):
    window: int
    trigger: str
    actor: str
    reactors: list[EligibleReactor]
    deadline_ms: int
    continuation: dict[str, Any] = {}
    claims: list[Claim] = []
    passed: list[str] = []
    rule: str = ""
    order: list[OrderedClaim] = []  # the arbiter's order, once recorded
    resume_from: int = 0  # next claim to resolve when a nested window suspended this one

    def eligible(self, combatant: str) -> EligibleReactor | None:
        for reactor in self.reactors:
            if reactor.combatant == combatant:
                return reactor
        return None

    def answered(self, combatant: str) -> bool:
        return combatant in self.passed or any(c.combatant == combatant for c in self.claims)

    def unanswered(self) -> list[str]:
        # One pass (not `answered` per reactor), so a window of N reactors costs O(N) here.
        answered = set(self.passed)
        answered.update(c.combatant for c in self.claims)
        return [r.combatant for r in self.reactors if r.combatant not in answered]


class EncounterState(msgspec.Struct, kw_only=True):
    encounter: str = ""
    system: str = ""
    started: bool = False
    version: int = 0  # events applied so far == log version this state reflects
    # Position on the live branch: equal to ``version`` until a rewind, then the
    # version rewound to plus what came after. Dice are drawn at this position.
    branch_version: int = 0
    settings: dict[str, Any] = {}
    terrain: Terrain = Terrain()
    seats: list[SeatSetup] = []
    combatants: dict[str, Combatant] = {}
    round: int = 0
    turn_order: list[str] = []
    active: str | None = None
    acted_this_round: list[str] = []
    window: ReactionWindow | None = None
    suspended_windows: list[ReactionWindow] = []  # outer windows waiting on a nested one
    windows_opened: int = 0
    ended: bool = False
    winner: str | None = None
    end_reason: str = ""
    seed_commitment: str = ""
    reproducible_dice: bool = False  # the dice come from a seed text (see EncounterStarted)
    seed_revealed: str = ""
    # The player seats' contributions to the dice, in log order: (seat, client seed).
    # Every die is drawn with dice.dice_key(seed, client_seeds); a rewind restores the list as it was.
    client_seeds: list[tuple[str, str]] = []
    rejected_commands: int = 0
    turn_deadline_ms: int | None = None  # the active human's turn timer, when one runs
    turn_started_at: int = 0  # the version of the running turn's TurnStarted
    gm_rulings: list[str] = []  # ids of the GM calls settled so far
    ai_plays: str | None = None  # a timed-out human whose turn the AI plays (setting on_turn_timeout "ai")
    # A deadline ran out for a seat that chose to have the GM asked
    # (engine/timeouts.py): "turn", or "window-<n>"; "" when none waits.
    time_up: str = ""
    # The log versions the GM's rewinds undid: (first, last, the rewind's version),
    # sorted (engine/branches.py). A rewind keeps them: they are the log's, not the branch's.
    undone: list[tuple[int, int, int]] = []

    def combatant(self, combatant_id: str) -> Combatant:
        return self.combatants[combatant_id]

    def standing_sides(self) -> set[str]:
        return {c.side for c in self.combatants.values() if not c.out_of_fight}


StateT = TypeVar("StateT", bound=EncounterState)


def copy_state(state: StateT) -> StateT:
    return msgspec.msgpack.decode(msgspec.msgpack.encode(state), type=type(state))
