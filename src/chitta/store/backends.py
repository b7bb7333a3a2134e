"""Open a store by its location: a database URL selects PostgreSQL, anything else is the path
of a SQLite file. The one place outside a backend that names the backends."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from chitta.errors import MissingExtra
from chitta.store.base import Store

#: URL schemes that select the PostgreSQL backend (libpq's two spellings).
DATABASE_SCHEMES = ("postgresql://", "postgres://")


def is_database_url(location: str | Path) -> bool:
    """Whether ``location`` names a PostgreSQL database rather than a SQLite file."""
    return isinstance(location, str) and location.startswith(DATABASE_SCHEMES)


def without_password(url: str) -> str:
    """A database URL with its password left out (``postgresql://ann@host/db``), to show and
    to name things by; anything else as it is."""
    if not is_database_url(url):
        return url
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}@{host}" if user else host))


def location_key(location: str | Path) -> str:
    """The name of the files that go with a store in a home (its spool, its daemon's socket):
    a SQLite file's stem, or ``chitta-<12 hex of sha256>`` of a database URL without its
    password (one database, one name, whatever password a client gives)."""
    if is_database_url(location):
        digest = hashlib.sha256(without_password(str(location)).encode()).hexdigest()
        return f"chitta-{digest[:12]}"
    return Path(location).stem


def open_store(location: str | Path, **options: Any) -> Store:
    """The store at ``location``, opened with the backend it names; ``options`` are the
    backend's (``create``, ``hnsw_min``, the access log's batch sizes; a database store also
    takes ``home``, the folder for its files in this process)."""
    if is_database_url(location):
        try:
            from chitta.store.postgres import PostgresStore
        except ImportError as exc:  # its driver is an optional extra
            if (exc.name or "").split(".")[0] not in ("psycopg", "pgvector", "psycopg_binary"):
                raise
            raise MissingExtra("postgresql", "a PostgreSQL store") from exc
        return PostgresStore(str(location), **options)
    from chitta.store.sqlite import SQLiteStore

    options.pop("home", None)
    return SQLiteStore(Path(location), **options)


def restore_offline(location: str | Path, source: Path, **options: Any) -> Path | None:
    """Replace the store at ``location`` with the backup ``source`` without a store open in
    this process first: a SQLite file may be too damaged to open (store/sqlite/restore.py
    takes its lock and swaps the files). Where the old contents went; None when there were
    none. A database is opened and restored in place (:meth:`Store.restore_from`)."""
    if is_database_url(location):
        with open_store(location, **options) as store:
            return store.restore_from(Path(source))
    from chitta.store.sqlite.restore import restore_file

    return restore_file(Path(location), Path(source))


def kept_damaged(saved: Path) -> bool:
    """Whether the old contents a restore kept at ``saved`` were damaged (kept as their
    files, named ``<store>.damaged-<time>``) rather than backed up (``.pre-restore-``)."""
    from chitta.store.sqlite.restore import DAMAGED

    return f".{DAMAGED}-" in Path(saved).name


def fresh_database(server_url: str, name: str) -> str:
    """A new empty database ``name`` (with pgvector) on the PostgreSQL server of
    ``server_url``, dropped first if it exists; its URL. For benchmarks: a store each."""
    return _postgres_admin().fresh_database(server_url, name)


def drop_database(server_url: str, name: str) -> None:
    """Drop the database ``name`` on the PostgreSQL server of ``server_url``, if it exists."""
    _postgres_admin().drop_database(server_url, name)


def server_settings(server_url: str) -> dict[str, str]:
    """The PostgreSQL server's version, pgvector's, and the settings that decide its speed."""
    return _postgres_admin().server_settings(server_url)


def _postgres_admin() -> Any:
    try:
        from chitta.store.postgres import admin
    except ImportError as exc:  # its driver is an optional extra
        if (exc.name or "").split(".")[0] not in ("psycopg", "pgvector", "psycopg_binary"):
            raise
        raise MissingExtra("postgresql", "a PostgreSQL database") from exc
    return admin
