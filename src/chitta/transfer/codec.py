"""The JSON form of each record type, both ways: records to dicts, and checked lines to records.

Parsing raises :class:`LineError` (or an :class:`~chitta.errors.InputError`) naming the bad
field; the importer turns that into a numbered line error.
"""

from __future__ import annotations

import base64
from typing import Any

import numpy as np

from chitta.config import DEFAULT_REALM
from chitta.relations.names import check_entity, check_predicate, check_weight
from chitta.store.confidence import INITIAL_STRENGTH, TIERS, Confidence, tier_for
from chitta.store.ids import new_id
from chitta.store.kinds import DECAY_RATE, parse_kind
from chitta.store.records import (
    SOURCE_ROLES,
    TEXT_FIELDS,
    Alias,
    Episode,
    Memory,
    Source,
    Triplet,
)
from chitta.validate import check_content, check_scope_name, format_time, parse_tags, parse_time

FORMAT = "chitta-export"
FORMAT_VERSION = 1


def memory_to_dict(m: Memory, vector: np.ndarray | None = None) -> dict[str, Any]:
    """The JSON form of one memory (with its vector, base64 float32, when given)."""
    c = m.confidence
    out: dict[str, Any] = {
        "type": "memory",
        "id": m.id,
        "kind": m.kind.value,
        "content": m.content,
        "realm": m.realm,
        "agent_id": m.agent_id,
        "channel": m.channel,
        "tags": list(m.tags),
        "source": m.source.as_dict(),
        "created_at": format_time(m.created_at),
        "updated_at": format_time(m.updated_at),
        "event_time": format_time(m.event_time),
        "confidence": {"mu": c.mu, "sigma_sq": c.sigma_sq, "n": c.n, "tau": c.tau},
        "strength": m.strength,
        "tier": m.tier,
        "access_count": m.access_count,
        "last_accessed": format_time(m.last_accessed),
        "decayed_at": format_time(m.decayed_at),
        "supersedes": m.supersedes,
        "superseded_by": m.superseded_by,
        "episode_id": m.episode_id,
        "truncated": m.truncated,
        "deleted_at": format_time(m.deleted_at),
    }
    if vector is not None:
        out["vector"] = base64.b64encode(vector.astype("<f4").tobytes()).decode()
    return out


def episode_to_dict(e: Episode) -> dict[str, Any]:
    return {
        "type": "episode",
        "id": e.id,
        "realm": e.realm,
        "title": e.title,
        "started_at": format_time(e.started_at),
        "ended_at": format_time(e.ended_at),
        "source": e.source.as_dict(),
        "created_at": format_time(e.created_at),
    }


def triplet_to_dict(t: Triplet) -> dict[str, Any]:
    return {
        "type": "triplet",
        "id": t.id,
        "realm": t.realm,
        "subject": t.subject,
        "predicate": t.predicate,
        "object": t.object,
        "weight": t.weight,
        "valid_from": format_time(t.valid_from),
        "invalidated_at": format_time(t.invalidated_at),
        "source_memory": t.source_memory,
        "created_at": format_time(t.created_at),
    }


def alias_to_dict(a: Alias) -> dict[str, Any]:
    return {
        "type": "alias",
        "realm": a.realm,
        "alias": a.alias,
        "alias_key": a.alias_key,
        "canonical_key": a.canonical_key,
        "created_at": format_time(a.created_at),
    }


class LineError(Exception):
    """One line of an import is unusable; the message says which field and why."""


_MEMORY_FIELDS = frozenset(
    {
        "type", "id", "kind", "content", "realm", "agent_id", "channel", "tags", "source",
        "created_at", "updated_at", "event_time", "confidence", "strength", "tier",
        "access_count", "last_accessed", "decayed_at", "supersedes", "superseded_by",
        "episode_id", "truncated", "deleted_at", "vector",
    }
)  # fmt: skip
_EPISODE_FIELDS = frozenset(
    {"type", "id", "realm", "title", "started_at", "ended_at", "source", "created_at"}
)
_TRIPLET_FIELDS = frozenset(
    {"type", "id", "realm", "subject", "predicate", "object", "weight", "valid_from",
     "invalidated_at", "source_memory", "created_at"}
)  # fmt: skip
_ALIAS_FIELDS = frozenset({"type", "realm", "alias", "alias_key", "canonical_key", "created_at"})


def _check_fields(obj: dict, allowed: frozenset[str]) -> None:
    unknown = sorted(set(obj) - allowed)
    if unknown:
        raise LineError(f"unknown field {unknown[0]!r}")


def _text(obj: dict, key: str, *, required: bool = True) -> str | None:
    value = obj.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not value):
        raise LineError(f"field {key!r} must be a non-empty string")
    return value


def _number(obj: dict, key: str, default: float) -> float:
    value = obj.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise LineError(f"field {key!r} must be a number")
    return float(value)


def _source(obj: dict) -> Source:
    raw = obj.get("source") or {}
    if not isinstance(raw, dict) or not all(
        k in TEXT_FIELDS and isinstance(v, str) for k, v in raw.items() if k != "turns"
    ):
        raise LineError(
            f"field 'source' must map {'/'.join(TEXT_FIELDS)} to strings (and turns to a list)"
        )
    turns = raw.get("turns", [])
    if not isinstance(turns, list) or not all(isinstance(t, str) and t for t in turns):
        raise LineError("source.turns must be a list of memory ids")
    if raw.get("role") not in (None, *SOURCE_ROLES):
        raise LineError(f"source.role must be one of: {', '.join(SOURCE_ROLES)}")
    return Source.from_dict(raw)


