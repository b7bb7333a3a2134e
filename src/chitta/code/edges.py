"""A repository's resolved edges kept as the realm's triplets (issue 20, part 2), so the
graph lane and ``recall_analogy`` walk ``calls``, ``contains``, ``imports`` and ``inherits``.

Each index that resolves compares the edges with the triplets the code index made of the
repository before (``CodeTables.edge_triplets``, by the edge's keys): an edge still there
keeps its triplet (a second index adds nothing), an edge gone has its triplet invalidated
(kept for history, as every invalidated triplet is), a new edge gets a new triplet. The
triplets have no source memory: they come from the code, not from anything said.

A re-index of some files (code/reindex.py) does the same for what it changed, without the
whole repository's edges: :func:`sync_file_edges` compares the edges written in the files
it resolved again, before and after (each file's edges are its *pieces*, kept with the
repository's extracts): a new edge gets a triplet if it has none, and an edge gone has its
triplet invalidated unless another file still writes it.

Not one transaction with the triplets: the triplets are written first, the record of them
second, so a crash between the two leaves triplets the next index does not know and adds
again (a duplicate edge, never a missing one).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from chitta.code.resolve import Resolution
from chitta.code.resolve.triplets import edge_key, edge_triplet
from chitta.store.base import Store
from chitta.store.code import EdgeKey

#: One file's edges as triplets would have them: the keys → the names (subject, predicate,
#: object) of the first edge written with them.
Pieces = dict[EdgeKey, tuple[str, str, str]]


@dataclass(frozen=True, slots=True)
class EdgeSync:
    """What keeping a repository's edges as triplets did."""

    added: int
    kept: int
    invalidated: int

    def as_dict(self) -> dict[str, int]:
        return {"added": self.added, "kept": self.kept, "invalidated": self.invalidated}


def store_edges(
    store: Store, realm: str, repo: str, resolution: Resolution, *, now: int
) -> EdgeSync:
    """Make the realm's current triplets of ``repo``'s edges those of ``resolution`` (the
    whole repository's), as the module docstring says; ``now`` is when new triplets begin
    and gone ones end."""
    wanted: Pieces = {}
    for e in resolution.edges:
        key = edge_key(e)
        if key is not None:
            wanted.setdefault(key, (e.subject, e.predicate, e.object))
    known = store.code().edge_triplets(realm, repo)
    return _apply(store, realm, repo, known, wanted, sorted(known.keys() - wanted.keys()), now)


def _apply(store: Store, realm: str, repo: str, known: Mapping[EdgeKey, str], wanted: Pieces,
           gone: Sequence[EdgeKey], now: int) -> EdgeSync:  # fmt: skip
    """End the current triplets of the edges ``gone`` (those ``known`` has: key → triplet
    id), add a triplet for each ``wanted`` edge ``known`` has not, and record both."""
    dropped = [k for k in gone if k in known]
    invalidated = 0
    for key in dropped:
        triplet = store.triplet(known[key])
        if triplet is not None and triplet.invalidated_at is None:
            store.invalidate_triplet(triplet, now)
            invalidated += 1
    new = {k: edge_triplet(realm, names, now=now) for k, names in wanted.items()
           if k not in known}  # fmt: skip
    if new:
        store.add_triplets(list(new.values()))
    store.code().set_edge_triplets(realm, repo, {k: t.id for k, t in new.items()}, dropped)
    return EdgeSync(added=len(new), kept=len(wanted) - len(new), invalidated=invalidated)


def edge_pieces(resolution: Resolution) -> dict[str, Pieces]:
    """Each file's edges of ``resolution`` (by the file each is written in), as triplets."""
    out: dict[str, Pieces] = {}
    for e in resolution.edges:
        key = edge_key(e)
        if key is not None:
            out.setdefault(e.path, {}).setdefault(key, (e.subject, e.predicate, e.object))
    return out


def sync_file_edges(
    store: Store,
    realm: str,
    repo: str,
    before: Mapping[str, Pieces],
    after: Mapping[str, Pieces],
    elsewhere: Callable[[EdgeKey], bool],
    *,
    now: int,
) -> EdgeSync:
    """Keep the realm's triplets of ``repo`` in step with the edges of some files, which were
    ``before`` and are ``after`` (by path, the same paths; a file gone has none after):
    ``elsewhere(key)`` says whether a file not among them writes that edge still."""
    wanted: Pieces = {}
    for path in sorted(after):
        for key, names in after[path].items():
            wanted.setdefault(key, names)
    were = {key for pieces in before.values() for key in pieces}
    gone = sorted(k for k in were - wanted.keys() if not elsewhere(k))
    known = store.code().edge_triplets(realm, repo, subjects=[k[0] for k in (*wanted, *gone)])
    return _apply(store, realm, repo, known, wanted, gone, now)
