"""The embedded store: one SQLite file in WAL mode, source of truth for everything.

Memories, their vectors, the FTS5 keyword index, triplets and episodes live in one file.
An instance lock makes one process its owner; inside that process a lock serialises use of
the single connection. Every write is one transaction, committed with ``synchronous=FULL``
before the call returns, so an acknowledged write survives a crash of the process.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from chitta import files
from chitta.embed.base import ModelIdentity
from chitta.errors import (
    MemoryNotFound,
    ModelMismatch,
    StoreCorrupt,
    StoreError,
    StoreFull,
    StoreMissing,
    StoreReadOnly,
)
from chitta.store import (
    access,
    ann_sidecar,
    connect,
    faults,
    keywords,
    migrations,
    restore,
    shape,
)
from chitta.store import triplets as triplet_table
from chitta.store.ann import HNSW_MIN_VECTORS
from chitta.store.confidence import Confidence
from chitta.store.corrections import CorrectionIndex
from chitta.store.kinds import Kind
from chitta.store.links import LinkIndex
from chitta.store.lock import InstanceLock
from chitta.store.records import Alias, Episode, Memory, Scope, Source, Triplet
from chitta.store.sparse import SparseIndex, coder_for
from chitta.store.terms import TermStats
from chitta.store.vectors import VectorIndex

log = logging.getLogger(__name__)

#: SQLite's primary result codes for a copy that could not be written (not a bad store).
_WRITE_ERRORS = frozenset({sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN,
                           sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM})  # fmt: skip

_MEMORY_COLUMNS = (
    "id, kind, content, realm, agent_id, channel, tags, source, created_at, updated_at, "
    "event_time, mu, sigma_sq, n, tau, strength, tier, access_count, last_accessed, "
    "decayed_at, supersedes, superseded_by, episode_id, truncated, deleted_at"
)
_PLACEHOLDERS = ", ".join("?" * len(_MEMORY_COLUMNS.split(", ")))
# The access log owns these two (store/access.py): an update of a memory read earlier must not
# overwrite the counts a batch wrote since.
_ACCESS_COLUMNS = ("access_count", "last_accessed")
_UPDATE_COLUMNS = ", ".join(c for c in _MEMORY_COLUMNS.split(", ") if c not in _ACCESS_COLUMNS)
_UPDATE_PLACEHOLDERS = ", ".join("?" * len(_UPDATE_COLUMNS.split(", ")))

#: A keyword search checks this many times its limit of its best candidates against the
#: scope (agent, channel, period) at once, and twice as many each time too few pass.
KW_OVERFETCH = 2


def _memory_row(m: Memory) -> tuple:
    c = m.confidence
    return (
        m.id, m.kind.value, m.content, m.realm, m.agent_id, m.channel, " ".join(m.tags),
        json.dumps(m.source.as_dict()), m.created_at, m.updated_at, m.event_time,
        c.mu, c.sigma_sq, c.n, c.tau, m.strength, m.tier, m.access_count, m.last_accessed,
        m.decayed_at, m.supersedes, m.superseded_by, m.episode_id, int(m.truncated),
        m.deleted_at,
    )  # fmt: skip


def _update_row(m: Memory) -> tuple:
    columns = _MEMORY_COLUMNS.split(", ")
    return tuple(
        v for c, v in zip(columns, _memory_row(m), strict=True) if c not in _ACCESS_COLUMNS
    )


def _memory_from_row(r: sqlite3.Row) -> Memory:
    return Memory(
        id=r["id"],
        kind=Kind(r["kind"]),
        content=r["content"],
        realm=r["realm"],
        agent_id=r["agent_id"],
        channel=r["channel"],
        tags=tuple(r["tags"].split()) if r["tags"] else (),
        source=Source(**json.loads(r["source"])),
        created_at=r["created_at"],
        updated_at=r["updated_at"],
        event_time=r["event_time"],
        confidence=Confidence(mu=r["mu"], sigma_sq=r["sigma_sq"], n=r["n"], tau=r["tau"]),
        strength=r["strength"],
        tier=r["tier"],
        access_count=r["access_count"],
        last_accessed=r["last_accessed"],
        decayed_at=r["decayed_at"],
        supersedes=r["supersedes"],
        superseded_by=r["superseded_by"],
        episode_id=r["episode_id"],
        truncated=bool(r["truncated"]),
        deleted_at=r["deleted_at"],
    )


def _scope_sql(scope: Scope, alias: str = "", *, elsewhere: bool = False) -> tuple[str, list[str]]:
    """A WHERE fragment (and its parameters) restricting rows to ``scope`` (``elsewhere``: to
    its agent and channel in every other realm)."""
    p = f"{alias}." if alias else ""
    sql, params = [f"{p}realm {'!=' if elsewhere else '='} ?"], [scope.realm]
    if scope.agent_id is not None:
        sql.append(f"{p}agent_id = ?")
        params.append(scope.agent_id)
    if scope.channel is not None:
        sql.append(f"{p}channel = ?")
        params.append(scope.channel)
    return " AND ".join(sql), params


#: A memory's time: when it happened, else when it was stored (seed 002 §2.7).
_TIME = "coalesce(m.event_time, m.created_at)"


def _period_sql(start_ms: int, end_ms: int, include_superseded: bool) -> tuple[str, list[int]]:
    """A condition (and its parameters) on ``memories m`` left-joined with ``episodes e``: the
    memory's time or its episode's start lies in ``[start_ms, end_ms)``, and it is not
    superseded unless ``include_superseded``."""
    sql = f"(({_TIME} >= ? AND {_TIME} < ?) OR (e.started_at >= ? AND e.started_at < ?))"
    if not include_superseded:
        sql = f"({sql} AND m.superseded_by IS NULL)"
    return sql, [start_ms, end_ms, start_ms, end_ms]


T = TypeVar("T")


def _whole(write: Callable[..., T]) -> Callable[..., T]:
    """Run a write under the store's lock from start to end: the file and the in-memory
    indexes change as one step, so an index being built from the file on another thread
    cannot miss the write or count it twice."""

    @functools.wraps(write)
    def locked(self: Store, *args: Any, **kwargs: Any) -> T:
        with self._mutex:
            return write(self, *args, **kwargs)

    return locked


def _reads(read: Callable[..., T]) -> Callable[..., T]:
    """Raise the file's failures in a read that uses the store's connection directly (an
    index built from the file, the access history) as the store's errors, as _query does."""

    @functools.wraps(read)
    def mapped(self: Store, *args: Any, **kwargs: Any) -> T:
        try:
            return read(self, *args, **kwargs)
        except (sqlite3.Error, OSError) as exc:
            error = faults.store_error(exc, self.path, "the read")
            if error is None:
                raise
            raise error from exc

    return mapped


