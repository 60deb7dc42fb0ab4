"""Secret seeds at rest: sealed with a key only the store holds.

A running fight's seed (and an unfinished rest's) must stay secret until it
is revealed, yet Redis keeps every value in its append-only file on disk. So
the value stored is sealed: AES-256-GCM (``cryptography``'s AESGCM) under a key
derived from the store's secret for each campaign (as `firelane.events.signing`
derives the MAC keys, with a label of its own, so no key serves two purposes),
a random 96-bit nonce per value, and the Redis key's name as associated data
(a sealed seed copied under another encounter's key does not open).

The stored value is ``sealed1:`` followed by the URL-safe base64 of nonce then
ciphertext (with its tag). The plaintext is a `SeedRecord`: the seed and
whether its dice were asked to be reproducible (so a creation retried after a
crash records the same). Also read: 64 hex digits (the seed in clear, as stores
written by firelane before sealing keep it; never reproducible) and, for a log
opened without the store's secret (tests), the record's JSON in clear.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import re

import msgspec
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

_SEALED = b"sealed1:"
_NONCE_BYTES = 12
_CLEAR_HEX = re.compile(rb"[0-9a-f]{64}")


class SealError(ValueError):
    """A stored value that does not open (damaged, moved, or sealed by another store)."""


class SeedRecord(msgspec.Struct, kw_only=True, omit_defaults=True):
    seed: str  # hex
    reproducible_dice: bool = False  # derived from a text: anyone who knows the text knows every die

    @property
    def seed_bytes(self) -> bytes:
        return bytes.fromhex(self.seed)


def at_rest_key(server_key: bytes, campaign: str) -> bytes:
    return hashlib.blake2b(f"at-rest:{campaign}".encode(), key=server_key, digest_size=32).digest()


def seal(key: bytes, where: str, plaintext: bytes) -> bytes:
    nonce = os.urandom(_NONCE_BYTES)
    return _SEALED + base64.urlsafe_b64encode(nonce + AESGCM(key).encrypt(nonce, plaintext, where.encode()))


def unseal(key: bytes, where: str, stored: bytes) -> bytes:
    if not stored.startswith(_SEALED):
        raise SealError("not a sealed value")
    try:
        raw = base64.urlsafe_b64decode(stored[len(_SEALED):])
        return AESGCM(key).decrypt(raw[:_NONCE_BYTES], raw[_NONCE_BYTES:], where.encode())
    except (binascii.Error, InvalidTag, ValueError):
        raise SealError("does not open with this store's key (damaged, or copied from elsewhere)") from None


def seal_seed(server_key: bytes | None, campaign: str, where: str, seed: bytes, *,
              reproducible_dice: bool = False) -> bytes:
    """The value to store at Redis key ``where`` for ``seed`` (clear JSON only without a server key)."""
    record = msgspec.json.encode(SeedRecord(seed=seed.hex(), reproducible_dice=reproducible_dice))
    if server_key is None:
        return record
    return seal(at_rest_key(server_key, campaign), where, record)


def open_seed(server_key: bytes | None, campaign: str, where: str, stored: bytes) -> SeedRecord:
    """What `seal_seed` stored at ``where`` (or an older store's seed in clear hex); SealError if it does not read."""
    if _CLEAR_HEX.fullmatch(stored):
        return SeedRecord(seed=stored.decode())
    if stored.startswith(_SEALED):
        if server_key is None:
            raise SealError("is sealed, and this log was opened without the store's secret")
        stored = unseal(at_rest_key(server_key, campaign), where, stored)
    try:
        record = msgspec.json.decode(stored, type=SeedRecord)
        record.seed_bytes  # noqa: B018 - checks the hex
    except (msgspec.DecodeError, msgspec.ValidationError, ValueError):
        raise SealError("is not a seed record") from None
    return record
