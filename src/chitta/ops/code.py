"""Operations on code intelligence (code/): index a repository, find a symbol, walk its
callers and callees over the resolved call graph (store/code.py).

MCP offers them as one tool, ``code`` (:data:`CODE`), whose ``op`` picks find, callers,
callees, search or outline: the tool list Claude Code is sent with every request has a budget
(docs/mcp.md), which five tools of their own would not fit. Indexing stays with the CLI and
the post-edit hook (a user's setup, and a write).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from chitta.code.model import SYMBOL_KINDS
from chitta.code.offered import mark
from chitta.errors import BadArgument, SymbolNotFound
from chitta.ops.common import REALM, file_path
from chitta.ops.spec import Context, Operation, Param, Params
from chitta.scope import DEFAULT_REALM
from chitta.store.code import MAX_DEPTH, PENDING, CallEdge, StoredSymbol
from chitta.validate import MAX_PATH_CHARS, check_scope_name

if TYPE_CHECKING:
    from chitta.api import Chitta
    from chitta.store.code import CodeTables

#: The most characters of a symbol name or id asked for.
MAX_NAME_CHARS = 512
#: The most files one ``code_reindex`` takes (code/reindex.py's MAX_FILES).
MAX_REINDEX_FILES = 256
#: The most symbols one name walks callers or callees from (the rest are counted).
MAX_ROOTS = 5


def _realm(chitta: Chitta, p: Params) -> str:
    return check_scope_name(p.get("realm") or chitta.realm, "realm") or DEFAULT_REALM


def symbol_dict(s: StoredSymbol) -> dict[str, Any]:
    """A stored symbol as the replies give it."""
    x = s.symbol
    return {"id": s.id, "name": x.name, "qualified": x.qualified, "kind": x.kind,
            "signature": x.signature, "repo": s.repo, "path": x.path,
            "start_line": x.start_line, "end_line": x.end_line, "parent": x.parent,
            "language": x.language, "doc": x.doc, "commit": s.commit}  # fmt: skip


def _index(chitta: Chitta, p: Params, ctx: Context) -> dict[str, Any]:
    from chitta.code.answers import Resolver
    from chitta.code.edges import store_edges
    from chitta.code.index import index_path
    from chitta.code.reindex import handing_over

    root = file_path(ctx, p["path"], "path")
    realm, code, model = _realm(chitta, p), chitta.store.code(), _model(chitta)
    embed = None if p.get("no_embed") else _embedding(chitta)
    resolver = Resolver()
    repo = root.expanduser().resolve().as_posix()
    report = index_path(chitta.store, realm, root, resolve=handing_over(resolver, code, realm,
                        repo), progress=ctx.progress, embed=embed)  # fmt: skip
    if embed is not None:  # symbols an earlier --no-embed index (or another model) left bare
        bare = code.unembedded(realm, report.repo, model)
        if bare:
            embed(list(code.symbols_by_id(bare).values()))
    out = report.as_dict() | {"unembedded": len(code.unembedded(realm, report.repo, model))}
    if report.indexed or report.unchanged:  # code is indexed: MCP offers its tool (offered.py)
        mark(chitta.spool_file)
    if resolver.last is not None:  # the edges changed: keep the realm's triplets in step
        at = int(time.time() * 1000)
        out["triplets"] = store_edges(chitta.store, realm, report.repo, resolver.last,
                                      now=at).as_dict()  # fmt: skip
    return out


def _model(chitta: Chitta) -> str:
    """The key of the store's embedder, which symbol vectors are stored under."""
    return chitta.embedder.identity().hash


def _embedding(chitta: Chitta) -> Callable[[Sequence[StoredSymbol]], None]:
    """The index's ``embed`` seam: the symbols' vectors by the store's embedder, batched."""
    from chitta.code.search import embed_symbols

    code, model = chitta.store.code(), _model(chitta)
    # Past the embedder's cache: each symbol's text is embedded once, and thousands of them
    # would push the queries' vectors out of it.
    embedder = getattr(chitta.embedder, "inner", chitta.embedder)

    def embed(symbols: Sequence[StoredSymbol]) -> None:
        embed_symbols(code, model, lambda texts: embedder.embed(texts).vectors, symbols)

    return embed


