"""Screenshots of the inspector's main pages for the docs (``docs/images/inspector-*.png``).

    python tests/inspector/screenshots.py [OUT_DIR]     # default: docs/images

Seeds a home in a temporary folder (the data the tests use), starts a real
``engram serve`` on loopback, signs in with Chromium (``$ENGRAM_TEST_CHROMIUM`` or
``/usr/bin/chromium``) at 1280x800 and saves each page as a palette PNG (small files).
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "server")]

from inspector_support import (  # noqa: E402
    CHROMIUM_ARGS,
    THREAD,
    VIEWPORT,
    World,
    browser_sign_in,
    chromium_path,
    seed,
)
from serve_support import start  # noqa: E402

from engram.server.keys import SECRET_ENV  # noqa: E402

Step = Callable[[object, str, World], None]


def _memories(page: object, base: str, world: World) -> None:
    page.goto(base + "/ui/memories?q=where+does+alice+live+and+what+does+she+drink")  # type: ignore[attr-defined]


def _fact(page: object, base: str, world: World) -> None:
    page.goto(f"{base}/ui/facts/{world.city_key}")  # type: ignore[attr-defined]


def _diff(page: object, base: str, world: World) -> None:
    first, last = world.checkpoints[-1], world.checkpoints[0]
    page.goto(f"{base}/ui/threads/{THREAD}/diff?from={first}&to={last}")  # type: ignore[attr-defined]


def _visit(path: str) -> Step:
    def step(page: object, base: str, world: World) -> None:
        page.goto(base + path)  # type: ignore[attr-defined]

    return step


def _forget(page: object, base: str, world: World) -> None:
    page.goto(base + "/ui/erasure")  # type: ignore[attr-defined]
    page.fill("#confirm", "alice")  # type: ignore[attr-defined]
    page.click("button.danger")  # type: ignore[attr-defined]
    page.wait_for_selector("[data-testid=report]")  # type: ignore[attr-defined]


PAGES: tuple[tuple[str, Step], ...] = (
    ("memories", _memories),
    ("facts", _visit("/ui/facts?status=all")),
    ("fact-history", _fact),
    ("review", _visit("/ui/review")),
    ("thread", _visit(f"/ui/threads/{THREAD}")),
    ("diff", _diff),
    ("document", _visit("/ui/documents/view?path=users/alice/notes.md")),
    ("erasure", _forget),
)
"""Name and how to reach each page, in order (the erasure last: it erases Alice)."""


def _compress(path: Path) -> None:
    from PIL import Image

    with Image.open(path) as image:
        small = image.convert("RGB").quantize(colors=128)
    small.save(path, optimize=True)


def main(out: Path) -> list[Path]:
    from playwright.sync_api import sync_playwright

    executable = chromium_path()
    if executable is None:
        raise SystemExit("no Chromium: install Debian's chromium or set ENGRAM_TEST_CHROMIUM")
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        world = seed(root / ".engram")
        args = ["--home", str(world.home), "--embedder", "hash"]
        server = start(args, cwd=root, env={SECRET_ENV: ""})
        try:
            return _shoot(sync_playwright, executable, server.url, world, out)
        finally:
            server.stop()


def _shoot(
    driver: Callable[[], object], executable: str, base: str, world: World, out: Path
) -> list[Path]:
    saved = []
    with driver() as playwright:  # type: ignore[attr-defined]
        browser = playwright.chromium.launch(executable_path=executable, args=list(CHROMIUM_ARGS))
        page = browser.new_context(viewport=VIEWPORT).new_page()
        browser_sign_in(page, base, world.tokens["alice"])
        for name, step in PAGES:
            step(page, base, world)
            path = out / f"inspector-{name}.png"
            page.screenshot(path=str(path))
            _compress(path)
            saved.append(path)
        browser.close()
    return saved


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE.parents[1] / "docs" / "images"
    for made in main(target):
        print(f"{made} {made.stat().st_size // 1024} KB")
