"""Public-key signatures: what a store signs, anyone can check with its public key.

A store has one Ed25519 key pair (RFC 8032; kept in its data directory, see
`key_file`, at `DataDir.signing_key_path`). It signs campaign exports
(`firelane.actors.campaign_io`), and is meant to sign log entries too.
Whoever holds the public key (published with what it signs) can check a
signature in any language; nobody without the private key can make one.

A key is named by its **fingerprint**: the first 16 bytes of SHA-256 of the raw
32-byte public key, as 32 lowercase hex digits in 8 groups of 4 joined by
``-`` (``3f1a-09bc-…``). 128 bits: making a key with a given fingerprint takes
about 2^128 tries. A person compares fingerprints, or names one to trust
(`parse_fingerprint` takes it with or without the dashes, in any case).

Every signed message begins with a context string of its own (e.g.
``firelane-campaign-export:2:``), so a signature made for one purpose can
never be passed off as one made for another with the same key.

The ``cryptography`` package does the arithmetic; this module only fixes the
encodings (raw keys, hex) and the fingerprint.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

PUBLIC_KEY_BYTES = 32
SIGNATURE_BYTES = 64
_FINGERPRINT_BYTES = 16
_FINGERPRINT = re.compile(r"[0-9a-f]{32}")


def fingerprint(public_key: bytes) -> str:
    """The readable name of a raw Ed25519 public key (see the module doc)."""
    digest = hashlib.sha256(public_key).hexdigest()[: 2 * _FINGERPRINT_BYTES]
    return "-".join(digest[i:i + 4] for i in range(0, len(digest), 4))


def parse_fingerprint(text: str) -> str:
    """A fingerprint as a person may type it (dashes, spaces or colons between
    the groups, any case), in its canonical form; ValueError if it is not one."""
    digits = re.sub(r"[\s:-]", "", text).lower()
    if not _FINGERPRINT.fullmatch(digits):
        raise ValueError(f"{text[:80]!r} is not a key fingerprint (32 hex digits, e.g. 3f1a-09bc-…)")
    return "-".join(digits[i:i + 4] for i in range(0, len(digits), 4))


class SigningKey:
    """A private Ed25519 key: signs, and names its public key."""

    def __init__(self, private_key: Ed25519PrivateKey) -> None:
        self._private = private_key
        self.public_key: bytes = private_key.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        self.fingerprint = fingerprint(self.public_key)

    @classmethod
    def generate(cls) -> SigningKey:
        return cls(Ed25519PrivateKey.generate())

    @classmethod
    def from_pem(cls, pem: bytes) -> SigningKey:
        """From PKCS#8 PEM (what `to_pem` writes; ``openssl pkey`` reads it); ValueError if it is not an Ed25519 key."""
        key = serialization.load_pem_private_key(pem, password=None)
        if not isinstance(key, Ed25519PrivateKey):
            raise ValueError("not an Ed25519 private key")
        return cls(key)

    def to_pem(self) -> bytes:
        return self._private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption())

    def sign(self, message: bytes) -> bytes:
        return self._private.sign(message)


def signature_valid(public_key: bytes, message: bytes, signature: bytes) -> bool:
    """Whether ``signature`` is the holder of ``public_key``'s (raw bytes) over ``message``."""
    if len(public_key) != PUBLIC_KEY_BYTES or len(signature) != SIGNATURE_BYTES:
        return False
    try:
        Ed25519PublicKey.from_public_bytes(public_key).verify(signature, message)
    except (InvalidSignature, ValueError):
        return False
    return True


class KeyFileError(ValueError):
    """A key file that cannot be read as an Ed25519 private key."""


def key_file(path: Path, *, create: bool = True) -> SigningKey | None:
    """The Ed25519 key kept at ``path`` (PEM, mode 600): it signs what the
    store exports, and its fingerprint names the store. Created on first use,
    safely when several processes start at once (the first one's key is kept).
    With ``create=False``, None when there is none yet."""
    try:
        return SigningKey.from_pem(path.read_bytes())
    except FileNotFoundError:
        if not create:
            return None
    except ValueError as exc:
        raise KeyFileError(f"{path} is damaged ({exc}); restore it from a backup") from None
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temporary = path.with_name(f".{path.stem}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(SigningKey.generate().to_pem())
        handle.flush()
        os.fsync(handle.fileno())
    try:
        # link, not rename: if another process created it meanwhile, keep theirs.
        os.link(temporary, path)
    except FileExistsError:
        pass
    finally:
        temporary.unlink(missing_ok=True)
    return SigningKey.from_pem(path.read_bytes())
