"""Limits on what the engine reads from outside, and a cheap nesting check.

Everything a client sends is hostile until checked: a command is bounded in
size and nesting before it is parsed (msgspec's parser recurses, so 100,000
levels of ``[`` would exhaust the stack), and nothing that goes back into the
log echoes unbounded input.
"""

from __future__ import annotations

import re

MAX_COMMAND_BYTES = 64 * 1024
MAX_COMMAND_DEPTH = 32
MAX_SETUP_BYTES = 1024 * 1024
MAX_SETUP_DEPTH = 64
MAX_REASON_CHARS = 400
MAX_ECHOED_ID_CHARS = 64
# Entries a seat may have in its inbox: the commands the engine has not read,
# and its window answers held until their window closes (at most one per
# combatant it controls). A submit past it is refused, so nobody can grow an
# inbox the engine is not reading (it is down, or slow) without end. The
# engine takes what it has read out of the inbox after each read (refused or
# not), so a well-behaved client never comes near it; past it over Redis
# (XADD has no limit), the engine reads only a seat's newest this many.
MAX_PENDING_COMMANDS = 256

# A JSON string (skipped whole, so brackets inside strings do not count) or a bracket.
_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def json_too_deep(raw: bytes, limit: int) -> bool:
    """Whether the JSON text nests arrays/objects deeper than ``limit``
    (a scan, not a parse: it never recurses)."""
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    depth = 0
    for match in _TOKENS.finditer(raw):
        token = match.group()
        if token in (b"[", b"{"):
            depth += 1
            if depth > limit:
                return True
        elif token in (b"]", b"}"):
            depth -= 1
    return False


def bounded(text: str, limit: int = MAX_REASON_CHARS) -> str:
    """``text`` cut to ``limit`` characters, saying so."""
    return text if len(text) <= limit else text[: limit - 12] + " …(cut)"
