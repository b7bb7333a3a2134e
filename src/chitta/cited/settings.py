"""Cited recall's settings: the sources, the merge, the abstention rules and the model chain.

They come from a TOML file (cited/config.py reads it; docs/cited-recall.md gives the format);
these frozen dataclasses are what the rest of the package takes."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

#: An SQL identifier a ``sqlite_fts`` source may name (a table or a column): never quoted
#: into a query unless it matches.
SQL_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: The most chunks cited recall asks of one source.
MAX_LIMIT = 100

#: Seed 003's tier weights, by the kind of source that plays each tier here.
DEFAULT_PRIORITY: dict[str, float] = {
    "markdown": 1.0,  # tier 0: the context file (MEMORY.md)
    "chitta": 1.0,  # tier 1: curated knowledge (OB1 in the seed)
    "chitta_file": 0.9,  # tier 2: another, federated store (OBn)
    "http": 0.8,  # tier 3: a durable memory service over HTTP (Hindsight)
    "sqlite_fts": 0.7,  # tier 2: session history in an FTS5 table (session)
}


@dataclass(frozen=True, slots=True)
class SourceConfig:
    """One configured source: its name (unique), kind, priority and kind-specific options."""

    name: str
    kind: str
    priority: float
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class MergeSettings:
    k: int = 60  # RRF constant (seed 003)
    min_score: float = 0.3  # chunks under this normalised score are dropped (seed 003)


@dataclass(frozen=True, slots=True)
class AbstainSettings:
    min_sources: int = 2  # sources with results; capped at the number of sources configured
    min_chunks: int = 2
    min_top_score: float = 0.3
    #: chitta's own rule beside the seed's: when only chitta stores returned anything and
    #: every one of them says UNKNOWN (recall/confidence/calibration.py), abstain.
    respect_band: bool = True


@dataclass(frozen=True, slots=True)
class ModelEndpoint:
    """A chat model: ``kind`` "openai" (POST {url}/chat/completions) or "ollama" (POST
    {url}/api/generate)."""

    kind: str
    url: str
    model: str
    timeout_s: float = 30.0
    api_key_env: str | None = None  # the environment variable holding a bearer token


@dataclass(frozen=True, slots=True)
class SynthSettings:
    models: tuple[ModelEndpoint, ...] = ()  # tried in order; then the extractive answer
    extractive_sentences: int = 3


@dataclass(frozen=True, slots=True)
class CitedSettings:
    sources: tuple[SourceConfig, ...] = ()
    limit: int = 5  # chunks asked of each source (seed 003's --limit)
    source_timeout_s: float = 5.0
    merge: MergeSettings = MergeSettings()
    abstain: AbstainSettings = AbstainSettings()
    synth: SynthSettings = SynthSettings()
