"""Linking memories to the indexed symbols they name (docs/code.md, "Memories that know the
code moved").

A memory's code names (code/names.py) are looked up among its realm's symbols: a name
matches a symbol whose name is it, in its case (``parse_tags``), or whose qualified name
ends in it (``Cart.total``, ``chitta::recall`` read as ``chitta.recall``). A name that
matches more than :data:`MAX_TARGETS` symbols says too little to link (``__init__``,
``to_dict``): none are linked. Modules are never linked: their body is the file, which
changes with any edit, so the mark would say nothing.

Two moments link: :func:`link_memory` when a memory is remembered (nothing when the realm
has no symbols: one indexed read; else one indexed lookup per code name), and
:func:`link_repository` when an index stored new or changed symbols, for the memories
remembered before (bounded: the words of the stored symbols' names, at most
:data:`MAX_INDEX_WORDS`, looked up in the keyword index's frequencies in one read; a keyword
search for at most :data:`MAX_INDEX_NAMES` of the names whose every word some memory holds;
at most :data:`MAX_INDEX_MEMORIES` memories read and linked as at remember time). A symbol
is searched by how a memory would write it outside backticks (:func:`searched_name`), so a
memory that names a plain name only in backticks is linked at remember time alone.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from chitta.code.names import code_like, code_names, lookup_form
from chitta.store.base import Store
from chitta.store.code import StoredSymbol
from chitta.store.code_links import SymbolLink
from chitta.store.records import Scope

#: A name matching more symbols than this links none.
MAX_TARGETS = 3
#: Distinct words of symbol names an index looks up in the keyword index, at most.
MAX_INDEX_WORDS = 2000
#: Symbol names (whose words some memory holds) an index searches memories for, at most.
MAX_INDEX_NAMES = 200
#: Memories an index reads and links, at most.
MAX_INDEX_MEMORIES = 500
#: Memories one symbol name's keyword search brings.
PER_NAME = 20
_WORDS = re.compile(r"[A-Za-z0-9]+")


def targets(store: Store, realm: str, name: str) -> list[StoredSymbol]:
    """The symbols ``name`` (a code name as written) names, or none when it is ambiguous."""
    wanted = lookup_form(name)
    found = store.code().find_symbols(realm, wanted, limit=4 * MAX_TARGETS)
    last = wanted.rpartition(".")[2]
    exact = [s for s in found if s.symbol.kind != "module" and s.symbol.name == last
             and ("." in wanted) <= (s.symbol.qualified == wanted
                                     or s.symbol.qualified.endswith("." + wanted))]  # fmt: skip
    return exact if len(exact) <= MAX_TARGETS else []


def links_for(
    store: Store, realm: str, memory_id: str, text: str, at: int,
    cache: dict[str, list[StoredSymbol]] | None = None,
) -> list[SymbolLink]:  # fmt: skip
    """The links ``text`` (memory ``memory_id``'s) gives, as the symbols are now; ``cache``
    keeps each name's symbols across the memories of one index."""
    out: list[SymbolLink] = []
    cache = {} if cache is None else cache
    for name in code_names(text):
        if name not in cache:
            cache[name] = targets(store, realm, name)
        for s in cache[name]:
            out.append(SymbolLink(realm, memory_id, s.id, s.repo, s.symbol.qualified,
                                  s.symbol.body_hash, s.commit, at))  # fmt: skip
    return out


def link_memory(store: Store, realm: str, memory_id: str, text: str, at: int) -> int:
    """Link a memory just remembered to the symbols it names; how many links were made."""
    tables = store.code()
    if not tables.has_symbols(realm):
        return 0
    return tables.add_links(links_for(store, realm, memory_id, text, at))


def searched_name(symbol: StoredSymbol) -> str | None:
    """How a memory would write ``symbol`` outside backticks: its name when that is
    code-like (``parse_tags``), else its parent's and its own (``Cart.total``); None for a
    module or a plain top-level name (only a backticked mention names that)."""
    s = symbol.symbol
    if s.kind == "module":
        return None
    if code_like(s.name):
        return s.name
    parts = s.qualified.split(".")
    return ".".join(parts[-2:]) if len(parts) > 1 and code_like(".".join(parts[-2:])) else None


def link_repository(store: Store, realm: str, symbols: Sequence[StoredSymbol], at: int) -> int:
    """Link the realm's memories that name any of ``symbols`` (an index's new or changed
    ones); how many links were made (see the module docstring for the bounds)."""
    words: dict[str, list[str]] = {}
    distinct: set[str] = set()
    for s in symbols:
        name = searched_name(s)
        if name is None or name in words:
            continue
        ws = [w.lower() for w in _WORDS.findall(name)]
        if len(distinct | set(ws)) > MAX_INDEX_WORDS:
            break
        words[name] = ws
        distinct.update(ws)
    if not words:
        return 0
    # One read of the keyword index's frequencies drops the names no memory holds.
    _, df = store.keyword_frequencies(sorted(distinct), realm)
    held = [ws for ws in words.values() if ws and all(df.get(w, 0) for w in ws)]
    scope = Scope(realm=realm)
    wanted: dict[str, None] = {}
    for ws in held[:MAX_INDEX_NAMES]:
        for mid, _ in store.keyword_search(ws, scope, PER_NAME):
            wanted.setdefault(mid)
        if len(wanted) >= MAX_INDEX_MEMORIES:
            break
    ids = list(wanted)[:MAX_INDEX_MEMORIES]
    links: list[SymbolLink] = []
    cache: dict[str, list[StoredSymbol]] = {}
    for mid, memory in store.get_many(ids).items():
        if memory.realm == realm:
            links += links_for(store, realm, mid, memory.content, at, cache)
    return store.code().add_links(links)
