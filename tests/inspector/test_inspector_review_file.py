"""The user's own review queue, edited by hand through the inspector's document editor: a
line in the earlier origin form with values of the wrong type never breaks the review
page, the REST listing, approving or discarding."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from inspector_support import World, seed, sign_in

from engram.server.app import ServeConfig, open_app

LINES = [
    '- 2026-01-01T00:00:00+00:00 | held | thread t1, checkpoint c1, as {"tags": 5} | Alice X',
    "- 2026-01-01T00:00:00+00:00 | held | thread t2, checkpoint c2, "
    'as {"slot": {"a": 1}, "source": "nonsense", "tags": [1, 2]} | Alice Y',
]
QUEUE = "review/alice.md"


@pytest.fixture
def world(tmp_path: Path) -> World:
    return seed(tmp_path / ".engram", agent=False)


@pytest.fixture
def client(world: World) -> Iterator[TestClient]:
    application = open_app(ServeConfig(home=str(world.home), embedder="hash"))
    with TestClient(application, follow_redirects=False) as found:
        yield found


def _append(client: TestClient, csrf: str, line: str) -> None:
    """Add ``line`` to the queue as a person would: the editor, a save."""
    page = client.get("/ui/documents/edit", params={"path": QUEUE}).text
    digest = re.search(r'name="digest" value="([^"]+)"', page)
    shown = re.search(r"<textarea[^>]*>(.*?)</textarea>", page, re.S)
    assert digest is not None and shown is not None
    text = html.unescape(shown.group(1)).rstrip("\n") + "\n" + line + "\n"
    form = {"csrf": csrf, "path": QUEUE, "digest": digest.group(1), "text": text}
    assert client.post("/ui/documents/edit", data=form).status_code == 303


@pytest.mark.parametrize("line", LINES, ids=["tags-int", "slot-dict"])
def test_a_hand_edited_queue_lists_approves_and_discards(
    client: TestClient, world: World, line: str
) -> None:
    csrf = sign_in(client, world.tokens["alice"])
    _append(client, csrf, line)
    text = line.rsplit(" | ", 1)[1]
    page = client.get("/ui/review")
    assert page.status_code == 200 and text in page.text
    api = {"Authorization": f"Bearer {world.tokens['alice']}"}
    listed = client.get("/v1/review", headers=api)
    assert listed.status_code == 200, listed.text
    ((entry,),) = [[e for e in listed.json() if e["text"] == text]]
    assert entry["slot"] is None and entry["kind"] == "fact"
    approved = client.post(f"/ui/review/{entry['id']}/approve", data={"csrf": csrf})
    assert approved.status_code == 303
    assert text in client.get("/ui/facts").text
    _append(client, csrf, line)
    again = [e for e in client.get("/v1/review", headers=api).json() if e["text"] == text]
    discarded = client.post(f"/v1/review/{again[0]['id']}/discard", headers=api)
    assert discarded.status_code == 200 and text not in client.get("/ui/review").text
