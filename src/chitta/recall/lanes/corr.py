"""``corr``: the deterministic correction lookup of seed 000 — keyed, not ranked, never fused.

The query's word n-grams are looked up in the store's correction index (keys: a correction's
tags and the identifiers in its text; store/corrections.py). Every current correction in the
scope whose key the query names comes back with the keys that matched, newest first, beside
the ranked hits: no lane ablation, limit or cut applies to them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from chitta.store.corrections import indexed, query_keys
from chitta.store.records import Memory, Scope

if TYPE_CHECKING:
    from chitta.store.base import Store


@dataclass(frozen=True, slots=True)
class CorrectionMatch:
    """A correction the query names, and the keys by which it was found."""

    memory: Memory
    keys: tuple[str, ...]


def lookup_corrections(store: Store, query: str, scope: Scope) -> tuple[CorrectionMatch, ...]:
    """The current corrections in ``scope`` keyed by something ``query`` names, newest first."""
    matched = store.corrections().lookup(query_keys(query), scope)
    if not matched:
        return ()
    memories = store.get_many(sorted(matched))
    return tuple(
        CorrectionMatch(memories[mid], matched[mid])
        for mid in sorted(matched, reverse=True)  # ULIDs sort by creation time
        if mid in memories and indexed(memories[mid])
    )
