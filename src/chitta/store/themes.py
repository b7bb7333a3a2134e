"""Themes: live memories grouped by what they are about, per realm (seed 001, Theme System).

Seed 001 (after the xMemory paper) assigns each memory to a theme by

    score = semantic_weight × cosine + sparsity_weight × sparsity,
    sparsity = 1 / (1 + exp(2 × (theme_size / ideal_size − 1))),

so a memory joins the theme it is most like unless that theme is already large: sparsity is
0.88 for an empty theme, 0.5 at the ideal size and 0.12 at twice it. A theme's centroid is the
normalised sum of its members' unit vectors. A memory opens a theme of its own when no
theme scores better than an empty one credited with the cosine :data:`OPEN_COSINE`.

Maintenance is incremental and bounded on every write, as the seed asks ("splits, merges, and
reassigns as needed"):

- **assign**: one product of the memory's vector with the realm's centroids;
- **split**: a theme that reaches :data:`SPLIT_AT` × the ideal size is cut in two by
  spherical 2-means over its members (at most ~2 × ideal vectors);
- **merge**: a theme that changed is merged into its nearest theme when their centroids'
  cosine is at least :data:`MERGE_COSINE` and the two together are no larger than ideal;
- **reassign**: each write re-examines the next :data:`REASSIGN` memories of its realm in
  turn and moves one whose best other theme scores :data:`REASSIGN_MARGIN` more than its
  own (centroids drift as themes grow; the margin keeps a memory from moving back and forth).

Like the vector and sparse indexes, themes are derived from the vectors in the store, built
on first use and kept in step with writes by the store; nothing of them is written to the
file. A build takes the live memories oldest first, so one store always gives the same
themes. Members' vectors are kept here as float16 (768 bytes a memory at 384 dimensions):
splits, reassignment and the lane's second stage read them without a trip to the store.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from chitta.store.records import Memory, Scope
from chitta.store.vectors import live_vectors

#: The seed's two weights of the assignment score; the seed does not publish values. Cosine
#: decides, size tips: the sparsity's swing from an empty theme to an ideal one (0.38) is
#: worth a cosine of 0.095 at these weights.
SEMANTIC_WEIGHT = 0.8
SPARSITY_WEIGHT = 0.2
#: The size a theme should have (the seed's ``ideal_size``): about one conversation topic's
#: turns, so the lane's second stage reads a few themes' memories, not a realm's.
IDEAL_SIZE = 12
#: The cosine an empty theme is credited with: a memory less like every theme than this
#: (after the size penalty) opens its own. MiniLM puts turns of one topic at 0.3-0.6 from
#: their centroid and unrelated ones under 0.2.
OPEN_COSINE = 0.35
#: A theme this many times the ideal size is split in two.
SPLIT_AT = 2
#: Two themes whose centroids are this alike, together no larger than ideal, become one.
MERGE_COSINE = 0.75
#: Memories re-examined per write, and how much better another theme must score to move one.
REASSIGN = 4
REASSIGN_MARGIN = 0.02
#: Memories a first build scores against the centroids with one matrix product.
BUILD_BATCH = 512
#: Rounds of spherical 2-means in a split.
SPLIT_ROUNDS = 5


def sparsity(size: np.ndarray | float, ideal: int = IDEAL_SIZE) -> np.ndarray | float:
    """Seed 001's sparsity: 1 / (1 + exp(2 × (size / ideal − 1)))."""
    return 1.0 / (1.0 + np.exp(2.0 * (np.asarray(size, dtype=np.float64) / ideal - 1.0)))


