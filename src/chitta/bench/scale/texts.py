"""Memory texts and queries: LoCoMo's turns, then distinct seeded recombinations of two turns."""

from __future__ import annotations

import math
import random
import re
from collections.abc import Iterator, Sequence
from typing import Any

from chitta.bench.scale.settings import SEED
from chitta.config import MIN_CONTENT_CHARS
from chitta.errors import BadArgument

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def split_turn(text: str) -> tuple[str, list[str]]:
    """``"Mel: Hi. How are you?"`` → ``("Mel", ["Hi.", "How are you?"])``."""
    speaker, sep, body = text.partition(": ")
    if not sep:
        speaker, body = "", text
    return speaker, [s for s in _SENTENCE_END.split(body.strip()) if s]


def base_turns(dataset: Any) -> list[str]:
    """LoCoMo's distinct turn texts (``memory_text``) long enough to store, in file order."""
    texts = (t.memory_text.strip() for c in dataset.conversations for t in c.turns)
    return list(dict.fromkeys(t for t in texts if len(t) >= MIN_CONTENT_CHARS))


def recombine(a: str, b: str, rng: random.Random) -> str:
    """Sentences from the start of turn ``a`` (with its speaker) then from the end of ``b``:
    up to half of each (at least one sentence), so a result is about one turn long."""
    speaker, first = split_turn(a)
    _, second = split_turn(b)
    head = first[: rng.randint(1, max(1, math.ceil(len(first) / 2)))]
    tail = second[rng.randint(len(second) // 2, len(second) - 1) :] if second else []
    body = " ".join(head + tail)
    return f"{speaker}: {body}" if speaker else body


def iter_texts(turns: Sequence[str], seed: int = SEED) -> Iterator[str]:
    """Distinct texts without end: ``turns`` themselves, then recombinations of two of them
    (deterministic for ``seed``; any prefix of the stream is the same for every length)."""
    if len(turns) < 2:
        raise BadArgument("need at least two distinct turns to recombine")
    seen = set(turns)
    yield from turns
    rng = random.Random(seed)
    count = len(turns)
    misses = 0
    while misses < 10_000:
        i, j = rng.randrange(count), rng.randrange(count)
        text = recombine(turns[i], turns[j], rng)
        if i == j or len(text) < MIN_CONTENT_CHARS or text in seen:
            misses += 1
            continue
        misses = 0
        seen.add(text)
        yield text
    raise BadArgument(f"{count} turns give no more than {len(seen):,} distinct texts")


def memory_texts(turns: Sequence[str], n: int, seed: int = SEED) -> list[str]:
    """The first ``n`` texts of :func:`iter_texts`."""
    stream = iter_texts(list(dict.fromkeys(turns)), seed)
    return [next(stream) for _ in range(n)]


def query_pool(dataset: Any, seed: int = SEED) -> list[str]:
    """LoCoMo's distinct questions, shuffled with ``seed``."""
    questions = list(dict.fromkeys(q.question.strip() for q in dataset.questions if q.question))
    random.Random(seed).shuffle(questions)
    return questions
