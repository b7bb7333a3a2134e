"""The files chitta writes with user data: owner-only whatever the umask, whole or not at all.

A file is 0600 and a folder chitta makes is 0700, also when the file was there before with
wider bits (a new file's mode passes through the umask, and an old file keeps its mode when it
is opened, so each is set explicitly). A whole file (an export, a backup, a report) is written
to a private temporary file beside it and renamed over it once complete and on disk: a full
disk or a crash leaves the old file, or none, never a part that looks whole. A name that is a
device or a pipe (``-o /dev/stdout``, a FIFO) is written in place, never replaced; a symlink
is followed to the file it names.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, TypeVar

from chitta.errors import WriteFailed

FILE_MODE = 0o600
DIR_MODE = 0o700

T = TypeVar("T")


def private_dir(folder: Path) -> Path:
    """``folder``, made with any missing parents, each 0700; folders already there are left
    as they are (``-o ~/Documents/x`` must not change ``~/Documents``)."""
    folder = Path(folder)
    missing: list[Path] = []
    at = folder
    while not os.path.lexists(at) and at != at.parent:
        missing.append(at)
        at = at.parent
    for made in reversed(missing):
        try:
            made.mkdir(mode=DIR_MODE)
        except FileExistsError:
            continue  # made meanwhile by another process: not ours to change
        os.chmod(made, DIR_MODE)  # mkdir's mode passes through the umask
    return folder


def open_private(path: Path, flags: int = os.O_WRONLY | os.O_TRUNC) -> int:
    """A descriptor on ``path`` opened with ``flags`` (and created when missing), the file
    owner-only even if it was there with wider bits; a device or a pipe keeps its mode."""
    fd = os.open(path, flags | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            os.fchmod(fd, FILE_MODE)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_text(path: Path, *, append: bool = False) -> IO[str]:
    """``path`` open for writing UTF-8 text (appending with ``append``), owner-only, in place:
    for logs and streams of results, which grow as they are written."""
    flags = os.O_WRONLY | (os.O_APPEND if append else os.O_TRUNC)
    return os.fdopen(open_private(path, flags), "a" if append else "w", encoding="utf-8")


def tighten(path: Path) -> None:
    """Make ``path`` owner-only if it is a regular file with wider bits (a store file copied
    in, or made by an older chitta); left as it is where that is not allowed (a read-only
    file system, another owner): it can still be read."""
    with contextlib.suppress(OSError):
        st = os.stat(path)
        if stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) & ~FILE_MODE:
            os.chmod(path, FILE_MODE)


def is_stream(path: Path) -> bool:
    """True when ``path`` names something that is written in place: a device, a pipe, or a
    name under /dev or /proc (``/dev/stdout`` when the shell sent stdout to a file: that file
    is the shell's to replace, not chitta's)."""
    if os.path.abspath(path).startswith(("/dev/", "/proc/")):
        return True
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


@contextlib.contextmanager
def replacing(path: Path) -> Iterator[Path]:
    """A new, empty, owner-only temporary file beside ``path`` (its folders made 0700); when
    the block ends it is synced and renamed over ``path``, and when the block raises it is
    removed and ``path`` is as it was."""
    target = Path(os.path.realpath(path)) if os.path.islink(path) else Path(path)
    if is_stream(target):  # renaming over /dev/full would put a file where the device was
        raise OSError(errno.EINVAL, "not a regular file (a device or a pipe); name a file")
    private_dir(target.parent)
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)  # mkstemp makes it 0600 (the umask can only take bits away)
    tmp = Path(name)
    try:
        yield tmp
        sync_file(tmp)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    with contextlib.suppress(OSError):  # the data is safe; the new name's durability is a bonus
        sync_folder(target.parent)


def sync_file(path: Path) -> None:
    """Make the bytes of the file at ``path`` durable."""
    _sync(path, os.O_RDONLY)


def sync_folder(folder: Path) -> None:
    """Make the names in ``folder`` durable (a new or renamed file survives a crash)."""
    _sync(folder, os.O_RDONLY | os.O_DIRECTORY)


def _sync(path: Path, flags: int) -> None:
    fd = os.open(path, flags | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_private(path: Path, write: Callable[[IO[str]], T]) -> T:
    """Call ``write(fh)`` on UTF-8 text that becomes ``path`` once complete (see the module
    docstring); what ``write`` returned. Raises :class:`WriteFailed` naming ``path`` and the
    cause when the text cannot be written."""
    path = Path(path)
    try:
        if is_stream(path):
            with os.fdopen(open_private(path), "w", encoding="utf-8") as fh:
                return write(fh)
        with replacing(path) as tmp, tmp.open("w", encoding="utf-8") as fh:
            done = write(fh)
        return done
    except OSError as exc:
        raise write_failed(path, exc) from None


def write_text_private(path: Path, text: str) -> None:
    """``text`` as the whole of ``path``, owner-only (:func:`write_private`)."""
    write_private(path, lambda fh: fh.write(text))


def write_failed(path: Path, exc: OSError | str) -> WriteFailed:
    """The error for ``path`` that could not be written because of ``exc``."""
    reason = exc if isinstance(exc, str) else exc.strerror or str(exc)
    full = not isinstance(exc, str) and exc.errno in (errno.ENOSPC, errno.EDQUOT)
    if full and not is_stream(path):  # (a device such as /dev/full is not a disk)
        reason = f"the disk is full ({reason})"
    if is_stream(path):
        return WriteFailed(f"cannot write {path}: {reason}")
    kept = "the file there is as it was" if os.path.lexists(path) else "no file was left"
    return WriteFailed(f"cannot write {path}: {reason}; {kept}")
