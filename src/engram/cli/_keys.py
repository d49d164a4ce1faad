"""``engram keys create | list | revoke``: the API keys the server accepts.

A thin skin over :class:`engram.server.keys.Keyring`. ``create`` prints the token (only
once: engram keeps a keyed hash of it) on standard output and what it allows on
standard error, so ``TOKEN=$(engram keys create ...)`` captures just the token.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import click

from engram.cli._existing import existing_home
from engram.cli._options import home_option, tenant_option, user_option
from engram.cli._streams import failed
from engram.errors import InvalidInputError
from engram.server.auth import open_keyring
from engram.server.keys import DEFAULT_SCOPES, SCOPES, Keyring
from engram.stores.keys import KeyRecord

_SPAN = re.compile(r"^(\d{1,6})([dhm])$")
_UNITS = {"d": "days", "h": "hours", "m": "minutes"}

_url = click.option(
    "--url", default=None, help="PostgreSQL admin URL holding the keys (instead of --home)."
)
_home = home_option("its memory.db holds the keys unless --url")


def parse_expiry(text: str, now: datetime) -> datetime | None:
    """``never``, a span (``90d``, ``12h``, ``30m``) or an ISO 8601 time with a zone."""
    if text == "never":
        return None
    span = _SPAN.fullmatch(text)
    if span:
        return now + timedelta(**{_UNITS[span.group(2)]: int(span.group(1))})
    try:
        when = datetime.fromisoformat(text)
    except ValueError as exc:
        raise InvalidInputError(
            f"--expires takes never, 90d, 12h, 30m or ISO 8601: {text!r}"
        ) from exc
    if when.tzinfo is None:
        raise InvalidInputError(f"--expires needs a time zone (e.g. {text}+00:00)")
    return when


def _keyring(home: Path, url: str | None, *, create: bool = False) -> Keyring:
    if url is None and not create:
        existing_home(home)
    return open_keyring(home=home, url=url)


def _stamp(when: datetime | None) -> str | None:
    return None if when is None else when.isoformat(timespec="seconds")


def _public(record: KeyRecord) -> dict[str, object]:
    return {
        "key_id": record.key_id,
        "tenant": record.tenant_id,
        "user": record.user_id,
        "scopes": sorted(record.scopes),
        "label": record.label,
        "created_at": _stamp(record.created_at),
        "expires_at": _stamp(record.expires_at),
        "revoked_at": _stamp(record.revoked_at),
    }


@click.group("keys")
def keys_group() -> None:
    """Create, list and revoke the API keys ``engram serve`` accepts."""


@keys_group.command("create")
@tenant_option()
@user_option(required=False)
@click.option(
    "--scope",
    "scopes",
    multiple=True,
    type=click.Choice(sorted(SCOPES)),
    help=f"What the key allows (repeat; default: {' '.join(sorted(DEFAULT_SCOPES))}).",
)
@click.option("--expires", default="90d", show_default=True, help="never, 90d, 12h, 30m or ISO.")
@click.option("--label", default="", help="A note shown by `engram keys list`.")
@_home
@_url
def create_cmd(
    tenant: str,
    user: str | None,
    scopes: tuple[str, ...],
    expires: str,
    label: str,
    home: Path,
    url: str | None,
) -> None:
    """Create a key and print its token (shown this once). With --user, the key acts only
    as that user; without, it is tenant-level and each request names its user.

    Example: engram keys create --tenant acme --user alice --scope read --expires 30d
    """
    expires_at = parse_expiry(expires, datetime.now(UTC))
    keyring = _keyring(home, url, create=True)
    with keyring.store:
        new = keyring.create(
            tenant,
            user_id=user,
            scopes=scopes or DEFAULT_SCOPES,
            expires_at=expires_at,
            label=label,
        )
        try:
            click.echo(new.token)
        except OSError as exc:  # a token nobody saw must not stay live
            keyring.revoke(tenant, new.record.key_id)
            raise failed(exc, f"; key {new.record.key_id} was revoked unseen") from exc
    click.echo(_summary(new.record), err=True)


def _summary(record: KeyRecord) -> str:
    bound = f"user {record.user_id}" if record.user_id else "tenant-level"
    expires = record.expires_at.isoformat(timespec="seconds") if record.expires_at else "never"
    return (
        f"created {record.key_id} for tenant {record.tenant_id} ({bound}); scopes "
        f"{' '.join(sorted(record.scopes))}; expires {expires}. The token is shown only once."
    )


@keys_group.command("list")
@tenant_option()
@user_option(required=False)
@_home
@_url
def list_cmd(tenant: str, user: str | None, home: Path, url: str | None) -> None:
    """List a tenant's keys as JSON (ids, bindings, scopes, expiry; never a token); with
    --user, only the keys bound to that user.

    Example: engram keys list --tenant acme
    """
    keyring = _keyring(home, url)
    with keyring.store:
        records = [r for r in keyring.list(tenant) if user is None or r.user_id == user]
    click.echo(json.dumps([_public(r) for r in records], indent=1))


@keys_group.command("revoke")
@click.argument("key_id")
@tenant_option()
@user_option(required=False)
@_home
@_url
def revoke_cmd(key_id: str, tenant: str, user: str | None, home: Path, url: str | None) -> None:
    """Revoke KEY_ID now: the server refuses it from its next request. With --user, only
    if the key is bound to that user.

    Example: engram keys revoke egk_0123456789ab --tenant acme
    """
    keyring = _keyring(home, url)
    with keyring.store:
        keyring.revoke(tenant, key_id, user_id=user)
    click.echo(f"revoked {key_id}")


def register(group: click.Group) -> None:
    group.add_command(keys_group)
