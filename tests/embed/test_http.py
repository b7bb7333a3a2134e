"""HttpEmbedder against a real local HTTP server speaking the OpenAI and Ollama contracts."""

from __future__ import annotations

import hashlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from chitta.config import EmbedSettings
from chitta.embed.breaker import BreakerState, CircuitBreaker
from chitta.embed.http import HttpEmbedder, endpoint_url
from chitta.embed.loader import build_embedder
from chitta.errors import BadArgument, CircuitOpen, EmbedBackendError

DIM = 8
SECRET = "my bank PIN is 4711"


def raw_vector(text: str, dim: int = DIM) -> list[float]:
    """The server's deterministic, deliberately not normalised vector for ``text``."""
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
    return (np.random.default_rng(seed).normal(size=dim) * 3.0).tolist()


def expected(texts: list[str]) -> np.ndarray:
    rows = np.array([raw_vector(t) for t in texts])
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


@dataclass
class ServerState:
    """What the fake backend should do, and what it saw."""

    url: str = ""
    mode: str = "ok"
    fail_after: int | None = None  # answer this many requests in all, then fail every other
    requests: int = 0
    paths: list[str] = field(default_factory=list)
    auth: list[str | None] = field(default_factory=list)
    batches: list[int] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)


class Handler(BaseHTTPRequestHandler):
    server: ThreadingHTTPServer

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        state: ServerState = self.server.state  # type: ignore[attr-defined]
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        texts: list[str] = request["input"]
        with state.lock:
            state.requests += 1
            seen = state.requests
            state.paths.append(self.path)
            state.auth.append(self.headers.get("Authorization"))
            state.batches.append(len(texts))
        mode = state.mode
        if state.fail_after is not None and seen > state.fail_after:
            mode = "500"
        if mode == "hang":
            state.release.wait(5)
            return
        if mode == "close":
            self.close_connection = True
            return
        if mode == "500":
            # Echoes the input, as some servers do: the client must not repeat it.
            self._send(500, json.dumps({"error": f"model crashed on {texts[0]!r}"}).encode())
            return
        if mode == "redirect":
            self._send(302, b"", {"Location": state.url + "/elsewhere"})
            return
        if mode == "garbage":
            self._send(200, b"<html>definitely not json</html>")
            return
        vectors = [raw_vector(t, 4 if mode == "dim4" else DIM) for t in texts]
        if mode == "wrong_count":
            vectors = vectors[:-1]
        elif mode == "non_numeric":
            vectors[0][0] = "0.5"  # type: ignore[call-overload]
        elif mode == "ragged":
            vectors[-1] = vectors[-1][:-1]
        if self.path == "/v1/embeddings":
            # Reversed on purpose: clients must order by 'index', not by position.
            data = [
                {"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)
            ]
            payload: object = {"object": "list", "data": data[::-1], "model": request["model"]}
            if mode == "no_data":
                payload = {"object": "list"}
        elif self.path == "/api/embed":
            payload = {"model": request["model"], "embeddings": vectors}
        else:
            self._send(404, b'{"error": "not found"}')
            return
        self._send(200, json.dumps(payload).encode())


@pytest.fixture
def server() -> Iterator[ServerState]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state = ServerState(url=f"http://127.0.0.1:{httpd.server_address[1]}")
    httpd.state = state  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    yield state
    state.release.set()
    httpd.shutdown()
    httpd.server_close()
    thread.join()


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


TEXTS = ["the cat sat on the mat", "remember the milk", SECRET, "ünïcødé ✓", "x" * 500]


@pytest.mark.parametrize(
    ("dialect", "path"), [("openai", "/v1/embeddings"), ("ollama", "/api/embed")]
)
def test_vectors_are_normalised_and_in_input_order(
    server: ServerState, dialect: str, path: str
) -> None:
    embedder = HttpEmbedder(server.url, "m", dialect=dialect, api_key="sk-test")
    result = embedder.embed(TEXTS)
    assert result.vectors.dtype == np.float32
    assert result.vectors.shape == (len(TEXTS), DIM)
    np.testing.assert_allclose(result.vectors, expected(TEXTS), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(result.vectors, axis=1), 1.0, rtol=1e-5)
    assert result.truncated == (False,) * len(TEXTS)
    assert server.paths == [path]
    assert server.auth == ["Bearer sk-test"]


def test_no_authorization_header_without_a_key(server: ServerState) -> None:
    HttpEmbedder(server.url, "m", dialect="openai").embed(["hello there"])
    assert server.auth == [None]


@pytest.mark.parametrize(
    ("suffix", "dialect", "path"),
    [
        ("/", "openai", "/v1/embeddings"),
        ("/v1", "openai", "/v1/embeddings"),
        ("/v1/", "openai", "/v1/embeddings"),
        ("/v1/embeddings", "openai", "/v1/embeddings"),
        ("/api", "ollama", "/api/embed"),
        ("/api/embed", "ollama", "/api/embed"),
        ("/api/embeddings", "ollama", "/api/embed"),
    ],
)
def test_url_forms(server: ServerState, suffix: str, dialect: str, path: str) -> None:
    embedder = HttpEmbedder(server.url + suffix, "m", dialect=dialect)
    embedder.embed(["some text"])
    assert server.paths == [path]


def test_endpoint_url_normalises_and_rejects() -> None:
    assert endpoint_url(" HTTP://LocalHost:11434/ ", "ollama") == "http://localhost:11434/api/embed"
    assert endpoint_url("https://api.example.com/v1", "openai") == (
        "https://api.example.com/v1/embeddings"
    )
    with pytest.raises(BadArgument, match="CHITTA_EMBED_URL"):
        endpoint_url("localhost:11434", "ollama")


def test_batches_of_64(server: ServerState) -> None:
    texts = [f"memory number {i}" for i in range(150)]
    result = HttpEmbedder(server.url, "m", dialect="ollama").embed(texts)
    assert server.batches == [64, 64, 22]
    np.testing.assert_allclose(result.vectors, expected(texts), rtol=1e-5, atol=1e-6)


def test_identity_probes_once_when_asked_first(server: ServerState) -> None:
    embedder = HttpEmbedder(server.url + "/", "nomic-embed-text", dialect="ollama")
    identity = embedder.identity()
    assert identity.name == "ollama:nomic-embed-text"
    assert identity.dim == DIM
    digest = f"ollama|{server.url}/api/embed|nomic-embed-text"
    assert identity.hash == hashlib.sha256(digest.encode()).hexdigest()
    assert embedder.identity() == identity
    assert server.requests == 1


def test_identity_after_embed_needs_no_probe(server: ServerState) -> None:
    embedder = HttpEmbedder(server.url, "text-embedding-3-small", dialect="openai")
    embedder.embed(["one text"])
    assert embedder.identity().name == "openai:text-embedding-3-small"
    assert embedder.identity().dim == DIM
    assert server.requests == 1
    assert embedder.stats()["dim"] == DIM


def test_empty_input_sends_nothing(server: ServerState) -> None:
    result = HttpEmbedder(server.url, "m").embed([])
    assert result.vectors.shape[0] == 0
    assert server.requests == 0


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("500", "answered HTTP 500"),
        ("redirect", "HTTP 302"),
        ("garbage", "invalid JSON: <html>definitely not json</html>"),
        ("wrong_count", "answered 4 vectors for 5 texts"),
        ("non_numeric", "non-numeric values"),
        ("ragged", "inconsistent dimension [7, 8]"),
        ("no_data", "without a 'data' list"),
    ],
)
def test_bad_answers_are_specific_errors(server: ServerState, mode: str, message: str) -> None:
    server.mode = mode
    embedder = HttpEmbedder(server.url, "m", dialect="openai")
    with pytest.raises(EmbedBackendError) as info:
        embedder.embed(TEXTS)
    assert not isinstance(info.value, CircuitOpen)
    assert message in str(info.value)
    assert server.url in str(info.value)
    assert SECRET not in str(info.value)  # memories are private, even in errors


