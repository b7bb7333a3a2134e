"""The SQLite store: files, durability settings, CRUD, indexes, scope, locking, backups."""

from __future__ import annotations

import hashlib
import itertools
import os
import sqlite3
import stat
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from chitta.embed.base import ModelIdentity
from chitta.embed.cache import CachedEmbedder
from chitta.errors import (
    MemoryNotFound,
    ModelMismatch,
    SchemaTooNew,
    StoreCorrupt,
    StoreError,
    StoreLocked,
    StoreMissing,
)
from chitta.store.confidence import Confidence
from chitta.store.ids import new_id
from chitta.store.kinds import Kind
from chitta.store.records import Episode, Memory, Scope, Source, Triplet
from chitta.store.sqlite import Store, migrations

MakeMemory = Callable[..., Memory]

OPEN_STORE = """
import sys
from pathlib import Path
from chitta.store.sqlite import Store
Store(Path(sys.argv[1])).close()
print("opened")
"""


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def vec(embedder: CachedEmbedder, text: str) -> np.ndarray:
    return embedder.embed([text]).vectors[0]


def add(store: Store, embedder: CachedEmbedder, m: Memory) -> Memory:
    """Insert ``m`` with its real embedding."""
    store.insert([(m, vec(embedder, m.content))])
    return m


def fts_rowids(store: Store, term: str) -> list[int]:
    """Rowids the FTS index itself holds for ``term`` (no join with memories)."""
    rows = store._query("SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?", (term,))
    return [r[0] for r in rows]


def fts_check(store: Store) -> None:
    """FTS5's own consistency check against the content table; raises if out of step."""
    with store.transaction() as conn:
        conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('integrity-check')")


def keyword_ids(store: Store, term: str, scope: Scope | None = None) -> set[str]:
    return {mid for mid, _ in store.keyword_search([term], scope or Scope("work"), 100)}


def vector_ids(store: Store, query: np.ndarray, scope: Scope | None = None) -> set[str]:
    return {mid for mid, _ in store.vector_index().search(query, scope or Scope("work"), 100)}


# --- the file ------------------------------------------------------------------------------------


def test_new_store_file_is_owner_only(tmp_path: Path) -> None:
    """A new store is 0600 in a new 0700 folder, its write-ahead log too."""
    path = tmp_path / "fresh" / "store.db"
    with Store(path) as s:
        s.set_meta("probe", "1")
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        wal = path.with_name(path.name + "-wal")
        assert stat.S_IMODE(wal.stat().st_mode) == 0o600


def test_store_files_are_owner_only_whatever_the_umask_or_their_old_bits(
    tmp_path: Path, umask0
) -> None:
    path = tmp_path / "new" / "nested" / "store.db"
    files = [path.with_name(path.name + suffix) for suffix in ("", "-wal", "-shm", ".lock")]
    with Store(path) as s:
        s.set_meta("probe", "1")
        assert [stat.S_IMODE(f.stat().st_mode) for f in files] == [0o600] * 4
        for folder in (path.parent, path.parent.parent):
            assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    path.chmod(0o644)  # a store copied in, or made by hand, with wider bits
    with Store(path) as s:
        s.set_meta("probe", "2")
        assert [stat.S_IMODE(f.stat().st_mode) for f in files[:3]] == [0o600] * 3


def test_wal_and_synchronous_full(store: Store, store_path: Path) -> None:
    """The connection runs WAL (recorded in the file) with synchronous=FULL."""
    assert store._conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store._conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    other = sqlite3.connect(store_path)
    try:
        assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        other.close()


def test_missing_store_without_create_makes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "nowhere" / "store.db"
    with pytest.raises(StoreMissing, match="no store at"):
        Store(path, create=False)
    assert not path.exists()
    assert not path.parent.exists()


def test_random_bytes_are_corrupt_and_untouched(tmp_path: Path) -> None:
    path = tmp_path / "junk.db"
    path.write_bytes(np.random.default_rng(7).bytes(8192))
    before = sha256(path)
    with pytest.raises(StoreCorrupt):
        Store(path)
    with pytest.raises(StoreCorrupt):
        Store(path, create=False)
    assert sha256(path) == before


