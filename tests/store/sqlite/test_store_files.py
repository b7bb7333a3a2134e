"""A store file that is not what it should be — nonsense schema metadata, a newer chitta's
store, not SQLite at all, cut short, empty, damaged inside — is refused with a clear error
naming the file and what is wrong, never a traceback, and the file is never changed."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from chitta.errors import SchemaTooNew, StoreCorrupt
from chitta.store.sqlite import Store, migrations


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def set_version(path: Path, value: object) -> None:
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (value,))
    conn.close()


def companions(path: Path) -> list[str]:
    """The files SQLite would make beside ``path`` (its -wal and -shm) that exist."""
    return [s for s in ("-wal", "-shm") if Path(f"{path}{s}").exists()]


def a_store(path: Path, make_memory, n: int = 40) -> None:
    with Store(path) as store:
        store.insert([(make_memory(f"memory number {i} about gardens and rain"), None)
                      for i in range(n)])  # fmt: skip


NONSENSE = ["abc", "-5", "0", "1.5", "", " 3", "\u0663", "5 "]


@pytest.mark.parametrize("value", NONSENSE)
def test_a_nonsensical_schema_version_is_store_corrupt(store_path: Path, value: str) -> None:
    Store(store_path).close()
    set_version(store_path, value)
    before = sha256(store_path)
    for create in (True, False):
        with pytest.raises(StoreCorrupt) as caught:
            Store(store_path, create=create)
        message = str(caught.value)
        assert str(store_path) in message and "schema_version" in message, message
        assert repr(value) in message, message
    assert sha256(store_path) == before and companions(store_path) == []


def test_a_store_of_a_newer_chitta_says_so(store_path: Path) -> None:
    Store(store_path).close()
    set_version(store_path, str(migrations.LATEST + 7))
    before = sha256(store_path)
    with pytest.raises(SchemaTooNew) as caught:
        Store(store_path)
    message = str(caught.value)
    assert str(store_path) in message and "newer chitta" in message, message
    assert sha256(store_path) == before


def broken_files(path: Path, make_memory) -> dict[str, bytes]:
    """Bytes of files that are no chitta store, by what is wrong with them."""
    a_store(path, make_memory)
    whole = path.read_bytes()
    path.unlink()
    return {
        "empty": b"",
        "text": b"these are my notes, not a database\n" * 40,
        "header only": whole[:100],
        "cut in half": whole[: len(whole) // 2],
        "cut mid-page": whole[: 4096 * 3 + 1000],
    }


@pytest.mark.parametrize("kind", ["empty", "text", "header only", "cut in half", "cut mid-page"])
def test_a_broken_file_is_refused_and_left_as_it_is(tmp_path: Path, make_memory, kind) -> None:
    path = tmp_path / "store.db"
    data = broken_files(tmp_path / "whole.db", make_memory)[kind]
    path.write_bytes(data)
    for create in (True, False):
        with pytest.raises(StoreCorrupt) as caught:
            Store(path, create=create)
        assert str(path) in str(caught.value)
        assert "restore-backup" in str(caught.value)
    assert path.read_bytes() == data and companions(path) == []


def damage_table(path: Path, table: str) -> None:
    """Overwrite the root page of ``table`` in the file at ``path`` (its schema stays)."""
    conn = sqlite3.connect(path)
    (root,) = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()
    (size,) = conn.execute("PRAGMA page_size").fetchone()
    conn.close()
    with path.open("r+b") as fh:
        fh.seek((root - 1) * size)
        fh.write(b"\xff" * size)


def test_a_read_of_damaged_pages_is_store_corrupt(store_path: Path, make_memory) -> None:
    a_store(store_path, make_memory)
    damage_table(store_path, "memories")
    with Store(store_path) as store, pytest.raises(StoreCorrupt, match="restore-backup") as caught:
        store.counts()
    assert str(store_path) in str(caught.value)


# --- the command line and the daemon ----------------------------------------------------------


@pytest.mark.parametrize("kind", ["empty", "cut in half", "schema abc", "schema newer",
                                  "damaged pages"])  # fmt: skip
def test_the_cli_refuses_a_broken_store_clearly(tmp_path, make_memory, cli, clean_error,
                                                kind) -> None:  # fmt: skip
    home = tmp_path / "h"
    home.mkdir()
    path = home / "default.db"
    if kind.startswith("schema") or kind == "damaged pages":
        a_store(path, make_memory)
        if kind == "schema abc":
            set_version(path, "abc")
        elif kind == "schema newer":
            set_version(path, str(migrations.LATEST + 1))
        else:
            damage_table(path, "memories")
    else:
        path.write_bytes(broken_files(tmp_path / "whole.db", make_memory)[kind])
    before = path.read_bytes()
    code = "schema_too_new" if kind == "schema newer" else "store_corrupt"
    run = cli(home)
    for args in (("status",), ("recall", "gardens"), ("remember", "a memory for a broken store")):
        clean_error(run(*args), 4, str(path))
        answer = json.loads(run(*args, "--json").stdout)
        assert answer == {"ok": False, "error": code, "message": answer["message"]}
    if kind != "damaged pages":  # that store opens: its sound pages may take a write
        assert path.read_bytes() == before


def test_the_daemon_will_not_serve_a_broken_store(tmp_path: Path, cli, clean_error) -> None:
    home = tmp_path / "h"
    home.mkdir()
    (home / "default.db").write_bytes(b"not a database at all, only words\n" * 50)
    proc = cli(home)("serve")
    clean_error(proc, 4, str(home / "default.db"))
    assert not (home / "chitta.sock").exists()
