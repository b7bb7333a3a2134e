"""How memories, scopes and periods map onto the SQLite tables: the columns of a memory
row, a row as a record, and the WHERE fragments scope and period reads share."""

from __future__ import annotations

import functools
import json
import sqlite3

from chitta.store.conditions import period_condition, scope_condition
from chitta.store.confidence import Confidence
from chitta.store.kinds import Kind
from chitta.store.records import Memory, Scope, Source

MEMORY_COLUMNS = (
    "id, kind, content, realm, agent_id, channel, tags, source, created_at, updated_at, "
    "event_time, mu, sigma_sq, n, tau, strength, tier, access_count, last_accessed, "
    "decayed_at, supersedes, superseded_by, episode_id, truncated, deleted_at"
)
PLACEHOLDERS = ", ".join("?" * len(MEMORY_COLUMNS.split(", ")))
# The access log owns these two (store/access.py): an update of a memory read earlier must not
# overwrite the counts a batch wrote since.
_ACCESS_COLUMNS = ("access_count", "last_accessed")
UPDATE_COLUMNS = ", ".join(c for c in MEMORY_COLUMNS.split(", ") if c not in _ACCESS_COLUMNS)
UPDATE_PLACEHOLDERS = ", ".join("?" * len(UPDATE_COLUMNS.split(", ")))


def memory_row(m: Memory) -> tuple:
    c = m.confidence
    return (
        m.id, m.kind.value, m.content, m.realm, m.agent_id, m.channel, " ".join(m.tags),
        json.dumps(m.source.as_dict()), m.created_at, m.updated_at, m.event_time,
        c.mu, c.sigma_sq, c.n, c.tau, m.strength, m.tier, m.access_count, m.last_accessed,
        m.decayed_at, m.supersedes, m.superseded_by, m.episode_id, int(m.truncated),
        m.deleted_at,
    )  # fmt: skip


def update_row(m: Memory) -> tuple:
    columns = MEMORY_COLUMNS.split(", ")
    return tuple(v for c, v in zip(columns, memory_row(m), strict=True) if c not in _ACCESS_COLUMNS)


def memory_from_row(r: sqlite3.Row) -> Memory:
    return Memory(
        id=r["id"],
        kind=Kind(r["kind"]),
        content=r["content"],
        realm=r["realm"],
        agent_id=r["agent_id"],
        channel=r["channel"],
        tags=tuple(r["tags"].split()) if r["tags"] else (),
        source=source_of(r["source"]),
        created_at=r["created_at"],
        updated_at=r["updated_at"],
        event_time=r["event_time"],
        confidence=Confidence(mu=r["mu"], sigma_sq=r["sigma_sq"], n=r["n"], tau=r["tau"]),
        strength=r["strength"],
        tier=r["tier"],
        access_count=r["access_count"],
        last_accessed=r["last_accessed"],
        decayed_at=r["decayed_at"],
        supersedes=r["supersedes"],
        superseded_by=r["superseded_by"],
        episode_id=r["episode_id"],
        truncated=bool(r["truncated"]),
        deleted_at=r["deleted_at"],
    )


@functools.lru_cache(maxsize=4096)
def source_of(text: str) -> Source:
    """A stored source's JSON form read, once per distinct form: a session's turns share
    one, and parsing it was a third of reading a memory row (a recall reads 70 or so).
    Sources are immutable, so one object serves them all."""
    return Source.from_dict(json.loads(text))


def scope_sql(scope: Scope, alias: str = "", *, elsewhere: bool = False) -> tuple[str, list[str]]:
    """:func:`chitta.store.conditions.scope_condition` with this backend's parameter mark."""
    return scope_condition(scope, alias, elsewhere=elsewhere, mark="?")


def period_sql(start_ms: int, end_ms: int, include_superseded: bool) -> tuple[str, list[int]]:
    """:func:`chitta.store.conditions.period_condition` with this backend's parameter mark."""
    return period_condition(start_ms, end_ms, include_superseded, mark="?")
