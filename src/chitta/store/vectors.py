"""The in-memory vector index: cosine search over every live vector of a store.

Derived from the ``embeddings`` table and rebuilt from it on open; the store keeps it in
step with writes. Every vector is held in one matrix for exact search; a realm with at
least ``hnsw_min`` live vectors also gets an HNSW graph (store/ann.py), which answers its
searches instead. A scope that narrows the realm by agent or channel is answered from the
graph with oversampling, or exactly when the filter leaves too few rows for that to work.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterable
from itertools import repeat

import numpy as np

from chitta.store.ann import HNSW_MIN_VECTORS, RealmAnn
from chitta.store.records import Memory, Scope

#: A filtered HNSW search asks the graph for this many times the candidates the filter's
#: share of the realm implies, so that ``k`` survive the filter in the usual case.
OVERSAMPLE = 2
#: The graph is asked for this many times the candidates a search wants, and those are
#: ranked by their exact vectors: its float16 vectors can swap two near-equal neighbours
#: (store/ann.py), and the exact ranking of twice as many puts the true ones back.
GRAPH_OVERSAMPLE = 2
#: Above this many graph candidates a filtered search is done exactly instead: a filter
#: that selective leaves few rows, and scoring those rows directly is cheap and certain.
MAX_ANN_CANDIDATES = 2_000
#: The graphs are saved again (at close) once this share of their rows changed since they were
#: last saved or loaded; fewer changes are repaired at each open instead (ann_sidecar.py).
RESAVE_SHARE = 0.05
#: A bulk build of at least this many vectors uses every core. Smaller ones use one: they
#: take milliseconds, and concurrent inserts into a small graph can leave a node poorly
#: linked (seen as rare misses against exact search on a 200-vector graph).
PARALLEL_BUILD_MIN = 10_000


def build_threads(count: int) -> int:
    """usearch's ``threads`` for a bulk insert of ``count`` vectors (0: every core)."""
    return 0 if count >= PARALLEL_BUILD_MIN else 1


