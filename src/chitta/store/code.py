"""The code tables behind the Store interface: files, symbols, callsites (with their
resolution), imports and bases of indexed repositories, per realm (``Store.code()``).

A repository is named by its root folder's absolute path (``repo``); a file by its path
relative to that root, with ``/``. One file's rows are written and replaced together
(:meth:`CodeTables.replace_file`), so a reader never sees half a file.

Ids are stable across re-indexing: a symbol's id hashes its realm, repository, file,
qualified name and kind (and, for a second definition of the same name in the file, its
place among them), not its lines, so a memory linked to a symbol stays linked when code
above it moves. A callsite's ``key`` hashes what the extractor wrote of it (its caller,
name, form, receiver, qualifier, file and line): the resolver's answers are matched to rows
by it (:meth:`CodeTables.set_resolutions`).

A callsite's resolution is ``pending`` (the resolver has not run since its file was
indexed), ``resolved`` (one target), ``unresolved`` (no candidate) or ``ambiguous`` (the
candidates are kept, never guessed into an edge). Callers and callees follow resolved
callsites only.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from chitta.code.model import Callsite, FileExtract, Symbol
from chitta.store.code_links import CodeLinks

if TYPE_CHECKING:
    import numpy as np

#: A callsite's resolution states.
PENDING, RESOLVED, UNRESOLVED, AMBIGUOUS = "pending", "resolved", "unresolved", "ambiguous"
STATES = (PENDING, RESOLVED, UNRESOLVED, AMBIGUOUS)
#: The deepest callers/callees walk the tables answer.
MAX_DEPTH = 5
#: An edge's keys: (subject, predicate, object) as store/triplets.py keys names.
EdgeKey = tuple[str, str, str]


@dataclass(frozen=True, slots=True)
class StoredFile:
    """One indexed file."""

    realm: str
    repo: str
    path: str
    language: str
    content_hash: str
    lines: int
    parse_errors: int
    skipped: str
    indexed_at: int
    commit: str | None


@dataclass(frozen=True, slots=True)
class StoredSymbol:
    """A symbol as stored: the extractor's record with its id, realm, repository and when
    (and at which commit) it was indexed."""

    id: str
    realm: str
    repo: str
    symbol: Symbol
    indexed_at: int
    commit: str | None


@dataclass(frozen=True, slots=True)
class StoredCallsite:
    """A callsite as stored, with its caller's symbol id (None at a file's top level when the
    file has no module symbol) and its resolution."""

    id: str
    realm: str
    repo: str
    callsite: Callsite
    caller_id: str | None
    state: str
    target_id: str | None
    candidates: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Resolution:
    """The resolver's answer for one callsite (as the extractor wrote it): ``resolved`` with
    one target, ``ambiguous`` with its candidates, or ``unresolved`` with none."""

    callsite: Callsite
    state: str
    targets: tuple[Symbol, ...] = ()


@dataclass(frozen=True, slots=True)
class CallEdge:
    """One resolved call met by a callers/callees walk, ``depth`` calls from where it began."""

    caller_id: str | None
    caller: str  # the caller's qualified name, as the extractor wrote it
    target_id: str
    path: str
    line: int
    depth: int


def _digest(*parts: object) -> str:
    text = "\0".join("" if p is None else str(p) for p in parts)
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


def symbol_id(realm: str, repo: str, symbol: Symbol, nth: int = 0) -> str:
    """The stable id of ``symbol``: the ``nth`` (from 0) definition of its qualified name and
    kind in its file."""
    return "sym_" + _digest(realm, repo, symbol.path, symbol.qualified, symbol.kind, nth)


def symbol_ids(realm: str, repo: str, symbols: Sequence[Symbol]) -> list[str]:
    """The ids of one file's symbols, in their order: a repeated definition (a redefined
    function, an overload) numbered by its place among those of its name, by line."""
    order = sorted(range(len(symbols)), key=lambda i: (symbols[i].start_line, i))
    seen: dict[tuple[str, str], int] = {}
    ids = [""] * len(symbols)
    for i in order:
        s = symbols[i]
        nth = seen.get((s.qualified, s.kind), 0)
        seen[(s.qualified, s.kind)] = nth + 1
        ids[i] = symbol_id(realm, repo, s, nth)
    return ids


def callsite_key(realm: str, repo: str, c: Callsite) -> str:
    """What a callsite is found by: equal calls on one line share it (and their answer)."""
    return _digest(realm, repo, c.path, c.line, c.caller, c.name, c.form, c.receiver,
                   c.qualifier)  # fmt: skip


def caller_ids(symbols: Sequence[Symbol], ids: Sequence[str], calls: Sequence[Callsite]) -> list:
    """Each call's caller symbol id in its file: the symbol of its caller's qualified name
    whose lines hold the call (the first of that name when none does); None when the file
    has no symbol of that name (a top-level call in a language with no module symbol)."""
    by_name: dict[str, list[tuple[Symbol, str]]] = {}
    for s, sid in zip(symbols, ids, strict=True):
        by_name.setdefault(s.qualified, []).append((s, sid))
    out: list[str | None] = []
    for c in calls:
        named = by_name.get(c.caller, [])
        inside = [sid for s, sid in named if s.start_line <= c.line <= s.end_line]
        out.append(inside[-1] if inside else (named[0][1] if named else None))
    return out


def prefix_bound(prefix: str) -> str:
    """The least text above every text starting with ``prefix`` (for an indexed range)."""
    return prefix + "\U0010ffff"


@runtime_checkable
class CodeTables(CodeLinks, Protocol):
    """The code tables of one store (``Store.code()``), scoped by realm; with the memories'
    links to symbols and the symbol history (store/code_links.py)."""

    def replace_file(
        self, realm: str, repo: str, extract: FileExtract, commit: str | None, at: int
    ) -> list[str]:
        """Replace every row of the file ``extract.path`` of ``repo`` with ``extract``'s, in
        one transaction; its callsites start ``pending``. The new symbols' ids, in order."""

    def replace_files(
        self, realm: str, repo: str, extracts: Sequence[FileExtract], commit: str | None, at: int
    ) -> list[list[str]]:
        """:meth:`replace_file` for several files in one transaction (an index's batch)."""

    def remove_file(self, realm: str, repo: str, path: str) -> bool:
        """Remove the file and its rows; False when it was not indexed."""

    def remove_files(self, realm: str, repo: str, paths: Sequence[str]) -> int:
        """Remove several files in one transaction; how many were indexed."""

    def files(self, realm: str, repo: str) -> dict[str, str]:
        """The indexed files of ``repo``: path → content hash."""

    def file(self, realm: str, repo: str, path: str) -> StoredFile | None: ...

    def repos(self, realm: str) -> list[str]:
        """The repositories indexed in ``realm``, sorted."""

    def find_symbols(
        self,
        realm: str,
        name: str,
        *,
        prefix: bool = False,
        kinds: Sequence[str] = (),
        limit: int = 20,
    ) -> list[StoredSymbol]:
        """Symbols whose name is ``name`` (or starts with it), any case; a ``name`` with a
        ``.`` (or ``::``) matches qualified names that are it or end in ``.`` + it. Those in
        ``name``'s own case first, then by repository, file and line; at most ``limit``."""

    def symbols_by_id(self, ids: Sequence[str]) -> dict[str, StoredSymbol]: ...

    def symbols_in(self, realm: str, repo: str, path: str) -> list[StoredSymbol]:
        """A file's symbols, by line."""

    def extracts(self, realm: str, repo: str) -> list[FileExtract]:
        """Every file of ``repo`` as the extractor gave it (for the resolver), by path."""

    def callsites(
        self,
        realm: str,
        repo: str | None = None,
        *,
        states: Sequence[str] = (),
        paths: Sequence[str] | None = None,
    ) -> list[StoredCallsite]:
        """The callsites of ``realm`` (of one repository; in some states; in some files), by
        file and line."""

    def set_resolutions(self, realm: str, repo: str, resolutions: Sequence[Resolution]) -> int:
        """Record the resolver's answers, in one transaction; the callsites changed. A
        target not among ``repo``'s symbols of ``realm`` is dropped from the answer (a
        ``resolved`` one with none left becomes ``unresolved``)."""

    def mark_pending(
        self, realm: str, repo: str, names: Sequence[str], paths: Sequence[str] | None = None
    ) -> int:
        """Set every callsite of ``repo`` that calls one of ``names`` back to ``pending`` (its
        target and candidates cleared), in one transaction; how many were not pending before.
        What a one-file re-index does to the calls a changed definition may now answer. With
        ``paths``, only those files' callsites (the caller knows which files call the names)."""

    def callers(
        self, realm: str, symbol_id: str, depth: int = 1, limit: int = 100
    ) -> tuple[list[CallEdge], bool]:
        """The resolved calls of ``symbol_id`` and, to ``depth`` (at most MAX_DEPTH), of its
        callers, breadth first; at most ``limit`` edges, and whether the bound cut them."""

    def callees(
        self, realm: str, symbol_id: str, depth: int = 1, limit: int = 100
    ) -> tuple[list[CallEdge], bool]:
        """The resolved calls made by ``symbol_id`` (and by its callees to ``depth``)."""

    def resolution_counts(
        self, realm: str, repo: str | None = None, paths: Sequence[str] | None = None
    ) -> dict[str, int]:
        """Callsites by resolution state (every state named, zeros included); with ``paths``,
        of those files of ``repo`` only."""

    def counts(self, realm: str | None = None) -> dict[str, int]:
        """Files, symbols, callsites, imports and bases (of one realm, or all)."""

    # --- symbol search and the outline (store/code_vectors.py) ---------------------------------

    def set_vectors(self, model: str, items: Sequence[tuple[StoredSymbol, np.ndarray]]) -> int:
        """Store (or replace) each symbol's vector, made by ``model``; how many."""

    def vectors(self, realm: str, model: str) -> tuple[list[str], np.ndarray]:
        """The ids and vectors of ``realm``'s symbols embedded by ``model``, by id."""

    def unembedded(self, realm: str, repo: str, model: str) -> list[str]:
        """The ids of ``repo``'s symbols with no vector by ``model``."""

    def realm_symbols(self, realm: str) -> list[StoredSymbol]:
        """Every symbol of ``realm``, by repository, file and line."""

    def call_pairs(self, realm: str) -> list[tuple[str, str]]:
        """(caller id, target id) of every resolved call of ``realm`` made by a symbol."""

    def search_version(self, realm: str) -> tuple[int, ...]:
        """What changes whenever ``realm``'s symbols or vectors do."""

    # --- the triplets made of the edges (code/edges.py) -------------------------------------

    def edge_triplets(
        self, realm: str, repo: str, subjects: Sequence[str] | None = None
    ) -> dict[EdgeKey, str]:
        """The triplets the code index made of ``repo``'s edges: the edge's keys (subject,
        predicate, object: store/triplets.py's entity and predicate keys) → triplet id; with
        ``subjects`` (subject keys), those of edges from them only."""

    def refresh_statistics(self) -> None:
        """Tell the database's planner what the code tables now hold, after an index changed
        many of their rows (PostgreSQL: ``VACUUM (ANALYZE)``; SQLite: nothing)."""
        ...

    def set_edge_triplets(
        self, realm: str, repo: str, add: Mapping[EdgeKey, str], drop: Sequence[EdgeKey]
    ) -> None:
        """Record the triplets made of new edges and forget those of edges gone, in one
        transaction (the triplets themselves are the store's: code/edges.py writes them)."""
