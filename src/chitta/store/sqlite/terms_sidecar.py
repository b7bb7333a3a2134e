"""The term statistics' sidecar: each realm's word counts saved beside the store file, so a
start need not read and tokenize every memory (issue 24, instant start).

Counting the words of 100,000 memories takes over a second on two cores, most of it in
Python's tokenizing; reading them back from this file takes milliseconds. The file is a
cache, the store the truth: it is used only while the store's change log (change_log.py)
still holds the row it was saved at, and the memories logged after it are all new ones (a
rowid past the highest the file had seen): their words are then counted in. Any other
change after it — an edit, a retag, a move, a forget, a restore or a purge, whoever made it
— and the words are counted afresh and saved again. A purge removes the file at once (the
purged memory's words would otherwise stay on disk until the next save), as a restored
backup does.

Layout: ``MAGIC``, the body's length and CRC-32 (4-byte little-endian each), then the body:
JSON ``{"format", "stamp", "top", "realms": {realm: {"size", "df": {word: count}}}}``.
Owner-only (0600) like the store.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
import struct
import zlib
from pathlib import Path

from chitta import files
from chitta.store.sqlite import change_log
from chitta.store.sqlite.change_log import Stamp
from chitta.store.terms import TermStats

log = logging.getLogger(__name__)

#: Stores with fewer live memories are counted at each start (under 0.15 s) and get no file.
MIN_MEMORIES = 10_000
MAGIC = b"chitta-terms\x00"
#: Bumped whenever what a word is (store/terms.py ``words``) or the layout changes (2: the
#: change log's stamp).
FORMAT = 2
_PREFIX = struct.Struct("<II")


def sidecar_path(store_path: Path) -> Path:
    return store_path.with_name(store_path.name + ".terms")


def top(conn: sqlite3.Connection) -> int:
    """The highest memory rowid the file has given (0 for none)."""
    return int(conn.execute("SELECT coalesce(max(rowid), 0) FROM memories").fetchone()[0])


def saved_stamp(path: Path) -> Stamp | None:
    """The change log's row the file at ``path`` was saved at; None if it has none."""
    try:
        data = path.read_bytes()
        length = _PREFIX.unpack_from(data, len(MAGIC))[0]
        body = data[len(MAGIC) + _PREFIX.size :]
        if not data.startswith(MAGIC) or len(body) != length:
            return None
        return Stamp(*json.loads(body)["stamp"])
    except (OSError, ValueError, KeyError, TypeError, struct.error):
        return None


def load(path: Path, conn: sqlite3.Connection) -> TermStats | None:
    """The saved statistics, with the memories stored since counted in, when the file is
    whole and the store's as it was saved (see above); else None."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    try:
        if not data.startswith(MAGIC):
            raise ValueError("no magic")
        length, crc = _PREFIX.unpack_from(data, len(MAGIC))
        body = data[len(MAGIC) + _PREFIX.size :]
        if len(body) != length or zlib.crc32(body) != crc:
            raise ValueError("checksum")
        saved = json.loads(body)
        if saved.get("format") != FORMAT:
            return None
        stamp, seen = Stamp(*saved["stamp"]), int(saved["top"])
        realms = {realm: (int(r["size"]), dict(r["df"])) for realm, r in saved["realms"].items()}
    except (ValueError, KeyError, TypeError, AttributeError, struct.error):
        log.warning("ignoring the term statistics sidecar %s: it is corrupt; counting anew", path)
        return None
    if not change_log.holds(conn, stamp):
        return None
    new = change_log.stored_since(conn, stamp, seen, "realm, content, deleted_at")
    if new is None:
        return None
    stats = TermStats.restored(realms)
    live = [(realm, content) for _, realm, content, deleted_at in new if deleted_at is None]
    if live:
        stats.add_all(live)
    return stats


def save(path: Path, stats: TermStats, stamp: Stamp, seen: int) -> None:
    """Write ``stats`` as of the change log's row ``stamp``, the store's highest rowid then
    ``seen`` (atomically, owner-only); never raises."""
    realms = {realm: {"size": size, "df": df} for realm, (size, df) in stats.snapshot().items()}
    # ASCII JSON: every word, a lone surrogate too, comes back as it was written.
    body = json.dumps({"format": FORMAT, "stamp": list(stamp), "top": seen, "realms": realms},
                      separators=(",", ":")).encode()  # fmt: skip
    tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    try:
        fd = files.open_private(tmp)
        with os.fdopen(fd, "wb") as fh:
            fh.write(MAGIC + _PREFIX.pack(len(body), zlib.crc32(body)) + body)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        # A cache: failing to write it costs the next start a count, no more.
        log.warning("could not save the term statistics sidecar %s: %s", path, exc.strerror)
        with contextlib.suppress(OSError):
            tmp.unlink()
