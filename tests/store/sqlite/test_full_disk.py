"""A full disk: every write refused as ``store_full`` naming the store, reads working, writes
taken again once there is space, nothing acknowledged lost and the file intact.

Two ways to fill it: SQLite's ``max_page_count`` on the store's own connection (no root
needed: SQLite then fails a write needing a new page with SQLITE_FULL, the error a full disk
gives), and a real small tmpfs filled by a file (where the test may mount one)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from chitta.api import Chitta
from chitta.config import Settings
from chitta.daemon.client import DaemonClient
from chitta.errors import ChittaError, StoreFull
from chitta.store.access import AccessRecord
from chitta.store.sqlite import Store

FACT = "the build of project {i} uses ninja, cmake and a pinned compiler version {i}"


def cap(store: Store) -> None:
    """Let the store's file grow no further than it is now."""
    pages = store._conn.execute("PRAGMA page_count").fetchone()[0]
    store._conn.execute(f"PRAGMA max_page_count = {pages}")


def uncap(store: Store) -> None:
    store._conn.execute("PRAGMA max_page_count = 1073741823")


def until_full(write: Callable[[int], object], attempts: int = 400) -> tuple[list, StoreFull]:
    """Call ``write(0)``, ``write(1)``, … until it is refused as full: what each accepted call
    returned, and the refusal. Any other error fails the test."""
    done = []
    for i in range(attempts):
        try:
            done.append(write(i))
        except StoreFull as exc:
            return done, exc
    raise AssertionError(f"{attempts} writes fitted on a full store")


def intact(path: Path, ids: list[str]) -> None:
    """The store at ``path`` passes SQLite's integrity check and holds every id in ``ids``."""
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        stored = {r[0] for r in conn.execute("SELECT id FROM memories")}
    finally:
        conn.close()
    assert set(ids) <= stored, set(ids) - stored


def test_every_write_path_says_store_full_and_resumes(settings: Settings, embedder) -> None:
    with Chitta.open(settings, embedder=embedder, through_daemon=False) as c:
        ids = [c.remember(FACT.format(i=i)).id for i in range(3)]
        cap(c.store)
        more, full = until_full(lambda i: c.remember(FACT.format(i=100 + i) + " more").id)
        ids += more
        assert full.code == "store_full" and full.exit_code == 4
        assert str(settings.store_path) in str(full) and "is full" in str(full)
        # Each other write either fits or is refused the same way, never a sqlite3 error.
        until_full(lambda i: c.relations.add(f"project {i}", "uses", f"tool {i}", realm="w"))
        until_full(lambda i: c.store.set_meta(f"filler {i}", "x" * 2000))
        for mid in ids[:2]:
            try:
                c.forget(mid)
                c.restore(mid)
            except StoreFull:
                pass
        # Reads keep working, and recall does not fail for the access history it keeps.
        assert c.get(ids[0]).content == FACT.format(i=0)
        assert c.recall("which build tool does project 1 use?").hits
        assert c.status()["memories"] >= len(ids)
        # Space comes back: writes are taken again on the same open store.
        uncap(c.store)
        ids.append(c.remember("written once the disk had room again").id)
        edge = c.relations.add("chitta", "stores", "memories", realm="w").triplet.id
    intact(settings.store_path, ids)
    conn = sqlite3.connect(settings.store_path)
    assert conn.execute("SELECT 1 FROM triplets WHERE id = ?", (edge,)).fetchone()
    conn.close()


def test_close_on_a_full_store_keeps_what_was_acknowledged(store_path: Path, make_memory) -> None:
    """The access history is the only thing close writes; a full store loses that batch (it
    was never acknowledged), not the close."""
    store = Store(store_path)
    kept = make_memory("a memory acknowledged before the disk filled")
    store.insert([(kept, None)])
    cap(store)
    until_full(lambda i: store.insert([(make_memory(f"filler memory number {i} " * 20), None)]))
    for _ in range(50):
        store.record_access(AccessRecord((kept.id,), 1, (kept.id,), 0.1))
    store.close()  # does not raise
    with Store(store_path) as again:
        assert again.get(kept.id).content == kept.content
        assert again.integrity_check() == "ok"


def test_os_errors_of_a_full_disk_map_to_store_full(tmp_path: Path) -> None:
    import errno

    from chitta.store.sqlite import faults

    where = tmp_path / "x.db"
    for number in (errno.ENOSPC, errno.EDQUOT):
        with pytest.raises(StoreFull, match=str(where)), faults.mapped(where):
            raise OSError(number, "No space left on device")
    with pytest.raises(StoreFull), faults.mapped(where):
        raise sqlite3.OperationalError("database or disk is full")
    with pytest.raises(FileNotFoundError), faults.mapped(where):  # not a disk problem
        raise FileNotFoundError(errno.ENOENT, "gone")


