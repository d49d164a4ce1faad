"""The inspector's promises against an adversary, through the real ASGI app (TestClient):
sessions, CSRF, other tenants and users, revoked keys, stored markup, security headers."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from inspector_support import ALICE, MARKER, SHARED, THREAD, XSS, World, csrf_of, seed, sign_in

from engram import Memory
from engram.server.app import ServeConfig, open_app
from engram.server.auth import open_keyring
from engram.server.inspector._session import MAX_AGE, SESSION_COOKIE, Sealer, Session

RAW_SCRIPT = "<script>alert(1)</script>"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return seed(tmp_path_factory.mktemp("inspector") / ".engram")


@pytest.fixture(scope="module")
def app(world: World) -> Iterator[TestClient]:
    application = open_app(ServeConfig(home=str(world.home), embedder="hash"))
    with TestClient(application, follow_redirects=False) as client:
        yield client


def client_of(app: TestClient, *, https: bool = False) -> TestClient:
    base = "https://testserver" if https else "http://testserver"
    return TestClient(app.app, base_url=base, follow_redirects=False)


def pages(world: World) -> list[str]:
    """Every page that shows Alice's content, named by her ids."""
    first, last = world.checkpoints[-1], world.checkpoints[0]
    return [
        "/ui/memories?q=where+does+alice+live+tea+motto",
        "/ui/facts?status=all",
        f"/ui/facts/{world.city_key}",
        f"/ui/facts/{world.xss_key}",
        "/ui/review",
        "/ui/threads",
        f"/ui/threads/{THREAD}",
        f"/ui/threads/{THREAD}/state?checkpoint={last}",
        f"/ui/threads/{THREAD}/diff?from={first}&to={last}",
        f"/ui/threads/{THREAD}/prune?keep=1",
        "/ui/documents?q=rates+tea",
        "/ui/documents/view?path=research/rates.md",
        "/ui/documents/view?path=users/alice/notes.md",
        "/ui/documents/edit?path=research/rates.md",
        "/ui/erasure",
    ]


# -- sign-in and the session cookie ---------------------------------------------------


def test_sign_in_sets_an_opaque_http_only_strict_cookie(app: TestClient, world: World) -> None:
    client = client_of(app)
    form = client.get("/ui/login")
    token = world.tokens["alice"]
    answer = client.post("/ui/login", data={"token": token, "csrf": csrf_of(form.text)})
    assert answer.status_code == 303
    cookies = [v for k, v in answer.headers.multi_items() if k == "set-cookie"]
    header = next(v for v in cookies if v.startswith(SESSION_COOKIE + "="))
    assert "HttpOnly" in header and "SameSite=strict" in header.replace("Strict", "strict")
    assert "Secure" not in header  # plain http: a Secure cookie would never come back
    value = client.cookies[SESSION_COOKIE]
    assert token not in value and token.split(".")[2] not in value
    assert MARKER in client.get("/ui/facts").text


def test_over_https_the_cookie_is_secure_and_host_prefixed(app: TestClient, world: World) -> None:
    """``__Host-``: Secure, Path=/, no Domain, so no other origin can plant it (the real
    proxy case, ``X-Forwarded-Proto``, is in test_inspector_https.py)."""
    client = client_of(app, https=True)
    form = client.get("/ui/login")
    answer = client.post(
        "/ui/login", data={"token": world.tokens["alice"], "csrf": csrf_of(form.text)}
    )
    (header,) = [h for h in answer.headers.get_list("set-cookie") if "Max-Age=0" not in h]
    assert header.startswith("__Host-" + SESSION_COOKIE + "=") and "Secure" in header
    assert "Path=/;" in header and "Domain" not in header
    assert MARKER in client.get("/ui/facts").text


def test_a_wrong_key_gets_no_session(app: TestClient, world: World) -> None:
    client = client_of(app)
    form = client.get("/ui/login")
    forged = world.tokens["alice"][:-4] + "AAAA"
    answer = client.post("/ui/login", data={"token": forged, "csrf": csrf_of(form.text)})
    assert answer.status_code == 401 and "not valid" in answer.text
    assert SESSION_COOKIE not in client.cookies
    assert client.get("/ui/facts").status_code == 303


def test_sign_in_without_its_form_token_is_refused(app: TestClient, world: World) -> None:
    client = client_of(app)
    answer = client.post("/ui/login", data={"token": world.tokens["alice"], "csrf": "x" * 43})
    assert answer.status_code == 403 and SESSION_COOKIE not in client.cookies


