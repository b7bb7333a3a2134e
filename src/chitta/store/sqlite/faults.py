"""What SQLite's failures mean for a store, as chitta's errors: the backend's one mapping.

Every write of the store (its transactions, its creation, its lock file, backups) and every
read runs inside :func:`mapped`, or re-raises through :func:`store_error`: a full disk or quota
(SQLITE_FULL, ENOSPC, EDQUOT) is :class:`StoreFull`, a file or folder that cannot be written
(SQLITE_READONLY, EROFS, EACCES) is :class:`StoreReadOnly`, and pages SQLite cannot read
(SQLITE_CORRUPT, SQLITE_NOTADB) are :class:`StoreCorrupt` — each naming the store. The file
system's own failures are mapped as store/faults.py maps them. Anything else is left as it was
raised: a bug should look like one — except at the store's seams (:func:`sealed`), where any
other SQLite error becomes a plain :class:`StoreError` naming the store, with SQLite's own
error as its cause: nothing of SQLite's leaves the backend.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from chitta.errors import StoreError
from chitta.store import faults as files_faults
from chitta.store.faults import RESTORE_HINT, corrupt, free_bytes, full, read_only

__all__ = ["RESTORE_HINT", "corrupt", "full", "mapped", "read_only", "store_error"]

#: An I/O error while the store's disk has less room than this is taken for a full disk:
#: SQLite reports a -shm file it could not grow as SQLITE_IOERR, not SQLITE_FULL.
LOW_SPACE_BYTES = 1 << 20


def store_error(
    exc: BaseException, path: Path, doing: str = "", what: str = "the store", reads: bool = True
) -> StoreError | None:
    """The store error ``exc`` stands for, or None when it is not a file system failure."""
    if isinstance(exc, sqlite3.Error):
        primary = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
        text = str(exc)
        if primary == sqlite3.SQLITE_FULL or "database or disk is full" in text:
            return full(path, doing, what=what, reads=reads)
        if primary == sqlite3.SQLITE_READONLY or "readonly database" in text:
            return read_only(path, "SQLite cannot write it", doing, what=what, reads=reads)
        if primary in (sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN):
            # SQLite's I/O errors carry no errno: ask the file system what it is short of.
            if _low(path):
                return full(path, doing, what=what, reads=reads)
            if _mounted_read_only(path):
                return read_only(path, "its file system is mounted read-only", doing,
                                 what=what, reads=reads)  # fmt: skip
        if primary in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB) or "malformed" in text:
            return corrupt(path, f"SQLite: {text}")
        return None
    return files_faults.store_error(exc, path, doing, what, reads)


def _low(path: Path) -> bool:
    free = free_bytes(path)
    return free is not None and free < LOW_SPACE_BYTES


def _mounted_read_only(path: Path) -> bool:
    """Whether ``path``'s file system is mounted read-only (as ext4 remounts itself after
    an error: writes then fail with EROFS, which SQLite reports as an I/O error)."""
    try:
        return bool(os.statvfs(path.parent).f_flag & os.ST_RDONLY)
    except OSError:
        return False


@contextmanager
def mapped(
    path: Path, doing: str = "", what: str = "the store", reads: bool = True
) -> Iterator[None]:
    """Run the block with SQLite's and the file system's failures raised as the store's
    errors (``doing``: what the block does, for the message; ``what`` names ``path``;
    ``reads``: say that reading it still works)."""
    try:
        yield
    except (sqlite3.Error, OSError) as exc:
        error = store_error(exc, path, doing, what, reads)
        if error is None:
            raise
        raise error from exc


def sealed_error(
    exc: BaseException, path: Path, doing: str = "", what: str = "the store", reads: bool = True
) -> StoreError | None:
    """:func:`store_error`, and any other SQLite error as a :class:`StoreError`; None only for
    what is neither a file system failure nor SQLite's."""
    error = store_error(exc, path, doing, what, reads)
    if error is None and isinstance(exc, sqlite3.Error):
        during = f" ({doing})" if doing else ""
        error = StoreError(f"SQLite failed on {what} {path}{during}: {exc}")
    return error


@contextmanager
def sealed(
    path: Path, doing: str = "", what: str = "the store", reads: bool = True
) -> Iterator[None]:
    """:func:`mapped`, with every other SQLite error raised as a :class:`StoreError`: the
    seam between the backend and the rest of chitta."""
    try:
        yield
    except (sqlite3.Error, OSError) as exc:
        error = sealed_error(exc, path, doing, what, reads)
        if error is None:
            raise
        raise error from exc
