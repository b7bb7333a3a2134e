"""The HNSW sidecar: the realms' graphs saved beside the store file, so opening is quick.

Building a graph over 100k vectors takes tens of seconds on two cores; reading one back
takes well under a second. The sidecar is only a cache: the ``embeddings`` table stays the
truth. On open every saved graph is checked against the vectors just read from the store —
the model identity, a checksum of its bytes, and for every vector in it that its memory is
live in that realm with exactly that vector (compared by a CRC-32 of the vector's bytes) —
then brought up to date (stale vectors out, missing ones in) or, when much has changed or
anything fails to check, rebuilt. A sidecar
that is missing, unreadable, corrupt or from another model never changes what recall finds.

Layout: ``MAGIC``, the header's length and CRC-32 (4-byte little-endian each), a JSON
header (format, model, settings, and per realm the memory ids in key order, the keys, and
the length and CRC-32 of its two blobs), then each realm's blobs: usearch's own, and the
CRC-32 of each of its vectors in key order. Owner-only (0600) like the store.
"""

from __future__ import annotations

import contextlib
import json
import logging
import mmap
import os
import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from usearch.index import Index

from chitta import files
from chitta.store.ann import CONNECTIVITY, DTYPE, EXPANSION_ADD, RealmAnn
from chitta.store.vectors import VectorIndex, build_threads

log = logging.getLogger(__name__)

MAGIC = b"chitta-hnsw\x00"
#: 5: the graphs hold float16 vectors (ann.DTYPE); a format-4 sidecar (float32) is rebuilt.
FORMAT = 5
#: Repair a saved graph in place while at most this share of it changed; rebuild beyond,
#: since many removals leave a graph with tombstones and weaker links.
MAX_REPAIR_SHARE = 0.25
_PREFIX = struct.Struct("<II")  # the header's length and CRC-32


def sidecar_path(store_path: Path) -> Path:
    return store_path.with_name(store_path.name + ".hnsw")


@dataclass(frozen=True, slots=True)
class _Saved:
    """One realm's graph as read from the sidecar, its blobs checked against their CRC-32."""

    ids: list[str]
    keys: np.ndarray
    blob: memoryview  # into the mapped file: valid while it is mapped
    hashes: np.ndarray  # of each key's vector (row_hashes), as saved


def row_hashes(matrix: np.ndarray) -> np.ndarray:
    """The CRC-32 of each row's bytes: a changed vector changes its checksum (almost surely;
    this guards against staleness and accidents, not against an adversary, who would need
    write access to the owner-only store anyway)."""
    rows = np.ascontiguousarray(matrix, dtype=np.float32)
    return np.fromiter((zlib.crc32(r) for r in rows), dtype=np.uint32, count=len(rows))


def _settings() -> dict[str, int | str]:
    return {"connectivity": CONNECTIVITY, "expansion_add": EXPANSION_ADD, "dtype": DTYPE}


@contextlib.contextmanager
def _mapped(path: Path) -> Iterator[tuple[mmap.mmap, memoryview] | None]:
    """The file memory-mapped copy-on-write (None if it cannot be read): the graphs are
    checked from the mapping and viewed in it, never copied. A graph viewed in it keeps a
    view of its bytes, and so the mapping, for as long as it lives; the rest goes with the
    block. Copy-on-write: nothing a process does to its pages reaches the file."""
    try:
        with open(path, "rb") as fh:
            mapping = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_COPY)
    except (OSError, ValueError):  # missing, unreadable, or empty (mmap refuses 0 bytes)
        yield None
        return
    view = memoryview(mapping)
    try:
        yield mapping, view
    finally:
        view.release()


def _read(
    mapped: tuple[mmap.mmap, memoryview] | None, path: Path, model: dict
) -> tuple[dict[str, _Saved], list[int] | None]:
    """The sidecar's graphs by realm (their blobs views into the mapped file at ``path``),
    and the stamp of the vectors' sidecar they were saved with; no graphs if it is missing,
    foreign, stale or corrupt. The checksums read every page: they are given back after
    (a viewed graph's pages are read again as a search walks them)."""
    if mapped is None:
        return {}, None
    mapping, data = mapped
    try:
        return _checked(data, model)
    except (ValueError, KeyError, TypeError, AttributeError, struct.error):
        log.warning("ignoring the HNSW sidecar %s: it is corrupt; rebuilding", path)
        return {}, None
    finally:
        with contextlib.suppress(OSError, AttributeError):  # madvise: not on every platform
            mapping.madvise(mmap.MADV_DONTNEED)


