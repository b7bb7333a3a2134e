"""The PostgreSQL backend's own tests: ``pg_store``, an open store in a fresh database (the
server and database fixtures are tests/conftest.py's)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture
def pg_store(pg_url: str, tmp_path: Path) -> Iterator[Any]:
    """An open PostgreSQL store in a new database."""
    from chitta.store.postgres import PostgresStore

    with PostgresStore(pg_url, home=tmp_path / "home") as store:
        yield store
