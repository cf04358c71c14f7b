"""Bearer tokens: random, shown once, stored as their SHA-256 only (a leaked database reveals no token)."""

from __future__ import annotations

import hashlib
import secrets

#: every token starts with this, so a token pasted in the wrong place is recognisable (and scanners can find it)
PREFIX = "hpt_"


def new_token() -> str:
    """A fresh token: 256 random bits, URL-safe."""
    return PREFIX + secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    """What the database keeps of a token."""
    return hashlib.sha256(token.strip().encode("utf-8")).hexdigest()


def bearer(header: str | None) -> str | None:
    """The token of an `Authorization: Bearer TOKEN` header, or None."""
    if not header:
        return None
    scheme, _, value = header.strip().partition(" ")
    return value.strip() or None if scheme.lower() == "bearer" else None
