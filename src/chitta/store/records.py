"""The records a store holds: memories, triplets, episodes."""

from __future__ import annotations

from dataclasses import dataclass

from chitta.store.confidence import Confidence
from chitta.store.kinds import Kind


@dataclass(frozen=True, slots=True)
class Scope:
    """Isolation axes: a realm (project), and optionally one agent and one channel.

    A memory lives in exactly one scope. A read scoped with ``agent_id``/``channel`` set
    sees only memories with those exact values; left ``None``, that axis is not filtered.
    """

    realm: str
    agent_id: str | None = None
    channel: str | None = None


@dataclass(frozen=True, slots=True)
class Source:
    """Where a memory came from: a session, a file, a URL, or an outside reference; and, for
    a turn of a session, who said it (``role``: ``user`` or ``assistant``)."""

    session: str | None = None
    file: str | None = None
    url: str | None = None
    ref: str | None = None
    role: str | None = None

    def as_dict(self) -> dict[str, str]:
        return {k: v for k in SOURCE_FIELDS if (v := getattr(self, k))}


#: A source's fields, in the order its JSON form gives them.
SOURCE_FIELDS = ("session", "file", "url", "ref", "role")
#: Who said a session's turn: the user's prompt, or the assistant's reply (its own text).
ROLES = ("user", "assistant")


@dataclass(frozen=True, slots=True)
class Memory:
    """One stored memory with its lifecycle state."""

    id: str
    kind: Kind
    content: str
    realm: str
    agent_id: str
    channel: str
    tags: tuple[str, ...]
    source: Source
    created_at: int  # ms since the epoch, UTC
    updated_at: int
    event_time: int | None  # when it happened, if not when it was stored
    confidence: Confidence
    strength: float
    tier: str
    access_count: int = 0
    last_accessed: int | None = None
    decayed_at: int | None = None
    supersedes: str | None = None
    superseded_by: str | None = None
    episode_id: str | None = None
    truncated: bool = False  # the embedder read only the first MAX_EMBED_TOKENS tokens
    deleted_at: int | None = None

    @property
    def deleted(self) -> bool:
        return self.deleted_at is not None


@dataclass(frozen=True, slots=True)
class Triplet:
    """A temporal edge: subject —predicate→ object, valid from a time until invalidated."""

    id: str
    realm: str
    subject: str
    predicate: str
    object: str
    weight: float
    valid_from: int
    invalidated_at: int | None
    source_memory: str | None
    created_at: int


@dataclass(frozen=True, slots=True)
class Alias:
    """Another name for an entity of a realm: ``alias`` (matched by ``alias_key``) names the
    entity keyed ``canonical_key``."""

    realm: str
    alias: str
    alias_key: str
    canonical_key: str
    created_at: int


@dataclass(frozen=True, slots=True)
class Episode:
    """A session or group of conversation turns with its time span."""

    id: str
    realm: str
    title: str
    started_at: int
    ended_at: int | None
    source: Source
    created_at: int
