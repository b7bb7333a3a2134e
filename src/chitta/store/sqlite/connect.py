"""Opening a store file with SQLite: for writing (WAL, synced commits, the schema migrated), or
for reading only, when the file or its disk cannot take a write.

A WAL database needs its ``-wal`` and ``-shm`` files even to be read. SQLite (3.22 and later,
https://sqlite.org/wal.html "Read-Only Databases") opens one read-only when those files exist
or can be made; when they can be neither — a read-only folder, a disk too full for the -shm —
``immutable=1`` reads the database file alone, without them. That is right only when the log
holds no writes the file lacks, and nothing writes the file meanwhile: the first is checked
(:func:`shape.wal_has_frames`); the second holds because a writer would need the same -wal and
-shm files (the folder will not take them), and, on a full disk, because this process keeps
the store's exclusive lock and refuses its own writes. A log holding writes is refused.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from chitta import files
from chitta.errors import ChittaError, StoreCorrupt, StoreReadOnly
from chitta.store.sqlite import faults, migrations, shape


def open_writer(path: Path) -> sqlite3.Connection:
    """``path`` opened for writing, its schema migrated to this chitta's."""
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    where = f"the store {path}"
    try:
        with faults.mapped(path, "opening it"):
            # Refuse a foreign file before the WAL pragma rewrites its header.
            migrations.schema_version(conn, where)
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = FULL")
            conn.execute("PRAGMA foreign_keys = ON")
            migrations.migrate(conn, where=where)
    except BaseException as exc:
        conn.close()
        error = _as_store_error(exc, path)
        if error is exc:
            raise
        raise error from exc
    return conn


def create(path: Path) -> None:
    """Make a new store at ``path``: built under a temporary name and moved into place whole,
    so that a store file is never empty or half made (an empty one is damage, shape.py).
    Never replaces a file that appeared at ``path`` meanwhile."""
    tmp = path.with_name(f".{path.name}.new-{os.getpid()}")
    for leftover in (tmp, *(shape.companion(tmp, s) for s in shape.COMPANIONS)):
        leftover.unlink(missing_ok=True)  # a creation this pid began and never finished
    # Owner-only from the first byte: memories may hold secrets by accident.
    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    try:
        open_writer(tmp).close()  # the schema; closing folds the log into the file
        files.sync_file(tmp)
        try:
            os.link(tmp, path)
        except FileExistsError:
            return
        except OSError:  # a file system without hard links
            if path.exists():
                return
            os.rename(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    files.sync_folder(path.parent)


def open_read_only(
    path: Path, what: str = "the store", *, settled: bool = False
) -> sqlite3.Connection:
    """``path`` opened for reading only (module docstring: which way, and why it is safe).

    ``settled``: nothing can write the file meanwhile (a backup being restored, a store whose
    lock the caller holds); it is then read with ``immutable=1`` when its log holds nothing,
    which leaves no -wal or -shm file beside it (a read-only connection cannot remove them)."""
    uri = path.absolute().as_uri()
    try:
        with faults.mapped(path, "opening it"):
            try:
                if settled and not shape.wal_has_frames(path):
                    return _read(f"{uri}?mode=ro&immutable=1")
                conn = _read(f"{uri}?mode=ro")
            except sqlite3.OperationalError:
                if shape.wal_has_frames(path):
                    raise
                conn = _read(f"{uri}?mode=ro&immutable=1")
    except sqlite3.OperationalError as exc:
        raise StoreReadOnly(
            f"{what} {path} cannot be opened read-only: its write-ahead log "
            f"({shape.companion(path, '-wal').name}) holds writes the file does not have yet, "
            "and reading them needs a -shm file that cannot be made here (a read-only folder "
            "or a full disk); make room or make the folder writable once, and try again"
        ) from exc
    except BaseException as exc:
        error = _as_store_error(exc, path)
        if error is exc:
            raise
        raise error from exc
    return conn


def version_of(conn: sqlite3.Connection, path: Path) -> int:
    """The schema version of a store opened read-only; :class:`SchemaTooNew` for a newer
    chitta's (a version below this chitta's the caller must refuse: it cannot migrate)."""
    where = f"the store {path}"
    try:
        version = migrations.schema_version(conn, where)
        migrations.check_known(version, where)
    except BaseException as exc:
        error = _as_store_error(exc, path)
        if error is exc:
            raise
        raise error from exc
    return version


def _read(uri: str) -> sqlite3.Connection:
    conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    try:
        conn.execute("PRAGMA query_only = ON")
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # opens the file now
    except BaseException:
        conn.close()
        raise
    return conn


def _as_store_error(exc: BaseException, path: Path) -> BaseException:
    """``exc`` as the store's error: chitta's own as they are (a StoreCorrupt with the way
    out added), any other SQLite error as a store that cannot be read."""
    if isinstance(exc, StoreCorrupt) and faults.RESTORE_HINT not in str(exc):
        return StoreCorrupt(f"{exc}; {faults.RESTORE_HINT}")
    if isinstance(exc, ChittaError):
        return exc
    if isinstance(exc, sqlite3.DatabaseError):
        return StoreCorrupt(
            f"the store {path} is not a readable chitta store ({exc}); {faults.RESTORE_HINT}"
        )
    return exc
