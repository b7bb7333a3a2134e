"""``restore-backup`` is for when the store is broken: it checks the backup (not the store it
replaces), keeps the old store's files beside it (``<store>.damaged-<time>`` when they were
damaged, with their -wal and -shm), works when the store cannot be opened at all, and refuses
a bad backup leaving the store exactly as it was."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import stat
from pathlib import Path

import pytest

from chitta.api import Chitta
from chitta.config import Settings
from chitta.errors import SchemaTooNew, StoreCorrupt, StoreLocked
from chitta.store.sqlite import Store, migrations

WAL = "We chose SQLite WAL over a custom log because crash recovery comes free"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def damage_table(path: Path, table: str) -> None:
    conn = sqlite3.connect(path)
    (root,) = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()
    (size,) = conn.execute("PRAGMA page_size").fetchone()
    conn.close()
    with path.open("r+b") as fh:
        fh.seek((root - 1) * size)
        fh.write(b"\xff" * size)


def set_version(path: Path, value: str) -> None:
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (value,))
    conn.close()


@pytest.fixture
def backed_up(settings: Settings, embedder, tmp_path: Path) -> tuple[Path, str]:
    """A store with one memory, backed up to a file: (the backup, the memory's id). A memory
    written after the backup is in the store but not in the backup."""
    with Chitta.open(settings, embedder=embedder, through_daemon=False) as c:
        mid = c.remember(WAL).id
        c.backup(tmp_path / "snap.db")
        c.remember("written after the backup was taken, so it is not in it")
    return tmp_path / "snap.db", mid


BREAKS = {
    "random bytes": lambda p: p.write_bytes(bytes(range(256)) * 64),
    "empty": lambda p: p.write_bytes(b""),
    "cut in half": lambda p: p.write_bytes(p.read_bytes()[: p.stat().st_size // 2]),
    "schema abc": lambda p: set_version(p, "abc"),
    "damaged pages": lambda p: damage_table(p, "memories"),
}


def restore_backup_offline(backup: Path, settings: Settings) -> Path | None:
    from chitta.api import restore_backup_offline as restore  # new with this behaviour

    return restore(backup, settings)


def restored_ok(settings: Settings, embedder, mid: str) -> None:
    with Chitta.open(settings, embedder=embedder, through_daemon=False) as c:
        assert c.get(mid).content == WAL
        assert c.status()["memories"] == 1
        assert c.store.integrity_check() == "ok"


@pytest.mark.parametrize("how", sorted(BREAKS))
def test_restore_replaces_a_broken_store_and_keeps_it(settings, embedder, backed_up, how):
    backup, mid = backed_up
    store = settings.store_path
    BREAKS[how](store)
    Path(f"{store}-wal").write_bytes(b"what a crash left in the log")
    damaged = store.read_bytes()
    saved = restore_backup_offline(backup, settings)
    assert saved is not None and saved.parent == store.parent
    assert saved.name.startswith(f"{store.name}.damaged-")
    assert saved.read_bytes() == damaged
    assert Path(f"{saved}-wal").read_bytes() == b"what a crash left in the log"
    for kept in (saved, Path(f"{saved}-wal")):
        assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    restored_ok(settings, embedder, mid)


def test_restore_without_any_store(settings, embedder, backed_up) -> None:
    backup, mid = backed_up
    for name in ("", "-wal", "-shm"):
        Path(f"{settings.store_path}{name}").unlink(missing_ok=True)
    assert restore_backup_offline(backup, settings) is None
    restored_ok(settings, embedder, mid)


def test_restore_of_a_healthy_closed_store_keeps_it_as_pre_restore(settings, embedder, backed_up):
    backup, mid = backed_up
    before = sha256(settings.store_path)
    saved = restore_backup_offline(backup, settings)
    assert saved is not None and ".pre-restore-" in saved.name and sha256(saved) == before
    # Reading the backup and judging the old store left no -wal or -shm beside either.
    assert not list(backup.parent.glob("snap.db-*"))
    assert not list(settings.home.glob("default.db-*"))
    restored_ok(settings, embedder, mid)


BAD_BACKUPS = {
    "random bytes": (lambda p: p.write_bytes(bytes(range(256)) * 64), StoreCorrupt),
    "empty": (lambda p: p.write_bytes(b""), StoreCorrupt),
    "cut in half": (lambda p: p.write_bytes(p.read_bytes()[: p.stat().st_size // 2]),
                    StoreCorrupt),
    "schema abc": (lambda p: set_version(p, "abc"), StoreCorrupt),
    "newer": (lambda p: set_version(p, str(migrations.LATEST + 1)), SchemaTooNew),
    "damaged pages": (lambda p: damage_table(p, "memories"), StoreCorrupt),
}  # fmt: skip


@pytest.mark.parametrize("how", sorted(BAD_BACKUPS))
def test_a_bad_backup_is_refused_and_the_store_left_alone(settings, backed_up, how) -> None:
    backup, _ = backed_up
    spoil, error = BAD_BACKUPS[how]
    spoil(backup)
    for broken_store in (False, True):
        if broken_store:
            damage_table(settings.store_path, "memories")
        before = sha256(settings.store_path)
        with pytest.raises(error, match=str(backup)):
            restore_backup_offline(backup, settings)
        assert sha256(settings.store_path) == before
        kept = [p.name for p in settings.home.iterdir() if ".damaged-" in p.name]
        assert kept == [] and not list(settings.home.glob("*.pre-restore-*"))


def test_restore_offline_refuses_while_a_process_holds_the_store(settings, backed_up) -> None:
    backup, _ = backed_up
    with Store(settings.store_path), pytest.raises(StoreLocked):
        restore_backup_offline(backup, settings)


def test_restore_of_an_open_damaged_store_names_it_damaged(settings, embedder, backed_up):
    """The daemon's way: the store is open (its damage is in pages read later) and the
    backup goes into the open file; the old contents are kept as ``.damaged-``."""
    backup, mid = backed_up
    damage_table(settings.store_path, "embeddings")
    with Chitta.open(settings, embedder=embedder, through_daemon=False, check_model=False) as c:
        saved = c.restore_backup(backup)
        assert ".damaged-" in saved.name and stat.S_IMODE(saved.stat().st_mode) == 0o600
        assert c.get(mid).content == WAL and c.store.integrity_check() == "ok"


# --- the command line -------------------------------------------------------------------------


def test_the_cli_restores_over_a_corrupt_store(settings, backed_up, cli, clean_error) -> None:
    backup, mid = backed_up
    run = cli(settings.home)
    settings.store_path.write_bytes(b"\0" * 8192)
    clean_error(run("recall", "write-ahead log"), 4, "restore-backup")
    done = run("restore-backup", str(backup))
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert ".damaged-" in done.stdout and str(settings.home) in done.stdout
    answer = json.loads(run("recall", "why not our own write-ahead log?", "--json").stdout)
    assert answer["hits"][0]["id"] == mid
    # Again, with --json, over the healthy store the last restore made.
    again = json.loads(run("restore-backup", str(backup), "--json").stdout)
    assert again["ok"] and ".pre-restore-" in again["saved"] and again["damaged"] is False


def test_the_cli_refuses_a_corrupt_backup(settings, backed_up, cli, clean_error) -> None:
    backup, _ = backed_up
    backup.write_bytes(b"not a backup\n" * 100)
    damage_table(settings.store_path, "memories")
    before = sha256(settings.store_path)
    run = cli(settings.home)
    clean_error(run("restore-backup", str(backup)), 4, str(backup))
    assert sha256(settings.store_path) == before
    assert not [p for p in settings.home.iterdir() if ".damaged-" in p.name]


def test_the_cli_restores_a_damaged_store_through_its_daemon(settings, backed_up, cli, launch):
    """A daemon serves a store whose damage is in pages it has not read: the command goes
    through it, and the old contents are kept as damaged."""
    backup, mid = backed_up
    damage_table(settings.store_path, "embeddings")
    launch(settings.home)
    run = cli(settings.home)
    done = json.loads(run("restore-backup", str(backup), "--json").stdout)
    assert done["ok"] and done["damaged"] is True and ".damaged-" in done["saved"]
    status = json.loads(run("status", "--json").stdout)
    assert status["daemon"]["methods"]["restore_backup"]["requests"] == 1
    assert status["memories"] == 1
    assert json.loads(run("show", mid, "--json").stdout)["memory"]["content"] == WAL
