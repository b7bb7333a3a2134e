"""Shared fixtures: the real embedding model (loaded once), stores in temporary folders, and a
factory of valid memories."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from chitta.api import Chitta
from chitta.config import EmbedSettings, Settings
from chitta.embed.cache import CachedEmbedder
from chitta.embed.loader import build_embedder
from chitta.store.confidence import Confidence
from chitta.store.ids import new_id
from chitta.store.kinds import Kind
from chitta.store.records import Memory, Source
from chitta.store.sqlite import Store

MakeMemory = Callable[..., Memory]


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


def memory(content: str, **fields: object) -> Memory:
    """A valid live memory in realm 'work'; ``fields`` override any attribute."""
    now = int(time.time() * 1000)
    base = Memory(
        id=new_id(now),
        kind=Kind.INSIGHT,
        content=content,
        realm="work",
        agent_id="",
        channel="",
        tags=(),
        source=Source(),
        created_at=now,
        updated_at=now,
        event_time=None,
        confidence=Confidence.initial(0.01),
        strength=0.7,
        tier="hot",
        decayed_at=now,
    )
    return replace(base, **fields)


@pytest.fixture
def make_memory() -> MakeMemory:
    return memory


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    return tmp_path / "data" / "store.db"


@pytest.fixture
def store(store_path: Path) -> Iterator[Store]:
    with Store(store_path) as s:
        yield s
