"""Shared fixtures: the real embedding model (loaded once), stores in temporary folders, and a
factory of valid memories."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from chitta.api import Chitta
from chitta.config import EmbedSettings, Settings
from chitta.daemon.client import daemon_answers
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


DAEMON_START_TIMEOUT_S = 60.0


def start_daemon(home: Path, *args: str, store: str | None = None) -> subprocess.Popen:
    """`chitta [--store S] serve ARGS` in ``home``, returned once its socket answers."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHITTA_", "CC_SOUL_"))}
    env["CHITTA_HOME"] = str(home)
    chosen = ("--store", store) if store else ()
    proc = subprocess.Popen(
        [sys.executable, "-m", "chitta", *chosen, "serve", *args],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    socket = Settings(home=home, store=store or "default").socket_path
    deadline = time.monotonic() + DAEMON_START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"chitta serve exited: {proc.stderr.read().decode()}")
        if daemon_answers(socket):
            return proc
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError("chitta serve did not start in time")


def stop_daemon(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@dataclass(frozen=True)
class Daemons:
    start: Callable[..., subprocess.Popen] = start_daemon
    stop: Callable[[subprocess.Popen], None] = stop_daemon


@pytest.fixture(scope="session")
def daemons() -> Daemons:
    """``start_daemon`` and ``stop_daemon`` as a fixture, for fixtures of any scope (a
    conftest's functions cannot be imported under --import-mode=importlib)."""
    return Daemons()


@pytest.fixture
def launch() -> Iterator[Callable[..., subprocess.Popen]]:
    """Start real daemons (``launch(home, *serve_args, store=None)``); every one still
    running is stopped after the test, whatever it did."""
    started: list[subprocess.Popen] = []

    def start(home: Path, *args: str, store: str | None = None) -> subprocess.Popen:
        proc = start_daemon(home, *args, store=store)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        stop_daemon(proc)