def _reindex(chitta: Chitta, p: Params, ctx: Context) -> dict[str, Any]:
    from chitta.code.reindex import reindex_paths

    realm = _realm(chitta, p)
    paths = [str(file_path(ctx, raw, "paths")) for raw in p["paths"]]
    reports, outside = reindex_paths(chitta.store, realm, paths, resolve=True)
    return {"realm": realm, "repos": [r.as_dict() for r in reports], "outside": outside}


def _find(chitta: Chitta, p: Params, ctx: Context) -> dict[str, Any]:
    realm = _realm(chitta, p)
    kinds = (p["kind"],) if p.get("kind") else ()
    found = chitta.store.code().find_symbols(realm, p["name"], prefix=p.get("prefix", False),
                                             kinds=kinds, limit=p.get("limit", 20))  # fmt: skip
    return {"realm": realm, "symbols": [symbol_dict(s) for s in found]}


def _roots(code: CodeTables, realm: str, wanted: str) -> tuple[list[StoredSymbol], int]:
    """The symbols ``wanted`` names (an id, or a name as find_symbol reads it), at most
    MAX_ROOTS, and how many more it names; SymbolNotFound when none."""
    if wanted.startswith("sym_"):
        by_id = code.symbols_by_id([wanted]).get(wanted)
        if by_id is not None and by_id.realm == realm:
            return [by_id], 0
    found = code.find_symbols(realm, wanted, limit=MAX_ROOTS + 1)
    exact = [s for s in found if s.symbol.name == wanted.replace("::", ".").rpartition(".")[2]]
    found = exact or found
    if not found:
        raise SymbolNotFound(f"no symbol {wanted!r} is indexed in realm {realm!r}; "
                             "`chitta code index PATH` indexes a repository")  # fmt: skip
    return found[:MAX_ROOTS], max(0, len(found) - MAX_ROOTS)


def _edge(e: CallEdge, other: str | None, names: dict[str, StoredSymbol]) -> dict[str, Any]:
    s = names.get(other) if other is not None else None
    end = ({"id": s.id, "qualified": s.symbol.qualified, "kind": s.symbol.kind,
            "path": s.symbol.path, "line": s.symbol.start_line} if s is not None
           else {"id": None, "qualified": e.caller})  # fmt: skip
    return {"depth": e.depth, "symbol": end, "call": {"path": e.path, "line": e.line}}


def _walk(chitta: Chitta, p: Params, *, callers: bool) -> dict[str, Any]:
    realm, code = _realm(chitta, p), chitta.store.code()
    roots, more = _roots(code, realm, p["symbol"])
    depth, limit = p.get("depth", 1), p.get("limit", 50)
    key = "callers" if callers else "callees"
    out = []
    for root in roots:
        walk = code.callers if callers else code.callees
        edges, cut = walk(realm, root.id, depth, limit)
        others = [e.caller_id if callers else e.target_id for e in edges]
        names = code.symbols_by_id([o for o in others if o is not None])
        out.append({"symbol": symbol_dict(root),
                    key: [_edge(e, o, names) for e, o in zip(edges, others, strict=True)],
                    "cut": cut})  # fmt: skip
    pending = code.resolution_counts(realm)[PENDING]
    return {"realm": realm, "symbols": out, "more_symbols": more, "depth": depth,
            "pending_calls": pending}  # fmt: skip


DEPTH = Param("depth", "int", f"How many calls away to follow (at most {MAX_DEPTH}).",
              default=1, minimum=1, maximum=MAX_DEPTH, short="-d")  # fmt: skip
EDGE_LIMIT = Param("limit", "int", "At most this many calls per symbol.", default=50, minimum=1,
                   maximum=1000, short="-n")  # fmt: skip
SYMBOL = Param("symbol", "text", "A symbol's name (Class.method, a::b) or id.", required=True,
               positional=True, max_length=MAX_NAME_CHARS)  # fmt: skip

