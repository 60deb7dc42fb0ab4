"""The `firelane` command's entry point (the console script and ``python -m firelane``).

Importing the CLI (trio, msgspec, starlette, every rule system...) takes a
noticeable part of a second. A stop signal (SIGINT, SIGTERM, SIGHUP) meanwhile
would otherwise print a traceback from deep inside an import, or kill the
process without a word. So this module imports nothing heavy before it has
installed the handler of firelane.stop_signals (standard library
only): a signal while loading is answered as the CLI answers one later, with
one line and the documented exit code (nothing has started yet, so there is
nothing to stop).
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else argv
    command = arguments[0] if arguments else None
    try:
        from firelane import stop_signals

        stop_signals.install()
    except KeyboardInterrupt:  # Ctrl-C in the few milliseconds before the handler is in place
        if command != "serve":
            print("firelane: interrupted (SIGINT); nothing is lost: the log keeps every event", file=sys.stderr)
            return 130
        if "--engine-only" not in arguments:
            print("firelane serve: stopped before serving; nothing was running", file=sys.stderr)
        return 0
    try:
        from firelane.cli.main import main as cli_main

        code = cli_main(arguments)
    except stop_signals.StopRequested:
        code = stop_signals.answer(command, worker="--engine-only" in arguments)
    # Done (its line said, if it was stopped): from here on only the interpreter
    # winds down, which restores the default handlers (a signal now would kill
    # the process and lose its exit code). Nothing is left to stop: ignore them.
    stop_signals.ignore()
    return code


if __name__ == "__main__":
    sys.exit(main())