def test_error_body_is_quoted_with_the_input_blanked(server: ServerState) -> None:
    server.mode = "500"
    with pytest.raises(EmbedBackendError) as info:
        HttpEmbedder(server.url, "m", dialect="ollama").embed([SECRET])
    assert "model crashed on" in str(info.value)
    assert "<input text>" in str(info.value)
    assert SECRET not in str(info.value)


def test_changed_dimension_is_an_error(server: ServerState) -> None:
    embedder = HttpEmbedder(server.url, "m", dialect="ollama")
    embedder.embed(["first"])
    server.mode = "dim4"
    with pytest.raises(EmbedBackendError, match="dimension 4, earlier 8"):
        embedder.embed(["second"])


def test_timeout(server: ServerState) -> None:
    server.mode = "hang"
    embedder = HttpEmbedder(server.url, "m", dialect="ollama", timeout_s=0.2)
    start = time.monotonic()
    with pytest.raises(EmbedBackendError, match=r"no answer within 0\.2 s"):
        embedder.embed(["slow"])
    assert time.monotonic() - start < 2


def test_connection_closed_without_answer(server: ServerState) -> None:
    server.mode = "close"
    with pytest.raises(EmbedBackendError, match="closed the connection|reset"):
        HttpEmbedder(server.url, "m", dialect="openai").embed(["hello"])