CODE_INDEX = Operation(
    "code_index",
    "Index the repository or folder PATH: its symbols, calls, imports and bases (again: only "
    "the files that changed).",
    (
        Param(
            "path",
            "text",
            "The repository or folder (absolute in the daemon).",
            required=True,
            positional=True,
            max_length=MAX_PATH_CHARS,
        ),
        REALM,
        Param(
            "no_embed",
            "flag",
            "Leave symbols without vectors (faster; search_symbols then "
            "ranks by keywords alone until an index with them).",
            default=False,
        ),
    ),  # fmt: skip
    _index,
    writes=True,
    long=True,
    creates=True,
    effect="idempotent",
    detail="In a git work tree the files git tracks or would track are read (.gitignore "
    "holds); elsewhere .gitignore files are read. Vendored, generated, binary and very large "
    "files are skipped and counted by reason. Needs the code extra: pip install 'chitta[code]'.",
)
CODE_REINDEX = Operation(
    "code_reindex",
    "Re-index the files PATHS of indexed repositories (what an edit changed): only those "
    "files, and the calls they can change.",
    (
        Param(
            "paths",
            "list",
            "The files (absolute in the daemon); one gone from disk leaves the index.",
            required=True,
            max_length=MAX_PATH_CHARS,
            max_items=MAX_REINDEX_FILES,
        ),
        REALM,
    ),  # fmt: skip
    _reindex,
    writes=True,
    effect="idempotent",
    detail="A file in no repository indexed in the realm is left alone (listed as outside). "
    "The files' calls, and the calls elsewhere of the names they define or stop defining, "
    'are resolved again (docs/code.md, "Staying current"). `chitta code index FILE...` '
    "runs it; so does the PostToolUse hook after an Edit or Write.",
)
FIND_SYMBOL = Operation(
    "find_symbol",
    "Find indexed symbols by NAME (any case; Class.method or a::b for qualified names).",
    (
        Param(
            "name",
            "text",
            "The name, or its start with --prefix.",
            required=True,
            positional=True,
            max_length=MAX_NAME_CHARS,
        ),
        Param("prefix", "flag", "Names starting with NAME.", default=False),
        Param("kind", "text", "Only symbols of this kind.", choices=SYMBOL_KINDS, short="-k"),
        Param(
            "limit",
            "int",
            "At most this many symbols.",
            default=20,
            minimum=1,
            maximum=1000,
            short="-n",
        ),
        REALM,
    ),  # fmt: skip
    _find,
)
SYMBOL_CALLERS = Operation(
    "symbol_callers",
    "List who calls SYMBOL, over the resolved call graph (to --depth calls away).",
    (SYMBOL, DEPTH, EDGE_LIMIT, REALM),
    lambda chitta, p, ctx: _walk(chitta, p, callers=True),
)
SYMBOL_CALLEES = Operation(
    "symbol_callees",
    "List what SYMBOL calls, over the resolved call graph (to --depth calls away).",
    (SYMBOL, DEPTH, EDGE_LIMIT, REALM),
    lambda chitta, p, ctx: _walk(chitta, p, callers=False),
)


# --- search_symbols and code_outline (code/search.py, code/outline.py) ---------------------

#: The most characters of a search query.
MAX_QUERY_CHARS = 1000
#: code_outline's default character budget (a few hundred tokens of a first prompt).
OUTLINE_CHARS = 1500


def _search(chitta: Chitta, p: Params, ctx: Context) -> dict[str, Any]:
    from chitta.code.search import search

    realm, code = _realm(chitta, p), chitta.store.code()
    kinds = (p["kind"],) if p.get("kind") else ()
    hits, index = search(code, realm, p["query"], model=_model(chitta), kinds=kinds,
                         embed_query=lambda q: chitta.embedder.embed([q]).vectors[0],
                         limit=p.get("limit", 10))  # fmt: skip
    return {"realm": realm,
            "symbols": [symbol_dict(h.symbol) | {"score": round(h.score, 6), "lanes": h.lanes}
                        for h in hits],
            "searched": len(index.symbols),
            "unembedded": len(index.symbols) - len(index.vector_rows)}  # fmt: skip


