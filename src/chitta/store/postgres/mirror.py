"""The in-process indexes of a PostgreSQL store, kept current with writes from every process.

Several daemons share one database, so an index built here must never answer from a state
older than the database's. Every write transaction that changes what these indexes derive
bumps the one-row ``generation`` counter and stamps the rows it writes with the new value
(``memories.gen``, ``embeddings.gen``; ``purged`` and ``link_touches`` for removals and
triplet or alias writes). The counter's row lock is held to commit, so generations commit in
order: a snapshot that reads generation ``g`` sees exactly the writes stamped ``<= g``.

Before an index answers, :meth:`Mirror.refresh` reads the generation in a repeatable-read
snapshot; when it moved, the rows stamped since are applied to every index built, and an
index asked for the first time is built from the same snapshot. A bump of ``epoch`` (every
vector replaced) builds them all again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from chitta.store.corrections import CorrectionIndex
from chitta.store.kinds import Kind
from chitta.store.links import LinkIndex
from chitta.store.postgres.rows import MEMORY_COLUMNS, memory_from_row
from chitta.store.records import Memory
from chitta.store.sparse import SparseIndex, coder_for
from chitta.store.terms import TermStats
from chitta.store.themes import ThemeIndex

Read = Callable[..., list]
#: The indexes a mirror keeps.
KINDS = ("terms", "links", "corrections", "sparse", "themes")

#: What a live memory was, as the indexes counted it: (realm, agent, channel, content).
State = tuple[str, str, str, str]


@dataclass
class Mirror:
    """The built indexes, the generation they stand at, and each live memory's state."""

    gen: int = -1
    epoch: int = -1
    built: dict[str, object] = field(default_factory=dict)
    state: dict[str, State] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def refresh(self, read: Read, want: str, dim: Callable[[], int]) -> object:
        """The index ``want``, current with the snapshot ``read`` reads from."""
        gen, epoch = read("SELECT n, epoch FROM generation")[0]
        if epoch != self.epoch:
            self.built.clear()
            self.state.clear()
            self.epoch = epoch
        if self.built and gen != self.gen:
            self._apply(read)
        if want not in self.built:
            if not self.built:
                self._load_state(read)
            self.built[want] = _BUILD[want](self, read, dim)
        self.gen = gen
        return self.built[want]

    def _load_state(self, read: Read) -> None:
        self.state = {r[0]: (r[1], r[2], r[3], r[4]) for r in read(
            "SELECT id, realm, agent_id, channel, content FROM memories WHERE deleted_at IS NULL"
        )}  # fmt: skip

    def _apply(self, read: Read) -> None:
        """Bring every built index from ``self.gen`` to the snapshot's generation."""
        changed = [
            memory_from_row(r)
            for r in read(
                f"SELECT {MEMORY_COLUMNS} FROM memories WHERE gen > %s ORDER BY gen", (self.gen,)
            )
        ]
        gone = [r[0] for r in read("SELECT memory_id FROM purged WHERE gen > %s", (self.gen,))]
        touches = read("SELECT realm, names FROM link_touches WHERE gen > %s ORDER BY gen",
                       (self.gen,))  # fmt: skip
        moved: list[tuple[Memory, State | None]] = []  # memories whose state changed
        for m in changed:
            before = self.state.get(m.id)
            now = (m.realm, m.agent_id, m.channel, m.content) if m.deleted_at is None else None
            if before != now:
                moved.append((m, before))
                if now is None:
                    self.state.pop(m.id, None)
                else:
                    self.state[m.id] = now
        removed = [(i, self.state.pop(i)) for i in gone if i in self.state]
        terms = self.built.get("terms")
        links = self.built.get("links")
        corrections = self.built.get("corrections")
        if isinstance(terms, TermStats):
            for m, before in moved:
                if before is not None:
                    terms.add(before[0], before[3], -1)
                if m.deleted_at is None:
                    terms.add(m.realm, m.content)
            for _, before in removed:
                terms.add(before[0], before[3], -1)
        if isinstance(links, LinkIndex):
            for m, _ in moved:
                if m.deleted_at is None:
                    links.add(m)
                else:
                    links.remove(m.id)
            for memory_id in gone:
                links.remove(memory_id)
            for realm, names in touches:
                links.touch(realm, names)
        if isinstance(corrections, CorrectionIndex):
            for m in changed:
                corrections.put(m)
            for memory_id in gone:
                corrections.drop(memory_id)
        vector_indexes = [self.built[k] for k in ("sparse", "themes") if k in self.built]
        if vector_indexes:
            self._apply_vectors(read, vector_indexes, [m for m, _ in moved], gone)

    def _apply_vectors(
        self,
        read: Read,
        indexes: Sequence[SparseIndex | ThemeIndex],
        moved: Sequence[Memory],
        gone: Sequence[str],
    ) -> None:
        """Bring the indexes derived from vectors (the sparse codes, the themes) up to date."""
        for index in indexes:
            for m in moved:
                if m.deleted_at is not None:
                    index.set_alive(m.id, False)
            for memory_id in gone:
                index.set_alive(memory_id, False)
        # A vector written since, or a live memory whose scope changed: (re)post its code.
        moved_live = [m.id for m in moved if m.deleted_at is None]
        rows = read(
            "SELECT memory_id, realm, agent_id, channel, vector FROM embeddings WHERE live AND "
            "(gen > %s OR memory_id = ANY(%s)) ORDER BY gen, memory_id",
            (self.gen, moved_live), binary=True,
        )  # fmt: skip
        if rows:
            for index in indexes:
                index.add([r[0] for r in rows], np.stack([r[4] for r in rows]),
                          [(r[1], r[2], r[3]) for r in rows])  # fmt: skip


