"""The chitta and chitta_file sources on real stores with the real model: found, gated under
UNKNOWN, several realms, another store file (opened here, missing, locked, served by a real
daemon), and no access history recorded.

The realms stay under 20 memories, so every word of a query that is not a stop word is
distinctive (recall/confidence/gate.py), as in tests/daemon/test_mcp_gate.py whose memories
these are.
"""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import pytest

from chitta.api import Chitta
from chitta.cited.base import SourceError
from chitta.cited.settings import CitedSettings, SourceConfig
from chitta.cited.sources import build_sources
from chitta.cited.sources.chitta_file import ChittaFileSource, socket_for
from chitta.cited.sources.chitta_store import ChittaStoreSource
from chitta.config import Settings
from chitta.embed.base import ModelIdentity
from chitta.store.sqlite import Store

DEMO, GARDEN = "demo", "garden"
DEMO_MEMORIES = {
    "wal": "We chose SQLite WAL over a custom log because crash recovery comes free",
    "deploy": "Never run deploy.sh on Fridays; use the staging pipeline instead",
    "fusion": "Recall fuses the keyword and semantic lanes with reciprocal rank fusion",
    "socket": "The daemon listens on a Unix socket inside the chitta home folder",
    "mocks": "Integration tests run against a real daemon process, never against mocks",
    "espresso": "The office espresso machine descaling is scheduled for Mondays",
}
GARDEN_MEMORIES = {
    "tomatoes": "Water the tomatoes every morning during July heat waves",
    "compost": "The compost bin sits behind the shed next to the rain barrel",
    "basil": "Basil grows best planted beside the tomatoes",
}
#: Nothing in the store is about baking; only "espresso" is shared, by one memory.
OFF_TOPIC = "What is a good recipe for banana bread with walnuts and espresso?"
#: Nothing shared at all.
NOTHING_SHARED = "What is a good recipe for banana bread with walnuts?"


def fill(chitta: Chitta) -> dict[str, str]:
    """The memories of realms demo and garden; their ids by name."""
    ids = {}
    for realm, memories in ((DEMO, DEMO_MEMORIES), (GARDEN, GARDEN_MEMORIES)):
        for name, content in memories.items():
            ids[name] = chitta.remember(content, realm=realm).id
    return ids


@pytest.fixture
def ids(chitta: Chitta) -> dict[str, str]:
    return fill(chitta)


def names(chunks, ids: dict[str, str]) -> list[str]:
    by_id = {v: k for k, v in ids.items()}
    return [by_id[c.ref] for c in chunks]


# --- this store ---------------------------------------------------------------------------------


def test_a_known_question_finds_its_memory(chitta: Chitta, ids) -> None:
    source = ChittaStoreSource("memory", chitta, realms=[DEMO])
    chunks = source.search("why did we choose SQLite WAL?", 5)
    assert names(chunks, ids)[0] == "wal"
    top = chunks[0]
    assert (top.source, top.rank, top.text) == ("memory", 1, DEMO_MEMORIES["wal"])
    assert top.meta["band"] == "KNOWN" and top.meta["admitted"] == "hyb"
    assert top.meta["realm"] == DEMO and top.meta["kind"] == "insight"
    assert "kw" in top.meta["lanes"]
    assert [c.rank for c in chunks] == list(range(1, len(chunks) + 1))
    assert [c.score for c in chunks] == sorted((c.score for c in chunks), reverse=True)


def test_under_unknown_only_rows_sharing_a_distinctive_word_are_returned(chitta, ids) -> None:
    ungated = chitta.recall(OFF_TOPIC, realm=DEMO, limit=5, record=False)
    assert ungated.confidence.band == "UNKNOWN" and len(ungated.hits) > 1
    source = ChittaStoreSource("memory", chitta, realms=[DEMO])
    (chunk,) = source.search(OFF_TOPIC, 5)
    assert names([chunk], ids) == ["espresso"]
    assert chunk.meta["band"] == "UNKNOWN" and chunk.meta["admitted"] == "shares-token"
    # Nothing shares a word: the store says nothing, so cited recall can abstain.
    assert chitta.recall(NOTHING_SHARED, realm=DEMO, limit=5, record=False).hits
    assert source.search(NOTHING_SHARED, 5) == []


