"""The store's interface: what every backend (SQLite, PostgreSQL) offers the rest of chitta.

Nothing outside ``chitta.store`` imports a backend; it opens a store with
:func:`chitta.store.backends.open_store` and talks to it through this protocol only (a layering test
enforces that). Every method takes and returns chitta's own types: plain terms for keyword
search, vectors as numpy arrays, records from ``store/records.py``. A backend's own failures
(``sqlite3.Error``, ``psycopg.Error``, ``OSError``) come out as :class:`chitta.errors.StoreError`
subclasses, never as themselves.

Reads see every write committed before they began, by this process or any other using the
same store: a backend that keeps in-process indexes (the link index, the term statistics, the
correction index, the hdc lane's codes) brings them up to date with the database before it
answers from them.

Times are integer milliseconds since the epoch, UTC. Scores are higher-is-better.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np

    from chitta.embed.base import ModelIdentity
    from chitta.store.access import AccessHistory, AccessRecord
    from chitta.store.assessment import AssessmentReads, AssessmentRequest
    from chitta.store.code import CodeTables
    from chitta.store.corrections import CorrectionIndex
    from chitta.store.links import LinkIndex
    from chitta.store.records import Alias, Episode, Memory, Scope, Triplet
    from chitta.store.terms import TermStats
    from chitta.store.themes import ThemeIndex
    from chitta.store.triplets import Bounded

#: The tables :meth:`Store.existing_ids` answers for.
ID_TABLES = ("memories", "triplets", "episodes")


@runtime_checkable
class Store(Protocol):
    """One chitta store, open in this process."""

    #: What the store is, for people: a file path, or a database URL without its password.
    location: str
    #: The folder for the files that go with the store in this process (the spool, the HNSW
    #: sidecar of SQLite): the store file's folder, or the home for a database.
    data_dir: Path
    #: Why the store cannot be written, when it cannot; None when it can.
    read_only: str | None
    #: Live vectors a realm needs before its vector search uses an approximate index.
    hnsw_min: int

    # --- lifetime ----------------------------------------------------------------------------

    def close(self) -> None:
        """Flush what is buffered and let go of the store; safe to call twice."""

    def __enter__(self) -> Store: ...

    def __exit__(self, *exc: object) -> None: ...

    def write_lock(self) -> AbstractContextManager[None]:
        """Hold off every other writer of the store (in any process) across a read and the
        write it decides."""

    # --- metadata and the model identity (calibration and learner state live here) -----------

    def meta(self, key: str) -> str | None: ...

    def set_meta(self, key: str, value: str) -> None: ...

    def delete_meta(self, key: str) -> None: ...

    def meta_items(self) -> dict[str, str]:
        """Every metadata entry (the migration copies them)."""

    def model_identity(self) -> ModelIdentity | None: ...

    def bind_model(self, identity: ModelIdentity) -> None:
        """Record ``identity`` on a store that has none; raise ``ModelMismatch`` when the
        store was embedded with another model."""

    def replace_model(self, identity: ModelIdentity, vectors: dict[str, np.ndarray]) -> None:
        """Swap every vector and the recorded model in one transaction."""

    # --- memories ----------------------------------------------------------------------------

    def insert(
        self,
        items: Sequence[tuple[Memory, np.ndarray | None]],
        *,
        awaiting_pieces: Collection[str] = (),
    ) -> None:
        """Insert memories (with their vectors, if any) in one transaction; a memory that
        ``supersedes`` another marks it ``superseded_by`` in the same transaction. Those of
        them in ``awaiting_pieces`` are marked as awaiting their pieces in it too (the
        daemon's queue embeds them after the reply, subconscious/embedding.py): a daemon
        killed before it gets there leaves them found by the next (:meth:`awaiting_pieces`);
        :meth:`set_pieces` clears the mark."""

    def exists(self, memory_id: str) -> bool: ...

    def get(self, memory_id: str, *, include_deleted: bool = False) -> Memory:
        """The memory; ``MemoryNotFound`` when it does not exist (or is forgotten)."""

    def get_many(self, ids: Sequence[str]) -> dict[str, Memory]:
        """Live memories by id; missing or forgotten ids are left out."""

    def update(self, memory: Memory) -> None:
        """Write back a memory's mutable state; its access count and last access are left
        as stored (the access log owns them)."""

    def update_many(self, memories: Iterable[Memory]) -> int: ...

    def set_deleted(self, memory_id: str, deleted_at: int | None) -> Memory:
        """Forget (a time) or restore (None) a memory; the memory as now stored."""

    def purge(self, memory_id: str) -> None:
        """Remove a memory and everything derived from it for good."""

    def iter_memories(
        self, *, realm: str | None = None, include_deleted: bool = False, batch: int = 1000
    ) -> Iterator[Memory]:
        """Every memory (of one realm) in id order, read in batches."""

    def vectors_for(self, ids: Sequence[str]) -> dict[str, np.ndarray]: ...

    def unembedded(self, limit: int) -> list[str]:
        """Up to ``limit`` ids of memories (forgotten ones too) stored without a vector,
        oldest first: the embedding queue's backlog (subconscious/embedding.py)."""

    def set_vectors(self, vectors: Mapping[str, np.ndarray]) -> int:
        """Give memories stored without a vector theirs, in one transaction, and the vector
        indexes with them; a memory that has a vector already, or does not exist, is left.
        How many were given one."""

    def set_pieces(self, pieces: Mapping[str, bytes]) -> int:
        """Store memories' pieces' vectors, packed (embed/pieces.py ``pack``), replacing any
        they had, in one transaction; an id no memory has is left. How many were stored."""

    def pieces_for(self, ids: Sequence[str]) -> dict[str, bytes]:
        """The packed pieces' vectors of those of ``ids`` that have pieces, as stored (a
        memory still awaiting its pieces has none)."""

    def drop_pieces(self, ids: Sequence[str]) -> None:
        """Delete the pieces of memories, or their mark (``insert``'s ``awaiting_pieces``)."""

    def awaiting_pieces(self, limit: int) -> list[str]:
        """Up to ``limit`` ids of live memories marked as awaiting their pieces
        (:meth:`insert`) and not yet given them, oldest first."""

    def existing_ids(self, table: str, ids: Sequence[str]) -> set[str]:
        """Which of ``ids`` exist in ``table`` (one of :data:`ID_TABLES`)."""

    def session_recent(self, session: str, n: int) -> list[str]:
        """The ``n`` newest live memories whose source names ``session``, newest first."""

    def episode_neighbours(
        self, memory_id: str, span: int, episode: str | None = None
    ) -> list[tuple[str, int]]:
        """Live memories within ``span`` places of ``memory_id`` in its episode, with their
        distance (1: the turn just before or after), in id order."""

    def turns_before(self, memories: Sequence[Memory]) -> dict[str, str]:
        """For each of ``memories`` in an episode or a session, the id of the live turn (a
        memory of kind ``episode``) stored just before it there — in its episode when it has
        one, else in its session; those with none are left out."""

    def episode_members(self, scope: Scope) -> dict[str, list[str]]:
        """The live memories of ``scope`` that belong to an episode, by episode: each
        episode's ids in the order they were stored. Episodes with no live memory of the
        scope are left out."""

    # --- access history, co-access, replications ---------------------------------------------

    def record_access(self, record: AccessRecord) -> None:
        """Buffer one recall's accesses (written in a later batch)."""

    def flush_access(self) -> int: ...

    def access_stats(self) -> dict[str, int]: ...

    def access_history(self, ids: Sequence[str]) -> dict[str, AccessHistory]: ...

    def co_access(self, ids: Sequence[str]) -> dict[tuple[str, str], float]: ...

    def co_neighbours(self, memory_id: str, limit: int = 10) -> list[tuple[str, float]]: ...

    def co_partners(
        self, ids: Sequence[str], limit: int = 10
    ) -> dict[str, list[tuple[str, float, int]]]:
        """Each of ``ids``'s ``limit`` heaviest co-access partners, (other id, weight, time of
        its latest increment in ms), heaviest first; an id with none maps to []."""
        ...

    def add_replication(self, memory_id: str, session: str, at: int) -> None: ...

    def replication_sessions(self, ids: Sequence[str]) -> dict[str, set[str]]: ...

    # --- vector search (cosine; the store's vectors are unit length) -------------------------

    def vector_count(self) -> int:
        """Live memories with a vector."""

    def vector_search(
        self, vector: np.ndarray, scope: Scope, k: int, *, exact: bool = False
    ) -> list[tuple[str, float]]:
        """The ``k`` live memories of ``scope`` nearest ``vector``: (id, cosine), best first.
        ``exact`` asks for an exhaustive search even where an approximate index exists."""

    def vector_search_among(
        self, vector: np.ndarray, ids: Sequence[str], k: int
    ) -> list[tuple[str, float]]:
        """:meth:`vector_search` over the live memories ``ids`` only, exactly."""

    def vector_search_elsewhere(
        self, vector: np.ndarray, scope: Scope, k: int
    ) -> list[tuple[str, float]]:
        """:meth:`vector_search` over every realm but ``scope``'s (its agent and channel)."""

    def vector_search_is_approximate(self, realm: str) -> bool:
        """Whether :meth:`vector_search` of ``realm`` goes through an approximate index (an
        HNSW graph) now, rather than an exhaustive search."""

    def sparse_search(self, vector: np.ndarray, scope: Scope, k: int) -> list[tuple[str, float]]:
        """The hdc lane: the ``k`` live memories of ``scope`` sharing most sparse features
        with ``vector`` (store/sparse.py)."""

    # --- keyword search (BM25 with each realm's own statistics) ------------------------------

    def keyword_search(
        self, terms: Sequence[str], scope: Scope, limit: int, *, column: str | None = None
    ) -> list[tuple[str, float]]:
        """BM25 over ``scope``: (id, score), best first, equal scores oldest first. Each of
        ``terms`` (plain words) matches as the index matches it (stemmed, accents folded);
        ``column="tags"`` searches the tags alone."""

    def keyword_search_elsewhere(
        self, terms: Sequence[str], scope: Scope, limit: int
    ) -> list[tuple[str, float]]:
        """:meth:`keyword_search` over every other realm, taken as one collection."""

    def keyword_frequencies(self, terms: Sequence[str], realm: str) -> tuple[int, dict[str, int]]:
        """The statistics keyword search scores ``realm`` with: its live memories, and how
        many of them hold each term."""

    def term_matches(self, terms: Sequence[str], ids: Sequence[str]) -> dict[str, set[str]]:
        """Which of ``terms`` each of ``ids`` holds, as keyword search matches them."""

    def term_stats(self) -> TermStats:
        """Word document frequencies per realm over live memories, current."""

    def assessment_reads(self, request: AssessmentRequest) -> AssessmentReads:
        """What a recall's assessment stage needs, in one call: :meth:`vectors_for`,
        :meth:`term_matches` and :meth:`keyword_frequencies` of ``request``, each as those
        answer it (store/assessment.py)."""

    # --- derived indexes, current as of the call ---------------------------------------------

    def warm(self, stop: Callable[[], bool] | None = None) -> dict[str, float]:
        """Build now what a recall would otherwise build at its first use in this process
        (the in-process indexes and statistics it reads), each once and under the locks a
        recall takes, so a recall that comes meanwhile waits for the part it needs and is
        answered from it, never from half of one. No part is begun once ``stop()`` is true.
        The milliseconds each part took, by name."""

    def links(self) -> LinkIndex:
        """Entity postings of live memories per realm."""

    def themes(self) -> ThemeIndex:
        """The themes of live memories with vectors, per realm (the ``theme`` lane)."""

    def themes_built(self) -> ThemeIndex | None:
        """The theme index when a recall has built it (for upkeep), else None: never a
        build."""

    def corrections(self) -> CorrectionIndex:
        """The keyed index of current corrections (the ``corr`` lane)."""

    # --- code intelligence (store/code.py) ---------------------------------------------------

    def code(self) -> CodeTables:
        """The files, symbols, callsites, imports and bases of indexed repositories."""

    # --- the time cue's period ---------------------------------------------------------------

    def scope_oldest(self, scope: Scope) -> int | None: ...

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
        """Live memories of ``scope`` whose time, or whose episode's start, lies in
        ``[start_ms, end_ms)``; only those of ``among`` when given; None when ``limit`` is
        given and the period holds more."""

    def period_keyword_search(
        self,
        terms: Sequence[str],
        scope: Scope,
        start_ms: int,
        end_ms: int,
        limit: int,
        *,
        include_superseded: bool,
    ) -> list[tuple[str, float]]: ...

    # --- triplets and aliases ----------------------------------------------------------------

    def add_triplets(self, triplets: Sequence[Triplet]) -> None: ...

    def triplets(self, realm: str | None = None) -> list[Triplet]: ...

    def triplet(self, triplet_id: str) -> Triplet | None: ...

    def invalidate_triplet(self, triplet: Triplet, at: int) -> None: ...

    def same_current_triplet(
        self, realm: str, subjects: Sequence[str], predicate: str, objects: Sequence[str], at: int
    ) -> Triplet | None:
        """A current edge over ``predicate`` (a key) from any of ``subjects`` to any of
        ``objects`` (entity keys), if one exists."""

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
        """Triplets matching the given keys, current at ``at`` (None: any time)."""

    def triplets_between(
        self, realm: str, subjects: Sequence[str], objects: Sequence[str], at: int, cap: int
    ) -> Bounded: ...

    def triplets_outgoing(
        self, realm: str, subjects: Sequence[str], predicates: Sequence[str], at: int, cap: int
    ) -> Bounded: ...

    def out_predicates(
        self, realm: str, subjects: Sequence[str], at: int, most: int = 50
    ) -> tuple[list[str], bool]: ...

    def entity_known(self, realm: str, keys: Sequence[str]) -> bool: ...

    def triplet_neighbours(
        self, realm: str, names: Iterable[str], cap: int
    ) -> tuple[dict[str, list[tuple[str, float, str | None]]], bool]: ...

    def triplet_hubs(self, realm: str, limit: int) -> dict[str, int]: ...

    def triplets_sourced_by(
        self, memory_ids: Sequence[str], cap: int
    ) -> tuple[dict[str, list[tuple[str, str, float]]], bool]: ...

    def add_alias(
        self, realm: str, alias: str, alias_key: str, canonical_key: str, at: int | None = None
    ) -> None: ...

    def aliases(self, realm: str | None = None) -> list[Alias]: ...

    def remove_alias(self, realm: str, alias_key: str) -> bool: ...

    def canonical(self, realm: str, key: str) -> str:
        """The entity key ``key`` is an alias of (itself when it is none)."""

    def canonical_many(self, realm: str, keys: Iterable[str]) -> dict[str, str]: ...

    def names_of(self, realm: str, key: str) -> tuple[str, ...]:
        """Every key naming the entity ``key`` names (its canonical key and aliases)."""

    # --- episodes ----------------------------------------------------------------------------

    def add_episodes(self, episodes: Sequence[Episode]) -> None: ...

    def episodes(self, realm: str | None = None) -> list[Episode]: ...

    # --- copying a store whole (chitta migrate: transfer/migrate.py) -------------------------

    def insert_exact(
        self, items: Sequence[tuple[Memory, np.ndarray | None, Sequence[int]]]
    ) -> None:
        """Insert memories exactly as given, in one transaction: every field (the access count
        and last access, ``superseded_by``, ``deleted_at``), the vector if any, and the recent
        access times (as :meth:`access_history` reads them). Unlike :meth:`insert` it changes
        no other memory: a copied memory brings its own ``superseded_by``."""

    def replications(self, ids: Sequence[str]) -> list[tuple[str, str, int]]:
        """The replications of ``ids``: (memory id, session, time), in that order."""

    def co_access_rows(self, ids: Sequence[str]) -> list[tuple[str, str, float, int]]:
        """The co-access rows whose first (smaller) id is one of ``ids``: (a, b, weight, time
        of the last change), in that order."""

    def put_co_access(self, rows: Sequence[tuple[str, str, float, int]]) -> None:
        """Set co-access rows (a < b) exactly as given, in one transaction: a pair already
        there takes the given weight and time."""

    # --- figures and maintenance -------------------------------------------------------------

    def counts(self) -> dict[str, object]:
        """Memories per realm and kind, forgotten ones, triplets and episodes."""

    def size_bytes(self) -> int:
        """The store's bytes on disk."""

    def disk_usage(self) -> dict[str, int]:
        """The store's bytes by part: ``memories``, ``embeddings``, ``keywords`` (the keyword
        index) and ``other``, with whatever the backend writes ahead settled first (SQLite's
        write-ahead log folded into the file). For the benchmarks' bytes per memory."""

    def schema_version(self) -> int:
        """The version of the backend's schema the store is at."""

    def integrity_check(self) -> str:
        """``ok``, or what the backend found wrong."""

    def backup_to(self, dest: Path) -> None:
        """A consistent, owner-only copy of the store at ``dest`` (a SQLite file)."""

    def restore_from(self, source: Path) -> Path:
        """Replace the store's contents with a backup; where the old contents were kept."""
