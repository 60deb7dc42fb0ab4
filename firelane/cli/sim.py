"""`firelane sim`: Monte-Carlo balance runs of one setup, headless and in parallel.

    firelane sim SETUP.json --runs 1000 [--workers N] [--seed TEXT] [--plot FILE.png] [--json]
    firelane sim --demo-setup SYSTEM --runs 200

Each run is a whole fight in the pure loop (`run_headless`, every combatant
played by the system's AI, no Redis), with the seed derived from ``--seed`` and
the run number, so the same command gives the same report on any number of
workers. Runs are spread over worker processes (multiprocessing's 'spawn'
context). The report, computed from each fight's events:

- win rate per side with a 95 % Wilson interval; draws by kind (round limit,
  no one left standing, command limit);
- rounds: mean, median, standard deviation, 10th/90th percentile, min, max;
- per combatant, means per fight: damage dealt and taken (``DamageDealt``
  amounts, in the system's unit: hit points, wounds...), reactions used
  (claims that were not denied), and how often it went down.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import multiprocessing
import multiprocessing.context
import os
import secrets
import signal
import statistics
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import msgspec

from firelane.engine.core import SEQUENCER, Rejected
from firelane.engine.dice import SeededDice, commit_seed
from firelane.engine.registry import UnknownSystem, demo_setup, get_system, system_names
from firelane.engine.simulate import run_headless
from firelane.events.schemas import (
    CombatantDown,
    DamageDealt,
    EncounterEnded,
    EncounterSetup,
    ReactionClaimed,
    ReactionDenied,
    StartEncounter,
)

WILSON_Z = 1.959963984540054  # two-sided 95 %


class SimError(Exception):
    """Bad input for a sim; the message is the one line shown."""


# --------------------------------------------------------------------------- one fight


class CombatantTally(msgspec.Struct, kw_only=True):
    damage_dealt: int = 0
    damage_taken: int = 0
    reactions_used: int = 0
    down: bool = False


class FightResult(msgspec.Struct, kw_only=True):
    run: int
    winner: str | None
    end_reason: str
    rounds: int
    events: int
    combatants: dict[str, CombatantTally]


def run_seed(seed_text: str, run: int) -> bytes:
    """The seed of run ``run`` of a sim seeded with ``seed_text``."""
    return hashlib.blake2b(f"{seed_text}\x00{run}".encode(), digest_size=32, person=b"firelane-sim").digest()


def tally_events(run: int, setup: EncounterSetup, events: Iterable[Any], rounds: int) -> FightResult:
    """What the report counts, from one fight's events."""
    tallies = {c.id: CombatantTally() for c in setup.combatants}
    winner, reason, count = None, "", 0
    for event in events:
        count += 1
        if isinstance(event, DamageDealt):
            if event.target in tallies:
                tallies[event.target].damage_taken += event.amount
            if event.source in tallies:
                tallies[event.source].damage_dealt += event.amount
        elif isinstance(event, ReactionClaimed) and event.combatant in tallies:
            tallies[event.combatant].reactions_used += 1
        elif isinstance(event, ReactionDenied) and event.combatant in tallies:
            tallies[event.combatant].reactions_used -= 1
        elif isinstance(event, CombatantDown) and event.combatant in tallies:
            tallies[event.combatant].down = True
        elif isinstance(event, EncounterEnded):
            winner, reason = event.winner, event.reason
    return FightResult(run=run, winner=winner, end_reason=reason, rounds=rounds, events=count, combatants=tallies)


def fight(setup: EncounterSetup, seed_text: str, run: int) -> FightResult:
    system = get_system(setup.system)
    events: list[Any] = []
    state = None
    for _command, batch, state in run_headless(system, setup, run_seed(seed_text, run), encounter=f"sim-{run}"):
        events.extend(batch)
    return tally_events(run, setup, events, state.round if state is not None else 0)


# --------------------------------------------------------------------------- the report


class SideResult(msgspec.Struct, kw_only=True):
    wins: int
    rate: float
    ci_low: float
    ci_high: float


class Spread(msgspec.Struct, kw_only=True):
    mean: float
    median: float
    stdev: float
    p10: float
    p90: float
    min: float
    max: float


class CombatantResult(msgspec.Struct, kw_only=True):
    id: str
    name: str
    side: str
    damage_dealt: float  # mean per fight
    damage_taken: float
    reactions_used: float
    down_rate: float


class SimReport(msgspec.Struct, kw_only=True):
    setup: str
    system: str
    runs: int
    seed: str
    sides: dict[str, SideResult]
    draws: dict[str, int]  # ending kind -> fights without a winner
    rounds: Spread
    combatants: list[CombatantResult]


