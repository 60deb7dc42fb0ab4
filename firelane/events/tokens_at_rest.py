"""Secret tokens at rest: kept as a digest for checks, sealed for printing.

A seat's token and a campaign's GM token are checked on every request and
printed only when someone asks for a join link (`firelane seats`, `firelane
campaign token`). Redis keeps every value it is given in its append-only file
on disk, so what is stored is never the token itself:

- its SHA-256, which is all a check needs (the web API compares digests, and a
  seat's Redis ACL user takes it as ``#<sha256>``, the form Redis keeps anyway);
  a token is 18 or 24 random bytes, so the digest cannot be searched back;
- the token sealed as the seeds are (firelane.events.sealing: AES-256-GCM, a
  random nonce) under a key derived from the store's secret (``secrets.json``)
  for each campaign, with a label of its own (no key serves two purposes), and
  the place it is kept (Redis key and seat) as associated data, so a sealed
  token copied to another seat does not open there.

The stored value is ``t1:<sha256 hex>:`` followed by the sealed token (``sealed1:...``).
A log opened without the store's secret (tests) keeps the digest alone: its
tokens can be checked, not printed. A value without the ``t1:`` prefix is a
token in clear, as stores written by an older firelane keep them: it still
works, and the callers seal it in place (`StoredToken.legacy`).
"""

from __future__ import annotations

import hashlib
import hmac
from typing import NamedTuple

from firelane.events.sealing import SealError, seal, unseal

_PREFIX = b"t1:"


def token_digest(token: str) -> str:
    """The SHA-256 of a token, in hex: what is kept for checking it (and what Redis ACLs take after ``#``)."""
    return hashlib.sha256(token.encode()).hexdigest()


def _tokens_key(server_key: bytes, campaign: str) -> bytes:
    return hashlib.blake2b(f"tokens-at-rest:{campaign}".encode(), key=server_key, digest_size=32).digest()


class StoredToken(NamedTuple):
    """What a stored value gives: the digest always; the token when it opens here."""

    digest: str
    token: str | None
    legacy: bool = False  # kept in clear by an older firelane: seal it in place

    def matches(self, token: str) -> bool:
        return hmac.compare_digest(self.digest.encode(), token_digest(token).encode())


def seal_token(server_key: bytes | None, campaign: str, where: str, token: str) -> bytes:
    """The value to keep for ``token`` at ``where`` (a Redis key, and the seat's id for a seat)."""
    head = _PREFIX + token_digest(token).encode() + b":"
    if server_key is None:
        return head
    return head + seal(_tokens_key(server_key, campaign), where, token.encode())


def open_token(server_key: bytes | None, campaign: str, where: str, stored: bytes) -> StoredToken:
    """Read a value `seal_token` kept at ``where`` (or an older store's token in clear).
    A value that does not open here (another store's key, moved, damaged)
    still gives its digest: checks go on working, only printing cannot."""
    if not stored.startswith(_PREFIX):
        token = stored.decode(errors="replace")
        return StoredToken(digest=token_digest(token), token=token, legacy=True)
    digest, _, sealed = stored[len(_PREFIX):].partition(b":")
    if server_key is None or not sealed:
        return StoredToken(digest=digest.decode(), token=None)
    try:
        token = unseal(_tokens_key(server_key, campaign), where, sealed)
    except SealError:
        return StoredToken(digest=digest.decode(), token=None)
    return StoredToken(digest=digest.decode(), token=token.decode())