def test_foreign_sqlite_file_is_refused_and_untouched(tmp_path: Path) -> None:
    """A SQLite file of another program is refused, and not switched to WAL behind its back."""
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE recipes (name TEXT)")
    conn.execute("INSERT INTO recipes VALUES ('soup')")
    conn.commit()
    conn.close()
    before = sha256(path)
    with pytest.raises(StoreCorrupt, match="not a chitta store"):
        Store(path)
    assert sha256(path) == before
    # The failed open let go of the lock and left the file usable by its owner.
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT name FROM recipes").fetchall() == [("soup",)]
    conn.close()


def test_schema_too_new_is_refused(store_path: Path) -> None:
    Store(store_path).close()
    conn = sqlite3.connect(store_path)
    with conn:
        conn.execute(
            "UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(migrations.LATEST + 1),)
        )
    conn.close()
    with pytest.raises(SchemaTooNew, match=str(migrations.LATEST + 1)):
        Store(store_path)
    # Nothing was migrated "down", and the lock was released by the failed open.
    conn = sqlite3.connect(store_path)
    with conn:
        version = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        assert version == (str(migrations.LATEST + 1),)
        conn.execute(
            "UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(migrations.LATEST),)
        )
    conn.close()
    Store(store_path).close()


# --- model identity ------------------------------------------------------------------------------


def test_bind_model_refuses_another_model(store_path: Path) -> None:
    mine = ModelIdentity("all-MiniLM-L6-v2-int8", 384, "a" * 64)
    theirs = ModelIdentity("bge-small-en", 384, "b" * 64)
    with Store(store_path) as s:
        s.bind_model(mine)
        s.bind_model(mine)  # the same model again is fine
    with Store(store_path) as s:
        assert s.model_identity() == mine
        with pytest.raises(ModelMismatch) as info:
            s.bind_model(theirs)
        message = str(info.value)
        assert "all-MiniLM-L6-v2-int8" in message
        assert "bge-small-en" in message
        assert "chitta reembed" in message
        assert s.model_identity() == mine


def test_vectors_inserted_after_late_bind_are_searchable(
    store: Store, embedder: CachedEmbedder, make_memory: MakeMemory
) -> None:
    """An index built before the store knew its model does not break later inserts."""
    assert store.vector_index().search(vec(embedder, "anything"), Scope("work"), 5) == []
    store.bind_model(embedder.identity())
    m = add(store, embedder, make_memory("The office coffee machine descales on Fridays"))
    assert vector_ids(store, vec(embedder, "coffee machine")) == {m.id}


# --- memories ------------------------------------------------------------------------------------


def test_insert_get_round_trips_every_field(store: Store, make_memory: MakeMemory) -> None:
    episode = Episode(
        id=new_id(),
        realm="work",
        title="planning call",
        started_at=1_700_000_000_000,
        ended_at=1_700_000_360_000,
        source=Source(session="s-1"),
        created_at=1_700_000_400_000,
    )
    store.add_episodes([episode])
    full = make_memory(
        "Käthe prefers tabs over spaces 🙂",
        kind=Kind.PREFERENCE,
        realm="work",
        agent_id="claude",
        channel="slack",
        tags=("style", "editor"),
        source=Source(session="s-1", file="notes.md", url="https://example.org/x", ref="R-9"),
        created_at=1_700_000_000_123,
        updated_at=1_700_000_100_456,
        event_time=1_600_000_000_000,
        confidence=Confidence(mu=0.8125, sigma_sq=0.0123, n=3, tau=0.01),
        strength=0.4375,
        tier="warm",
        access_count=7,
        last_accessed=1_700_000_200_000,
        decayed_at=1_700_000_150_000,
        supersedes=None,
        superseded_by=new_id(),
        episode_id=episode.id,
        truncated=True,
    )
    gone = make_memory("an old forgotten thing", deleted_at=1_700_000_300_000, tags=())
    store.insert([(full, None), (gone, None)])
    assert store.get(full.id) == full
    assert store.get(gone.id, include_deleted=True) == gone
    assert store.get_many([full.id, gone.id]) == {full.id: full}


