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

_OPTIONS = (
    click.option("--jwt-jwks-url", default=None, help="Accept JWTs signed by this JWKS."),
    click.option(
        "--jwt-key-file",
        type=click.Path(path_type=Path, dir_okay=False, exists=True),
        default=None,
        help="Accept JWTs verified by this PEM key (or HS256 secret).",
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
        "key": jwt_key_file.read_text(encoding="utf-8") if jwt_key_file else None,
        "algorithms": list(jwt_algorithms) or None,
        "tenant_claim": jwt_tenant_claim,
        "user_claim": jwt_user_claim or None,
        "scope_claim": jwt_scope_claim,
    }
