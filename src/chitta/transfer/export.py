"""Writing a store (or one realm) as JSONL."""

from __future__ import annotations

import json
from typing import IO

from chitta.api import Chitta
from chitta.store.base import Store
from chitta.store.records import Memory
from chitta.transfer.codec import (
    FORMAT,
    FORMAT_VERSION,
    alias_to_dict,
    episode_to_dict,
    memory_to_dict,
    triplet_to_dict,
)
from chitta.validate import check_scope_name, format_time

#: Memories read (and, with vectors, looked up) per round trip to the store.
BATCH = 256


def export_jsonl(
    chitta: Chitta,
    out: IO[str],
    *,
    realm: str | None = None,
    embeddings: bool = False,
    include_deleted: bool = False,
) -> dict[str, int]:
    """Write the store (or one realm) as JSONL; returns counts per record type."""
    if realm is not None:
        check_scope_name(realm, "realm")
    store = chitta.store
    identity = store.model_identity()
    header = {
        "type": FORMAT,
        "version": FORMAT_VERSION,
        "realm": realm,
        "model": None if identity is None else identity.as_dict(),
        "exported_at": format_time(chitta.clock()),
    }
    out.write(json.dumps(header) + "\n")
    counts = {"episodes": 0, "memories": 0, "triplets": 0, "aliases": 0}
    for e in store.episodes(realm):
        out.write(json.dumps(episode_to_dict(e)) + "\n")
        counts["episodes"] += 1
    batch: list[Memory] = []
    for m in store.iter_memories(realm=realm, include_deleted=include_deleted):
        batch.append(m)
        if len(batch) >= BATCH:
            counts["memories"] += _write_memories(store, batch, out, embeddings)
            batch = []
    counts["memories"] += _write_memories(store, batch, out, embeddings)
    for t in store.triplets(realm):
        out.write(json.dumps(triplet_to_dict(t)) + "\n")
        counts["triplets"] += 1
    for a in store.aliases(realm):
        out.write(json.dumps(alias_to_dict(a)) + "\n")
        counts["aliases"] += 1
    return counts


def _write_memories(store: Store, batch: list[Memory], out: IO[str], embeddings: bool) -> int:
    vectors = store.vectors_for([m.id for m in batch]) if embeddings and batch else {}
    for m in batch:
        out.write(json.dumps(memory_to_dict(m, vectors.get(m.id)), ensure_ascii=False) + "\n")
    return len(batch)
