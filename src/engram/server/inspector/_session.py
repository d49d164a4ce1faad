"""Inspector sessions: the API key sealed in an encrypted cookie, re-verified per request.

A session cookie holds the signed-in credential, the user a tenant-level key views and a
CSRF token, sealed with AES-GCM under a key derived from the server secret: the browser
holds nothing it can read or alter. Every request opens it and authenticates the
credential again with the server's :class:`~engram.server.auth.Authenticator`, so a
revoked or expired key ends its sessions at once. State-changing requests must carry
the session's CSRF token (a form field, or a header from htmx).
"""

from __future__ import annotations

import base64
import binascii
import hmac
import json
import secrets
import time
from dataclasses import asdict, dataclass, replace

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

SESSION_COOKIE = "engram_ui"
LOGIN_COOKIE = "engram_ui_login"
"""The sign-in form's own CSRF token (double-submit: cookie and form field agree)."""
HOST_PREFIX = "__Host-"
"""Over https both cookies carry this prefix: a browser takes such a cookie only if it is
Secure, for ``Path=/`` and without Domain, so a page of another origin cannot plant it."""
CSRF_FIELD = "csrf"
CSRF_HEADER = "x-csrf-token"
MAX_AGE = 8 * 3600
"""Seconds a session lasts, however active."""
_CONTEXT = b"engram inspector session v1"


@dataclass(frozen=True, slots=True)
class Session:
    """What a session cookie seals."""

    token: str
    user: str | None
    csrf: str
    issued: float

    @classmethod
    def start(cls, token: str) -> Session:
        return cls(token, None, secrets.token_urlsafe(32), time.time())

    def viewing(self, user: str | None) -> Session:
        return replace(self, user=user)


class Sealer:
    """Seals sessions into cookie values and opens them (``None``: forged, stale, other)."""

    def __init__(self, secret: bytes) -> None:
        hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_CONTEXT)
        self._aead = AESGCM(hkdf.derive(secret))

    def seal(self, session: Session) -> str:
        nonce = secrets.token_bytes(12)
        data = json.dumps(asdict(session), separators=(",", ":")).encode("utf-8")
        sealed = nonce + self._aead.encrypt(nonce, data, _CONTEXT)
        return base64.urlsafe_b64encode(sealed).decode("ascii").rstrip("=")

    def open(self, value: str | None, now: float | None = None) -> Session | None:
        if not value or len(value) > 8192:
            return None
        try:
            raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
            data = json.loads(self._aead.decrypt(raw[:12], raw[12:], _CONTEXT))
            session = Session(**data)
        except (InvalidTag, binascii.Error, ValueError, TypeError):
            return None
        moment = time.time() if now is None else now
        if not isinstance(session.issued, int | float) or moment - session.issued > MAX_AGE:
            return None
        return session


def same_token(expected: str, given: str | None) -> bool:
    """Whether a submitted CSRF token is the expected one (constant time)."""
    return bool(given) and hmac.compare_digest(expected.encode(), str(given).encode())