def test_pages_need_a_session(app: TestClient, world: World) -> None:
    client = client_of(app)
    for path in pages(world):
        answer = client.get(path)
        assert answer.status_code == 303 and answer.headers["location"] == "/ui/login", path


def test_a_tampered_or_transplanted_cookie_is_no_session(app: TestClient, world: World) -> None:
    client = client_of(app)
    sign_in(client, world.tokens["alice"])
    value = client.cookies[SESSION_COOKIE]
    flipped = value[:20] + ("A" if value[20] != "A" else "B") + value[21:]
    other = client_of(app)
    other.cookies.set(SESSION_COOKIE, flipped)
    assert other.get("/ui/facts").status_code == 303
    other.cookies.set(SESSION_COOKIE, world.tokens["alice"])  # the raw key is no cookie
    assert other.get("/ui/facts").status_code == 303


def test_a_revoked_key_ends_its_session(app: TestClient, world: World) -> None:
    keyring = open_keyring(home=world.home)
    made = keyring.create("acme", user_id="alice", scopes=("read",))
    client = client_of(app)
    sign_in(client, made.token)
    assert MARKER in client.get("/ui/facts").text
    keyring.revoke("acme", made.record.key_id)
    answer = client.get("/ui/facts")
    assert answer.status_code == 303 and answer.headers["location"] == "/ui/login"
    assert MARKER not in answer.text
    htmx = client.get("/ui/facts", headers={"HX-Request": "true"})
    assert htmx.status_code == 401 and htmx.headers["hx-redirect"] == "/ui/login"


def test_sign_out_ends_the_session(app: TestClient, world: World) -> None:
    client = client_of(app)
    csrf = sign_in(client, world.tokens["alice"])
    kept = client.cookies[SESSION_COOKIE]
    assert client.post("/ui/logout", data={"csrf": csrf}).status_code == 303
    assert client.get("/ui/facts").status_code == 303
    replay = client_of(app)  # a copied cookie still holds a live key: it is one session
    replay.cookies.set(SESSION_COOKIE, kept)
    assert replay.get("/ui/facts").status_code == 200


# -- CSRF -----------------------------------------------------------------------------


def posts(world: World) -> list[tuple[str, dict[str, str]]]:
    first = world.checkpoints[-1]
    return [
        (f"/ui/facts/{world.city_key}/edit", {"text": "Alice moved to Faro"}),
        (f"/ui/facts/{world.city_key}/retract", {}),
        (f"/ui/facts/{world.city_key}/delete", {}),
        (f"/ui/review/{world.held_id}/approve", {}),
        (f"/ui/review/{world.held_id}/discard", {}),
        ("/ui/erasure", {"confirm": "alice"}),
        (f"/ui/threads/{THREAD}/fork", {"checkpoint": first}),
        (f"/ui/threads/{THREAD}/prune", {"keep": "1"}),
        (f"/ui/threads/{THREAD}/approve", {"draft_hash": "0" * 16}),
        ("/ui/documents/edit", {"path": "research/rates.md", "text": "gone", "digest": "x"}),
        ("/ui/user", {"user": "bob"}),
        ("/ui/logout", {}),
    ]


def _unchanged(world: World) -> None:
    with Memory.open(world.home, embedder="hash") as memory:
        assert len(memory.history(ALICE, world.city_key)) == 2
        assert "Porto" in memory.history(ALICE, world.city_key)[-1].text
        assert [h.id for h in memory.review_queue(ALICE)] == [world.held_id]
        assert memory.threads(ALICE) == [THREAD]
        assert SHARED in memory.documents.read_text(ALICE, "research/rates.md")


@pytest.mark.parametrize("token", [None, "", "wrong", "x" * 43])
def test_state_changing_posts_without_the_session_token_are_refused(
    app: TestClient, world: World, token: str | None
) -> None:
    client = client_of(app)
    good = sign_in(client, world.tokens["alice"])
    assert token != good
    for path, data in posts(world):
        body = data if token is None else {**data, "csrf": token}
        answer = client.post(path, data=body)
        assert answer.status_code == 403, (path, answer.status_code)
        assert "stale or forged" in answer.text
    for path, data in posts(world):  # htmx sends it as a header
        answer = client.post(path, data=data, headers={"X-CSRF-Token": token or "nope"})
        assert answer.status_code == 403, path
    _unchanged(world)
    assert client.get("/ui/facts").status_code == 200  # still signed in


