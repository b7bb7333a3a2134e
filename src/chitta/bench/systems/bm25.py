"""``bm25``: an independent BM25 (Okapi, k1 = 1.5, b = 0.75) from the ``rank_bm25`` package.

Tokens are lower-case ``\\w+`` runs, no stemming or stop words: a plain reference point.
"""

from __future__ import annotations

import re

import numpy as np

from chitta.bench.locomo import Conversation
from chitta.errors import MissingExtra

_TOKEN = re.compile(r"\w+", re.UNICODE)


def tokens(text: str) -> list[str]:
    return [t.lower() for t in _TOKEN.findall(text)]


class Bm25System:
    name = "bm25"

    def __init__(self) -> None:
        self._index: dict[str, tuple[object, list[str]]] = {}

    def setup(self) -> None:
        try:
            import rank_bm25  # noqa: F401
        except ImportError:
            raise MissingExtra("bench", "the bm25 reference system") from None

    def load(self, realm: str, conversation: Conversation) -> None:
        from rank_bm25 import BM25Okapi

        corpus = [tokens(t.memory_text) for t in conversation.turns]
        self._index[realm] = (BM25Okapi(corpus), [t.id for t in conversation.turns])

    def search(self, realm: str, query: str, k: int) -> list[str]:
        index, ids = self._index[realm]
        scores = index.get_scores(tokens(query))  # type: ignore[attr-defined]
        top = np.argsort(-scores, kind="stable")[:k]
        return [ids[i] for i in top if scores[i] > 0]

    def close(self) -> None:
        self._index.clear()