def _checked(data: memoryview, model: dict) -> tuple[dict[str, _Saved], list[int] | None]:
    """:func:`_read`'s work; ValueError (and the like) when the file does not check."""
    if bytes(data[: len(MAGIC)]) != MAGIC:
        raise ValueError("no magic")
    length, crc = _PREFIX.unpack_from(data, len(MAGIC))
    start = len(MAGIC) + _PREFIX.size
    raw = data[start : start + length]
    if zlib.crc32(raw) != crc:
        raise ValueError("header checksum")
    header = json.loads(bytes(raw))
    if header.get("format") != FORMAT or header.get("model") != model:
        return {}, None
    if header.get("settings") != _settings():
        return {}, None
    offset, saved = start + length, {}
    for entry in header["realms"]:
        blob = data[offset : offset + entry["blob_len"]]
        offset += entry["blob_len"]
        hashes = data[offset : offset + entry["hashes_len"]]
        offset += entry["hashes_len"]
        if zlib.crc32(blob) != entry["blob_crc"] or zlib.crc32(hashes) != entry["hashes_crc"]:
            raise ValueError("checksum")
        keys = np.asarray(entry["keys"], dtype=np.uint64)
        row_hash = np.frombuffer(hashes, dtype=np.uint32).copy()
        if not len(keys) == len(entry["ids"]) == len(row_hash):
            raise ValueError("lengths")
        saved[entry["realm"]] = _Saved(list(entry["ids"]), keys, blob, row_hash)
    return saved, header.get("vectors")


class _Check:
    """Which of a saved graph's vectors are still the rows' vectors: by the CRC-32 of every
    row, or — when the graphs were saved with the vectors' sidecar the index was read from —
    of the rows the log's replay changed since, the rest being the file's as the graph saw
    them."""

    def __init__(self, index: VectorIndex, changed: frozenset[str] | None) -> None:
        self._index = index
        self._changed = changed
        self._hashes: np.ndarray | None = None

    def same(self, saved: _Saved, rows: np.ndarray, candidates: np.ndarray) -> np.ndarray:
        """``candidates`` (saved positions whose memory is live in the realm at ``rows``)
        narrowed to those whose saved vector is the row's."""
        same = candidates.copy()
        if self._changed is None:
            if self._hashes is None:
                self._hashes = self._index.row_hashes(row_hashes)
            same[same] = self._hashes[rows[same]] == saved.hashes[same]
            return same
        if not self._changed:
            return same
        moved = [r for i in self._changed if (r := self._index.row_of(i)) is not None]
        check = np.flatnonzero(same & np.isin(rows, np.array(moved, dtype=np.int64)))
        if check.size:
            now = row_hashes(self._index.vectors_of(rows[check]))
            same[check] = now == saved.hashes[check]
        return same


def _restore(
    index: VectorIndex, code: int, saved: _Saved, check: _Check
) -> tuple[RealmAnn | None, int]:
    """The saved graph checked against the live vectors and repaired, and how many rows the
    repair changed; (None, 0) to rebuild."""
    try:
        # Viewed in the mapped file, not copied: its pages are read as searches walk them.
        graph = Index.restore(saved.blob, view=True)
    except Exception:  # usearch raises plain errors on a bad blob
        return None, 0
    if graph is None or graph.ndim != index.dim or len(graph) != len(saved.keys):
        return None, 0
    if saved.keys.size and not np.all(graph.contains(saved.keys)):
        return None, 0
    size = index.row_count()
    live = np.zeros(size, dtype=bool)
    live[index.live_rows(code)] = True
    rows = index.rows_of(saved.ids)
    same = rows >= 0
    same[same] = live[rows[same]]
    same = check.same(saved, rows, same)
    stale = saved.keys[~same]
    covered = np.zeros(size, dtype=bool)
    covered[rows[same]] = True
    missing = np.flatnonzero(live & ~covered)
    if stale.size + missing.size > MAX_REPAIR_SHARE * max(1, int(live.sum())):
        return None, 0
    # The stale vectors are left out of the adopted keys: a viewed graph skips them.
    ann = RealmAnn(index.dim, base=graph, buffer=saved.blob)
    next_key = int(saved.keys.max()) + 1 if saved.keys.size else 0
    ann.adopt(saved.keys[same].astype(np.int64), rows[same], next_key)
    if missing.size:
        ann.add(missing, index.vectors_of(missing), threads=build_threads(missing.size))
    return ann, int(stale.size + missing.size)


