"""Records to rows and back, and the WHERE fragments of a scope and a period (``%s``
parameters), for the PostgreSQL tables."""

from __future__ import annotations

import json
from collections.abc import Sequence

from chitta.store.conditions import period_condition, scope_condition
from chitta.store.confidence import Confidence
from chitta.store.kinds import Kind
from chitta.store.records import Episode, Memory, Scope, Source, Triplet

MEMORY_COLUMNS = (
    "id, kind, content, realm, agent_id, channel, tags, source, created_at, updated_at, "
    "event_time, mu, sigma_sq, n, tau, strength, tier, access_count, last_accessed, "
    "decayed_at, supersedes, superseded_by, episode_id, truncated, deleted_at"
)
_COLUMN_LIST = MEMORY_COLUMNS.split(", ")
#: The access log owns these two (store/access.py): an update of a memory read earlier must
#: not overwrite the counts a batch wrote since.
ACCESS_COLUMNS = ("access_count", "last_accessed")
UPDATE_COLUMNS = [c for c in _COLUMN_LIST if c not in ACCESS_COLUMNS]
TRIPLET_COLUMNS = (
    "id, realm, subject, predicate, object, weight, valid_from, invalidated_at, source_memory, "
    "created_at"
)
EPISODE_COLUMNS = "id, realm, title, started_at, ended_at, source, created_at"


def memory_row(m: Memory) -> tuple:
    """A memory's values in :data:`MEMORY_COLUMNS` order."""
    c = m.confidence
    return (
        m.id, m.kind.value, m.content, m.realm, m.agent_id, m.channel, " ".join(m.tags),
        json.dumps(m.source.as_dict()), m.created_at, m.updated_at, m.event_time,
        c.mu, c.sigma_sq, c.n, c.tau, m.strength, m.tier, m.access_count, m.last_accessed,
        m.decayed_at, m.supersedes, m.superseded_by, m.episode_id, bool(m.truncated),
        m.deleted_at,
    )  # fmt: skip


def update_row(m: Memory) -> tuple:
    """A memory's values in :data:`UPDATE_COLUMNS` order."""
    return tuple(
        v for c, v in zip(_COLUMN_LIST, memory_row(m), strict=True) if c not in ACCESS_COLUMNS
    )


def memory_from_row(r: Sequence) -> Memory:
    """The memory of a row read with :data:`MEMORY_COLUMNS`."""
    return Memory(
        id=r[0], kind=Kind(r[1]), content=r[2], realm=r[3], agent_id=r[4], channel=r[5],
        tags=tuple(r[6].split()) if r[6] else (), source=Source.from_dict(r[7]), created_at=r[8],
        updated_at=r[9], event_time=r[10],
        confidence=Confidence(mu=r[11], sigma_sq=r[12], n=r[13], tau=r[14]),
        strength=r[15], tier=r[16], access_count=r[17], last_accessed=r[18], decayed_at=r[19],
        supersedes=r[20], superseded_by=r[21], episode_id=r[22], truncated=bool(r[23]),
        deleted_at=r[24],
    )  # fmt: skip


def triplet_from_row(r: Sequence) -> Triplet:
    """The triplet of a row read with :data:`TRIPLET_COLUMNS` first."""
    return Triplet(*r[:10])


def episode_from_row(r: Sequence) -> Episode:
    return Episode(r[0], r[1], r[2], r[3], r[4], Source.from_dict(r[5]), r[6])


def scope_sql(scope: Scope, alias: str = "", *, elsewhere: bool = False) -> tuple[str, list[str]]:
    """:func:`chitta.store.conditions.scope_condition` with this backend's parameter mark."""
    return scope_condition(scope, alias, elsewhere=elsewhere, mark="%s")


def period_sql(start_ms: int, end_ms: int, include_superseded: bool) -> tuple[str, list[int]]:
    """:func:`chitta.store.conditions.period_condition` with this backend's parameter mark."""
    return period_condition(start_ms, end_ms, include_superseded, mark="%s")
