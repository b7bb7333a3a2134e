"""Memories linked to the symbols they name, and the symbol table's history by index
(``Store.code()``, beside the tables of store/code.py).

A **link** ties a memory to a symbol it names (code/links.py decides which), with the
symbol's body hash and the git commit its body was indexed at, as they were when the link
was made; a link is made once and never refreshed, so a later body shows as a change.

The **history** is the symbol table's changes in the order they were written: a row when a
symbol first appears, when its body hash changes, and when it goes (``removed``). Each row
has a sequence number, ascending in write order. An **index run** (one ``chitta code index``
of a repository) records its commit and the last history row written by then (``upto``):
the symbol table as of that run is, per symbol, its newest history row up to ``upto``
(absent when that row says ``removed``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@dataclass(frozen=True, slots=True)
class SymbolLink:
    """A memory linked to a symbol, as the symbol was when the link was made."""

    realm: str
    memory_id: str
    symbol_id: str
    repo: str
    qualified: str
    body_hash: str
    commit: str | None  # the commit the linked body was indexed at
    linked_at: int


@dataclass(frozen=True, slots=True)
class LinkState:
    """A link with its symbol as it is now (or as of an index run): ``body_hash`` None when
    the symbol is gone; ``path``, ``commit`` and ``indexed_at`` its row's (as of a run: the
    run's commit and time; None when gone)."""

    link: SymbolLink
    body_hash: str | None
    path: str | None
    commit: str | None
    indexed_at: int | None = None

    @property
    def changed(self) -> bool:
        return self.body_hash != self.link.body_hash


@dataclass(frozen=True, slots=True)
class IndexRun:
    """One index of a repository: its commit, when, and the last history row by then."""

    seq: int
    realm: str
    repo: str
    commit: str | None
    at: int
    upto: int


@runtime_checkable
class CodeLinks(Protocol):
    """The links and the history, of one store, scoped by realm."""

    def has_symbols(self, realm: str) -> bool:
        """Whether ``realm`` has any indexed symbol (one indexed read)."""

    def add_links(self, links: Sequence[SymbolLink]) -> int:
        """Store the links not already made (a link is never refreshed); how many were new."""

    def links_of(self, realm: str, memory_ids: Sequence[str]) -> list[LinkState]:
        """The links of ``memory_ids`` with their symbols as they are now (one read)."""

    def links_as_of(self, realm: str, memory_ids: Sequence[str],
                    runs: dict[str, IndexRun]) -> list[LinkState]:  # fmt: skip
        """The links of ``memory_ids`` in the repositories of ``runs`` (repo → run), their
        symbols as of that run (from the history); links of other repositories are left out."""

    def linked_memories(self, realm: str, symbol_ids: Sequence[str]) -> dict[str, list[str]]:
        """The memories linked to each of ``symbol_ids``: symbol id → memory ids."""

    def record_index(self, realm: str, repo: str, commit: str | None, at: int) -> IndexRun:
        """Record an index run of ``repo`` at ``commit``: the history written so far is its."""

    def index_runs(self, realm: str, repo: str | None = None) -> list[IndexRun]:
        """The index runs of ``realm`` (of one repository), oldest first."""

    def history_as_of(self, realm: str, run: IndexRun) -> dict[str, tuple[str, str, str]]:
        """The symbol table of ``run``'s repository as of ``run``: symbol id →
        (path, qualified name, body hash), the symbols removed by then left out."""
