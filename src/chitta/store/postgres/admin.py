"""Server-level chores for the benchmarks: a fresh database with pgvector, and what the
server is (version, the settings that decide its speed). Not part of a store: a store is
given a database that exists."""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg import conninfo, sql

from chitta.errors import BadArgument
from chitta.store.postgres import faults
from chitta.store.postgres.connection import CONNECT_TIMEOUT_S

#: The server settings a benchmark records beside its figures.
SETTINGS = ("server_version", "shared_buffers", "maintenance_work_mem", "work_mem",
            "max_parallel_maintenance_workers", "synchronous_commit", "fsync")  # fmt: skip

_DROP = sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)")
_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")


def _admin(url: str) -> psycopg.Connection:
    return psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S)


def fresh_database(url: str, name: str) -> str:
    """Drop the database ``name`` on the server of ``url`` if it exists, create it anew with
    the ``vector`` extension, and give its URL (``url`` with ``name`` as its database). Needs
    a role that may create databases."""
    if not _NAME.fullmatch(name):
        raise BadArgument(f"{name!r} is not a plain database name (a-z, 0-9, _)")
    shown = faults.shown(url)
    with faults.mapped(shown, f"making the database {name}"), _admin(url) as conn:
        conn.execute(_DROP.format(sql.Identifier(name)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    new = conninfo.make_conninfo(url, dbname=name)
    with faults.mapped(shown, f"adding pgvector to {name}"), _admin(new) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    return _as_url(url, name)


def drop_database(url: str, name: str) -> None:
    """Drop the database ``name`` on the server of ``url`` (if it exists)."""
    with faults.mapped(faults.shown(url), f"dropping the database {name}"), _admin(url) as conn:
        conn.execute(_DROP.format(sql.Identifier(name)))


def server_settings(url: str) -> dict[str, str]:
    """The server's version and the :data:`SETTINGS` that decide its speed, as it shows them."""
    with faults.mapped(faults.shown(url), "reading its settings"), _admin(url) as conn:
        rows = conn.execute(
            "SELECT name, current_setting(name) FROM unnest(%s::text[]) name", (list(SETTINGS),)
        ).fetchall()
        vector = conn.execute(
            "SELECT default_version FROM pg_available_extensions WHERE name = 'vector'"
        ).fetchone()
    found = dict(rows)
    found["pgvector"] = vector[0] if vector else "not installed"
    return found


def _as_url(url: str, name: str) -> str:
    """``url`` with its database part replaced by ``name`` (a URL stays a URL, so that
    ``open_store`` knows it for a database)."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}"))