@dataclass
class _Realm:
    """One realm's themes: slot-indexed sums, unit centroids, sizes and members."""

    dim: int
    sums: np.ndarray = field(init=False)
    unit: np.ndarray = field(init=False)
    sizes: np.ndarray = field(init=False)
    members: dict[int, set[int]] = field(default_factory=dict)
    free: list[int] = field(default_factory=list)
    rows: list[int] = field(default_factory=list)  # every row ever added, for the cursor
    cursor: int = 0

    def __post_init__(self) -> None:
        self.sums = np.zeros((0, self.dim), dtype=np.float64)
        self.unit = np.zeros((0, self.dim), dtype=np.float32)
        self.sizes = np.zeros(0, dtype=np.int64)

    def open_slot(self) -> int:
        if self.free:
            return self.free.pop()
        slot = len(self.sizes)
        if slot == len(self.sums):  # grow by doubling: amortised O(1) per theme
            cap = max(8, 2 * slot)
            self.sums = _grown(self.sums, cap)
            self.unit = _grown(self.unit, cap)
        self.sizes = np.append(self.sizes, 0)
        return slot

    def scores(self, vector: np.ndarray, ideal: int) -> np.ndarray:
        """The assignment score of ``vector`` with every slot (-inf for empty slots)."""
        n = len(self.sizes)
        cos = self.unit[:n] @ vector
        out = SEMANTIC_WEIGHT * cos + SPARSITY_WEIGHT * sparsity(self.sizes, ideal)
        out[self.sizes == 0] = -np.inf
        return out

    def refresh(self, slot: int) -> None:
        norm = float(np.linalg.norm(self.sums[slot]))
        self.unit[slot] = self.sums[slot] / norm if norm > 0 and self.sizes[slot] else 0.0


def _grown(array: np.ndarray, cap: int) -> np.ndarray:
    out = np.zeros((cap, array.shape[1]), dtype=array.dtype)
    out[: len(array)] = array
    return out


