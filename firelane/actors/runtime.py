"""Running an encounter live: the sequencer, with the engine's own players, under supervision.

The combatants the engine plays (AI, scripted) are played inside the
sequencer, on its one folded state (see Sequencer): nothing is decoded, folded
or sent through Redis twice for them. Combatants played from outside (a
human's frontend, a bot, another process running a `CombatantActor`) answer
through their seats' inboxes.

Supervision: a task that fails is logged and restarted from the log (the
sequencer refolds it) with a short backoff, up to ``max_restarts`` times; the
encounter stops only when it has ended or a task keeps failing. Restarting is
safe because appends are idempotent and players recompute the same commands.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

import trio

from firelane.actors.lease import EncounterBusy
from firelane.actors.policies import AIPolicy, HumanPolicy, Policy
from firelane.actors.sequencer import Sequencer, load_seed
from firelane.engine.core import BaseRuleSystem
from firelane.engine.state import EncounterState
from firelane.events.log import EventLog, LogTampered
from firelane.logs import get_logger

log = get_logger("firelane.runtime")


class TaskKeptFailing(RuntimeError):
    pass


async def supervise(
    name: str,
    make_task: Callable[[], Awaitable[object]],
    *,
    max_restarts: int = 5,
    backoff: float = 0.05,
) -> object:
    failures = 0
    while True:
        try:
            return await make_task()
        except (EncounterBusy, LogTampered):
            raise  # another engine runs this encounter, or its log is not the engine's any more: retrying would not help
        except Exception as exc:
            failures += 1
            cause: BaseException = exc
            while isinstance(cause, BaseExceptionGroup) and len(cause.exceptions) == 1:
                cause = cause.exceptions[0]  # the error itself, not trio's wrapping of it
            log.warning("task failed", task=name, failures=failures, error=repr(cause))
            if failures > max_restarts:
                raise TaskKeptFailing(f"{name} failed {failures} times; last error: {cause!r}") from exc
            await trio.sleep(backoff * failures)


def default_policies(system: BaseRuleSystem, policy_names: Mapping[str, str]) -> dict[str, Policy]:
    """Policies from the names a setup gives its combatants ("ai" or "human")."""
    policies: dict[str, Policy] = {}
    for combatant, kind in policy_names.items():
        if kind == "ai":
            policies[combatant] = AIPolicy(system)
        elif kind == "human":
            policies[combatant] = HumanPolicy()
        else:
            raise ValueError(f"combatant {combatant!r} has unknown policy {kind!r} (ai, human)")
    return policies


async def run_encounter(
    event_log: EventLog,
    encounter: str,
    system: BaseRuleSystem,
    policies: Mapping[str, Policy],
    *,
    observers: list[Callable[[], Awaitable[object]]] = (),  # type: ignore[assignment]
    max_restarts: int = 5,
    lease_wait_s: float = 6.0,
    pace: float = 0.0,
    on_settled: Callable[[], None] | None = None,
) -> EncounterState:
    """Run the sequencer and the actors until the encounter ends; return its final state."""
    seed = await load_seed(event_log, encounter)
    players = {combatant: policy for combatant, policy in policies.items() if not isinstance(policy, HumanPolicy)}
    sequencer = Sequencer(event_log, encounter, system, seed, players=players, lease_wait_s=lease_wait_s, pace=pace,
                          on_settled=on_settled)
    result: list[EncounterState] = []
    async with trio.open_nursery() as nursery:
        for observer in observers:
            nursery.start_soon(observer)
        result.append(await supervise("sequencer", sequencer.run, max_restarts=max_restarts))  # type: ignore[arg-type]
        # Observers stop on their own once they read the end; give them a
        # moment to print the last events, then stop them.
        nursery.cancel_scope.deadline = trio.current_time() + 10
    return result[0]
