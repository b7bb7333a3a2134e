"""The records a store holds: memories, triplets, episodes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

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
    """Where a memory came from (its provenance, docs/memory-model.md): a session, a file, a
    URL, or an outside reference; for a session's words, who said them (``role``: ``user``,
    ``assistant`` or ``tool``); and, for a memory something made of other memories, what made
    it (``via``: ``distiller:rules/1``, ``distiller:model/openai:NAME/prompt-1``, ``import``)
    and the turns it was drawn from (``turns``: their memory ids)."""

    session: str | None = None
    file: str | None = None
    url: str | None = None
    ref: str | None = None
    role: str | None = None
    via: str | None = None
    turns: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, str | list[str]]:
        out: dict[str, str | list[str]] = {k: v for k in TEXT_FIELDS if (v := getattr(self, k))}
        if self.turns:
            out["turns"] = list(self.turns)
        return out

    @classmethod
    def from_dict(cls, raw: Mapping[str, object]) -> Source:
        """The source of a stored JSON form; keys this chitta does not know are left out (a
        newer chitta's additions), values of the wrong type read as absent."""
        fields: dict[str, Any] = {
            k: v for k in TEXT_FIELDS if isinstance(v := raw.get(k), str) and v
        }
        turns = raw.get("turns")
        if isinstance(turns, list | tuple):
            fields["turns"] = tuple(t for t in turns if isinstance(t, str) and t)
        return cls(**fields)


#: A source's text fields, in the order its JSON form gives them (``turns`` follows).
TEXT_FIELDS = ("session", "file", "url", "ref", "role", "via")
#: Every field of a source's JSON form.
SOURCE_FIELDS = (*TEXT_FIELDS, "turns")
#: Who said a session's turn: the user's prompt, or the assistant's reply (its own text).
ROLES = ("user", "assistant")
#: Who said what a memory holds: a turn's roles, or a tool's output.
SOURCE_ROLES = (*ROLES, "tool")


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