class ThemeIndex:
    """Live memories' themes, per realm, kept in step with writes (module docstring)."""

    def __init__(self, dim: int, *, ideal: int | None = None) -> None:
        ideal = IDEAL_SIZE if ideal is None else ideal
        if ideal < 2:
            raise ValueError("a theme's ideal size must be at least 2")
        self.dim, self.ideal = dim, ideal
        self._ids: list[str] = []
        self._row: dict[str, int] = {}
        self._scope: list[tuple[str, str, str]] = []
        self._theme: list[int] = []  # slot of the row's theme in its realm; -1: none (dead)
        self._vectors = np.zeros((0, dim), dtype=np.float16)
        self._realms: dict[str, _Realm] = {}
        self._lock = threading.RLock()

    # --- writes --------------------------------------------------------------------------

    def add(self, ids: list[str], vectors: np.ndarray, scopes: list[tuple[str, str, str]]) -> None:
        """Assign (or re-assign) memories; ``scopes`` holds (realm, agent, channel)."""
        vectors = np.asarray(vectors, dtype=np.float32).reshape(len(ids), self.dim)
        with self._lock:
            for memory_id, vector, scope in zip(ids, vectors, scopes, strict=True):
                row = self._row.get(memory_id)
                if row is None:
                    row = self._new_row(memory_id, scope)
                else:
                    self._leave(row)
                    if scope[0] != self._scope[row][0]:
                        self._realm(scope[0]).rows.append(row)
                    self._scope[row] = scope
                norm = float(np.linalg.norm(vector))
                self._vectors[row] = vector / norm if norm > 0 else vector
                self._assign(row)

    def build(
        self, ids: list[str], vectors: np.ndarray, scopes: list[tuple[str, str, str]]
    ) -> None:
        """Assign many new memories at once (a first build): as :meth:`add` would, but each
        batch of :data:`BUILD_BATCH` is scored against the centroids as the batch began (one
        matrix product; themes opened within the batch are scored afresh), and reassignment
        and merging run once over everything at the end rather than per memory."""
        vectors = np.asarray(vectors, dtype=np.float32).reshape(len(ids), self.dim)
        with self._lock:
            fresh = [i for i, memory_id in enumerate(ids) if memory_id not in self._row]
            if len(fresh) < len(ids):  # re-adds take the incremental path
                again = [i for i in range(len(ids)) if ids[i] in self._row]
                self.add([ids[i] for i in again], vectors[again], [scopes[i] for i in again])
            by_realm: dict[str, list[int]] = {}
            for i in fresh:
                norm = float(np.linalg.norm(vectors[i]))
                row = self._new_row(ids[i], scopes[i])
                self._vectors[row] = vectors[i] / norm if norm > 0 else vectors[i]
                by_realm.setdefault(scopes[i][0], []).append(row)
            for realm, rows in by_realm.items():
                state = self._realms[realm]
                for start in range(0, len(rows), BUILD_BATCH):
                    self._assign_batch(state, rows[start : start + BUILD_BATCH])
                self._settle(state, rows)

    def add_live(self, items: Sequence[tuple[Memory, np.ndarray | None]]) -> None:
        """Assign the memories of ``items`` that have a vector and are not forgotten."""
        live = live_vectors(items)
        if live is not None:
            self.add(*live)

    def set_alive(self, memory_id: str, alive: bool) -> None:
        """Take a memory out of its theme (soft delete, purge). Restoring one is an
        :meth:`add` (its vector is read again: the index may have been built without it)."""
        if alive:
            return
        with self._lock:
            row = self._row.get(memory_id)
            if row is not None:
                self._leave(row)

    # --- reads ---------------------------------------------------------------------------

    def theme_of(self, memory_id: str) -> int | None:
        """The theme (a slot number within the memory's realm) of a live memory, or None."""
        with self._lock:
            row = self._row.get(memory_id)
            return None if row is None or self._theme[row] < 0 else self._theme[row]

    def sizes(self, realm: str) -> list[int]:
        """The sizes of ``realm``'s themes, largest first."""
        with self._lock:
            state = self._realms.get(realm)
            sizes = [] if state is None else [int(s) for s in state.sizes if s > 0]
            return sorted(sizes, reverse=True)

    def members(self, realm: str) -> list[list[str]]:
        """``realm``'s themes as lists of memory ids (each in insertion order)."""
        with self._lock:
            state = self._realms.get(realm)
            if state is None:
                return []
            return [[self._ids[r] for r in sorted(rows)] for rows in state.members.values() if rows]

    def search(
        self,
        query: np.ndarray,
        scope: Scope,
        k: int,
        *,
        themes: int,
        diversity: float,
        theme_weight: float,
    ) -> list[tuple[str, float]]:
        """Two-stage retrieval: the ``themes`` themes of ``scope``'s realm that match the
        query, picked for breadth by maximal marginal relevance (Carbonell & Goldstein 1998:
        ``(1 − diversity) × cosine with the query − diversity × highest cosine with a theme
        already picked``); then their live memories in ``scope``, each scored by its own
        cosine plus ``theme_weight`` × its theme's. The ``k`` best, best first."""
        if k <= 0 or themes <= 0:
            return []
        query = np.asarray(query, dtype=np.float32)
        with self._lock:
            state = self._realms.get(scope.realm)
            if state is None:
                return []
            live = np.flatnonzero(state.sizes > 0)
            if len(live) == 0:
                return []
            centroids = state.unit[live]
            relevance = centroids @ query
            picked = _diverse(relevance, centroids, themes, diversity)
            rows = [r for t in picked for r in state.members[int(live[t])]]
            rows = [r for r in rows if self._visible(r, scope)]
            if not rows:
                return []
            bonus = {int(live[t]): float(relevance[t]) for t in picked}
            cos = self._vectors[rows].astype(np.float32) @ query
            scored = [(self._ids[r], float(c) + theme_weight * bonus[self._theme[r]])
                      for r, c in zip(rows, cos.tolist(), strict=True)]  # fmt: skip
        scored.sort(key=lambda item: (-item[1], item[0]))
        return scored[:k]

    # --- upkeep --------------------------------------------------------------------------

    def __len__(self) -> int:
        with self._lock:
            return len(self._ids)

    def settle(self, rows: int) -> int:
        """Re-examine up to ``rows`` memories, shared among the realms by their size, each
        moved when another theme now fits it better (what every write does for the next
        :data:`REASSIGN`; the daemon's upkeep does more of it while it is quiet). How many
        were examined."""
        with self._lock:
            total = sum(len(s.rows) for s in self._realms.values())
            done = 0
            for state in self._realms.values():
                share = min(len(state.rows), -(-rows * len(state.rows) // max(total, 1)))
                self._reassign(state, share)
                done += share
            return done

    def _realm(self, realm: str) -> _Realm:
        state = self._realms.get(realm)
        if state is None:
            state = self._realms[realm] = _Realm(self.dim)
        return state

    def _new_row(self, memory_id: str, scope: tuple[str, str, str]) -> int:
        row = len(self._ids)
        if row == len(self._vectors):
            self._vectors = _grown(self._vectors, max(64, 2 * row))
        self._ids.append(memory_id)
        self._row[memory_id] = row
        self._scope.append(scope)
        self._theme.append(-1)
        self._realm(scope[0]).rows.append(row)
        return row

    def _visible(self, row: int, scope: Scope) -> bool:
        _, agent, channel = self._scope[row]
        return (scope.agent_id is None or agent == scope.agent_id) and (
            scope.channel is None or channel == scope.channel
        )

    def _assign(self, row: int) -> None:
        """Put a themeless row in its best theme (or a new one), then tidy (bounded)."""
        state = self._realm(self._scope[row][0])
        vector = self._vectors[row].astype(np.float32)
        scores = state.scores(vector, self.ideal)
        opened = SEMANTIC_WEIGHT * OPEN_COSINE + SPARSITY_WEIGHT * float(sparsity(0, self.ideal))
        if len(scores) and float(scores.max()) >= opened:
            slot = int(np.argmax(scores))
        else:
            slot = state.open_slot()
        self._join(state, slot, row)
        self._tidy(state, slot)
        self._reassign(state)

    def _tidy(self, state: _Realm, slot: int) -> list[int]:
        """Split a theme grown to the split size (and its parts, while one is still that
        large), else merge it if small and alike; returns the slots splits opened."""
        if state.sizes[slot] < SPLIT_AT * self.ideal:
            self._merge(state, slot)
            return []
        new = self._split(state, slot)
        if new is None:
            return []
        return [new, *self._tidy_large(state, slot), *self._tidy_large(state, new)]

    def _tidy_large(self, state: _Realm, slot: int) -> list[int]:
        return self._tidy(state, slot) if state.sizes[slot] >= SPLIT_AT * self.ideal else []

    def _assign_batch(self, state: _Realm, rows: list[int]) -> None:
        x = self._vectors[rows].astype(np.float32)
        known = len(state.sizes)
        cos_known = x @ state.unit[:known].T  # (batch, themes at the batch's start)
        opened = SEMANTIC_WEIGHT * OPEN_COSINE + SPARSITY_WEIGHT * float(sparsity(0, self.ideal))
        for i, row in enumerate(rows):
            n = len(state.sizes)
            cos = np.empty(n, dtype=np.float32)
            cos[:known] = cos_known[i]
            if n > known:
                cos[known:] = state.unit[known:n] @ x[i]
            scores = SEMANTIC_WEIGHT * cos + SPARSITY_WEIGHT * sparsity(state.sizes, self.ideal)
            scores[state.sizes == 0] = -np.inf
            changed = []  # slots whose cosines as the batch began no longer hold
            if n and float(scores.max()) >= opened:
                slot = int(np.argmax(scores))
            else:
                slot = state.open_slot()
                changed.append(slot)  # a free slot reused: it was empty then
            self._join(state, slot, row)
            if state.sizes[slot] >= SPLIT_AT * self.ideal:
                changed += [slot, *self._tidy(state, slot)]
            for s in changed:
                if s < known:
                    cos_known[:, s] = x @ state.unit[s]

    def _settle(self, state: _Realm, rows: list[int]) -> None:
        """One reassignment pass over ``rows`` (in batches), then merge what changed."""
        touched: set[int] = set()
        for start in range(0, len(rows), BUILD_BATCH):
            batch = [r for r in rows[start : start + BUILD_BATCH] if self._theme[r] >= 0]
            if not batch:
                continue
            x = self._vectors[batch].astype(np.float32)
            n = len(state.sizes)
            scores = SEMANTIC_WEIGHT * (x @ state.unit[:n].T) + SPARSITY_WEIGHT * sparsity(
                state.sizes, self.ideal
            )
            scores[:, state.sizes == 0] = -np.inf
            for i, row in enumerate(batch):
                slot = self._theme[row]
                if state.sizes[slot] <= 1:
                    continue
                own = self._own_score(state, slot, x[i])
                scores[i, slot] = -np.inf
                best = int(np.argmax(scores[i]))
                if float(scores[i, best]) > own + REASSIGN_MARGIN and state.sizes[best] > 0:
                    self._move(state, row, best)
                    touched.update((slot, best))
        for slot in sorted(touched):
            if state.sizes[slot] > 0:
                self._tidy(state, slot)

    def _join(self, state: _Realm, slot: int, row: int) -> None:
        state.sums[slot] += self._vectors[row].astype(np.float64)
        state.sizes[slot] += 1
        state.members.setdefault(slot, set()).add(row)
        self._theme[row] = slot
        state.refresh(slot)

    def _leave(self, row: int, *, tidy: bool = True) -> None:
        slot = self._theme[row]
        if slot < 0:
            return
        state = self._realm(self._scope[row][0])
        state.sums[slot] -= self._vectors[row].astype(np.float64)
        state.sizes[slot] -= 1
        state.members[slot].discard(row)
        self._theme[row] = -1
        if state.sizes[slot] == 0:
            state.sums[slot] = 0.0
            del state.members[slot]
            state.free.append(slot)
        state.refresh(slot)
        if tidy and state.sizes[slot] > 0:
            self._merge(state, slot)

    def _move(self, state: _Realm, row: int, slot: int) -> None:
        self._leave(row, tidy=False)
        self._join(state, slot, row)

    def _split(self, state: _Realm, slot: int) -> int | None:
        """Cut a theme in two by spherical 2-means, seeded by its least typical member and
        the member least like that one (deterministic); returns the new theme's slot."""
        rows = sorted(state.members[slot])
        x = self._vectors[rows].astype(np.float32)
        first = int(np.argmin(x @ state.unit[slot]))
        second = int(np.argmin(x @ x[first]))
        means = x[[first, second]]
        side = np.zeros(len(rows), dtype=bool)
        for _ in range(SPLIT_ROUNDS):
            side = (x @ means[1]) > (x @ means[0])
            if side.all() or not side.any():
                return None  # the members do not divide: keep the theme whole
            for s in (0, 1):
                total = x[side == bool(s)].sum(axis=0)
                means[s] = total / max(float(np.linalg.norm(total)), 1e-12)
        new = state.open_slot()
        for row, moved in zip(rows, side.tolist(), strict=True):
            if moved:
                self._move(state, row, new)
        return new

    def _merge(self, state: _Realm, slot: int) -> None:
        """Merge ``slot`` with its nearest theme when alike enough and small enough together."""
        size = state.sizes[slot]
        if size == 0 or size >= self.ideal:
            return
        n = len(state.sizes)
        cos = state.unit[:n] @ state.unit[slot]
        fits = (state.sizes > 0) & (state.sizes + size <= self.ideal)
        fits[slot] = False
        cos[~fits] = -np.inf
        other = int(np.argmax(cos))
        if not math.isfinite(float(cos[other])) or cos[other] < MERGE_COSINE:
            return
        # The smaller theme moves (fewer updates); equal sizes: the later slot moves.
        keep, gone = (other, slot) if state.sizes[other] > size or (
            state.sizes[other] == size and other < slot) else (slot, other)  # fmt: skip
        for row in sorted(state.members[gone]):
            self._move(state, row, keep)

    def _own_score(self, state: _Realm, slot: int, vector: np.ndarray) -> float:
        """The score of a member with its own theme, as if it were not yet in it."""
        without = state.sums[slot] - vector
        norm = float(np.linalg.norm(without))
        cos = float(without @ vector) / norm if norm > 0 else 0.0
        size = state.sizes[slot] - 1
        return SEMANTIC_WEIGHT * cos + SPARSITY_WEIGHT * float(sparsity(size, self.ideal))

    def _reassign(self, state: _Realm, count: int = REASSIGN) -> None:
        """Re-examine the next ``count`` rows of the realm; move one that another theme now
        fits better by more than the margin."""
        if len(state.rows) < 2:
            return
        for _ in range(min(count, len(state.rows))):
            row = state.rows[state.cursor % len(state.rows)]
            state.cursor = (state.cursor + 1) % len(state.rows)
            slot = self._theme[row]
            if slot < 0 or self._realms[self._scope[row][0]] is not state:
                continue  # forgotten, or moved to another realm (its slot is not this realm's)
            if state.sizes[slot] <= 1:
                continue  # alone in its theme: nowhere better to be that it could leave
            vector = self._vectors[row].astype(np.float32)
            scores = state.scores(vector, self.ideal)
            own = self._own_score(state, slot, vector)
            scores[slot] = -np.inf
            best = int(np.argmax(scores))
            if float(scores[best]) > own + REASSIGN_MARGIN:
                self._move(state, row, best)
                self._tidy(state, best)


def _diverse(relevance: np.ndarray, centroids: np.ndarray, n: int, diversity: float) -> list[int]:
    """Up to ``n`` indexes of themes with a positive cosine, by maximal marginal relevance."""
    candidates = [int(i) for i in np.flatnonzero(relevance > 0)]
    if not candidates:
        return []
    picked: list[int] = []
    closest = np.full(len(relevance), -np.inf)
    while candidates and len(picked) < n:
        gain = [(1 - diversity) * relevance[i] - diversity * max(closest[i], 0.0)
                if picked else relevance[i] for i in candidates]  # fmt: skip
        best = candidates.pop(int(np.argmax(gain)))
        picked.append(best)
        closest = np.maximum(closest, centroids @ centroids[best])
    return picked
