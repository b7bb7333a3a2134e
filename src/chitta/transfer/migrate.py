"""Copying everything a store holds into another, exactly: ``chitta migrate SRC DST``.

Every memory (forgotten ones too, every field as stored), its vector and recent access times,
every episode, triplet (invalidated ones too), entity alias, replication and co-access weight,
and the metadata (calibration, the hooks' shown-lists) go from one store to the other through
the :class:`~chitta.store.base.Store` protocol alone, so SQLite and PostgreSQL stores migrate
either way. The model identity goes with them: the destination is bound to the source's model,
and one bound to another model is refused before anything is written.

A run is resumable: each batch is one transaction of the destination, and a record the
destination already holds (by id; an alias by realm and key, a replication by memory and
session, a co-access pair by its two ids) is skipped, not written again. An interrupted run
(kill -9, Ctrl-C, a lost connection) run again with the same arguments continues where it
stopped and ends as one uninterrupted run would. The last step checks that the destination
holds every record of the source and reports what it lacks (docs/migrate.md).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from chitta.config import store_path
from chitta.errors import BadArgument, ModelMismatch, StoreNotEmpty, StoreReadOnly
from chitta.store.backends import is_database_url, open_store
from chitta.store.base import Store
from chitta.store.records import Memory

if TYPE_CHECKING:
    from chitta.embed.base import ModelIdentity

#: Memories read and written per transaction of the destination.
BATCH = 500
#: Metadata that is the backend's own, not the store's content: the schema version each
#: backend keeps for itself, and the model, which the migration binds rather than copies.
PRIVATE_META = frozenset({"schema_version", "model"})
#: The report's tables, in the order they are copied.
TABLES = ("episodes", "memories", "vectors", "pieces", "access_times", "replications",
          "co_access", "triplets", "aliases", "meta")  # fmt: skip

T = TypeVar("T")
Progress = Callable[[int, int], None]


@dataclass(slots=True)
class MigrationReport:
    """What a migration copied, what the destination already held (skipped), and what the
    destination lacks of the source at the end (``missing``: all zero when it holds it all)."""

    source: str
    destination: str
    merged: bool
    model: dict[str, Any] | None = None
    copied: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TABLES, 0))
    skipped: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TABLES, 0))
    missing: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TABLES, 0))

    @property
    def complete(self) -> bool:
        return not any(self.missing.values())

    def as_dict(self) -> dict[str, Any]:
        return {"source": self.source, "destination": self.destination, "merged": self.merged,
                "model": self.model, "copied": dict(self.copied), "skipped": dict(self.skipped),
                "missing": dict(self.missing), "complete": self.complete}  # fmt: skip


def location_of(text: str, home: Path) -> str | Path:
    """A store location as ``chitta migrate`` takes it: a ``postgresql://`` URL; a path (it
    holds a ``/`` or ends in ``.db``); else the name of a store under ``home`` (``--store``'s)."""
    if is_database_url(text):
        return text
    if "/" in text or text.endswith(".db") or text in (".", ".."):
        return Path(text).expanduser().absolute()
    return store_path(home, text)


def same_location(a: str | Path, b: str | Path) -> bool:
    """Whether two locations name one store (the same file under any name, or one URL)."""
    if isinstance(a, Path) and isinstance(b, Path):
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
        return a.resolve() == b.resolve()
    return a == b


def migrate_locations(
    source: str,
    destination: str,
    *,
    home: Path,
    merge: bool = False,
    batch: int = BATCH,
    progress: Progress | None = None,
) -> MigrationReport:
    """Copy the store at ``source`` into the store at ``destination`` (made when missing),
    both opened in this process. :class:`~chitta.errors.StoreMissing` when there is no store
    at ``source``; :class:`~chitta.errors.BadArgument` when both name one store."""
    src_at, dst_at = location_of(source, home), location_of(destination, home)
    if same_location(src_at, dst_at):
        raise BadArgument(f"{source} and {destination} are the same store; name another "
                          "destination")  # fmt: skip
    with (
        open_store(src_at, create=False, home=home) as src,
        open_store(dst_at, create=True, home=home) as dst,
    ):
        return migrate(src, dst, merge=merge, batch=batch, progress=progress)


def migrate(
    src: Store,
    dst: Store,
    *,
    merge: bool = False,
    batch: int = BATCH,
    progress: Progress | None = None,
) -> MigrationReport:
    """Copy everything ``src`` holds into ``dst``, ``batch`` memories per transaction;
    ``progress(done, total)`` after each batch of memories. Refused before anything is written
    when ``dst`` cannot be written (:class:`~chitta.errors.StoreReadOnly`), is bound to another
    model (:class:`~chitta.errors.ModelMismatch`), or holds records ``src`` lacks and ``merge``
    is not given (:class:`~chitta.errors.StoreNotEmpty`)."""
    if batch < 1:
        raise BadArgument(f"batch must be at least 1, got {batch}")
    report = MigrationReport(source=src.location, destination=dst.location, merged=merge)
    if dst.read_only is not None:
        raise StoreReadOnly(f"cannot migrate into {dst.location}: {dst.read_only}")
    identity = _check_model(src, dst)
    if not merge:
        _check_empty(src, dst)
    if identity is not None:
        dst.bind_model(identity)
        report.model = identity.as_dict()
    _copy_episodes(src, dst, report)
    _copy_memories(src, dst, report, batch, progress)
    _copy_triplets(src, dst, report, batch)
    _copy_aliases(src, dst, report)
    _copy_meta(src, dst, report, merge)
    _verify(src, dst, report, batch)
    return report


def _check_model(src: Store, dst: Store) -> ModelIdentity | None:
    """The source's model identity (None: it has none); ModelMismatch when ``dst`` is bound
    to another model."""
    ours, theirs = src.model_identity(), dst.model_identity()
    if ours is not None and theirs is not None and ours != theirs:
        raise ModelMismatch(
            f"{dst.location} was embedded with {theirs.describe()}, but {src.location} with "
            f"{ours.describe()}: a migration copies the vectors as they are; re-embed one of "
            "them with the other's model first (`chitta reembed`), or migrate into a new store"
        )
    return ours


def _check_empty(src: Store, dst: Store) -> None:
    """Refuse a destination holding a memory, episode or triplet the source has not: only
    an empty one, or one an interrupted migration of this source began, is copied into
    without ``merge``."""
    foreign = 0
    for chunk in _chunks((m.id for m in dst.iter_memories(include_deleted=True)), BATCH):
        foreign += len(chunk) - len(src.existing_ids("memories", chunk))
        if foreign:
            break
    if not foreign:
        for table, ids in (("episodes", [e.id for e in dst.episodes()]),
                           ("triplets", [t.id for t in dst.triplets()])):  # fmt: skip
            foreign += len(ids) - len(src.existing_ids(table, ids))
    if foreign:
        raise StoreNotEmpty(
            f"{dst.location} already holds records of its own (memories, episodes or "
            f"triplets {src.location} has not); give --merge to add {src.location}'s to them "
            "(nothing of the destination's is changed), or migrate into a new store"
        )


def _copy_episodes(src: Store, dst: Store, report: MigrationReport) -> None:
    """Episodes first: memories name them."""
    for chunk in _chunks(src.episodes(), BATCH):
        have = dst.existing_ids("episodes", [e.id for e in chunk])
        new = [e for e in chunk if e.id not in have]
        if new:
            dst.add_episodes(new)
        _count(report, "episodes", len(new), len(have))


def _copy_memories(
    src: Store, dst: Store, report: MigrationReport, batch: int, progress: Progress | None
) -> None:
    """Memories in id order, each batch one transaction with its vectors and access times;
    then each batch's replications and the co-access pairs whose both ends are in."""
    counts = src.counts()
    live, forgotten = counts["memories"], counts["forgotten"]
    total = live + forgotten if isinstance(live, int) and isinstance(forgotten, int) else 0
    done = 0
    waiting: list[tuple[str, str, float, int]] = []  # co-access pairs whose later end is not in
    for chunk in _chunks(src.iter_memories(include_deleted=True, batch=batch), batch):
        ids = [m.id for m in chunk]
        have = dst.existing_ids("memories", ids)
        new = [m for m in chunk if m.id not in have]
        if new:
            _insert(src, dst, new, report)
        _count(report, "memories", len(new), len(have))
        _copy_replications(src, dst, ids, report)
        # A pair (a, b) has a < b: with ids in order, b is in this batch or a later one.
        waiting += src.co_access_rows(ids)
        ready = [row for row in waiting if row[1] <= ids[-1]]
        waiting = [row for row in waiting if row[1] > ids[-1]]
        _copy_co_access(dst, ready, report)
        done += len(chunk)
        if progress is not None:
            progress(done, max(total, done))
    _copy_co_access(dst, waiting, report)  # none normally: b is a memory of the source


def _insert(src: Store, dst: Store, memories: list[Memory], report: MigrationReport) -> None:
    ids = [m.id for m in memories]
    vectors = src.vectors_for(ids)
    history = src.access_history(ids)
    times = {i: history[i].times if i in history else () for i in ids}
    dst.insert_exact([(m, vectors.get(m.id), times[m.id]) for m in memories])
    report.copied["vectors"] += len(vectors)
    report.copied["pieces"] += dst.set_pieces(src.pieces_for(ids))
    report.copied["access_times"] += sum(map(len, times.values()))


def _copy_replications(src: Store, dst: Store, ids: list[str], report: MigrationReport) -> None:
    """The sessions that stored these memories again (a memory already there gains those it
    lacks)."""
    theirs = {(mid, session) for mid, session, _ in dst.replications(ids)}
    ours = src.replications(ids)
    for mid, session, at in ours:
        if (mid, session) not in theirs:
            dst.add_replication(mid, session, at)
    new = sum((mid, session) not in theirs for mid, session, _ in ours)
    _count(report, "replications", new, len(ours) - new)


def _copy_co_access(
    dst: Store, rows: list[tuple[str, str, float, int]], report: MigrationReport
) -> None:
    if not rows:
        return
    have = {(a, b) for a, b, _, _ in dst.co_access_rows(sorted({r[0] for r in rows}))}
    new = [r for r in rows if (r[0], r[1]) not in have]
    if new:
        dst.put_co_access(new)
    _count(report, "co_access", len(new), len(rows) - len(new))


def _copy_triplets(src: Store, dst: Store, report: MigrationReport, batch: int) -> None:
    """Triplets after memories: they name the memory that stated them."""
    for chunk in _chunks(src.triplets(), batch):
        have = dst.existing_ids("triplets", [t.id for t in chunk])
        new = [t for t in chunk if t.id not in have]
        if new:
            dst.add_triplets(new)
        _count(report, "triplets", len(new), len(have))


def _copy_aliases(src: Store, dst: Store, report: MigrationReport) -> None:
    """Aliases the destination lacks (by realm and key); one it has keeps its meaning."""
    have = {(a.realm, a.alias_key) for a in dst.aliases()}
    for alias in src.aliases():
        if (alias.realm, alias.alias_key) in have:
            _count(report, "aliases", 0, 1)
            continue
        dst.add_alias(alias.realm, alias.alias, alias.alias_key, alias.canonical_key,
                      alias.created_at)  # fmt: skip
        _count(report, "aliases", 1, 0)


def _copy_meta(src: Store, dst: Store, report: MigrationReport, merge: bool) -> None:
    """The metadata; merging keeps every entry the destination has (its calibration is
    fitted to its own memories), a plain migration makes each one the source's."""
    theirs = dst.meta_items()
    for key, value in src.meta_items().items():
        if key in PRIVATE_META:
            continue
        if theirs.get(key) == value or (merge and key in theirs):
            _count(report, "meta", 0, 1)
            continue
        dst.set_meta(key, value)
        _count(report, "meta", 1, 0)


def _verify(src: Store, dst: Store, report: MigrationReport, batch: int) -> None:
    """Count what the destination lacks of the source, table by table, read back from it."""
    missing = report.missing
    for chunk in _chunks(src.iter_memories(include_deleted=True, batch=batch), batch):
        ids = [m.id for m in chunk]
        missing["memories"] += len(ids) - len(dst.existing_ids("memories", ids))
        missing["vectors"] += len(set(src.vectors_for(ids)) - set(dst.vectors_for(ids)))
        missing["pieces"] += len(set(src.pieces_for(ids)) - set(dst.pieces_for(ids)))
        ours, theirs = src.access_history(ids), dst.access_history(ids)
        missing["access_times"] += sum(
            max(0, len(h.times) - len(theirs[i].times if i in theirs else ()))
            for i, h in ours.items()
        )
        missing["replications"] += len(
            _pairs(src.replications(ids)) - _pairs(dst.replications(ids))
        )
        missing["co_access"] += len(
            _pairs(src.co_access_rows(ids)) - _pairs(dst.co_access_rows(ids))
        )
    for table, records in (("episodes", src.episodes()), ("triplets", src.triplets())):
        for chunk in _chunks((r.id for r in records), BATCH):
            missing[table] += len(chunk) - len(dst.existing_ids(table, chunk))
    theirs_aliases = {(a.realm, a.alias_key) for a in dst.aliases()}
    missing["aliases"] = sum((a.realm, a.alias_key) not in theirs_aliases for a in src.aliases())
    theirs_meta = dst.meta_items()
    missing["meta"] = sum(k not in theirs_meta for k in src.meta_items() if k not in PRIVATE_META)


def _pairs(rows: Iterable[tuple]) -> set[tuple[str, str]]:
    return {(row[0], row[1]) for row in rows}


def _count(report: MigrationReport, table: str, copied: int, skipped: int) -> None:
    report.copied[table] += copied
    report.skipped[table] += skipped


def _chunks(items: Iterable[T], size: int) -> Iterator[list[T]]:
    it = iter(items)
    while chunk := list(islice(it, size)):
        yield chunk
