"""Cited recall over an open store: the configured sources built, asked, and closed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from chitta.cited.base import CitedAnswer
from chitta.cited.config import load_cited_settings
from chitta.cited.run import cited_recall
from chitta.cited.sources import build_sources, close_sources

if TYPE_CHECKING:
    from chitta.api import Chitta
    from chitta.config import EmbedSettings


def answer(
    chitta: Chitta | None,
    home: Path,
    query: str,
    *,
    limit: int | None = None,
    config: Path | None = None,
    embed: EmbedSettings | None = None,
    realms: Sequence[str] | None = None,
) -> CitedAnswer:
    """``query`` answered from the sources of ``config`` (default ``<home>/cited.toml``; with
    no file, this store alone), with citations, or an abstention. ``realms`` are the realms
    this store's sources read when the file names none (default: the API's realm)."""
    settings = load_cited_settings(config, home)
    chosen = list(realms) if realms else [chitta.realm] if chitta is not None else None
    if chosen:
        settings = replace(settings, sources=tuple(
            replace(s, options={**s.options, "realms": chosen})
            if s.kind == "chitta" and "realms" not in s.options else s
            for s in settings.sources
        ))  # fmt: skip
    sources = build_sources(settings, chitta, embed=embed)
    try:
        return cited_recall(sources, query, settings, limit=limit)
    finally:
        close_sources(sources)
