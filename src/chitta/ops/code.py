"""Operations on code intelligence (code/): index a repository, find a symbol, walk its
callers and callees over the resolved call graph (store/code.py).

Not MCP tools yet: the tool list Claude Code is sent has a budget (docs/mcp.md, "What the
tools cost") that the existing tools nearly fill; which code tools an agent gets is decided
with the ``code`` lane.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from chitta.code.model import SYMBOL_KINDS
from chitta.errors import SymbolNotFound
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

    root = file_path(ctx, p["path"], "path")
    realm = _realm(chitta, p)
    resolver = Resolver()
    report = index_path(chitta.store, realm, root, resolve=resolver, progress=ctx.progress)
    out = report.as_dict()
    if resolver.last is not None:  # the edges changed: keep the realm's triplets in step
        at = int(time.time() * 1000)
        out["triplets"] = store_edges(chitta.store, realm, report.repo, resolver.last,
                                      now=at).as_dict()  # fmt: skip
    return out


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

OPERATIONS = (CODE_INDEX, FIND_SYMBOL, SYMBOL_CALLERS, SYMBOL_CALLEES)
