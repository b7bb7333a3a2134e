"""The in-memory indexes built from the file on first use and kept current by the writes of
this process (its instance lock makes it the only writer)."""

from __future__ import annotations

import logging
import sqlite3
from typing import TYPE_CHECKING

import numpy as np

from chitta.errors import StoreCorrupt, StoreError
from chitta.store.corrections import CorrectionIndex
from chitta.store.kinds import Kind
from chitta.store.links import LinkIndex
from chitta.store.sparse import SparseIndex, coder_for
from chitta.store.sqlite import (
    ann_sidecar,
    change_log,
    keywords,
    keywords_sidecar,
    terms_sidecar,
    vector_sidecar,
)
from chitta.store.sqlite.connection import Connection, mapped_read
from chitta.store.sqlite.rows import MEMORY_COLUMNS, memory_from_row
from chitta.store.terms import TermStats
from chitta.store.themes import ThemeIndex
from chitta.store.vectors import VectorIndex

if TYPE_CHECKING:
    from chitta.embed.base import ModelIdentity

log = logging.getLogger(__name__)

#: The current corrections, read through their partial index (schema 12,
#: ``memories_corrections``: its WHERE is this query's, word for word, so SQLite uses it
#: rather than scanning every memory — 4 s at a million with a cold page cache).
CURRENT_CORRECTIONS = (
    f"SELECT {MEMORY_COLUMNS} FROM memories WHERE kind = '{Kind.CORRECTION.value}' "
    "AND deleted_at IS NULL AND superseded_by IS NULL"
)
#: Vectors read from the file per step when the vector index is built.
LOAD_CHUNK = 10_000


class Indexes(Connection):
    """The in-memory indexes, built on first use."""

    # --- in-memory indexes -----------------------------------------------------------------

    @mapped_read
    def vector_index(self) -> VectorIndex:
        """The in-memory index of live vectors, built on first use: mapped from the vectors'
        sidecar when the change log says it is the store's (vector_sidecar.py), else read
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

    def _save_sidecars(self) -> None:
        """Save the vectors, graphs, word counts and keyword rows that are due, then trim the
        change log (at close, the file writable). Each is a cache: one that cannot be saved
        (a damaged or full store) is left for the next open to rebuild, and the close goes on."""
        saves = {"vectors": self._save_vectors, "terms": self._save_terms_if_due,
                 "keyword rows": self._save_keyword_rows,
                 "change log": self._trim_change_log}  # fmt: skip
        for name, save in saves.items():
            try:
                save()
            except (StoreError, sqlite3.Error) as exc:
                log.warning("the %s sidecar was not saved at close: %s", name,
                            getattr(exc, "code", type(exc).__name__))  # fmt: skip

    def _save_terms_if_due(self) -> None:
        if self._terms is not None and self._terms_need_save():
            self._save_terms(self._terms)

    def _save_vectors(self) -> None:
        """Save the vectors' sidecar and the graphs when due (at close, the file writable).
        The graphs are saved with the vectors: they are checked against the vectors' file
        they were saved with (ann_sidecar.py)."""
        identity = self.model_identity()
        vectors = self._vectors
        if identity is not None and vectors is not None:
            saved = False
            if vector_sidecar.needs_save(vectors):
                current = change_log.head(self._conn)
                if current is not None:
                    path = vector_sidecar.sidecar_path(self.path)
                    saved = vector_sidecar.save(vectors, path, identity.as_dict(), current)
            if saved or vectors.needs_save():
                ann_sidecar.save_graphs(
                    vectors, ann_sidecar.sidecar_path(self.path), identity.as_dict()
                )

    def _trim_change_log(self) -> None:
        """Delete the change log's rows no saved sidecar needs (at close, after the saves)."""
        saved = [side.saved_stamp(side.sidecar_path(self.path))
                 for side in (vector_sidecar, terms_sidecar, keywords_sidecar)]  # fmt: skip
        keep = change_log.prunable(self._conn, saved)
        if keep is not None:
            with self.transaction() as conn:
                change_log.prune(conn, keep)

    @mapped_read
    def term_stats(self) -> TermStats:
        """Word document frequencies per realm over live memories, on first use read from the
        sidecar when it is the store's (terms_sidecar.py), else counted (and saved)."""
        with self._mutex:
            if self._terms is None:
                path = terms_sidecar.sidecar_path(self.path)
                stats = terms_sidecar.load(path, self._conn) if path.exists() else None
                if stats is not None:
                    # Read back; what it counted in since the file is saved again at close.
                    self._terms, self._terms_saved = stats, {}
                    return stats
                stats = TermStats()
                live = "SELECT realm, content FROM memories WHERE deleted_at IS NULL"
                stats.add_all(self._conn.execute(live))
                self._terms, self._terms_saved = stats, stats.changes()
                if self.read_only is None and stats.total() >= terms_sidecar.MIN_MEMORIES:
                    self._save_terms(stats)
            return self._terms

    def _save_terms(self, stats: TermStats) -> None:
        """Save ``stats`` to the sidecar, stamped with the change log's last row (nothing
        writes meanwhile: the caller holds the store)."""
        stamp = change_log.head(self._conn)
        if stamp is not None:
            path = terms_sidecar.sidecar_path(self.path)
            terms_sidecar.save(path, stats, stamp, terms_sidecar.top(self._conn))
        self._terms_saved = stats.changes()

    def _terms_need_save(self) -> bool:
        """Whether the term statistics changed since they were read, counted or saved."""
        if self._terms is None or self._terms.total() < terms_sidecar.MIN_MEMORIES:
            return False
        return self._terms.changes() != self._terms_saved

    def _rows(self) -> keywords.Rows:
        """The keyword search's view of the live memories, brought up to date with the file;
        on first use read back from its sidecar when that is the store's
        (keywords_sidecar.py)."""
        with self._mutex:
            terms = self.term_stats()
            table = self._keyword_rows
            if not table.built:
                path = keywords_sidecar.sidecar_path(self.path)
                loaded = keywords_sidecar.load(path, self._conn) if path.exists() else None
                if loaded is not None:
                    self._keyword_rows_saved = loaded[0]
                    return table.adopt(self._query, terms, *loaded)
            return table.current(self._query, terms)

    def _save_keyword_rows(self) -> None:
        """Save the keyword rows' sidecar when they changed since read or saved (at close,
        the file writable; a store below the sidecar's size gets none)."""
        if self._terms is None:
            return  # never searched: nothing to save
        saved = self._keyword_rows.saved(self._query, self._terms)
        if saved is None or saved[0] is self._keyword_rows_saved:
            return
        rows, top = saved
        stamp = change_log.head(self._conn)
        if stamp is not None and sum(rows.size.values()) >= keywords_sidecar.MIN_MEMORIES:
            keywords_sidecar.save(keywords_sidecar.sidecar_path(self.path), rows, top, stamp)
            self._keyword_rows_saved = rows

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
                rows = self._conn.execute(CURRENT_CORRECTIONS).fetchall()
                index.insert([memory_from_row(r) for r in rows])
                self._corrections = index
            return self._corrections
