"""A store file's shape, checked before SQLite opens it, and the files that go with it.

SQLite takes an empty file for an empty database, and opening a file cut short may succeed
until a read reaches the missing pages. chitta never leaves its store empty (a new store is
made under another name and moved into place whole, connect.py), so an empty, foreign or
short file is damage, reported as such before anything can write to it. The header fields
read here are those of the SQLite file format (https://sqlite.org/fileformat.html §1.3).
"""

from __future__ import annotations

from pathlib import Path

MAGIC = b"SQLite format 3\x00"
HEADER_BYTES = 100
WAL_HEADER_BYTES = 32
#: The files SQLite keeps beside a WAL-mode database.
COMPANIONS = ("-wal", "-shm")


def companion(path: Path, suffix: str) -> Path:
    return path.with_name(path.name + suffix)


def wal_has_frames(path: Path) -> bool:
    """Whether ``path``'s write-ahead log may hold writes not yet in the file itself."""
    try:
        return companion(path, "-wal").stat().st_size > WAL_HEADER_BYTES
    except FileNotFoundError:
        return False


def problem(path: Path) -> str | None:
    """What makes the file at ``path`` no SQLite database, or None when its shape is right."""
    size = path.stat().st_size
    if size == 0:
        return "it is empty (0 bytes)"
    with path.open("rb") as fh:
        head = fh.read(HEADER_BYTES)
    if not head.startswith(MAGIC):
        return "it is not a SQLite file"
    if len(head) < HEADER_BYTES:
        return f"it is cut short: {size} bytes, less than a SQLite header"
    page_size = int.from_bytes(head[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    if page_size < 512 or page_size & (page_size - 1):
        return f"its header is damaged (page size {page_size})"
    if wal_has_frames(path):
        return None  # the log may hold the pages a checkpoint has not written yet
    # The header's page count is valid when its change counter matches version-valid-for.
    pages = int.from_bytes(head[28:32], "big")
    if pages and head[24:28] == head[92:96] and size < pages * page_size:
        return f"it is cut short: {size} bytes of the {pages * page_size} its header counts"
    if size % page_size:
        return f"it is cut short: {size} bytes is not a whole number of {page_size}-byte pages"
    return None