def _build_terms(mirror: Mirror, read: Read, dim: Callable[[], int]) -> TermStats:
    stats = TermStats()
    stats.add_all((realm, content) for realm, _, _, content in mirror.state.values())
    return stats


def _build_links(mirror: Mirror, read: Read, dim: Callable[[], int]) -> LinkIndex:
    links = LinkIndex()
    links.add_many(memory_from_row(r) for r in read(
        f"SELECT {MEMORY_COLUMNS} FROM memories WHERE deleted_at IS NULL ORDER BY id"))  # fmt: skip
    return links


def _build_corrections(mirror: Mirror, read: Read, dim: Callable[[], int]) -> CorrectionIndex:
    index = CorrectionIndex()
    index.insert(memory_from_row(r) for r in read(
        f"SELECT {MEMORY_COLUMNS} FROM memories WHERE kind = %s AND deleted_at IS NULL "
        "AND superseded_by IS NULL", (Kind.CORRECTION.value,)))  # fmt: skip
    return index


def _build_sparse(mirror: Mirror, read: Read, dim: Callable[[], int]) -> SparseIndex:
    index = SparseIndex(coder_for(dim()))
    rows = read(
        "SELECT e.memory_id, e.realm, e.agent_id, e.channel, e.vector FROM embeddings e "
        "JOIN memories m ON m.id = e.memory_id WHERE e.live ORDER BY m.seq",
        binary=True,
    )
    if rows:
        index.add([r[0] for r in rows], np.stack([r[4] for r in rows]),
                  [(r[1], r[2], r[3]) for r in rows])  # fmt: skip
    return index


def _build_themes(mirror: Mirror, read: Read, dim: Callable[[], int]) -> ThemeIndex:
    index = ThemeIndex(dim())
    rows = read(
        "SELECT e.memory_id, e.realm, e.agent_id, e.channel, e.vector FROM embeddings e "
        "JOIN memories m ON m.id = e.memory_id WHERE e.live ORDER BY m.created_at, m.id",
        binary=True,
    )
    if rows:
        index.build([r[0] for r in rows], np.stack([r[4] for r in rows]),
                    [(r[1], r[2], r[3]) for r in rows])  # fmt: skip
    return index


_BUILD: dict[str, Callable[[Mirror, Read, Callable[[], int]], object]] = {
    "terms": _build_terms,
    "links": _build_links,
    "corrections": _build_corrections,
    "sparse": _build_sparse,
    "themes": _build_themes,
}