def test_get_missing_id_raises(store: Store) -> None:
    with pytest.raises(MemoryNotFound, match="does not exist"):
        store.get(new_id())
    assert store.get_many([new_id()]) == {}
    assert not store.exists(new_id())


@pytest.mark.parametrize("index_first", [True, False], ids=["index-built-before", "index-after"])
def test_soft_delete_hides_and_restore_brings_back(
    store: Store, embedder: CachedEmbedder, make_memory: MakeMemory, index_first: bool
) -> None:
    store.bind_model(embedder.identity())
    if index_first:
        store.vector_index()
    target = add(store, embedder, make_memory("The giraffe at the zoo eats acacia leaves"))
    other = add(store, embedder, make_memory("Quarterly taxes are due in April"))
    query = vec(embedder, "giraffe acacia")

    store.set_deleted(target.id, 1_700_000_000_000)
    with pytest.raises(MemoryNotFound, match="forgotten"):
        store.get(target.id)
    assert store.get(target.id, include_deleted=True).deleted_at == 1_700_000_000_000
    assert store.get_many([target.id, other.id]).keys() == {other.id}
    assert vector_ids(store, query) == {other.id}
    assert keyword_ids(store, "giraffe") == set()

    store.set_deleted(target.id, None)
    assert store.get(target.id) == target
    assert store.get_many([target.id, other.id]).keys() == {target.id, other.id}
    assert target.id in vector_ids(store, query)
    assert store.vector_index().search(query, Scope("work"), 1)[0][0] == target.id
    assert keyword_ids(store, "giraffe") == {target.id}


def test_soft_delete_survives_reopen(
    store_path: Path, embedder: CachedEmbedder, make_memory: MakeMemory
) -> None:
    with Store(store_path) as s:
        s.bind_model(embedder.identity())
        m = add(s, embedder, make_memory("The giraffe at the zoo eats acacia leaves"))
        s.set_deleted(m.id, 1_700_000_000_000)
    with Store(store_path) as s:
        assert vector_ids(s, vec(embedder, "giraffe")) == set()
        s.set_deleted(m.id, None)
        assert vector_ids(s, vec(embedder, "giraffe")) == {m.id}


def test_purge_removes_row_vector_fts_and_links(
    store: Store, embedder: CachedEmbedder, make_memory: MakeMemory
) -> None:
    store.bind_model(embedder.identity())
    store.vector_index()
    a = add(store, embedder, make_memory("The deploy runs on Jenkins"))
    b = add(store, embedder, make_memory("The deploy runs on Buildkite", supersedes=a.id))
    c = add(store, embedder, make_memory("The deploy runs on GitHub Actions", supersedes=b.id))
    triplet = Triplet(new_id(), "work", "deploy", "runs_on", "buildkite", 1.0, 1, None, b.id, 1)
    store.add_triplets([triplet])
    assert store.get(a.id).superseded_by == b.id
    assert store.get(b.id).superseded_by == c.id
    assert fts_rowids(store, "buildkite")

    store.purge(b.id)

    assert not store.exists(b.id)
    with pytest.raises(MemoryNotFound):
        store.get(b.id, include_deleted=True)
    assert store.vectors_for([a.id, b.id, c.id]).keys() == {a.id, c.id}
    assert b.id not in vector_ids(store, vec(embedder, "deploy Buildkite"))
    assert keyword_ids(store, "buildkite") == set()
    assert fts_rowids(store, "buildkite") == []
    fts_check(store)
    assert store.get(a.id).superseded_by is None
    assert store.get(c.id).supersedes is None
    assert store.triplets()[0].source_memory is None
    with pytest.raises(MemoryNotFound):
        store.purge(b.id)


