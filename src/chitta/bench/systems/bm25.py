"""``bm25``: an independent BM25 (Okapi, k1 = 1.5, b = 0.75) from the ``rank_bm25`` package.

Tokens are lower-case ``\\w+`` runs without English stop words, no stemming: the setting that
reproduces the reference figures of DESIGN.md §6 on LoCoMo (recall@10 0.580 overall and 0.280
multi-hop here, against 0.585 and 0.278 quoted; without stop-word removal it scores 0.526 and
0.197).
"""

from __future__ import annotations

import re

import numpy as np

from chitta.bench.locomo import Conversation
from chitta.errors import MissingExtra

_TOKEN = re.compile(r"\w+", re.UNICODE)

# The usual English stop-word list (as NLTK's), frozen here rather than shared with chitta's
# keyword lane, so that the baseline never moves when chitta's own list changes.
_STOP_WORDS_TEXT = """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his himself
    she her hers herself it its itself they them their theirs themselves what which who whom
    this that these those am is are was were be been being have has had having do does did
    doing a an the and but if or because as until while of at by for with about against between
    into through during before after above below to from up down in out on off over under again
    further then once here there when where why how all any both each few more most other some
    such no nor not only own same so than too very s t can will just don should now"""
_STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split())


def tokens(text: str) -> list[str]:
    return [w for w in (t.lower() for t in _TOKEN.findall(text)) if w not in _STOP_WORDS]


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

    def search(self, realm: str, query: str, k: int, now_ms: int | None = None) -> list[str]:
        """BM25's best ``k``; ``now_ms`` is ignored (BM25 knows no time)."""
        index, ids = self._index[realm]
        scores = index.get_scores(tokens(query))  # type: ignore[attr-defined]
        top = np.argsort(-scores, kind="stable")[:k]
        return [ids[i] for i in top if scores[i] > 0]

    def close(self) -> None:
        self._index.clear()
