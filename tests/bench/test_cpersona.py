"""The CPersona peer: its embedding endpoint always; the whole adapter when asked (-m peers).

The full test installs ``cpersona`` from PyPI into a virtualenv of its own, so it is left out
of the default run; ``make test-peers`` runs it.
"""

import json
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
