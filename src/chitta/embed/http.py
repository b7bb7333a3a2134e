"""Remote embedders over HTTP: the OpenAI ``/v1/embeddings`` and Ollama ``/api/embed`` APIs.

Standard library only (urllib). Every request goes through a :class:`CircuitBreaker`, so a
backend that is down costs three slow failures and then fails fast until its cooldown ends.
Error messages name the endpoint and the cause but never the texts: memories are private.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import threading
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

import numpy as np

from chitta.config import EmbedSettings
from chitta.embed.base import Embedding, ModelIdentity
from chitta.embed.breaker import CircuitBreaker
from chitta.errors import BadArgument, EmbedBackendError

#: Texts per request; large batches are split so no single request is huge.
BATCH_SIZE = 64
#: Characters of an error body quoted in messages.
EXCERPT_CHARS = 200
DIALECTS = ("openai", "ollama")
PROBE_TEXT = "dimension probe"


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Refuses redirects.

    urllib would turn a redirected POST into a bodiless GET and forward the Authorization
    header to whatever host the redirect names; an embedding endpoint has no reason to move.
    """

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


def endpoint_url(url: str, dialect: str) -> str:
    """The full embeddings endpoint for a base ``url``, normalised (lower-case scheme/host)."""
    parts = urllib.parse.urlsplit(url.strip())
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        raise BadArgument(f"CHITTA_EMBED_URL must be an http(s) URL, got {url!r}")
    path = parts.path.rstrip("/")
    if dialect == "openai":
        if path.endswith("/embeddings"):
            pass
        elif path.endswith("/v1"):
            path += "/embeddings"
        else:
            path += "/v1/embeddings"
    else:
        if path.endswith("/api/embeddings"):
            # Ollama's legacy single-prompt endpoint; /api/embed is its batch successor.
            path = path[: -len("/embeddings")] + "/embed"
        elif path.endswith("/api/embed"):
            pass
        elif path.endswith("/api"):
            path += "/embed"
        else:
            path += "/api/embed"
    return urllib.parse.urlunsplit(
        (parts.scheme.lower(), parts.netloc.lower(), path, parts.query, "")
    )


