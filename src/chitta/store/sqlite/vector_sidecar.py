"""The vectors' sidecar: every live vector saved beside the store file in the vector index's
own layout and memory-mapped at open, so a start reads none of them (issue 24, compact
vectors and instant start).

Reading the vectors back from SQLite costs a start about 3 s a million memories, and the
float32 matrix they fill is the largest thing a process holds (1.5 GB at a million). Mapped
from this file instead, a vector is read from disk when a search first touches it: a realm
searched through its HNSW graph touches the few candidates it ranks, so most of the matrix
stays on disk (or in the page cache, which the kernel can take back) rather than in the
process's own memory. The mapping is copy-on-write: a vector the process replaces or adds
is its own, the file never changes under it.

The file is a cache; the store is the truth. It is used only when the store's change log
(change_log.py) still holds the row the file was saved at; the memories logged after it are
read again from the store (replayed) and the rest is taken as saved. A log that lacks the
row (a restored backup, another file under the same name) or names more than
:data:`MAX_REPLAY_SHARE` of the vectors after it makes the index read from the store as
before. Saved at close when the index was read from the store (at least :data:`MIN_VECTORS`
live vectors) or the changes since the file exceed :data:`RESAVE_SHARE` of it. A purge and
a restored backup delete the file (a purged vector must not stay on disk).

The vectors' bytes are not checksummed at open (checking them would read them all, which is
what the file is for not doing); the header, the ids and the scopes are, and a file shorter
than its header says is ignored.

Layout: ``MAGIC``, the header's length and CRC-32 (4-byte little-endian each), the JSON
header (format, model, stamp, dimension, count, capacity, scope codes, and the offset,
length and CRC-32 of each section), the ids (a JSON list), the scope codes (int32, realm,
agent and channel of each row in turn), then from a page boundary the float32 vectors of
the live rows and room for :data:`SPARE_SHARE` more (a hole in the file, no disk).
Owner-only (0600) like the store.
"""

from __future__ import annotations

import contextlib
import json
import logging
import mmap
import sqlite3
import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from chitta import files
from chitta.store.sqlite import change_log
from chitta.store.sqlite.change_log import Stamp
from chitta.store.vectors import VectorIndex

log = logging.getLogger(__name__)

MAGIC = b"chitta-vectors\x00"
FORMAT = 1
#: Stores with fewer live vectors read them from the store at each open (about 0.1 s per
#: 10,000) and get no file.
MIN_VECTORS = 10_000
#: More distinct memories changed since the file than this share of its vectors: read the
#: store instead of replaying the log.
MAX_REPLAY_SHARE = 0.25
#: Save the file again at close once the changes since it exceed this share of its vectors
#: (fewer are replayed at each open: rewriting ~1.5 KB a vector costs more).
RESAVE_SHARE = 0.05
#: Room for this share more vectors after the saved ones, so the rows a process adds go into
#: the mapping rather than into a copy of the whole matrix.
SPARE_SHARE = 0.125
#: The vectors start at a multiple of this (a page), so each row lies where the mapping
#: reads it whole.
ALIGN = 4096
_PREFIX = struct.Struct("<II")
_CHUNK = 500  # ids per query when the log's changes are read again


def sidecar_path(store_path: Path) -> Path:
    return store_path.with_name(store_path.name + ".vectors")


@dataclass(frozen=True, slots=True)
class Loaded:
    """An index read from the file (its stamp is ``index.saved_as``), and the memories the
    log's replay changed in it."""

    index: VectorIndex
    changed: frozenset[str]


def _header(data: memoryview | bytes) -> tuple[dict, int]:
    """The header and where the sections start; ValueError when it does not check."""
    if bytes(data[: len(MAGIC)]) != MAGIC:
        raise ValueError("no magic")
    length, crc = _PREFIX.unpack_from(data, len(MAGIC))
    start = len(MAGIC) + _PREFIX.size
    raw = bytes(data[start : start + length])
    if len(raw) != length or zlib.crc32(raw) != crc:
        raise ValueError("header checksum")
    return json.loads(raw), start + length


