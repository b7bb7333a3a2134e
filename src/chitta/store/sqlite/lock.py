"""The exclusive instance lock: one process owns a store at a time (seed 001)."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from pathlib import Path

from chitta.errors import StoreLocked

#: Why a lock file cannot be opened for writing on a store that can still be read.
_READ_ONLY = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})


class InstanceLock:
    """An ``flock`` on ``<store>.lock`` holding the owner's pid; released on close or death.

    On a store that cannot be written (a read-only mount, a folder without write permission)
    the lock file cannot be opened for writing: the lock is then shared, on the lock file
    when there is one (so a daemon owning the store still keeps others out), else none —
    nobody can write such a store anyway, nor make the files a writer needs.
    """

    def __init__(self, store_file: Path) -> None:
        self.path = store_file.with_name(store_file.name + ".lock")
        self._fd: int | None = None
        #: True while this process owns the store (it may write); False when shared.
        self.exclusive = False
        #: Why the lock file could not be opened for writing (the system's words), if so.
        self.refused = ""

    def acquire(self) -> bool:
        """Take the lock: exclusive when the lock file can be written (True), else shared
        (False). :class:`StoreLocked` when another process owns the store."""
        if self.exclusive:
            return True
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            if exc.errno not in _READ_ONLY:
                raise
            self.refused = (exc.strerror or "").lower()
            if self._fd is None:
                self._share()
            return False
        self.release()  # a shared lock of this process would keep its own exclusive one out
        self._take(fd, fcntl.LOCK_EX)
        # The pid only names the owner in another process's error: a disk too full to take
        # these few bytes does not stop this one.
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
            os.write(fd, str(os.getpid()).encode())
        self._fd, self.exclusive = fd, True
        return True

    def _share(self) -> None:
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return
        self._take(fd, fcntl.LOCK_SH)
        self._fd = fd

    def _take(self, fd: int, how: int) -> None:
        try:
            fcntl.flock(fd, how | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = _read_pid(fd)
            os.close(fd)
            held = f"pid {pid}" if pid else "another process"
            raise StoreLocked(
                f"store {self.path.with_suffix('')} is held by {held}; stop that process or "
                "talk to it instead of opening the file",
                pid=pid,
            ) from None

    def release(self) -> None:
        if self._fd is not None:
            # The kernel drops the flock when the fd closes, also when the process dies.
            os.close(self._fd)
            self._fd = None
        self.exclusive = False


def _read_pid(fd: int) -> int | None:
    try:
        raw = os.pread(fd, 32, 0).decode().strip()
        return int(raw) if raw else None
    except (OSError, ValueError):
        return None
