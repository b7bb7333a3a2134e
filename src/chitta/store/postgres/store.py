"""A chitta store in a PostgreSQL database with pgvector: the :class:`chitta.store.base.Store`
protocol, for many daemons on one database.

The database answers: vector search (HNSW per dimension, exact below ``hnsw_min`` or when
asked), keyword search (postgres/keywords.py, the SQLite backend's BM25), triplets, episodes,
the access history. What is kept in process (the word counts, entity links, corrections, the
hdc lane's codes) is brought up to date with the database before it answers
(postgres/mirror.py), so a write through any process is seen at once by every other.

Each thread has its own connection (postgres/connection.py). A write is one transaction that
takes the write lock shared (``pg_advisory_xact_lock_shared``), so that :meth:`write_lock`,
which takes it exclusively for a session, holds off every writer of every process.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
from psycopg import pq

from chitta.embed.base import ModelIdentity
from chitta.errors import (
    AccessDenied,
    MemoryNotFound,
    ModelMismatch,
    StoreFull,
    StoreReadOnly,
    StoreUnsupported,
)
from chitta.homes import default_home
from chitta.store import access, code_sql, code_vectors, portable
from chitta.store import fts5 as words
from chitta.store.access import AccessHistory, AccessRecord
from chitta.store.ann import HNSW_MIN_VECTORS
from chitta.store.assessment import AssessmentReads, AssessmentRequest
from chitta.store.base import ID_TABLES
from chitta.store.code import CodeTables
from chitta.store.conditions import TIME
from chitta.store.corrections import CorrectionIndex
from chitta.store.links import LinkIndex
from chitta.store.postgres import access as access_sql
from chitta.store.postgres import faults, graph, keywords, mirror, schema
from chitta.store.postgres.connection import Connections
from chitta.store.postgres.keywords import Keep, Realms
from chitta.store.postgres.rows import (
    EPISODE_COLUMNS,
    MEMORY_COLUMNS,
    UPDATE_COLUMNS,
    episode_from_row,
    memory_from_row,
    memory_row,
    period_sql,
    scope_sql,
    update_row,
)
from chitta.store.records import Alias, Episode, Memory, Scope, Triplet
from chitta.store.sparse import SparseIndex
from chitta.store.terms import TermStats
from chitta.store.themes import ThemeIndex
from chitta.store.triplets import NEIGHBOUR_CAP, Bounded, entity_key
from chitta.store.warm import timed_parts

log = logging.getLogger(__name__)

#: chitta's tables, for the store's size.
#: Which part of :meth:`PostgresStore.disk_usage` a table counts in (else ``other``).
_PARTS = {"memories": "memories", "embeddings": "embeddings", "pieces": "embeddings",
          "kw_postings": "keywords",
          "kw_realms": "keywords"}  # fmt: skip
TABLES = ("meta", "generation", "memories", "embeddings", "kw_postings", "kw_realms", "purged",
          "link_touches", "triplets", "entity_aliases", "episodes", "access_log", "co_access",
          "replications", "pieces", *code_sql.TABLES, *code_vectors.VECTOR_TABLES)  # fmt: skip
#: The HNSW search's candidate list (pgvector's ``hnsw.ef_search``): at least this, and at
#: least k.
EF_SEARCH = 100
_INSERT_MEMORY = (
    f"INSERT INTO memories ({MEMORY_COLUMNS}, kw_length, gen) VALUES "
    f"({', '.join(['%s'] * (len(MEMORY_COLUMNS.split(', ')) + 2))})"
)
_UPDATE_MEMORY = (
    f"UPDATE memories SET ({', '.join(UPDATE_COLUMNS)}, gen) = "
    f"({', '.join(['%s'] * (len(UPDATE_COLUMNS) + 1))}) WHERE id = %s"
)


def _hnsw_index(dim: int) -> str:
    return f"embeddings_hnsw_{int(dim)}"


class PostgresStore:
    """One chitta store in a PostgreSQL database, open in this process."""

    def __init__(
        self,
        url: str,
        *,
        create: bool = True,
        home: Path | str | None = None,
        hnsw_min: int = HNSW_MIN_VECTORS,
        access_every: int = access.FLUSH_EVERY,
        access_seconds: float = access.FLUSH_SECONDS,
    ) -> None:
        self.location = faults.shown(url)
        self.data_dir = Path(home) if home is not None else default_home(os.environ)
        self.hnsw_min = hnsw_min
        self.read_only: str | None = None
        self._conns = Connections(url, self.location)
        self._mirror = mirror.Mirror()
        self._code: code_sql.SQLCodeTables | None = None
        try:
            conn = self._conns.get()
            with faults.mapped(self.location, "opening it"):
                schema.migrate(conn, self.location, create=create)
                if conn.execute("SHOW transaction_read_only").fetchone()[0] == "on":
                    self.read_only = "the database takes no writes (a standby, or read-only)"
            self._conns.vectors_ready(conn)
        except BaseException:
            self._conns.close()
            raise
        self._access_mutex = threading.RLock()  # the access log's: buffer and tables as one
        self._access = access.AccessLog(
            self._write_access, self._access_mutex, every=access_every, seconds=access_seconds
        )

    # --- lifetime ----------------------------------------------------------------------------

    def close(self) -> None:
        """Write the buffered access history, then close every connection (even when the
        first fails); safe to call twice."""
        if self._conns.closed:
            return
        try:
            self._access.close()
        except (StoreFull, StoreReadOnly) as exc:
            log.warning("the access history of this session was not saved: %s", exc.code)
        finally:
            self._conns.close()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _connection(self, doing: str) -> Iterator[psycopg.Connection]:
        """This thread's connection, with psycopg's errors raised as the store's; one that
        broke is dropped, so the next call connects again."""
        conn = self._conns.get()
        try:
            with faults.mapped(self.location, doing):
                yield conn
        finally:
            if conn.closed or conn.broken:
                self._conns.discard()

    def _read(
        self, sql: str, params: Sequence[object] = (), *, binary: bool = False
    ) -> list[tuple]:
        """The rows of one statement (inside this thread's transaction when one is open)."""
        with self._connection("the read") as conn:
            cur = conn.execute(sql, params, binary=binary)
            return cur.fetchall() if cur.description else []

    def _maintain(self, sql: str) -> None:
        """Run a maintenance statement (``VACUUM``, ``ANALYZE``) outside any transaction: an
        upkeep the database would do itself later, so a store that takes no writes skips it,
        and a role that may not maintain a table gets the server's warning, not an error."""
        if self.read_only is not None:
            return
        with self._connection("the upkeep of the tables") as conn:
            conn.execute(sql)

    @contextmanager
    def _tx(self, doing: str = "the write") -> Iterator[psycopg.Cursor]:
        """One write transaction, committed on exit, rolled back on error; it waits while
        another session holds :meth:`write_lock`."""
        if self.read_only is not None:
            raise StoreReadOnly(f"the database {self.location} takes no writes: {doing} was "
                                f"refused ({self.read_only})")  # fmt: skip
        with self._connection(doing) as conn, conn.transaction(), conn.cursor() as cur:
            cur.execute("SELECT pg_advisory_xact_lock_shared(%s, %s)",
                        (schema.LOCK_CLASS, schema.WRITE_LOCK))  # fmt: skip
            yield cur

    @staticmethod
    def _bump(cur: psycopg.Cursor, *, epoch: bool = False) -> int:
        """The write's generation (postgres/mirror.py): the counter, one up; its row stays
        locked until the write commits, so generations commit in order."""
        more = ", epoch = epoch + 1" if epoch else ""
        return cur.execute(f"UPDATE generation SET n = n + 1{more} RETURNING n").fetchone()[0]

    @contextmanager
    def _snapshot(self) -> Iterator[Callable[..., list]]:
        """A read function over one repeatable-read snapshot (or this thread's open write)."""
        with self._connection("the read") as conn:
            idle = conn.info.transaction_status == pq.TransactionStatus.IDLE
            with conn.transaction():
                if idle:
                    conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")

                def read(sql: str, params: Sequence[object] = (), *, binary: bool = False) -> list:
                    return conn.execute(sql, params, binary=binary).fetchall()

                yield read

    def _derived(self, kind: str) -> Any:
        """The in-process index ``kind``, current with the database (postgres/mirror.py)."""
        with self._mirror.lock, self._snapshot() as read:
            return self._mirror.refresh(read, kind, self._dim)

    def _dim(self) -> int:
        identity = self.model_identity()
        return identity.dim if identity else 0

    @contextmanager
    def write_lock(self) -> Iterator[None]:
        """Hold off every other writer (in any process) across a read and the write it
        decides: the store's advisory lock, exclusive, for this thread's session."""
        key = (schema.LOCK_CLASS, schema.WRITE_LOCK)
        with self._connection("taking the write lock") as conn:
            conn.execute("SELECT pg_advisory_lock(%s, %s)", key)
        try:
            yield
        finally:
            with contextlib.suppress(psycopg.Error):  # a lost session has let go already
                conn.execute("SELECT pg_advisory_unlock(%s, %s)", key)

    # --- metadata and the model identity -----------------------------------------------------

    def meta(self, key: str) -> str | None:
        rows = self._read("SELECT value FROM meta WHERE key = %s", (key,))
        return rows[0][0] if rows else None

    def set_meta(self, key: str, value: str) -> None:
        with self._tx() as cur:
            cur.execute(
                "INSERT INTO meta (key, value) VALUES (%s, %s) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    def delete_meta(self, key: str) -> None:
        with self._tx() as cur:
            cur.execute("DELETE FROM meta WHERE key = %s", (key,))

    def meta_items(self) -> dict[str, str]:
        return dict(self._read("SELECT key, value FROM meta ORDER BY key"))

    def model_identity(self) -> ModelIdentity | None:
        raw = self.meta("model")
        return ModelIdentity(**json.loads(raw)) if raw else None

    def bind_model(self, identity: ModelIdentity) -> None:
        """Record ``identity`` on a store that has none (and make the HNSW index of its
        dimension); refuse one made by another model."""
        with self.write_lock():
            stored = self.model_identity()
            if stored is None and self.read_only is not None:
                return
            if stored is None:
                with self._tx("recording the model") as cur:
                    cur.execute(
                        "INSERT INTO meta (key, value) VALUES ('model', %s) "
                        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                        (json.dumps(identity.as_dict()),),
                    )
                    self._make_hnsw(cur, identity.dim)
            elif stored != identity:
                raise ModelMismatch(
                    f"store {self.location} was embedded with {stored.describe()}, but the "
                    f"configured model is {identity.describe()}; run `chitta reembed` to "
                    "re-embed every memory with the configured model, or configure the "
                    "store's model again"
                )

    @staticmethod
    def _make_hnsw(cur: psycopg.Cursor, dim: int) -> None:
        """The HNSW index (cosine) over the vectors of dimension ``dim``: partial, so that
        rows of another dimension (the versions a re-embedding just replaced, which an index
        build still reads) are never cast to it."""
        cur.execute(
            f"CREATE INDEX IF NOT EXISTS {_hnsw_index(dim)} ON embeddings USING hnsw "
            f"((vector::vector({int(dim)})) vector_cosine_ops) "
            f"WHERE vector_dims(vector) = {int(dim)}"
        )

    def rebuild_vector_index(self, maintenance_work_mem: str | None = None) -> dict[str, Any]:
        """Build the bound model's HNSW index again from every vector (``REINDEX``), as
        ``CREATE INDEX`` on a full table would: for the scale benchmark's build-time figure.
        ``maintenance_work_mem`` (e.g. ``"4GB"``) is set for this build only; the index's
        name, the setting it was built with and its bytes before and after."""
        identity = self.model_identity()
        if identity is None:
            raise StoreUnsupported(f"the store {self.location} has no model, so no HNSW index")
        name = _hnsw_index(identity.dim)
        size = f"SELECT coalesce(pg_relation_size(to_regclass('{name}')), 0)"
        before = int(self._read(size)[0][0])
        with self._tx("rebuilding the HNSW index") as cur:
            if maintenance_work_mem is not None:
                cur.execute("SELECT set_config('maintenance_work_mem', %s, true)",
                            (maintenance_work_mem,))  # fmt: skip
            memory = cur.execute("SHOW maintenance_work_mem").fetchone()[0]
            cur.execute(f"REINDEX INDEX {name}")
        return {"index": name, "maintenance_work_mem": memory, "bytes_before": before,
                "bytes_after": int(self._read(size)[0][0])}  # fmt: skip

    def replace_model(self, identity: ModelIdentity, vectors: dict[str, np.ndarray]) -> None:
        """Swap every vector and the recorded model in one transaction (re-embedding)."""
        old = self.model_identity()
        with self._tx("replacing the vectors") as cur:
            gen = self._bump(cur, epoch=True)
            if old is not None and old.dim != identity.dim:
                cur.execute(f"DROP INDEX IF EXISTS {_hnsw_index(old.dim)}")
            cur.executemany(
                "INSERT INTO embeddings (memory_id, realm, agent_id, channel, live, vector, gen) "
                "SELECT id, realm, agent_id, channel, deleted_at IS NULL, %s, %s FROM memories "
                "WHERE id = %s ON CONFLICT (memory_id) DO UPDATE SET vector = excluded.vector, "
                "gen = excluded.gen",
                [(v.astype(np.float32), gen, mid) for mid, v in vectors.items()],
            )
            cur.execute("DELETE FROM embeddings WHERE vector_dims(vector) <> %s", (identity.dim,))
            cur.execute("DELETE FROM pieces")  # the old model's; the caller embeds them anew
            cur.execute(
                "INSERT INTO meta (key, value) VALUES ('model', %s) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (json.dumps(identity.as_dict()),),
            )
            self._make_hnsw(cur, identity.dim)

    # --- memories ----------------------------------------------------------------------------

    def insert(
        self,
        items: Sequence[tuple[Memory, np.ndarray | None]],
        *,
        awaiting_pieces: Collection[str] = (),
    ) -> None:
        """Insert memories (with their vectors, if any) and their keyword postings in one
        transaction; a memory that supersedes another marks it in the same one, as does one
        in ``awaiting_pieces`` its wait for its pieces (store/base.py)."""
        self._insert(items, awaiting_pieces=awaiting_pieces)

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
        awaiting_pieces: Collection[str] = (),
    ) -> None:
        if not items:
            return
        posts = words.postings([(m.content, " ".join(m.tags)) for m, _ in items])
        with self._tx("the insert") as cur:
            gen = self._bump(cur)
            rows = [(*memory_row(m), p.length, gen)
                    for (m, _), p in zip(items, posts, strict=True)]  # fmt: skip
            cur.executemany(_INSERT_MEMORY, rows)
            cur.executemany(
                "INSERT INTO embeddings (memory_id, realm, agent_id, channel, live, vector, gen) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s)",
                [(m.id, m.realm, m.agent_id, m.channel, m.deleted_at is None,
                  v.astype(np.float32), gen) for m, v in items if v is not None],
            )  # fmt: skip
            self._post(cur, [(m, p) for (m, _), p in zip(items, posts, strict=True)])
            cur.executemany("INSERT INTO access_log (memory_id, at) VALUES (%s, %s)", access_times)
            cur.executemany(  # the mark: a row without vectors (pieces_for passes it over)
                "INSERT INTO pieces (memory_id, vectors) VALUES (%s, ''::bytea)",
                [(m.id,) for m, _ in items if m.id in awaiting_pieces],
            )
            for m, _ in items:
                if m.supersedes is not None and mark_superseded:
                    cur.execute(
                        "UPDATE memories SET superseded_by = %s, updated_at = %s, gen = %s "
                        "WHERE id = %s",
                        (m.id, m.created_at, gen, m.supersedes),
                    )

    @staticmethod
    def _post(cur: psycopg.Cursor, items: Sequence[tuple[Memory, words.Postings]]) -> None:
        """Write the keyword postings of ``items`` in one statement (a memory has dozens).
        Not COPY: PostgreSQL refuses COPY FROM into a table under row-level security, as
        every agent's role is (postgres/access_control.py); positions travel as array text."""
        rows = [(term, m.realm, col, m.id, "{" + ",".join(map(str, places)) + "}")
                for m, p in items for (term, col), places in p.places.items()]  # fmt: skip
        if not rows:
            return
        cur.execute(
            "INSERT INTO kw_postings (term, realm, col, memory_id, positions) "
            "SELECT t, r, c, m, p::integer[] FROM unnest(%s::text[], %s::text[], "
            "%s::smallint[], %s::text[], %s::text[]) AS u (t, r, c, m, p)",
            [list(column) for column in zip(*rows, strict=True)],
        )

    def unembedded(self, limit: int) -> list[str]:
        rows = self._read(
            "SELECT id FROM memories m WHERE NOT EXISTS "
            "(SELECT 1 FROM embeddings e WHERE e.memory_id = m.id) ORDER BY id LIMIT %s",
            (limit,),
        )
        return [r[0] for r in rows]

    def set_vectors(self, vectors: Mapping[str, np.ndarray]) -> int:
        """Give memories stored without a vector theirs (store/base.py); the other processes'
        mirrors see them by their generation (postgres/mirror.py)."""
        if not vectors:
            return 0
        with self._tx("storing vectors") as cur:
            gen = self._bump(cur)
            given = 0
            for memory_id in sorted(vectors):
                cur.execute(
                    "INSERT INTO embeddings (memory_id, realm, agent_id, channel, live, vector, "
                    "gen) SELECT id, realm, agent_id, channel, deleted_at IS NULL, %s, %s "
                    "FROM memories WHERE id = %s ON CONFLICT (memory_id) DO NOTHING",
                    (vectors[memory_id].astype(np.float32), gen, memory_id),
                )
                given += cur.rowcount
        return given

    def set_pieces(self, pieces: Mapping[str, bytes]) -> int:
        """Store memories' pieces' vectors, replacing theirs (store/base.py)."""
        if not pieces:
            return 0
        ids = sorted(pieces)
        with self._tx("storing pieces") as cur:
            # One statement for the batch (an import's 256 memories, the queue's 32): the ids
            # the memories table does not hold are dropped by the join.
            cur.execute(
                "INSERT INTO pieces (memory_id, vectors) SELECT m.id, p.v FROM "
                "unnest(%s::text[], %s::bytea[]) p (id, v) JOIN memories m ON m.id = p.id "
                "ON CONFLICT (memory_id) DO UPDATE SET vectors = excluded.vectors",
                (ids, [bytes(pieces[i]) for i in ids]),
            )
            return cur.rowcount

    def pieces_for(self, ids: Sequence[str]) -> dict[str, bytes]:
        rows = self._read(
            "SELECT memory_id, vectors FROM pieces WHERE memory_id = ANY(%s) "
            "AND octet_length(vectors) > 0",
            (list(ids),),
        )
        return {r[0]: bytes(r[1]) for r in rows}

    def drop_pieces(self, ids: Sequence[str]) -> None:
        if not ids:
            return
        rows = self._read("SELECT memory_id FROM pieces WHERE memory_id = ANY(%s)", (list(ids),))
        held = [r[0] for r in rows]
        if not held:  # no write for memories that never had any
            return
        with self._tx("dropping pieces") as cur:
            cur.execute("DELETE FROM pieces WHERE memory_id = ANY(%s)", (held,))

    def awaiting_pieces(self, limit: int) -> list[str]:
        rows = self._read(
            "SELECT p.memory_id FROM pieces p JOIN memories m ON m.id = p.memory_id "
            "WHERE octet_length(p.vectors) = 0 AND m.deleted_at IS NULL "
            "ORDER BY p.memory_id LIMIT %s",
            (limit,),
        )
        return [r[0] for r in rows]

    def exists(self, memory_id: str) -> bool:
        return bool(self._read("SELECT 1 FROM memories WHERE id = %s", (memory_id,)))

    def get(self, memory_id: str, *, include_deleted: bool = False) -> Memory:
        rows = self._read(f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id = %s", (memory_id,))
        if not rows or (rows[0][24] is not None and not include_deleted):
            state = "is forgotten (restore it with `chitta restore`)" if rows else "does not exist"
            raise MemoryNotFound(f"memory {memory_id} {state}")
        return memory_from_row(rows[0])

    def get_many(self, ids: Sequence[str]) -> dict[str, Memory]:
        rows = self._read(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id = ANY(%s) AND deleted_at IS NULL",
            (list(ids),),
        )
        return {r[0]: memory_from_row(r) for r in rows}

    def update(self, memory: Memory) -> None:
        """Write back a memory's mutable state; its access count and last access are the
        access log's and are left as stored."""
        with self._tx("the update") as cur:
            if not self._update_in(cur, memory, self._bump(cur)):
                raise MemoryNotFound(f"memory {memory.id} does not exist")

    def update_many(self, memories: Iterable[Memory]) -> int:
        count = 0
        with self._tx("the update") as cur:
            gen = self._bump(cur)
            for memory in memories:
                self._update_in(cur, memory, gen)
                count += 1
        return count

    def _update_in(self, cur: psycopg.Cursor, memory: Memory, gen: int) -> bool:
        """Update one memory inside ``cur``'s transaction, posting its words again when its
        text or tags changed; False when there is no such memory."""
        row = cur.execute(
            "SELECT content, tags, kw_length FROM memories WHERE id = %s FOR UPDATE", (memory.id,)
        ).fetchone()
        if row is None:
            return False
        tags = " ".join(memory.tags)
        length = row[2]
        if (row[0], row[1]) != (memory.content, tags):
            posts = words.postings([(memory.content, tags)])[0]
            length = posts.length
            cur.execute("DELETE FROM kw_postings WHERE memory_id = %s", (memory.id,))
            self._post(cur, [(memory, posts)])
        cur.execute(_UPDATE_MEMORY, (*update_row(memory), gen, memory.id))
        if length != row[2]:
            cur.execute("UPDATE memories SET kw_length = %s WHERE id = %s", (length, memory.id))
        return True

    def set_deleted(self, memory_id: str, deleted_at: int | None) -> Memory:
        """Forget (a time) or restore (None) a memory; the memory as now stored."""
        with self._tx("the update") as cur:
            memory = self.get(memory_id, include_deleted=True)
            updated = replace(memory, deleted_at=deleted_at)
            self._update_in(cur, updated, self._bump(cur))
        return updated

    def purge(self, memory_id: str) -> None:
        """Remove a memory and everything derived from it for good (its vector, postings,
        access history and co-access go with it; triplets keep their edge, sourceless)."""
        with self._tx("the purge") as cur:
            gen = self._bump(cur)
            gone = cur.execute("DELETE FROM memories WHERE id = %s RETURNING realm",
                               (memory_id,)).fetchone()  # fmt: skip
            if gone is None:
                self._not_deletable(cur, memory_id)
            cur.execute("UPDATE memories SET supersedes = NULL, gen = %s WHERE supersedes = %s",
                        (gen, memory_id))  # fmt: skip
            cur.execute(
                "UPDATE memories SET superseded_by = NULL, gen = %s WHERE superseded_by = %s",
                (gen, memory_id),
            )
            cur.execute("INSERT INTO purged (gen, memory_id, realm) VALUES (%s, %s, %s)",
                        (gen, memory_id, gone[0]))  # fmt: skip

    def _not_deletable(self, cur: psycopg.Cursor, memory_id: str) -> None:
        """Raise why ``memory_id`` was not deleted: it is in a realm this role may read but
        not write (row-level security, postgres/access_control.py), or there is none."""
        realm = cur.execute("SELECT realm FROM memories WHERE id = %s", (memory_id,)).fetchone()
        if realm is not None:
            raise AccessDenied(
                f"the database {self.location} refused the purge: this role may not write "
                f"realm {realm[0]!r} (the store's owner grants realms: docs/team.md)"
            )
        raise MemoryNotFound(f"memory {memory_id} does not exist")

    def iter_memories(
        self, *, realm: str | None = None, include_deleted: bool = False, batch: int = 1000
    ) -> Iterator[Memory]:
        where, params = ["id > %s"], []
        if realm is not None:
            where.append("realm = %s")
            params.append(realm)
        if not include_deleted:
            where.append("deleted_at IS NULL")
        last = ""
        while True:
            rows = self._read(
                f"SELECT {MEMORY_COLUMNS} FROM memories WHERE {' AND '.join(where)} "
                "ORDER BY id LIMIT %s",
                (last, *params, batch),
            )
            if not rows:
                return
            yield from (memory_from_row(r) for r in rows)
            last = rows[-1][0]

    def vectors_for(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        rows = self._read(
            "SELECT memory_id, vector FROM embeddings WHERE memory_id = ANY(%s)", (list(ids),),
            binary=True,
        )  # fmt: skip
        return {r[0]: r[1] for r in rows}

    def existing_ids(self, table: str, ids: Sequence[str]) -> set[str]:
        if table not in ID_TABLES:
            raise ValueError(table)
        return {r[0] for r in self._read(f"SELECT id FROM {table} WHERE id = ANY(%s)",
                                         (list(ids),))}  # fmt: skip

    def session_recent(self, session: str, n: int) -> list[str]:
        rows = self._read(
            "SELECT id FROM memories WHERE session = %s AND deleted_at IS NULL "
            "ORDER BY id DESC LIMIT %s",
            (session, n),
        )
        return [r[0] for r in rows]

    def episode_neighbours(
        self, memory_id: str, span: int, episode: str | None = None
    ) -> list[tuple[str, int]]:
        return portable.episode_neighbours(self._read, "%s", memory_id, span, episode)

    def turns_before(self, memories: Sequence[Memory]) -> dict[str, str]:
        return portable.turns_before(self._read, "%s", "session", memories)

    def episode_members(self, scope: Scope) -> dict[str, list[str]]:
        return portable.episode_members(self._read, "%s", scope)

    # --- access history, co-access, replications ---------------------------------------------

    def record_access(self, record: AccessRecord) -> None:
        """Buffer one recall's accesses (written in a later batch, never by this call)."""
        if self.read_only is None:
            self._access.record(record)

    def flush_access(self) -> int:
        return self._access.flush()

    def access_stats(self) -> dict[str, int]:
        return self._access.stats()

    def _write_access(self, batch: list[AccessRecord]) -> None:
        with self._tx("writing the access history") as cur:
            access_sql.write_batch(cur, batch)

    def access_history(self, ids: Sequence[str]) -> dict[str, AccessHistory]:
        with self._access_mutex:
            return access_sql.read_history(self._read, list(ids), self._access.pending())

    def co_access(self, ids: Sequence[str]) -> dict[tuple[str, str], float]:
        with self._access_mutex:
            return access_sql.read_co_access(self._read, list(ids), self._access.pending())

    def co_neighbours(self, memory_id: str, limit: int = 10) -> list[tuple[str, float]]:
        with self._access_mutex:
            return [
                (o, w)
                for o, w, _ in access_sql.read_partners(
                    self._read, [memory_id], self._access.pending(), limit
                )[memory_id]
            ]

    def co_partners(
        self, ids: Sequence[str], limit: int = 10
    ) -> dict[str, list[tuple[str, float, int]]]:
        with self._access_mutex:
            return access_sql.read_partners(self._read, list(ids), self._access.pending(), limit)

    def add_replication(self, memory_id: str, session: str, at: int) -> None:
        with self._tx() as cur:
            cur.execute(
                "INSERT INTO replications (memory_id, session, created_at) VALUES (%s, %s, %s) "
                "ON CONFLICT DO NOTHING",
                (memory_id, session, at),
            )

    def replication_sessions(self, ids: Sequence[str]) -> dict[str, set[str]]:
        found: dict[str, set[str]] = {}
        for mid, session in self._read(
            "SELECT memory_id, session FROM replications WHERE memory_id = ANY(%s)", (list(ids),)
        ):
            found.setdefault(mid, set()).add(session)
        return found

    def replications(self, ids: Sequence[str]) -> list[tuple[str, str, int]]:
        """(memory id, session, time) of each replication of ``ids``, in that order."""
        return sorted(tuple(r) for r in self._read(  # type: ignore[misc]
            "SELECT memory_id, session, created_at FROM replications WHERE memory_id = ANY(%s)",
            (list(ids),)))  # fmt: skip

    def co_access_rows(self, ids: Sequence[str]) -> list[tuple[str, str, float, int]]:
        """The co-access rows (a, b, weight, updated_at) whose ``a`` is one of ``ids``."""
        rows = self._read(
            "SELECT a, b, weight, updated_at FROM co_access WHERE a = ANY(%s)", (list(ids),)
        )
        return sorted(tuple(r) for r in rows)  # type: ignore[misc]

    def put_co_access(self, rows: Sequence[tuple[str, str, float, int]]) -> None:
        """Set co-access rows as given (a copy: chitta migrate)."""
        with self._tx() as cur:
            cur.executemany(
                "INSERT INTO co_access (a, b, weight, updated_at) VALUES (%s, %s, %s, %s) "
                "ON CONFLICT (a, b) DO UPDATE SET weight = excluded.weight, "
                "updated_at = excluded.updated_at",
                rows,
            )

    # --- vector search -----------------------------------------------------------------------

    def vector_count(self) -> int:
        return int(self._read("SELECT count(*) FROM embeddings WHERE live")[0][0])

    def vector_search(
        self, vector: np.ndarray, scope: Scope, k: int, *, exact: bool = False
    ) -> list[tuple[str, float]]:
        """The ``k`` live memories of ``scope`` nearest ``vector`` by cosine. Through the HNSW
        index (iterative scans, so a filter by agent or channel still finds ``k``) when the
        realm has ``hnsw_min`` live vectors and ``exact`` is not asked; else exactly."""
        if k <= 0:
            return []
        where, params = scope_sql(scope)
        if not exact and self._indexed(scope.realm):
            return self._nearest(vector, f"{where} AND live", params, k, approximate=True)
        return self._nearest(vector, f"{where} AND live", params, k)

    def vector_search_is_approximate(self, realm: str) -> bool:
        """Whether :meth:`vector_search` of ``realm`` goes through the HNSW index now."""
        return self._indexed(realm)

    def _indexed(self, realm: str) -> bool:
        """Whether ``realm`` has at least ``hnsw_min`` live vectors (counting no further)."""
        if not self.hnsw_min:
            return False
        rows = self._read(
            "SELECT count(*) FROM (SELECT 1 FROM embeddings WHERE realm = %s AND live LIMIT %s) s",
            (realm, self.hnsw_min),
        )
        return rows[0][0] >= self.hnsw_min

    def _nearest(
        self, vector: np.ndarray, where: str, params: Sequence[object], k: int,
        *, approximate: bool = False,
    ) -> list[tuple[str, float]]:  # fmt: skip
        """Cosine search over the embeddings rows meeting ``where``. Exact search orders by
        the distance of the stored vectors as they are, which no index serves; approximate
        search orders by the HNSW index's expression (the vectors cast to their dimension)."""
        q = np.asarray(vector, dtype=np.float32).ravel()
        dim = int(q.size)
        target = f"vector::vector({dim}) <=> %s::vector({dim})" if approximate else "vector <=> %s"
        if approximate:
            where = f"{where} AND vector_dims(vector) = {dim}"  # the index's predicate
        sql = (f"SELECT memory_id, {target} AS d FROM embeddings WHERE {where} "
               f"ORDER BY {target}, memory_id LIMIT %s")  # fmt: skip
        with self._connection("the vector search") as conn:
            if approximate:
                with conn.transaction():
                    conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
                    conn.execute(f"SET LOCAL hnsw.ef_search = {max(EF_SEARCH, int(k))}")
                    rows = conn.execute(sql, (q, *params, q, k)).fetchall()
                # relaxed order: nearly sorted; sort it.
                rows.sort(key=lambda r: (r[1], r[0]))
            else:
                rows = conn.execute(sql, (q, *params, q, k)).fetchall()
        return [(r[0], 1.0 - float(r[1])) for r in rows]

    def vector_search_among(
        self, vector: np.ndarray, ids: Sequence[str], k: int
    ) -> list[tuple[str, float]]:
        if k <= 0 or not ids:
            return []
        return self._nearest(vector, "memory_id = ANY(%s) AND live", [list(ids)], k)

    def vector_search_elsewhere(
        self, vector: np.ndarray, scope: Scope, k: int
    ) -> list[tuple[str, float]]:
        if k <= 0:
            return []
        where, params = scope_sql(scope, elsewhere=True)
        return self._nearest(vector, f"{where} AND live", params, k)

    def sparse_search(self, vector: np.ndarray, scope: Scope, k: int) -> list[tuple[str, float]]:
        index: SparseIndex = self._derived("sparse")
        return index.search(np.asarray(vector, dtype=np.float32), scope, k)

    # --- keyword search ----------------------------------------------------------------------

    def keyword_search(
        self, terms: Sequence[str], scope: Scope, limit: int, *, column: str | None = None
    ) -> list[tuple[str, float]]:
        where, params = scope_sql(scope, "m")
        # One snapshot for N and every df: across two, a concurrent write could make a
        # term's holders outnumber the collection (and the idf's logarithm fail).
        with self._snapshot() as read:
            return keywords.search(
                read, terms, Realms((scope.realm,)), Keep(where, tuple(params)), limit, column
            )

    def keyword_search_elsewhere(
        self, terms: Sequence[str], scope: Scope, limit: int
    ) -> list[tuple[str, float]]:
        where, params = scope_sql(scope, "m", elsewhere=True)
        with self._snapshot() as read:  # one snapshot, as keyword_search's
            return keywords.search(
                read, terms, Realms((scope.realm,), other=True), Keep(where, tuple(params)),
                limit,
            )  # fmt: skip

    def keyword_frequencies(self, terms: Sequence[str], realm: str) -> tuple[int, dict[str, int]]:
        with self._snapshot() as read:  # one snapshot, as keyword_search's
            return keywords.frequencies(read, terms, Realms((realm,)))

    def term_matches(self, terms: Sequence[str], ids: Sequence[str]) -> dict[str, set[str]]:
        if not terms or not ids:
            return {}
        return keywords.matches(self._read, terms, ids)

    def assessment_reads(self, request: AssessmentRequest) -> AssessmentReads:
        """The assessment stage's three reads (store/assessment.py) over one snapshot."""
        with self._snapshot() as read:
            vectors = {}
            if request.vectors:
                vectors = {r[0]: r[1] for r in read(
                    "SELECT memory_id, vector FROM embeddings WHERE memory_id = ANY(%s)",
                    (list(request.vectors),), binary=True,
                )}  # fmt: skip
            matches = {}
            if request.terms and request.holders:
                matches = keywords.matches(read, request.terms, request.holders)
            size, df = None, {}
            if request.frequencies is not None:
                realms = Realms((request.realm,))
                size, df = keywords.frequencies(read, request.frequencies, realms)
        return AssessmentReads(vectors=vectors, matches=matches, size=size, df=df)

    def term_stats(self) -> TermStats:
        return self._derived("terms")

    def warm(self, stop: Callable[[], bool] | None = None) -> dict[str, float]:
        """The term statistics and the correction index: the database answers the rest."""
        return timed_parts({"terms": self.term_stats, "corrections": self.corrections}, stop)

    # --- derived indexes ---------------------------------------------------------------------

    def links(self) -> LinkIndex:
        return self._derived("links")

    def corrections(self) -> CorrectionIndex:
        return self._derived("corrections")

    def themes(self) -> ThemeIndex:
        return self._derived("themes")

    def themes_built(self) -> ThemeIndex | None:
        """The theme index when it is built (and brought up to date), else None (no build)."""
        if "themes" not in self._mirror.built:
            return None
        return self.themes()

    def code(self) -> CodeTables:
        """The code tables (store/code_sql.py's statements, read as this backend reads)."""
        if self._code is None:
            self._code = code_sql.SQLCodeTables(self._read, self._tx, "%s", maintain=self._maintain)
        return self._code

    # --- the time cue's period ---------------------------------------------------------------

    def scope_oldest(self, scope: Scope) -> int | None:
        return portable.scope_oldest(self._read, "%s", scope)

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
        where, params = scope_sql(scope, "m")
        live = "m.deleted_at IS NULL"
        if not include_superseded:
            live += " AND m.superseded_by IS NULL"
        if among is None:
            bound = "" if limit is None else f" LIMIT {int(limit) + 1}"
            rows = self._read(
                f"(SELECT m.id FROM memories m WHERE {where} AND {live} AND {TIME} >= %s AND "
                f"{TIME} < %s ORDER BY m.id) UNION ALL (SELECT m.id FROM episodes e JOIN "
                "memories m ON m.episode_id = e.id WHERE e.realm = %s AND e.started_at >= %s "
                f"AND e.started_at < %s AND {where} AND {live} ORDER BY m.id){bound}",
                (*params, start_ms, end_ms, scope.realm, start_ms, end_ms, *params),
            )
            if limit is not None and len(rows) > limit:
                return None
            return list(dict.fromkeys(r[0] for r in rows))
        period, times = period_sql(start_ms, end_ms, include_superseded)
        rows = self._read(
            "SELECT m.id FROM unnest(%s::text[]) WITH ORDINALITY w (id, place) JOIN memories m "
            f"ON m.id = w.id LEFT JOIN episodes e ON e.id = m.episode_id WHERE {where} AND "
            f"m.deleted_at IS NULL AND {period} ORDER BY w.place",
            (list(among), *params, *times),
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
        where, params = scope_sql(scope, "m")
        period, times = period_sql(start_ms, end_ms, include_superseded)
        keep = Keep(f"{where} AND {period}", (*params, *times),
                    "LEFT JOIN episodes e ON e.id = m.episode_id")  # fmt: skip
        with self._snapshot() as read:  # one snapshot, as keyword_search's
            return keywords.search(read, terms, Realms((scope.realm,)), keep, limit)

    # --- triplets and aliases ----------------------------------------------------------------

    def add_triplets(self, triplets: Sequence[Triplet]) -> None:
        if not triplets:
            return
        with self._tx("adding triplets") as cur:
            gen = self._bump(cur)
            graph.insert(cur, triplets)
            self._touch_ends(cur, gen, triplets)

    def _touch_ends(self, cur: psycopg.Cursor, gen: int, triplets: Iterable[Triplet]) -> None:
        """Log the entities a triplet write touched (both ends, under every name their
        aliases give them) for the link indexes' write counts, in every process."""
        ends: dict[str, set[str]] = {}
        for t in triplets:
            ends.setdefault(t.realm, set()).update((entity_key(t.subject), entity_key(t.object)))
        for realm, keys in sorted(ends.items()):
            groups = graph.alias_groups(self._read, realm, keys)
            names = sorted({name for k in keys for name in groups.get(k, (k,))})
            self._touch(cur, gen, realm, names)

    @staticmethod
    def _touch(cur: psycopg.Cursor, gen: int, realm: str, names: Iterable[str]) -> None:
        cur.execute("INSERT INTO link_touches (gen, realm, names) VALUES (%s, %s, %s)",
                    (gen, realm, sorted(set(names))))  # fmt: skip

    def triplets(self, realm: str | None = None) -> list[Triplet]:
        return graph.all_of(self._read, realm)

    def triplet(self, triplet_id: str) -> Triplet | None:
        return graph.by_id(self._read, triplet_id)

    def invalidate_triplet(self, triplet: Triplet, at: int) -> None:
        with self._tx("invalidating a triplet") as cur:
            gen = self._bump(cur)
            cur.execute("UPDATE triplets SET invalidated_at = %s WHERE id = %s", (at, triplet.id))
            self._touch_ends(cur, gen, [triplet])

    def same_current_triplet(
        self, realm: str, subjects: Sequence[str], predicate: str, objects: Sequence[str], at: int
    ) -> Triplet | None:
        return graph.same_current(self._read, realm, subjects, predicate, objects, at)

    def find_triplets(
        self,
        realm: str,
        *,
        subjects: Sequence[str] = (),
        predicate: str | None = None,
        objects: Sequence[str] = (),
        at: int | None,
        limit: int,
    ) -> list[Triplet]:
        return graph.find(self._read, realm, subjects=subjects, predicate=predicate,
                          objects=objects, at=at, limit=limit)  # fmt: skip

    def triplets_between(
        self, realm: str, subjects: Sequence[str], objects: Sequence[str], at: int, cap: int
    ) -> Bounded:
        return graph.between(self._read, realm, subjects, objects, at, cap)

    def triplets_outgoing(
        self, realm: str, subjects: Sequence[str], predicates: Sequence[str], at: int, cap: int
    ) -> Bounded:
        return graph.outgoing(self._read, realm, subjects, predicates, at, cap)

    def out_predicates(
        self, realm: str, subjects: Sequence[str], at: int, most: int = 50
    ) -> tuple[list[str], bool]:
        return graph.out_predicates(self._read, realm, subjects, at, most)

    def entity_known(self, realm: str, keys: Sequence[str]) -> bool:
        return bool(keys) and graph.known(self._read, realm, keys)

    def triplet_neighbours(
        self, realm: str, names: Iterable[str], cap: int = NEIGHBOUR_CAP
    ) -> tuple[dict[str, list[tuple[str, float, str | None]]], bool]:
        """For each of ``names``, the entities at the other end of the realm's current
        triplets touching it or one of its aliases (store/sqlite.py's rule)."""
        wanted = sorted(set(names))
        out: dict[str, list[tuple[str, float, str | None]]] = {}
        if not wanted:
            return out, False
        groups = graph.alias_groups(self._read, realm, wanted)
        asked: dict[str, set[str]] = {}
        for name in wanted:
            for key in groups.get(name, (name,)):
                asked.setdefault(key, set()).add(name)
        now = int(time.time() * 1000)
        read = graph.touching(self._read, realm, sorted(asked), now, cap)
        ends = graph.alias_groups(self._read, realm, (k for ks in read.keys for k in ks))
        for t, (subject, _, obj) in zip(read.rows, read.keys, strict=True):
            for here, there in ((subject, obj), (obj, subject)):
                for name in asked.get(here, ()):
                    for end in ends.get(there, (there,)):
                        out.setdefault(name, []).append((end, t.weight, t.source_memory))
        return out, read.cut

    def triplet_hubs(self, realm: str, limit: int) -> dict[str, int]:
        return graph.hubs(self._read, realm, int(time.time() * 1000), limit)

    def triplets_sourced_by(
        self, memory_ids: Sequence[str], cap: int = NEIGHBOUR_CAP
    ) -> tuple[dict[str, list[tuple[str, str, float]]], bool]:
        return graph.sourced_by(self._read, memory_ids, int(time.time() * 1000), cap)

    def add_alias(
        self, realm: str, alias: str, alias_key: str, canonical_key: str, at: int | None = None
    ) -> None:
        at = int(time.time() * 1000) if at is None else at
        with self._tx("adding an alias") as cur:
            gen = self._bump(cur)
            # The entity the alias meant until now loses a name, the one it joins gains one.
            before = graph.names_of(self._read, realm, alias_key)
            graph.add_alias(cur, realm, alias, alias_key, canonical_key, at)
            after = graph.names_of(self._read, realm, canonical_key)
            self._touch(cur, gen, realm, {*before, *after})

    def aliases(self, realm: str | None = None) -> list[Alias]:
        return [Alias(*row) for row in graph.aliases(self._read, realm)]

    def remove_alias(self, realm: str, alias_key: str) -> bool:
        with self._tx("removing an alias") as cur:
            gen = self._bump(cur)
            names = graph.names_of(self._read, realm, alias_key)
            meant = graph.remove_alias(cur, realm, alias_key)
            if meant is not None:
                self._touch(cur, gen, realm, names)
        return meant is not None

    def canonical(self, realm: str, key: str) -> str:
        return graph.canonical(self._read, realm, key)

    def canonical_many(self, realm: str, keys: Iterable[str]) -> dict[str, str]:
        return graph.canonical_many(self._read, realm, keys)

    def names_of(self, realm: str, key: str) -> tuple[str, ...]:
        return graph.names_of(self._read, realm, key)

    # --- episodes ----------------------------------------------------------------------------

    def add_episodes(self, episodes: Sequence[Episode]) -> None:
        with self._tx("adding episodes") as cur:
            cur.executemany(
                f"INSERT INTO episodes ({EPISODE_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                [(e.id, e.realm, e.title, e.started_at, e.ended_at,
                  json.dumps(e.source.as_dict()), e.created_at) for e in episodes],
            )  # fmt: skip

    def episodes(self, realm: str | None = None) -> list[Episode]:
        where, params = ("WHERE realm = %s", [realm]) if realm is not None else ("", [])
        rows = self._read(f"SELECT {EPISODE_COLUMNS} FROM episodes {where} ORDER BY id", params)
        return [episode_from_row(r) for r in rows]

    # --- figures and maintenance -------------------------------------------------------------

    def counts(self) -> dict[str, object]:
        per_realm = dict(
            self._read(
                "SELECT realm, count(*) FROM memories WHERE deleted_at IS NULL GROUP BY realm"
            )
        )
        per_kind = dict(
            self._read("SELECT kind, count(*) FROM memories WHERE deleted_at IS NULL GROUP BY kind")
        )
        return {
            "memories": sum(per_realm.values()),
            "per_realm": per_realm,
            "per_kind": per_kind,
            "forgotten": self._read(
                "SELECT count(*) FROM memories WHERE deleted_at IS NOT NULL")[0][0],
            "triplets": self._read("SELECT count(*) FROM triplets")[0][0],
            "episodes": self._read("SELECT count(*) FROM episodes")[0][0],
        }  # fmt: skip

    def size_bytes(self) -> int:
        """The bytes of chitta's tables with their indexes and TOAST."""
        rows = self._read(
            "SELECT coalesce(sum(pg_total_relation_size(to_regclass(t))), 0) "
            "FROM unnest(%s::text[]) t",
            (list(TABLES),),
        )
        return int(rows[0][0])

    def disk_usage(self) -> dict[str, int]:
        """The bytes of chitta's tables (with their indexes and TOAST) by part: ``memories``,
        ``embeddings`` (the vectors and the HNSW index), ``keywords`` (the postings and realm
        statistics) and ``other``."""
        parts: dict[str, int] = {}
        rows = self._read(
            "SELECT t, coalesce(pg_total_relation_size(to_regclass(t)), 0) "
            "FROM unnest(%s::text[]) t",
            (list(TABLES),),
        )
        for table, nbytes in rows:
            part = _PARTS.get(table, "other")
            parts[part] = parts.get(part, 0) + int(nbytes)
        return parts

    def schema_version(self) -> int:
        """The version of the schema the database is at (schema.py)."""
        return int(self._read("SELECT value FROM meta WHERE key = 'schema_version'")[0][0])

    def integrity_check(self) -> str:
        """``ok``, or each problem found: the schema's version, invalid indexes, each realm's
        counts against its memories, vectors whose scope copy went out of step."""
        problems = []
        with self._snapshot() as read:
            version = read("SELECT value FROM meta WHERE key = 'schema_version'")
            if not version or version[0][0] != str(schema.LATEST):
                problems.append(f"schema version {version[0][0] if version else None!r}")
            for (name,) in read(
                "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
                "JOIN pg_class t ON t.oid = i.indrelid WHERE t.relname = ANY(%s) "
                "AND NOT i.indisvalid", (list(TABLES),)):  # fmt: skip
                problems.append(f"index {name} is invalid (REINDEX it)")
            for realm, kept, counted in read(
                "SELECT coalesce(k.realm, c.realm), (k.live, k.tokens), (c.live, c.tokens) "
                "FROM kw_realms k FULL JOIN (SELECT realm, count(*) AS live, sum(kw_length) AS "
                "tokens FROM memories WHERE deleted_at IS NULL GROUP BY realm) c "
                "ON c.realm = k.realm WHERE (coalesce(k.live, 0), coalesce(k.tokens, 0)) <> "
                "(coalesce(c.live, 0), coalesce(c.tokens, 0))"
            ):
                problems.append(f"realm {realm!r} counts {kept} but holds {counted}")
            off = read(
                "SELECT count(*) FROM embeddings e JOIN memories m ON m.id = e.memory_id WHERE "
                "(e.realm, e.agent_id, e.channel, e.live) <> "
                "(m.realm, m.agent_id, m.channel, m.deleted_at IS NULL)"
            )[0][0]
            if off:
                problems.append(f"{off} vectors have another scope than their memories")
        return "; ".join(problems) if problems else "ok"

    def backup_to(self, dest: Path) -> None:
        raise StoreUnsupported(
            f"the store {self.location} is a PostgreSQL database: back it up with pg_dump (or "
            "the managed service's snapshots), or copy it into a SQLite file with "
            "`chitta migrate`"
        )

    def restore_from(self, source: Path) -> Path:
        raise StoreUnsupported(
            f"the store {self.location} is a PostgreSQL database: restore it with pg_restore, "
            "or copy a SQLite store into it with `chitta migrate`"
        )
