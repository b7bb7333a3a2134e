"""A resolution's edges as the realm's triplets, so the graph lane and ``recall_analogy`` walk
the call graph: subject and object are the symbols' qualified names, the predicate is the
edge's (``calls``, ``contains``, ``imports``, ``inherits``). A pure conversion: storing them
is the indexer's."""

from __future__ import annotations

from collections.abc import Callable

from chitta.code.resolve import Edge, Resolution
from chitta.store.ids import new_id
from chitta.store.records import Triplet
from chitta.store.triplets import entity_key, predicate_key

#: The longest name a triplet's end may have (relations/names.py's MAX_ENTITY_CHARS): an
#: edge with a longer qualified name is left out rather than cut into another name.
MAX_NAME_CHARS = 200


def edge_key(e: Edge) -> tuple[str, str, str] | None:
    """The (subject, predicate, object) keys an edge's triplet is matched by; None for an
    edge that makes no triplet (a name too long, or one with no key)."""
    if len(e.subject) > MAX_NAME_CHARS or len(e.object) > MAX_NAME_CHARS:
        return None
    key = (entity_key(e.subject), predicate_key(e.predicate), entity_key(e.object))
    return key if key[0] and key[2] else None


def edge_triplet(
    realm: str,
    names: tuple[str, str, str],
    *,
    now: int,
    weight: float = 1.0,
    source_memory: str | None = None,
    ids: Callable[[int], str] = new_id,
) -> Triplet:
    """A current triplet of (subject, predicate, object) names, beginning ``now``."""
    subject, predicate, obj = names
    return Triplet(
        id=ids(now), realm=realm, subject=subject, predicate=predicate, object=obj,
        weight=weight, valid_from=now, invalidated_at=None, source_memory=source_memory,
        created_at=now,
    )  # fmt: skip


def edges_as_triplets(
    resolution: Resolution,
    realm: str,
    *,
    now: int,
    weight: float = 1.0,
    source_memory: str | None = None,
    ids: Callable[[int], str] = new_id,
) -> list[Triplet]:
    """One current triplet per distinct (subject, predicate, object) of the edges, by the
    keys the store matches names by, in the resolution's order; ``now`` is their
    ``valid_from`` and ``created_at``."""
    seen: set[tuple[str, str, str]] = set()
    out: list[Triplet] = []
    for e in resolution.edges:
        key = edge_key(e)
        if key is None or key in seen:
            continue
        seen.add(key)
        out.append(edge_triplet(realm, (e.subject, e.predicate, e.object), now=now,
                                weight=weight, source_memory=source_memory,
                                ids=ids))  # fmt: skip
    return out