class VectorIndex:
    """Unit vectors with their memory ids and scopes; searched by dot product."""

    def __init__(self, dim: int, capacity: int = 1024, *, hnsw_min: int = HNSW_MIN_VECTORS):
        self.dim = dim
        self.hnsw_min = hnsw_min
        self._matrix = np.zeros((capacity, dim), dtype=np.float32)
        self._ids: list[str] = []
        self._row: dict[str, int] = {}
        self._alive = np.zeros(capacity, dtype=bool)
        # Scope axes as small integer codes, so a scope filter is a vector comparison.
        self._realm = np.zeros(capacity, dtype=np.int32)
        self._agent = np.zeros(capacity, dtype=np.int32)
        self._channel = np.zeros(capacity, dtype=np.int32)
        self._codes: dict[str, int] = {}
        self._anns: dict[int, RealmAnn] = {}  # realm code -> its graph
        self._lock = threading.RLock()
        self.dirty = False  # a graph was built since the graphs were last saved or loaded
        self.changes = 0  # rows added to or removed from graphs since then
        # The saved file this index was read from or last written to (a backend's stamp;
        # None: read from the store), and the vectors added, replaced or hidden since.
        self.saved_as: tuple[int, int] | None = None
        self.edits = 0

    @classmethod
    def restored(
        cls,
        matrix: np.ndarray,
        ids: list[str],
        codes: dict[str, int],
        scopes: np.ndarray,
        *,
        hnsw_min: int = HNSW_MIN_VECTORS,
    ) -> VectorIndex:
        """An index of saved live vectors: ``matrix`` (capacity × dim; it may be a writable
        mapping of a file) holds ``ids``' vectors in its first rows, ``scopes`` their (realm,
        agent, channel) codes as three rows, ``codes`` the values they stand for.
        ValueError when an id is given twice (a damaged file)."""
        capacity, dim = matrix.shape
        count = len(ids)
        index = cls(dim, capacity=0, hnsw_min=hnsw_min)
        index._matrix = matrix
        index._ids = list(ids)
        index._row = dict(zip(ids, range(count), strict=True))
        if len(index._row) != count:
            raise ValueError("an id saved twice")
        index._codes = dict(codes)
        index._alive = np.zeros(capacity, dtype=bool)
        index._alive[:count] = True
        for name, values in zip(("_realm", "_agent", "_channel"), scopes, strict=True):
            axis = np.zeros(capacity, dtype=np.int32)
            axis[:count] = values
            setattr(index, name, axis)
        return index

    def saved_form(self) -> tuple[list[str], np.ndarray, dict[str, int], np.ndarray]:
        """What a saved file holds: the live rows' ids, the rows, the scope codes, and the
        rows' (realm, agent, channel) codes as three rows."""
        with self._lock:
            rows = np.flatnonzero(self._alive[: len(self._ids)])
            scopes = np.stack([self._realm[rows], self._agent[rows], self._channel[rows]])
            return [self._ids[r] for r in rows.tolist()], rows, dict(self._codes), scopes

    def __len__(self) -> int:
        return int(self._alive[: len(self._ids)].sum())

    def _code(self, value: str) -> int:
        return self._codes.setdefault(value, len(self._codes) + 1)

    def _grow(self, needed: int) -> None:
        capacity = len(self._alive)
        if needed <= capacity:
            return
        new = max(needed, capacity * 2)
        self._matrix = np.resize(self._matrix, (new, self.dim))
        for name in ("_alive", "_realm", "_agent", "_channel"):
            old = getattr(self, name)
            grown = np.zeros(new, dtype=old.dtype)
            grown[:capacity] = old
            setattr(self, name, grown)

    def add(
        self,
        ids: list[str],
        vectors: np.ndarray,
        scopes: list[tuple[str, str, str]],
        *,
        graphs: bool = True,
    ) -> None:
        """Add (or replace) vectors; ``scopes`` holds (realm, agent_id, channel) per id.

        ``graphs=False`` leaves the HNSW graphs alone (a bulk load that attaches them after).
        """
        with self._lock:
            self.edits += len(ids)
            if len(set(ids)) == len(ids) and self._row.keys().isdisjoint(ids):
                rows = self._append(ids, vectors, scopes)
                if graphs:
                    self._link(rows)
                return
            self._grow(len(self._ids) + len(ids))
            rows = np.empty(len(ids), dtype=np.int64)
            for i, (memory_id, vector, (realm, agent, channel)) in enumerate(
                zip(ids, vectors, scopes, strict=True)
            ):
                row = self._row.get(memory_id)
                if row is None:
                    row = len(self._ids)
                    self._ids.append(memory_id)
                    self._row[memory_id] = row
                elif self._alive[row]:
                    self._unlink(row)  # its realm (and so its graph) may change
                self._matrix[row] = vector
                self._alive[row] = True
                self._realm[row] = self._code(realm)
                self._agent[row] = self._code(agent)
                self._channel[row] = self._code(channel)
                rows[i] = row
            if graphs:
                self._link(rows)

    def _append(
        self, ids: list[str], vectors: np.ndarray, scopes: list[tuple[str, str, str]]
    ) -> np.ndarray:
        """Add ids the index does not hold, all at once (opening a store of 100k reads it in
        chunks, each appended this way); their rows."""
        start, n = len(self._ids), len(ids)
        self._grow(start + n)
        rows = np.arange(start, start + n)
        self._ids.extend(ids)
        self._row.update(zip(ids, range(start, start + n), strict=True))
        self._matrix[start : start + n] = vectors
        self._alive[start : start + n] = True
        columns = list(zip(*scopes, strict=True)) if scopes else [(), (), ()]
        for axis, values in zip((self._realm, self._agent, self._channel), columns, strict=True):
            # Each distinct value coded once, then every row looked up (a million rows
            # hold a handful of realms, agents and channels).
            known = {value: self._code(value) for value in set(values)}
            axis[start : start + n] = np.fromiter(map(known.__getitem__, values),
                                                  dtype=np.int32, count=n)  # fmt: skip
        return rows

    def set_alive(self, memory_id: str, alive: bool) -> None:
        """Hide (soft delete, purge) or show (restore) a vector."""
        with self._lock:
            row = self._row.get(memory_id)
            if row is None or bool(self._alive[row]) == alive:
                return
            self.edits += 1
            if alive:
                self._alive[row] = True
                self._link(np.array([row]))
            else:
                self._unlink(row)
                self._alive[row] = False

    # --- the HNSW graphs -----------------------------------------------------------------------

    def _unlink(self, row: int) -> None:
        ann = self._anns.get(int(self._realm[row]))
        if ann is not None and row in ann:
            ann.remove(np.array([row]))
            self.changes += 1

    def _link(self, rows: np.ndarray) -> None:
        """Put live ``rows`` into their realm's graph, building one when a realm is big enough."""
        realms = self._realm[rows]
        for code in np.unique(realms).tolist():
            ann = self._anns.get(code)
            if ann is None:
                if self.hnsw_min and self._realm_live(code) >= self.hnsw_min:
                    self._anns[code] = self.build_graph(code)
                continue
            mine = rows[realms == code]
            ann.add(mine, self._matrix[mine])
            self.changes += len(mine)

    def needs_save(self) -> bool:
        """Whether the graphs should be saved: one was built, or the changes since the last
        save or load exceed :data:`RESAVE_SHARE` of the graphs' rows."""
        size = sum(len(ann) for ann in self._anns.values())
        return self.dirty or self.changes > RESAVE_SHARE * max(size, 1)

    def _realm_rows(self, code: int) -> np.ndarray:
        n = len(self._ids)
        return np.flatnonzero(self._alive[:n] & (self._realm[:n] == code))

    def _realm_live(self, code: int) -> int:
        n = len(self._ids)
        return int(np.count_nonzero(self._alive[:n] & (self._realm[:n] == code)))

    def build_graph(self, code: int) -> RealmAnn:
        """A new graph over every live vector of the realm with ``code``."""
        rows = self._realm_rows(code)
        ann = RealmAnn(self.dim)
        ann.add(rows, self._matrix[rows], threads=build_threads(rows.size))
        self.dirty = True
        return ann

    def realms_due_a_graph(self) -> dict[str, int]:
        """Realms at or above ``hnsw_min`` live vectors with no graph yet: name -> code."""
        with self._lock:
            if not self.hnsw_min:
                return {}
            return {
                name: code
                for name, code in self._codes.items()
                if code not in self._anns and self._realm_live(code) >= self.hnsw_min
            }

    def attach(self, code: int, ann: RealmAnn) -> None:
        """Use ``ann`` (restored and checked by the caller) as the graph of realm ``code``."""
        with self._lock:
            self._anns[code] = ann

    def graphs(self) -> dict[str, RealmAnn]:
        """The HNSW graphs by realm name."""
        with self._lock:
            return {name: self._anns[code] for name, code in self._codes.items()
                    if code in self._anns}  # fmt: skip

    def has_graph(self, realm: str) -> bool:
        return self._codes.get(realm, 0) in self._anns

    def row_count(self) -> int:
        """Rows in use, hidden ones included (a row's number is below this)."""
        return len(self._ids)

    def id_of(self, row: int) -> str:
        return self._ids[row]

    def row_of(self, memory_id: str) -> int | None:
        return self._row.get(memory_id)

    def rows_of(self, ids: list[str]) -> np.ndarray:
        """The row of each of ``ids``, -1 for one the index does not hold (a million in a
        fifth of a second: the lookups run in C)."""
        return np.fromiter(map(self._row.get, ids, repeat(-1)), dtype=np.int64, count=len(ids))

    def live_rows(self, code: int) -> np.ndarray:
        """Every live row of the realm with ``code``."""
        with self._lock:
            return self._realm_rows(code)

    def vectors_of(self, rows: np.ndarray) -> np.ndarray:
        return self._matrix[rows]

    def row_hashes(self, hash_rows: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """``hash_rows`` applied to every row of the matrix (dead rows included), by row."""
        with self._lock:
            return hash_rows(self._matrix[: len(self._ids)])

    # --- search --------------------------------------------------------------------------------

    def get(self, ids: Iterable[str]) -> dict[str, np.ndarray]:
        """The live vectors of ``ids`` (copies); ids not in the index or hidden are left out."""
        with self._lock:
            rows = {i: r for i in ids if (r := self._row.get(i)) is not None and self._alive[r]}
            return {i: self._matrix[r].copy() for i, r in rows.items()}

    def _mask(self, scope: Scope) -> np.ndarray | None:
        n = len(self._ids)
        realm = self._codes.get(scope.realm)
        if realm is None:
            return None
        mask = self._alive[:n] & (self._realm[:n] == realm)
        for axis, value in ((self._agent, scope.agent_id), (self._channel, scope.channel)):
            if value is not None:
                code = self._codes.get(value)
                if code is None:
                    return None
                mask &= axis[:n] == code
        return mask

    def search(
        self, query: np.ndarray, scope: Scope, k: int, *, exact: bool = False
    ) -> list[tuple[str, float]]:
        """The ``k`` nearest live vectors in ``scope``: (memory id, cosine), best first.

        Through the realm's HNSW graph when it has one, unless ``exact``.
        """
        query = query.astype(np.float32)
        with self._lock:
            if k <= 0:
                return []
            ann = None if exact else self._anns.get(self._codes.get(scope.realm, 0))
            if ann is not None:
                found = self._search_graph(ann, query, scope, k)
                if found is not None:
                    return found
            mask = self._mask(scope)
            if mask is None:
                return []
            rows = np.flatnonzero(mask)
            if rows.size == 0:
                return []
            if rows.size * 4 < len(self._ids):
                # A small share of the rows: gathering them beats scoring every row.
                sims = self._matrix[rows] @ query
            else:
                # Scoring every row and masking beats gathering most of them: one
                # matrix-vector product over contiguous memory.
                sims = (self._matrix[: len(self._ids)] @ query)[rows]
            return self._top(rows, sims, k)

    def search_among(
        self, query: np.ndarray, ids: Iterable[str], k: int
    ) -> list[tuple[str, float]]:
        """The ``k`` nearest live vectors among ``ids`` (exact): (memory id, cosine), best
        first. Ids without a live vector are skipped. The caller has scoped ``ids``."""
        query = query.astype(np.float32)
        with self._lock:
            found = [r for i in ids if (r := self._row.get(i)) is not None and self._alive[r]]
            if k <= 0 or not found:
                return []
            rows = np.unique(np.array(found, dtype=np.int64))
            return self._top(rows, self._matrix[rows] @ query, k)

    def _top(self, rows: np.ndarray, sims: np.ndarray, k: int) -> list[tuple[str, float]]:
        top = np.argpartition(-sims, k - 1)[:k] if rows.size > k else np.arange(rows.size)
        top = top[np.argsort(-sims[top], kind="stable")]
        return [(self._ids[rows[i]], float(sims[i])) for i in top]

    def _search_graph(
        self, ann: RealmAnn, query: np.ndarray, scope: Scope, k: int
    ) -> list[tuple[str, float]] | None:
        """The graph's answer, or None when exact search must answer (a selective filter,
        or fewer results than the scope holds). The graph finds :data:`GRAPH_OVERSAMPLE`
        times the candidates; their cosines come from the exact vectors (the graph's are
        float16), so a score is the same whichever way it was found."""
        if scope.agent_id is None and scope.channel is None:
            rows = ann.search(query, GRAPH_OVERSAMPLE * k)
            if rows.size < min(k, len(ann)):
                return None
            return self._top(rows, self._matrix[rows] @ query, k)
        mask = self._mask(scope)
        if mask is None:
            return []
        matching = int(np.count_nonzero(mask))
        if matching == 0:
            return []
        want = math.ceil(k * GRAPH_OVERSAMPLE * OVERSAMPLE * len(ann) / matching)
        if want > MAX_ANN_CANDIDATES:
            return None
        rows = ann.search(query, want)
        rows = rows[mask[rows]]
        if rows.size < min(k, matching):
            return None  # the filter ate too many: let exact search find them all
        return self._top(rows, self._matrix[rows] @ query, k)

    def search_other_realms(
        self, query: np.ndarray, scope: Scope, k: int
    ) -> list[tuple[str, float]]:
        """The ``k`` nearest live vectors in every realm but ``scope``'s, under its agent and
        channel (the ``xr`` lane): one product over the matrix, however many realms."""
        with self._lock:
            n = len(self._ids)
            mask = self._alive[:n] & (self._realm[:n] != self._codes.get(scope.realm, 0))
            for axis, value in ((self._agent, scope.agent_id), (self._channel, scope.channel)):
                if value is not None:
                    mask &= axis[:n] == self._codes.get(value, -1)
            rows = np.flatnonzero(mask)
            if rows.size == 0 or k <= 0:
                return []
            sims = (self._matrix[:n] @ query.astype(np.float32))[rows]
            return self._top(rows, sims, k)


def live_vectors(
    items: Iterable[tuple[Memory, np.ndarray | None]],
) -> tuple[list[str], np.ndarray, list[tuple[str, str, str]]] | None:
    """The memories of ``items`` that have a vector and are not forgotten, as an index adds
    them: their ids, their vectors stacked, their (realm, agent, channel); None if none."""
    live = [(m, v) for m, v in items if v is not None and m.deleted_at is None]
    if not live:
        return None
    return (
        [m.id for m, _ in live],
        np.stack([v for _, v in live]),
        [(m.realm, m.agent_id, m.channel) for m, _ in live],
    )
