"""Bearer JWTs verified against a JWKS URL or a static key (PyJWT): the OAuth 2.1
resource-server model, with claims mapped to the tenant, the user and the scopes."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from urllib.request import url2pathname

import jwt

from engram._principal import validate_id
from engram.errors import AuthenticationError, ConfigError, InvalidInputError
from engram.server.keys import REFUSED, SCOPES

_ASYMMETRIC = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA")
_HMAC_BYTES = {"HS256": 32, "HS384": 48, "HS512": 64}
"""The least length of a shared secret per algorithm: its hash size (RFC 7518, 3.2)."""
LEEWAY_SECONDS = 30.0
"""How far apart the issuer's clock and this server's may be (``exp``, ``nbf``, ``iat``)."""
MAX_LEEWAY_SECONDS = 300.0
_TIMES = ("exp", "nbf", "iat")


@dataclass(frozen=True, slots=True)
class JWTSettings:
    """How bearer tokens are verified and read.

    Exactly one of ``jwks_url`` (an ``https://``, loopback ``http://`` or ``file://`` JWKS
    document, keys picked by ``kid``) or ``key`` (a PEM public key, or a shared secret for
    ``HS256``). ``audience`` is required (a token minted for another service is refused);
    ``issuer`` is checked when given. The tenant comes from ``tenant_claim``, the user
    from ``user_claim`` (``None``: tokens are tenant-level and name the user per request),
    the scopes from ``scope_claim`` (a space-separated string or a list; unknown scopes
    are ignored). ``exp`` is required; ``exp``, ``nbf`` and ``iat`` must be JSON numbers,
    and are checked with ``leeway_seconds`` of clock skew (0 to 300). A shared secret is
    at least as long as its algorithm's hash (32 bytes for ``HS256``).
    """

    audience: str
    jwks_url: str | None = None
    key: str | None = None
    algorithms: tuple[str, ...] = ("RS256", "ES256")
    issuer: str | None = None
    tenant_claim: str = "tenant_id"
    user_claim: str | None = "sub"
    scope_claim: str = "scope"
    leeway_seconds: float = LEEWAY_SECONDS

    def __post_init__(self) -> None:
        if (self.jwks_url is None) == (self.key is None):
            raise ConfigError("JWT settings need exactly one of jwks_url or key")
        if not self.algorithms or "none" in {a.lower() for a in self.algorithms}:
            raise ConfigError("JWT settings need signing algorithms, never 'none'")
        if self.jwks_url is not None and not set(self.algorithms) <= set(_ASYMMETRIC):
            raise ConfigError("a JWKS verifies asymmetric algorithms only (RS*, PS*, ES*, EdDSA)")
        if not self.audience:
            raise ConfigError("JWT settings need the audience this server accepts")
        if not 0 <= self.leeway_seconds <= MAX_LEEWAY_SECONDS:  # (NaN fails both)
            raise ConfigError(f"the JWT leeway is 0 to {MAX_LEEWAY_SECONDS:g} seconds")
        _check_secret(self.key, self.algorithms)


def _check_secret(key: str | None, algorithms: tuple[str, ...]) -> None:
    """A shared secret at least as long as the hash of every HMAC algorithm allowed."""
    least = max((_HMAC_BYTES.get(a, 0) for a in algorithms), default=0)
    if key is not None and least and len(key.encode("utf-8")) < least:
        raise ConfigError(
            f"the JWT shared secret is {len(key.encode('utf-8'))} bytes; "
            f"{'/'.join(a for a in algorithms if a in _HMAC_BYTES)} needs at least "
            f"{least} bytes (RFC 7518, 3.2): use a long random secret"
        )


@dataclass(frozen=True, slots=True)
class Claims:
    """What a verified token says, mapped."""

    tenant_id: str
    user_id: str | None
    scopes: frozenset[str]
    subject: str
    expires_at: datetime


def _file_key(path: Path, kid: object) -> Any:
    """The key ``kid`` of the JWKS file at ``path`` (read on each call: rotation is a
    rewrite of the file)."""
    try:
        keys = jwt.PyJWKSet.from_json(path.read_text(encoding="utf-8")).keys
    except OSError as exc:
        raise jwt.PyJWKClientError(f"cannot read the JWKS file {path}") from exc
    for key in keys:
        if key.key_id == kid:
            return key.key
    raise jwt.PyJWKClientError("no JWKS key matches the token's kid")


def _numeric_times(payload: dict[str, Any]) -> dict[str, Any]:
    """``payload``, whose ``exp``, ``nbf`` and ``iat`` are JSON numbers (PyJWT takes the
    string ``"9999999999"`` through ``int()``); else :class:`jwt.InvalidTokenError`."""
    for name in _TIMES:
        value = payload.get(name, 0.0)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise jwt.InvalidTokenError(f"the {name} claim is not a number")
        if not math.isfinite(value):
            raise jwt.InvalidTokenError(f"the {name} claim is not finite")
    return payload


class JWTVerifier:
    """Verify tokens with :class:`JWTSettings` (the JWKS is fetched and cached lazily)."""

    def __init__(self, settings: JWTSettings) -> None:
        self.settings = settings
        url = settings.jwks_url
        remote = url is not None and not url.startswith("file://")
        self._jwks = jwt.PyJWKClient(url) if remote and url else None
        self._file = Path(url2pathname(urlsplit(url).path)) if url and not remote else None

    def _key(self, token: str) -> Any:
        if self._jwks is not None:
            return self._jwks.get_signing_key_from_jwt(token).key
        if self._file is not None:
            return _file_key(self._file, jwt.get_unverified_header(token).get("kid"))
        return self.settings.key

    def claims(self, token: str) -> Claims:
        """The mapped claims of a valid token, else :class:`AuthenticationError`."""
        s = self.settings
        try:
            payload = jwt.decode(
                token,
                self._key(token),
                algorithms=list(s.algorithms),
                audience=s.audience,
                issuer=s.issuer,
                leeway=s.leeway_seconds,
                options={"require": ["exp", "aud"] + (["iss"] if s.issuer else [])},
            )
            return self._map(_numeric_times(payload))
        except (jwt.PyJWTError, InvalidInputError, TypeError, ValueError, OverflowError) as exc:
            raise AuthenticationError(REFUSED) from exc  # (an "exp" past any date: Overflow)

    def _map(self, payload: dict[str, Any]) -> Claims:
        s = self.settings
        tenant = validate_id("tenant_id", payload.get(s.tenant_claim))  # type: ignore[arg-type]
        user = None
        if s.user_claim is not None:
            user = validate_id("user_id", payload.get(s.user_claim))  # type: ignore[arg-type]
        raw = payload.get(s.scope_claim, "")
        listed = raw.split() if isinstance(raw, str) else raw if isinstance(raw, list) else []
        scopes = frozenset(str(x) for x in listed) & SCOPES
        subject = str(payload.get("sub") or "jwt")
        expires = datetime.fromtimestamp(float(payload["exp"]), UTC)
        return Claims(tenant, user, scopes, subject, expires)
