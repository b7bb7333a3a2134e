"""JSONL export and import that round-trip every field of memories, episodes and triplets.

The format (``docs/jsonl.md``): one JSON object per line, each with a ``type``. A header line
(``chitta-export``) comes first, then episodes, memories, triplets. Times are ISO 8601 UTC
with milliseconds, which is exact for chitta's millisecond clock. A memory's vector is
included only on request, as base64 float32 with the model that made it.

Import never stops at a bad line: it is reported by number and skipped, and the good lines
still land. Memories are written in batches, each one transaction.
"""

from __future__ import annotations

import base64
import json
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import IO, Any

import numpy as np

from chitta.api import Chitta
from chitta.errors import ChittaError, ImportFormatError, InputError
from chitta.store.confidence import TIERS, Confidence
from chitta.store.ids import new_id
from chitta.store.kinds import DECAY_RATE, parse_kind
from chitta.store.records import Episode, Memory, Source, Triplet
from chitta.validate import check_content, check_scope_name, format_time, parse_tags, parse_time

FORMAT = "chitta-export"
FORMAT_VERSION = 1
BATCH = 256
MAX_LINE_BYTES = 1 << 20


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
    counts = {"episodes": 0, "memories": 0, "triplets": 0}
    for e in store.episodes(realm):
        out.write(json.dumps(_episode_to_dict(e)) + "\n")
        counts["episodes"] += 1
    batch: list[Memory] = []
    for m in store.iter_memories(realm=realm, include_deleted=include_deleted):
        batch.append(m)
        if len(batch) >= BATCH:
            counts["memories"] += _write_memories(store, batch, out, embeddings)
            batch = []
    counts["memories"] += _write_memories(store, batch, out, embeddings)
    for t in store.triplets(realm):
        out.write(json.dumps(_triplet_to_dict(t)) + "\n")
        counts["triplets"] += 1
    return counts


def _write_memories(store, batch: list[Memory], out: IO[str], embeddings: bool) -> int:
    vectors = store.vectors_for([m.id for m in batch]) if embeddings and batch else {}
    for m in batch:
        out.write(json.dumps(memory_to_dict(m, vectors.get(m.id)), ensure_ascii=False) + "\n")
    return len(batch)


def _episode_to_dict(e: Episode) -> dict[str, Any]:
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


def _triplet_to_dict(t: Triplet) -> dict[str, Any]:
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


# --- import ------------------------------------------------------------------------------------


@dataclass(slots=True)
class ImportReport:
    """What an import did, line by line where it went wrong."""

    memories: int = 0
    episodes: int = 0
    triplets: int = 0
    skipped_existing: int = 0
    reembedded: int = 0
    errors: list[tuple[int, str]] = field(default_factory=list)

    @property
    def bad_lines(self) -> int:
        return len(self.errors)

    def as_dict(self) -> dict[str, Any]:
        return {
            "imported": {"memories": self.memories, "episodes": self.episodes,
                         "triplets": self.triplets},
            "skipped_existing": self.skipped_existing,
            "reembedded": self.reembedded,
            "bad_lines": self.bad_lines,
            "errors": [{"line": n, "error": msg} for n, msg in self.errors],
        }  # fmt: skip


class _LineError(Exception):
    pass


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


def _check_fields(obj: dict, allowed: frozenset[str]) -> None:
    unknown = sorted(set(obj) - allowed)
    if unknown:
        raise _LineError(f"unknown field {unknown[0]!r}")


def _text(obj: dict, key: str, *, required: bool = True) -> str | None:
    value = obj.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not value):
        raise _LineError(f"field {key!r} must be a non-empty string")
    return value


def _number(obj: dict, key: str, default: float) -> float:
    value = obj.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _LineError(f"field {key!r} must be a number")
    return float(value)


