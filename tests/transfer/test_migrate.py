"""chitta migrate: a whole store copied exactly (a round trip compares equal, record by record),
resumable after kill -9, refused cleanly (the model, a destination of its own, one store
twice, a missing source, an unwritable destination)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from chitta.api import Chitta
from chitta.config import Settings
from chitta.embed.base import ModelIdentity
from chitta.errors import (
    BadArgument,
    InProcessOnly,
    ModelMismatch,
    StoreLocked,
    StoreMissing,
    StoreNotEmpty,
    StoreReadOnly,
)
from chitta.ops import OPERATIONS
from chitta.store.access import AccessRecord
from chitta.store.backends import is_database_url, open_store
from chitta.store.base import Store
from chitta.store.records import Episode, Source, Triplet
from chitta.transfer.migrate import PRIVATE_META, migrate, migrate_locations

MODEL = ModelIdentity(name="test-model", dim=8, hash="0" * 64)


@pytest.fixture(params=["sqlite", "pg_url"])
def dst_location(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh destination of each backend: a SQLite file here; the PostgreSQL suite adds a
    ``pg_url`` parameter (a fresh database URL)."""
    if request.param == "sqlite":
        yield str(tmp_path / "dst" / "copy.db")
    else:  # pragma: no cover - the PostgreSQL backend's fixture
        yield request.getfixturevalue(request.param)


def snapshot(store: Store) -> dict[str, Any]:
    """Everything a store holds, as the protocol reads it: records, vector bytes, access
    history, replications, co-access rows, aliases, episodes, triplets, metadata, pieces."""
    memories = list(store.iter_memories(include_deleted=True))
    ids = [m.id for m in memories]
    meta = {k: v for k, v in store.meta_items().items() if k != "schema_version"}
    return {
        "memories": memories,
        "vectors": {i: v.astype(np.float32).tobytes() for i, v in store.vectors_for(ids).items()},
        "pieces": store.pieces_for(ids),
        "history": store.access_history(ids),
        "replications": store.replications(ids),
        "co_access": store.co_access_rows(ids),
        "triplets": store.triplets(),
        "aliases": store.aliases(),
        "episodes": store.episodes(),
        "meta": meta,
        "model": store.model_identity(),
        "counts": store.counts(),
    }


def _stock(c: Chitta) -> None:
    """A store with one of everything: forgotten and superseded memories, an episode, an
    invalidated triplet, an alias, a replication, access history and co-access, metadata."""
    store = c.store
    store.add_episodes([Episode(id="01EPISODE0000000000000000A", realm="demo", title="kickoff",
                                started_at=1_700_000_000_000, ended_at=1_700_000_360_000,
                                source=Source(session="s1"),
                                created_at=1_700_000_000_001)])  # fmt: skip
    a = c.remember("We chose SQLite WAL over a custom log", kind="wisdom", realm="demo",
                   tags="storage,decision", agent_id="bot", channel="dev",
                   source=Source(session="s1", url="https://example.org/x"),
                   event_time="2023-05-08T13:56:00Z").id  # fmt: skip
    b = c.remember("Alice prefers tabs over spaces in Python", kind="preference",
                   realm="demo").id  # fmt: skip
    c.strengthen(a)
    c.weaken(b)
    store.update(replace(c.get(a), episode_id="01EPISODE0000000000000000A"))
    d = c.remember("Alice switched to spaces after the style guide vote", realm="demo",
                   supersedes=b).id  # fmt: skip
    c.remember(
        "The deploy runs on Fridays at noon. It needs the VPN and two reviewers.", realm="ops"
    )  # its sentences' vectors too
    c.forget(d)
    store.add_triplets([
        Triplet(id="01TRIPLET0000000000000000A", realm="demo", subject="alice",
                predicate="prefers", object="tabs", weight=0.8, valid_from=1_700_000_000_000,
                invalidated_at=1_700_100_000_000, source_memory=b, created_at=1_700_000_000_000),
        Triplet(id="01TRIPLET0000000000000000B", realm="demo", subject="alice",
                predicate="prefers", object="spaces", weight=1.0, valid_from=1_700_100_000_000,
                invalidated_at=None, source_memory=d, created_at=1_700_100_000_000),
    ])  # fmt: skip
    store.add_alias("demo", "Al", "al", "alice", 1_700_000_000_500)
    store.add_replication(a, "s2", 1_700_000_200_000)
    store.record_access(AccessRecord((a, b), 1_700_000_300_000, (a, b), 0.03))
    store.record_access(AccessRecord((a,), 1_700_000_400_000))
    store.flush_access()
    store.set_meta("hook_shown:s1", json.dumps([a, b]))
    store.set_meta("calibration", json.dumps({"fitted": "by hand"}))