def _time(obj: dict, key: str, default: int | None = None) -> int | None:
    value = parse_time(obj.get(key), key)
    return default if value is None else value


def parse_memory(obj: dict, now: int, dim: int | None) -> tuple[Memory, np.ndarray | None]:
    """A memory (and its vector, if the line has one of dimension ``dim``) from one line."""
    _check_fields(obj, _MEMORY_FIELDS)
    content = check_content(obj.get("content"))
    kind = parse_kind(_text(obj, "kind") or "")
    conf_raw = obj.get("confidence") or {}
    if not isinstance(conf_raw, dict):
        raise LineError("field 'confidence' must be an object")
    tau_default = DECAY_RATE[kind]
    initial = Confidence.initial(tau_default)
    conf = Confidence(
        mu=_number(conf_raw, "mu", initial.mu),
        sigma_sq=_number(conf_raw, "sigma_sq", initial.sigma_sq),
        n=int(_number(conf_raw, "n", 0)),
        tau=_number(conf_raw, "tau", tau_default),
    )
    if not 0.0 <= conf.mu <= 1.0 or conf.sigma_sq < 0 or conf.n < 0 or conf.tau < 0:
        raise LineError("field 'confidence' is out of range")
    strength = _number(obj, "strength", INITIAL_STRENGTH)
    tier = obj.get("tier") or tier_for(strength)
    if tier not in TIERS:
        raise LineError(f"field 'tier' must be one of {', '.join(TIERS)}")
    record_id, realm, created = _record_base(obj, now)
    memory = Memory(
        id=record_id,
        kind=kind,
        content=content,
        realm=realm,
        agent_id=check_scope_name(obj.get("agent_id") or None, "agent_id", optional=True) or "",
        channel=check_scope_name(obj.get("channel") or None, "channel", optional=True) or "",
        tags=parse_tags(obj.get("tags") or []),
        source=_source(obj),
        created_at=created,
        updated_at=_time(obj, "updated_at", created) or created,
        event_time=_time(obj, "event_time"),
        confidence=conf,
        strength=strength,
        tier=tier,
        access_count=int(_number(obj, "access_count", 0)),
        last_accessed=_time(obj, "last_accessed"),
        decayed_at=_time(obj, "decayed_at", created),
        supersedes=_text(obj, "supersedes", required=False),
        superseded_by=_text(obj, "superseded_by", required=False),
        episode_id=_text(obj, "episode_id", required=False),
        truncated=bool(obj.get("truncated", False)),
        deleted_at=_time(obj, "deleted_at"),
    )
    vector = None
    if obj.get("vector") is not None:
        try:
            vector = np.frombuffer(base64.b64decode(obj["vector"], validate=True), dtype="<f4")
        except (ValueError, TypeError):
            raise LineError("field 'vector' is not base64 float32") from None
        if dim is None or vector.shape[0] != dim:
            vector = None  # another model's vector: re-embed rather than mix spaces
    return memory, vector


def _record_base(obj: dict, now: int) -> tuple[str, str, int]:
    """The (id, realm, created_at) every record has; a missing id or time is made up now."""
    created = _time(obj, "created_at", now) or now
    record_id = _text(obj, "id", required=False) or new_id(created)
    realm = check_scope_name(obj.get("realm") or DEFAULT_REALM, "realm") or DEFAULT_REALM
    return record_id, realm, created


def parse_episode(obj: dict, now: int) -> Episode:
    _check_fields(obj, _EPISODE_FIELDS)
    record_id, realm, created = _record_base(obj, now)
    return Episode(
        id=record_id,
        realm=realm,
        title=_text(obj, "title") or "",
        started_at=_time(obj, "started_at", created) or created,
        ended_at=_time(obj, "ended_at"),
        source=_source(obj),
        created_at=created,
    )


def parse_triplet(obj: dict, now: int) -> Triplet:
    """A triplet from one line, its names and weight checked as ``add_triplet`` checks them
    (the store keys it by those names when it is written)."""
    _check_fields(obj, _TRIPLET_FIELDS)
    record_id, realm, created = _record_base(obj, now)
    return Triplet(
        id=record_id,
        realm=realm,
        subject=check_entity(obj.get("subject"), "field 'subject'")[0],
        predicate=check_predicate(obj.get("predicate"), "field 'predicate'")[0],
        object=check_entity(obj.get("object"), "field 'object'")[0],
        weight=check_weight(_number(obj, "weight", 1.0)),
        valid_from=_time(obj, "valid_from", created) or created,
        invalidated_at=_time(obj, "invalidated_at"),
        source_memory=_text(obj, "source_memory", required=False),
        created_at=created,
    )


def parse_alias(obj: dict, now: int) -> Alias:
    """An alias from one line. Its keys are made again, as a triplet's are: ``alias_key`` from
    ``alias`` (the line's own is only read back for its type) and ``canonical_key`` keyed anew,
    so the store never holds a key that this chitta's key function would not give."""
    _check_fields(obj, _ALIAS_FIELDS)
    _, realm, created = _record_base(obj, now)
    alias, alias_key = check_entity(obj.get("alias"), "field 'alias'")
    _text(obj, "alias_key", required=False)
    canonical_key = check_entity(obj.get("canonical_key"), "field 'canonical_key'")[1]
    return Alias(realm=realm, alias=alias, alias_key=alias_key, canonical_key=canonical_key,
                 created_at=created)  # fmt: skip
