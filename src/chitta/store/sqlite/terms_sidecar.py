"""The term statistics' sidecar: each realm's word counts saved beside the store file, so a
start need not read and tokenize every memory (issue 24, instant start).

Counting the words of 100,000 memories takes over a second on two cores, most of it in
Python's tokenizing; reading them back from this file takes milliseconds. The file is a
cache, the store the truth: it is used only when its stamp equals the store's — the number of
live memories and the sum of a CRC-32 of each one's realm and text, one aggregate query over
the file (a fifth of the counting's time) — and is otherwise counted afresh and saved again.
Any change of a live memory's text or realm, a forget, a restore or a purge changes the stamp,
whoever made it. A purge removes the file at once (the purged memory's words would otherwise
stay on disk until the next save), as a restored backup does.

Layout: ``MAGIC``, the body's length and CRC-32 (4-byte little-endian each), then the body:
JSON ``{"format", "stamp", "realms": {realm: {"size", "df": {word: count}}}}``. Owner-only
(0600) like the store.
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
from chitta.store.terms import TermStats

log = logging.getLogger(__name__)

#: Stores with fewer live memories are counted at each start (under 0.15 s) and get no file.
MIN_MEMORIES = 10_000
MAGIC = b"chitta-terms\x00"
#: Bumped whenever what a word is (store/terms.py ``words``) or the layout changes.
FORMAT = 1
_PREFIX = struct.Struct("<II")


def sidecar_path(store_path: Path) -> Path:
    return store_path.with_name(store_path.name + ".terms")


def _crc(realm: str, content: str) -> int:
    return zlib.crc32(content.encode("utf-8", "surrogatepass"), zlib.crc32(realm.encode()))


def stamp(conn: sqlite3.Connection) -> list[int]:
    """The live memories' count and the sum of each one's CRC-32 of its realm and text."""
    conn.create_function("chitta_terms_crc", 2, _crc, deterministic=True)
    count, total = conn.execute(
        "SELECT count(*), coalesce(sum(chitta_terms_crc(realm, content)), 0) FROM memories "
        "WHERE deleted_at IS NULL"
    ).fetchone()
    return [int(count), int(total)]


def load(path: Path, expected: list[int]) -> TermStats | None:
    """The saved statistics when the file is whole and its stamp is ``expected``; else None."""
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
        if saved.get("format") != FORMAT or saved.get("stamp") != expected:
            return None
        return TermStats.restored(
            {realm: (int(r["size"]), dict(r["df"])) for realm, r in saved["realms"].items()}
        )
    except (ValueError, KeyError, TypeError, AttributeError, struct.error):
        log.warning("ignoring the term statistics sidecar %s: it is corrupt; counting anew", path)
        return None


def save(path: Path, stats: TermStats, current: list[int]) -> None:
    """Write ``stats`` with the stamp ``current`` (atomically, owner-only); never raises."""
    realms = {realm: {"size": size, "df": df} for realm, (size, df) in stats.snapshot().items()}
    # ASCII JSON: every word, a lone surrogate too, comes back as it was written.
    body = json.dumps({"format": FORMAT, "stamp": current, "realms": realms},
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
