"""The embedding queue (seed 001, QueueProcessor): under load a ``remember`` is stored at once
without its vector, and the subconscious embeds it within a bounded delay.

Embedding is most of a ``remember``'s cost (a few milliseconds a text, one at a time, while
every other write waits behind it on the writer's thread). When writes queue up behind a
``remember`` — ``defer_at`` or more waiting — the daemon stores the memory without its vector:
it is durable and found by its words at once. The worker then embeds the waiting memories in
batches (cheaper per text) and gives them their vectors. Two bounds keep the delay short:

- at most ``max_pending`` memories wait; past that a ``remember`` embeds in line again, so a
  burst slows its writers down rather than growing the queue;
- the worker's embedding step is on demand: it runs as soon as the worker is woken and its
  pace allows, not on a schedule.

The quality gate's duplicate rules need the vector, so for a deferred memory they run when it
arrives: a memory that repeats a stored one (rule 2) or its session's last few (rule 3) is
then superseded by that memory, which is reinforced, rather than never stored. Recall counts
the memories of its realm still waiting (``unembedded`` in its reply).

Memories left waiting by a daemon that was killed are found in the store (``unembedded``) by
the next daemon's worker and embedded then.

A memory's sentences (embed/pieces.py) wait here too, always, not only under load: a
``remember`` through the daemon stores the memory with its whole vector and replies; the
worker embeds its sentences next, in batches, after any memory still waiting for its vector.
Until then recall ranks it by its whole vector, as it ranks any memory without sentences. A
daemon that stops embeds them before it closes. The store marks each such memory as awaiting
its sentences in the transaction that stores it (``insert``'s ``awaiting_pieces``), so the
memories a killed daemon left are found there (``awaiting_pieces``) by the next daemon's
worker and embedded then, as the memories left without a vector are.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from chitta.subconscious.tasks import Step, Writing

if TYPE_CHECKING:
    from chitta.api import Chitta

#: Writes waiting behind a ``remember`` at which it defers its embedding.
DEFER_AT = 2
#: Memories waiting at most; past that a ``remember`` embeds in line.
MAX_PENDING = 256
#: Memories embedded per step (one batch through the model).
BATCH = 32
#: Leftovers read from the store at once (a killed daemon's, or a restored backup's).
LOAD = 4096


class EmbedQueue:
    """Memories stored without a vector, oldest first, with their realms (thread-safe)."""

    def __init__(
        self,
        waiting_writes: Callable[[], int] = lambda: 0,
        *,
        defer_at: int = DEFER_AT,
        max_pending: int = MAX_PENDING,
    ) -> None:
        self._waiting_writes = waiting_writes
        self.defer_at = defer_at
        self.max_pending = max_pending
        self._pending: dict[str, str | None] = {}  # id -> realm (None: forgotten)
        self._sentences: dict[str, None] = {}  # ids whose sentences wait, oldest first
        self._lock = threading.Lock()
        self.notify: Callable[[], None] = lambda: None  # wakes the worker
        self.deferred = 0  # remembers deferred since the start

    def __len__(self) -> int:
        with self._lock:
            return len(self._pending)

    def should_defer(self) -> bool:
        """Whether a ``remember`` now should store its memory without embedding it."""
        return self._waiting_writes() >= self.defer_at and len(self) < self.max_pending

    def add(self, memory_id: str, realm: str | None) -> None:
        with self._lock:
            self._pending[memory_id] = realm
        self.notify()

    def take(self, n: int) -> list[str]:
        """The ``n`` oldest waiting (they stay until :meth:`done`)."""
        with self._lock:
            return sorted(self._pending)[:n]

    def done(self, ids: list[str]) -> None:
        with self._lock:
            for memory_id in ids:
                self._pending.pop(memory_id, None)
                self._sentences.pop(memory_id, None)

    def has_work(self) -> bool:
        """Whether memories wait for their vectors or their sentences'."""
        with self._lock:
            return bool(self._pending or self._sentences)

    def add_sentences(self, memory_id: str) -> bool:
        """Queue ``memory_id``'s sentences for the worker; False when ``max_pending`` wait
        already (the caller embeds them in line: a burst slows down rather than grows)."""
        with self._lock:
            if len(self._sentences) >= self.max_pending:
                return False
            self._sentences[memory_id] = None
        self.notify()
        return True

    def take_sentences(self, n: int) -> list[str]:
        """The ``n`` oldest memories whose sentences wait (they stay until :meth:`done`)."""
        with self._lock:
            return list(self._sentences)[:n]

    def sentences_waiting(self) -> int:
        with self._lock:
            return len(self._sentences)

    def waiting(self, realm: str) -> int:
        """How many memories of ``realm`` wait for their vector."""
        with self._lock:
            return sum(1 for r in self._pending.values() if r == realm)


class EmbedTask:
    """The worker's on-demand task: embed what waits, ``batch`` memories a step."""

    name = "embed"
    interval_s = 0  # on demand, not on a schedule

    def __init__(self, queue: EmbedQueue, batch: int = BATCH) -> None:
        self.queue = queue
        self.batch = batch
        self._more = True  # the store may hold leftovers not yet read
        self._more_sentences = True  # and memories left awaiting their sentences

    def wanted(self) -> bool:
        """Whether a step has work: memories wait, or the store is yet to be looked at."""
        return self._more or self._more_sentences or self.queue.has_work()

    def step(self, chitta: Chitta, now: int, writing: Writing) -> Step:
        if not len(self.queue) and not self._more:  # the memories' own vectors go first
            if self._more_sentences and not self.queue.sentences_waiting():
                self._load_sentences(chitta)
            if self.queue.sentences_waiting():
                return self.sentences_step(chitta, writing)
        if not len(self.queue) and self._more:
            found = chitta.store.unembedded(LOAD)
            self._more = len(found) == LOAD
            live = chitta.store.get_many(found)
            for memory_id in found:
                self.queue.add(memory_id, live[memory_id].realm if memory_id in live else None)
        ids = self.queue.take(self.batch)
        done = chitta.embed_waiting(ids, writing) if ids else None
        self.queue.done(ids)
        counts = {"folded": done.folded} if done else {}
        return Step(len(ids), done.embedded if done else 0, counts,
                    finished=not self.wanted())  # fmt: skip

    def _load_sentences(self, chitta: Chitta) -> None:
        """Queue the memories the store marks as awaiting their sentences (a killed daemon's
        leftovers), as many as the queue holds; the rest at a later step."""
        found = chitta.store.awaiting_pieces(self.queue.max_pending)
        queued = sum(self.queue.add_sentences(memory_id) for memory_id in found)
        self._more_sentences = len(found) == self.queue.max_pending or queued < len(found)

    def sentences_step(self, chitta: Chitta, writing: Writing) -> Step:
        """Embed the sentences of up to ``batch`` memories that wait for them (those since
        forgotten are skipped), storing them under ``writing``."""
        ids = self.queue.take_sentences(self.batch)
        live = chitta.store.get_many(ids)
        given = chitta.give_pieces([live[i] for i in ids if i in live], writing)
        self.queue.done(ids)
        return Step(len(ids), given, {"sentences": given},
                    finished=not self.wanted())  # fmt: skip

    def reset(self) -> None:
        self._more = True  # look in the store again: a failed step left its batch there
        self._more_sentences = True
