"""Bearer JWTs: verified against a JWKS (loopback HTTP or a file) or a static key, with
the tenant, user and scopes mapped from claims; anything unverified is refused alike."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

from engram import AccessDeniedError, Principal
from engram.errors import AuthenticationError, ConfigError
from engram.server.auth import JWTSettings, open_authenticator
from engram.server.keys import REFUSED

AUDIENCE = "https://engram.example/api"
ISSUER = "https://idp.example"


def _private_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


KEY = _private_key()
STRANGER = _private_key()


def _jwks(kid: str = "k1") -> bytes:
    jwk = json.loads(RSAAlgorithm.to_jwk(KEY.public_key()))
    return json.dumps({"keys": [{**jwk, "kid": kid, "use": "sig", "alg": "RS256"}]}).encode()


def _token(key: Any = KEY, kid: str = "k1", alg: str = "RS256", **claims: Any) -> str:
    body = {
        "aud": AUDIENCE,
        "iss": ISSUER,
        "exp": int(time.time()) + 300,
        "sub": "alice",
        "tenant_id": "acme",
        "scope": "read write",
        **claims,
    }
    body = {k: v for k, v in body.items() if v is not None}
    return jwt.encode(body, key, algorithm=alg, headers={"kid": kid})  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def jwks_url() -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(_jwks())

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/.well-known/jwks.json"
    server.shutdown()


def _settings(jwks_url: str, **changes: Any) -> JWTSettings:
    return JWTSettings(audience=AUDIENCE, jwks_url=jwks_url, issuer=ISSUER, **changes)


def test_a_token_from_a_loopback_jwks_grants_its_claims(jwks_url: str) -> None:
    grant = open_authenticator(jwt=_settings(jwks_url)).authenticate(_token())
    assert (grant.tenant_id, grant.user_id, grant.key_id) == ("acme", "alice", "alice")
    assert grant.scopes == frozenset({"read", "write"})
    assert grant.expires_at is not None
    assert grant.principal() == Principal("acme", "alice")
    with pytest.raises(AccessDeniedError):
        grant.principal("bob")


def test_a_jwks_file_works_too(tmp_path: Path) -> None:
    path = tmp_path / "jwks.json"
    path.write_bytes(_jwks())
    grant = open_authenticator(jwt=_settings(path.as_uri())).authenticate(_token())
    assert grant.tenant_id == "acme"


@pytest.mark.parametrize(
    "token",
    [
        _token(key=STRANGER),  # signed by someone else
        _token(aud="https://other.example"),
        _token(aud=None),
        _token(iss="https://evil.example"),
        _token(exp=int(time.time()) - 120),  # expired beyond the clock-skew leeway
        _token(exp=None),
        _token(exp=10**20),  # signed, but past any date a datetime holds
        _token(tenant_id=None),
        _token(tenant_id="../beta"),
        _token(sub=None),
        _token(kid="unknown"),
        _token(key=None, alg="none"),
        _token(key="a-shared-secret-that-is-long-enough", alg="HS256"),  # alg confusion
        "garbage",
        "a.b.c",
    ],
)
def test_unverified_tokens_are_refused_alike(jwks_url: str, token: str) -> None:
    authenticate = open_authenticator(jwt=_settings(jwks_url)).authenticate
    with pytest.raises(AuthenticationError) as caught:
        authenticate(token)
    assert str(caught.value) == REFUSED


def test_claims_map_to_tenant_user_and_scopes_as_configured(jwks_url: str) -> None:
    settings = _settings(jwks_url, tenant_claim="org", user_claim=None, scope_claim="perms")
    token = _token(org="beta", perms=["read", "erase", "superuser"], tenant_id=None)
    grant = open_authenticator(jwt=settings).authenticate(token)
    assert (grant.tenant_id, grant.user_id) == ("beta", None)
    assert grant.scopes == frozenset({"read", "erase"})  # unknown scopes dropped
    assert grant.principal("carol") == Principal("beta", "carol")


def test_a_static_shared_key_verifies_hs256() -> None:
    secret = "a-shared-secret-that-is-long-enough-for-hs256"
    settings = JWTSettings(audience=AUDIENCE, key=secret, algorithms=("HS256",))
    grant = open_authenticator(jwt=settings).authenticate(_token(key=secret, alg="HS256"))
    assert grant.user_id == "alice"
    with pytest.raises(AuthenticationError):
        open_authenticator(jwt=settings).authenticate(_token())  # RS256 is not allowed here


def test_api_keys_and_jwts_side_by_side(jwks_url: str, tmp_path: Path) -> None:
    from engram.server.auth import open_keyring

    token = open_keyring(home=tmp_path).create("acme", user_id="bob").token
    both = open_authenticator(home=str(tmp_path), jwt=_settings(jwks_url))
    assert both.authenticate(token).user_id == "bob"
    assert both.authenticate(_token()).user_id == "alice"
    with pytest.raises(AuthenticationError):
        open_authenticator(jwt=_settings(jwks_url)).authenticate(token)  # no key store


@pytest.mark.parametrize(
    "changes",
    [
        {"jwks_url": None},
        {"key": "k"},
        {"algorithms": ("none",)},
        {"algorithms": ("HS256",)},
        {"audience": ""},
    ],
)
def test_unsafe_settings_are_config_errors(changes: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        JWTSettings(**{"audience": AUDIENCE, "jwks_url": "https://idp/jwks", **changes})


# -- shared secrets, clock skew and claim types -------------------------------------------

SECRET = "s" * 32
"""An HS256 secret of the least length RFC 7518 allows (the hash size: 32 bytes)."""


@pytest.mark.parametrize(
    ("key", "algorithms"),
    [
        ("", ("HS256",)),
        ("abc", ("HS256",)),
        ("s" * 31, ("HS256",)),
        ("é" * 15, ("HS256",)),  # 30 bytes: counted in bytes, not characters
        ("s" * 32, ("HS384",)),  # HS384 needs 48 bytes
        ("s" * 63, ("HS256", "HS512")),  # the longest hash of those allowed decides
    ],
)
def test_a_short_or_empty_shared_secret_is_a_config_error(
    key: str, algorithms: tuple[str, ...]
) -> None:
    with pytest.raises(ConfigError, match="shared secret"):
        JWTSettings(audience=AUDIENCE, key=key, algorithms=algorithms)


def test_a_secret_of_the_hash_size_is_accepted() -> None:
    for key, algorithm in ((SECRET, "HS256"), ("s" * 48, "HS384"), ("s" * 64, "HS512")):
        settings = JWTSettings(audience=AUDIENCE, key=key, algorithms=(algorithm,))
        grant = open_authenticator(jwt=settings).authenticate(
            _token(key=key, alg=algorithm, iss=None)
        )
        assert grant.user_id == "alice"


def _hs(**claims: Any) -> str:
    return _token(key=SECRET, alg="HS256", iss=None, **claims)


def _verify(token: str, **changes: Any) -> str | None:
    settings = JWTSettings(audience=AUDIENCE, key=SECRET, algorithms=("HS256",), **changes)
    return open_authenticator(jwt=settings).authenticate(token).user_id


def test_clocks_a_few_seconds_apart_are_tolerated_by_default() -> None:
    assert JWTSettings(audience=AUDIENCE, key=SECRET, algorithms=("HS256",)).leeway_seconds == 30
    soon = int(time.time()) + 2
    assert _verify(_hs(iat=soon, nbf=soon)) == "alice"
    assert _verify(_hs(exp=int(time.time()) - 2)) == "alice"  # just expired, by the IdP's clock
    with pytest.raises(AuthenticationError):
        _verify(_hs(nbf=int(time.time()) + 120))  # beyond the leeway
    with pytest.raises(AuthenticationError):
        _verify(_hs(exp=int(time.time()) - 120))
    with pytest.raises(AuthenticationError):
        _verify(_hs(nbf=soon), leeway_seconds=0)


@pytest.mark.parametrize("leeway", [-1, 301, float("nan"), float("inf")])
def test_a_leeway_out_of_bounds_is_a_config_error(leeway: float) -> None:
    with pytest.raises(ConfigError, match="leeway"):
        JWTSettings(audience=AUDIENCE, key=SECRET, algorithms=("HS256",), leeway_seconds=leeway)


@pytest.mark.parametrize(
    "claims",
    [
        {"exp": "9999999999"},  # PyJWT would take int("9999999999")
        {"exp": True},
        {"exp": [4102444800]},
        {"nbf": "0"},
        {"iat": "0"},
        {"iat": False},
        {"nbf": None, "iat": {"t": 0}},
    ],
    ids=repr,
)
def test_time_claims_must_be_json_numbers(claims: dict[str, Any]) -> None:
    token = jwt.encode(
        {"aud": AUDIENCE, "exp": int(time.time()) + 300, "sub": "alice", "tenant_id": "acme",
         **{k: v for k, v in claims.items() if v is not None}},
        SECRET,
        algorithm="HS256",
    )  # fmt: skip
    with pytest.raises(AuthenticationError) as caught:
        _verify(token)
    assert str(caught.value) == REFUSED
    assert _verify(_hs(iat=int(time.time()), nbf=float(int(time.time())))) == "alice"


@pytest.mark.parametrize("command", ["serve", "mcp"])
def test_the_cli_leeway_has_the_librarys_default_and_bound(command: str) -> None:
    import dataclasses

    import click

    from engram.cli import main

    found = main.get_command(click.Context(main), command)
    assert found is not None
    option = {o.name: o for o in found.params}["jwt_leeway"]
    default = {f.name: f.default for f in dataclasses.fields(JWTSettings)}["leeway_seconds"]
    assert option.default == default == 30
    assert isinstance(option.type, click.FloatRange) and option.type.max is not None
    settings = {"audience": AUDIENCE, "key": SECRET, "algorithms": ("HS256",)}
    assert JWTSettings(**settings, leeway_seconds=option.type.max).leeway_seconds == 300
    with pytest.raises(ConfigError):
        JWTSettings(**settings, leeway_seconds=option.type.max + 0.5)
