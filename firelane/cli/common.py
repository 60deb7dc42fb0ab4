"""What the `firelane` commands share: seeds, argument types, the store they open."""

from __future__ import annotations

import argparse
import hashlib
import sys

from firelane.actors.store import CliError, open_store


def seed_from(text: str | None) -> bytes:
    """A 32-byte seed from any text (an int, a word, hex); random when not given.

    A seed from a text is as guessable as the text (a player found ``7341`` in
    7,342 tries from the published commitment): only for reproducible dice."""
    if text is None:
        from firelane.engine.dice import new_seed

        return new_seed()
    return hashlib.blake2b(text.encode(), digest_size=32, person=b"firelane-cli").digest()


def chosen_seed(text: str | None, reproducible: bool, *, implied: bool = False) -> tuple[bytes, bool]:
    """The seed of a new fight or rest and whether its dice are reproducible:
    secret random dice, unless the creator gave a seed text and asked for
    reproducible dice (``implied``: `firelane demo`, whose --seed asks for it)."""
    if text is None:
        if reproducible:
            raise CliError("--reproducible-dice needs --seed TEXT (without a seed text the dice are secret and random)")
        return seed_from(None), False
    if not (reproducible or implied):
        raise CliError("--seed TEXT makes dice anyone who knows or guesses the text can predict: add --reproducible-dice "
                       "to allow it (the log and every view of it then say so), or leave --seed out for secret random dice")
    return seed_from(text), True


def seconds(text: str) -> float:
    """An argparse type: a duration in seconds, 0 or more."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be 0 seconds or more, not {text}")
    return value


def allowed_host(text: str) -> str:
    """An argparse type: a host name or IP address (no scheme, port or path)."""
    from firelane.web.guard import host_name

    try:
        return host_name(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def tcp_port(text: str) -> int:
    """An argparse type: a TCP port number, 0-65535."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is from 0 to 65535, not {value}")
    return value


def stderr_line(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def cli_store(args: argparse.Namespace, *, announce: bool = True):
    return open_store(redis_url=args.redis, data_dir=args.data_dir, announce=stderr_line if announce else None)