def test_another_sessions_token_is_no_token(app: TestClient, world: World) -> None:
    mine, theirs = client_of(app), client_of(app)
    sign_in(mine, world.tokens["alice"])
    stolen = sign_in(theirs, world.tokens["alice"])
    for path, data in posts(world):
        assert mine.post(path, data={**data, "csrf": stolen}).status_code == 403, path
    _unchanged(world)


# -- other tenants and users ----------------------------------------------------------


ADVERSARIES = [("bob", None), ("beta", "alice"), ("acme", "carol"), ("beta", "bob")]


@pytest.mark.parametrize(("key", "user"), ADVERSARIES)
def test_another_principal_never_sees_alices_data(
    app: TestClient, world: World, key: str, user: str | None
) -> None:
    client = client_of(app)
    csrf = sign_in(client, world.tokens[key], user)
    same_tenant = key == "acme"  # sees the tenant's shared documents, never Alice's own
    for path in pages(world):
        answer = client.get(path)
        assert MARKER not in answer.text, path
        assert "Porto" not in answer.text and "NVDA" not in answer.text, path
        assert same_tenant or SHARED not in answer.text, path
    hidden = pages(world)[2:4] + pages(world)[6:10] + pages(world)[12:13]
    shared = [pages(world)[11], pages(world)[13]]
    for path in hidden + ([] if same_tenant else shared):
        assert client.get(path).status_code == 404, path
    for path, data in posts(world)[:-2]:
        answer = client.post(path, data={**data, "csrf": csrf})
        # Erasing "alice" as beta's alice is allowed: it erases that principal, not acme's.
        allowed = (403, 404, 409, 422) + ((200,) if path == "/ui/erasure" else ())
        assert answer.status_code in allowed, (path, answer.status_code)
    _unchanged(world)


def test_a_tenant_key_views_only_users_of_its_own_tenant(app: TestClient, world: World) -> None:
    client = client_of(app)
    sign_in(client, world.tokens["beta"])
    assert client.get("/ui/facts").headers["location"] == "/ui/user"  # a user first
    page = client.get("/ui/user")
    assert "bob" in page.text and "alice" not in page.text and "carol" not in page.text
    csrf = csrf_of(page.text)
    client.post("/ui/user", data={"user": "alice", "csrf": csrf})
    assert MARKER not in client.get("/ui/facts?status=all").text  # beta's alice: nobody
    for bad in ("acme/alice", "../alice", "", "a" * 300):
        assert client.post("/ui/user", data={"user": bad, "csrf": csrf}).status_code == 422


def test_a_user_key_cannot_switch_user(app: TestClient, world: World) -> None:
    client = client_of(app)
    csrf = sign_in(client, world.tokens["bob"])
    assert client.post("/ui/user", data={"user": "alice", "csrf": csrf}).status_code == 403
    assert "cello" in client.get("/ui/facts").text


def test_a_read_only_key_changes_nothing(app: TestClient, world: World) -> None:
    client = client_of(app)
    csrf = sign_in(client, world.tokens["reader"])
    assert MARKER in client.get("/ui/facts").text
    for path, data in posts(world)[:-2]:
        answer = client.post(path, data={**data, "csrf": csrf})
        assert answer.status_code == 403, (path, answer.status_code)
    _unchanged(world)


# -- stored markup and headers --------------------------------------------------------


def test_stored_markup_renders_as_text_everywhere(app: TestClient, world: World) -> None:
    client = client_of(app)
    sign_in(client, world.tokens["alice"])
    shown = 0
    for path in pages(world):
        text = client.get(path).text
        assert RAW_SCRIPT not in text and "<img src=x" not in text, path
        assert '</memory><memory kind="profile">' not in text, path
        shown += "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert shown >= 4  # the payload was on the pages, escaped
    assert XSS.startswith(RAW_SCRIPT)


def test_every_inspector_answer_has_the_security_headers(app: TestClient, world: World) -> None:
    client = client_of(app)
    answers = [
        client.get("/ui/login"),
        client.get("/ui/static/inspector.css"),
        client.get("/ui/static/htmx.min.js"),
        client.get("/ui/facts"),  # a redirect
        client.get("/ui"),  # the redirect to /ui/
        client.get("/ui/nowhere"),
    ]
    sign_in(client, world.tokens["alice"])
    answers += [client.get(p) for p in pages(world)] + [client.get("/ui/facts/nope")]
    for answer in answers:
        csp = answer.headers["content-security-policy"]
        assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp
        assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
        assert answer.headers["x-frame-options"] == "DENY"
        assert answer.headers["x-content-type-options"] == "nosniff"
    assert answers[-1].status_code == 404


