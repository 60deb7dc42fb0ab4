"""Dice derived from an encounter seed and each die's position.

A die's face is a pure function of (seed, at, k, sides): ``at`` is the log
version the decision was taken at and ``k`` the die's index within that
decision. The faces are written into the events, so replay never rolls, and
once the seed is revealed anyone can recompute every face (``verify_die``).

Faces are unbiased: a 64-bit hash value is rejected and rehashed when it falls
in the short last stretch that does not divide evenly by ``sides``.

The seed is the dice's only secret: whoever knows it knows every die to come.
So it is 32 random bytes (`new_seed`), and the commitment published at the
start cannot be inverted by trying candidates. A seed derived from a text a
person chose (``--seed``) is guessable: it is allowed only when the creator asks
for reproducible dice, which the log records and every view shows.

Tests inject `FixedDice` with the faces they want.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
import secrets
from collections.abc import Iterable

from firelane.events.schemas import Die

_SPAN = 1 << 64
MIN_SEED_BYTES = 16  # 128 bits: what a fight's dice depend on at the least


def derive_face(seed: bytes, at: int, k: int, sides: int) -> int:
    if sides < 1:
        raise ValueError(f"a die needs at least one side, not {sides}")
    limit = _SPAN - (_SPAN % sides)
    attempt = 0
    while True:
        message = f"{at}:{k}:{attempt}".encode()
        value = int.from_bytes(hashlib.blake2b(message, key=seed, digest_size=8).digest(), "big")
        if value < limit:
            return value % sides + 1
        attempt += 1


MAX_CLIENT_SEED_CHARS = 64
CLIENT_SEEDS_CONTEXT = b"firelane-client-seeds:1"


def _length_prefixed(value: bytes) -> bytes:
    return len(value).to_bytes(4, "big") + value


def dice_key(seed: bytes, client_seeds: Iterable[tuple[str, str]] = ()) -> bytes:
    """The key every die is derived with (`derive_face`): the server's seed
    itself while no player seat has added a client seed, so a fight without
    contributions rolls exactly as before; else the 32-byte keyed BLAKE2b,
    under the server's seed, of the context and every contribution so far in
    log order, each seat and client seed as a 4-byte big-endian length and
    its UTF-8 bytes (docs/fairness.md). Nobody can know the dice after a
    contribution without both the seed, secret until the end, and the
    contribution, made after the seed's commitment."""
    contributions = list(client_seeds)
    if not contributions:
        return seed
    message = CLIENT_SEEDS_CONTEXT + b"".join(
        _length_prefixed(seat.encode()) + _length_prefixed(text.encode()) for seat, text in contributions)
    return hashlib.blake2b(message, key=seed, digest_size=32).digest()


def new_seed() -> bytes:
    """A secret seed: 256 random bits, from the operating system's CSPRNG."""
    return secrets.token_bytes(32)


def check_seed_size(seed: bytes) -> None:
    """ValueError for a seed shorter than MIN_SEED_BYTES (its size, not its randomness, is all that can be checked)."""
    if len(seed) < MIN_SEED_BYTES:
        raise ValueError(f"a seed needs at least {MIN_SEED_BYTES * 8} bits (got {len(seed) * 8})")


def commit_seed(seed: bytes) -> str:
    """The public commitment published when an encounter starts."""
    return hashlib.blake2b(seed, digest_size=32, person=b"firelane-seed").hexdigest()


def verify_die(seed: bytes, die: Die) -> bool:
    return die.at >= 0 and derive_face(seed, die.at, die.k, die.sides) == die.face


class DiceExhausted(RuntimeError):
    pass


class Dice(ABC):
    """The dice a decision rolls with. Each call returns a `Die` with its position."""

    @abstractmethod
    def roll(self, sides: int) -> Die: ...

    def roll_many(self, count: int, sides: int) -> list[Die]:
        return [self.roll(sides) for _ in range(count)]


class SeededDice(Dice):
    def __init__(self, seed: bytes, at: int) -> None:
        self._seed = seed
        self._at = at
        self._k = 0

    def roll(self, sides: int) -> Die:
        k = self._k
        self._k += 1
        return Die(sides=sides, face=derive_face(self._seed, self._at, k, sides), at=self._at, k=k)


class FixedDice(Dice):
    """Dice that show the given faces in order; a test fixes exactly what is rolled.

    Raises if a face does not fit the die asked for, or if more dice are rolled
    than were supplied, so a test cannot silently roll something it did not fix.
    """

    def __init__(self, faces: Iterable[int]) -> None:
        self._faces = list(faces)
        self._next = 0

    def roll(self, sides: int) -> Die:
        if self._next >= len(self._faces):
            raise DiceExhausted(f"rolled die #{self._next + 1} (d{sides}) but only {len(self._faces)} faces were fixed")
        face = self._faces[self._next]
        if not 1 <= face <= sides:
            raise ValueError(f"fixed face {face} does not fit a d{sides} (die #{self._next + 1})")
        k = self._next
        self._next += 1
        return Die(sides=sides, face=face, at=-1, k=k)

    @property
    def remaining(self) -> int:
        return len(self._faces) - self._next
