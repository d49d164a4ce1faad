"""The OpenAI-compatible embedder against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

from engram.errors import ConfigError, EmbeddingError, EmbeddingTimeoutError
from engram.recall import Embedder, HashEmbedder, OpenAIEmbedder

DIM = 16
REFERENCE = HashEmbedder(DIM)


@dataclass
class Behaviour:
    """What the fake server does; tests change it and read what it saw."""

    statuses: list[int] = field(default_factory=list)  # answered first, then 200s
    delay: float = 0.0
    body: bytes | None = None  # a raw body instead of embeddings
    requests: list[dict[str, Any]] = field(default_factory=list)
    auth: list[str | None] = field(default_factory=list)


def _embeddings(inputs: list[str]) -> dict[str, Any]:
    vectors = REFERENCE.embed(inputs) * 3.0  # not unit length: the client normalises
    data = [
        {"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)
    ]
    return {"object": "list", "model": "fake", "data": data[::-1]}  # out of order on purpose


def _handler(state: Behaviour) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers["Content-Length"])
            request = json.loads(self.rfile.read(length))
            state.requests.append({"path": self.path, **request})
            state.auth.append(self.headers.get("Authorization"))
            time.sleep(state.delay)
            status = state.statuses.pop(0) if state.statuses else 200
            body = state.body if state.body is not None and status == 200 else None
            if body is None:
                payload = _embeddings(request["input"]) if status == 200 else {"error": "boom"}
                body = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    return Handler


@pytest.fixture
def server() -> Iterator[tuple[str, Behaviour]]:
    state = Behaviour()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


def make(url: str, **kw: Any) -> OpenAIEmbedder:
    options: dict[str, Any] = {"base_url": url, "api_key": "sk-test", "backoff": 0.01, **kw}
    return OpenAIEmbedder("fake-embed", **options)


def test_vectors_come_back_in_order_and_unit_length(server: tuple[str, Behaviour]) -> None:
    url, state = server
    texts = ["I prefer conservative risk", "NVDA earnings", "", "café 東京"]
    with make(url) as embedder:
        out = embedder.embed(texts)
    expected = REFERENCE.embed([t if t.strip() else " " for t in texts])
    assert out.dtype == np.float32 and out.shape == (4, DIM)
    assert np.allclose(out, expected, atol=1e-6)
    assert state.requests[0]["path"] == "/v1/embeddings"
    assert state.requests[0]["model"] == "fake-embed"
    assert state.auth == ["Bearer sk-test"]


def test_inputs_are_sent_in_batches(server: tuple[str, Behaviour]) -> None:
    url, state = server
    texts = [f"fact number {i}" for i in range(10)]
    with make(url, batch_size=4) as embedder:
        out = embedder.embed(texts)
    assert [len(r["input"]) for r in state.requests] == [4, 4, 2]
    assert np.allclose(out, REFERENCE.embed(texts), atol=1e-6)


def test_dim_is_learned_from_the_server(server: tuple[str, Behaviour]) -> None:
    url, state = server
    with make(url) as embedder:
        assert isinstance(embedder, Embedder)
        assert embedder.dim == DIM and len(state.requests) == 1
        assert embedder.model_id == "openai:fake-embed"


def test_dimensions_are_requested_and_checked(server: tuple[str, Behaviour]) -> None:
    url, state = server
    with make(url, dimensions=8) as embedder, pytest.raises(EmbeddingError, match="8-d"):
        embedder.embed(["x"])
    assert state.requests[0]["dimensions"] == 8


def test_key_comes_from_the_environment(
    server: tuple[str, Behaviour], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, state = server
    monkeypatch.setenv("ENGRAM_TEST_KEY", "sk-env")
    with OpenAIEmbedder("m", base_url=url, api_key_env="ENGRAM_TEST_KEY") as embedder:
        embedder.embed(["x"])
    monkeypatch.delenv("ENGRAM_TEST_KEY")
    with OpenAIEmbedder("m", base_url=url, api_key_env="ENGRAM_TEST_KEY") as embedder:
        embedder.embed(["x"])
    assert state.auth == ["Bearer sk-env", None]


def test_rate_limits_and_server_errors_are_retried(server: tuple[str, Behaviour]) -> None:
    url, state = server
    state.statuses = [429, 503]
    with make(url, max_retries=2) as embedder:
        assert embedder.embed(["x"]).shape == (1, DIM)
    assert len(state.requests) == 3


def test_persistent_failure_is_a_typed_error(server: tuple[str, Behaviour]) -> None:
    url, state = server
    state.statuses = [500, 500, 500]
    with make(url, max_retries=1) as embedder, pytest.raises(EmbeddingError) as info:
        embedder.embed(["x"])
    assert info.value.status == 500 and len(state.requests) == 2


def test_client_errors_are_not_retried(server: tuple[str, Behaviour]) -> None:
    url, state = server
    state.statuses = [401]
    with make(url) as embedder, pytest.raises(EmbeddingError, match="401") as info:
        embedder.embed(["x"])
    assert info.value.status == 401 and len(state.requests) == 1


def test_timeouts_are_a_typed_error(server: tuple[str, Behaviour]) -> None:
    url, state = server
    state.delay = 1.0
    with make(url, timeout=0.2, max_retries=0) as embedder, pytest.raises(EmbeddingTimeoutError):
        embedder.embed(["x"])


@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b'{"data": [{"index": 0}]}',
        b'{"data": []}',
        b'{"data": [{"index": 0, "embedding": ["x"]}]}',
    ],
)
def test_malformed_answers_are_a_typed_error(server: tuple[str, Behaviour], body: bytes) -> None:
    url, state = server
    state.body = body
    with make(url) as embedder, pytest.raises(EmbeddingError):
        embedder.embed(["x"])


def test_unreachable_server_is_a_typed_error() -> None:
    with make("http://127.0.0.1:9/v1", timeout=2.0) as embedder, pytest.raises(EmbeddingError):
        embedder.embed(["x"])


def test_a_model_name_is_required() -> None:
    with pytest.raises(ConfigError):
        OpenAIEmbedder("")


def test_no_texts_no_request(server: tuple[str, Behaviour]) -> None:
    url, state = server
    with make(url, dimensions=16) as embedder:
        assert embedder.embed([]).shape == (0, 16)
    assert state.requests == []