def attach_graphs(
    index: VectorIndex, path: Path, model: dict, *, changed: frozenset[str] | None = None
) -> None:
    """Give every realm due a graph one: from the sidecar when it checks, else built anew.

    ``changed``: when ``index`` was read from the vectors' sidecar, the memories the log's
    replay changed in it (only their vectors need checking against graphs saved with that
    file); None to check every vector.

    Saves the sidecar again when a graph was built, or when the repairs have grown past
    :data:`RESAVE_SHARE` of the graphs (a few writes since the last save are cheaper to repair
    at each open than rewriting a file of ~0.9 KB per vector).
    """
    due = index.realms_due_a_graph()
    if not due:
        return
    with _mapped(path) as data:
        saved, vectors = _read(data, path, model)
        stamp = index.saved_as
        same_file = stamp is not None and vectors == list(stamp)
        check = _Check(index, changed if same_file else None)
        built, repaired = _attach(index, due, saved, check)
    # Graphs checked vector by vector, the index read from a vectors' file: saved again at
    # close with that file's stamp, so the next open checks only what changes after it.
    index.dirty = built or bool(saved and stamp is not None and not same_file)
    index.changes = repaired
    if index.needs_save():
        save_graphs(index, path, model)


def _attach(
    index: VectorIndex, due: dict[str, int], saved: dict[str, _Saved], check: _Check
) -> tuple[bool, int]:
    """Attach each realm of ``due`` its graph, restored from ``saved`` or built; whether one
    was built, and how many rows the repairs changed. (A function of its own: the views into
    the mapped file that no graph keeps go with its frame.)"""
    built, repaired = False, 0
    for realm, code in due.items():
        found = saved.get(realm)
        ann, changed = _restore(index, code, found, check) if found else (None, 0)
        repaired += changed
        if ann is None:
            ann = index.build_graph(code)
            built = True
        index.attach(code, ann)
    return built, repaired


def save_graphs(index: VectorIndex, path: Path, model: dict) -> None:
    """Write every graph of ``index`` to the sidecar (atomically, owner-only); never raises."""
    graphs = index.graphs()
    if not graphs:
        return
    entries, blobs = [], []
    for realm, ann in graphs.items():
        keyed = ann.keyed_rows()
        blob = bytes(ann.merged(index.vectors_of).save())
        rows = np.array([r for _, r in keyed], dtype=np.int64)
        hashes = row_hashes(index.vectors_of(rows)).tobytes()
        blobs += [blob, hashes]
        entries.append(
            {
                "realm": realm,
                "ids": [index.id_of(r) for r in rows.tolist()],
                "keys": [k for k, _ in keyed],
                "blob_len": len(blob),
                "blob_crc": zlib.crc32(blob),
                "hashes_len": len(hashes),
                "hashes_crc": zlib.crc32(hashes),
            }
        )
    stamp = index.saved_as
    vectors = None if stamp is None else list(stamp)
    header = json.dumps({"format": FORMAT, "model": model, "settings": _settings(),
                         "vectors": vectors, "realms": entries}).encode()  # fmt: skip
    tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    try:
        fd = files.open_private(tmp)  # 0600 also over a killed save's leftover
        with os.fdopen(fd, "wb") as fh:
            fh.write(MAGIC + _PREFIX.pack(len(header), zlib.crc32(header)) + header)
            for blob in blobs:
                fh.write(blob)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        index.dirty, index.changes = False, 0
    except OSError as exc:
        # The sidecar is a cache: failing to write it costs the next open a rebuild, no more.
        log.warning("could not save the HNSW sidecar %s: %s", path, exc.strerror)
        with contextlib.suppress(OSError):
            tmp.unlink()
