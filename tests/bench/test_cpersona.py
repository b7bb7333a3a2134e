"""The CPersona peer: its embedding endpoint always; the whole adapter when asked (-m peers).

The full test installs ``cpersona`` from PyPI into a virtualenv of its own, so it is left out
of the default run; ``make test-peers`` runs it.
"""

import http.client
import io
import json
import socket
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from chitta.bench.locomo import Conversation, Question, Turn
from chitta.bench.systems.cpersona import CPersonaSystem, EmbeddingEndpoint


def _post(url: str, body: dict) -> tuple[int, dict]:
    request = urllib.request.Request(
        url, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_endpoint_serves_chittas_vectors(embedder) -> None:
    endpoint = EmbeddingEndpoint(embedder.inner)
    endpoint.start()
    try:
        status, body = _post(endpoint.url, {"texts": ["a cat on a mat", "SQLite WAL"]})
        assert status == 200 and body["dimensions"] == 384
        want = embedder.inner.embed(["a cat on a mat", "SQLite WAL"]).vectors
        assert np.allclose(np.array(body["embeddings"]), want, atol=1e-6)
        base = endpoint.url.rsplit("/", 1)[0]
        with urllib.request.urlopen(base + "/capabilities", timeout=10) as response:
            caps = json.loads(response.read())
        assert caps["identity"]["dimensions"] == 384
        status, body = _post(base + "/embed", {"texts": "not a list"})
        assert status == 400 and "texts" in body["error"]
        assert endpoint.requests["POST /embed"] == 2 and endpoint.texts_embedded == 2
    finally:
        endpoint.stop()


def test_an_embed_round_trip_is_not_held_by_nagles_algorithm(embedder) -> None:
    """Headers and body leave together, and no segment waits for a delayed ACK: the accepted
    socket has TCP_NODELAY and a buffered writer (one send per response). The option is
    asserted, not a time: timings on a shared machine prove nothing either way."""
    endpoint = EmbeddingEndpoint(embedder.inner)
    endpoint.start()
    seen: list[tuple[int, bool]] = []
    assert endpoint._server is not None
    served = endpoint._server.RequestHandlerClass

    class Watched(served):  # type: ignore[misc, valid-type]
        def do_POST(self) -> None:
            nodelay = self.connection.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
            seen.append((nodelay, isinstance(self.wfile, io.BufferedWriter)))
            super().do_POST()

    endpoint._server.RequestHandlerClass = Watched
    host, port = endpoint._server.server_address[:2]
    client = http.client.HTTPConnection(host, port, timeout=10)
    try:
        for text in ("one text", "another text"):  # two calls on one kept-alive connection
            client.request("POST", "/embed", json.dumps({"texts": [text]}),
                           {"Content-Type": "application/json"})  # fmt: skip
            response = client.getresponse()
            assert response.status == 200 and len(json.loads(response.read())["embeddings"]) == 1
        assert seen == [(1, True), (1, True)]
    finally:
        client.close()
        endpoint.stop()


@pytest.mark.peers
def test_cpersona_recalls_stored_turns(embedder, tmp_path: Path) -> None:
    texts = [
        "Ann: We moved the database to SQLite with WAL mode last week.",
        "Bob: My dog Rex loves chasing tennis balls in the park.",
        "Ann: The quarterly report is due on the first Monday of March.",
        "Bob: I started learning the violin after my birthday.",
    ]
    turns = tuple(Turn(f"D1:{i + 1}", 1, t.split(":")[0], t.split(": ", 1)[1], None,
                       1_700_000_000_000) for i, t in enumerate(texts))  # fmt: skip
    question = Question("tiny", 0, "What does Rex chase?", 4, ("D1:2",))
    conversation = Conversation("tiny", turns, ((1, 1_700_000_000_000),), (question,))
    system = CPersonaSystem(embedder.inner, tmp_path / "cp")
    try:
        system.setup()
        system.load("tiny", conversation)
        ranked = system.search("tiny", "What does Bob's dog like to chase?", 4)
        assert ranked and ranked[0] == "D1:2"
        assert system.endpoint.texts_embedded >= 4  # CPersona used chitta's vectors
    finally:
        system.close()
