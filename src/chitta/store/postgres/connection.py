"""Connections to the database: one per thread, opened on first use, with chitta's vector
codec (pgvector's binary form to and from float32 numpy arrays).

Each connection is in autocommit mode: a read is one statement; a write is one explicit
transaction (``conn.transaction()``). A connection that broke (the server went away) is
dropped, so that the thread's next call connects again.
"""

from __future__ import annotations

import struct
import threading

import numpy as np
import psycopg
from psycopg.adapt import Dumper, Loader
from psycopg.pq import Format

from chitta.errors import StoreError
from chitta.store.postgres import faults

#: Seconds a connection attempt waits for the server.
CONNECT_TIMEOUT_S = 10


class VectorDumper(Dumper):
    """A numpy vector as pgvector's binary ``vector``: dim, 0 (int16 each), float4s, big
    endian. Subclassed per connection with the type's oid."""

    format = Format.BINARY

    def dump(self, obj: np.ndarray) -> bytes:
        v = np.asarray(obj, dtype=">f4").ravel()
        return struct.pack(">HH", v.size, 0) + v.tobytes()


class VectorLoader(Loader):
    """pgvector's binary ``vector`` as a float32 numpy vector."""

    format = Format.BINARY

    def load(self, data: bytes | bytearray | memoryview) -> np.ndarray:
        dim = struct.unpack_from(">H", data)[0]
        return np.frombuffer(bytes(data), dtype=">f4", count=dim, offset=4).astype(np.float32)


class Connections:
    """The store's connections, one per thread."""

    def __init__(self, url: str, where: str) -> None:
        self.url = url
        self.where = where
        self._local = threading.local()
        self._all: list[tuple[threading.Thread, psycopg.Connection]] = []
        self._lock = threading.Lock()
        self._vector_oid: int | None = None
        self.closed = False

    def open(self) -> psycopg.Connection:
        """A new connection of the store's (not this thread's: the caller owns it)."""
        with faults.mapped(self.where, "connecting"):
            conn = psycopg.connect(
                self.url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S,
                application_name="chitta",
            )  # fmt: skip
        if self._vector_oid is not None:
            self._adapt(conn)
        return conn

    def vectors_ready(self, conn: psycopg.Connection) -> None:
        """Learn the ``vector`` type's oid (the extension exists by now) and adapt ``conn``."""
        with faults.mapped(self.where, "reading the vector type"):
            oid = conn.execute("SELECT 'vector'::regtype::oid").fetchone()[0]
        self._vector_oid = int(oid)
        self._adapt(conn)

    def _adapt(self, conn: psycopg.Connection) -> None:
        dumper = type("Vector", (VectorDumper,), {"oid": self._vector_oid})
        conn.adapters.register_dumper(np.ndarray, dumper)
        conn.adapters.register_loader(self._vector_oid, VectorLoader)

    def get(self) -> psycopg.Connection:
        """This thread's connection, opened (again) when it has none or it broke."""
        if self.closed:
            raise StoreError(f"the store {self.where} is closed")
        conn = getattr(self._local, "conn", None)
        if conn is not None and not conn.closed and not conn.broken:
            return conn
        conn = self.open()
        with self._lock:
            self._reap()
            self._all.append((threading.current_thread(), conn))
        self._local.conn = conn
        return conn

    def discard(self) -> None:
        """Drop this thread's connection (it broke mid-call)."""
        conn = getattr(self._local, "conn", None)
        self._local.conn = None
        if conn is not None:
            with self._lock:
                self._all = [(t, c) for t, c in self._all if c is not conn]
            conn.close()

    def _reap(self) -> None:
        """Close the connections of threads that ended (caller holds the lock): a daemon's
        short-lived threads would otherwise leave one open each."""
        alive = []
        for thread, conn in self._all:
            if thread.is_alive() and not conn.closed:
                alive.append((thread, conn))
            else:
                conn.close()
        self._all = alive

    def close(self) -> None:
        with self._lock:
            self.closed = True
            for _, conn in self._all:
                conn.close()
            self._all.clear()
