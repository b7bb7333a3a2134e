"""Choosing a backend by location (store/backends.py)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from chitta.errors import MissingExtra
from chitta.store.backends import (
    is_database_url,
    kept_damaged,
    location_key,
    open_store,
    without_password,
)
from chitta.store.sqlite import SQLiteStore


def test_a_path_is_a_sqlite_file_and_a_url_a_database(tmp_path: Path) -> None:
    assert not is_database_url(tmp_path / "x.db") and not is_database_url(str(tmp_path))
    assert is_database_url("postgresql://ann@db/chitta") and is_database_url("postgres://db")
    with open_store(str(tmp_path / "x.db"), home=tmp_path) as store:  # home: a database's
        assert isinstance(store, SQLiteStore)


def test_the_password_is_left_out_of_what_is_shown_and_named() -> None:
    url = "postgresql://ann:s3cret@db.example:5432/chitta?sslmode=require"
    assert without_password(url) == "postgresql://ann@db.example:5432/chitta?sslmode=require"
    assert without_password("postgresql://db/chitta") == "postgresql://db/chitta"
    key = location_key(url)
    assert key == location_key(without_password(url)) == location_key(url.replace("s3cret", "x"))
    assert key.startswith("chitta-") and len(key) == len("chitta-") + 12 and "s3cret" not in key
    assert key != location_key("postgresql://ann@db.example:5432/other")
    assert location_key(Path("/home/a/work.db")) == "work"


def test_a_damaged_store_is_told_from_a_backed_up_one(tmp_path: Path) -> None:
    assert kept_damaged(tmp_path / "default.db.damaged-20260101T000000Z")
    assert not kept_damaged(tmp_path / "default.db.pre-restore-20260101T000000Z")


@pytest.mark.skipif(
    importlib.util.find_spec("chitta.store.postgres") is None, reason="no PostgreSQL backend"
)
def test_a_database_without_its_driver_names_the_extra(monkeypatch) -> None:
    for name in [n for n in sys.modules if n == "psycopg" or n.startswith(("psycopg.",
                 "chitta.store.postgres"))]:  # fmt: skip
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "psycopg", None)  # importing it raises ImportError
    with pytest.raises(MissingExtra, match="postgresql"):
        open_store("postgresql://ann@localhost/chitta")