@pytest.fixture
def source(tmp_path: Path, embedder) -> str:
    """The location of a closed, stocked SQLite store (a migration opens it itself)."""
    settings = Settings(home=tmp_path / "src-home")
    with Chitta.open(settings, embedder=embedder) as c:
        _stock(c)
    return str(settings.store_path)


def _snap(location: str | Path) -> dict[str, Any]:
    with open_store(location, create=False) as store:
        return snapshot(store)


def test_a_round_trip_compares_equal(source: str, dst_location: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    first = migrate_locations(source, dst_location, home=home)
    back = str(tmp_path / "back" / "again.db")
    second = migrate_locations(dst_location, back, home=home)
    original = _snap(source)
    assert _snap(dst_location) == original
    assert _snap(back) == original
    for report in (first, second):
        assert report.complete and not any(report.skipped.values())
        assert report.copied == {"episodes": 1, "memories": 4, "vectors": 4, "pieces": 1,
                                 "access_times": 3, "replications": 1, "co_access": 1,
                                 "triplets": 2, "aliases": 1, "meta": 2}  # fmt: skip
    assert first.model == original["model"].as_dict()


def test_the_copy_is_the_store_a_chitta_reads(
    source: str, dst_location: str, tmp_path: Path, embedder
) -> None:
    migrate_locations(source, dst_location, home=tmp_path)
    with _open(dst_location, embedder, tmp_path / "home") as c:
        hits = c.recall("write-ahead log SQLite", realm="demo").hits
        assert hits and "SQLite WAL" in hits[0].memory.content


def _open(location: str, embedder, home: Path):
    """A Chitta over the store at ``location``: a database, or a file (its home is then the
    file's folder)."""
    if is_database_url(location):
        return Chitta.open(Settings(home=home, store=location), embedder=embedder)
    path = Path(location)
    return Chitta.open(Settings(home=path.parent, store=path.stem), embedder=embedder)


def test_running_again_copies_nothing(source: str, dst_location: str, tmp_path: Path) -> None:
    migrate_locations(source, dst_location, home=tmp_path)
    again = migrate_locations(source, dst_location, home=tmp_path)
    assert again.complete and not any(again.copied.values())
    assert again.skipped["memories"] == 4 and again.skipped["meta"] == 2
    assert _snap(dst_location) == _snap(source)


# --- interruption -------------------------------------------------------------------------

CHILD = textwrap.dedent("""
    import signal
    import sys
    import time
    from pathlib import Path
    from chitta.transfer.migrate import migrate_locations

    # A job started in the background of a non-interactive shell inherits SIGINT ignored
    # (POSIX), and Python then keeps it ignored: Ctrl-C's own handler, as a terminal has it.
    signal.signal(signal.SIGINT, signal.default_int_handler)

    def said(done, total):
        print(done, flush=True)
        # A pause a batch, so that the parent's signal lands mid-run however quiet the
        # machine: without it a fast run could finish all 40 batches first.
        time.sleep(0.05)

    migrate_locations(sys.argv[1], sys.argv[2], home=Path(sys.argv[3]), batch=int(sys.argv[4]),
                      progress=said)
""")


@pytest.fixture
def big_source(tmp_path: Path, make_memory) -> str:
    """4,000 memories with vectors (some forgotten, some with access history), made fast:
    straight through the store, with random unit vectors."""
    location = tmp_path / "big" / "src.db"
    rng = np.random.default_rng(7)
    with open_store(location) as store:
        store.bind_model(MODEL)
        for start in range(0, 4000, 500):
            items = []
            for i in range(start, start + 500):
                m = make_memory(f"fact {i} about the warehouse", realm=f"r{i % 3}",
                                access_count=i % 5,
                                deleted_at=1 if i % 7 == 0 else None)  # fmt: skip
                v = rng.standard_normal(MODEL.dim).astype(np.float32)
                items.append((m, v / np.linalg.norm(v), tuple(range(i % 4))))
            store.insert_exact(items)
        ids = [m.id for m in store.iter_memories(include_deleted=True)]
        store.put_co_access([(ids[i], ids[i + 1500], 0.25, 5) for i in range(0, 2000, 37)])
        for i in range(0, 4000, 101):
            store.add_replication(ids[i], "other", 9)
    return str(location)


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGINT])
def test_an_interrupted_run_resumes_to_the_same_end(
    big_source: str, dst_location: str, tmp_path: Path, how: signal.Signals
) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, big_source, dst_location, str(tmp_path), "100"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    assert child.stdout is not None
    for _ in range(3):  # three batches of 100 committed, the fourth or a later one under way
        assert child.stdout.readline()
    child.send_signal(how)
    child.wait(timeout=60)
    child.stdout.close()
    assert child.returncode != 0, "the migration ended before the signal"
    with open_store(dst_location, create=False) as dst:
        counts = dst.counts()
        partial = int(counts["memories"]) + int(counts["forgotten"])
    assert 300 <= partial < 4000

    report = migrate_locations(big_source, dst_location, home=tmp_path, batch=100)
    assert report.complete
    assert report.skipped["memories"] == partial
    assert report.copied["memories"] + partial == 4000
    assert _snap(dst_location) == _snap(big_source)


