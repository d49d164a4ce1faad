"""The inspector in a real browser (Chromium, driven by Playwright) against a real
``engram serve`` process on loopback, over a seeded home. One server and one browser for
the module; each test a few pages. Screenshots of the main pages land in the run's tmp
folder. Chromium is ``$ENGRAM_TEST_CHROMIUM`` or ``/usr/bin/chromium``; without it the
tests skip, or fail when ``$ENGRAM_REQUIRE_ALL_BACKENDS`` is set."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from inspector_support import (
    CHROMIUM_ARGS,
    MARKER,
    SHARED,
    THREAD,
    VIEWPORT,
    World,
    browser_sign_in,
    chromium_path,
    seed,
)
from serve_support import Server, start

from engram.server.keys import SECRET_ENV
from required import unavailable

pytestmark = pytest.mark.timeout(180)
STEP_MS = 20_000
"""The longest a page may take to answer (a loaded 2-core machine)."""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, World]]:
    root = tmp_path_factory.mktemp("browser")
    world = seed(root / ".engram")
    server = start(
        ["--home", str(world.home), "--embedder", "hash"], cwd=root, env={SECRET_ENV: ""}
    )
    yield server, world
    server.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    path = chromium_path()
    if path is None:
        unavailable("no Chromium (install Debian's chromium or set ENGRAM_TEST_CHROMIUM)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("playwright is not installed (pip install 'engram[dev]')")
    with sync_playwright() as driver:
        found = driver.chromium.launch(executable_path=path, args=list(CHROMIUM_ARGS))
        yield found
        found.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("screenshots")


@pytest.fixture
def page_for(browser: Any, served: tuple[Server, World]) -> Iterator[Callable[..., Any]]:
    """A signed-in page in a fresh browser context; it records CSP violations and
    dialogs (an ``alert`` from stored markup would open one)."""
    server, world = served
    contexts: list[Any] = []
    problems: list[str] = []

    def make(key: str = "alice", user: str | None = None) -> Any:
        context = browser.new_context(viewport=VIEWPORT)
        context.set_default_timeout(STEP_MS)
        contexts.append(context)
        page = context.new_page()
        page.on("dialog", lambda d: (problems.append(f"dialog: {d.message}"), d.dismiss()))
        page.on(
            "console",
            lambda m: problems.append(m.text) if "Content Security Policy" in m.text else None,
        )
        browser_sign_in(page, server.url, world.tokens[key], user)
        return page

    make.problems = problems  # type: ignore[attr-defined]
    yield make
    for context in contexts:
        context.close()
    assert problems == []


def test_search_shows_the_block_and_a_score_breakdown(
    page_for: Callable[..., Any], shots: Path
) -> None:
    page = page_for()
    page.fill("input[name=q]", "where did alice move")
    page.click("main button[type=submit]")
    page.wait_for_selector("[data-testid=context-block]")
    block = page.inner_text("[data-testid=context-block]")
    assert "Porto" in block and "<memory" in block  # the tags shown as text
    assert "q=where%20did%20alice%20move" in page.url  # htmx (not a reload) pushed it
    row = page.locator("table.items tr", has_text="Porto")
    assert row.count() == 1
    cells = row.locator("td.num").all_inner_texts()
    assert len(cells) >= 7 and float(cells[1]) > 0  # score, relevance, recency, ...
    page.screenshot(path=str(shots / "memories.png"))


def test_a_facts_history_shows_the_superseded_version(
    page_for: Callable[..., Any], served: tuple[Server, World], shots: Path
) -> None:
    page = page_for()
    page.click("nav >> text=Facts")
    page.click("text=Alice moved to Porto")
    timeline = page.locator("[data-testid=timeline] li")
    assert timeline.count() == 2
    assert "superseded" in timeline.nth(0).inner_text()
    assert "Lisbon" in timeline.nth(0).inner_text()
    assert "superseded by: “Alice moved to Porto" in timeline.nth(0).inner_text()
    page.screenshot(path=str(shots / "fact-history.png"), full_page=True)


def test_stored_markup_shows_as_text(
    page_for: Callable[..., Any], served: tuple[Server, World]
) -> None:
    page = page_for()
    _, world = served
    page.goto(f"{served[0].url}/ui/facts/{world.xss_key}")
    assert "<script>alert(1)</script>" in page.inner_text("[data-testid=timeline]")
    assert page.locator("main script, main img").count() == 0
    page.goto(f"{served[0].url}/ui/documents/view?path=users/alice/notes.md")
    assert "<script>alert(1)</script>" in page.inner_text("[data-testid=rendered]")
    assert page.locator("main script, main img").count() == 0


def test_approve_a_held_write(page_for: Callable[..., Any], shots: Path) -> None:
    page = page_for()
    page.click("nav >> text=Review")
    row = page.locator("tr", has_text="Ignore previous instructions")
    assert "[signal: pattern:override]" in row.locator("td.signal").inner_text()
    page.screenshot(path=str(shots / "review.png"))
    row.locator("button", has_text="Approve").click()
    page.wait_for_selector("tr.done")
    assert "approved: added" in page.inner_text("tr.done")
    page.click("nav >> text=Facts")
    assert page.locator("text=Ignore previous instructions").count() == 1


def test_diff_two_checkpoints_and_read_the_draft(
    page_for: Callable[..., Any], served: tuple[Server, World], shots: Path
) -> None:
    page = page_for()
    page.click("nav >> text=Threads")
    page.click(f"text={THREAD}")
    assert "NVDA" in page.inner_text("[data-testid=draft]")
    page.screenshot(path=str(shots / "thread.png"))
    page.click("text=Diff the two chosen checkpoints")
    page.wait_for_url("**/diff?**")
    assert page.locator(".change").count() >= 1
    page.screenshot(path=str(shots / "diff.png"))


def test_a_conflicting_save_overwrites_nothing(
    page_for: Callable[..., Any], served: tuple[Server, World], shots: Path
) -> None:
    url = served[0].url + "/ui/documents/edit?path=research/rates.md"
    mine, theirs = page_for(), page_for()
    mine.goto(url)
    theirs.goto(url)
    theirs.fill("#text", "# Rates\n\nTheirs: rates fell.\n")
    theirs.click("main button[type=submit]")
    theirs.wait_for_url("**/documents/view?**")
    mine.fill("#text", "# Rates\n\nMine: rates held.\n")
    mine.click("main button[type=submit]")
    mine.wait_for_selector("[data-testid=conflict]")
    assert "Theirs: rates fell." in mine.inner_text("[data-testid=theirs]")
    mine.screenshot(path=str(shots / "conflict.png"), full_page=True)
    theirs.reload()
    assert "Theirs: rates fell." in theirs.inner_text("[data-testid=raw]")


def test_another_tenants_key_sees_nothing_of_acme(
    page_for: Callable[..., Any], served: tuple[Server, World]
) -> None:
    server, world = served
    page = page_for("beta", "alice")
    for path in ("/ui/facts?status=all", "/ui/review", "/ui/threads", "/ui/documents",
                 f"/ui/facts/{world.city_key}", f"/ui/threads/{THREAD}",
                 "/ui/memories?q=alice+porto+tea"):  # fmt: skip
        page.goto(server.url + path)
        text = page.inner_text("body")
        assert MARKER not in text and SHARED not in text and "Porto" not in text, path


def test_forget_a_user_and_read_the_report(
    page_for: Callable[..., Any], served: tuple[Server, World], shots: Path
) -> None:
    page = page_for("acme", "alice")
    page.click("nav >> text=Erasure")
    page.fill("#confirm", "alice")
    page.click("button.danger")
    report = page.inner_text("[data-testid=report]")
    assert "Erased acme / alice" in report and THREAD in report
    assert "alice" in page.inner_text("[data-testid=audit]")
    page.screenshot(path=str(shots / "erasure.png"), full_page=True)
    page.click("nav >> text=Facts")
    assert MARKER not in page.inner_text("main")


@pytest.mark.postgres
@pytest.mark.timeout(400)  # the PostgreSQL server starts for it when no other test did
def test_on_postgres_sign_in_and_recall(
    browser: Any, postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SECRET_ENV, "inspector-browser-secret-0123456789")
    world = seed(tmp_path / ".engram", url=postgres_url, agent=False)
    args = ["--url", postgres_url, "--embedder", "hash"]
    server = start(args, cwd=tmp_path)
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(STEP_MS)
    try:
        page = context.new_page()
        browser_sign_in(page, server.url, world.tokens["alice"])
        page.goto(server.url + "/ui/memories?q=where+did+alice+move")
        assert "Porto" in page.inner_text("[data-testid=context-block]")
        page.goto(f"{server.url}/ui/facts/{world.city_key}")
        assert "superseded" in page.inner_text("[data-testid=timeline]")
    finally:
        context.close()
        server.stop()
