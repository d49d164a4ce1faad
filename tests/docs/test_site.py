"""The documentation site builds with ``mkdocs build --strict`` (a broken link, a missing
anchor, a page outside the navigation or an API name that does not resolve fails it), and
its API reference is generated from the docstrings."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from docs_blocks import ROOT

API = {
    "api/engram/index.html": ["engram.Memory", "engram.Principal", "engram.EngramError"],
    "api/memory/index.html": ["engram.memory.Memory.approve_held", "engram.memory.HeldWrite"],
    "api/stores/index.html": [
        "engram.stores.hot.owned.OwnedSaver",
        "engram.stores.cold.contract.ColdBackend",
        "engram.stores.documents.contract.DocumentStore",
    ],
    "api/tools/index.html": ["engram.tools.MemoryTool", "engram.tools.memory_tools"],
}


def _build(site: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(ROOT / "src")}
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)]
    return subprocess.run(
        [*command, "--config-file", str(ROOT / "mkdocs.yml")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_site_builds_strictly_with_every_page_and_the_api_reference(tmp_path: Path) -> None:
    site = tmp_path / "site"
    done = _build(site)
    assert done.returncode == 0, done.stderr
    assert "WARNING" not in done.stderr, done.stderr
    pages = sorted(
        p.relative_to(ROOT / "docs").with_suffix("") for p in (ROOT / "docs").rglob("*.md")
    )
    for page in pages:
        built = site / ("index.html" if page.name == "index" else page / "index.html")
        assert built.is_file(), f"docs/{page}.md was not built"
    for page, names in API.items():
        html = (site / page).read_text(encoding="utf-8")
        for name in names:
            assert f'id="{name}"' in html, f"{name} is missing from {page}"


def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n\nSee [the missing page](missing.md).\n")
    (tmp_path / "mkdocs.yml").write_text((ROOT / "mkdocs.yml").read_text().split("\nnav:")[0])
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "s")],
        cwd=tmp_path,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(ROOT / "src")},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode != 0 and "missing.md" in done.stderr