class HttpEmbedder:
    """Embeds text with a remote model that speaks the OpenAI or the Ollama embeddings API."""

    def __init__(
        self,
        url: str,
        model: str,
        *,
        dialect: str = "openai",
        api_key: str | None = None,
        timeout_s: float = 30.0,
        breaker: CircuitBreaker | None = None,
        batch_size: int = BATCH_SIZE,
    ) -> None:
        if dialect not in DIALECTS:
            raise BadArgument(f"embedding dialect must be openai or ollama, got {dialect!r}")
        if not model or not model.strip():
            raise BadArgument("CHITTA_EMBED_MODEL must name the model to ask the backend for")
        if timeout_s <= 0:
            raise BadArgument(f"CHITTA_EMBED_TIMEOUT_S must be positive, got {timeout_s}")
        if batch_size < 1:
            raise BadArgument(f"batch_size must be at least 1, got {batch_size}")
        self.dialect = dialect
        self.model = model.strip()
        self.endpoint = endpoint_url(url, dialect)
        self.timeout_s = timeout_s
        self.batch_size = batch_size
        self.breaker = breaker or CircuitBreaker(name=f"{dialect} embedding backend")
        self._api_key = api_key
        self._opener = urllib.request.build_opener(_NoRedirect)
        self._hash = hashlib.sha256(f"{dialect}|{self.endpoint}|{self.model}".encode()).hexdigest()
        self._dim: int | None = None
        self._lock = threading.Lock()
        self._requests = 0

    @classmethod
    def from_settings(
        cls, settings: EmbedSettings, *, breaker: CircuitBreaker | None = None
    ) -> HttpEmbedder:
        """The embedder the ``CHITTA_EMBED_*`` settings describe."""
        if settings.backend not in DIALECTS:
            raise BadArgument(
                f"HttpEmbedder serves the openai and ollama backends, not {settings.backend!r}"
            )
        example = (
            "http://localhost:11434" if settings.backend == "ollama" else "https://api.openai.com"
        )
        if not settings.url:
            raise BadArgument(
                f"the {settings.backend} embedding backend needs CHITTA_EMBED_URL (e.g. {example})"
            )
        if not settings.model:
            raise BadArgument(
                f"the {settings.backend} embedding backend needs CHITTA_EMBED_MODEL "
                "(the model name the endpoint serves)"
            )
        return cls(
            settings.url,
            settings.model,
            dialect=settings.backend,
            api_key=settings.api_key,
            timeout_s=settings.timeout_s,
            breaker=breaker,
        )

    def identity(self) -> ModelIdentity:
        """Name, dimension and hash; the dimension is learned from the first answer."""
        if self._dim is None:
            self.embed([PROBE_TEXT])
        assert self._dim is not None  # set by any successful embed
        return ModelIdentity(name=f"{self.dialect}:{self.model}", dim=self._dim, hash=self._hash)

    def embed(self, texts: list[str]) -> Embedding:
        """Unit vectors for ``texts``, in their order."""
        if not texts:
            return Embedding(np.zeros((0, self._dim or 0), np.float32), ())
        parts = [
            self.breaker.call(self._request, texts[start : start + self.batch_size])
            for start in range(0, len(texts), self.batch_size)
        ]
        vectors = np.concatenate(parts) if len(parts) > 1 else parts[0]
        # The remote truncates over-long input silently and does not say so, so nothing can
        # be marked truncated here.
        return Embedding(vectors, (False,) * len(texts))

    def stats(self) -> dict[str, Any]:
        """Endpoint, model, requests sent and the breaker's state, for status display."""
        return {
            "backend": self.dialect,
            "endpoint": self.endpoint,
            "model": self.model,
            "dim": self._dim,
            "requests": self._requests,
            "breaker": self.breaker.stats(),
        }

    # --- one request -------------------------------------------------------------------------

    def _request(self, texts: list[str]) -> np.ndarray:
        """POST one batch and return its validated, normalised vectors."""
        body = json.dumps({"model": self.model, "input": texts}).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        request = urllib.request.Request(self.endpoint, data=body, headers=headers, method="POST")
        with self._lock:
            self._requests += 1
        where = f"embedding backend {self.endpoint}"
        try:
            # The timeout bounds each socket operation (connect, each read), not the total.
            with self._opener.open(request, timeout=self.timeout_s) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            try:
                detail = exc.read()
            except (OSError, http.client.HTTPException):
                detail = b""
            hint = (
                " (redirects are not followed: set the final URL)" if 300 <= exc.code < 400 else ""
            )
            excerpt = _excerpt(detail, texts)
            raise EmbedBackendError(
                f"{where} answered HTTP {exc.code} {exc.reason}{hint}"
                + (f": {excerpt}" if excerpt else "")
            ) from None
        except urllib.error.URLError as exc:
            raise EmbedBackendError(f"{where}: {_describe(exc.reason, self.timeout_s)}") from None
        except (OSError, http.client.HTTPException) as exc:
            raise EmbedBackendError(f"{where}: {_describe(exc, self.timeout_s)}") from None
        try:
            payload = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise EmbedBackendError(
                f"{where} answered invalid JSON: {_excerpt(raw, texts) or '(empty body)'}"
            ) from None
        rows = self._rows(payload, where)
        if len(rows) != len(texts):
            raise EmbedBackendError(f"{where} answered {len(rows)} vectors for {len(texts)} texts")
        return self._vectors(rows, where)

    def _rows(self, payload: Any, where: str) -> list[Any]:
        """The list of vectors in a response, in input order."""
        if self.dialect == "ollama":
            rows = payload.get("embeddings") if isinstance(payload, dict) else None
            if not isinstance(rows, list):
                raise EmbedBackendError(
                    f"{where} answered JSON without an 'embeddings' list "
                    f"({_keys(payload)}); is it an Ollama /api/embed endpoint?"
                )
            return rows
        data = payload.get("data") if isinstance(payload, dict) else None
        if not isinstance(data, list):
            raise EmbedBackendError(
                f"{where} answered JSON without a 'data' list "
                f"({_keys(payload)}); is it an OpenAI-compatible /v1/embeddings endpoint?"
            )
        if not all(isinstance(item, dict) and "embedding" in item for item in data):
            raise EmbedBackendError(f"{where} answered 'data' items without an 'embedding'")
        indices = [item.get("index", position) for position, item in enumerate(data)]
        # Some compatible servers omit 'index'; then the list order is the input order.
        if not all(type(i) is int for i in indices) or sorted(indices) != list(range(len(data))):
            raise EmbedBackendError(
                f"{where} answered 'data' whose indices are not 0..{len(data) - 1}"
            )
        return [item["embedding"] for _, item in sorted(zip(indices, data, strict=True))]

    def _vectors(self, rows: list[Any], where: str) -> np.ndarray:
        """Check rows are equal-length numeric lists of the known dimension; L2-normalise."""
        if not all(isinstance(row, list) for row in rows):
            raise EmbedBackendError(f"{where} answered an embedding that is not a list")
        dims = {len(row) for row in rows}
        if len(dims) > 1:
            raise EmbedBackendError(
                f"{where} answered vectors of inconsistent dimension {sorted(dims)}"
            )
        dim = dims.pop()
        if dim == 0:
            raise EmbedBackendError(f"{where} answered empty vectors")
        array = np.asarray(rows)
        # Booleans and numeric strings would be coerced silently by a float dtype; check first.
        if array.dtype.kind not in "iuf" or any(type(x) is bool for row in rows for x in row):
            raise EmbedBackendError(f"{where} answered non-numeric values in an embedding")
        array = array.astype(np.float64)
        if not np.isfinite(array).all():
            raise EmbedBackendError(f"{where} answered NaN or infinite values in an embedding")
        norms = np.linalg.norm(array, axis=1, keepdims=True)
        if (norms == 0).any():
            raise EmbedBackendError(f"{where} answered an all-zero vector")
        with self._lock:
            if self._dim is None:
                self._dim = dim
            elif dim != self._dim:
                raise EmbedBackendError(
                    f"{where} answered vectors of dimension {dim}, earlier {self._dim}: "
                    "did the model behind the endpoint change?"
                )
        # Remote models may or may not normalise; cosine scoring needs unit length.
        return (array / norms).astype(np.float32)


