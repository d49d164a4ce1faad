"""Documents: browse the tenant's and the user's Markdown, rendered and raw; edit with
conflict detection; search.

An edit form carries the digest of the text it showed; the save compares it with what
is stored now (``write_text(expected=...)``), so a save after someone else's never
overwrites it: the page shows both texts instead.
"""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Form, Query, Request
from fastapi.responses import Response

from engram.errors import StaleWriteError
from engram.server.inspector._web import Acting, Parts, Seen, back, render, to_html
from engram.stores.documents import digest_of
from engram.stores.documents.paths import private_to

router = APIRouter()
DocPath = Annotated[str, Query(min_length=1, max_length=1024)]


@router.get("/documents")
def documents(
    request: Request,
    parts: Parts,
    who: Seen,
    q: Annotated[str, Query(max_length=10_000)] = "",
) -> Response:
    """Every document the user may see (tenant-shared and their own), or search hits."""
    principal = who.acting("read")
    store = parts.served.memory.documents
    listed = store.list(principal)
    context = {
        "shared": [d for d in listed if private_to(d.path) is None],
        "own": [d for d in listed if private_to(d.path) is not None],
        "q": q,
        "hits": store.search(principal, q, k=10) if q.strip() else None,
    }
    return render(request, "documents.html", context, who=who)


@router.get("/documents/view")
def view(request: Request, parts: Parts, who: Seen, path: DocPath) -> Response:
    """One document, rendered and raw."""
    text = parts.served.memory.documents.read_text(who.acting("read"), path)
    context = {
        "path": path,
        "raw": text,
        "html": to_html(text),
        "may_write": who.grant.allows("write"),
    }
    return render(request, "document.html", context, who=who)


@router.get("/documents/edit")
def edit_form(request: Request, parts: Parts, who: Seen, path: DocPath) -> Response:
    """The edit form, holding the digest of the text it shows."""
    text = parts.served.memory.documents.read_text(who.acting("write"), path)
    context = {"path": path, "text": text, "digest": digest_of(text), "theirs": None}
    return render(request, "edit.html", context, who=who)


@router.post("/documents/edit")
def save(
    request: Request,
    parts: Parts,
    who: Acting,
    path: Annotated[str, Form(min_length=1, max_length=1024)],
    text: Annotated[str, Form(max_length=100_000)],
    digest: Annotated[str, Form(min_length=1, max_length=128)],
) -> Response:
    """Save unless someone saved since the form was shown (then: a conflict, both texts)."""
    principal = who.acting("write")
    store = parts.served.memory.documents
    text = text.replace("\r\n", "\n")
    try:
        store.write_text(principal, path, text, expected=digest)
    except StaleWriteError:
        theirs = store.read_text(principal, path)
        context = {"path": path, "text": text, "digest": digest_of(theirs), "theirs": theirs}
        return render(request, "edit.html", context, who=who, status=409)
    return back(request, f"/documents/view?path={quote(path, safe='/')}")