def test_several_realms_are_merged_by_score(chitta: Chitta, ids) -> None:
    source = ChittaStoreSource("memory", chitta, realms=[DEMO, GARDEN])
    chunks = source.search("espresso machine and tomatoes", 10)
    found = names(chunks, ids)
    assert {"espresso", "tomatoes", "basil"} <= set(found)
    assert {c.meta["realm"] for c in chunks} == {DEMO, GARDEN}
    assert [c.rank for c in chunks] == list(range(1, len(chunks) + 1))
    assert [c.score for c in chunks] == sorted((c.score for c in chunks), reverse=True)
    assert len(source.search("espresso machine and tomatoes", 2)) == 2
    # One realm alone finds only its own.
    only = ChittaStoreSource("memory", chitta, realms=[GARDEN]).search("tomatoes", 10)
    assert {c.meta["realm"] for c in only} == {GARDEN}


def test_searches_record_no_access_history(chitta: Chitta, ids) -> None:
    source = ChittaStoreSource("memory", chitta, realms=[DEMO, GARDEN])
    for _ in range(3):
        assert source.search("why did we choose SQLite WAL?", 5)
    assert chitta.store.flush_access() == 0
    assert chitta.get(ids["wal"]).access_count == 0
    # The check can see a recorded access: a plain recall records one.
    chitta.recall("why did we choose SQLite WAL?", realm=DEMO, limit=5)
    assert chitta.store.flush_access() == 1
    assert chitta.get(ids["wal"]).access_count == 1


def test_without_an_open_store_the_source_says_so() -> None:
    with pytest.raises(SourceError, match="no chitta store is open"):
        ChittaStoreSource("memory", None).search("anything", 5)


def test_a_bad_realm_is_a_source_error(chitta: Chitta) -> None:
    with pytest.raises(SourceError, match=r"recall in realm '-bad' failed: bad realm"):
        ChittaStoreSource("memory", chitta, realms=["-bad"]).search("anything", 5)


# --- another store file ---------------------------------------------------------------------


@pytest.fixture
def other(tmp_path: Path, embedder) -> tuple[Path, dict[str, str]]:
    """Another store, ``notes.db`` in its own home, closed; its ids by name."""
    with Chitta.open(Settings(home=tmp_path / "other", store="notes"), embedder=embedder) as c:
        ids = fill(c)
    return tmp_path / "other" / "notes.db", ids


def test_another_store_file_is_opened_searched_and_closed(other, embedder) -> None:
    path, ids = other
    source = ChittaFileSource("other", path, embedder=lambda: embedder, realms=[DEMO, GARDEN])
    chunks = source.search("why did we choose SQLite WAL?", 5)
    assert names(chunks, ids)[0] == "wal"
    assert chunks[0].meta["via"] == "file" and chunks[0].meta["band"] == "KNOWN"
    assert names(source.search(OFF_TOPIC, 5), ids) == ["espresso"]  # the same gate
    assert source.search(NOTHING_SHARED, 5) == []
    # Closed after each search: the file can be opened again, and nothing was recorded.
    with Store(path, create=False) as store:
        assert store.get(ids["wal"]).access_count == 0


def test_a_missing_store_file_is_a_source_error_and_is_not_created(tmp_path, embedder) -> None:
    missing = tmp_path / "gone" / "nope.db"
    source = ChittaFileSource("other", missing, embedder=lambda: embedder)
    with pytest.raises(SourceError, match=r"no chitta store at .*nope\.db"):
        source.search("anything", 5)
    assert not missing.exists() and not missing.parent.exists()


def test_a_file_that_is_not_a_store_is_a_source_error(tmp_path: Path, embedder) -> None:
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not a database at all " * 200)
    with pytest.raises(SourceError, match=r"cannot open .*junk\.db"):
        ChittaFileSource("other", junk, embedder=lambda: embedder).search("anything", 5)