def wilson_interval(successes: int, trials: int, z: float = WILSON_Z) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion."""
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    # The interval holds p: at p = 0 or 1 its bound is p exactly, which rounding may miss by an ulp.
    return max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half))


def _quantile(ordered: list[int], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def draw_kind(reason: str) -> str:
    if reason.startswith("round limit"):
        return "round limit"
    if reason.startswith("command limit"):
        return "command limit"
    return reason or "unknown"


def build_report(setup: EncounterSetup, seed_text: str, results: list[FightResult]) -> SimReport:
    results = sorted(results, key=lambda r: r.run)
    runs = len(results)
    sides = sorted({c.side for c in setup.combatants})
    wins = Counter(r.winner for r in results if r.winner is not None)
    side_results = {}
    for side in sides:
        low, high = wilson_interval(wins[side], runs)
        side_results[side] = SideResult(wins=wins[side], rate=wins[side] / runs, ci_low=low, ci_high=high)
    draws = dict(sorted(Counter(draw_kind(r.end_reason) for r in results if r.winner is None).items()))
    rounds = sorted(r.rounds for r in results)
    spread = Spread(mean=statistics.fmean(rounds), median=statistics.median(rounds),
                    stdev=statistics.pstdev(rounds), p10=_quantile(rounds, 0.1), p90=_quantile(rounds, 0.9),
                    min=rounds[0], max=rounds[-1])
    combatants = []
    for c in setup.combatants:
        tallies = [r.combatants[c.id] for r in results]
        combatants.append(CombatantResult(
            id=c.id, name=c.name, side=c.side,
            damage_dealt=sum(t.damage_dealt for t in tallies) / runs,
            damage_taken=sum(t.damage_taken for t in tallies) / runs,
            reactions_used=sum(t.reactions_used for t in tallies) / runs,
            down_rate=sum(t.down for t in tallies) / runs,
        ))
    return SimReport(setup=setup.name or setup.system, system=setup.system, runs=runs, seed=seed_text,
                     sides=side_results, draws=draws, rounds=spread, combatants=combatants)


def describe(report: SimReport) -> list[str]:
    lines = [f"{report.setup} ({report.system}): {report.runs} fights, seed {report.seed!r}"]
    for side, result in report.sides.items():
        lines.append(f"  {side:<16} won {result.wins:>6}  {result.rate:6.1%}  (95% CI {result.ci_low:.1%}-{result.ci_high:.1%})")
    for kind, count in report.draws.items():
        lines.append(f"  {'no winner':<16} {count:>11}  {count / report.runs:6.1%}  ({kind})")
    r = report.rounds
    lines.append(f"  rounds: mean {r.mean:.2f}, median {r.median:g}, sd {r.stdev:.2f}, "
                 f"10-90% {r.p10:g}-{r.p90:g}, range {r.min:g}-{r.max:g}")
    lines.append(f"  {'combatant':<26} {'side':<12} {'dealt':>7} {'taken':>7} {'reactions':>9} {'down':>6}   (means per fight)")
    for c in report.combatants:
        lines.append(f"  {c.name[:26]:<26} {c.side[:12]:<12} {c.damage_dealt:7.2f} {c.damage_taken:7.2f} "
                     f"{c.reactions_used:9.2f} {c.down_rate:6.1%}")
    return lines


# --------------------------------------------------------------------------- running many


_worker_setup: EncounterSetup | None = None
_worker_seed = ""


class _WorkerProcess(multiprocessing.context.SpawnProcess):
    """A pool worker deaf to Ctrl-C from its first instruction on.

    Ctrl-C is the parent's to handle: it terminates the workers, which must
    not print a traceback each. A terminal's Ctrl-C reaches the whole
    foreground group, so a worker still importing (before any initializer
    could ignore SIGINT) would print one. A signal mask, unlike a handler,
    survives fork and exec: each worker is started from a thread that blocks
    SIGINT, and keeps it blocked for life."""

    def start(self) -> None:
        held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            super().start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)


class _WorkerContext(multiprocessing.context.SpawnContext):
    Process = _WorkerProcess


@contextmanager
def _ctrl_c_held() -> Iterator[None]:
    """A Ctrl-C meanwhile is noted, then handled as usual at the end of the block.

    The pool must not be left half-started: its started workers, not yet
    terminated, would print a traceback each as the parent's exit takes their
    queues away."""
    if threading.current_thread() is not threading.main_thread():
        yield  # no KeyboardInterrupt is raised here: Python's signal handlers run in the main thread
        return
    pressed: list[int] = []
    usual = signal.signal(signal.SIGINT, lambda signum, _frame: pressed.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, usual)
    if pressed:
        if callable(usual):
            usual(signal.SIGINT, None)
        elif usual == signal.SIG_DFL:
            signal.raise_signal(signal.SIGINT)


def _init_worker(setup_json: bytes, seed_text: str) -> None:
    # Blocked since birth (see _WorkerProcess); ignored as well, should
    # anything in the worker unblock it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    global _worker_setup, _worker_seed
    _worker_setup = msgspec.json.decode(setup_json, type=EncounterSetup)
    _worker_seed = seed_text


def _worker_fight(run: int) -> FightResult:
    assert _worker_setup is not None
    return fight(_worker_setup, _worker_seed, run)


def simulate_serial(setup: EncounterSetup, runs: int, seed_text: str,
                    progress: Callable[[int], object] | None = None) -> list[FightResult]:
    """The runs one after another in this process (the reference for the parallel runner)."""
    results = []
    for run in range(runs):
        results.append(fight(setup, seed_text, run))
        if progress is not None:
            progress(1)
    return results


def simulate_parallel(setup: EncounterSetup, runs: int, seed_text: str, workers: int,
                      progress: Callable[[int], object] | None = None) -> list[FightResult]:
    """The runs spread over ``workers`` spawned processes; results in run order.

    On any exception (Ctrl-C included) the workers are terminated before it propagates."""
    # Spawned, not forked: no copy of a process holding sockets or trio state.
    context = _WorkerContext()
    # Small chunks: a fight takes tens to hundreds of ms, a task's overhead a
    # fraction of one, and the last chunks must not leave a worker idle.
    chunk = max(1, min(4, runs // (workers * 32)))
    pool = None
    try:
        with _ctrl_c_held():
            pool = context.Pool(workers, initializer=_init_worker, initargs=(msgspec.json.encode(setup), seed_text))
        results = []
        for result in pool.imap_unordered(_worker_fight, range(runs), chunksize=chunk):
            results.append(result)
            if progress is not None:
                progress(1)
        pool.close()
    except BaseException:
        if pool is not None:
            pool.terminate()
        raise
    finally:
        if pool is not None:
            pool.join()
    return sorted(results, key=lambda r: r.run)


def check_setup(setup: EncounterSetup) -> None:
    """Refuse, with the system's reason, a setup the encounter would not start with."""
    named = [c.id for c in setup.combatants if c.character]
    if named:  # a campaign's characters exist only in a store (docs/campaigns.md)
        raise SimError(f"combatant {named[0]!r} names a campaign character; a sim needs its sheet in the setup")
    system = get_system(setup.system)
    start = StartEncounter(command_id="start", actor=SEQUENCER, setup=setup, seed_commitment=commit_seed(b"\0" * 32))
    try:
        system.decide(system.initial_state(), start, SeededDice(b"\0" * 32, 0))
    except Rejected as exc:
        raise SimError(f"the setup is refused: {exc.reason}") from None
    if not setup.combatants:
        raise SimError("the setup has no combatants")


