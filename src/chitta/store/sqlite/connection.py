"""The embedded store: one SQLite file in WAL mode, source of truth for everything.

Memories, their vectors, the FTS5 keyword index, triplets and episodes live in one file.
An instance lock makes one process its owner; inside that process a lock serialises use of
the single connection. Every write is one transaction, committed with ``synchronous=FULL``
before the call returns, so an acknowledged write survives a crash of the process.

This module holds the connection and the locks (the instance lock, the lock serialising use of
the connection, each thread's reader); the methods of the store are in the modules beside it.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from chitta import files
from chitta.errors import StoreCorrupt, StoreError, StoreFull, StoreMissing, StoreReadOnly
from chitta.store import access
from chitta.store.ann import HNSW_MIN_VECTORS
from chitta.store.corrections import CorrectionIndex
from chitta.store.links import LinkIndex
from chitta.store.sparse import SparseIndex
from chitta.store.sqlite import connect, faults, keywords, migrations, shape
from chitta.store.sqlite.lock import InstanceLock
from chitta.store.terms import TermStats
from chitta.store.themes import ThemeIndex
from chitta.store.vectors import VectorIndex

log = logging.getLogger(__name__)


T = TypeVar("T")


def locked_write(write: Callable[..., T]) -> Callable[..., T]:
    """Run a write under the store's lock from start to end: the file and the in-memory
    indexes change as one step, so an index being built from the file on another thread
    cannot miss the write or count it twice."""

    @functools.wraps(write)
    def locked(self: Connection, *args: Any, **kwargs: Any) -> T:
        with self._mutex:
            return write(self, *args, **kwargs)

    return locked


def mapped_read(read: Callable[..., T]) -> Callable[..., T]:
    """Raise the file's failures in a read that uses the store's connection directly (an
    index built from the file, the access history) as the store's errors, as _query does."""

    @functools.wraps(read)
    def mapped(self: Connection, *args: Any, **kwargs: Any) -> T:
        try:
            return read(self, *args, **kwargs)
        except (sqlite3.Error, OSError) as exc:
            error = faults.sealed_error(exc, self.path, "the read")
            if error is None:
                raise
            raise error from exc

    return mapped


class Connection:
    """The connection to one chitta store file and the locks around it; the base of every
    part of :class:`chitta.store.sqlite.SQLiteStore`."""

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
        self._terms_saved: dict[str, int] = {}  # the statistics' changes when last saved
        self._links: LinkIndex | None = None
        self._sparse: SparseIndex | None = None  # the hdc lane's codes, kept like _vectors
        self._themes: ThemeIndex | None = None  # the theme lane's themes, kept like _vectors
        self._corrections: CorrectionIndex | None = None
        self._keyword_rows = keywords.RowTable()  # the keyword search's per-realm statistics
        self._keyword_rows_saved: keywords.Rows | None = None  # as read from or saved to file
        try:
            self._conn = self._connect(writable)
        except BaseException:
            self._lock.release()
            raise
        self._access = access.AccessLog(
            self._write_access, self._mutex, every=access_every, seconds=access_seconds
        )

    @property
    def location(self) -> str:
        """The store file's path, as text."""
        return str(self.path)

    @property
    def data_dir(self) -> Path:
        """The folder of the store file: the spool and the HNSW sidecar live beside it."""
        return self.path.parent

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

    def close(self) -> None:
        """Flush the access history, save the sidecars that are due, close the file and release
        the instance lock — the last two even when one of the first fails."""
        try:
            if self._conn is not None:
                try:
                    self._access.close()  # the buffered access history, before the file goes
                except (StoreFull, StoreReadOnly) as exc:
                    # Never acknowledged to anyone: losing the batch costs recall a little.
                    log.warning("the access history of this session was not saved: %s",
                                exc.code)  # fmt: skip
            with self._mutex:
                if self._conn is not None and self.read_only is None:
                    self._save_sidecars()
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

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; committed (and synced) on exit, rolled back on error.

        The seam of every write: a full disk, a file that cannot be written or damaged pages
        come out as the store's errors (store/faults.py), and the connection is left with no
        transaction open, so the next write can succeed once the cause is gone."""
        with self._mutex, faults.sealed(self.path):
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
            error = faults.sealed_error(exc, self.path, "the read")
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