def test_a_store_of_another_model_is_a_source_error(tmp_path: Path, embedder) -> None:
    path = tmp_path / "foreign.db"
    with Store(path) as store:
        store.bind_model(ModelIdentity(name="other-model", dim=8, hash="0" * 64))
    source = ChittaFileSource("other", path, embedder=lambda: embedder)
    with pytest.raises(SourceError, match=r"recall in .*foreign\.db failed: .*other-model"):
        source.search("anything", 5)


def test_a_store_held_without_a_daemon_is_a_source_error(other, embedder) -> None:
    path, _ = other
    source = ChittaFileSource("other", path, embedder=lambda: embedder)
    held = r"is held by pid \d+.*no daemon answers on"
    # The Store holds the instance lock, as another process would.
    with Store(path, create=False), pytest.raises(SourceError, match=held):
        source.search("anything", 5)


def test_the_usual_socket_of_a_store_file() -> None:
    assert socket_for(Path("/h/default.db")) == Path("/h/chitta.sock")
    assert socket_for(Path("/h/notes.db")) == Path("/h/chitta-notes.sock")
    assert socket_for(Path("/h/notes.sqlite")) is None


@pytest.fixture
def served(other, launch) -> tuple[Path, dict[str, str], subprocess.Popen]:
    """The other store, served by a real daemon for the test."""
    path, ids = other
    return path, ids, launch(path.parent, store="notes")


def test_a_store_served_by_a_daemon_is_asked_through_it(served, embedder) -> None:
    path, ids, proc = served

    def no_embedder():
        raise AssertionError("a served store is not opened in this process")

    source = ChittaFileSource("other", path, embedder=no_embedder, realms=[DEMO, GARDEN])
    chunks = source.search("why did we choose SQLite WAL?", 5)
    assert names(chunks, ids)[0] == "wal"
    assert chunks[0].meta["via"] == "daemon" and chunks[0].meta["band"] == "KNOWN"
    (espresso,) = source.search(OFF_TOPIC, 5)  # the gate applies to the daemon's reply
    assert names([espresso], ids) == ["espresso"]
    assert espresso.meta["admitted"] == "shares-token"
    assert source.search(NOTHING_SHARED, 5) == []
    # The daemon recorded no access: stopping it writes whatever it had buffered.
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=30)
    with Store(path, create=False) as store:
        assert store.get(ids["wal"]).access_count == 0


def test_build_sources_maps_each_kind(tmp_path: Path, chitta: Chitta) -> None:
    settings = CitedSettings(
        sources=(
            SourceConfig("memory", "chitta", 1.0, {"realms": [DEMO], "strategy": "keyword"}),
            SourceConfig("other", "chitta_file", 0.9, {"path": str(tmp_path / "o.db")}),
            SourceConfig("notes", "markdown", 1.0, {"paths": [str(tmp_path / "M.md")]}),
            SourceConfig(
                "facts", "sqlite_fts", 0.7, {"path": "f.db", "table": "t", "column": "c"}
            ),  # fmt: skip
            SourceConfig("web", "http", 0.8, {"url": "http://127.0.0.1:9/s", "text": "t"}),
        ),
        source_timeout_s=2.0,
    )
    built = build_sources(settings, chitta)
    assert [(s.name, s.kind, s.priority) for s in built] == [
        ("memory", "chitta", 1.0),
        ("other", "chitta_file", 0.9),
        ("notes", "markdown", 1.0),
        ("facts", "sqlite_fts", 0.7),
        ("web", "http", 0.8),
    ]
    memory, other, _, facts, web = built
    assert memory.realms == (DEMO,) and memory.strategy == "keyword"
    assert other.gate == chitta.gate and other.timeout_s == 2.0
    assert facts.timeout_s == 2.0 and web.timeout_s == 2.0
    from chitta.errors import BadConfig

    with pytest.raises(BadConfig, match=r"source 'x' has an unknown kind 'redis'"):
        build_sources(CitedSettings(sources=(SourceConfig("x", "redis", 1.0),)), chitta)
