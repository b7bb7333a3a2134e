"""PostgreSQL's failures as chitta's store errors, and a database URL fit to show people.

Every ``psycopg.Error`` that leaves the backend goes through :func:`store_error`: a full disk
is :class:`StoreFull`, a read-only transaction :class:`StoreReadOnly`, a missing privilege
or a row-level security refusal :class:`AccessDenied`, damaged pages
:class:`StoreCorrupt`, a lost or refused connection a :class:`StoreError` that names the host
(never the password). No psycopg type escapes the backend.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from psycopg import conninfo

from chitta.errors import (
    AccessDenied,
    StoreCorrupt,
    StoreError,
    StoreFull,
    StoreMissing,
    StoreReadOnly,
)

#: SQLSTATEs with an error of their own (PostgreSQL appendix A).
DISK_FULL = "53100"
READ_ONLY = "25006"
CORRUPT = ("XX001", "XX002")
NO_DATABASE = "3D000"
#: insufficient_privilege: a table privilege missing, or a row-level security policy's
#: check failing (a write to a realm the role has no write grant for).
NO_PRIVILEGE = "42501"


def shown(url: str) -> str:
    """``url`` as a ``postgresql://user@host:port/database`` without its password (or any
    other parameter: an sslkey path or a passfile is nobody's business either)."""
    try:
        parts = conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "postgresql://(a database URL that cannot be read)"
    user = f"{parts['user']}@" if parts.get("user") else ""
    port = f":{parts['port']}" if parts.get("port") else ""
    host, database = host_of(url), parts.get("dbname", "")
    if host.startswith("/"):  # a Unix socket's folder
        return f"postgresql://{user}/{database}?host={host}"
    return f"postgresql://{user}{host}{port}/{database}"


def host_of(url: str) -> str:
    """The host (or socket folder) ``url`` connects to; libpq's default when it names none."""
    try:
        return str(conninfo.conninfo_to_dict(url).get("host") or "localhost")
    except psycopg.ProgrammingError:
        return "an unknown host"


def _reason(exc: psycopg.Error) -> str:
    """The server's own words, when a connection failure carries them (libpq puts them last,
    after the socket or address it tried)."""
    text = str(exc).strip()
    return text.rsplit("FATAL:", 1)[1].strip() if "FATAL:" in text else text.splitlines()[0]


def store_error(exc: psycopg.Error, where: str, doing: str = "the read") -> StoreError:
    """The store error for ``exc``, raised while doing ``doing`` on the store ``where``."""
    state = exc.sqlstate or ""
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    if state == DISK_FULL:
        return StoreFull(f"the database {where} is out of disk space: {doing} was not made")
    if state == READ_ONLY:
        return StoreReadOnly(
            f"the database {where} takes no writes (a read-only transaction, a standby): "
            f"{doing} was refused"
        )
    if state in CORRUPT:
        return StoreCorrupt(
            f"the database {where} reports damaged data ({first}) during {doing}; restore it "
            "from a backup (pg_dump, or the managed service's snapshots)"
        )
    if state == NO_PRIVILEGE:
        return AccessDenied(
            f"the database {where} refused {doing}: this role may not ({first}); writing a "
            "realm takes a write grant from the store's owner (docs/team.md), and migrations "
            "and the embedding model are the owner's to run"
        )
    # libpq's connection failures carry no SQLSTATE: read the server's message.
    if state == NO_DATABASE or ("FATAL:  database" in str(exc) and "does not exist" in str(exc)):
        return StoreMissing(f"no database {where}: create it (createdb) or check the URL")
    if state.startswith("28") or "authentication failed" in str(exc):
        return StoreError(f"the database {where} refused the login: {_reason(exc)}")
    # 08: connection exceptions; 57P0x: the server shut down, crashed, or is starting.
    if state.startswith(("08", "57P")) or isinstance(exc, psycopg.OperationalError) and not state:
        return StoreError(f"the database {where} is unreachable ({first}) during {doing}")
    return StoreError(f"the database {where} failed {doing}: {first} (SQLSTATE {state or '?'})")


@contextmanager
def mapped(where: str, doing: str = "the read") -> Iterator[None]:
    """Raise psycopg's errors in the block as the store's errors."""
    try:
        yield
    except psycopg.Error as exc:
        raise store_error(exc, where, doing) from exc
