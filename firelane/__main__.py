"""The `firelane` command's entry point (the console script and ``python -m firelane``).

Importing the CLI (trio, msgspec, starlette, every rule system...) takes a
noticeable part of a second, and a Ctrl-C pressed meanwhile would otherwise
print a KeyboardInterrupt traceback from deep inside the import. This module
imports nothing heavy itself, so it can answer such a Ctrl-C as the CLI answers
one later: one line and exit 130, or for `firelane serve` its "stopped" and 0.
"""

from __future__ import annotations

import sys


def _interrupted_while_loading(argv: list[str]) -> int:
    # Nothing has started yet (no Redis, no encounter, no worker), so there is
    # nothing to stop; only the words and the exit code must be the CLI's own.
    command = argv[0] if argv else None
    if command == "serve":
        if "--engine-only" not in argv:  # a worker says nothing: the serve that started it speaks
            print("firelane serve: stopped", file=sys.stderr)
        return 0
    print("firelane: interrupted; nothing is lost: the log keeps every event", file=sys.stderr)
    return 130


def main(argv: list[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else argv
    try:
        from firelane.frontends.cli import main as cli_main
    except KeyboardInterrupt:
        return _interrupted_while_loading(arguments)
    return cli_main(arguments)


if __name__ == "__main__":
    sys.exit(main())
