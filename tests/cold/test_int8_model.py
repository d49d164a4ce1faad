"""The int8 pass's ONNX model, written without the ``onnx`` package: the same model
``onnx.helper`` builds, exact in onnxruntime, and a search process never imports ``onnx``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from engram.backends.sqlite._vectors import _QUERY_ZERO, _onnxruntime, _session, int8_model

onnx = pytest.importorskip("onnx")  # (the onnx extra: installed by make test)
SRC = str(Path(__file__).resolve().parents[2] / "src")


def _reference(dim: int, rows: int) -> bytes:
    """The model as ``onnx.helper`` writes it (IR version 7, as the written one)."""
    helper, numpy_helper = onnx.helper, onnx.numpy_helper
    codes = onnx.TensorProto(name="codes", data_type=onnx.TensorProto.INT8, dims=[dim, rows])
    codes.data_location = onnx.TensorProto.EXTERNAL
    for key, value in (("location", "codes"), ("offset", "0"), ("length", str(dim * rows))):
        codes.external_data.add(key=key, value=value)
    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", ["q", "codes", "zero"], ["dots"])],
        "int8_scores",
        [helper.make_tensor_value_info("q", onnx.TensorProto.UINT8, [2, dim])],
        [helper.make_tensor_value_info("dots", onnx.TensorProto.INT32, [2, rows])],
        [codes, numpy_helper.from_array(np.array(_QUERY_ZERO, dtype=np.uint8), "zero")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    return bytes(model.SerializeToString())


@pytest.mark.parametrize(("dim", "rows"), [(1, 1), (32, 16), (384, 32768), (1536, 200_000)])
def test_the_written_model_is_the_one_onnx_helper_builds(dim: int, rows: int) -> None:
    written = onnx.ModelProto.FromString(int8_model(dim, rows))
    assert written == onnx.ModelProto.FromString(_reference(dim, rows))


def test_a_session_of_the_written_model_multiplies_exactly() -> None:
    runtime = _onnxruntime()
    if runtime is None:
        pytest.skip("onnxruntime missing or not exact on this CPU (engram uses float32 then)")
    rng = np.random.default_rng(3)
    codes = rng.integers(-127, 128, size=(300, 70)).astype(np.int8)
    query = rng.integers(0, 256, size=(2, 300)).astype(np.uint8)
    dots = _session(runtime, codes).run(None, {"q": query})[0]
    want = (query.astype(np.int64) - _QUERY_ZERO) @ codes.astype(np.int64)
    assert dots.dtype == np.int32 and np.array_equal(dots, want)


SEARCH = """
import sys
from engram.backends.sqlite import _index_file
from engram.backends.sqlite.cold import SQLiteColdBackend
from engram.recall import HashEmbedder
from engram.stores.cold import LongTermStore
_index_file.BLOCK = 16
store = LongTermStore(SQLiteColdBackend(sys.argv[1], quantize_from=1), embedder=HashEmbedder(32))
store.setup()
store.put_many([(("t",), f"k{i}", {"text": f"fact {i} topic {i % 7}"}) for i in range(100)])
store.search(("t",), query="topic 5", limit=3)
index = store.backend._indexes[HashEmbedder(32).model_id]
print(len(index.sessions), "onnx" in sys.modules, flush=True)
store.close()
"""


def test_a_process_searching_with_int8_sessions_never_imports_onnx(tmp_path: Path) -> None:
    if _onnxruntime() is None:
        pytest.skip("onnxruntime missing or not exact on this CPU (no sessions are built)")
    env = {**os.environ, "PYTHONPATH": SRC}
    done = subprocess.run(
        [sys.executable, "-c", SEARCH, str(tmp_path / "m.db")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    sessions, imported = done.stdout.split()
    assert int(sessions) == 6 and imported == "False"  # 6 sealed blocks of 16, onnx never loaded
