"""Diversity sampling: the quality gate's third rule (seed 001: "avoids storing too many
similar memories in quick succession").

An agent in the middle of a task often says one thing several times in a row: a note made,
re-made a minute later in other words, made again when the test passes. Stored each time,
those copies crowd a later recall's few seats with one fact. So a new memory that repeats
one its own session stored moments ago is folded into that earlier memory, which is
reinforced (strength and confidence up, tags merged: what a near-duplicate does), rather
than stored again. The first of a burst stays; the rest strengthen it.

A memory is folded only when all of these hold, so that nothing new is lost:

- its source names a session, and the earlier memory was stored by the same session, in the
  same scope, with the same kind and the same role, within :data:`BURST_WINDOW_MS` (it is one
  of the session's :data:`BURST_LOOKBACK` newest memories);
- their cosine is at least :data:`BURST_COSINE` (seed 001's near-duplicate cosine, where
  lateral inhibition starts; the store-wide duplicate rule asks 0.95);
- it adds nothing the earlier one lacks: none of its distinctive words (not stop words) that
  the earlier memory lacks is capitalised (a name: "Bob prefers tabs" is not "Alice prefers
  tabs") or holds a digit (a port, a version, a date, an amount: 5432 is not 5433); it names
  no entity (store/entities.py: an identifier, a quantity) the earlier one does not; and its
  new words are at most :data:`BURST_NOVEL_SHARE` of its distinctive words. The test is
  surface-level and errs towards storing: a rephrasing that opens with a new capitalised
  word ("Remember to run make lint") is stored, not folded.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from chitta.store.entities import entities
from chitta.store.records import Memory
from chitta.store.terms import STOP_WORDS, words

_WORD = re.compile(r"\w+", re.UNICODE)

#: How far back in a session a burst reaches: ten minutes, the session's eight newest memories.
BURST_WINDOW_MS = 10 * 60 * 1000
BURST_LOOKBACK = 8
#: Cosine at or above which two memories of one session say the same (seed 001's 0.85).
BURST_COSINE = 0.85
#: Share of a memory's distinctive words that may be new for it still to be a repeat.
BURST_NOVEL_SHARE = 0.2


def distinctive(text: str) -> set[str]:
    """The lower-case words of ``text`` that are not stop words."""
    return {w for w in words(text) if w not in STOP_WORDS}


def adds_nothing(new: str, old: str) -> bool:
    """Whether ``new`` states nothing ``old`` lacks, by the module's word test."""
    known = distinctive(old)
    novel = [w for w in _WORD.findall(new) if w.lower() not in STOP_WORDS | known]
    if any(w[0].isupper() or any(ch.isdigit() for ch in w) for w in novel):
        return False  # a name, a number: "Bob prefers tabs" is not "Alice prefers tabs"
    if set(entities(new)) - set(entities(old)):
        return False  # an identifier or quantity of its own ("ops/deploy.sh", "20 minutes")
    return len({w.lower() for w in novel}) <= BURST_NOVEL_SHARE * max(len(distinctive(new)), 1)


def burst_of(
    memory: Memory, vector: np.ndarray, recent: Sequence[tuple[Memory, np.ndarray]]
) -> tuple[str, float] | None:
    """The earlier memory of ``recent`` (the session's newest, any order) that ``memory``
    repeats, and their cosine; None when it repeats none (module docstring). Of several,
    the oldest: the first of the burst is the one kept."""
    found: list[tuple[int, str, float]] = []
    for old, old_vector in recent:
        if (
            old.id == memory.id
            or old.deleted_at is not None
            or old.superseded_by is not None
            or (old.realm, old.agent_id, old.channel) != (
                memory.realm, memory.agent_id, memory.channel)
            or old.kind != memory.kind
            or old.source.role != memory.source.role
            or not 0 <= memory.created_at - old.created_at <= BURST_WINDOW_MS
        ):  # fmt: skip
            continue
        cosine = float(np.dot(vector, old_vector))
        if cosine >= BURST_COSINE and adds_nothing(memory.content, old.content):
            found.append((old.created_at, old.id, cosine))
    if not found:
        return None
    _, memory_id, cosine = min(found)
    return memory_id, cosine