class Store:
    """One chitta store file, owned by this process while open."""

    def __init__(
        self,
        path: Path,
        *,
        create: bool = True,
        access_every: int = access.FLUSH_EVERY,
        access_seconds: float = access.FLUSH_SECONDS,
        hnsw_min: int = HNSW_MIN_VECTORS,
    ) -> None:
        self.path = Path(path)
        self.hnsw_min = hnsw_min  # live vectors a realm needs for an HNSW graph; 0: never
        #: Why this store cannot be written, when it cannot (a read-only file system, a
        #: full disk at open): reads work, writes are refused with the reason. None: writable.
        self.read_only: str | None = None
        self._refuse: Callable[[str], StoreError] = lambda doing: faults.read_only(self.path)
        # (set with read_only: the error a write gets, given what it was doing)
        if not self.path.exists():
            if not create:
                raise StoreMissing(
                    f"no store at {self.path}; `chitta remember` creates one, or check "
                    "CHITTA_HOME and --store"
                )
            with faults.mapped(self.path, "creating it", reads=False):
                files.private_dir(self.path.parent)
        for suffix in ("", "-wal", "-shm"):  # a store copied in with wider bits becomes 0600
            files.tighten(self.path.with_name(self.path.name + suffix))
        self._lock = InstanceLock(self.path)
        with faults.mapped(self.path, "opening it"):
            writable = self._lock.acquire()
        self._mutex = threading.RLock()
        self._readers = threading.local()  # each thread's read connection (_reader)
        # Every reader with the thread it belongs to, so a dead thread's can be closed.
        self._reader_conns: list[tuple[threading.Thread, sqlite3.Connection]] = []
        self._readers_lock = threading.Lock()
        self._vectors: VectorIndex | None = None
        self._terms: TermStats | None = None
        self._links: LinkIndex | None = None
        self._sparse: SparseIndex | None = None  # the hdc lane's codes, kept like _vectors
        self._corrections: CorrectionIndex | None = None
        self._keyword_rows = keywords.RowTable()  # the keyword search's per-realm statistics
        try:
            self._conn = self._connect(writable)
        except BaseException:
            self._lock.release()
            raise
        self._access = access.AccessLog(
            self._write_access, self._mutex, every=access_every, seconds=access_seconds
        )

    def _connect(self, writable: bool) -> sqlite3.Connection:
        """The store's connection: for writing when it can be written, else read-only (and
        ``read_only`` says why). A missing file is made (the lock is held by now)."""
        if not self.path.exists():
            with faults.mapped(self.path, "creating it", reads=False):
                connect.create(self.path)
        elif problem := self._shape_problem():
            raise StoreCorrupt(
                f"the store {self.path} is not a chitta store: {problem}; {faults.RESTORE_HINT}"
                ", or move it away to start a new store"
            )
        why = "" if writable else self._lock.refused or "its lock file cannot be written"
        if writable and not all(os.access(p, os.W_OK) for p in (self.path, self.path.parent)):
            why = "its file or folder cannot be written"
        if not why:
            try:
                return connect.open_writer(self.path)
            except StoreFull:
                # Too full even to make the -shm file: read it as it is (connect.py says why
                # that is safe), and take writes again once there is room (_writable).
                self.read_only = "the disk is full"
                self._refuse = lambda doing: faults.full(self.path, doing)
        else:
            self.read_only = why
            self._refuse = lambda doing: faults.read_only(self.path, why, doing)
        conn = connect.open_read_only(self.path)
        try:
            version = connect.version_of(conn, self.path)
        except BaseException:
            conn.close()
            raise
        if version < migrations.LATEST:
            conn.close()
            raise self._refuse(
                f"the upgrade of its schema (version {version} to {migrations.LATEST}) that "
                "this chitta needs before it can read it"
            )
        return conn

    def _shape_problem(self) -> str | None:
        try:
            return shape.problem(self.path)
        except OSError as exc:  # not even readable: no mode or mount lets chitta in
            raise StoreError(f"the store {self.path} cannot be read: {exc.strerror}") from exc

    def _writable(self, doing: str = "") -> None:
        """Make sure the store can take a write; the reason as its error when it cannot.

        A store opened read-only tries to open for writing again first: the disk may have
        room by now, the folder may be writable. Call with the store's lock held."""
        if self.read_only is None:
            return
        try:
            if not self._lock.acquire():
                raise self._refuse(doing)
            conn = connect.open_writer(self.path)
        except (StoreError, OSError) as exc:
            raise self._refuse(doing) from exc
        # Every read of a read-only store went through this connection under the lock (see
        # _query): nobody else holds it.
        self._conn.close()
        self._conn = conn
        self.read_only = None

    # --- lifetime ------------------------------------------------------------------------------

    @property
    def location(self) -> str:
        """The store's file (the protocol's ``location``)."""
        return str(self.path)

    def close(self) -> None:
        """Flush the access history, save the HNSW graphs if due, close the file and release
        the instance lock — the last two even when one of the first two fails."""
        try:
            if self._conn is not None:
                try:
                    self._access.close()  # the buffered access history, before the file goes
                except (StoreFull, StoreReadOnly) as exc:
                    # Never acknowledged to anyone: losing the batch costs recall a little.
                    log.warning("the access history of this session was not saved: %s",
                                exc.code)  # fmt: skip
            with self._mutex:
                vectors = self._vectors
                writable = self._conn is not None and self.read_only is None
                if vectors is not None and vectors.needs_save() and writable:
                    self._save_graphs()
        finally:
            with self._mutex:
                with self._readers_lock:
                    for _, reader in self._reader_conns:
                        reader.close()
                    self._reader_conns.clear()
                if self._conn is not None:
                    self._conn.close()
                    self._conn = None  # type: ignore[assignment]
                self._lock.release()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; committed (and synced) on exit, rolled back on error.

        The seam of every write: a full disk, a file that cannot be written or damaged pages
        come out as the store's errors (store/faults.py), and the connection is left with no
        transaction open, so the next write can succeed once the cause is gone."""
        with self._mutex, faults.mapped(self.path):
            self._writable()
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
                self._conn.execute("COMMIT")
            except BaseException:
                # SQLite may have rolled back already (SQLITE_FULL does, at a statement or at
                # COMMIT); a ROLLBACK then would fail and hide the cause.
                if self._conn.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        self._conn.execute("ROLLBACK")
                raise

    @contextmanager
    def write_lock(self) -> Iterator[None]:
        """Hold the writer's lock across a read and the write it decides (nothing in between)."""
        with self._mutex:
            yield

    def _query(self, sql: str, params: Sequence[object] = ()) -> list[sqlite3.Row]:
        """Rows of a read. A thread in the middle of a write (it holds the store's lock) reads
        through the writing connection, so it sees its own changes; any other thread reads
        through a connection of its own, so reads run side by side (WAL readers do not block
        each other or the writer) instead of queueing on the lock."""
        try:
            if self.read_only is not None:  # one connection: _writable may swap it
                with self._mutex:
                    return self._conn.execute(sql, params).fetchall()
            if self._mutex._is_owned():  # type: ignore[attr-defined]
                return self._conn.execute(sql, params).fetchall()
            return self._reader().execute(sql, params).fetchall()
        except (sqlite3.Error, OSError) as exc:
            error = faults.store_error(exc, self.path, "the read")
            if error is None:
                raise
            raise error from exc

    def _reader(self) -> sqlite3.Connection:
        """This thread's read-only connection to the file, opened on first use."""
        if self._conn is None:  # closed: its readers were closed with it
            raise StoreError(f"store {self.path} is closed")
        conn = getattr(self._readers, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA query_only = ON")
            with self._readers_lock:
                self._close_orphans()
                self._reader_conns.append((threading.current_thread(), conn))
            self._readers.conn = conn
        return conn

    def _close_orphans(self) -> None:
        """Close the readers of threads that have ended (the caller holds the readers' lock).

        Short-lived threads read too (cited recall asks its sources on a pool of its own per
        call); without this each would leave an open connection, two file descriptors, in a
        long-running daemon. A dead thread's connection has no other user."""
        alive = []
        for thread, conn in self._reader_conns:
            if thread.is_alive():
                alive.append((thread, conn))
            else:
                conn.close()
        self._reader_conns = alive

    # --- metadata and the model identity -------------------------------------------------------

    def meta(self, key: str) -> str | None:
        rows = self._query("SELECT value FROM meta WHERE key = ?", (key,))
        return rows[0][0] if rows else None

    def set_meta(self, key: str, value: str) -> None:
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    def delete_meta(self, key: str) -> None:
        with self.transaction() as conn:
            conn.execute("DELETE FROM meta WHERE key = ?", (key,))

    def meta_items(self) -> dict[str, str]:
        """Every metadata entry, by key."""
        return dict(self._query("SELECT key, value FROM meta ORDER BY key"))

    def model_identity(self) -> ModelIdentity | None:
        raw = self.meta("model")
        return ModelIdentity(**json.loads(raw)) if raw else None

    def bind_model(self, identity: ModelIdentity) -> None:
        """Record ``identity`` on a store that has none; refuse one made by another model."""
        stored = self.model_identity()
        if stored is None and self.read_only is not None:
            return  # nothing to check it against, and no way to record it
        if stored is None:
            self.set_meta("model", json.dumps(identity.as_dict()))
            self._vectors = self._sparse = None  # an index built before now has no dimension
        elif stored != identity:
            raise ModelMismatch(
                f"store {self.path} was embedded with {stored.describe()}, but the configured "
                f"model is {identity.describe()}; run `chitta reembed` to re-embed every "
                "memory with the configured model, or configure the store's model again"
            )

    def replace_model(self, identity: ModelIdentity, vectors: dict[str, np.ndarray]) -> None:
        """Swap every vector and the recorded model in one transaction (re-embedding)."""
        with self.transaction() as conn:
            conn.executemany(
                "INSERT INTO embeddings (memory_id, vector) VALUES (?, ?) ON CONFLICT "
                "(memory_id) DO UPDATE SET vector = excluded.vector",
                ((mid, v.astype(np.float32).tobytes()) for mid, v in vectors.items()),
            )
            conn.execute(
                "INSERT INTO meta (key, value) VALUES ('model', ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (json.dumps(identity.as_dict()),),
            )
        self._vectors = self._sparse = None

    # --- memories ------------------------------------------------------------------------------

    @_whole
    def insert(self, items: Sequence[tuple[Memory, np.ndarray | None]]) -> None:
        """Insert memories (with their vectors, if any) in one transaction."""
        self._insert(items)

    @_whole
    def insert_exact(
        self, items: Sequence[tuple[Memory, np.ndarray | None, Sequence[int]]]
    ) -> None:
        """Insert memories as given, with their vectors and recent access times, changing no
        other memory (a copy: chitta migrate)."""
        times = [(m.id, at) for m, _, ats in items for at in ats]
        self._insert([(m, v) for m, v, _ in items], access_times=times, mark_superseded=False)

    def _insert(
        self,
        items: Sequence[tuple[Memory, np.ndarray | None]],
        *,
        access_times: Sequence[tuple[str, int]] = (),
        mark_superseded: bool = True,
    ) -> None:
        with self.transaction() as conn:
            conn.executemany(
                f"INSERT INTO memories ({_MEMORY_COLUMNS}) VALUES ({_PLACEHOLDERS})",
                (_memory_row(m) for m, _ in items),
            )
            conn.executemany(
                "INSERT INTO embeddings (memory_id, vector) VALUES (?, ?)",
                ((m.id, v.astype(np.float32).tobytes()) for m, v in items if v is not None),
            )
            conn.executemany("INSERT INTO access_log (memory_id, at) VALUES (?, ?)", access_times)
            for m, _ in items:
                if m.supersedes is not None and mark_superseded:
                    conn.execute(
                        "UPDATE memories SET superseded_by = ?, updated_at = ? WHERE id = ?",
                        (m.id, m.created_at, m.supersedes),
                    )
        if self._terms is not None:
            for m, _ in items:
                if m.deleted_at is None:
                    self._terms.add(m.realm, m.content)
        if self._links is not None:
            self._links.add_many(m for m, _ in items if m.deleted_at is None)
        if self._vectors is not None:
            with_vec = [(m, v) for m, v in items if v is not None and m.deleted_at is None]
            if with_vec:
                self._vectors.add(
                    [m.id for m, _ in with_vec],
                    np.stack([v for _, v in with_vec]),
                    [(m.realm, m.agent_id, m.channel) for m, _ in with_vec],
                )
        if self._sparse is not None:
            self._sparse.add_live([(m, v) for m, v in items if m.deleted_at is None])
        if self._corrections is not None:
            self._corrections.insert([m for m, _ in items])

    def exists(self, memory_id: str) -> bool:
        return bool(self._query("SELECT 1 FROM memories WHERE id = ?", (memory_id,)))

    def get(self, memory_id: str, *, include_deleted: bool = False) -> Memory:
        rows = self._query(f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE id = ?", (memory_id,))
        if not rows or (rows[0]["deleted_at"] is not None and not include_deleted):
            state = "is forgotten (restore it with `chitta restore`)" if rows else "does not exist"
            raise MemoryNotFound(f"memory {memory_id} {state}")
        return _memory_from_row(rows[0])

    def get_many(self, ids: Sequence[str]) -> dict[str, Memory]:
        """Live memories by id; missing or deleted ids are left out."""
        found: dict[str, Memory] = {}
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            marks = ", ".join("?" * len(chunk))
            rows = self._query(
                f"SELECT {_MEMORY_COLUMNS} FROM memories "
                f"WHERE id IN ({marks}) AND deleted_at IS NULL",
                chunk,
            )
            found.update((r["id"], _memory_from_row(r)) for r in rows)
        return found

    @_whole
    def update(self, memory: Memory) -> None:
        """Write back a memory's mutable state (lifecycle fields, tags, links); its access
        count and last access are the access log's and are left as stored."""
        self._recount_if_changed(memory)
        with self.transaction() as conn:
            cur = conn.execute(
                f"UPDATE memories SET ({_UPDATE_COLUMNS}) = ({_UPDATE_PLACEHOLDERS}) WHERE id = ?",
                (*_update_row(memory), memory.id),
            )
            if cur.rowcount == 0:
                raise MemoryNotFound(f"memory {memory.id} does not exist")
        if self._corrections is not None:
            self._corrections.put(memory)

    @_whole
    def update_many(self, memories: Iterable[Memory]) -> int:
        memories = list(memories)  # read twice: the update, then the correction index
        with self.transaction() as conn:
            count = 0
            for memory in memories:
                self._recount_if_changed(memory)
                conn.execute(
                    f"UPDATE memories SET ({_UPDATE_COLUMNS}) = ({_UPDATE_PLACEHOLDERS}) "
                    "WHERE id = ?",
                    (*_update_row(memory), memory.id),
                )
                count += 1
        if self._corrections is not None:
            for memory in memories:
                self._corrections.put(memory)
        return count

    def _recount_if_changed(self, memory: Memory) -> None:
        """Keep the word counts and entity links right when an update changes a memory's
        text or realm, or forgets or restores it."""
        if self._terms is None and self._links is None:
            return
        rows = self._query(
            "SELECT realm, content, deleted_at FROM memories WHERE id = ?", (memory.id,)
        )
        if not rows:
            return
        realm, content, deleted_at = rows[0]
        was_live, is_live = deleted_at is None, memory.deleted_at is None
        if (realm, content, was_live) == (memory.realm, memory.content, is_live):
            return
        if self._terms is not None:
            if was_live:
                self._terms.add(realm, content, -1)
            if is_live:
                self._terms.add(memory.realm, memory.content)
        if self._links is not None:
            if is_live:
                self._links.add(memory)
            else:
                self._links.remove(memory.id)

    @_whole
    def set_deleted(self, memory_id: str, deleted_at: int | None) -> Memory:
        """Soft-delete (a time) or restore (``None``) a memory; returns it as now stored."""
        memory = self.get(memory_id, include_deleted=True)
        updated = replace(memory, deleted_at=deleted_at)
        self.update(updated)
        if self._vectors is not None:
            vector = self.vectors_for([memory_id]).get(memory_id) if deleted_at is None else None
            if vector is not None:
                # add, not set_alive: the index may have been built while it was forgotten.
                scope = (memory.realm, memory.agent_id, memory.channel)
                self._vectors.add([memory_id], vector[None, :], [scope])
            else:
                self._vectors.set_alive(memory_id, False)
        if self._sparse is not None:
            self._sparse.set_alive(memory_id, False)
            if deleted_at is None:  # re-posted: it may have been forgotten when built
                self._sparse.add_live([(updated, self.vectors_for([memory_id]).get(memory_id))])
        return updated

    @_whole
    def purge(self, memory_id: str) -> None:
        """Remove a memory, its vector and its index entries for good.

        The HNSW sidecar goes too when there is one: usearch keeps a removed vector's bytes in
        the graph it saves, so the graphs are rebuilt from the live vectors on next use rather
        than saved with the purged one in them.
        """
        live = self._query(
            "SELECT realm, content FROM memories WHERE id = ? AND deleted_at IS NULL", (memory_id,)
        )
        with self.transaction() as conn:
            if conn.execute("DELETE FROM memories WHERE id = ?", (memory_id,)).rowcount == 0:
                raise MemoryNotFound(f"memory {memory_id} does not exist")
            conn.execute("UPDATE memories SET supersedes = NULL WHERE supersedes = ?", (memory_id,))
            conn.execute(
                "UPDATE memories SET superseded_by = NULL WHERE superseded_by = ?", (memory_id,)
            )
        if self._terms is not None and live:
            self._terms.add(live[0][0], live[0][1], -1)
        if self._vectors is not None:
            self._vectors.set_alive(memory_id, False)
            if self._vectors.graphs():
                self._vectors = None
        ann_sidecar.sidecar_path(self.path).unlink(missing_ok=True)
        if self._links is not None:
            self._links.remove(memory_id)
        if self._sparse is not None:
            self._sparse.set_alive(memory_id, False)
        self._corrections = None  # purging may un-supersede a correction: rebuild on next use

    def iter_memories(
        self, *, realm: str | None = None, include_deleted: bool = False, batch: int = 1000
    ) -> Iterator[Memory]:
        """Every memory (of one realm), oldest first, read in batches."""
        where, params = [], []
        if realm is not None:
            where.append("realm = ?")
            params.append(realm)
        if not include_deleted:
            where.append("deleted_at IS NULL")
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        last = ""
        while True:
            rows = self._query(
                f"SELECT {_MEMORY_COLUMNS} FROM memories {clause} "
                f"{'AND' if clause else 'WHERE'} id > ? ORDER BY id LIMIT ?",
                (*params, last, batch),
            )
            if not rows:
                return
            yield from (_memory_from_row(r) for r in rows)
            last = rows[-1]["id"]

    def vectors_for(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Vectors by id: live ones from the in-memory index when it is built, else the file."""
        found: dict[str, np.ndarray] = {}
        if self._vectors is not None:
            found.update(self._vectors.get(ids))
            ids = [i for i in ids if i not in found]
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            marks = ", ".join("?" * len(chunk))
            for r in self._query(
                f"SELECT memory_id, vector FROM embeddings WHERE memory_id IN ({marks})", chunk
            ):
                found[r[0]] = np.frombuffer(r[1], dtype=np.float32)
        return found

    # --- access history and co-access (store/access.py) ----------------------------------------

    def record_access(self, record: access.AccessRecord) -> None:
        """Buffer one recall's accesses; written in a later batch, never by this call. A
        read-only store keeps no access history: there is nowhere to write it."""
        if self.read_only is None:
            self._access.record(record)

    def flush_access(self) -> int:
        """Write the buffered access records now (one transaction); returns how many."""
        return self._access.flush()

    def access_stats(self) -> dict[str, int]:
        """Records pending, transactions written, records written (this process)."""
        return self._access.stats()

    def _write_access(self, batch: list[access.AccessRecord]) -> None:
        with self.transaction() as conn:
            access.write_batch(conn, batch)

    @_reads
    def access_history(self, ids: Sequence[str]) -> dict[str, access.AccessHistory]:
        """Recent access times and total access count per id, unflushed accesses included."""
        with self._mutex:
            return access.read_history(self._conn, list(ids), self._access.pending())

    @_reads
    def co_access(self, ids: Sequence[str]) -> dict[tuple[str, str], float]:
        """Hebbian co-access weights among ``ids``, keyed ``(smaller id, larger id)``."""
        with self._mutex:
            return access.read_co_access(self._conn, list(ids), self._access.pending())

    @_reads
    def co_neighbours(self, memory_id: str, limit: int = 10) -> list[tuple[str, float]]:
        """The memories most co-accessed with ``memory_id``: (id, weight), heaviest first."""
        with self._mutex:
            return access.read_neighbours(self._conn, memory_id, self._access.pending(), limit)

    def add_replication(self, memory_id: str, session: str, at: int) -> None:
        """Record that ``session`` stored ``memory_id`` again (a deduplicated re-remember)."""
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO replications (memory_id, session, created_at) VALUES (?, ?, ?) "
                "ON CONFLICT DO NOTHING",
                (memory_id, session, at),
            )

    def replication_sessions(self, ids: Sequence[str]) -> dict[str, set[str]]:
        """The other sessions that stored each id again (ids with none are left out)."""
        found: dict[str, set[str]] = {}
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            marks = ", ".join("?" * len(chunk))
            for mid, session in self._query(
                f"SELECT memory_id, session FROM replications WHERE memory_id IN ({marks})", chunk
            ):
                found.setdefault(mid, set()).add(session)
        return found

    def replications(self, ids: Sequence[str]) -> list[tuple[str, str, int]]:
        """(memory id, session, time) of each replication of ``ids``, in that order."""
        found: list[tuple[str, str, int]] = []
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            found += [tuple(r) for r in self._query(  # type: ignore[misc]
                "SELECT memory_id, session, created_at FROM replications "
                f"WHERE memory_id IN ({', '.join('?' * len(chunk))})", chunk)]  # fmt: skip
        return sorted(found)

    def co_access_rows(self, ids: Sequence[str]) -> list[tuple[str, str, float, int]]:
        """The co-access rows (a, b, weight, updated_at) whose ``a`` is one of ``ids``."""
        found: list[tuple[str, str, float, int]] = []
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            found += [tuple(r) for r in self._query(  # type: ignore[misc]
                "SELECT a, b, weight, updated_at FROM co_access "
                f"WHERE a IN ({', '.join('?' * len(chunk))})", chunk)]  # fmt: skip
        return sorted(found)

    def put_co_access(self, rows: Sequence[tuple[str, str, float, int]]) -> None:
        """Set co-access rows as given (a copy: chitta migrate)."""
        with self.transaction() as conn:
            conn.executemany(
                "INSERT INTO co_access (a, b, weight, updated_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (a, b) DO UPDATE SET weight = excluded.weight, "
                "updated_at = excluded.updated_at",
                rows,
            )

    # --- search --------------------------------------------------------------------------------

    @_reads
    def vector_index(self) -> VectorIndex:
        """The in-memory index of live vectors, built from the file on first use."""
        with self._mutex:
            if self._vectors is None:
                identity = self.model_identity()
                rows = self._conn.execute(
                    "SELECT m.id, m.realm, m.agent_id, m.channel, e.vector FROM memories m "
                    "JOIN embeddings e ON e.memory_id = m.id WHERE m.deleted_at IS NULL"
                ).fetchall()
                index = VectorIndex(
                    identity.dim if identity else 0,
                    capacity=max(1024, len(rows)),
                    hnsw_min=self.hnsw_min,
                )
                if rows:
                    if identity is None:
                        raise StoreCorrupt(f"{self.path} holds vectors but no model identity")
                    index.add(
                        [r[0] for r in rows],
                        np.frombuffer(b"".join(r[4] for r in rows), dtype=np.float32).reshape(
                            len(rows), identity.dim
                        ),
                        [(r[1], r[2], r[3]) for r in rows],
                        graphs=False,
                    )
                    ann_sidecar.attach_graphs(
                        index, ann_sidecar.sidecar_path(self.path), identity.as_dict()
                    )
                self._vectors = index
            return self._vectors

    def _save_graphs(self) -> None:
        identity = self.model_identity()
        if identity is not None and self._vectors is not None:
            ann_sidecar.save_graphs(
                self._vectors, ann_sidecar.sidecar_path(self.path), identity.as_dict()
            )

    @_reads
    def term_stats(self) -> TermStats:
        """Word document frequencies per realm over live memories, built on first use."""
        with self._mutex:
            if self._terms is None:
                stats = TermStats()
                for realm, content in self._conn.execute(
                    "SELECT realm, content FROM memories WHERE deleted_at IS NULL"
                ):
                    stats.add(realm, content)
                self._terms = stats
            return self._terms

    def episode_neighbours(
        self, memory_id: str, span: int, episode: str | None = None
    ) -> list[tuple[str, int]]:
        """The live memories within ``span`` places of ``memory_id`` in its episode (in the
        order they were stored), with their distance: 1 is the turn just before or after.
        ``episode`` saves looking the memory's episode up when the caller has it."""
        if episode is None:
            rows = self._query("SELECT episode_id FROM memories WHERE id = ?", (memory_id,))
            episode = rows[0][0] if rows else None
        if episode is None or span <= 0:
            return []
        live = "episode_id = ? AND deleted_at IS NULL"
        before = self._query(
            f"SELECT id FROM memories WHERE {live} AND id < ? ORDER BY id DESC LIMIT ?",
            (episode, memory_id, span),
        )
        after = self._query(
            f"SELECT id FROM memories WHERE {live} AND id > ? ORDER BY id LIMIT ?",
            (episode, memory_id, span),
        )
        near = [(r[0], d) for d, r in enumerate(before, 1)]
        near += [(r[0], d) for d, r in enumerate(after, 1)]
        return sorted(near, key=lambda item: item[0])

    def session_recent(self, session: str, n: int) -> list[str]:
        """The ``n`` newest live memories whose source names ``session``, newest first."""
        rows = self._query(
            "SELECT id FROM memories WHERE json_extract(source, '$.session') = ? "
            "AND deleted_at IS NULL ORDER BY id DESC LIMIT ?",
            (session, n),
        )
        return [r[0] for r in rows]

    def links(self) -> LinkIndex:
        """Entity postings of live memories per realm, built on first use."""
        with self._mutex:
            if self._links is None:
                links = LinkIndex()
                links.add_many(self.iter_memories())
                self._links = links
            return self._links

    @_reads
    def sparse_index(self) -> SparseIndex:
        """The hdc lane's posting index of live memories' sparse codes, built on first use."""
        with self._mutex:
            if self._sparse is None:
                identity = self.model_identity()
                index = SparseIndex(coder_for(identity.dim if identity else 0))
                rows = self._conn.execute(
                    "SELECT m.id, m.realm, m.agent_id, m.channel, e.vector FROM memories m "
                    "JOIN embeddings e ON e.memory_id = m.id WHERE m.deleted_at IS NULL"
                ).fetchall()
                if rows:
                    index.add(
                        [r[0] for r in rows],
                        np.stack([np.frombuffer(r[4], dtype=np.float32) for r in rows]),
                        [(r[1], r[2], r[3]) for r in rows],
                    )
                self._sparse = index
            return self._sparse

    @_reads
    def corrections(self) -> CorrectionIndex:
        """The keyed index of current corrections (the ``corr`` lookup), built on first use."""
        with self._mutex:
            if self._corrections is None:
                index = CorrectionIndex()
                rows = self._conn.execute(
                    f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE kind = ? "
                    "AND deleted_at IS NULL AND superseded_by IS NULL",
                    (Kind.CORRECTION.value,),
                ).fetchall()
                index.insert([_memory_from_row(r) for r in rows])
                self._corrections = index
            return self._corrections

    def keyword_search(
        self, terms: Sequence[str], scope: Scope, limit: int, *, column: str | None = None
    ) -> list[tuple[str, float]]:
        """BM25 over ``scope`` with its realm's own statistics (store/keywords.py): (memory id,
        score), best first, equal scores oldest first; higher is better.

        Each of ``terms`` (plain words) is matched as the index matches a quoted term: Porter
        stems, accents folded. ``column="tags"`` searches the tags alone.
        """
        ranked = keywords.search(self._query, self._rows(), terms, [scope.realm], column)
        return self._first_in_scope(ranked, *_scope_sql(scope, "m"), limit)

    def keyword_search_elsewhere(
        self, terms: Sequence[str], scope: Scope, limit: int
    ) -> list[tuple[str, float]]:
        """:meth:`keyword_search` over every realm but ``scope``'s (with its agent and channel),
        those realms taken as one collection: N, df and the average length over all of them,
        so that their scores compare."""
        rows = self._rows()
        realms = [realm for realm in rows.codes if realm != scope.realm]
        ranked = keywords.search(self._query, rows, terms, realms)
        return self._first_in_scope(ranked, *_scope_sql(scope, "m", elsewhere=True), limit)

    def keyword_frequencies(self, terms: Sequence[str], realm: str) -> tuple[int, dict[str, int]]:
        """The statistics :meth:`keyword_search` scores ``realm`` with: its live memories, and
        how many of them hold each term."""
        return keywords.frequencies(self._query, self._rows(), terms, [realm])

    def _rows(self) -> keywords.Rows:
        """The keyword search's view of the live memories, brought up to date with the file."""
        with self._mutex:
            return self._keyword_rows.current(self._query, self.term_stats())

    def _first_in_scope(
        self,
        ranked: keywords.Ranked,
        where: str,
        params: Sequence[object],
        limit: int,
        join: str = "",
    ) -> list[tuple[str, float]]:
        """The first ``limit`` of ``ranked`` that are live and satisfy ``where`` (over
        ``memories m`` and ``join``), with their ids, in ranked order."""
        hits: list[tuple[str, float]] = []
        start, batch = 0, limit * KW_OVERFETCH
        while len(hits) < limit and start < len(ranked.rowids):
            rowids = [int(r) for r in ranked.rowids[start : start + batch]]
            ids = dict(self._query(
                f"SELECT m.rowid, m.id FROM json_each(?) w CROSS JOIN memories m ON m.rowid = "
                f"w.value {join} WHERE m.deleted_at IS NULL AND {where}",
                (json.dumps(rowids), *params),
            ))  # fmt: skip
            scores = ranked.scores[start : start + batch]
            hits += [(ids[r], float(s)) for r, s in zip(rowids, scores, strict=True) if r in ids]
            start, batch = start + batch, batch * 2
        return hits[:limit]

    # --- the time cue's period (recall/cue_arm.py; seed 002 §2.2, §2.10) ------------------------

    def scope_oldest(self, scope: Scope) -> int | None:
        """When the scope's oldest live record happened: the earliest memory time (its
        ``event_time``, else ``created_at``) or start of an episode holding one of its live
        memories; ``None`` when the scope holds nothing."""
        where, params = _scope_sql(scope, "m")
        own = self._query(
            f"SELECT min({_TIME}) FROM memories m WHERE {where} AND m.deleted_at IS NULL", params
        )[0][0]
        episode = self._query(
            "SELECT e.started_at FROM episodes e WHERE e.realm = ? AND EXISTS (SELECT 1 FROM "
            f"memories m WHERE m.episode_id = e.id AND {where} AND m.deleted_at IS NULL) "
            "ORDER BY e.started_at LIMIT 1",
            (scope.realm, *params),
        )
        times = [t for t in (own, episode[0][0] if episode else None) if t is not None]
        return min(times) if times else None

    def period_ids(
        self,
        scope: Scope,
        start_ms: int,
        end_ms: int,
        *,
        include_superseded: bool,
        among: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> list[str] | None:
        """The live memories of ``scope`` in the period ``[start_ms, end_ms)``: a memory's
        time (``event_time``, else ``created_at``) or its episode's start lies in it.
        Superseded ones only with ``include_superseded``. Only those of ``among``, when
        given; ``None`` when ``limit`` is given and the period holds more than that."""
        where, params = _scope_sql(scope, "m")
        live = "m.deleted_at IS NULL"
        if not include_superseded:
            live += " AND m.superseded_by IS NULL"
        # A whole period in two parts, each with its own index: the memory's own time (a
        # scan of the scope), and the episodes that started in it (episodes_realm, then
        # memories_episode).
        if among is None:
            bound = "" if limit is None else f" LIMIT {int(limit) + 1}"
            rows = self._query(
                f"SELECT m.id FROM memories m WHERE {where} AND {live} AND {_TIME} >= ? AND "
                f"{_TIME} < ? UNION ALL SELECT m.id FROM episodes e JOIN memories m ON "
                "m.episode_id = e.id WHERE e.realm = ? AND e.started_at >= ? AND "
                f"e.started_at < ? AND {where} AND {live}{bound}",
                (*params, start_ms, end_ms, scope.realm, start_ms, end_ms, *params),
            )
            if limit is not None and len(rows) > limit:
                return None
            return list(dict.fromkeys(r[0] for r in rows))
        # CROSS JOIN keeps the given ids the outer loop, each looked up by its key (the
        # planner would otherwise scan the scope's index once per list).
        period, times = _period_sql(start_ms, end_ms, include_superseded)
        rows = self._query(
            "SELECT m.id FROM json_each(?) w CROSS JOIN memories m ON m.id = w.value "
            f"LEFT JOIN episodes e ON e.id = m.episode_id WHERE {where} AND "
            f"m.deleted_at IS NULL AND {period}",
            (json.dumps(list(among)), *params, *times),
        )
        return list(dict.fromkeys(r[0] for r in rows))

    def period_keyword_search(
        self,
        terms: Sequence[str],
        scope: Scope,
        start_ms: int,
        end_ms: int,
        limit: int,
        *,
        include_superseded: bool,
    ) -> list[tuple[str, float]]:
        """:meth:`keyword_search` over the period's memories only (see :meth:`period_ids`),
        scored with the whole realm's statistics."""
        where, params = _scope_sql(scope, "m")
        period, times = _period_sql(start_ms, end_ms, include_superseded)
        ranked = keywords.search(self._query, self._rows(), terms, [scope.realm])
        return self._first_in_scope(ranked, f"{where} AND {period}", [*params, *times], limit,
                                    join="LEFT JOIN episodes e ON e.id = m.episode_id")  # fmt: skip

    def term_matches(self, terms: Sequence[str], ids: Sequence[str]) -> dict[str, set[str]]:
        """Which of ``terms`` each of ``ids`` holds, as the keyword lane matches them."""
        if not terms or not ids:
            return {}
        marks = ", ".join("?" * len(ids))
        id_of = dict(self._query(f"SELECT rowid, id FROM memories WHERE id IN ({marks})", ids))
        if not id_of:
            return {}
        matched: dict[str, set[str]] = {}
        for term in dict.fromkeys(terms):
            # The term's whole posting list, intersected here: measured on LoCoMo, five times
            # faster than asking FTS5 for the match among these rowids (it reads the list anyway).
            for (rowid,) in self._query(
                "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?", (_phrase(term),)
            ):
                if rowid in id_of:
                    matched.setdefault(id_of[rowid], set()).add(term)
        return matched

    # --- triplets and episodes -----------------------------------------------------------------

    @_whole
    def add_triplets(self, triplets: Sequence[Triplet]) -> None:
        with self.transaction() as conn:
            triplet_table.insert(conn, triplets)
        self._touch_links(triplets)

    def triplets(self, realm: str | None = None) -> list[Triplet]:
        where, params = ("WHERE realm = ?", [realm]) if realm is not None else ("", [])
        rows = self._query(f"SELECT * FROM triplets {where} ORDER BY id", params)
        return [triplet_table.from_row(r) for r in rows]

    def triplet(self, triplet_id: str) -> Triplet | None:
        """The triplet with this id, current or not; None when there is none."""
        return triplet_table.by_id(self._query, triplet_id)

    @_whole
    def invalidate_triplet(self, triplet: Triplet, at: int) -> None:
        """Mark ``triplet`` invalid from ``at`` on (kept for history)."""
        with self.transaction() as conn:
            triplet_table.invalidate(conn, triplet.id, at)
        self._touch_links([triplet])

    def triplet_reads(self) -> triplet_table.Query:
        """The read function store/triplets.py's queries take (each thread its connection)."""
        return self._query

    def add_alias(
        self, realm: str, alias: str, alias_key: str, canonical_key: str, at: int | None = None
    ) -> None:
        """Make ``alias_key`` name ``canonical_key`` in ``realm``, created ``at`` (default
        now)."""
        at = int(time.time() * 1000) if at is None else at
        with self._mutex:
            # The entity the alias meant until now loses a name, the one it joins gains one.
            before = triplet_table.names_of(self._query, realm, alias_key)
            with self.transaction() as conn:
                triplet_table.add_alias(conn, realm, alias, alias_key, canonical_key, at)
            after = triplet_table.names_of(self._query, realm, canonical_key)
            self._touch_names(realm, {*before, *after})

    def aliases(self, realm: str | None = None) -> list[Alias]:
        """The aliases of ``realm`` (or of every realm), by realm and alias key."""
        return [Alias(*row) for row in triplet_table.aliases(self._query, realm)]

    def remove_alias(self, realm: str, alias_key: str) -> bool:
        """Forget the alias ``alias_key`` of ``realm``; False when there was none."""
        with self._mutex:
            names = triplet_table.names_of(self._query, realm, alias_key)  # its whole entity
            with self.transaction() as conn:
                meant = triplet_table.remove_alias(conn, realm, alias_key)
            if meant is not None:
                self._touch_names(realm, names)
            return meant is not None

    def triplet_neighbours(
        self, realm: str, names: Iterable[str], cap: int = triplet_table.NEIGHBOUR_CAP
    ) -> tuple[dict[str, list[tuple[str, float, str | None]]], bool]:
        """For each of ``names`` (entity keys), the entities at the other end of the realm's
        current triplets that touch it or one of its aliases, with the edge's weight and
        source memory; at most ``cap`` edges per name and side, heaviest first. The flag says a
        bound cut a read."""
        wanted = sorted(set(names))
        out: dict[str, list[tuple[str, float, str | None]]] = {}
        if not wanted:
            return out, False
        # An entity is every name its aliases give it: read the edges of them all, and lead
        # on to every name of the entity at the other end.
        groups = triplet_table.alias_groups(self._query, realm, wanted)
        asked: dict[str, set[str]] = {}
        for name in wanted:
            for key in groups.get(name, (name,)):
                asked.setdefault(key, set()).add(name)
        now = int(time.time() * 1000)
        read = triplet_table.touching(self._query, realm, sorted(asked), now, cap)
        ends = triplet_table.alias_groups(self._query, realm, (k for ks in read.keys for k in ks))
        for t, (subject, _, obj) in zip(read.rows, read.keys, strict=True):
            for here, there in ((subject, obj), (obj, subject)):
                for name in asked.get(here, ()):
                    for end in ends.get(there, (there,)):
                        out.setdefault(name, []).append((end, t.weight, t.source_memory))
        return out, read.cut

    def triplet_hubs(self, realm: str, limit: int) -> dict[str, int]:
        """Entity keys with the most source memories over the realm's newest current
        triplets (store/triplets.py ``hubs``: a bounded window)."""
        return triplet_table.hubs(self._query, realm, int(time.time() * 1000), limit)

    def triplets_sourced_by(
        self, memory_ids: Sequence[str], cap: int = triplet_table.NEIGHBOUR_CAP
    ) -> tuple[dict[str, list[tuple[str, str, float]]], bool]:
        """Per memory, the current triplets it states: (subject key, object key, weight), at
        most ``cap`` each, heaviest first; and whether a memory had more."""
        return triplet_table.sourced_by(self._query, memory_ids, int(time.time() * 1000), cap)

    def _touch_links(self, triplets: Iterable[Triplet]) -> None:
        """Tell the link index which entities a committed triplet write changed (attractor
        caches): both ends, under every name their aliases give them."""
        if self._links is None:
            return
        ends: dict[str, set[str]] = {}
        for t in triplets:
            keys = (triplet_table.entity_key(t.subject), triplet_table.entity_key(t.object))
            ends.setdefault(t.realm, set()).update(keys)
        for realm, keys in ends.items():
            groups = triplet_table.alias_groups(self._query, realm, keys)
            self._touch_names(realm, {name for k in keys for name in groups.get(k, (k,))})

    def _touch_names(self, realm: str, names: Iterable[str]) -> None:
        """Count a write to the clusters of ``names`` (entity keys) once it is committed: a
        cluster is read under every name of its entity, so a write under any of them counts;
        and a reader that finds the count changed can see the write in the file."""
        if self._links is not None:
            self._links.touch(realm, names)

    def add_episodes(self, episodes: Sequence[Episode]) -> None:
        with self.transaction() as conn:
            conn.executemany(
                "INSERT INTO episodes (id, realm, title, started_at, ended_at, source, "
                "created_at) VALUES (?,?,?,?,?,?,?)",
                [(e.id, e.realm, e.title, e.started_at, e.ended_at,
                  json.dumps(e.source.as_dict()), e.created_at) for e in episodes],
            )  # fmt: skip

    def episodes(self, realm: str | None = None) -> list[Episode]:
        where, params = ("WHERE realm = ?", [realm]) if realm is not None else ("", [])
        rows = self._query(f"SELECT * FROM episodes {where} ORDER BY id", params)
        return [Episode(**{**dict(r), "source": Source(**json.loads(r["source"]))}) for r in rows]

    def existing_ids(self, table: str, ids: Sequence[str]) -> set[str]:
        """Which of ``ids`` already exist in ``table`` (memories, triplets or episodes)."""
        if table not in ("memories", "triplets", "episodes"):
            raise ValueError(table)
        found: set[str] = set()
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            marks = ", ".join("?" * len(chunk))
            found.update(
                r[0] for r in self._query(f"SELECT id FROM {table} WHERE id IN ({marks})", chunk)
            )
        return found

    # --- figures and maintenance ---------------------------------------------------------------

    def counts(self) -> dict[str, object]:
        """Memories per realm and kind, forgotten ones, triplets and episodes."""
        per_realm = {
            r[0]: r[1]
            for r in self._query(
                "SELECT realm, count(*) FROM memories WHERE deleted_at IS NULL GROUP BY realm"
            )
        }
        per_kind = {
            r[0]: r[1]
            for r in self._query(
                "SELECT kind, count(*) FROM memories WHERE deleted_at IS NULL GROUP BY kind"
            )
        }
        forgotten = self._query("SELECT count(*) FROM memories WHERE deleted_at IS NOT NULL")
        return {
            "memories": sum(per_realm.values()),
            "per_realm": per_realm,
            "per_kind": per_kind,
            "forgotten": forgotten[0][0],
            "triplets": self._query("SELECT count(*) FROM triplets")[0][0],
            "episodes": self._query("SELECT count(*) FROM episodes")[0][0],
        }

    def size_bytes(self) -> int:
        """The store's bytes on disk, its write-ahead log included."""
        total = 0
        for suffix in ("", "-wal", "-shm"):
            p = self.path.with_name(self.path.name + suffix)
            if p.exists():
                total += p.stat().st_size
        return total

    def integrity_check(self) -> str:
        return self._query("PRAGMA integrity_check")[0][0]

    def backup_to(self, dest: Path) -> None:
        """A consistent copy of the live store via SQLite's online backup API, owner-only and
        whole: made beside ``dest`` and renamed over it once complete (chitta/files.py), so a
        full disk is a :class:`WriteFailed` that leaves an older backup at ``dest`` as it was."""
        try:
            with files.replacing(dest) as tmp:
                target = sqlite3.connect(tmp)
                try:
                    with self._mutex:
                        self._conn.backup(target)
                finally:
                    target.close()
                    Path(f"{tmp}-journal").unlink(missing_ok=True)  # a failed copy's
        except OSError as exc:
            raise files.write_failed(dest, exc) from None
        except sqlite3.Error as exc:
            if exc.sqlite_errorcode & 0xFF not in _WRITE_ERRORS:
                raise
            raise files.write_failed(dest, str(exc)) from None

    def restore_from(self, source: Path) -> Path:
        """Replace this store's contents with a backup; the old contents are kept beside it.

        The backup is checked first (store/restore.py), not this store: restoring is what a
        damaged store needs. The old contents go to ``<store>.pre-restore-<time>`` (a backup
        of them), or, when they fail SQLite's quick check, their files as they are to
        ``<store>.damaged-<time>``, before anything is overwritten. Where they went.
        """
        restore.check_backup(source)
        with self._mutex, faults.mapped(self.path, "restoring the backup"):
            self._writable("restoring the backup")
            damaged = self._damaged()
            saved = restore.kept_name(self.path, damaged)
            if damaged:
                restore.keep_copy(self.path, saved)
            else:
                self._access.flush()  # buffered accesses belong to the contents being saved
                self.backup_to(saved)
            src = connect.open_read_only(source, what="the backup", settled=True)
            try:
                src.backup(self._conn)
            finally:
                src.close()
            migrations.migrate(self._conn, where=f"the store {self.path}")
            self._vectors = self._sparse = self._corrections = None
            self._terms = None
            self._links = None
        return saved

    def _damaged(self) -> bool:
        """Whether the open file fails SQLite's quick check (or cannot be read for it)."""
        try:
            return self._conn.execute("PRAGMA quick_check").fetchone()[0] != "ok"
        except sqlite3.DatabaseError:
            return True


def _phrase(term: str) -> str:
    """``term`` as an FTS5 phrase: quoted, so that no word is read as query syntax."""
    return '"' + term.replace('"', '""') + '"'