@pytest.mark.parametrize("method", ["GET", "HEAD", "POST"])
def test_the_bare_prefix_redirects_to_itself_whatever_the_host_says(
    app: TestClient, method: str
) -> None:
    """``/ui`` sends the browser to ``/ui/`` on the host it asked, never to a host named by
    a header (a cache or a log would keep ``http://evil.example/ui/``)."""
    client = client_of(app)
    for headers in ({}, {"Host": "evil.example"}, {"X-Forwarded-Host": "evil.example"}):
        answer = client.request(method, "/ui", headers=headers)
        assert answer.status_code == 307 and answer.headers["location"] == "/ui/", headers
        assert answer.headers["content-security-policy"] and answer.headers["cache-control"]
    assert client.get("/ui?next=//evil.example").headers["location"] == "/ui/"


def test_pages_hold_no_inline_script_or_style(app: TestClient, world: World) -> None:
    client = client_of(app)
    sign_in(client, world.tokens["alice"])
    for path in pages(world):
        text = client.get(path).text
        assert text.count("<script") == 1 and 'src="/ui/static/htmx.min.js"' in text, path
        assert "<style" not in text and " style=" not in text and " onclick=" not in text


def test_the_ui_is_not_in_the_openapi_document(app: TestClient) -> None:
    paths = app.get("/openapi.json").json()["paths"]
    assert paths and not any(p.startswith("/ui") for p in paths)


def test_the_wheel_ships_the_templates_and_static_files() -> None:
    from importlib.resources import files

    root = files("engram.server.inspector")
    for name in ("templates/base.html", "static/htmx.min.js", "static/htmx.LICENSE"):
        assert root.joinpath(name).is_file(), name
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    assert '"engram.server.inspector" = ["templates/*.html", "static/*"]' in pyproject.read_text()


def test_every_worker_opens_the_sessions_of_the_others(app: TestClient, world: World) -> None:
    client = client_of(app)
    sign_in(client, world.tokens["alice"])
    other_worker = open_app(ServeConfig(home=str(world.home), embedder="hash"))
    with TestClient(other_worker, follow_redirects=False) as second:
        second.cookies.set(SESSION_COOKIE, client.cookies[SESSION_COOKIE])
        assert MARKER in second.get("/ui/facts").text  # one secret: the home's keys.secret


def test_a_session_sealed_under_another_secret_or_expired_opens_nothing() -> None:
    sealed = Sealer(b"a" * 32).seal(Session.start("egk_x.YWNtZQ.secret"))
    assert Sealer(b"a" * 32).open(sealed) is not None
    assert Sealer(b"b" * 32).open(sealed) is None
    later = time.time() + MAX_AGE + 1
    assert Sealer(b"a" * 32).open(sealed, now=later) is None
    assert "secret" not in sealed and "egk_x" not in sealed


def test_a_sign_in_posted_from_another_site_is_refused(app: TestClient, world: World) -> None:
    """A page on another port of this host can plant the sign-in cookie (cookies ignore
    ports) and post the form with a key of its own: the browser marks that post
    same-site, and it signs no one in."""
    client = client_of(app)
    form = client.get("/ui/login")
    token = csrf_of(form.text)
    for site in ("same-site", "cross-site"):
        answer = client.post(
            "/ui/login",
            data={"token": world.tokens["alice"], "csrf": token},
            headers={"Sec-Fetch-Site": site},
        )
        assert answer.status_code == 403 and SESSION_COOKIE not in client.cookies
    answer = client.post(
        "/ui/login",
        data={"token": world.tokens["alice"], "csrf": token},
        headers={"Sec-Fetch-Site": "same-origin"},
    )
    assert answer.status_code == 303 and SESSION_COOKIE in client.cookies


def test_a_request_without_the_session_cookie_leaves_it_alone(
    app: TestClient, world: World
) -> None:
    """A link from another site arrives without the (SameSite=Strict) cookie: the answer
    sends the browser to sign in, and does not delete the session it still holds."""
    stranger = client_of(app)
    answer = stranger.get("/ui/facts")
    assert answer.status_code == 303
    assert SESSION_COOKIE not in answer.headers.get("set-cookie", "")
    client = client_of(app)
    sign_in(client, world.tokens["alice"])
    client.cookies.set(SESSION_COOKIE, "not-a-session")
    assert SESSION_COOKIE in client.get("/ui/facts").headers.get("set-cookie", "")
