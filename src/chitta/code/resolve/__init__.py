"""Resolution into a call graph (issue 20, part 2): the extracts of a repository's files in,
edges and the callsites that stayed open out. A pure function: the same extracts, in any
order, give the same resolution.

Edges: ``calls`` (caller -> callee, one per resolved callsite), ``contains`` (parent ->
child), ``imports`` (a file's module -> the indexed module or symbol it imports) and
``inherits`` (class -> its resolved base). A callsite that does not become an edge is kept
``unresolved`` (no candidate) or ``ambiguous`` (with its candidates): never guessed into an
edge. The rules per language are in docs/code.md, "Resolution".
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from chitta.code.model import Callsite, FileExtract, Symbol
from chitta.code.resolve import names
from chitta.code.resolve.calls import Calls
from chitta.code.resolve.index import Index, Module
from chitta.code.resolve.scope import FOUND, Scopes

#: The predicates of the edges resolution makes (seed 001's code predicates).
PREDICATES = ("calls", "contains", "imports", "inherits")
#: The states of a callsite that did not become an edge.
OPEN_STATES = ("unresolved", "ambiguous")
#: Candidates an ambiguous callsite lists, at most (``get`` on an unknown receiver may fit
#: hundreds of methods in a large repository); the rest are counted.
MAX_CANDIDATES = 50


@dataclass(frozen=True, slots=True)
class Edge:
    """``subject`` -predicate-> ``object``, qualified names of symbols (or, for ``imports``,
    of a module); the paths say which files' symbols they are, ``path``/``line`` where the
    edge is written; a ``calls`` edge keeps its callsite."""

    predicate: str
    subject: str
    object: str
    subject_path: str
    object_path: str
    path: str
    line: int
    callsite: Callsite | None = None


@dataclass(frozen=True, slots=True)
class OpenCall:
    """A callsite that did not become an edge, and why; ``candidates`` are the qualified
    names it may mean (ambiguous), empty when it is unresolved."""

    callsite: Callsite
    state: str
    candidates: tuple[str, ...]
    reason: str
    left_off: int = 0  # candidates past MAX_CANDIDATES, not listed


@dataclass(frozen=True, slots=True)
class Resolution:
    """Every edge and open callsite of a set of extracts, in a fixed order."""

    edges: tuple[Edge, ...]
    open: tuple[OpenCall, ...]

    def of(self, predicate: str) -> tuple[Edge, ...]:
        """The edges of one predicate."""
        return tuple(e for e in self.edges if e.predicate == predicate)

    @property
    def calls(self) -> tuple[Edge, ...]:
        return self.of("calls")

    @property
    def unresolved(self) -> tuple[OpenCall, ...]:
        return tuple(o for o in self.open if o.state == "unresolved")

    @property
    def ambiguous(self) -> tuple[OpenCall, ...]:
        return tuple(o for o in self.open if o.state == "ambiguous")


def resolve(extracts: Sequence[FileExtract], paths: Collection[str] | None = None) -> Resolution:
    """The call graph and structure of a set of extracts (docs/code.md, "Resolution"); with
    ``paths``, only the edges and callsites written in those files, resolved against all."""
    return resolve_index(Index(extracts), paths)


def resolve_index(index: Index, paths: Collection[str] | None = None) -> Resolution:
    """:func:`resolve` over an index already built (and kept current: Index.update)."""
    scopes = Scopes(index)
    calls = Calls(scopes)
    edges: list[Edge] = []
    open_: list[OpenCall] = []
    wanted = None if paths is None else frozenset(paths)
    for path, ex in sorted(index.files.items()):
        if wanted is not None and path not in wanted:
            continue
        for call in sorted(ex.callsites, key=_call_key):
            out = calls.resolve(call)
            if out.target is not None:
                t = out.target
                edges.append(
                    Edge("calls", call.caller, t.qualified, call.path, t.path, call.path,
                         call.line, call)
                )  # fmt: skip
            else:
                cands = sorted({c.qualified for c in out.candidates})
                state = "ambiguous" if cands else "unresolved"
                kept = tuple(cands[:MAX_CANDIDATES])
                open_.append(OpenCall(call, state, kept, out.reason, len(cands) - len(kept)))
        edges += _contains(index, ex)
        edges += _imports(index, scopes, ex)
        edges += _inherits(scopes, ex)
    edges = sorted(set(edges), key=_edge_key)
    return Resolution(tuple(edges), tuple(sorted(open_, key=lambda o: _call_key(o.callsite))))


def _call_key(c: Callsite) -> tuple:
    return (c.path, c.line, c.caller, c.name, c.form, c.receiver or "", c.qualifier or "")


def _edge_key(e: Edge) -> tuple:
    call = _call_key(e.callsite) if e.callsite else ()
    return (e.predicate, e.path, e.line, e.subject, e.object, e.subject_path, e.object_path, call)


def _contains(index: Index, ex: FileExtract) -> list[Edge]:
    """Each symbol's parent contains it."""
    out = []
    for s in ex.symbols:
        if s.parent is None:
            continue
        parents = index.parents(s)
        where = parents[0].path if parents else s.path
        out.append(Edge("contains", s.parent, s.qualified, where, s.path, s.path, s.start_line))
    return out


def module_name(index: Index, path: str) -> str:
    """The name an ``imports`` edge gives a file's module: its module symbol's qualified
    name, else the convention of its language (Python's dotted module, else the path)."""
    root = index.root.get(path)
    if root is not None:
        return root.qualified
    ex = index.files[path]
    if names.family(ex.language) == "python":
        return names.python_module(path)
    return path


def _imports(index: Index, scopes: Scopes, ex: FileExtract) -> list[Edge]:
    """A file's module imports each indexed module or symbol its imports name."""
    subject = module_name(index, ex.path)
    out = []
    for group in scopes.bindings(ex.path).values():
        for b in group:
            found = scopes.resolve_binding(b)
            if found.status != FOUND or len(found.targets) != 1:
                continue
            t = found.targets[0]
            if isinstance(t, Module):
                if len(t.files) != 1 and names.family(ex.language) not in ("go", "java"):
                    continue
                obj, where = _module_label(index, t), t.files[0]
            else:
                obj, where = t.qualified, t.path
            if obj != subject:
                out.append(Edge("imports", subject, obj, ex.path, where, ex.path, b.line))
    return out


def _module_label(index: Index, mod: Module) -> str:
    if len(mod.files) == 1:
        return module_name(index, mod.files[0])
    roots = sorted({index.root[p].qualified for p in mod.files if p in index.root})
    return roots[0] if len(roots) == 1 else mod.key


def _inherits(scopes: Scopes, ex: FileExtract) -> list[Edge]:
    """Each class inherits each base written in this file that names one indexed class."""
    out = []
    ix = scopes.ix
    for b in ex.bases:
        child = ix.symbol(ex.path, b.child, b.line) or _elsewhere(ix, ex, b.child)
        if child is None:
            continue
        for written, base in scopes.bases(child):
            if written == b and base is not None:
                out.append(
                    Edge("inherits", child.qualified, base.qualified, child.path, base.path,
                         ex.path, b.line)
                )  # fmt: skip
    return out


def _elsewhere(ix: Index, ex: FileExtract, qualified: str) -> Symbol | None:
    found = ix.qualified.get((names.family(ex.language), qualified), [])
    return found[0] if found else None


__all__ = [
    "MAX_CANDIDATES",
    "OPEN_STATES",
    "PREDICATES",
    "Edge",
    "OpenCall",
    "Resolution",
    "resolve",
    "resolve_index",
]