def load_setup(path: str | None, demo: str | None) -> EncounterSetup:
    if (path is None) == (demo is None):
        raise SimError("give a setup file or --demo-setup SYSTEM (one of them)")
    if demo is not None:
        return demo_setup(demo)  # type: ignore[no-any-return]
    file = Path(path)  # type: ignore[arg-type]
    try:
        raw = file.read_bytes()
    except OSError as exc:
        raise SimError(f"cannot read setup {path}: {exc.strerror or exc}") from None
    try:
        return msgspec.json.decode(raw, type=EncounterSetup)
    except msgspec.ValidationError as exc:
        raise SimError(f"setup {path} is not a valid EncounterSetup: {exc}") from None
    except msgspec.DecodeError as exc:
        raise SimError(f"setup {path} is not JSON: {exc}") from None


# --------------------------------------------------------------------------- the plot


def plot(report: SimReport, results: list[FightResult], path: str) -> None:
    """Four panels: win rates with their intervals, rounds, damage per combatant, reactions per combatant."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [c.name for c in report.combatants]
    height = max(7.0, 4.0 + 0.28 * len(names))
    figure, axes = plt.subplots(2, 2, figsize=(13, height), constrained_layout=True)
    figure.suptitle(f"{report.setup} ({report.system}) - {report.runs} fights, seed {report.seed!r}")

    ax = axes[0][0]
    labels = list(report.sides) + [f"no winner\n({kind})" for kind in report.draws]
    rates = [s.rate for s in report.sides.values()] + [n / report.runs for n in report.draws.values()]
    low = [s.rate - s.ci_low for s in report.sides.values()] + [0.0] * len(report.draws)
    high = [s.ci_high - s.rate for s in report.sides.values()] + [0.0] * len(report.draws)
    bars = ax.bar(labels, rates, yerr=[low, high], capsize=6, color=["C0", "C3", "C2", "C4", "C5"][: len(labels)])
    for bar, rate in zip(bars, rates):
        ax.annotate(f"{rate:.1%}", (bar.get_x() + bar.get_width() * 0.75, rate), xytext=(0, 3),
                    textcoords="offset points", ha="center", va="bottom")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("share of fights")
    ax.set_title("Win rate (bars: 95 % Wilson interval)")

    ax = axes[0][1]
    rounds = [r.rounds for r in results]
    ax.hist(rounds, bins=range(min(rounds), max(rounds) + 2), align="left", rwidth=0.85, color="C1")
    ax.axvline(report.rounds.mean, color="k", linestyle="--", label=f"mean {report.rounds.mean:.2f}")
    ax.set_xlabel("rounds")
    ax.set_ylabel("fights")
    ax.set_title("Rounds per fight")
    ax.legend()

    positions = range(len(names))
    ax = axes[1][0]
    ax.barh([p - 0.2 for p in positions], [c.damage_dealt for c in report.combatants], height=0.4, label="dealt")
    ax.barh([p + 0.2 for p in positions], [c.damage_taken for c in report.combatants], height=0.4, label="taken")
    ax.set_yticks(list(positions), [f"{c.name} ({c.side})" for c in report.combatants])
    ax.invert_yaxis()
    ax.set_xlabel("damage per fight (mean, the system's unit)")
    ax.set_title("Damage dealt and taken")
    ax.legend()

    ax = axes[1][1]
    ax.barh(list(positions), [c.reactions_used for c in report.combatants], color="C2")
    ax.set_yticks(list(positions), [f"{c.name} ({c.down_rate:.0%} down)" for c in report.combatants])
    ax.invert_yaxis()
    ax.set_xlabel("reactions used per fight (mean)")
    ax.set_title("Reactions used, and how often each went down")

    figure.savefig(path, dpi=110)
    plt.close(figure)


# --------------------------------------------------------------------------- the command


def add_parser(subparsers: Any, parents: list[argparse.ArgumentParser]) -> None:
    sim = subparsers.add_parser("sim", parents=parents, help="Monte-Carlo balance runs of a setup (headless, parallel)")
    sim.add_argument("setup", nargs="?", help="EncounterSetup JSON file")
    sim.add_argument("--demo-setup", metavar="SYSTEM", help=f"a system's demo setup instead: {', '.join(system_names())}")
    sim.add_argument("--runs", type=int, default=1000, help="number of fights (default 1000)")
    sim.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="worker processes (default: one per core)")
    sim.add_argument("--seed", help="any text; the same seed gives the same report (default: random, printed)")
    sim.add_argument("--plot", metavar="FILE.png", help="draw the report into a PNG")
    sim.add_argument("--json", action="store_true", help="print the report as JSON")
    sim.set_defaults(handler=None, sync_handler=cmd_sim)


def cmd_sim(args: argparse.Namespace) -> int:
    """Runs outside trio (worker processes, a blocking wait); handles its own errors and Ctrl-C."""
    try:
        if args.runs < 1:
            raise SimError(f"--runs must be at least 1, not {args.runs}")
        if args.workers < 1:
            raise SimError(f"--workers must be at least 1, not {args.workers}")
        if args.plot and not args.plot.lower().endswith(".png"):
            raise SimError(f"--plot writes a PNG: give a FILE.png, not {args.plot}")
        setup = load_setup(args.setup, args.demo_setup)
        check_setup(setup)
        seed_text = args.seed if args.seed is not None else secrets.token_hex(4)
        results = _run_with_progress(setup, args.runs, seed_text, min(args.workers, args.runs))  # no idle workers
    except (SimError, UnknownSystem) as exc:
        message = UnknownSystem.__str__(exc) if isinstance(exc, UnknownSystem) else str(exc)
        print(f"firelane: error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("firelane: sim interrupted; no report (the workers are stopped)", file=sys.stderr)
        return 130
    report = build_report(setup, seed_text, results)
    if args.json:
        sys.stdout.buffer.write(msgspec.json.encode(report) + b"\n")
    else:
        print("\n".join(describe(report)))
    if args.plot:
        try:
            plot(report, results, args.plot)
        except OSError as exc:
            print(f"firelane: error: cannot write {args.plot}: {exc.strerror or exc}", file=sys.stderr)
            return 2
        print(f"plot: {args.plot}", file=sys.stderr)
    return 0


def _run_with_progress(setup: EncounterSetup, runs: int, seed_text: str, workers: int) -> list[FightResult]:
    from tqdm import tqdm

    began = time.perf_counter()
    with tqdm(total=runs, unit="fight", file=sys.stderr, disable=None, desc="sim", leave=False) as bar:
        if workers == 1:
            results = simulate_serial(setup, runs, seed_text, bar.update)
        else:
            results = simulate_parallel(setup, runs, seed_text, workers, bar.update)
    elapsed = time.perf_counter() - began
    print(f"{runs} fights in {elapsed:.1f}s on {workers} worker{'s' if workers > 1 else ''}", file=sys.stderr)
    return results

