"""The PostgreSQL backend: a chitta store in a PostgreSQL database with pgvector, shared by
any number of daemons (postgres/store.py). Needs the ``postgresql`` extra (psycopg)."""

from chitta.store.postgres.store import PostgresStore

__all__ = ["PostgresStore"]
