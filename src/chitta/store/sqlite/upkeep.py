"""Figures and maintenance: counts, size, the integrity check, backups and restores."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from chitta import files
from chitta.store.sqlite import connect, faults, migrations, restore
from chitta.store.sqlite.connection import Connection

#: SQLite's primary result codes for a copy that could not be written (not a bad store).
_WRITE_ERRORS = frozenset({sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN,
                           sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM})  # fmt: skip


class Upkeep(Connection):
    """Figures and maintenance of a store."""

    # --- figures and maintenance ---------------------------------------------------------------

    def counts(self) -> dict[str, object]:
        """Memories per realm and kind, forgotten ones, triplets and episodes."""
        per_realm = {
            r[0]: r[1]
            for r in self._query(
                "SELECT realm, count(*) FROM memories WHERE deleted_at IS NULL GROUP BY realm"
            )
        }
        per_kind = {
            r[0]: r[1]
            for r in self._query(
                "SELECT kind, count(*) FROM memories WHERE deleted_at IS NULL GROUP BY kind"
            )
        }
        forgotten = self._query("SELECT count(*) FROM memories WHERE deleted_at IS NOT NULL")
        return {
            "memories": sum(per_realm.values()),
            "per_realm": per_realm,
            "per_kind": per_kind,
            "forgotten": forgotten[0][0],
            "triplets": self._query("SELECT count(*) FROM triplets")[0][0],
            "episodes": self._query("SELECT count(*) FROM episodes")[0][0],
        }

    def size_bytes(self) -> int:
        """The store's bytes on disk, its write-ahead log included."""
        total = 0
        for suffix in ("", "-wal", "-shm"):
            p = self.path.with_name(self.path.name + suffix)
            if p.exists():
                total += p.stat().st_size
        return total

    def disk_usage(self) -> dict[str, int]:
        """The store's bytes by part — ``memories``, ``embeddings``, ``keywords`` (the FTS5
        index) and ``other`` — after folding the write-ahead log into the file (``dbstat``)."""
        parts: dict[str, int] = {}
        with self._mutex, faults.sealed(self.path, "measuring it"):
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            rows = self._conn.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name")
            for name, nbytes in rows.fetchall():
                parts[_part_of(name)] = parts.get(_part_of(name), 0) + int(nbytes)
        return parts

    def schema_version(self) -> int:
        """The version of the schema the store is at (migrations.py)."""
        return migrations.LATEST  # opening the store migrated it, or refused it

    def integrity_check(self) -> str:
        """``ok``, or what SQLite's integrity check found wrong."""
        return self._query("PRAGMA integrity_check")[0][0]

    def backup_to(self, dest: Path) -> None:
        """A consistent copy of the live store via SQLite's online backup API, owner-only and
        whole: made beside ``dest`` and renamed over it once complete (chitta/files.py), so a
        full disk is a :class:`WriteFailed` that leaves an older backup at ``dest`` as it was."""
        try:
            with files.replacing(dest) as tmp:
                target = sqlite3.connect(tmp)
                try:
                    with self._mutex:
                        self._conn.backup(target)
                finally:
                    target.close()
                    Path(f"{tmp}-journal").unlink(missing_ok=True)  # a failed copy's
        except OSError as exc:
            raise files.write_failed(dest, exc) from None
        except sqlite3.Error as exc:
            if exc.sqlite_errorcode & 0xFF not in _WRITE_ERRORS:
                # Not the copy's disk: the store could not be read for it.
                raise faults.sealed_error(exc, self.path, "the backup") from exc
            raise files.write_failed(dest, str(exc)) from None

    def restore_from(self, source: Path) -> Path:
        """Replace this store's contents with a backup; the old contents are kept beside it.

        The backup is checked first (restore.py), not this store: restoring is what a
        damaged store needs. The old contents go to ``<store>.pre-restore-<time>`` (a backup
        of them), or, when they fail SQLite's quick check, their files as they are to
        ``<store>.damaged-<time>``, before anything is overwritten. Where they went.
        """
        restore.check_backup(source)
        with self._mutex, faults.sealed(self.path, "restoring the backup"):
            self._writable("restoring the backup")
            damaged = self._damaged()
            saved = restore.kept_name(self.path, damaged)
            if damaged:
                restore.keep_copy(self.path, saved)
            else:
                self._access.flush()  # buffered accesses belong to the contents being saved
                self.backup_to(saved)
            src = connect.open_read_only(source, what="the backup", settled=True)
            try:
                src.backup(self._conn)
            finally:
                src.close()
            migrations.migrate(self._conn, where=f"the store {self.path}")
            self._vectors = self._sparse = self._themes = self._corrections = None
            self._terms = None
            self._links = None
        return saved

    def _damaged(self) -> bool:
        """Whether the open file fails SQLite's quick check (or cannot be read for it)."""
        try:
            return self._conn.execute("PRAGMA quick_check").fetchone()[0] != "ok"
        except sqlite3.DatabaseError:
            return True


def _part_of(table: str) -> str:
    """The part of the store a table or index of the file belongs to (disk_usage)."""
    if table.startswith("memories_fts"):
        return "keywords"
    if table in (
        "embeddings",
        "sqlite_autoindex_embeddings_1",
        "pieces",
        "sqlite_autoindex_pieces_1",
    ):
        return "embeddings"
    if table.startswith(("memories", "sqlite_autoindex_memories")):
        return "memories"
    return "other"
