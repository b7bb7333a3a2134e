"""Open a store by its location: a database URL selects PostgreSQL, anything else is the path
of a SQLite file. The one place outside a backend that names the backends."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from chitta.store.base import Store

#: URL schemes that select the PostgreSQL backend (libpq's two spellings).
DATABASE_SCHEMES = ("postgresql://", "postgres://")


def is_database_url(location: str | Path) -> bool:
    """Whether ``location`` names a PostgreSQL database rather than a SQLite file."""
    return isinstance(location, str) and location.startswith(DATABASE_SCHEMES)


def open_store(location: str | Path, **options: Any) -> Store:
    """The store at ``location``, opened with the backend it names; ``options`` are the
    backend's (``create``, ``hnsw_min``, the access log's batch sizes; a database store also
    takes ``home``, the folder for its files in this process)."""
    if is_database_url(location):
        from chitta.store.postgres import PostgresStore  # its driver is an optional extra

        return PostgresStore(str(location), **options)
    from chitta.store.sqlite import Store as SQLiteStore

    options.pop("home", None)
    return SQLiteStore(Path(location), **options)