def _source(obj: dict) -> Source:
    raw = obj.get("source") or {}
    if not isinstance(raw, dict) or not all(
        k in ("session", "file", "url", "ref") and isinstance(v, str) for k, v in raw.items()
    ):
        raise _LineError("field 'source' must map session/file/url/ref to strings")
    return Source(**raw)


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
        raise _LineError("field 'confidence' must be an object")
    tau_default = DECAY_RATE[kind]
    initial = Confidence.initial(tau_default)
    conf = Confidence(
        mu=_number(conf_raw, "mu", initial.mu),
        sigma_sq=_number(conf_raw, "sigma_sq", initial.sigma_sq),
        n=int(_number(conf_raw, "n", 0)),
        tau=_number(conf_raw, "tau", tau_default),
    )
    if not 0.0 <= conf.mu <= 1.0 or conf.sigma_sq < 0 or conf.n < 0 or conf.tau < 0:
        raise _LineError("field 'confidence' is out of range")
    strength = _number(obj, "strength", 0.7)
    tier = obj.get("tier") or "hot"
    if tier not in TIERS:
        raise _LineError(f"field 'tier' must be one of {', '.join(TIERS)}")
    created = _time(obj, "created_at", now) or now
    memory = Memory(
        id=_text(obj, "id", required=False) or new_id(created),
        kind=kind,
        content=content,
        realm=check_scope_name(obj.get("realm") or "default", "realm") or "default",
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
            raise _LineError("field 'vector' is not base64 float32") from None
        if dim is None or vector.shape[0] != dim:
            vector = None  # another model's vector: re-embed rather than mix spaces
    return memory, vector


def parse_episode(obj: dict, now: int) -> Episode:
    _check_fields(obj, _EPISODE_FIELDS)
    created = _time(obj, "created_at", now) or now
    return Episode(
        id=_text(obj, "id", required=False) or new_id(created),
        realm=check_scope_name(obj.get("realm") or "default", "realm") or "default",
        title=_text(obj, "title") or "",
        started_at=_time(obj, "started_at", created) or created,
        ended_at=_time(obj, "ended_at"),
        source=_source(obj),
        created_at=created,
    )


def parse_triplet(obj: dict, now: int) -> Triplet:
    _check_fields(obj, _TRIPLET_FIELDS)
    created = _time(obj, "created_at", now) or now
    return Triplet(
        id=_text(obj, "id", required=False) or new_id(created),
        realm=check_scope_name(obj.get("realm") or "default", "realm") or "default",
        subject=_text(obj, "subject") or "",
        predicate=_text(obj, "predicate") or "",
        object=_text(obj, "object") or "",
        weight=_number(obj, "weight", 1.0),
        valid_from=_time(obj, "valid_from", created) or created,
        invalidated_at=_time(obj, "invalidated_at"),
        source_memory=_text(obj, "source_memory", required=False),
        created_at=created,
    )


class _Importer:
    """Reads lines, validates each, and writes memories in batched transactions."""

    def __init__(self, chitta: Chitta, into: str | None) -> None:
        self.chitta = chitta
        self.store = chitta.store
        self.into = check_scope_name(into, "realm", optional=True)
        self.report = ImportReport()
        self.now = chitta.clock()
        self.dim: int | None = None  # set when the file's vectors come from the store's model
        self.id_map: dict[str, str] = {}
        self.seen: set[str] = set()
        self.pending: list[tuple[int, Memory, np.ndarray | None]] = []
        self.known_episodes: set[str] = set()
        # Under --into, links to records later in the file are resolved once all are read.
        self.unresolved: list[tuple[str, str, str]] = []

    def header(self, obj: dict) -> None:
        version = obj.get("version")
        if not isinstance(version, int) or version > FORMAT_VERSION:
            raise ImportFormatError(
                f"export format version {version!r} is not one this chitta reads "
                f"(up to {FORMAT_VERSION})"
            )
        model = obj.get("model")
        stored = self.store.model_identity() or self.chitta.embedder.identity()
        if isinstance(model, dict) and model == {
            "name": stored.name,
            "dim": stored.dim,
            "hash": stored.hash,
        }:
            self.dim = stored.dim

    def _new_id(self, old: str, created: int) -> str:
        if self.into is None:
            return old
        return self.id_map.setdefault(old, new_id(created))

    def _ref(self, old: str | None) -> str | None:
        """A reference as it should be stored: remapped under --into, dropped if dangling."""
        if old is None or self.into is None:
            return old
        return self.id_map.get(old)

    def line(self, number: int, obj: dict) -> None:
        kind = obj.get("type", "memory")
        if kind == "memory":
            memory, vector = parse_memory(obj, self.now, self.dim)
            self._claim(memory.id)
            if self.into is not None:
                memory = replace(memory, id=self._new_id(memory.id, memory.created_at),
                                 realm=self.into)  # fmt: skip
            self.pending.append((number, memory, vector))
            if len(self.pending) >= BATCH:
                self.flush()
        elif kind == "episode":
            episode = parse_episode(obj, self.now)
            self._claim(episode.id)
            if self.into is not None:
                episode = replace(episode, id=self._new_id(episode.id, episode.created_at),
                                  realm=self.into)  # fmt: skip
            if self.store.existing_ids("episodes", [episode.id]):
                self.report.skipped_existing += 1
            else:
                self.store.add_episodes([episode])
                self.report.episodes += 1
            self.known_episodes.add(episode.id)
        elif kind == "triplet":
            self.flush()
            triplet = parse_triplet(obj, self.now)
            self._claim(triplet.id)
            if self.into is not None:
                triplet = replace(
                    triplet,
                    id=self._new_id(triplet.id, triplet.created_at),
                    realm=self.into,
                    source_memory=self._ref(triplet.source_memory),
                )
            src = triplet.source_memory
            if src is not None and not self.store.existing_ids("memories", [src]):
                triplet = replace(triplet, source_memory=None)
            if self.store.existing_ids("triplets", [triplet.id]):
                self.report.skipped_existing += 1
            else:
                self.store.add_triplets([triplet])
                self.report.triplets += 1
        elif kind == FORMAT:
            raise _LineError("a second header line")
        else:
            raise _LineError(f"unknown record type {kind!r}; expected memory, episode or triplet")

    def _claim(self, record_id: str) -> None:
        if record_id in self.seen:
            raise _LineError(f"id {record_id} appears twice in this file")
        self.seen.add(record_id)

    def flush(self) -> None:
        """Write the pending memories: embed those without a usable vector, one transaction."""
        if not self.pending:
            return
        batch, self.pending = self.pending, []
        existing = self.store.existing_ids("memories", [m.id for _, m, _ in batch])
        batch = [item for item in batch if item[1].id not in existing]
        self.report.skipped_existing += len(existing)
        episodes = self.known_episodes | self.store.existing_ids(
            "episodes", [m.episode_id for _, m, _ in batch if m.episode_id]
        )
        fixed = []
        for number, m, vector in batch:
            if self.into is not None:
                for name in ("supersedes", "superseded_by"):
                    old = getattr(m, name)
                    if old is not None and old not in self.id_map:
                        self.unresolved.append((m.id, name, old))
            m = replace(
                m,
                supersedes=self._ref(m.supersedes),
                superseded_by=self._ref(m.superseded_by),
                episode_id=self._ref(m.episode_id),
            )
            if m.episode_id is not None and m.episode_id not in episodes:
                m = replace(m, episode_id=None)
            fixed.append((number, m, vector))
        todo = [i for i, (_, _, v) in enumerate(fixed) if v is None]
        if todo:
            embedded = self.chitta.embedder.embed([fixed[i][1].content for i in todo])
            for j, i in enumerate(todo):
                number, m, _ = fixed[i]
                m = replace(m, truncated=embedded.truncated[j])
                fixed[i] = (number, m, embedded.vectors[j])
            self.report.reembedded += len(todo)
        try:
            self.store.insert([(m, v) for _, m, v in fixed])
            self.report.memories += len(fixed)
        except (ChittaError, sqlite3.Error):
            # One bad record must not cost the batch: retry one by one and name the culprit.
            for number, m, v in fixed:
                try:
                    self.store.insert([(m, v)])
                    self.report.memories += 1
                except (ChittaError, sqlite3.Error) as exc:
                    self.report.errors.append((number, f"could not store: {exc}"))

    def finish(self) -> None:
        """Flush the last batch and resolve links to records that came later in the file."""
        self.flush()
        fixes: dict[str, dict[str, str]] = {}
        for memory_id, name, old in self.unresolved:
            if old in self.id_map:
                fixes.setdefault(memory_id, {})[name] = self.id_map[old]
        if fixes:
            found = self.store.get_many(list(fixes))
            self.store.update_many(replace(found[i], **f) for i, f in fixes.items() if i in found)


def import_jsonl(
    chitta: Chitta,
    lines: Iterable[str],
    *,
    into: str | None = None,
    progress: Callable[[int], None] | None = None,
) -> ImportReport:
    """Import JSONL ``lines``; bad lines are skipped and reported, good lines land.

    ``into`` moves every record into that realm under fresh ids (references between
    imported records follow). Without it, ids are kept and ids already present are skipped.
    ``progress`` is called with the number of bytes read after each line.
    """
    importer = _Importer(chitta, into)
    for number, raw in enumerate(lines, start=1):
        if progress is not None:
            progress(len(raw.encode("utf-8", "replace")))
        text = raw.strip()
        if not text:
            continue
        try:
            if len(raw) > MAX_LINE_BYTES:
                raise _LineError(f"line is longer than {MAX_LINE_BYTES:,} bytes")
            try:
                obj = json.loads(text)
            except json.JSONDecodeError as exc:
                raise _LineError(f"invalid JSON: {exc.msg} at column {exc.colno}") from None
            if not isinstance(obj, dict):
                raise _LineError("a line must be a JSON object")
            if obj.get("type") == FORMAT and number == 1:
                importer.header(obj)
                continue
            importer.line(number, obj)
        except ImportFormatError:
            raise  # the whole file is unusable, not just this line
        except (_LineError, InputError) as exc:
            importer.report.errors.append((number, str(exc)))
    importer.finish()
    return importer.report
