"""What the file system's failures mean for a store, as chitta's errors: the one mapping.

Every write of the store (its transactions, its creation, its lock file, backups) and every
read runs inside :func:`mapped`, or re-raises through :func:`store_error`: a full disk or quota
(SQLITE_FULL, ENOSPC, EDQUOT) is :class:`StoreFull`, a file or folder that cannot be written
(SQLITE_READONLY, EROFS, EACCES) is :class:`StoreReadOnly`, and pages SQLite cannot read
(SQLITE_CORRUPT, SQLITE_NOTADB) are :class:`StoreCorrupt` — each naming the store. Anything
else is left as it was raised: a bug should look like one.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from chitta.errors import StoreCorrupt, StoreError, StoreFull, StoreReadOnly

#: An I/O error while the store's disk has less room than this is taken for a full disk:
#: SQLite reports a -shm file it could not grow as SQLITE_IOERR, not SQLITE_FULL.
LOW_SPACE_BYTES = 1 << 20
_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
_READ_ONLY_ERRNOS = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})
RESTORE_HINT = "restore a backup with `chitta restore-backup FILE` (it keeps this file beside it)"


def free_bytes(path: Path) -> int | None:
    """Bytes free to this user on the file system holding ``path`` (None if unknown)."""
    folder = Path(path)
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    try:
        st = os.statvfs(folder)
    except OSError:
        return None
    return st.f_bavail * st.f_frsize


def full(path: Path, doing: str = "", *, what: str = "the store", reads: bool = True) -> StoreFull:
    """The error of a write (``doing``) refused for want of space on ``path``'s disk."""
    free = free_bytes(path)
    left = "" if free is None else f" ({free // 1024} KiB free)"
    done = f"{doing} was not done" if doing else "the write was not made"
    still = " (reading it still works)" if reads else ""
    return StoreFull(
        f"the disk holding {what} {path} is full{left}: {done}; free some space and try "
        f"again{still}"
    )


def read_only(
    path: Path, why: str = "", doing: str = "", *, what: str = "the store", reads: bool = True
) -> StoreReadOnly:
    """The error of a write (``doing``) refused because ``path`` cannot be written (``why``)."""
    because = f" ({why})" if why else ""
    done = f"{doing} was refused" if doing else "writes are refused"
    still = "; reading it still works" if reads else ""
    return StoreReadOnly(f"{what} {path} is read-only{because}: {done}{still}")


def corrupt(path: Path, detail: str) -> StoreCorrupt:
    return StoreCorrupt(f"the store {path} is damaged ({detail}); {RESTORE_HINT}")


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
    if isinstance(exc, OSError) and not isinstance(exc, BlockingIOError):
        if exc.errno in _FULL_ERRNOS:
            return full(path, doing, what=what, reads=reads)
        if exc.errno in _READ_ONLY_ERRNOS:
            return read_only(path, exc.strerror or "", doing, what=what, reads=reads)
    return None


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
    """Run the block with the file system's failures raised as the store's errors
    (``doing``: what the block does, for the message; ``what`` names ``path``; ``reads``:
    say that reading it still works)."""
    try:
        yield
    except (sqlite3.Error, OSError) as exc:
        error = store_error(exc, path, doing, what, reads)
        if error is None:
            raise
        raise error from exc
