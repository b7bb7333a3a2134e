"""What the file system's failures mean for chitta's files, as chitta's errors.

A full disk or quota (ENOSPC, EDQUOT) is :class:`StoreFull`, a file or folder that cannot be
written (EROFS, EACCES) is :class:`StoreReadOnly`, each naming the file; anything else is left
as it was raised: a bug should look like one. The spool (chitta/spool.py) uses this module, so
it imports the standard library and chitta's errors only; a backend adds its own failures
(store/sqlite/faults.py: SQLite's result codes) on top.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from chitta.errors import StoreCorrupt, StoreError, StoreFull, StoreReadOnly

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
    """The store error the file system failure ``exc`` stands for, or None when it is none."""
    if isinstance(exc, OSError) and not isinstance(exc, BlockingIOError):
        if exc.errno in _FULL_ERRNOS:
            return full(path, doing, what=what, reads=reads)
        if exc.errno in _READ_ONLY_ERRNOS:
            return read_only(path, exc.strerror or "", doing, what=what, reads=reads)
    return None


@contextmanager
def mapped(
    path: Path, doing: str = "", what: str = "the store", reads: bool = True
) -> Iterator[None]:
    """Run the block with the file system's failures raised as the store's errors
    (``doing``: what the block does, for the message; ``what`` names ``path``; ``reads``:
    say that reading it still works)."""
    try:
        yield
    except OSError as exc:
        error = store_error(exc, path, doing, what, reads)
        if error is None:
            raise
        raise error from exc