def saved_stamp(path: Path) -> Stamp | None:
    """The stamp the file at ``path`` was saved with; None if it is missing or unreadable."""
    try:
        with open(path, "rb") as fh:
            prefix = fh.read(len(MAGIC) + _PREFIX.size)
            if len(prefix) < len(MAGIC) + _PREFIX.size:
                return None
            length = _PREFIX.unpack_from(prefix, len(MAGIC))[0]
            header, _ = _header(prefix + fh.read(length))
        return Stamp(*header["stamp"])
    except (OSError, ValueError, KeyError, TypeError, struct.error):
        return None


def load(path: Path, conn: sqlite3.Connection, model: dict, *, hnsw_min: int) -> Loaded | None:
    """The vector index from the file, brought up to date by the log; None when the file is
    missing, foreign, stale beyond replay or corrupt (the caller reads the store)."""
    try:
        with open(path, "rb") as fh:
            mapping = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_COPY)
    except (OSError, ValueError):  # missing, unreadable, or empty
        return None
    try:
        index, stamp = _restore(mapping, conn, model, hnsw_min)
    except (ValueError, KeyError, TypeError, struct.error):
        log.warning("ignoring the vectors' sidecar %s: it is corrupt; reading the store", path)
        return None
    except (_Stale, sqlite3.OperationalError):  # another history, or a log not yet made
        return None
    changed = change_log.changed_since(conn, stamp)
    if len(changed) > MAX_REPLAY_SHARE * max(len(index), 1):
        return None
    _replay(index, conn, changed)
    index.saved_as, index.edits = stamp, len(changed)
    return Loaded(index, frozenset(changed))


class _Stale(Exception):
    """The file is whole but not of this store as it is (another model, another history)."""


def _restore(
    mapping: mmap.mmap, conn: sqlite3.Connection, model: dict, hnsw_min: int
) -> tuple[VectorIndex, Stamp]:
    header, _ = _header(memoryview(mapping))
    if header["format"] != FORMAT or header["model"] != model:
        raise _Stale
    stamp = Stamp(*header["stamp"])
    if not change_log.holds(conn, stamp):
        raise _Stale
    dim, count, capacity = int(header["dim"]), int(header["count"]), int(header["capacity"])
    offset = int(header["vectors"])
    if not 0 <= count <= capacity or dim <= 0 or len(mapping) < offset + capacity * dim * 4:
        raise ValueError("short file")
    ids = json.loads(_section(mapping, header["ids"]))
    scopes = np.frombuffer(_section(mapping, header["scopes"]), dtype=np.int32)
    if len(ids) != count or scopes.size != 3 * count:  # a repeated id: VectorIndex.restored
        raise ValueError("lengths")
    codes = {str(k): int(v) for k, v in header["codes"].items()}
    if scopes.size and not set(np.unique(scopes).tolist()) <= set(codes.values()):
        raise ValueError("scope codes")
    # What was read before the vectors is copied out: its pages are given back (nothing has
    # written to the mapping yet, so there is nothing private to lose).
    with contextlib.suppress(OSError, AttributeError):  # madvise: not on every platform
        mapping.madvise(mmap.MADV_DONTNEED, 0, offset)
    # The file's own pages, copy-on-write: nothing is read until a search touches a row.
    matrix = np.frombuffer(mapping, dtype=np.float32, count=capacity * dim, offset=offset)
    index = VectorIndex.restored(
        matrix.reshape(capacity, dim), ids, codes, scopes.reshape(3, count), hnsw_min=hnsw_min
    )
    return index, stamp


def _section(mapping: mmap.mmap, where: Sequence[int]) -> bytes:
    offset, length, crc = (int(x) for x in where)
    raw = mapping[offset : offset + length]
    if len(raw) != length or zlib.crc32(raw) != crc:
        raise ValueError("section checksum")
    return raw


