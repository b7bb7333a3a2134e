"""The code tables of a store file (store/code.py; their SQL is store/code_sql.py)."""

from __future__ import annotations

import functools

from chitta.store.code import CodeTables
from chitta.store.code_sql import SQLCodeTables
from chitta.store.sqlite.connection import Connection


class Code(Connection):
    """``code()``: the files, symbols and callsites of indexed repositories."""

    @functools.cached_property
    def _code_tables(self) -> SQLCodeTables:
        return SQLCodeTables(self._query, self.transaction)

    def code(self) -> CodeTables:
        return self._code_tables
