"""Any SQLite FTS5 table as a cited recall source (kind ``sqlite_fts``): seed 003's session
history (``state.db``) or fact store (``memory_store.db``).

The file is opened read-only (a ``mode=ro`` URI) for each search and closed after. The query
is never passed as FTS5 syntax: its words (``\\w+``, chitta's stop words dropped unless
nothing else is left) become double-quoted terms joined by OR, matched in the configured
column only, ranked by FTS5's ``bm25()``; a chunk's score is ``-bm25`` (higher is better).
A query with no words finds nothing. The table and column names are checked to be plain SQL
identifiers and to exist before the search, and an error names them.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from chitta.cited.base import Chunk, SourceError
from chitta.cited.settings import DEFAULT_PRIORITY, SQL_IDENTIFIER
from chitta.errors import BadConfig
from chitta.store.terms import STOP_WORDS, tokens

_FTS5 = re.compile(r"\busing\s+fts5\b", re.IGNORECASE)
#: Words of a query sent to FTS5 at most (a pasted page should not make a huge expression).
MAX_TERMS = 64
#: The names FTS5 accepts for a row's id besides a declared column.
ROWID_NAMES = ("rowid", "_rowid_", "oid")


def match_expression(query: str) -> str | None:
    """The query's words as an FTS5 expression of quoted terms joined by OR, or None when it
    has no words. Stop words are left out unless the query has nothing else."""
    found = list(dict.fromkeys(tokens(query)))
    words = [w for w in found if w not in STOP_WORDS] or found
    if not words:
        return None
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words[:MAX_TERMS])


def _quoted(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


class SqliteFtsSource:
    """The rows of the FTS5 table ``table`` in ``path`` whose ``column`` matches the query."""

    kind = "sqlite_fts"

    def __init__(
        self,
        name: str,
        path: Path | str,
        table: str,
        column: str,
        *,
        id_column: str | None = None,
        priority: float = DEFAULT_PRIORITY["sqlite_fts"],
        timeout_s: float = 5.0,
    ) -> None:
        for key, value in (("table", table), ("column", column), ("id_column", id_column)):
            if value is not None and not SQL_IDENTIFIER.match(value):
                raise BadConfig(
                    f"source {name!r}: {key} must be an SQL identifier (letters, digits, _), "
                    f"got {value!r}"
                )
        self.name = name
        self.priority = priority
        self.path = Path(path).expanduser()
        self.table = table
        self.column = column
        self.id_column = id_column
        self.timeout_s = timeout_s  # how long to wait for a writer's lock

    def search(self, query: str, limit: int) -> list[Chunk]:
        expression = match_expression(query)
        if expression is None:
            return []
        if not self.path.is_file():
            raise SourceError(f"no SQLite file at {self.path}")
        uri = self.path.resolve().as_uri() + "?mode=ro"
        try:
            conn = sqlite3.connect(uri, uri=True, timeout=self.timeout_s)
        except sqlite3.Error as exc:
            raise SourceError(f"cannot open {self.path} read-only: {exc}") from exc
        try:
            id_name = self._check(conn)
            table = _quoted(self.table)
            sql = (
                f"SELECT {_quoted(id_name)}, {_quoted(self.column)}, bm25({table}) AS score "
                f"FROM {table} WHERE {_quoted(self.column)} MATCH ? ORDER BY score LIMIT ?"
            )
            rows = conn.execute(sql, (expression, limit)).fetchall()
        except sqlite3.Error as exc:
            raise SourceError(
                f"search of {self.table}.{self.column} in {self.path} failed: {exc}"
            ) from exc
        finally:
            conn.close()
        out = []
        for row_id, text, score in rows:
            if text is None or not str(text).strip():
                continue
            out.append(Chunk(source=self.name, text=str(text), rank=len(out) + 1,
                             score=-float(score), ref=f"{self.table}:{row_id}",
                             meta={"table": self.table, "id": row_id}))  # fmt: skip
        return out

    def _check(self, conn: sqlite3.Connection) -> str:
        """That the table is an FTS5 table with the configured columns; the id's column."""
        found = conn.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ? COLLATE NOCASE",
            (self.table,),
        ).fetchone()
        if found is None:
            raise SourceError(f"{self.path} has no table {self.table!r}")
        if not _FTS5.search(found[0] or ""):
            raise SourceError(f"table {self.table!r} in {self.path} is not an FTS5 table")
        columns = [row[1] for row in conn.execute(f"PRAGMA table_info({_quoted(self.table)})")]
        lower = {c.lower() for c in columns}
        if self.column.lower() not in lower:
            raise SourceError(f"table {self.table!r} in {self.path} has no column "
                              f"{self.column!r} (it has: {', '.join(columns)})")  # fmt: skip
        if self.id_column is None:
            return "rowid"
        if self.id_column.lower() not in lower | set(ROWID_NAMES):
            raise SourceError(
                f"table {self.table!r} in {self.path} has no column {self.id_column!r} for "
                f"ids (it has: {', '.join(columns)})"
            )
        return self.id_column