def test_purge_of_a_forgotten_memory(
    store: Store, embedder: CachedEmbedder, make_memory: MakeMemory
) -> None:
    store.bind_model(embedder.identity())
    m = add(store, embedder, make_memory("Parking is on level minus two"))
    store.set_deleted(m.id, 1)
    store.purge(m.id)
    assert not store.exists(m.id)
    assert store.counts()["forgotten"] == 0
    assert fts_rowids(store, "parking") == []


def test_fts_follows_updates(store: Store, make_memory: MakeMemory) -> None:
    m = make_memory("The zebra crossing is on Elm street", tags=("oldtag",))
    store.insert([(m, None)])
    assert keyword_ids(store, "zebra") == {m.id}
    assert keyword_ids(store, "oldtag") == {m.id}

    store.update(replace(m, content="The walrus lives on Oak street", tags=("newtag",)))

    assert keyword_ids(store, "zebra") == set()
    assert keyword_ids(store, "oldtag") == set()
    assert fts_rowids(store, "zebra") == []
    assert keyword_ids(store, "walrus") == {m.id}
    assert keyword_ids(store, "newtag") == {m.id}
    assert keyword_ids(store, "street") == {m.id}
    fts_check(store)

    store.update_many([replace(m, content="The heron nests by the river", tags=())])
    assert keyword_ids(store, "walrus") == set()
    assert keyword_ids(store, "heron") == {m.id}
    fts_check(store)


def test_update_of_missing_memory_raises(store: Store, make_memory: MakeMemory) -> None:
    with pytest.raises(MemoryNotFound):
        store.update(make_memory("never inserted"))
    assert store.counts()["memories"] == 0


# --- scope ---------------------------------------------------------------------------------------

REALMS = ("work", "home")
AGENTS = ("", "ann", "bob")
CHANNELS = ("", "slack")
WORDS = [
    "apple",
    "banana",
    "cherry",
    "damson",
    "elder",
    "fig",
    "grape",
    "hazel",
    "iris",
    "jasmine",
    "kiwi",
    "lemon",
]


def test_keyword_and_vector_search_respect_scope(
    store: Store, embedder: CachedEmbedder, make_memory: MakeMemory
) -> None:
    store.bind_model(embedder.identity())
    placed: dict[tuple[str, str, str], str] = {}
    cells = itertools.product(REALMS, AGENTS, CHANNELS)
    for word, (realm, agent, channel) in zip(WORDS, cells, strict=True):
        m = make_memory(
            f"The kettle note about {word} for {agent or 'nobody'} in {channel or 'no channel'}",
            realm=realm,
            agent_id=agent,
            channel=channel,
        )
        add(store, embedder, m)
        placed[(realm, agent, channel)] = m.id
    query = vec(embedder, "kettle note")

    for realm, agent, channel in itertools.product(
        (*REALMS, "elsewhere"), (*AGENTS, None, "nobody-here"), (*CHANNELS, None)
    ):
        scope = Scope(realm, agent, channel)
        expected = {
            mid
            for (r, a, c), mid in placed.items()
            if r == realm and agent in (None, a) and channel in (None, c)
        }
        assert keyword_ids(store, "kettle", scope) == expected, scope
        assert vector_ids(store, query, scope) == expected, scope


# --- the instance lock ---------------------------------------------------------------------------


def test_second_store_in_same_process_is_locked(store_path: Path) -> None:
    first = Store(store_path)
    with pytest.raises(StoreLocked) as info:
        Store(store_path)
    assert info.value.pid == os.getpid()
    assert f"held by pid {os.getpid()}" in str(info.value)
    first.set_meta("still", "usable")  # the refused second open did not break the first
    first.close()
    with Store(store_path) as again:
        assert again.meta("still") == "usable"


