"""The exclusive instance lock: one process owns a store at a time (seed 001)."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from chitta.errors import StoreLocked


class InstanceLock:
    """An ``flock`` on ``<store>.lock`` holding the owner's pid; released on close or death."""

    def __init__(self, store_file: Path) -> None:
        self.path = store_file.with_name(store_file.name + ".lock")
        self._fd: int | None = None

    def acquire(self) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = _read_pid(fd)
            os.close(fd)
            held = f"pid {pid}" if pid else "another process"
            raise StoreLocked(
                f"store {self.path.with_suffix('')} is held by {held}; stop that process or "
                "talk to it instead of opening the file",
                pid=pid,
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            # The kernel drops the flock when the fd closes, also when the process dies.
            os.close(self._fd)
            self._fd = None


def _read_pid(fd: int) -> int | None:
    try:
        raw = os.pread(fd, 32, 0).decode().strip()
        return int(raw) if raw else None
    except (OSError, ValueError):
        return None
