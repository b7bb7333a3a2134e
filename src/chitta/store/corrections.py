"""The keyed correction index: which current corrections a query names (the ``corr`` lookup).

Seed 000: the correction lookup "is a keyed check, not a ranked search". A correction (a
memory of kind ``correction``) is keyed by

- each of its tags, and
- each distinctive identifier in its text: a span in backticks, or a token that mixes letters
  and digits (``v2``, ``Zebra-7``), has an inner ``_ . / :`` (``user_id``, ``deploy.sh``),
  an inner capital (``getUser``, ``SQLite``) or two capitals (``WAL``, ``VPN``); a path
  (``ops/deploy.sh``) also keys its last part (``deploy.sh``).

Keys and queries are normalised alike into words: lower case, ``-`` and ``_`` read as spaces,
punctuation at either end and a possessive ``'s`` dropped. A query names a key when the key's
words are one of the query's word n-grams (n = 1 to 6): a set lookup, no ranking, no
embedding. Stop words and one-letter words never key. Only live corrections that nothing
supersedes are indexed; the store keeps the index in step with every write.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable

from chitta.store.kinds import Kind
from chitta.store.postings import Postings
from chitta.store.records import Memory, Scope
from chitta.store.terms import STOP_WORDS

MAX_KEY_WORDS = 6
_EDGE = "\"'`.,;:!?()[]{}<>*“”‘’"
_BACKTICKED = re.compile(r"`([^`]+)`")
_SPLIT = re.compile(r"[-_]+")
_INNER_SEPARATOR = re.compile(r"\w[_./:]+\w")
_LETTER, _DIGIT = re.compile(r"[^\W\d_]"), re.compile(r"\d")
_INNER_CAPITAL = re.compile(r"[a-z][A-Z]")
_CAPITAL = re.compile(r"[A-Z]")


def _clean(token: str) -> str:
    token = token.strip(_EDGE)
    for possessive in ("'s", "’s"):
        if token.lower().endswith(possessive):
            token = token[: -len(possessive)]
    return token.strip(_EDGE)


def words(text: str) -> tuple[str, ...]:
    """``text`` normalised into key words (see the module docstring)."""
    out: list[str] = []
    for token in text.split():
        for part in _SPLIT.split(_clean(token).lower()):
            part = part.strip(_EDGE)
            if part:
                out.append(part)
    return tuple(out)


def is_identifier(token: str) -> bool:
    """Whether a cleaned token reads as a distinctive identifier rather than a word."""
    has_letter = bool(_LETTER.search(token))
    return (
        (has_letter and bool(_DIGIT.search(token)))
        or bool(_INNER_SEPARATOR.search(token))
        or bool(_INNER_CAPITAL.search(token))
        or (has_letter and len(_CAPITAL.findall(token)) >= 2)
    )


def _key(text: str) -> str | None:
    ws = words(text)
    if not ws or len(ws) > MAX_KEY_WORDS:
        return None
    if len(ws) == 1 and (len(ws[0]) < 2 or ws[0] in STOP_WORDS):
        return None
    return " ".join(ws)


def correction_keys(memory: Memory) -> frozenset[str]:
    """The keys a correction is found by: its tags and the identifiers in its text."""
    sources = list(memory.tags) + _BACKTICKED.findall(memory.content)
    for token in memory.content.split():
        cleaned = _clean(token)
        if cleaned and is_identifier(cleaned):
            sources.append(cleaned)
            if "/" in cleaned.strip("/"):
                sources.append(cleaned.rstrip("/").rsplit("/", 1)[1])
    return frozenset(k for k in map(_key, sources) if k is not None)


def query_keys(text: str) -> frozenset[str]:
    """Every key a query could name: its word n-grams, and the last part of any path in it."""
    ws = list(words(text))
    ws += [w.rstrip("/").rsplit("/", 1)[1] for w in ws if "/" in w.strip("/")]
    return frozenset(
        " ".join(ws[i : i + n]) for n in range(1, MAX_KEY_WORDS + 1) for i in range(len(ws) - n + 1)
    )


def indexed(memory: Memory) -> bool:
    """Whether a memory belongs in the index: a live correction nothing supersedes."""
    return (
        memory.kind is Kind.CORRECTION
        and memory.deleted_at is None
        and memory.superseded_by is None
    )


class CorrectionIndex:
    """Keys of live, current corrections → their ids, per realm."""

    def __init__(self) -> None:
        self._postings: Postings[tuple[str, str]] = Postings()  # (realm, key) -> ids
        self._scopes: dict[str, tuple[str, str, str]] = {}  # id -> (realm, agent, channel)
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._postings)

    def insert(self, memories: Iterable[Memory]) -> None:
        """Index new memories; a new memory that supersedes a correction unindexes it."""
        for m in memories:
            self.put(m)
            if m.supersedes is not None:
                self.drop(m.supersedes)

    def put(self, memory: Memory) -> None:
        """(Re)index a memory as it now stands: added, changed, or no longer a match."""
        with self._lock:
            self._drop(memory.id)
            if not indexed(memory):
                return
            self._scopes[memory.id] = (memory.realm, memory.agent_id, memory.channel)
            self._postings.put(memory.id, ((memory.realm, k) for k in correction_keys(memory)))

    def drop(self, memory_id: str) -> None:
        with self._lock:
            self._drop(memory_id)

    def _drop(self, memory_id: str) -> None:
        self._scopes.pop(memory_id, None)
        self._postings.drop(memory_id)

    def keys_of(self, memory_id: str) -> frozenset[str]:
        return frozenset(key for _, key in self._postings.keys_of(memory_id))

    def lookup(self, keys: Iterable[str], scope: Scope) -> dict[str, tuple[str, ...]]:
        """Corrections in ``scope`` holding any of ``keys``: id → the keys that matched."""
        found: dict[str, set[str]] = {}
        with self._lock:
            for key in keys:
                for memory_id in self._postings.ids((scope.realm, key)):
                    _, agent, channel = self._scopes[memory_id]
                    if (scope.agent_id is None or agent == scope.agent_id) and (
                        scope.channel is None or channel == scope.channel
                    ):
                        found.setdefault(memory_id, set()).add(key)
        return {memory_id: tuple(sorted(keys)) for memory_id, keys in found.items()}
