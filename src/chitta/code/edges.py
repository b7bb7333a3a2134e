"""A repository's resolved edges kept as the realm's triplets (issue 20, part 2), so the
graph lane and ``recall_analogy`` walk ``calls``, ``contains``, ``imports`` and ``inherits``.

Each index that resolves compares the edges with the triplets the code index made of the
repository before (``CodeTables.edge_triplets``, by the edge's keys): an edge still there
keeps its triplet (a second index adds nothing), an edge gone has its triplet invalidated
(kept for history, as every invalidated triplet is), a new edge gets a new triplet. The
triplets have no source memory: they come from the code, not from anything said.

Not one transaction with the triplets: the triplets are written first, the record of them
second, so a crash between the two leaves triplets the next index does not know and adds
again (a duplicate edge, never a missing one).
"""

from __future__ import annotations

from dataclasses import dataclass

from chitta.code.resolve import Resolution
from chitta.code.resolve.triplets import edges_as_triplets
from chitta.store.base import Store
from chitta.store.triplets import entity_key, predicate_key


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
    wanted = {
        (entity_key(t.subject), predicate_key(t.predicate), entity_key(t.object)): t
        for t in edges_as_triplets(resolution, realm, now=now)
    }
    tables = store.code()
    known = tables.edge_triplets(realm, repo)
    gone = sorted(known.keys() - wanted.keys())
    invalidated = 0
    for key in gone:
        triplet = store.triplet(known[key])
        if triplet is not None and triplet.invalidated_at is None:
            store.invalidate_triplet(triplet, now)
            invalidated += 1
    new = {key: t for key, t in wanted.items() if key not in known}
    if new:
        store.add_triplets(list(new.values()))
    tables.set_edge_triplets(realm, repo, {k: t.id for k, t in new.items()}, gone)
    return EdgeSync(added=len(new), kept=len(wanted) - len(new), invalidated=invalidated)
