"""The inspector's cookies behind a TLS proxy, against a real ``engram serve`` on loopback:
the proxy says https with ``X-Forwarded-Proto`` (uvicorn trusts it from loopback), and the
cookies then carry the ``__Host-`` prefix, which no page of another origin can set (a page
on another port of the host included, served over plain http: cookies ignore ports, but a
``__Host-`` cookie must be Secure). Only the name that matches the scheme is read: a
session planted under the plain name is no session over https."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from inspector_support import MARKER, World, csrf_of, seed
from serve_support import Server, start

from engram.server.keys import SECRET_ENV

HTTPS = {"X-Forwarded-Proto": "https"}
HTTP: dict[str, str] = {}
BOBS = "Bob plays the cello"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, World]]:
    root = tmp_path_factory.mktemp("https")
    world = seed(root / ".engram", agent=False)
    server = start(
        ["--home", str(world.home), "--embedder", "hash"], cwd=root, env={SECRET_ENV: ""}
    )
    yield server, world
    server.stop()


def _cookies(answer: httpx.Response) -> dict[str, str]:
    """Each cookie the answer sets: its name, and the whole Set-Cookie header."""
    headers = answer.headers.get_list("set-cookie")
    return {header.split("=", 1)[0]: header for header in headers}


def _value(header: str) -> str:
    return header.split(";", 1)[0].split("=", 1)[1].strip('"')


def _get(server: Server, path: str, scheme: dict[str, str], cookie: str = "") -> httpx.Response:
    headers = {**scheme, "Cookie": cookie} if cookie else scheme
    return httpx.get(server.url + path, headers=headers, timeout=60)


def _sign_in(server: Server, token: str, scheme: dict[str, str]) -> dict[str, str]:
    """The Set-Cookie headers of the sign-in form and of the signed-in answer, by name."""
    form = _get(server, "/ui/login", scheme)
    ((name, header),) = _cookies(form).items()
    answer = httpx.post(
        server.url + "/ui/login",
        data={"token": token, "csrf": csrf_of(form.text)},
        headers={**scheme, "Cookie": f"{name}={_value(header)}"},
        timeout=60,
    )
    assert answer.status_code == 303, answer.text
    return {**_cookies(form), **_cookies(answer)}


def _attributes(header: str) -> set[str]:
    return {part.strip().lower() for part in header.split(";")[1:]}


def test_over_https_the_cookies_carry_the_host_prefix(served: tuple[Server, World]) -> None:
    server, world = served
    cookies = _sign_in(server, world.tokens["alice"], HTTPS)
    assert set(cookies) == {"__Host-engram_ui_login", "__Host-engram_ui"}
    for header in cookies.values():
        attributes = _attributes(header)
        assert {"secure", "path=/", "httponly", "samesite=strict"} <= attributes, header
        assert not any(a.startswith("domain") for a in attributes), header
    plain = _sign_in(server, world.tokens["alice"], HTTP)
    assert set(plain) == {"engram_ui_login", "engram_ui"}
    assert all(
        "path=/ui" in _attributes(h) and "secure" not in _attributes(h) for h in plain.values()
    )


def test_over_https_a_session_planted_under_the_plain_name_is_not_read(
    served: tuple[Server, World],
) -> None:
    """The attacker signs in with their own key and plants their session from a page on
    another port (``engram_ui=...; Path=/ui``): over https the victim's inspector reads only
    ``__Host-engram_ui``, so it never acts as the attacker."""
    server, world = served
    planted = _value(_sign_in(server, world.tokens["bob"], HTTP)["engram_ui"])
    assert BOBS in _get(server, "/ui/facts", HTTP, f"engram_ui={planted}").text
    alone = _get(server, "/ui/facts", HTTPS, f"engram_ui={planted}")
    assert alone.status_code == 303 and alone.headers["location"] == "/ui/login"
    mine = _value(_sign_in(server, world.tokens["alice"], HTTPS)["__Host-engram_ui"])
    for cookie in (f"engram_ui={planted}; __Host-engram_ui={mine}",
                   f"__Host-engram_ui={mine}; engram_ui={planted}"):  # fmt: skip
        page = _get(server, "/ui/facts", HTTPS, cookie)
        assert page.status_code == 200 and MARKER in page.text and BOBS not in page.text


def test_over_plain_http_the_prefixed_cookie_is_not_read(served: tuple[Server, World]) -> None:
    server, world = served
    mine = _value(_sign_in(server, world.tokens["alice"], HTTPS)["__Host-engram_ui"])
    assert MARKER in _get(server, "/ui/facts", HTTPS, f"__Host-engram_ui={mine}").text
    answer = _get(server, "/ui/facts", HTTP, f"__Host-engram_ui={mine}")
    assert answer.status_code == 303 and MARKER not in answer.text


def test_over_https_signing_out_clears_the_prefixed_cookie(served: tuple[Server, World]) -> None:
    """A browser drops a ``__Host-`` Set-Cookie without Secure and Path=/: the clearing
    header must carry them too, or the session would outlive the sign-out."""
    server, world = served
    mine = _value(_sign_in(server, world.tokens["alice"], HTTPS)["__Host-engram_ui"])
    cookie = f"__Host-engram_ui={mine}"
    csrf = csrf_of(_get(server, "/ui/facts", HTTPS, cookie).text)
    for answer in (
        httpx.post(server.url + "/ui/logout", data={"csrf": csrf},
                   headers={**HTTPS, "Cookie": cookie}, timeout=60),
        _get(server, "/ui/facts", HTTPS, "__Host-engram_ui=not-a-session"),
    ):  # fmt: skip
        header = _cookies(answer)["__Host-engram_ui"]
        assert {"secure", "path=/", "max-age=0"} <= _attributes(header), header
