"""Erasure with a typed confirmation, its report, the audit of past erasures; and the
latest evaluation results."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Form, Request
from fastapi.responses import Response

from engram.errors import InvalidInputError
from engram.server.erasure import erase_user
from engram.server.inspector._web import Acting, Parts, Seen, render, to_html
from engram.stores.audit import ErasureRecord

router = APIRouter()
EVAL_DIR = "eval"
"""Under the embedded home: where ``engram eval ... --out <home>/eval`` leaves results."""


def _audit(parts: Parts, who: Seen) -> list[ErasureRecord]:
    if parts.served.audit is None:
        return []
    found = parts.served.audit.list(who.grant.tenant_id)
    if who.grant.user_id is not None:
        found = [r for r in found if r.user_id == who.grant.user_id]
    return found


@router.get("/erasure")
def erasure(request: Request, parts: Parts, who: Seen) -> Response:
    """The erase form and the audit of past erasures (who, when, counts: no content)."""
    principal = who.principal()
    context = {
        "user": principal.user_id,
        "records": _audit(parts, who),
        "may_erase": who.grant.allows("erase"),
        "report": None,
        "error": None,
    }
    return render(request, "erasure.html", context, who=who)


@router.post("/erasure")
def forget(
    request: Request,
    parts: Parts,
    who: Acting,
    confirm: Annotated[str, Form(max_length=256)] = "",
) -> Response:
    """Erase the viewed user from every tier once their id is typed back; the report."""
    principal = who.acting("erase")
    if confirm != principal.user_id:
        error = f"type the user id {principal.user_id!r} exactly to erase them"
        page = _page(principal.user_id, _audit(parts, who), None, error)
        return render(request, "erasure.html", page, who=who, status=422)
    report = erase_user(parts.served.memory, parts.served.audit, principal, who.grant.key_id)
    page = _page(principal.user_id, _audit(parts, who), report.to_json(), None)
    return render(request, "erasure.html", page, who=who)


def _page(
    user: str, records: list[ErasureRecord], report: dict[str, Any] | None, error: str | None
) -> dict[str, Any]:
    return {"user": user, "records": records, "may_erase": True, "report": report, "error": error}


def _results(home: Path | None) -> list[tuple[str, str]]:
    if home is None or not (home / EVAL_DIR).is_dir():
        return []
    found = sorted((home / EVAL_DIR).glob("*.md"), key=lambda p: -p.stat().st_mtime)
    return [(p.stem, to_html(p.read_text(encoding="utf-8"))) for p in found[:10]]


@router.get("/eval")
def evaluation(request: Request, parts: Parts, who: Seen) -> Response:
    """The latest ``engram eval`` reports kept under the home, newest first."""
    home = parts.served.memory.where.home
    try:
        results = _results(home)
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInputError("the evaluation results could not be read") from exc
    context = {"results": results, "folder": str(home / EVAL_DIR) if home else None}
    return render(request, "eval.html", context, who=who)
