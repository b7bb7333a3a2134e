"""The SQLite store: one file in WAL mode, source of truth for everything (connection.py says
how it is opened, locked and written). The class is put together from the modules beside this
one, each a part of the :class:`chitta.store.base.Store` protocol (search.py builds on
indexes.py, the in-memory indexes)."""

from __future__ import annotations

from chitta.store.sqlite.code import Code
from chitta.store.sqlite.graph import Graph
from chitta.store.sqlite.history import History
from chitta.store.sqlite.memories import Memories
from chitta.store.sqlite.meta import Meta
from chitta.store.sqlite.search import Search
from chitta.store.sqlite.upkeep import Upkeep


class SQLiteStore(Meta, Memories, History, Search, Graph, Code, Upkeep):
    """One chitta store file, owned by this process while open."""
