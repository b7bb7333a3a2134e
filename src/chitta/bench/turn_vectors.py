"""A benchmark's turn vectors kept on disk between runs (``--vector-cache``).

Embedding LongMemEval's 29,669 turns takes minutes on a laptop; a tuning loop that reruns the
same turns under other weights need not pay that each time. :class:`DocumentCache` wraps the
model: while :meth:`DocumentCache.documents` is on (a store loading turns, the dense
reference embedding them) vectors come from the cache and new ones are added to it; at any
other time (a question) it is the raw model, so no question's latency is flattered by a
cache a earlier run warmed.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from chitta.bench.scale.vectors import VectorCache, text_key
from chitta.embed.base import Embedder, Embedding, ModelIdentity
from chitta.errors import BadArgument


def cache_file(folder_or_file: Path, identity: ModelIdentity) -> Path:
    """The cache for ``identity``: ``folder_or_file`` itself if it names a ``.npz`` file, else
    a file named after the model (name and a digest of its identity) inside that folder, so
    that another model never reads this one's vectors."""
    if folder_or_file.suffix == ".npz":
        return folder_or_file
    digest = hashlib.sha256(json.dumps(identity.as_dict(), sort_keys=True).encode()).hexdigest()
    name = re.sub(r"[^\w.-]", "_", identity.name)
    return folder_or_file / f"turn-vectors-{name}-{digest[:12]}.npz"


class DocumentCache:
    """An embedder whose document embeddings are read from and added to a :class:`VectorCache`."""

    def __init__(self, inner: Embedder, path: Path) -> None:
        self.inner = inner
        self.path = path
        try:
            self.cache = VectorCache(path)
        except (OSError, ValueError, KeyError) as exc:
            raise BadArgument(f"{path} is not a vector cache this run can read ({exc})") from None
        self._documents = False
        self.hits = 0
        self.misses = 0

    def identity(self) -> ModelIdentity:
        return self.inner.identity()

    @contextmanager
    def documents(self) -> Iterator[None]:
        """Serve (and fill) the cache inside the block; saved when it ends."""
        self._documents = True
        try:
            yield
        finally:
            self._documents = False
            self.cache.save()

    def embed(self, texts: list[str]) -> Embedding:
        if not self._documents or not texts:
            return self.inner.embed(texts)
        vectors, missing = self.cache.lookup(texts)
        self.hits += len(texts) - len(missing)
        self.misses += len(missing)
        truncated = [text_key(t) in self.cache.truncated for t in texts]
        if not missing:
            assert vectors is not None
            return Embedding(vectors, tuple(truncated))
        fresh = self.inner.embed([texts[i] for i in missing])
        self.cache.add([texts[i] for i in missing], fresh.vectors, fresh.truncated)
        if vectors is None:
            return fresh
        vectors[missing] = fresh.vectors
        for place, flag in zip(missing, fresh.truncated, strict=True):
            truncated[place] = flag
        return Embedding(vectors, tuple(truncated))


@contextmanager
def serving_documents(embedder: object) -> Iterator[None]:
    """:meth:`DocumentCache.documents` if ``embedder`` is one, else nothing."""
    if isinstance(embedder, DocumentCache):
        with embedder.documents():
            yield
    else:
        yield
