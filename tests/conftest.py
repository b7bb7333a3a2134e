"""Shared fixtures: the real embedding model (loaded once) and stores in temporary folders."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from chitta.api import Chitta
from chitta.config import EmbedSettings, Settings
from chitta.embed.cache import CachedEmbedder
from chitta.embed.loader import build_embedder


@pytest.fixture(scope="session")
def embedder() -> CachedEmbedder:
    """The real default model (int8 all-MiniLM-L6-v2), shared by every test."""
    return build_embedder(EmbedSettings())


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Settings pointing at a fresh data directory."""
    return Settings(home=tmp_path / "home")


@pytest.fixture
def chitta(settings: Settings, embedder: CachedEmbedder) -> Iterator[Chitta]:
    """An open store in a temporary folder, using the shared real embedder."""
    with Chitta.open(settings, embedder=embedder) as c:
        yield c
