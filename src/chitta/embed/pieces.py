"""A memory's pieces: its sentences, embedded beside the whole text.

One vector for a whole memory blurs what each of its sentences says: "Hey, hope all's good!
I had a quiet weekend after we went camping with my fam two weekends ago." sits between a
greeting and a camping trip, and a question about the trip finds it late. Each sentence of
such a memory is embedded on its own as well, and the ``sem`` lane scores a memory by its
whole vector and its best sentence together (recall/lanes/sem.py) — a document scored by its
best passage, as in MaxP (Dai & Callan 2019, "Deeper Text Understanding for IR with
Contextual Neural Language Modeling"). Sentences also reach past the model's input limit,
where the whole text is cut.

A memory of one sentence has no pieces: its whole vector says it all — unless it is a turn of
a conversation. A turn is read in the light of the turn it answers ("The kids loved it! They
made this!" after "How was the pottery workshop?"), so a turn that follows another in its
episode or session has one more piece: the turn before it and itself, embedded together. The
reply is then found by what it was a reply to, the way a reader of the transcript finds it.
Only the previous turn is taken: it is known when the turn is written, and a turn's later
replies are not.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from types import MappingProxyType

import numpy as np

from chitta.embed.base import Embedder

#: A sentence ends at ., ! or ? followed by white space.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
#: A label the memory starts with ("Melanie: ", "Decision: "), carried into every piece so that
#: each says whose or what it is, as the whole does.
_LABEL = re.compile(r"^[^:]{1,40}: ")
#: An image's caption the text ends with ("… [image: a photo of a bowl]"), a piece of its own.
_CAPTION = re.compile(r" \[image: (.*)\]$", re.DOTALL)
#: Shorter sentences ("Thanks!", "Me too.") say too little to be found by.
MIN_WORDS = 3
#: At most this many pieces a memory (the first ones): a bound on the write's embedding work
#: for a very long text. 99 % of the development sets' turns have 32 or fewer.
MAX_PIECES = 32
EMPTY: Mapping[str, str] = MappingProxyType({})


def pieces_of(text: str, before: str | None = None) -> list[str]:
    """The pieces ``text`` is embedded as besides its whole: its sentences of at least
    :data:`MIN_WORDS` words, each with the text's leading label (none when there are fewer
    than two), and, for a turn that follows the turn ``before``, both turns together."""
    found = _sentences(text)
    return [*found, f"{before} {text}"] if before else found


def _sentences(text: str) -> list[str]:
    label_match = _LABEL.match(text)
    label = label_match.group(0) if label_match else ""
    body = text[len(label) :]
    caption = _CAPTION.search(body)
    if caption is not None:
        body = body[: caption.start()]
    found = [label + s for s in _SENTENCE_END.split(body) if len(s.split()) >= MIN_WORDS]
    if caption is not None:
        found.append(f"{label}[image: {caption.group(1)}]")
    return found[:MAX_PIECES] if len(found) > 1 else []


def embed_pieces(
    embedder: Embedder, texts: Sequence[str], before: Sequence[str | None] = ()
) -> list[np.ndarray | None]:
    """For each of ``texts`` (with the turn ``before`` it, when given), its pieces' unit
    vectors (one row a piece), or ``None`` for a text without pieces; every piece of every
    text in one call."""
    earlier = [*before, *[None] * (len(texts) - len(before))]
    split = [pieces_of(t, b) for t, b in zip(texts, earlier, strict=True)]
    flat = [p for pieces in split for p in pieces]
    if not flat:
        return [None] * len(texts)
    vectors = embedder.embed(flat).vectors
    out: list[np.ndarray | None] = []
    start = 0
    for pieces in split:
        out.append(vectors[start : start + len(pieces)] if pieces else None)
        start += len(pieces)
    return out


def pieces_by_id(
    embedder: Embedder, items: Sequence[tuple[str, str]], before: Mapping[str, str] = EMPTY
) -> dict[str, bytes]:
    """The pieces of ``items`` (memory id, text; ``before``: the text of the turn before a
    memory, by its id) that have pieces, packed (:func:`pack`), by memory id: what the store
    keeps."""
    earlier = [before.get(mid) for mid, _ in items]
    embedded = embed_pieces(embedder, [text for _, text in items], earlier)
    return {mid: pack(v) for (mid, _), v in zip(items, embedded, strict=True) if v is not None}


def pack(vectors: np.ndarray) -> bytes:
    """Unit vectors (one a row) as the store keeps a memory's pieces: each row in int8,
    scaled by its largest magnitude (scalar quantisation), then the rows' float32 scales. A
    quarter of float32's bytes; a cosine read back is within about 0.002 of the exact one."""
    rows = np.asarray(vectors, dtype=np.float32).reshape(len(vectors), -1)
    scales = np.abs(rows).max(axis=1) / 127.0
    scales[scales == 0] = 1.0
    quantised = np.round(rows / scales[:, None]).astype(np.int8)
    return quantised.tobytes() + scales.astype(np.float32).tobytes()


def best_cosine(packed: bytes, query: np.ndarray) -> float:
    """The cosine of the unit ``query`` with the nearest of the pieces :func:`pack` packed."""
    dim = len(query)
    n = len(packed) // (dim + 4)  # each row: dim int8 values and one float32 scale
    if n == 0:
        return -1.0  # nothing readable: the whole vector decides
    rows = np.frombuffer(packed, dtype=np.int8, count=n * dim).reshape(n, dim)
    scales = np.frombuffer(packed, dtype=np.float32, count=n, offset=n * dim)
    return float((np.dot(rows, query) * scales).max())
