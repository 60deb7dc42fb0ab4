"""Running an encounter live: the sequencer and one actor per combatant under
supervision, on a trio nursery.

Supervision: a task that fails is logged and restarted from the log (the
sequencer refolds it; an actor refollows from the start) with a short backoff,
up to ``max_restarts`` times; the encounter stops only when it has ended or a
task keeps failing. Restarting is safe because appends are idempotent and
actors recompute the same commands.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from functools import partial

import trio

from firelane.actors.combatant import CombatantActor
from firelane.actors.lease import EncounterBusy
from firelane.actors.policies import AIPolicy, HumanPolicy, Policy
from firelane.actors.sequencer import Sequencer, load_seed
from firelane.actors.tap import LogTap
from firelane.engine.core import BaseRuleSystem
from firelane.engine.state import EncounterState
from firelane.events.log import EventLog
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
        except EncounterBusy:
            raise  # another engine runs this encounter: retrying would not help
        except Exception as exc:
            failures += 1
            log.warning("task failed", task=name, failures=failures, error=repr(exc))
            if failures > max_restarts:
                raise TaskKeptFailing(f"{name} failed {failures} times; last error: {exc!r}") from exc
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
) -> EncounterState:
    """Run the sequencer and the actors until the encounter ends; return its final state."""
    seed = await load_seed(event_log, encounter)
    sequencer = Sequencer(event_log, encounter, system, seed)
    result: list[EncounterState] = []

    async def run_sequencer() -> None:
        result.append(await supervise("sequencer", sequencer.run, max_restarts=max_restarts))  # type: ignore[arg-type]

    tap = LogTap(event_log, encounter)
    async with trio.open_nursery() as outer:
        # The tap follows forever; it stops once the actors and observers are done.
        outer.start_soon(partial(supervise, "tap", tap.run, max_restarts=max_restarts))
        async with trio.open_nursery() as nursery:
            for combatant, policy in policies.items():
                if isinstance(policy, HumanPolicy):
                    continue  # a frontend answers for this combatant

                def make_actor(combatant: str = combatant, policy: Policy = policy) -> Awaitable[object]:
                    return CombatantActor(event_log, encounter, combatant, system, policy, tap=tap).run()

                nursery.start_soon(partial(supervise, f"actor:{combatant}", make_actor, max_restarts=max_restarts))
            for observer in observers:
                nursery.start_soon(observer)
            await run_sequencer()
            # Actors and observers stop on their own once they read the end;
            # give them a moment to print the last events, then stop the rest.
            nursery.cancel_scope.deadline = trio.current_time() + 10
        outer.cancel_scope.cancel()
    return result[0]