def test_progress_counts_every_memory(big_source: str, dst_location: str, tmp_path: Path) -> None:
    seen: list[tuple[int, int]] = []
    migrate_locations(big_source, dst_location, home=tmp_path, batch=1000,
                      progress=lambda done, total: seen.append((done, total)))  # fmt: skip
    assert seen == [(1000, 4000), (2000, 4000), (3000, 4000), (4000, 4000)]


# --- what the destination already holds ---------------------------------------------------


def test_a_destination_with_memories_of_its_own_needs_merge(
    source: str, tmp_path: Path, make_memory
) -> None:
    dst = tmp_path / "own" / "own.db"
    own = make_memory("the destination's own memory", realm="mine")
    with open_store(dst) as store:
        store.insert([(own, None)])
        store.set_meta("calibration", "the destination's own fit")
    with pytest.raises(StoreNotEmpty, match="--merge"):
        migrate_locations(source, str(dst), home=tmp_path)
    with open_store(dst, create=False) as store:  # refused before anything was written
        assert [m.id for m in store.iter_memories(include_deleted=True)] == [own.id]
        assert store.model_identity() is None

    report = migrate_locations(source, str(dst), home=tmp_path, merge=True)
    assert report.complete and report.merged
    assert report.skipped["meta"] == 1 and report.copied["meta"] == 1
    merged, original = _snap(dst), _snap(source)
    assert merged["memories"] == sorted([own, *original["memories"]], key=lambda m: m.id)
    assert merged["meta"]["calibration"] == "the destination's own fit"
    assert merged["meta"]["hook_shown:s1"] == original["meta"]["hook_shown:s1"]
    assert merged["triplets"] == original["triplets"]


def test_a_destination_of_another_model_is_refused_before_any_write(
    source: str, tmp_path: Path
) -> None:
    dst = tmp_path / "other" / "other.db"
    with open_store(dst) as store:
        store.bind_model(MODEL)
    with pytest.raises(ModelMismatch, match="test-model"):
        migrate_locations(source, str(dst), home=tmp_path, merge=True)
    with open_store(dst, create=False) as store:
        assert store.model_identity() == MODEL
        assert store.counts()["memories"] == 0 and store.meta_items().keys() <= PRIVATE_META


