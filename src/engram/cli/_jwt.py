"""The ``--jwt-*`` options of the commands that serve over the network (``engram serve``,
``engram mcp --http``): one decorator that adds them and folds them into one ``jwt``
argument, the settings as :class:`~engram.server.app.ServeConfig` keeps them (``None``
when no key source is given)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from engram.errors import ConfigError

F = TypeVar("F", bound=Callable[..., Any])
LEEWAY_SECONDS = 30.0
"""The default of ``--jwt-leeway``: :class:`~engram.server.auth.JWTSettings`'s own."""
MAX_LEEWAY_SECONDS = 300.0

_OPTIONS = (
    click.option("--jwt-jwks-url", default=None, help="Accept JWTs signed by this JWKS."),
    click.option(
        "--jwt-key-file",
        type=click.Path(path_type=Path, dir_okay=False, exists=True),
        default=None,
        help="Accept JWTs verified by this PEM key (or HS256 secret), whitespace stripped.",
    ),
    click.option("--jwt-audience", default=None, help="The audience JWTs must name."),
    click.option("--jwt-issuer", default=None, help="The issuer JWTs must name."),
    click.option("--jwt-algorithm", "jwt_algorithms", multiple=True, help="Allowed algorithm."),
    click.option("--jwt-tenant-claim", default="tenant_id", show_default=True),
    click.option(
        "--jwt-user-claim",
        default="sub",
        show_default=True,
        help="Claim naming the user; '' for tenant-level tokens.",
    ),
    click.option("--jwt-scope-claim", default="scope", show_default=True),
    click.option(
        "--jwt-leeway",
        type=click.FloatRange(0, MAX_LEEWAY_SECONDS),
        default=LEEWAY_SECONDS,
        show_default=True,
        help="Seconds of clock skew allowed on exp, nbf and iat.",
    ),
)


def jwt_options(command: F) -> F:
    """Add the ``--jwt-*`` options; ``command`` receives them as one ``jwt`` keyword."""

    @functools.wraps(command)
    def folded(*args: Any, **kwargs: Any) -> Any:
        found = {name: kwargs.pop(name) for name in list(kwargs) if name.startswith("jwt_")}
        return command(*args, jwt=jwt_settings(**found), **kwargs)

    wrapped: Any = folded
    for option in reversed(_OPTIONS):
        wrapped = option(wrapped)
    return wrapped  # type: ignore[no-any-return]


def jwt_settings(
    *,
    jwt_jwks_url: str | None,
    jwt_key_file: Path | None,
    jwt_audience: str | None,
    jwt_issuer: str | None,
    jwt_algorithms: tuple[str, ...],
    jwt_tenant_claim: str,
    jwt_user_claim: str,
    jwt_scope_claim: str,
    jwt_leeway: float,
) -> dict[str, object] | None:
    """The JWT settings the options give, or ``None`` without a JWKS URL or key file."""
    if jwt_jwks_url is None and jwt_key_file is None:
        return None
    if jwt_audience is None:
        raise ConfigError("JWT verification needs --jwt-audience")
    return {
        "audience": jwt_audience,
        "jwks_url": jwt_jwks_url,
        "issuer": jwt_issuer,
        "key": _key_text(jwt_key_file) if jwt_key_file else None,
        "algorithms": list(jwt_algorithms) or None,
        "tenant_claim": jwt_tenant_claim,
        "user_claim": jwt_user_claim or None,
        "scope_claim": jwt_scope_claim,
        "leeway_seconds": jwt_leeway,
    }


def _key_text(path: Path) -> str:
    """The key in ``path`` without the whitespace around it (``echo secret > file`` ends
    the file with a newline, which is no part of the secret)."""
    return path.read_text(encoding="utf-8").strip()