def test_second_process_is_locked_out_until_close(store_path: Path) -> None:
    def open_in_child() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", OPEN_STORE, str(store_path)],
            capture_output=True,
            text=True,
            timeout=60,
        )

    s = Store(store_path)
    child = open_in_child()
    assert child.returncode != 0
    assert "StoreLocked" in child.stderr
    assert f"held by pid {os.getpid()}" in child.stderr
    assert "opened" not in child.stdout
    s.close()
    child = open_in_child()
    assert child.returncode == 0, child.stderr
    assert child.stdout.strip() == "opened"


# --- backup and restore --------------------------------------------------------------------------


def all_memories(store: Store) -> list[Memory]:
    return list(store.iter_memories(include_deleted=True))


def test_backup_is_an_openable_copy(
    store: Store, embedder: CachedEmbedder, make_memory: MakeMemory, tmp_path: Path
) -> None:
    store.bind_model(embedder.identity())
    kept = add(store, embedder, make_memory("Invoices go to accounts@example.org"))
    add(store, embedder, make_memory("The wifi password rotates monthly"))
    store.set_deleted(add(store, embedder, make_memory("A forgotten note")).id, 5)
    dest = tmp_path / "backups" / "copy.db"

    store.backup_to(dest)

    assert stat.S_IMODE(dest.stat().st_mode) == 0o600
    with Store(dest, create=False) as copy:
        assert all_memories(copy) == all_memories(store)
        assert copy.model_identity() == embedder.identity()
        assert copy.integrity_check() == "ok"
        assert keyword_ids(copy, "invoices") == {kept.id}
        best = copy.vector_index().search(vec(embedder, "invoice email"), Scope("work"), 1)
        assert best[0][0] == kept.id


def test_restore_brings_back_backup_and_keeps_old_contents(
    store: Store, embedder: CachedEmbedder, make_memory: MakeMemory, tmp_path: Path
) -> None:
    store.bind_model(embedder.identity())
    old = add(store, embedder, make_memory("The server room code is on the blue card"))
    backup = tmp_path / "b.db"
    store.backup_to(backup)
    store.purge(old.id)
    new = add(store, embedder, make_memory("Lunch orders close at eleven"))
    store.vector_index()

    saved = store.restore_from(backup)

    assert saved.name.startswith(f"{store.path.name}.pre-restore-")
    assert [m.id for m in all_memories(store)] == [old.id]
    assert store.get(old.id) == old
    assert keyword_ids(store, "server") == {old.id}
    assert keyword_ids(store, "lunch") == set()
    assert vector_ids(store, vec(embedder, "lunch orders")) == {old.id}  # index was rebuilt
    assert store.integrity_check() == "ok"
    with Store(saved, create=False) as previous:
        assert [m.id for m in all_memories(previous)] == [new.id]


def test_restores_in_one_second_keep_every_previous_content(
    store: Store, make_memory: MakeMemory, tmp_path: Path
) -> None:
    first = make_memory("first contents")
    store.insert([(first, None)])
    empty_backup = tmp_path / "empty.db"
    with Store(tmp_path / "other.db") as other:
        other.backup_to(empty_backup)
    saved_one = store.restore_from(empty_backup)
    store.insert([(make_memory("second contents"), None)])
    saved_two = store.restore_from(empty_backup)
    assert saved_one != saved_two
    with Store(saved_one, create=False) as s:
        assert [m.id for m in all_memories(s)] == [first.id]


@pytest.mark.parametrize("kind", ["random-bytes", "foreign-sqlite", "empty-sqlite"])
def test_restore_refuses_a_bad_backup_and_keeps_the_store(
    store: Store, make_memory: MakeMemory, tmp_path: Path, kind: str
) -> None:
    m = make_memory("Keep me through a failed restore")
    store.insert([(m, None)])
    bad = tmp_path / "bad.db"
    if kind == "random-bytes":
        bad.write_bytes(np.random.default_rng(1).bytes(16384))
    else:
        conn = sqlite3.connect(bad)
        if kind == "foreign-sqlite":
            conn.execute("CREATE TABLE t (x)")
        conn.execute("PRAGMA user_version = 1")
        conn.commit()
        conn.close()
    with pytest.raises(StoreCorrupt):
        store.restore_from(bad)
    assert [x.id for x in all_memories(store)] == [m.id]
    assert store.integrity_check() == "ok"
    assert not list(tmp_path.rglob("*.pre-restore-*"))


