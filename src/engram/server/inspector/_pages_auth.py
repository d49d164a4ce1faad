"""Sign in with an API key, choose the user a tenant-level key views, sign out."""

from __future__ import annotations

import secrets
from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import Response

from engram._principal import validate_id
from engram.errors import AccessDeniedError, AuthenticationError, InvalidInputError
from engram.server.inspector._session import (
    LOGIN_COOKIE,
    MAX_AGE,
    SESSION_COOKIE,
    Session,
    same_token,
)
from engram.server.inspector._web import (
    Acting,
    CsrfError,
    Inspector,
    Parts,
    Seen,
    back,
    clear_cookie,
    read_cookie,
    render,
    set_cookie,
)

router = APIRouter()
Text = Annotated[str, Form(max_length=4096)]


def _keep(request: Request, response: Response, parts: Inspector, session: Session) -> None:
    set_cookie(request, response, SESSION_COOKIE, parts.sealer.seal(session), MAX_AGE)


def _signed_in(request: Request, parts: Inspector) -> bool:
    session = parts.sealer.open(read_cookie(request, SESSION_COOKIE))
    if session is None:
        return False
    try:
        parts.served.authenticator.authenticate(session.token)
    except AuthenticationError:
        return False
    return True


def _login_page(request: Request, error: str | None, status: int = 200) -> Response:
    token = secrets.token_urlsafe(32)
    page = render(request, "login.html", {"csrf": token, "error": error}, status=status)
    set_cookie(request, page, LOGIN_COOKIE, token, 3600)
    return page


@router.get("/login")
def login_form(request: Request, parts: Parts) -> Response:
    """The sign-in form (straight to the pages when already signed in)."""
    if _signed_in(request, parts):
        return back(request, "/")
    return _login_page(request, None)


@router.post("/login")
def login(request: Request, parts: Parts, token: Text, csrf: Text) -> Response:
    """Verify the key, then seal it in the session cookie."""
    if not _from_this_origin(request):
        raise CsrfError("the sign-in form was posted from another site: sign in here")
    if not same_token(read_cookie(request, LOGIN_COOKIE) or "", csrf):
        raise CsrfError("the sign-in form is stale: reload the page")
    try:
        grant = parts.served.authenticator.authenticate(token.strip())
    except AuthenticationError:
        return _login_page(request, "That key is not valid.", 401)
    request.state.key_id = grant.key_id
    answer = back(request, "/user" if grant.user_id is None else "/")
    _keep(request, answer, parts, Session.start(token.strip()))
    clear_cookie(request, answer, LOGIN_COOKIE)
    return answer


def _from_this_origin(request: Request) -> bool:
    """Whether the browser says the form came from this origin. A page on another port of
    the same host can plant the sign-in cookie (cookies ignore ports) and post the form
    with it; the browser marks that post ``Sec-Fetch-Site: same-site``. A client that
    sends no such header (no browser) has no cookie to be tricked with."""
    return request.headers.get("sec-fetch-site", "same-origin") in ("same-origin", "none")


@router.post("/logout")
def logout(request: Request, who: Acting) -> Response:
    """End the session."""
    answer = back(request, "/login")
    clear_cookie(request, answer, SESSION_COOKIE)
    return answer


def _known_users(parts: Inspector, tenant_id: str) -> list[str]:
    keyring = getattr(parts.served.authenticator, "keyring", None)
    if keyring is None:
        return []
    return sorted({k.user_id for k in keyring.list(tenant_id) if k.user_id is not None})


@router.get("/user")
def choose_form(request: Request, parts: Parts, who: Seen) -> Response:
    """A tenant-level key picks the user of its tenant to view."""
    if not who.tenant_level:
        return back(request, "/")
    known = _known_users(parts, who.grant.tenant_id)
    return render(request, "user.html", {"known": known, "error": None}, who=who)


@router.post("/user")
def choose(request: Request, parts: Parts, who: Acting, user: Text) -> Response:
    """View ``user`` (of the key's own tenant: the tenant comes from the key alone)."""
    if not who.tenant_level:
        raise AccessDeniedError("a user-bound key views its own user")
    try:
        chosen = validate_id("user_id", user.strip())
    except InvalidInputError as exc:
        known = _known_users(parts, who.grant.tenant_id)
        context = {"known": known, "error": str(exc)}
        return render(request, "user.html", context, who=who, status=422)
    answer = back(request, "/")
    _keep(request, answer, parts, who.session.viewing(chosen))
    return answer
