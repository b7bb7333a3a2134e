"""The SQLite backend: a chitta store in one SQLite file (WAL, FTS5), with in-memory vector,
sparse, link, term and correction indexes built from it. Its modules are its own detail:
nothing outside ``chitta.store`` imports them (open a store with
:func:`chitta.store.backends.open_store`)."""

from chitta.store.sqlite.store import SQLiteStore

#: The name the class had before there was a second backend.
Store = SQLiteStore

__all__ = ["SQLiteStore", "Store"]
