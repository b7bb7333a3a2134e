"""Opening a PostgreSQL store that is not there, not chitta's, too new, or unreachable; and
the database's failures as chitta's errors, never psycopg's."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import psycopg
import pytest

from chitta.errors import (
    SchemaTooNew,
    StoreCorrupt,
    StoreError,
    StoreFull,
    StoreMissing,
    StoreReadOnly,
)
from chitta.store.backends import open_store
from chitta.store.postgres import PostgresStore, faults, schema


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_server_is_named_without_the_password(tmp_path: Path) -> None:
    url = f"postgresql://chitta:sekrit@127.0.0.1:{free_port()}/team"
    with pytest.raises(StoreError, match="unreachable") as caught:
        PostgresStore(url, home=tmp_path)
    assert type(caught.value) is StoreError
    assert "127.0.0.1" in str(caught.value) and "sekrit" not in str(caught.value)
    assert faults.shown(url) == f"postgresql://chitta@127.0.0.1:{url.split(':')[3]}"


def test_a_missing_database_is_store_missing(pg_server, tmp_path: Path) -> None:
    with pytest.raises(StoreMissing, match="no database"):
        PostgresStore(pg_server.get_uri("no_such_db"), home=tmp_path)


def test_create_false_on_an_empty_database(pg_url: str, tmp_path: Path) -> None:
    with pytest.raises(StoreMissing, match="holds no chitta store"):
        PostgresStore(pg_url, home=tmp_path, create=False)
    PostgresStore(pg_url, home=tmp_path).close()
    PostgresStore(pg_url, home=tmp_path, create=False).close()


def test_open_store_picks_postgres_for_a_url(pg_url: str, tmp_path: Path) -> None:
    with open_store(pg_url, home=tmp_path) as store:
        assert isinstance(store, PostgresStore) and store.data_dir == tmp_path


def test_a_newer_schema_is_refused(pg_url: str, tmp_path: Path) -> None:
    PostgresStore(pg_url, home=tmp_path).close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("UPDATE meta SET value = %s WHERE key = 'schema_version'",
                     (str(schema.LATEST + 1),))  # fmt: skip
    with pytest.raises(SchemaTooNew, match="upgrade chitta"):
        PostgresStore(pg_url, home=tmp_path)


def test_a_damaged_schema_version_is_corrupt(pg_url: str, tmp_path: Path) -> None:
    PostgresStore(pg_url, home=tmp_path).close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("UPDATE meta SET value = 'x' WHERE key = 'schema_version'")
    with pytest.raises(StoreCorrupt):
        PostgresStore(pg_url, home=tmp_path)


def test_many_openers_migrate_once(pg_url: str, tmp_path: Path) -> None:
    errors: list[BaseException] = []

    def open_one() -> None:
        try:
            PostgresStore(pg_url, home=tmp_path).close()
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with PostgresStore(pg_url, home=tmp_path) as store:
        assert store.meta("schema_version") == str(schema.LATEST)


def test_a_read_only_database_refuses_writes(pg_url: str, tmp_path: Path, make_memory) -> None:
    PostgresStore(pg_url, home=tmp_path).close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        db = conn.info.dbname
        conn.execute(f"ALTER DATABASE {db} SET default_transaction_read_only = on")
    with PostgresStore(pg_url, home=tmp_path) as store:
        assert store.read_only is not None
        assert store.counts()["memories"] == 0
        with pytest.raises(StoreReadOnly):
            store.insert([(make_memory("x"), None)])


@pytest.mark.parametrize(
    ("state", "kind"),
    [("53100", StoreFull), ("25006", StoreReadOnly), ("XX001", StoreCorrupt),
     ("XX002", StoreCorrupt), ("08006", StoreError), ("42P01", StoreError)],
)  # fmt: skip
def test_sqlstates_become_store_errors(state: str, kind: type, pg_url: str) -> None:
    raise_it = f"DO $$ BEGIN RAISE EXCEPTION 'boom' USING ERRCODE = '{state}'; END $$"
    with psycopg.connect(pg_url, autocommit=True) as conn, pytest.raises(psycopg.Error) as caught:
        conn.execute(raise_it)
    error = faults.store_error(caught.value, "the db", "the write")
    assert type(error) is kind and "the db" in str(error)


def test_a_lost_connection_is_a_store_error_then_reconnects(pg_store: PostgresStore) -> None:
    pid = pg_store._conns.get().info.backend_pid
    with psycopg.connect(pg_store._conns.url, autocommit=True) as other:
        other.execute("SELECT pg_terminate_backend(%s)", (pid,))
    with pytest.raises(StoreError, match="unreachable"):
        pg_store.counts()
    assert pg_store.counts()["memories"] == 0  # a new connection