def _replay(index: VectorIndex, conn: sqlite3.Connection, changed: list[str]) -> None:
    """Bring the index to the store's state for the memories the log names: a live memory
    with a vector is (re)filed with its scope, any other is hidden."""
    for start in range(0, len(changed), _CHUNK):
        chunk = changed[start : start + _CHUNK]
        marks = ", ".join("?" * len(chunk))
        rows = conn.execute(
            "SELECT m.id, m.realm, m.agent_id, m.channel, e.vector FROM memories m "
            "JOIN embeddings e ON e.memory_id = m.id "
            f"WHERE m.deleted_at IS NULL AND m.id IN ({marks})",
            chunk,
        ).fetchall()
        live = {r[0] for r in rows}
        for memory_id in chunk:
            if memory_id not in live:
                index.set_alive(memory_id, False)
        if rows:
            vectors = np.frombuffer(b"".join(r[4] for r in rows), dtype=np.float32)
            index.add([r[0] for r in rows], vectors.reshape(len(rows), index.dim),
                      [(r[1], r[2], r[3]) for r in rows], graphs=False)  # fmt: skip


def needs_save(index: VectorIndex) -> bool:
    """Whether ``index`` should be saved at close: read from the store and big enough, or
    changed since its file by more than :data:`RESAVE_SHARE`."""
    size = len(index)
    if index.saved_as is None:
        return size >= MIN_VECTORS
    return index.edits > RESAVE_SHARE * max(size, 1)


def save(index: VectorIndex, path: Path, model: dict, stamp: Stamp) -> bool:
    """Write the live vectors of ``index`` as of ``stamp`` (the log's head: the caller holds
    the store so nothing writes meanwhile), atomically and owner-only; whether it was
    written (a failure is logged: the next open reads the store)."""
    ids, rows, codes, scopes = index.saved_form()
    count, dim = len(ids), index.dim
    capacity = count + max(1024, int(count * SPARE_SHARE))
    id_bytes = json.dumps(ids, separators=(",", ":")).encode()
    scope_bytes = scopes.astype(np.int32).tobytes()
    header = {"format": FORMAT, "model": model, "stamp": list(stamp), "dim": dim,
              "count": count, "capacity": capacity, "codes": codes}  # fmt: skip
    # The sections' offsets depend on the header's length, which depends on them: lay the
    # header out with room for its numbers, then fix them.
    base = len(MAGIC) + _PREFIX.size
    header.update(ids=[0, len(id_bytes), zlib.crc32(id_bytes)],
                  scopes=[0, len(scope_bytes), zlib.crc32(scope_bytes)], vectors=0)  # fmt: skip
    room = len(json.dumps(header).encode()) + 64
    header["ids"][0] = base + room
    header["scopes"][0] = base + room + len(id_bytes)
    end = base + room + len(id_bytes) + len(scope_bytes)
    header["vectors"] = -(-end // ALIGN) * ALIGN
    raw = json.dumps(header).encode().ljust(room)
    try:
        with files.replacing(path) as tmp, open(tmp, "wb") as fh:
            fh.write(MAGIC + _PREFIX.pack(len(raw), zlib.crc32(raw)) + raw)
            fh.write(id_bytes)
            fh.write(scope_bytes)
            fh.seek(header["vectors"])
            for start in range(0, count, 65_536):
                part = index.vectors_of(rows[start : start + 65_536])
                fh.write(np.ascontiguousarray(part, dtype=np.float32).tobytes())
            fh.truncate(header["vectors"] + capacity * dim * 4)  # the spare rows: a hole
    except OSError as exc:
        log.warning("could not save the vectors' sidecar %s: %s", path, exc.strerror)
        return False
    index.saved_as, index.edits = stamp, 0
    return True