def test_connection_refused() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    # Nothing listens on the port now.
    embedder = HttpEmbedder(f"http://127.0.0.1:{port}", "m", dialect="ollama")
    with pytest.raises(EmbedBackendError, match="connection refused"):
        embedder.embed(["hello"])


def test_breaker_opens_fails_fast_and_recovers(server: ServerState) -> None:
    clock = FakeClock()
    breaker = CircuitBreaker(clock=clock)
    embedder = HttpEmbedder(server.url, "m", dialect="ollama", breaker=breaker)
    server.mode = "500"
    for _ in range(3):
        with pytest.raises(EmbedBackendError) as info:
            embedder.embed(["hello"])
        assert not isinstance(info.value, CircuitOpen)
    assert server.requests == 3
    with pytest.raises(CircuitOpen, match=r"retrying in 60 s.*HTTP 500"):
        embedder.embed(["hello"])
    assert server.requests == 3  # refused without touching the server
    assert embedder.stats()["breaker"]["state"] == "open"

    server.mode = "ok"
    clock.now += 30
    with pytest.raises(CircuitOpen, match="retrying in 30 s"):
        embedder.embed(["hello"])
    assert server.requests == 3

    clock.now += 30
    assert breaker.state is BreakerState.HALF_OPEN
    result = embedder.embed(["hello"])
    np.testing.assert_allclose(result.vectors, expected(["hello"]), rtol=1e-5, atol=1e-6)
    assert server.requests == 4
    assert breaker.state is BreakerState.CLOSED
    assert embedder.stats()["breaker"]["consecutive_failures"] == 0


def test_from_settings_requires_url_and_model() -> None:
    with pytest.raises(BadArgument, match="CHITTA_EMBED_URL"):
        HttpEmbedder.from_settings(EmbedSettings(backend="ollama", model="m"))
    with pytest.raises(BadArgument, match="CHITTA_EMBED_MODEL"):
        HttpEmbedder.from_settings(EmbedSettings(backend="openai", url="http://127.0.0.1:1"))
    with pytest.raises(BadArgument):
        HttpEmbedder.from_settings(EmbedSettings(backend="onnx", url="http://x", model="m"))


def test_from_settings_carries_key_and_timeout(server: ServerState) -> None:
    settings = EmbedSettings(
        backend="openai", url=server.url, model="m", api_key="sk-abc", timeout_s=2.5
    )
    embedder = HttpEmbedder.from_settings(settings)
    assert embedder.timeout_s == 2.5
    embedder.embed(["hello"])
    assert server.auth == ["Bearer sk-abc"]
    assert "sk-abc" not in json.dumps(embedder.stats())


def test_through_the_loader_with_cache(server: ServerState) -> None:
    embedder = build_embedder(EmbedSettings(backend="ollama", url=server.url, model="m"))
    first = embedder.embed(["alpha memory", "beta memory"])
    np.testing.assert_allclose(
        first.vectors, expected(["alpha memory", "beta memory"]), rtol=1e-5, atol=1e-6
    )
    again = embedder.embed(["beta memory", "alpha memory"])
    np.testing.assert_array_equal(again.vectors, first.vectors[::-1])
    assert server.requests == 1  # the second call was served from the cache
    assert embedder.stats()["hits"] == 2
    assert embedder.identity().name == "ollama:m"
    assert embedder.identity().dim == DIM