def _outline(chitta: Chitta, p: Params, ctx: Context) -> dict[str, Any]:
    from chitta.code.outline import central, outline

    realm, code = _realm(chitta, p), chitta.store.code()
    ranked = central(code.realm_symbols(realm), code.call_pairs(realm))
    text, shown = outline(ranked, p.get("chars", OUTLINE_CHARS))
    return {"realm": realm, "outline": text, "symbols": shown, "of": len(ranked),
            "chars": len(text)}  # fmt: skip


SEARCH_SYMBOLS = Operation(
    "search_symbols",
    "Search indexed symbols by QUERY: what they do (their docstrings) or their names.",
    (
        Param(
            "query",
            "text",
            "Words for what the code does, or part of a name.",
            required=True,
            positional=True,
            max_length=MAX_QUERY_CHARS,
        ),
        Param("kind", "text", "Only symbols of this kind.", choices=SYMBOL_KINDS, short="-k"),
        Param(
            "limit",
            "int",
            "At most this many symbols.",
            default=10,
            minimum=1,
            maximum=200,
            short="-n",
        ),
        REALM,
    ),  # fmt: skip
    _search,
    detail="Embedding similarity over each symbol's name, signature and docstring (the "
    "store's model), and BM25 over its name and signature, fused by reciprocal rank; "
    "symbols indexed with --no-embed are found by the keywords alone.",
)
CODE_OUTLINE = Operation(
    "code_outline",
    "A short outline of the indexed code: its most central symbols by the call graph, by "
    "file, within --chars.",
    (
        Param(
            "chars",
            "int",
            "The outline's most characters.",
            default=OUTLINE_CHARS,
            minimum=100,
            maximum=100_000,
            short="-c",
        ),
        REALM,
    ),  # fmt: skip
    _outline,
    detail="Central: PageRank over the resolved calls, so a function called from many places "
    "(or from central ones) comes first. One line a file: path: Name(params); Other(...).",
)


# --- the MCP tool ``code``: the read operations behind one ``op`` --------------------------

#: Each ``op`` of the ``code`` tool: the operation it runs, the parameter ``q`` fills, and
#: the limit it asks for (an agent's context is precious: fewer rows than the CLI's).
CODE_OPS: dict[str, tuple[Operation, str | None, dict[str, int]]] = {
    "find": (FIND_SYMBOL, "name", {"limit": 10}),
    "callers": (SYMBOL_CALLERS, "symbol", {"limit": 20}),
    "callees": (SYMBOL_CALLEES, "symbol", {"limit": 20}),
    "search": (SEARCH_SYMBOLS, "query", {"limit": 10}),
    "outline": (CODE_OUTLINE, None, {}),
}


def _code(chitta: Chitta, p: Params, ctx: Context) -> dict[str, Any]:
    """Run the operation ``op`` names with ``q`` in its place, checked by its description."""
    op, slot, asks = CODE_OPS[p["op"]]
    params: dict[str, Any] = {"realm": p.get("realm"), **asks}
    if slot is not None:
        if not p.get("q"):
            raise BadArgument(
                f"code {p['op']} needs q: "
                + ("a symbol's name" if p["op"] != "search" else "search words")
            )
        params[slot] = p["q"]
    if p.get("depth") is not None and "depth" in op.by_name:
        params["depth"] = p["depth"]
    reply = op.call(chitta, params, ctx)
    reply.pop("ok")
    return {"op": p["op"], **reply}


CODE = Operation(
    "code",
    "The indexed code's read operations behind one OP (the MCP tool code): find, callers, "
    "callees, search, outline.",
    (
        Param(
            "op",
            "text",
            "Which read to run.",
            required=True,
            positional=True,
            choices=tuple(CODE_OPS),
        ),
        Param("q", "text", "Name (Class.method) or search words.", max_length=MAX_QUERY_CHARS),
        replace(DEPTH, mcp=False),
        REALM,
    ),  # fmt: skip
    _code,
    mcp="Indexed code: find a symbol by name, its callers or callees, search by purpose, "
    "outline. Rows [qualified, path:line, kind, signature]; calls [qualified, path:line, "
    "depth].",
)

OPERATIONS = (CODE_INDEX, CODE_REINDEX, FIND_SYMBOL, SYMBOL_CALLERS, SYMBOL_CALLEES,
              SEARCH_SYMBOLS, CODE_OUTLINE, CODE)  # fmt: skip
