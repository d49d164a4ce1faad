"""What every inspector page uses: the signed-in viewer, CSRF checks, rendering, errors."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markdown_it import MarkdownIt

from engram._principal import Principal
from engram.errors import AccessDeniedError, AuthenticationError
from engram.server._deps import ServerState
from engram.server.auth import Grant
from engram.server.inspector._session import (
    CSRF_FIELD,
    CSRF_HEADER,
    HOST_PREFIX,
    SESSION_COOKIE,
    Sealer,
    Session,
    same_token,
)


class CsrfError(AccessDeniedError):
    """A state-changing request without the session's CSRF token."""


class UserNeeded(AccessDeniedError):
    """A tenant-level key has not chosen the user to view yet."""


@dataclass(frozen=True, slots=True)
class Inspector:
    """The inspector's parts: the server's memory and authenticator, the cookie sealer
    and the templates."""

    served: ServerState
    sealer: Sealer
    templates: Environment


_markdown = MarkdownIt("commonmark", {"html": False}).enable("table")
"""Markdown with raw HTML disabled: every tag in a document shows as text."""


def to_html(text: str) -> str:
    """``text`` rendered as Markdown, escape-safe (no raw HTML, no ``javascript:`` links)."""
    return str(_markdown.render(text))


def environment() -> Environment:
    """Templates of this package, every value escaped."""
    env = Environment(
        loader=PackageLoader("engram.server.inspector", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["stamp"] = _stamp
    return env


def _stamp(moment: Any) -> str:
    if moment is None:
        return "—"
    text = moment.isoformat(timespec="seconds") if hasattr(moment, "isoformat") else str(moment)
    return text.replace("+00:00", "Z")


def inspector(request: Request) -> Inspector:
    found = request.app.state.inspector
    assert isinstance(found, Inspector)
    return found


@dataclass(frozen=True, slots=True)
class Viewer:
    """Who is signed in: the verified grant and the session it came from."""

    grant: Grant
    session: Session

    @property
    def tenant_level(self) -> bool:
        return self.grant.user_id is None

    def principal(self) -> Principal:
        """The principal the pages act for (a tenant-level key's chosen user)."""
        if self.tenant_level and self.session.user is None:
            raise UserNeeded("choose a user to view")
        return self.grant.principal(self.session.user)

    def acting(self, scope: str) -> Principal:
        """:meth:`principal`, if the grant holds ``scope``."""
        self.grant.require(scope)
        return self.principal()


def viewer(request: Request) -> Viewer:
    """The signed-in viewer; the key is verified again on every request."""
    parts = inspector(request)
    session = parts.sealer.open(read_cookie(request, SESSION_COOKIE))
    if session is None:
        raise AuthenticationError("sign in")
    found = parts.served.authenticator.authenticate(session.token)
    request.state.key_id = found.key_id
    return Viewer(found, session)


async def checked(request: Request, who: Annotated[Viewer, Depends(viewer)]) -> Viewer:
    """The viewer of a state-changing request that carries the session's CSRF token."""
    given = request.headers.get(CSRF_HEADER)
    if given is None:
        form = await request.form()
        value = form.get(CSRF_FIELD)
        given = value if isinstance(value, str) else None
    if not same_token(who.session.csrf, given):
        raise CsrfError("the form is stale or forged: reload the page")
    return who


Seen = Annotated[Viewer, Depends(viewer)]
Acting = Annotated[Viewer, Depends(checked)]
Parts = Annotated[Inspector, Depends(inspector)]


def render(
    request: Request,
    template: str,
    context: Mapping[str, Any],
    *,
    who: Viewer | None = None,
    status: int = 200,
) -> HTMLResponse:
    """``template`` rendered with the page's base path, viewer and CSRF token."""
    parts = inspector(request)
    page = {
        "base": request.scope.get("root_path", "").rstrip("/"),
        "who": who,
        "csrf": who.session.csrf if who is not None else context.get("csrf", ""),
        **context,
    }
    html = parts.templates.get_template(template).render(page)
    return HTMLResponse(html, status_code=status)


def back(request: Request, path: str) -> Response:
    """Redirect (303) to an inspector ``path`` after a form post."""
    base = request.scope.get("root_path", "").rstrip("/")
    return RedirectResponse(base + path, status_code=303)


def secure(request: Request) -> bool:
    """Whether the page was served over https: the connection's scheme, or behind a proxy
    the ``X-Forwarded-Proto`` that uvicorn trusts from ``$FORWARDED_ALLOW_IPS`` (loopback
    by default)."""
    return request.url.scheme == "https"


def cookie_name(request: Request, name: str) -> str:
    """The inspector cookie ``name`` as this request's scheme spells it: over https
    ``__Host-<name>`` (Secure, ``Path=/``, no Domain, so no page of another origin can set
    it), over plain http ``name`` itself, where nothing keeps another port from setting it."""
    return HOST_PREFIX + name if secure(request) else name


def read_cookie(request: Request, name: str) -> str | None:
    """The cookie ``name`` under the spelling of this request's scheme only: over https a
    cookie planted under the plain name is not read."""
    return request.cookies.get(cookie_name(request, name))


def set_cookie(request: Request, response: Response, name: str, value: str, age: int) -> None:
    """Set the inspector cookie ``name``: HttpOnly, SameSite=Strict, for ``age`` seconds."""
    response.set_cookie(
        cookie_name(request, name),
        value,
        max_age=age,
        path=_cookie_path(request),
        httponly=True,
        samesite="strict",
        secure=secure(request),
    )


def clear_cookie(request: Request, response: Response, name: str) -> None:
    """Delete the inspector cookie ``name`` (with the attributes it was set with: a browser
    ignores a ``__Host-`` cookie header without Secure and ``Path=/``)."""
    response.delete_cookie(
        cookie_name(request, name),
        path=_cookie_path(request),
        httponly=True,
        samesite="strict",
        secure=secure(request),
    )


def _cookie_path(request: Request) -> str:
    if secure(request):
        return "/"  # what ``__Host-`` demands
    return str(request.scope.get("root_path", "")).rstrip("/") or "/"
