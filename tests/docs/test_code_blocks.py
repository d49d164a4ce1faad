"""Every code block of README.md and docs/**/*.md runs as written (see ``docs_blocks.py`` for
the convention), and the convention itself is enforced."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from docs_blocks import ROOT, Block, BlockError, blocks_of, page_name, pages, parse

BASH_TIMEOUT = 600


def _tolerant(path: Path) -> list[Block]:
    try:
        return blocks_of(path)
    except BlockError:
        return []  # test_every_page_follows_the_convention reports it


def _pages_with(language: str) -> list[str]:
    return [page_name(p) for p in pages() if any(b.language == language for b in _tolerant(p))]


def _run_blocks(page: str, language: str) -> list[Block]:
    found = [b for b in blocks_of(ROOT / page) if b.language == language]
    assert found, f"{page} has no {language} block"
    return [b for b in found if b.runs]


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh working directory and ENGRAM_HOME, no other ENGRAM_* setting."""
    for name in list(os.environ):
        if name.startswith("ENGRAM_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("ENGRAM_HOME", str(tmp_path / ".engram"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("page", [page_name(p) for p in pages()])
def test_every_page_follows_the_convention(page: str) -> None:
    blocks_of(ROOT / page)


@pytest.mark.parametrize("page", _pages_with("python"))
def test_python_blocks_run_in_order_in_one_namespace(
    page: str, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    namespace: dict[str, object] = {"__name__": "__docs__"}
    for block in _run_blocks(page, "python"):
        padded = "\n" * (block.line - 1) + block.code  # tracebacks give the page's line
        exec(compile(padded, str(ROOT / page), "exec", dont_inherit=True), namespace)
    CHECKS.get((page, "python"), _nothing)(workdir, capsys.readouterr().out)


@pytest.mark.slow
@pytest.mark.timeout(BASH_TIMEOUT * 2)
@pytest.mark.parametrize("page", _pages_with("bash"))
def test_bash_blocks_run_in_order_in_one_directory(page: str, workdir: Path) -> None:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    outputs = []
    for block in _run_blocks(page, "bash"):
        done = _bash(block.code, workdir, env)
        assert done.returncode == 0, (
            f"{page}:{block.line}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
        )
        outputs.append(done.stdout)
    CHECKS.get((page, "bash"), _nothing)(workdir, "".join(outputs))


def _bash(code: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    command = ["bash", "-euo", "pipefail", "-c", code]
    return subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=BASH_TIMEOUT
    )


# -- what particular pages' blocks must have done, beyond running ------------------------


def _nothing(workdir: Path, out: str) -> None:
    del workdir, out


def _readme_python(workdir: Path, out: str) -> None:
    lines = out.splitlines()
    assert lines[0].startswith("held - held for review")
    assert 'thread_id="t1" checkpoint_id="c1"' in out
    assert "Risk tolerance is conservative" in lines
    assert lines[-1] == "1 fact erased"
    assert (workdir / ".engram" / "memory.db").exists()


def _documents_python(workdir: Path, out: str) -> None:
    del out
    assert (workdir / ".engram/documents/acme/PROGRESS.md").is_file()
    assert not (workdir / ".engram/documents/acme/learnings").exists()
    assert (workdir / ".engram/index/documents.db").is_file()


CHECKS: dict[tuple[str, str], Callable[[Path, str], None]] = {
    ("README.md", "python"): _readme_python,
    ("docs/documents.md", "python"): _documents_python,
}


def test_the_checked_pages_exist() -> None:
    for page, language in CHECKS:
        assert page in _pages_with(language), f"{page} has no {language} block to check"


# -- the convention itself -----------------------------------------------------------------


def test_blocks_are_found_with_language_line_and_marker() -> None:
    text = (
        "# Page\n\n```python\nx = 1\n```\n\n<!-- not run: starts a server -->\n```bash\n"
        "engram serve\n```\n\n```text\nout\n```\n\n- item:\n\n  ```python\n  y = x\n  ```\n"
    )
    found = parse(text, "p.md")
    assert [(b.language, b.line, b.code, b.runs) for b in found] == [
        ("python", 4, "x = 1", True),
        ("bash", 9, "engram serve", False),
        ("text", 13, "out", False),
        ("python", 19, "y = x", True),
    ]
    assert found[1].not_run == "starts a server"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("<!-- not run -->\n```bash\nls\n```\n", "needs a reason"),
        ("<!-- not run:   -->\n```bash\nls\n```\n", "needs a reason"),
        ("<!-- not run: slow -->\n\n```bash\nls\n```\n", "must directly precede"),
        ("```sh\nls\n```\n", "fence language 'sh'"),
        ("```\nls\n```\n", "fence language ''"),
        ("```yaml\na: 1\n```\n", "fence language 'yaml'"),
        ("```python\nx = 1\n", "never closed"),
    ],
)
def test_a_broken_convention_is_an_error(text: str, message: str) -> None:
    with pytest.raises(BlockError, match=message):
        parse(text, "p.md")


@pytest.mark.parametrize("code", ["false | true\necho unreachable", "echo $UNSET_NAME"])
def test_bash_blocks_stop_at_the_first_failure(code: str, tmp_path: Path) -> None:
    (block,) = parse(f"```bash\n{code}\n```\n", "page.md")
    done = _bash(block.code, tmp_path, {"PATH": os.environ["PATH"]})
    assert done.returncode != 0 and "unreachable" not in done.stdout