def _describe(reason: object, timeout_s: float) -> str:
    """A short cause for a transport failure."""
    if isinstance(reason, TimeoutError):
        return f"no answer within {timeout_s:g} s (timeout)"
    if isinstance(reason, ConnectionRefusedError):
        return "connection refused (is the server running?)"
    if isinstance(reason, http.client.RemoteDisconnected):
        return "the server closed the connection without answering"
    if isinstance(reason, ConnectionResetError):
        return "the connection was reset by the server"
    if isinstance(reason, http.client.HTTPException):
        return f"broken HTTP answer ({type(reason).__name__})"
    return f"cannot connect: {reason}"


def _excerpt(body: bytes, texts: list[str]) -> str:
    """The start of a response body, one line, with any echoed input text blanked out."""
    text = body.decode("utf-8", errors="replace")
    # Best effort: servers sometimes quote the input in error messages; memories are private.
    for item in texts:
        if len(item) >= 4:
            text = text.replace(item, "<input text>")
            text = text.replace(json.dumps(item)[1:-1], "<input text>")
    text = " ".join(text.split())
    return text[:EXCERPT_CHARS] + ("..." if len(text) > EXCERPT_CHARS else "")


def _keys(payload: Any) -> str:
    """What a JSON payload is, for an error message, without its values."""
    if isinstance(payload, dict):
        return "keys: " + ", ".join(sorted(str(k) for k in payload)[:8])
    return f"a JSON {type(payload).__name__}"