def test_restore_of_missing_backup(store: Store, tmp_path: Path) -> None:
    with pytest.raises(StoreMissing):
        store.restore_from(tmp_path / "absent.db")


def test_close_releases_the_file_even_when_flushing_fails(store_path, make_memory) -> None:
    store = Store(store_path)
    kept = make_memory("a memory to keep safe")
    store.insert([(kept, None)])

    def failing_flush() -> None:
        raise sqlite3.OperationalError("disk I/O error")

    store._access.close = failing_flush  # a flush that fails, as on a full disk
    with pytest.raises(sqlite3.OperationalError):
        store.close()
    with Store(store_path) as again:  # the instance lock was released
        assert again.get(kept.id).content == "a memory to keep safe"


def test_a_read_on_another_thread_does_not_wait_for_a_write_in_progress(store, make_memory):
    """Readers have connections of their own: a write holding the store's lock does not hold
    them up, and they see the last committed state (WAL snapshot isolation)."""
    import threading

    kept = make_memory("a memory being strengthened")
    store.insert([(kept, None)])
    seen: list[float] = []
    with store.transaction() as conn:
        conn.execute("UPDATE memories SET strength = 0.1 WHERE id = ?", (kept.id,))
        reader = threading.Thread(target=lambda: seen.append(store.get(kept.id).strength))
        reader.start()
        reader.join(timeout=30)
        assert not reader.is_alive()  # it finished while the write was still open
    assert seen == [kept.strength]  # the committed value, not the one being written
    assert store.get(kept.id).strength == 0.1


def test_a_read_after_close_says_the_store_is_closed(store_path, make_memory) -> None:
    store = Store(store_path)
    kept = make_memory("read once before the close")
    store.insert([(kept, None)])
    assert store.get(kept.id).id == kept.id  # this thread now has a read connection
    store.close()
    with pytest.raises(StoreError, match="is closed"):
        store.get(kept.id)


def test_readers_of_ended_threads_are_closed(store, store_path, make_memory) -> None:
    """Short-lived threads that read (cited recall's per-call source pool in the daemon)
    leave no open connection behind: the file descriptors on the store stay bounded."""
    import threading

    kept = make_memory("read from many short-lived threads")
    store.insert([(kept, None)])

    def open_on_store() -> int:
        fds = Path("/proc/self/fd")
        names = (str(store_path), f"{store_path}-wal")
        return sum(1 for fd in fds.iterdir() if os.path.realpath(fd) in names)

    def read_in_threads(count: int) -> int:
        for _ in range(count):
            reader = threading.Thread(target=lambda: store.get(kept.id))
            reader.start()
            reader.join(timeout=30)
        return open_on_store()

    before = open_on_store()
    # The last thread's reader stays open until the next new one closes it, and SQLite may
    # keep one closed descriptor for reuse (POSIX locks are per process): a few, not 50.
    settled = read_in_threads(10)
    assert read_in_threads(40) == settled <= before + 4
    assert store.get(kept.id).id == kept.id  # this thread still reads


def test_no_error_of_sqlites_leaves_the_store(store: Store, tmp_path: Path) -> None:
    """An SQLite error the mapping has no meaning for (here a query of a table that is not
    there) is a StoreError naming the store, SQLite's own error its cause."""
    with pytest.raises(StoreError, match=str(store.path)) as caught:
        store._query("SELECT * FROM no_such_table")
    assert isinstance(caught.value.__cause__, sqlite3.OperationalError)
    with pytest.raises(StoreError, match="SQLite failed"), store.transaction() as conn:
        conn.execute("INSERT INTO no_such_table VALUES (1)")
    store.set_meta("still", "writable")  # the failed transaction was rolled back
    assert store.meta("still") == "writable"