# --- a real full disk (tmpfs) --------------------------------------------------------------


def test_a_full_disk_through_the_command_line(tmpfs, filler, cli, clean_error) -> None:
    disk = tmpfs("8m")
    home = disk / "h"
    store = home / "default.db"
    run = cli(home)
    ids = []
    for i in range(3):
        proc = run("remember", FACT.format(i=i))
        assert proc.returncode == 0, proc.stderr
        ids.append(proc.stdout.strip())
    space = filler(disk)
    for i in range(60):
        proc = run("remember", FACT.format(i=100 + i))
        if proc.returncode != 0:
            break
        ids.append(proc.stdout.strip())
    clean_error(proc, 4, str(store), "is full")
    answer = json.loads(run("remember", "one more on the full disk", "--json").stdout)
    assert answer["ok"] is False and answer["error"] == "store_full"
    clean_error(run("backup", str(disk / "snap.db")), 4, str(disk / "snap.db"), "is full")
    assert not (disk / "snap.db").exists()  # half a copy is no backup
    # Reads keep working.
    for args in (("recall", "which build tool does project 1 use?"), ("show", ids[0]),
                 ("status",), ("export",)):  # fmt: skip
        proc = run(*args)
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, (args, proc.stderr)
    assert ids[1] in run("recall", "project 1 build", "--json").stdout
    space.unlink()
    proc = run("remember", "written once the disk had room again")
    assert proc.returncode == 0, proc.stderr
    ids.append(proc.stdout.strip())
    intact(store, ids)


def test_a_full_disk_through_the_daemon(tmpfs, filler, launch, daemons) -> None:
    disk = tmpfs("16m")
    home = disk / "h"
    proc = launch(home)
    ids: list[str] = []
    with DaemonClient(home / "chitta.sock") as client:
        ids += [client.call("remember", content=FACT.format(i=i))["id"] for i in range(3)]
        space = filler(disk)
        refused: ChittaError | None = None
        for i in range(400):
            try:
                ids.append(client.call("remember", content=FACT.format(i=100 + i))["id"])
            except ChittaError as exc:
                refused = exc
                break
        assert refused is not None, "400 writes fitted on a full disk"
        assert refused.code == "store_full", (refused.code, str(refused))
        assert str(home / "default.db") in str(refused) and "is full" in str(refused)
        for write in (lambda: client.call("add_triplet", subject="a", predicate="b", object="c"),
                      lambda: client.call("forget", id=ids[0])):  # fmt: skip
            try:
                write()
            except ChittaError as exc:
                assert exc.code == "store_full", (exc.code, str(exc))
        # Reads keep working.
        assert client.call("get_memory", id=ids[1])["memory"]["id"] == ids[1]
        assert client.call("recall", query="which build tool does project 1 use?")["hits"]
        space.unlink()
        ids.append(client.call("remember", content="written once the disk had room")["id"])
    daemons.stop(proc)
    intact(home / "default.db", ids)


def test_a_store_opened_on_a_full_disk_reads_and_takes_writes_once_there_is_room(
    tmpfs, filler, make_memory
) -> None:
    """Opened with the disk already full (no room for its lock file's pid, nor the -shm
    SQLite needs), the store reads; a write is refused until space returns, then taken by
    the same open store. Closing on a full disk (the final checkpoint cannot run) keeps
    every acknowledged write in the log."""
    disk = tmpfs("4m")
    path = disk / "store.db"
    kept = [make_memory(f"memory number {i} kept through a full disk") for i in range(5)]
    with Store(path) as store:
        store.insert([(m, None) for m in kept[:3]])
    Path(f"{path}.lock").unlink()
    space = filler(disk)
    with Store(path) as store:
        assert store.read_only == "the disk is full"
        assert store.get(kept[0].id).content == kept[0].content
        with pytest.raises(StoreFull, match=str(path)):
            store.insert([(kept[3], None)])
        space.unlink()
        store.insert([(kept[3], None)])  # room again: the same store takes it
        assert store.read_only is None
        space = filler(disk)
        try:
            store.insert([(kept[4], None)])
            done = kept
        except StoreFull:
            done = kept[:4]
    # Closed while full: whatever was acknowledged is in the file or its log.
    space.unlink()
    intact(path, [m.id for m in done])


def test_the_spool_on_a_full_disk_says_store_full(tmpfs, filler) -> None:
    from chitta import spool

    disk = tmpfs("1m")
    path = spool.spool_path(disk / "h" / "default.db")
    spool.append(path, "remember", {"content": "kept in the spool before the disk filled"})
    filler(disk)
    with pytest.raises(StoreFull, match="spool"):
        for i in range(1000):
            spool.append(path, "remember", {"content": f"spooled memory {i} " * 20})
    assert spool.waiting(path) >= 1
