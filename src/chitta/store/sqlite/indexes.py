"""The in-memory indexes built from the file on first use and kept current by the writes of
this process (its instance lock makes it the only writer)."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

import numpy as np

from chitta.errors import StoreCorrupt, StoreError
from chitta.store.corrections import CorrectionIndex
from chitta.store.kinds import Kind
from chitta.store.links import LinkIndex
from chitta.store.sparse import SparseIndex, coder_for
from chitta.store.sqlite import ann_sidecar, terms_sidecar, vector_sidecar
from chitta.store.sqlite.connection import Connection, mapped_read
from chitta.store.sqlite.rows import MEMORY_COLUMNS, memory_from_row
from chitta.store.terms import TermStats
from chitta.store.themes import ThemeIndex
from chitta.store.vectors import VectorIndex

if TYPE_CHECKING:
    from chitta.embed.base import ModelIdentity

#: Vectors read from the file per step when the vector index is built.
LOAD_CHUNK = 10_000


class Indexes(Connection):
    """The in-memory indexes, built on first use."""

    # --- in-memory indexes -----------------------------------------------------------------

    @mapped_read
    def vector_index(self) -> VectorIndex:
        """The in-memory index of live vectors, built on first use: mapped from the vectors'
        sidecar when the vector log says it is the store's (vector_sidecar.py), else read
        from the file."""
        with self._mutex:
            if self._vectors is None:
                identity = self.model_identity()
                loaded = None
                if identity is not None:
                    loaded = vector_sidecar.load(
                        vector_sidecar.sidecar_path(self.path),
                        self._conn,
                        identity.as_dict(),
                        hnsw_min=self.hnsw_min,
                    )
                index = loaded.index if loaded is not None else self._read_vectors(identity)
                if identity is not None and len(index):
                    ann_sidecar.attach_graphs(
                        index,
                        ann_sidecar.sidecar_path(self.path),
                        identity.as_dict(),
                        changed=loaded.changed if loaded is not None else None,
                    )
                self._vectors = index
            return self._vectors

    def _read_vectors(self, identity: ModelIdentity | None) -> VectorIndex:
        """Every live vector read from the file into a new index (no graphs yet)."""
        # Every stored vector, forgotten ones too: room enough, counted at once.
        count = self._conn.execute("SELECT count(*) FROM embeddings").fetchone()[0]
        index = VectorIndex(identity.dim if identity else 0,
                            capacity=max(1024, count), hnsw_min=self.hnsw_min)  # fmt: skip
        if not count:
            return index
        if identity is None:
            raise StoreCorrupt(f"{self.path} holds vectors but no model identity")
        # In chunks: the rows of a big store never sit in memory all at once beside the
        # matrix they are copied into.
        rows = self._conn.execute(
            "SELECT m.id, m.realm, m.agent_id, m.channel, e.vector FROM memories m "
            "JOIN embeddings e ON e.memory_id = m.id WHERE m.deleted_at IS NULL"
        )
        while chunk := rows.fetchmany(LOAD_CHUNK):
            vectors = np.frombuffer(b"".join(r[4] for r in chunk), dtype=np.float32)
            index.add([r[0] for r in chunk], vectors.reshape(len(chunk), identity.dim),
                      [(r[1], r[2], r[3]) for r in chunk], graphs=False)  # fmt: skip
        return index

    def _save_vectors(self) -> None:
        """Save the vectors' sidecar and the graphs when due, and trim the vector log (at
        close, the file writable). The graphs are saved with the vectors: they are checked
        against the vectors' file they were saved with (ann_sidecar.py)."""
        identity = self.model_identity()
        vectors = self._vectors
        path = vector_sidecar.sidecar_path(self.path)
        if identity is not None and vectors is not None:
            saved = False
            if vector_sidecar.needs_save(vectors):
                current = vector_sidecar.head(self._conn)
                if current is not None:
                    saved = vector_sidecar.save(vectors, path, identity.as_dict(), current)
            if saved or vectors.needs_save():
                ann_sidecar.save_graphs(
                    vectors, ann_sidecar.sidecar_path(self.path), identity.as_dict()
                )
        keep = vector_sidecar.prunable(self._conn, path)
        if keep is not None:
            # The log's rows no file needs; a store that cannot be written keeps them.
            with contextlib.suppress(StoreError), self.transaction() as conn:
                vector_sidecar.prune(conn, keep)

    @mapped_read
    def term_stats(self) -> TermStats:
        """Word document frequencies per realm over live memories, on first use read from the
        sidecar when it matches the file (terms_sidecar.py), else counted (and saved)."""
        with self._mutex:
            if self._terms is None:
                path, current = terms_sidecar.sidecar_path(self.path), None
                stats = None
                if path.exists():
                    current = terms_sidecar.stamp(self._conn)
                    stats = terms_sidecar.load(path, current)
                if stats is None:
                    stats = TermStats()
                    live = "SELECT realm, content FROM memories WHERE deleted_at IS NULL"
                    stats.add_all(self._conn.execute(live))
                    if self.read_only is None and stats.total() >= terms_sidecar.MIN_MEMORIES:
                        self._save_terms(stats, current)
                self._terms, self._terms_saved = stats, stats.changes()
            return self._terms

    def _save_terms(self, stats: TermStats, current: list[int] | None = None) -> None:
        """Save ``stats`` to the sidecar, stamped with the file as it is (``current``, when
        the caller has just computed it)."""
        current = current if current is not None else terms_sidecar.stamp(self._conn)
        terms_sidecar.save(terms_sidecar.sidecar_path(self.path), stats, current)
        self._terms_saved = stats.changes()

    def _terms_need_save(self) -> bool:
        """Whether the term statistics changed since they were read, counted or saved."""
        if self._terms is None or self._terms.total() < terms_sidecar.MIN_MEMORIES:
            return False
        return self._terms.changes() != self._terms_saved

    def links(self) -> LinkIndex:
        """Entity postings of live memories per realm, built on first use."""
        with self._mutex:
            if self._links is None:
                links = LinkIndex()
                links.add_many(self.iter_memories())
                self._links = links
            return self._links

    @mapped_read
    def sparse_index(self) -> SparseIndex:
        """The hdc lane's posting index of live memories' sparse codes, built on first use."""
        with self._mutex:
            if self._sparse is None:
                identity = self.model_identity()
                index = SparseIndex(coder_for(identity.dim if identity else 0))
                rows = self._live_vector_rows("")
                if rows is not None:
                    index.add(*rows)
                self._sparse = index
            return self._sparse

    @mapped_read
    def themes(self) -> ThemeIndex:
        """The theme lane's themes of live memories per realm, built on first use (oldest
        memory first, so one file always gives the same themes)."""
        with self._mutex:
            if self._themes is None:
                identity = self.model_identity()
                index = ThemeIndex(identity.dim if identity else 0)
                rows = self._live_vector_rows(" ORDER BY m.created_at, m.id")
                if rows is not None:
                    index.build(*rows)
                self._themes = index
            return self._themes

    def themes_built(self) -> ThemeIndex | None:
        """The theme index when it is built, else None (no build)."""
        return self._themes

    def _live_vector_rows(
        self, order: str
    ) -> tuple[list[str], np.ndarray, list[tuple[str, str, str]]] | None:
        """The live memories with a vector, as an index adds them (ids, stacked vectors,
        scopes), in ``order`` (an ORDER BY clause, or ""); None when there are none."""
        rows = self._conn.execute(
            "SELECT m.id, m.realm, m.agent_id, m.channel, e.vector FROM memories m "
            "JOIN embeddings e ON e.memory_id = m.id WHERE m.deleted_at IS NULL" + order
        ).fetchall()
        if not rows:
            return None
        return (
            [r[0] for r in rows],
            np.stack([np.frombuffer(r[4], dtype=np.float32) for r in rows]),
            [(r[1], r[2], r[3]) for r in rows],
        )

    @mapped_read
    def corrections(self) -> CorrectionIndex:
        """The keyed index of current corrections (the ``corr`` lookup), built on first use."""
        with self._mutex:
            if self._corrections is None:
                index = CorrectionIndex()
                rows = self._conn.execute(
                    f"SELECT {MEMORY_COLUMNS} FROM memories WHERE kind = ? "
                    "AND deleted_at IS NULL AND superseded_by IS NULL",
                    (Kind.CORRECTION.value,),
                ).fetchall()
                index.insert([memory_from_row(r) for r in rows])
                self._corrections = index
            return self._corrections
