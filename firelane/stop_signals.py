"""SIGINT, SIGTERM and SIGHUP stop any firelane command cleanly, at any moment.

This module imports nothing but the standard library, so the entry points can
install its handler before anything else is imported. Three phases:

1. Loading (imports, the command line): nothing has started, so the first
   signal raises `StopRequested` where the program is, and the entry point
   answers with one line and the exit code.
2. Running (trio, firelane.cli.main): the handler only notes the signal;
   trio's signal receiver takes over and cancels the command, so every
   ``finally`` and context manager runs: engines stop between two appends,
   workers are stopped, and the data dir's redis-server is shut down by its
   last user (SHUTDOWN writes the AOF).
3. A second signal while stopping stops at once: the waits that may be cut
   short (workers finishing on their own, goodbyes to Redis) are cancelled
   (`cleanup_scope`); what leaves no process behind (killing workers, shutting
   down a redis-server nobody else uses) still happens.

Exit codes: 128 + the signal's number (SIGINT 130, SIGTERM 143, SIGHUP 129);
`firelane serve`, for which a stop signal is the way to stop, exits 0.
"""

from __future__ import annotations

import signal
import sys

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class StopRequested(BaseException):
    """A stop signal arrived while loading (a BaseException, so no ``except Exception`` holds it up)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class _State:
    def __init__(self) -> None:
        self.received: list[int] = []
        self.mode = "raise"  # "raise" (loading), "note" (trio's receiver takes over), "keyboard" (a sync command)
        self.hurry_scopes: set[object] = set()  # trio.CancelScope of cleanup waits a second signal cuts short
        self.announced = False  # the command said how it stopped (firelane serve's own line)


_state = _State()


def _handler(signum: int, _frame: object) -> None:
    note(signum)
    if _state.mode == "raise":
        _state.mode = "note"  # raised once: a second signal while unwinding is only noted
        raise StopRequested(signum)
    if _state.mode == "keyboard" and len(_state.received) == 1:
        raise KeyboardInterrupt  # a command outside trio (firelane sim) handles Ctrl-C itself


def install() -> None:
    """Handle the stop signals from now on (phase 1: a signal raises StopRequested)."""
    _state.__init__()  # type: ignore[misc]
    for signum in STOP_SIGNALS:
        signal.signal(signum, _handler)


def hold() -> None:
    """Phase 2: a signal is only noted, never raised (trio's receiver, once open, reads the ones noted)."""
    _state.mode = "note"


def as_keyboard_interrupt() -> None:
    """For a command that runs outside trio and handles Ctrl-C itself: every stop signal is one."""
    _state.mode = "keyboard"


def ignore() -> None:
    """The command is over: the stop signals are ignored while the process exits."""
    for signum in STOP_SIGNALS:
        signal.signal(signum, signal.SIG_IGN)


def note(signum: int) -> None:
    """Record a stop signal; the second one cancels the cleanup waits that may be cut short."""
    _state.received.append(signum)
    if len(_state.received) >= 2:
        for scope in list(_state.hurry_scopes):
            scope.cancel()  # type: ignore[attr-defined]


def received() -> list[int]:
    return list(_state.received)


def requested() -> bool:
    """Whether a stop signal has arrived."""
    return bool(_state.received)


def forced() -> bool:
    """Whether a second stop signal has arrived (stop at once)."""
    return len(_state.received) >= 2


class cleanup_scope:  # noqa: N801 - used as a context manager, like trio's own scopes
    """A shielded trio scope for cleanup that a stop must not cut short but a
    second signal may (it is cancelled then, or at once if one came already);
    ``timeout`` bounds it in any case. (A class, not contextlib: this module is
    imported before anything else, and must cost next to nothing.)"""

    def __init__(self, timeout: float | None = None) -> None:
        import trio  # here, not at the top, for the same reason

        self._scope = trio.CancelScope(shield=True)
        if timeout is not None:
            self._scope.deadline = trio.current_time() + timeout

    def __enter__(self) -> object:
        if forced():
            self._scope.cancel()
        _state.hurry_scopes.add(self._scope)
        return self._scope.__enter__()

    def __exit__(self, *exc_info: object) -> bool:
        _state.hurry_scopes.discard(self._scope)
        return bool(self._scope.__exit__(*exc_info))  # type: ignore[arg-type]


def describe() -> str:
    """The signals received, for the line a stopped command prints: "SIGINT", or
    "SIGTERM, then SIGINT: stopped at once"."""
    names = [signal.Signals(signum).name for signum in _state.received[:2]]
    if len(names) < 2:
        return names[0] if names else "no signal"
    return f"{names[0]}, then {names[1]}: stopped at once"


def exit_code(command: str | None) -> int:
    """The documented exit code after a stop signal: 0 for `firelane serve`, else 128 + the first signal's number."""
    if command == "serve":
        return 0
    return 128 + (_state.received[0] if _state.received else signal.SIGINT)


def announce(line: str) -> None:
    """Print the command's own line about how it stopped (then `answer` prints none)."""
    _state.announced = True
    _print(line)


def answer(command: str | None, *, worker: bool = False, resume: str = "") -> int:
    """After a stop signal: the command's one line on stderr (none from a worker
    of `firelane serve`, whose serve speaks, nor when the command said it
    already), and the exit code to return."""
    if command == "serve":
        if not worker and not _state.announced:
            _print("firelane serve: stopped before serving; nothing was running")
        return 0
    _print(f"firelane: interrupted ({describe()}); nothing is lost: the log keeps every event{resume}")
    return exit_code(command)


def _print(line: str) -> None:
    try:
        print(line, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass  # no stderr to tell (closed): the exit code still says it
