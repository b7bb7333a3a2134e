"""Memories and episodes: writing, reading and forgetting them, with their vectors."""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace

import numpy as np

from chitta.errors import MemoryNotFound
from chitta.store import portable
from chitta.store.records import Episode, Memory, Scope
from chitta.store.sqlite import ann_sidecar, terms_sidecar, vector_sidecar
from chitta.store.sqlite.connection import Connection, locked_write
from chitta.store.sqlite.rows import (
    MEMORY_COLUMNS,
    PLACEHOLDERS,
    UPDATE_COLUMNS,
    UPDATE_PLACEHOLDERS,
    memory_from_row,
    memory_row,
    source_of,
    update_row,
)
from chitta.store.vectors import live_vectors


class Memories(Connection):
    """Memories, their vectors and episodes."""

    # --- memories ------------------------------------------------------------------------------

    @locked_write
    def insert(
        self,
        items: Sequence[tuple[Memory, np.ndarray | None]],
        *,
        awaiting_pieces: Collection[str] = (),
    ) -> None:
        """Insert memories (with their vectors, if any) in one transaction, those in
        ``awaiting_pieces`` marked as awaiting their pieces (store/base.py)."""
        self._insert(items, awaiting_pieces=awaiting_pieces)

    @locked_write
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
        with self.transaction() as conn:
            conn.executemany(
                f"INSERT INTO memories ({MEMORY_COLUMNS}) VALUES ({PLACEHOLDERS})",
                (memory_row(m) for m, _ in items),
            )
            conn.executemany(
                "INSERT INTO embeddings (memory_id, vector) VALUES (?, ?)",
                ((m.id, v.astype(np.float32).tobytes()) for m, v in items if v is not None),
            )
            conn.executemany("INSERT INTO access_log (memory_id, at) VALUES (?, ?)", access_times)
            # The mark: a row without vectors (pieces_for passes it over).
            conn.executemany(
                "INSERT INTO pieces (memory_id, vectors) VALUES (?, x'')",
                ((m.id,) for m, _ in items if m.id in awaiting_pieces),
            )
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
        self._index_vectors(items)
        if self._corrections is not None:
            self._corrections.insert([m for m, _ in items])

    def _index_vectors(self, items: Sequence[tuple[Memory, np.ndarray | None]]) -> None:
        """Add the live vectors of ``items`` to the in-memory indexes built so far."""
        if self._vectors is not None and (live := live_vectors(items)) is not None:
            self._vectors.add(*live)
        if self._sparse is not None:
            self._sparse.add_live([(m, v) for m, v in items if m.deleted_at is None])
        if self._themes is not None:
            self._themes.add_live(items)

    def unembedded(self, limit: int) -> list[str]:
        rows = self._query(
            "SELECT id FROM memories m WHERE NOT EXISTS "
            "(SELECT 1 FROM embeddings e WHERE e.memory_id = m.id) ORDER BY id LIMIT ?",
            (limit,),
        )
        return [r["id"] for r in rows]

    @locked_write
    def set_vectors(self, vectors: Mapping[str, np.ndarray]) -> int:
        """Give memories stored without a vector theirs (store/base.py)."""
        ids = sorted(vectors)
        had = self.vectors_for(ids)
        todo = self.existing_ids("memories", [i for i in ids if i not in had])
        if not todo:
            return 0
        with self.transaction() as conn:
            conn.executemany(
                "INSERT INTO embeddings (memory_id, vector) VALUES (?, ?)",
                ((i, vectors[i].astype(np.float32).tobytes()) for i in sorted(todo)),
            )
        live = self.get_many(sorted(todo))
        self._index_vectors([(m, vectors[m.id]) for m in live.values()])
        return len(todo)

    @locked_write
    def set_pieces(self, pieces: Mapping[str, bytes]) -> int:
        """Store memories' pieces' vectors, replacing theirs (store/base.py)."""
        todo = self.existing_ids("memories", sorted(pieces))
        if not todo:
            return 0
        with self.transaction() as conn:
            conn.executemany(
                "INSERT INTO pieces (memory_id, vectors) VALUES (?, ?) ON CONFLICT (memory_id) "
                "DO UPDATE SET vectors = excluded.vectors",
                ((i, bytes(pieces[i])) for i in sorted(todo)),
            )
        return len(todo)

    def pieces_for(self, ids: Sequence[str]) -> dict[str, bytes]:
        found: dict[str, bytes] = {}
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            marks = ", ".join("?" * len(chunk))
            for r in self._query(
                f"SELECT memory_id, vectors FROM pieces WHERE memory_id IN ({marks}) "
                "AND length(vectors) > 0",
                chunk,
            ):
                found[r[0]] = bytes(r[1])
        return found

    @locked_write
    def drop_pieces(self, ids: Sequence[str]) -> None:
        held: list[str] = []
        for start in range(0, len(ids), 500):  # one read a chunk, not one an id
            chunk = list(ids[start : start + 500])
            marks = ", ".join("?" * len(chunk))
            held += [r[0] for r in self._query(
                f"SELECT memory_id FROM pieces WHERE memory_id IN ({marks})", chunk)]  # fmt: skip
        if not held:  # no write (and no sync) for memories that never had any
            return
        with self.transaction() as conn:
            conn.executemany("DELETE FROM pieces WHERE memory_id = ?", ((i,) for i in held))

    def awaiting_pieces(self, limit: int) -> list[str]:
        rows = self._query(
            "SELECT p.memory_id FROM pieces p JOIN memories m ON m.id = p.memory_id "
            "WHERE length(p.vectors) = 0 AND m.deleted_at IS NULL ORDER BY p.memory_id LIMIT ?",
            (limit,),
        )
        return [r[0] for r in rows]

    def exists(self, memory_id: str) -> bool:
        return bool(self._query("SELECT 1 FROM memories WHERE id = ?", (memory_id,)))

    def get(self, memory_id: str, *, include_deleted: bool = False) -> Memory:
        rows = self._query(f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id = ?", (memory_id,))
        if not rows or (rows[0]["deleted_at"] is not None and not include_deleted):
            state = "is forgotten (restore it with `chitta restore`)" if rows else "does not exist"
            raise MemoryNotFound(f"memory {memory_id} {state}")
        return memory_from_row(rows[0])

    def get_many(self, ids: Sequence[str]) -> dict[str, Memory]:
        """Live memories by id; missing or deleted ids are left out."""
        found: dict[str, Memory] = {}
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            marks = ", ".join("?" * len(chunk))
            rows = self._query(
                f"SELECT {MEMORY_COLUMNS} FROM memories "
                f"WHERE id IN ({marks}) AND deleted_at IS NULL",
                chunk,
            )
            found.update((r["id"], memory_from_row(r)) for r in rows)
        return found

    @locked_write
    def update(self, memory: Memory) -> None:
        """Write back a memory's mutable state (lifecycle fields, tags, links); its access
        count and last access are the access log's and are left as stored."""
        self._recount_if_changed(memory)
        with self.transaction() as conn:
            cur = conn.execute(
                f"UPDATE memories SET ({UPDATE_COLUMNS}) = ({UPDATE_PLACEHOLDERS}) WHERE id = ?",
                (*update_row(memory), memory.id),
            )
            if cur.rowcount == 0:
                raise MemoryNotFound(f"memory {memory.id} does not exist")
        if self._corrections is not None:
            self._corrections.put(memory)

    @locked_write
    def update_many(self, memories: Iterable[Memory]) -> int:
        # Few statements, not two a memory: a daemon's decay sweep updates a hundred at a time
        # beside busy recalls, and each statement gives up the interpreter's lock and waits
        # to get it back (measured: 1.2 s of wall time for 14 ms of work).
        memories = list(memories)  # read twice: the update, then the correction index
        with self.transaction() as conn:
            before = self._stored_states([m.id for m in memories])
            for memory in memories:
                self._recount_if_changed(memory, before.get(memory.id))
                if memory.id in before:  # the same memory twice: the second sees the first
                    before[memory.id] = (memory.realm, memory.content, memory.deleted_at,
                                         " ".join(memory.tags))  # fmt: skip
            conn.executemany(
                f"UPDATE memories SET ({UPDATE_COLUMNS}) = ({UPDATE_PLACEHOLDERS}) WHERE id = ?",
                [(*update_row(m), m.id) for m in memories],
            )
        if self._corrections is not None:
            for memory in memories:
                self._corrections.put(memory)
        return len(memories)

    def _stored_states(self, ids: Sequence[str]) -> dict[str, tuple]:
        """(realm, content, deleted_at, tags) by id, as stored: what the counts know (none
        read when no count is kept)."""
        if self._terms is None and self._links is None:
            return {}
        found: dict[str, tuple] = {}
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            marks = ", ".join("?" * len(chunk))
            found.update((r[0], tuple(r[1:])) for r in self._query(
                "SELECT id, realm, content, deleted_at, tags FROM memories "
                f"WHERE id IN ({marks})", chunk))  # fmt: skip
        return found

    def _recount_if_changed(self, memory: Memory, stored: tuple | None = ()) -> None:
        """Keep the word counts and entity links right when an update changes a memory's
        text or realm, or forgets or restores it; a change of a live memory's tags alone is
        counted as a change of its realm (the keyword search's row table reads its tag
        lengths again, keywords.py). ``stored``: its stored state when already read (None:
        it is not stored)."""
        if self._terms is None and self._links is None:
            return
        if stored == ():
            stored = self._stored_states([memory.id]).get(memory.id)
        if stored is None:
            return
        realm, content, deleted_at, tags = stored
        was_live, is_live = deleted_at is None, memory.deleted_at is None
        if (realm, content, was_live) == (memory.realm, memory.content, is_live):
            if self._terms is not None and is_live and (tags or "") != " ".join(memory.tags):
                self._terms.touch(realm)
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

    @locked_write
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
        if self._themes is not None:
            self._themes.set_alive(memory_id, False)
            if deleted_at is None:  # assigned again: it may have been forgotten when built
                self._themes.add_live([(updated, self.vectors_for([memory_id]).get(memory_id))])
        return updated

    @locked_write
    def purge(self, memory_id: str) -> None:
        """Remove a memory, its vector and its index entries for good.

        The HNSW sidecar goes too when there is one: usearch keeps a removed vector's bytes in
        the graph it saves, so the graphs are rebuilt from the live vectors on next use rather
        than saved with the purged one in them. So do the vectors' sidecar, which holds the
        purged vector (the index still in memory saves a new one, without it, at close), and
        the term statistics' sidecar, which holds the purged memory's words until it is
        saved again.
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
        # The saved vectors hold the purged memory's until saved again: read the store anew.
        vector_sidecar.sidecar_path(self.path).unlink(missing_ok=True)
        if self._vectors is not None:
            self._vectors.saved_as = None
        # The saved word counts hold the purged memory's words until saved again (at close).
        terms_sidecar.sidecar_path(self.path).unlink(missing_ok=True)
        self._terms_saved = {}
        if self._links is not None:
            self._links.remove(memory_id)
        if self._sparse is not None:
            self._sparse.set_alive(memory_id, False)
        if self._themes is not None:
            self._themes.set_alive(memory_id, False)
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
                f"SELECT {MEMORY_COLUMNS} FROM memories {clause} "
                f"{'AND' if clause else 'WHERE'} id > ? ORDER BY id LIMIT ?",
                (*params, last, batch),
            )
            if not rows:
                return
            yield from (memory_from_row(r) for r in rows)
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

    def episode_neighbours(
        self, memory_id: str, span: int, episode: str | None = None
    ) -> list[tuple[str, int]]:
        """Live memories near ``memory_id`` in its episode, with their distance
        (store/portable.py)."""
        return portable.episode_neighbours(self._query, "?", memory_id, span, episode)

    def turns_before(self, memories: Sequence[Memory]) -> dict[str, str]:
        """The turn just before each memory in its episode or session (store/portable.py)."""
        return portable.turns_before(self._query, "?", "json_extract(source, '$.session')",
                                     memories)  # fmt: skip

    def episode_members(self, scope: Scope) -> dict[str, list[str]]:
        """Live memories of ``scope`` by episode, in stored order (store/portable.py)."""
        return portable.episode_members(self._query, "?", scope)

    def session_recent(self, session: str, n: int) -> list[str]:
        """The ``n`` newest live memories whose source names ``session``, newest first."""
        rows = self._query(
            "SELECT id FROM memories WHERE json_extract(source, '$.session') = ? "
            "AND deleted_at IS NULL ORDER BY id DESC LIMIT ?",
            (session, n),
        )
        return [r[0] for r in rows]

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
        return [Episode(**{**dict(r), "source": source_of(r["source"])})
                for r in rows]  # fmt: skip

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
