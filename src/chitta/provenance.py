"""A memory's provenance chain (issue 22 part 3; docs/memory-model.md#provenance): where it
came from, how far recall trusts that source, the turns it was drawn from, the independent
sources that stored it again, and what it replaced or was replaced by.

``chitta provenance ID`` (and the ``provenance`` RPC method and MCP tool) answers with it.
Turn texts are cut to :data:`EXCERPT_CHARS`: the chain says where to look, ``get_memory``
shows a whole turn.
"""

from __future__ import annotations

from dataclasses import dataclass

from chitta.recall.scoring_config import ScoringConfig
from chitta.store.base import Store
from chitta.store.provenance import (
    drawn_from,
    replication_key,
    source_kind,
    source_name,
)
from chitta.store.records import Memory

#: Characters of a linked memory's text shown in the chain.
EXCERPT_CHARS = 160
#: Memories of the session read to find the ones this memory replaced.
MAX_SESSION_READ = 2000


@dataclass(frozen=True, slots=True)
class Link:
    """Another memory on the chain, in brief."""

    id: str
    kind: str
    role: str | None
    session: str | None
    at: int  # when it happened (its event time), else when it was stored; ms
    excerpt: str
    forgotten: bool


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where one memory came from, and what became of it."""

    memory: Memory
    source_kind: str
    source_name: str | None
    trust: float  # the scoring stage's provenance factor for it
    turns: tuple[Link, ...]  # the turns it was drawn from, in order
    missing_turns: tuple[str, ...]  # turns it names that are no longer stored
    replications: tuple[tuple[str, int], ...]  # (another source that stored it again, when)
    independent_sources: int  # its own source and the replications, distinct
    supersedes: Link | None
    superseded_by: Link | None
    replaced: tuple[Link, ...]  # memories it superseded (a distilled memory's fragments)
    #: The code symbols it names (docs/code.md): (qualified name, path, changed since).
    symbols: tuple[tuple[str, str | None, bool], ...] = ()


def link(memory: Memory) -> Link:
    """``memory`` in brief: its id, kind, speaker, time and the start of its text."""
    text = " ".join(memory.content.split())
    if len(text) > EXCERPT_CHARS:
        text = text[: EXCERPT_CHARS - 1].rstrip() + "…"
    return Link(id=memory.id, kind=str(memory.kind), role=memory.source.role,
                session=memory.source.session, at=memory.event_time or memory.created_at,
                excerpt=text, forgotten=memory.deleted)  # fmt: skip


def provenance(store: Store, scoring: ScoringConfig, memory_id: str) -> Provenance:
    """The provenance chain of ``memory_id`` (forgotten memories too); NotFound if none."""
    memory = store.get(memory_id, include_deleted=True)
    source = memory.source
    turn_ids = drawn_from(source)
    found = store.get_many(list(turn_ids)) if turn_ids else {}
    turns = tuple(link(found[t]) for t in turn_ids if t in found)
    replications = tuple((key, at) for _, key, at in store.replications([memory.id]))
    # The memory's own source is one, identifiable or not; each other one stored it again.
    own = replication_key(source) or f"memory:{memory.id}"
    distinct = {key for key, _ in replications} | {own}
    kind, name = source_kind(source), source_name(source)
    return Provenance(
        memory=memory,
        source_kind=kind,
        source_name=name,
        trust=scoring.trusted(kind, name),
        turns=turns,
        missing_turns=tuple(t for t in turn_ids if t not in found),
        replications=replications,
        independent_sources=len(distinct),
        supersedes=_linked(store, memory.supersedes),
        superseded_by=_linked(store, memory.superseded_by),
        replaced=_replaced(store, memory),
        symbols=tuple(
            (state.link.qualified, state.path, state.changed)
            for state in store.code().links_of(memory.realm, [memory.id])
        ),
    )


def _linked(store: Store, memory_id: str | None) -> Link | None:
    if memory_id is None:
        return None
    found = store.get_many([memory_id])
    return link(found[memory_id]) if memory_id in found else None


def _replaced(store: Store, memory: Memory) -> tuple[Link, ...]:
    """The memories of its session that name ``memory`` as what superseded them (a
    distilled memory replaces several fragments; ``supersedes`` holds one of them)."""
    ids = [memory.supersedes] if memory.supersedes else []
    if memory.source.session:
        ids += store.session_recent(memory.source.session, MAX_SESSION_READ)
    found = store.get_many(list(dict.fromkeys(ids)))
    replaced = [m for m in found.values() if m.superseded_by == memory.id]
    return tuple(link(m) for m in sorted(replaced, key=lambda m: m.id))
