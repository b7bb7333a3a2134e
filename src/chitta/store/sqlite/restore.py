"""Restoring a backup over a store — above all one that is damaged, or that cannot be opened.

What is checked is the backup: a SQLite file of a chitta store this version can open (or
migrate), passing SQLite's integrity check. The store it replaces is never a reason to refuse;
its files are kept beside it, owner-only: ``<store>.pre-restore-<time>`` when they were a
sound store, ``<store>.damaged-<time>`` when they were not, each with its ``-wal`` and
``-shm`` (SQLite pairs them by name, so the kept copy opens with its log).

Two ways in. :func:`restore_file` works on the files alone, with nothing open: the CLI's way
when no daemon serves the store (it takes the store's lock, so none can). An open store — the
daemon's — restores through ``SQLiteStore.restore_from`` (upkeep.py), which writes the backup
into its open file and keeps the old contents with :func:`keep_copy`.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
from pathlib import Path

from chitta import files
from chitta.errors import SchemaTooNew, StoreCorrupt, StoreMissing
from chitta.store.sqlite import (
    ann_sidecar,
    connect,
    faults,
    keywords_sidecar,
    migrations,
    shape,
    terms_sidecar,
    vector_sidecar,
)
from chitta.store.sqlite.lock import InstanceLock

DAMAGED = "damaged"
PRE_RESTORE = "pre-restore"


def check_backup(source: Path) -> None:
    """Refuse a backup that cannot be restored, saying why; nothing is changed either way."""
    if not source.is_file():
        raise StoreMissing(f"no backup file at {source}")
    what = f"the backup {source}"
    if problem := shape.problem(source):
        raise StoreCorrupt(f"{what} is not a chitta store: {problem}")
    conn = connect.open_read_only(source, what="the backup", settled=True)
    try:
        version = migrations.schema_version(conn, what)
        verdict = conn.execute("PRAGMA integrity_check").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        raise StoreCorrupt(f"{what} is not a readable chitta store: {exc}") from exc
    finally:
        conn.close()
    if version == 0:
        raise StoreCorrupt(f"{what} is an empty SQLite file, not a chitta store")
    if version > migrations.LATEST:
        raise SchemaTooNew(
            f"{what} was made by a newer chitta (schema version {version}; this chitta knows "
            f"up to {migrations.LATEST}): restore it with that chitta"
        )
    if verdict != "ok":
        raise StoreCorrupt(f"{what} fails SQLite's integrity check: {verdict}")


def sound(path: Path) -> bool:
    """Whether the store file at ``path`` is a chitta store SQLite reads without a fault
    (its shape, its schema version, ``PRAGMA quick_check``). Reads only, leaving nothing
    beside it; the caller holds the store's lock."""
    try:
        if shape.problem(path):
            return False
        conn = connect.open_read_only(path, settled=True)
        try:
            version = migrations.schema_version(conn)
            verdict = conn.execute("PRAGMA quick_check").fetchone()[0]
        finally:
            conn.close()
    except (sqlite3.Error, OSError, StoreCorrupt, SchemaTooNew):
        return False
    return 1 <= version <= migrations.LATEST and verdict == "ok"


def kept_name(path: Path, damaged: bool) -> Path:
    """A new name beside ``path`` for its old files: never one an earlier restore used."""
    stamp = time.strftime("%Y%m%dT%H%M%S")
    base = f"{path.name}.{DAMAGED if damaged else PRE_RESTORE}-{stamp}"
    saved, n = path.with_name(base), 1
    while any(shape.companion(saved, s).exists() for s in ("", *shape.COMPANIONS)):
        saved, n = path.with_name(f"{base}-{n}"), n + 1
    return saved


def keep_copy(path: Path, saved: Path) -> None:
    """Copy the store file at ``path`` and its log, byte for byte, to ``saved`` (owner-only):
    the way to keep a damaged store's contents while its file stays open."""
    for suffix in ("", "-wal"):
        src = shape.companion(path, suffix)
        if src.exists():
            dest = shape.companion(saved, suffix)
            fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as out, src.open("rb") as inp:
                shutil.copyfileobj(inp, out)
                out.flush()
                os.fsync(out.fileno())


def restore_file(path: Path, source: Path) -> Path | None:
    """Replace the store at ``path`` with the backup at ``source``, with nothing open: the
    store may be too damaged to open. Takes the store's lock (:class:`StoreLocked` while a
    process, a daemon, owns it). Where the old store's files went; None when there were none.
    A refused backup leaves every file as it was."""
    check_backup(source)
    lock = InstanceLock(path)
    with faults.mapped(path, "restoring the backup"):
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if not lock.acquire():
            lock.release()
            why = lock.refused or "its lock file cannot be written"
            raise faults.read_only(path, why, "restoring a backup")
    try:
        with faults.sealed(path, "restoring the backup"):
            return _swap(path, source)
    finally:
        lock.release()


def _swap(path: Path, source: Path) -> Path | None:
    """Build the backup's copy beside the store, move the old files aside, move it in."""
    new = _copy_of(source, path)
    try:
        damaged = path.exists() and not sound(path)
        old = [s for s in ("", *shape.COMPANIONS) if shape.companion(path, s).exists()]
        saved = kept_name(path, damaged) if old else None
        for suffix in old:
            kept = shape.companion(saved, suffix)
            os.rename(shape.companion(path, suffix), kept)
            os.chmod(kept, 0o600)
        os.rename(new, path)
    finally:
        new.unlink(missing_ok=True)
    files.sync_folder(path.parent)
    # The vectors, HNSW graphs, word counts and keyword rows of the old contents: made anew
    # on next use.
    ann_sidecar.sidecar_path(path).unlink(missing_ok=True)
    terms_sidecar.sidecar_path(path).unlink(missing_ok=True)
    vector_sidecar.sidecar_path(path).unlink(missing_ok=True)
    keywords_sidecar.sidecar_path(path).unlink(missing_ok=True)
    return saved


def _copy_of(source: Path, path: Path) -> Path:
    """The backup copied (SQLite's backup API) and migrated into a new owner-only file beside
    ``path``, with no log left beside it."""
    new = path.with_name(f".{path.name}.restore-{os.getpid()}")
    for leftover in (new, *(shape.companion(new, s) for s in shape.COMPANIONS)):
        leftover.unlink(missing_ok=True)
    os.close(os.open(new, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    try:
        src = connect.open_read_only(source, what="the backup", settled=True)
        try:
            dest = sqlite3.connect(new, isolation_level=None)
            try:
                src.backup(dest)
            finally:
                dest.close()
        finally:
            src.close()
        connect.open_writer(new).close()  # WAL, the schema migrated; the log folded in
        files.sync_file(new)
    except BaseException:
        new.unlink(missing_ok=True)
        raise
    return new
