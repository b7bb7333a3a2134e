"""Symbol vectors and the reads symbol search and the outline need, in SQL for both backends
(a part of :class:`chitta.store.code_sql.SQLCodeTables`; schema: sqlite/migrations.py V10,
postgres/code_schema.py V6).

A vector is stored as float32 bytes (``BLOB`` / ``bytea``) under its symbol's id, with the
model that made it (the embedder's identity hash). Searched in this process, not in the
database: a realm's symbols are tens of thousands at most, one matrix product
(code/search.py), and both backends then answer the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from chitta.store.code import RESOLVED, StoredSymbol

#: The tables of this part: their rows go with their file's.
VECTOR_TABLES = ("code_vectors",)


class SymbolVectorsSQL:
    """The vector half of the code tables; ``_rows``, ``_sql``, ``_write`` and
    ``symbols_by_id`` come from :class:`~chitta.store.code_sql.SQLCodeTables`."""

    _rows: Any
    _sql: Any
    _write: Any

    def set_vectors(self, model: str, items: Sequence[tuple[StoredSymbol, np.ndarray]]) -> int:
        """Store (or replace) each symbol's vector, made by ``model``; how many."""
        rows = [(s.id, s.realm, s.repo, s.symbol.path, model,
                 np.ascontiguousarray(v, dtype="<f4").tobytes()) for s, v in items]  # fmt: skip
        if not rows:
            return 0
        with self._write() as cur:
            cur.executemany(self._sql("DELETE FROM code_vectors WHERE id = ?"),
                            [(r[0],) for r in rows])  # fmt: skip
            cur.executemany(self._sql("INSERT INTO code_vectors (id, realm, repo, path, model, "
                                      "vector) VALUES (?, ?, ?, ?, ?, ?)"), rows)  # fmt: skip
        return len(rows)

    def vectors(self, realm: str, model: str) -> tuple[list[str], np.ndarray]:
        """The ids and vectors (float32 rows) of ``realm``'s symbols embedded by ``model``,
        by id."""
        rows = self._rows("SELECT id, vector FROM code_vectors WHERE realm = ? AND model = ? "
                          "ORDER BY id", (realm, model))  # fmt: skip
        if not rows:
            return [], np.zeros((0, 0), dtype=np.float32)
        data = b"".join(bytes(r[1]) for r in rows)
        matrix = np.frombuffer(data, dtype="<f4").reshape(len(rows), -1).astype(np.float32)
        return [r[0] for r in rows], matrix

    def unembedded(self, realm: str, repo: str, model: str) -> list[str]:
        """The ids of ``repo``'s symbols with no vector by ``model``, by file and line."""
        rows = self._rows(
            "SELECT s.id FROM code_symbols s LEFT JOIN code_vectors v ON v.id = s.id AND "
            "v.model = ? WHERE s.realm = ? AND s.repo = ? AND v.id IS NULL "
            "ORDER BY s.path, s.start_line, s.id", (model, realm, repo))  # fmt: skip
        return [r[0] for r in rows]

    def realm_symbols(self, realm: str) -> list[StoredSymbol]:
        """Every symbol of ``realm``, by repository, file and line."""
        from chitta.store.code_sql import _SYMBOL_COLUMNS, _symbol

        rows = self._rows(f"SELECT {_SYMBOL_COLUMNS} FROM code_symbols WHERE realm = ? "
                          "ORDER BY repo, path, start_line, id", (realm,))  # fmt: skip
        return [_symbol(r) for r in rows]

    def call_pairs(self, realm: str) -> list[tuple[str, str]]:
        """(caller id, target id) of every resolved call of ``realm`` whose caller is a
        symbol: the call graph's edges, one per callsite."""
        rows = self._rows("SELECT caller_id, target_id FROM code_callsites WHERE realm = ? "
                          "AND state = ? AND caller_id IS NOT NULL AND target_id IS NOT NULL",
                          (realm, RESOLVED))  # fmt: skip
        return [(a, b) for a, b in rows]

    def search_version(self, realm: str) -> tuple[int, ...]:
        """What changes whenever ``realm``'s symbols or vectors do (files indexed, removed or
        embedded): a cached search index is good while this stays the same."""
        files = self._rows("SELECT COUNT(*), COALESCE(MAX(indexed_at), 0) FROM code_files "
                           "WHERE realm = ?", (realm,))[0]  # fmt: skip
        vectors = self._rows("SELECT COUNT(*) FROM code_vectors WHERE realm = ?", (realm,))[0]
        return (int(files[0]), int(files[1]), int(vectors[0]))
