"""The keyword rows' sidecar: the keyword search's view of the live memories (each row's
realm and length, each realm's count and total length: keywords.Rows) saved beside the
store file, so a start need not join every memory with FTS5's lengths (issue 24, instant
start; about 2 s a million memories).

A cache, the store the truth: used only while the store's change log (change_log.py) still
holds the row it was saved at and every memory logged after it is one stored since (a rowid
past the highest the file had seen), whose rows the search then adds from the file; any
other change (an edit, a forget, a restore, a purge), a damaged file, or one from another
store, and the rows are read from the store as before. Saved at close when the rows changed
since they were read or saved, for stores of :data:`MIN_MEMORIES` or more live memories;
removed by restoring a backup.

Layout: ``MAGIC``, the header's length and CRC-32 (4-byte little-endian each), the JSON
header (format, stamp, the highest rowid seen, the realms' codes and counts, the arrays'
length and CRC-32), then two int32 arrays by rowid: each row's realm code (-1 for none) and
its length. Owner-only (0600) like the store.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import struct
import zlib
from pathlib import Path

import numpy as np

from chitta import files
from chitta.store.sqlite import change_log
from chitta.store.sqlite.change_log import Stamp
from chitta.store.sqlite.keywords import Rows

log = logging.getLogger(__name__)

MAGIC = b"chitta-keywords\x00"
FORMAT = 1
#: Stores with fewer live memories read their rows at each start (about 20 ms per 10,000)
#: and get no file.
MIN_MEMORIES = 10_000
_PREFIX = struct.Struct("<II")


def sidecar_path(store_path: Path) -> Path:
    return store_path.with_name(store_path.name + ".keywords")


def _parse(data: bytes) -> tuple[dict, np.ndarray, np.ndarray]:
    """The header and the two arrays; ValueError (and the like) when the file does not check."""
    if not data.startswith(MAGIC):
        raise ValueError("no magic")
    length, crc = _PREFIX.unpack_from(data, len(MAGIC))
    start = len(MAGIC) + _PREFIX.size
    raw = data[start : start + length]
    if len(raw) != length or zlib.crc32(raw) != crc:
        raise ValueError("header checksum")
    header = json.loads(raw)
    arrays = data[start + length :]
    n = int(header["n"])
    if len(arrays) != 8 * n or zlib.crc32(arrays) != header["crc"]:
        raise ValueError("arrays")
    realm = np.frombuffer(arrays, dtype=np.int32, count=n).copy()
    lengths = np.frombuffer(arrays, dtype=np.int32, count=n, offset=4 * n).copy()
    return header, realm, lengths


def saved_stamp(path: Path) -> Stamp | None:
    """The change log's row the file at ``path`` was saved at; None if it has none."""
    try:
        with open(path, "rb") as fh:
            prefix = fh.read(len(MAGIC) + _PREFIX.size)
            length = _PREFIX.unpack_from(prefix, len(MAGIC))[0]
            if not prefix.startswith(MAGIC):
                return None
            return Stamp(*json.loads(fh.read(length))["stamp"])
    except (OSError, ValueError, KeyError, TypeError, struct.error):
        return None


def load(path: Path, conn: sqlite3.Connection) -> tuple[Rows, int] | None:
    """The saved rows and the highest rowid they had seen, when the file is whole and the
    store's as saved but for memories stored since (see above); else None."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    try:
        header, realm, lengths = _parse(data)
        if header["format"] != FORMAT:
            return None
        stamp, top = Stamp(*header["stamp"]), int(header["top"])
        codes = {str(name): int(code) for name, code in header["codes"].items()}
        rows = Rows(realm, lengths, codes, *(
            {int(code): int(n) for code, n in header[key].items()}
            for key in ("size", "tokens", "tag_tokens")))  # fmt: skip
        if len(realm) > top + 1 or (realm.size and int(realm.max()) >= len(codes)):
            raise ValueError("rows past the top, or an unknown realm")
    except (ValueError, KeyError, TypeError, AttributeError, struct.error):
        log.warning("ignoring the keyword rows' sidecar %s: it is corrupt; reading the store", path)
        return None
    if not change_log.holds(conn, stamp) or change_log.stored_since(conn, stamp, top) is None:
        return None
    return rows, top


def save(path: Path, rows: Rows, top: int, stamp: Stamp) -> None:
    """Write ``rows`` (the file's rowids up to ``top`` seen) as of the change log's row
    ``stamp``, atomically and owner-only; never raises (a failure is logged: the next start
    reads the store)."""
    arrays = rows.realm.astype(np.int32).tobytes() + rows.length.astype(np.int32).tobytes()
    header = json.dumps({
        "format": FORMAT, "stamp": list(stamp), "top": top, "n": len(rows.realm),
        "codes": dict(rows.codes), "size": dict(rows.size), "tokens": dict(rows.tokens),
        "tag_tokens": dict(rows.tag_tokens), "crc": zlib.crc32(arrays),
    }).encode()  # fmt: skip
    try:
        with files.replacing(path) as tmp, open(tmp, "wb") as fh:
            fh.write(MAGIC + _PREFIX.pack(len(header), zlib.crc32(header)) + header)
            fh.write(arrays)
    except OSError as exc:
        log.warning("could not save the keyword rows' sidecar %s: %s", path, exc.strerror)