# --- refusals -----------------------------------------------------------------------------


def test_a_missing_source_is_store_missing(tmp_path: Path) -> None:
    with pytest.raises(StoreMissing):
        migrate_locations(str(tmp_path / "none.db"), str(tmp_path / "dst.db"), home=tmp_path)
    assert not (tmp_path / "dst.db").exists()


def test_one_store_twice_is_refused(source: str, tmp_path: Path) -> None:
    home = Path(source).parent
    for dst in (source, str(Path(source).parent / "." / Path(source).name), "default"):
        with pytest.raises(BadArgument, match="same store"):
            migrate_locations(source, dst, home=home)
    link = tmp_path / "link.db"
    link.symlink_to(source)
    with pytest.raises(BadArgument, match="same store"):
        migrate_locations(str(link), source, home=home)


def test_a_store_another_process_holds_is_refused_before_any_write(
    source: str, tmp_path: Path
) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom chitta.store.backends import open_store\n"
         "s = open_store(sys.argv[1]); print('held', flush=True); time.sleep(60)", source],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        with pytest.raises(StoreLocked, match=str(holder.pid)):
            migrate_locations(source, str(tmp_path / "dst.db"), home=tmp_path)
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()
    assert not (tmp_path / "dst.db").exists()


def test_a_store_name_names_a_store_under_the_home(source: str, tmp_path: Path) -> None:
    home = Path(source).parent
    report = migrate_locations("default", "copy", home=home)
    assert report.complete and report.destination.endswith("copy.db")
    assert _snap(home / "copy.db") == _snap(source)


def test_an_unwritable_destination_is_the_stores_error(
    source: str, ro_folder: Path, read_only
) -> None:
    with open_store(ro_folder / "there.db"):
        pass
    read_only(ro_folder)
    for name in ("there.db", "new.db"):  # an existing store, and one to be made
        with pytest.raises(StoreReadOnly, match="read-only"):
            migrate_locations(source, str(ro_folder / name), home=ro_folder.parent)


def test_a_batch_must_hold_a_memory(tmp_path: Path) -> None:
    with (open_store(tmp_path / "a.db") as a, open_store(tmp_path / "b.db") as b,
          pytest.raises(BadArgument)):  # fmt: skip
        migrate(a, b, batch=0)


def test_the_daemon_does_not_run_it(chitta: Chitta) -> None:
    with pytest.raises(InProcessOnly):
        OPERATIONS["migrate"].call(chitta, {"source": "a.db", "destination": "b.db"})


# --- the command --------------------------------------------------------------------------


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHITTA_", "CC_SOUL_"))}
    env["CHITTA_HOME"] = str(home)
    return subprocess.run([sys.executable, "-m", "chitta", *args], capture_output=True,
                          text=True, env=env, timeout=300)  # fmt: skip


def test_the_command_reports_per_table(source: str, tmp_path: Path) -> None:
    dst = tmp_path / "cli" / "copy.db"
    done = _cli(tmp_path / "home", "migrate", source, str(dst), "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["complete"] and data["copied"]["memories"] == 4
    said = _cli(tmp_path / "home", "migrate", source, str(dst))
    assert said.returncode == 0
    assert "memories: 0 copied, 4 already there" in said.stderr


def test_the_command_fails_without_a_traceback(source: str, tmp_path: Path) -> None:
    missing = _cli(tmp_path, "migrate", str(tmp_path / "none.db"), str(tmp_path / "x.db"),
                   "--json")  # fmt: skip
    assert missing.returncode == 4 and "Traceback" not in missing.stderr
    assert json.loads(missing.stdout)["error"] == "store_missing"
    same = _cli(tmp_path, "migrate", source, source)
    assert same.returncode == 2 and "same store" in same.stderr
    assert "Traceback" not in same.stderr
