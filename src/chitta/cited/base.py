"""The pieces cited recall passes between its stages: chunks from sources, citations, the
answer. Sources (cited/sources/) return chunks; the merge (cited/merge.py) deduplicates and
fuses them into citations; synthesis (cited/synth.py) writes the answer or abstains."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, asdict, dataclass, field, fields
from typing import Any, Protocol

from chitta.errors import BadArgument, ChittaError


class SourceError(ChittaError):
    """A source could not answer (unreachable, timed out, malformed reply). Collected in the
    result's ``errors``; it never fails the whole call."""

    code = "source_error"


@dataclass(frozen=True, slots=True)
class Chunk:
    """One passage a source returned for the query."""

    source: str  # the name of the source that returned it (its config name)
    text: str
    rank: int  # 1-based rank within its source's reply
    score: float  # the source's own score (cosine, BM25, the endpoint's field...), as given
    ref: str | None = None  # where it lives: a memory id, "file.md#Section", a rowid, a URL
    meta: dict[str, Any] = field(default_factory=dict)  # source-specific, JSON-safe


class Source(Protocol):
    """A memory source: a name, a priority weight, and a search."""

    name: str
    kind: str  # chitta | chitta_file | markdown | sqlite_fts | http
    priority: float  # multiplies the source's RRF share (seed 003's tier weights)

    def search(self, query: str, limit: int) -> list[Chunk]:
        """At most ``limit`` chunks, best first. Raises :class:`SourceError` on failure."""
        ...


@dataclass(frozen=True, slots=True)
class SourceReply:
    """What one source gave for one query: its chunks, or the error that stopped it."""

    name: str
    kind: str
    chunks: tuple[Chunk, ...]
    error: str | None
    elapsed_ms: float


@dataclass(frozen=True, slots=True)
class Citation:
    """A merged chunk, numbered after sorting (citation_id 1 is the best)."""

    citation_id: int
    source: str
    source_kind: str
    content: str
    rrf_score: float  # normalised to 0..1 by the best chunk's raw score
    raw_rrf: float  # sum over sources of priority / (k + rank), before normalising
    source_score: float  # the source's own score
    rank: int  # its rank within its source
    ref: str | None
    content_hash: str  # md5 of the content, first 12 hex characters (seed 003)


@dataclass(frozen=True, slots=True)
class SourceStats:
    count: int
    max_score: float
    avg_score: float


@dataclass(frozen=True, slots=True)
class CitedAnswer:
    """The whole result, in the JSON shape of seed 003 (see :meth:`as_dict`)."""

    query: str
    synthesized_answer: str | None
    abstained: bool
    abstention_reason: str | None
    citations: tuple[Citation, ...]
    sources: dict[str, SourceStats]
    chunks: tuple[Chunk, ...]  # every chunk the sources returned, before the merge
    errors: tuple[str, ...]  # "name: message", one per failed source or model step
    timestamp: str  # ISO 8601 UTC, "2026-06-22T22:04:16Z"
    answer_mode: str  # "model" | "extractive" | "none" (abstained before synthesis)
    model: str | None = None  # "openai:<model>" or "ollama:<model>" when a model answered
    timing_ms: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """The seed's JSON structure, plus answer_mode, model and timing_ms. A citation also
        carries the seed's name for its source, ``source_type`` (the same as ``source``)."""
        out = asdict(self)
        out["citations"] = [_seed_citation(c) for c in self.citations]
        out["chunks"] = [asdict(c) for c in self.chunks]
        out["sources"] = {k: asdict(v) for k, v in self.sources.items()}
        out["errors"] = list(self.errors)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CitedAnswer:
        """The answer :meth:`as_dict` described, e.g. from a daemon's ``cited_recall`` reply.

        Keys it does not know (the reply's ``"ok"``) are ignored, so a newer daemon's extra
        fields do no harm; a missing field, or a wrong shape where a list or an object should
        be, is a :class:`BadArgument` naming it."""
        nested = ("citations", "chunks", "sources", "errors")
        citations = [Citation(**_fields(Citation, c, f"citations[{i}]"))
                     for i, c in enumerate(_list(data, "citations"))]  # fmt: skip
        chunks = [Chunk(**_fields(Chunk, c, f"chunks[{i}]"))
                  for i, c in enumerate(_list(data, "chunks"))]  # fmt: skip
        sources = {str(name): SourceStats(**_fields(SourceStats, stats, f"sources[{name!r}]"))
                   for name, stats in _mapping(data.get("sources"), "sources").items()}  # fmt: skip
        return cls(
            **_fields(cls, data, "the answer", skip=nested),
            citations=tuple(citations),
            chunks=tuple(chunks),
            sources=sources,
            errors=tuple(str(e) for e in _list(data, "errors")),
        )


def _seed_citation(citation: Citation) -> dict[str, Any]:
    """A citation's fields, with the seed's ``source_type`` after ``source_kind``."""
    values = asdict(citation)
    head = {k: values[k] for k in ("citation_id", "source", "source_kind")}
    return {**head, "source_type": citation.source, **values}


def _mapping(value: object, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise BadArgument(f"{where} must be an object, got {type(value).__name__}")
    return value


def _list(data: Mapping[str, Any], key: str) -> list[Any]:
    value = _mapping(data, "the answer").get(key)
    if not isinstance(value, list | tuple):
        raise BadArgument(f"{key} must be a list, got {type(value).__name__}")
    return list(value)


def _fields(kind: type, data: object, where: str, skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """The values of ``kind``'s fields in ``data`` (those with a default may be missing),
    leaving out ``skip``; unknown keys are ignored."""
    given = _mapping(data, where)
    values: dict[str, Any] = {}
    for f in fields(kind):
        if f.name in skip:
            continue
        if f.name in given:
            values[f.name] = given[f.name]
        elif f.default is MISSING and f.default_factory is MISSING:
            raise BadArgument(f"{where} has no {f.name!r}")
    return values
