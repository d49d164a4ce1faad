"""An embedder for any OpenAI-compatible ``POST {base_url}/embeddings`` endpoint.

Works with OpenAI itself and with servers that copy its API (vLLM, Ollama,
LiteLLM, text-embeddings-inference...). Inputs are sent in batches; rate limits
(429) and server errors (5xx) are retried a bounded number of times; every
failure surfaces as :class:`~engram.errors.EmbeddingError` (or
:class:`~engram.errors.EmbeddingTimeoutError`) with the driver's exception
chained.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

import httpx
import numpy as np

from engram.errors import ConfigError, EmbeddingError, EmbeddingTimeoutError
from engram.recall._embedder import Vectors, normalise

DEFAULT_BASE_URL = "https://api.openai.com/v1"
KNOWN_DIMS: Mapping[str, int] = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
_RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})


def build_request(model: str, texts: Sequence[str], dimensions: int | None) -> dict[str, Any]:
    """The JSON body for one batch (empty texts become one space: OpenAI rejects "")."""
    body: dict[str, Any] = {"model": model, "input": [t if t.strip() else " " for t in texts]}
    if dimensions is not None:
        body["dimensions"] = dimensions
    return body


def parse_response(payload: Any, expected: int) -> Vectors:
    """Rows of an embeddings response, in input order, as unit float32 vectors."""
    try:
        items = sorted(payload["data"], key=lambda item: int(item["index"]))
        matrix = np.asarray([item["embedding"] for item in items], dtype=np.float32)
    except (KeyError, TypeError, ValueError) as exc:
        raise EmbeddingError(f"malformed embeddings response: {exc!r}") from exc
    if matrix.ndim != 2 or matrix.shape[0] != expected:
        raise EmbeddingError(f"expected {expected} embeddings, got shape {matrix.shape}")
    if not np.isfinite(matrix).all():
        raise EmbeddingError("embeddings response holds non-finite numbers")
    return normalise(matrix)


class OpenAIEmbedder:
    """Embeddings from an OpenAI-compatible HTTP API.

    ``api_key`` defaults to the ``api_key_env`` variable (``OPENAI_API_KEY``);
    without a key no ``Authorization`` header is sent (local servers). The
    ``base_url`` defaults to ``$OPENAI_BASE_URL`` or OpenAI's. The HTTP client
    is created on first use; :meth:`close` (or ``with``) releases it.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        dimensions: int | None = None,
        batch_size: int = 256,
        timeout: float = 30.0,
        max_retries: int = 2,
        backoff: float = 0.5,
    ) -> None:
        if not model:
            raise ConfigError("an OpenAI-compatible embedder needs a model name")
        self._model = model
        self._base_url = base_url
        self._api_key = api_key
        self._api_key_env = api_key_env
        self._dimensions = dimensions
        self._batch_size = batch_size
        self._timeout = timeout
        self._max_retries = max_retries
        self._backoff = backoff
        self._dim = dimensions or KNOWN_DIMS.get(model)
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        suffix = f"@{self._dimensions}" if self._dimensions else ""
        return f"openai:{self._model}{suffix}"

    @property
    def dim(self) -> int:
        """The vector length; asks the server once when the model is not known."""
        if self._dim is None:
            self._dim = int(self.embed(["dimension probe"]).shape[1])
        return self._dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        batches = [
            self._post(texts[start : start + self._batch_size])
            for start in range(0, len(texts), self._batch_size)
        ]
        if not batches:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        out = np.concatenate(batches)
        if self._dim is not None and out.shape[1] != self._dim:
            raise EmbeddingError(
                f"{self.model_id}: expected {self._dim}-d vectors, got {out.shape[1]}"
            )
        self._dim = int(out.shape[1])
        return out

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    def __enter__(self) -> OpenAIEmbedder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _post(self, texts: Sequence[str]) -> Vectors:
        body = build_request(self._model, texts, self._dimensions)
        for attempt in range(self._max_retries + 1):
            response = self._send(body)
            if response.status_code not in _RETRY_STATUS or attempt == self._max_retries:
                break
            time.sleep(self._backoff * 2**attempt)
        if response.status_code >= 400:
            raise EmbeddingError(
                f"{self._url()} answered {response.status_code}: {response.text[:200]}",
                status=response.status_code,
            )
        try:
            payload = response.json()
        except ValueError as exc:
            raise EmbeddingError(f"{self._url()} did not answer JSON") from exc
        return parse_response(payload, len(texts))

    def _send(self, body: dict[str, Any]) -> httpx.Response:
        try:
            return self._http().post(self._url(), json=body)
        except httpx.TimeoutException as exc:
            raise EmbeddingTimeoutError(f"{self._url()} timed out after {self._timeout}s") from exc
        except httpx.HTTPError as exc:
            raise EmbeddingError(f"{self._url()} failed: {exc}") from exc

    def _url(self) -> str:
        base = self._base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        return base.rstrip("/") + "/embeddings"

    def _http(self) -> httpx.Client:
        with self._lock:
            if self._client is None:
                key = self._api_key or os.environ.get(self._api_key_env)
                headers = {"Authorization": f"Bearer {key}"} if key else {}
                self._client = httpx.Client(timeout=self._timeout, headers=headers)
            return self._client
