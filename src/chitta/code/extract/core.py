"""The walk every language shares: one pass over a tree-sitter tree that finds definitions,
calls, imports and bases through a language's :class:`Spec`, and the records it makes."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from typing import Any

from chitta.code.model import Base, Callsite, FileExtract, Import, Symbol

Node = Any  # tree_sitter.Node: the extra may be absent when this module is imported

#: Kinds whose members are methods.
TYPE_KINDS = frozenset({"class", "struct", "enum", "interface", "trait", "impl"})
#: Longest signature, docstring and receiver text kept (a minified line is not a signature).
MAX_SIGNATURE = 240
MAX_DOC = 1000
MAX_EXPR = 80
#: Receivers that are the object itself, never a module or type.
_VALUES = frozenset({"self", "this", "super", "cls"})


def content_hash(data: bytes) -> str:
    """BLAKE2b (16 bytes) of ``data``, hex: a file's content hash and a symbol's body hash."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


@dataclass(frozen=True, slots=True)
class Definition:
    """What a language reads off a definition node."""

    name: str
    kind: str  # a model.SYMBOL_KINDS kind, or "impl": a scope that is no symbol (Rust's impl)
    node: Node  # the whole definition: its lines and body hash
    body: Node | None = None  # the signature is the text before it
    head: Node | None = None  # where the signature starts, if not at ``node`` (decorators)
    parent: str | None = None  # the enclosing type where the syntax names it elsewhere
    doc: str | None = None  # a docstring the language found; None: the leading comment
    params: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class Scope:
    """Where the walk is: what names its definitions, its calls' caller, its parameters."""

    prefix: str  # joined before a definition's name ("" for none)
    parent: str | None  # the enclosing symbol's qualified name
    caller: str  # the enclosing symbol, or the file's module (its path where it has none)
    kind: str = "file"
    params: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class Call:
    """A call as a language reads it, before receivers on imported modules become qualifiers."""

    name: str
    form: str
    receiver: str | None = None
    qualifier: str | None = None


@dataclass
class Context:
    """The file being read and what the walk has found so far."""

    path: str
    language: str
    source: bytes
    symbols: list[Symbol] = field(default_factory=list)
    calls: list[tuple[Call, str, int]] = field(default_factory=list)
    imports: list[Import] = field(default_factory=list)
    bases: list[Base] = field(default_factory=list)
    #: Names that stand for a module or package here (``import os``): ``os.f()`` is qualified.
    modules: set[str] = field(default_factory=set)
    #: Names of the types defined in the file: ``Foo.bar()`` is qualified.
    types: set[str] = field(default_factory=set)

    def text(self, node: Node | None) -> str:
        return "" if node is None else self.source[node.start_byte : node.end_byte].decode()

    def add_import(self, node: Node, module: str, name: str | None, alias: str | None) -> None:
        line = node.start_point[0] + 1
        self.imports.append(Import(module, name, alias, self.path, line))

    def add_base(self, node: Node, child: str, base: str) -> None:
        self.bases.append(Base(child, base, self.path, node.start_point[0] + 1))


CallReader = Callable[[Node, Context], Call | None]
DefinitionReader = Callable[[Node, Scope, Context], Definition | None]
NodeReader = Callable[[Node, Scope, Context], None]


@dataclass(frozen=True)
class Spec:
    """A language: its readers by node type, and how its files are named."""

    definitions: dict[str, DefinitionReader]
    calls: dict[str, CallReader]
    #: Imports, bases and anything else read off one node (no scope of its own).
    others: dict[str, NodeReader] = field(default_factory=dict)
    #: The file level: (module symbol's name or None, prefix of qualified names, caller).
    file_scope: Callable[[Node, Context], tuple[Symbol | None, Scope]] | None = None
    comments: frozenset[str] = frozenset({"comment"})
    #: Node types that wrap a definition: the definition's comment comes before them.
    wrappers: frozenset[str] = frozenset()
    #: Between a comment and its definition (Rust's #[attributes]).
    between: frozenset[str] = frozenset()
    #: Whether ``Foo.bar()`` on a capitalised name is a qualified call (the name is a type).
    capital_types: bool = True
    qualifier_separator: str = "."


# --- text ------------------------------------------------------------------------------------


def one_line(text: str, limit: int = MAX_SIGNATURE) -> str:
    """``text`` on one line, its whitespace collapsed, cut at ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def signature(node: Node, body: Node | None, ctx: Context) -> str:
    """The definition's head as written: its text up to its body, on one line."""
    end = body.start_byte if body is not None and body.start_byte > node.start_byte else None
    if end is None:
        raw = ctx.source[node.start_byte : node.end_byte].split(b"\n", 1)[0]
    else:
        raw = ctx.source[node.start_byte : end]
    return one_line(raw.decode(errors="replace")).rstrip("{:; ").rstrip() or one_line(
        ctx.text(node)
    )


_MARKER = re.compile(r"^\s*(/\*+!?|\*+/?|//[/!]?|#+|=begin|=end)\s?")


def clean_comment(text: str) -> str:
    """A comment's words without its markers (``//``, ``/** */``, ``#``, ``///``)."""
    lines = []
    for line in text.splitlines():
        line = _MARKER.sub("", line.rstrip())
        if line.endswith("*/"):
            line = line[:-2].rstrip()
        lines.append(line)
    return "\n".join(lines).strip()[:MAX_DOC]


def leading_comment(node: Node, spec: Spec, ctx: Context) -> str:
    """The comment lines right above ``node`` (or above the wrapper it sits in)."""
    while node.parent is not None and node.parent.type in spec.wrappers:
        node = node.parent
    parts: list[str] = []
    row = node.start_point[0]
    sibling = node.prev_sibling
    while sibling is not None:
        if sibling.type in spec.between:
            row = sibling.start_point[0]
        elif sibling.type in spec.comments and sibling.end_point[0] >= row - 1:
            parts.append(ctx.text(sibling))
            row = sibling.start_point[0]
        else:
            break
        sibling = sibling.prev_sibling
    return clean_comment("\n".join(reversed(parts)))


def identifiers(node: Node | None, types: frozenset[str] = frozenset({"identifier"})) -> set[str]:
    """The texts of the identifier nodes under ``node`` (parameter names, roughly)."""
    found: set[str] = set()
    stack = [node] if node is not None else []
    while stack:
        current = stack.pop()
        if current.type in types:
            found.add(current.text.decode())
        else:
            stack.extend(current.named_children)
    return found


def lines_of(node: Node) -> tuple[int, int]:
    """1-based inclusive lines (a node ending at a line's first column ends on the line before)."""
    start, end = node.start_point[0] + 1, node.end_point[0] + 1
    if node.end_point[1] == 0 and end > start:
        end -= 1
    return start, end


# --- the walk --------------------------------------------------------------------------------


def _symbol(found: Definition, scope: Scope, spec: Spec, ctx: Context) -> Symbol:
    parent = found.parent if found.parent is not None else scope.parent
    prefix = found.parent if found.parent is not None else scope.prefix
    qualified = f"{prefix}.{found.name}" if prefix else found.name
    start, end = lines_of(found.node)
    doc = found.doc if found.doc is not None else leading_comment(found.node, spec, ctx)
    return Symbol(
        name=found.name,
        qualified=qualified,
        kind=found.kind,
        signature=signature(found.head or found.node, found.body, ctx),
        path=ctx.path,
        start_line=start,
        end_line=end,
        parent=parent,
        language=ctx.language,
        doc=doc[:MAX_DOC],
        body_hash=content_hash(ctx.source[found.node.start_byte : found.node.end_byte]),
    )


def _enter(found: Definition, scope: Scope, spec: Spec, ctx: Context) -> Scope:
    """Record the definition's symbol (unless it only names a scope) and give its scope."""
    if found.kind == "impl":
        qualified = f"{scope.prefix}.{found.name}" if scope.prefix else found.name
        return Scope(qualified, qualified, scope.caller, "impl", scope.params)
    symbol = _symbol(found, scope, spec, ctx)
    ctx.symbols.append(symbol)
    if found.kind in TYPE_KINDS:
        ctx.types.add(found.name)
    params = frozenset()
    if found.kind in ("function", "method"):
        # A nested function calls its enclosing function's parameters too (closures).
        inherited = scope.params if scope.kind in ("function", "method") else frozenset()
        params = found.params | inherited
    return Scope(symbol.qualified, symbol.qualified, symbol.qualified, found.kind, params)


def walk(root: Node, scope: Scope, spec: Spec, ctx: Context) -> int:
    """Visit every node once (without recursion: trees can be deep); the ERROR/MISSING count.

    A tree without errors is walked over its named nodes only: every definition and call is a
    named node, and the anonymous ones (punctuation, keywords: half of a tree) cost a Python
    object each for nothing. With one reader lookup a node, a 2,600-line Python file
    extracts in 45 ms instead of 110 (load 1-2)."""
    errors = 0
    named = not root.has_error
    # One lookup a node: most nodes have no reader at all.
    readers = {kind: (spec.definitions.get(kind), spec.calls.get(kind), spec.others.get(kind))
               for kind in (*spec.definitions, *spec.calls, *spec.others)}  # fmt: skip
    stack: list[tuple[Node, Scope]] = [(root, scope)]
    while stack:
        node, scope = stack.pop()
        if not named and (node.is_error or node.is_missing):
            errors += 1
        inner = scope
        found_readers = readers.get(node.type)
        if found_readers is not None:
            reader, call_reader, other = found_readers
            if reader is not None:
                found = reader(node, scope, ctx)
                if found is not None:
                    inner = _enter(found, scope, spec, ctx)
            if call_reader is not None:
                call = call_reader(node, ctx)
                if call is not None:
                    if call.form == "call" and call.name in scope.params:
                        call = Call(call.name, "indirect")
                    ctx.calls.append((call, scope.caller, node.start_point[0] + 1))
            if other is not None:
                other(node, inner, ctx)
        children = node.named_children if named else node.children
        if children:
            stack.extend([(child, inner) for child in reversed(children)])
    return errors


def _qualify(call: Call, spec: Spec, ctx: Context) -> Call:
    """``os.f()`` on an imported module and ``Foo.bar()`` on a type are qualified calls."""
    if call.form != "member" or not call.receiver:
        return call
    root = re.split(r"[.:(\[]", call.receiver, maxsplit=1)[0]
    if root in ctx.modules or root in ctx.types:
        return Call(call.name, "qualified", None, call.receiver)
    parts = call.receiver.split(".")
    dotted = all(part.isidentifier() for part in parts) and root not in _VALUES
    # Foo.bar() and java.util.Objects.hash(): a type's name, by the capital it is written with.
    if spec.capital_types and dotted and (root[:1].isupper() or parts[-1][:1].isupper()):
        return Call(call.name, "qualified", None, call.receiver)
    return call


def callsites(spec: Spec, ctx: Context) -> Iterable[Callsite]:
    for call, caller, line in ctx.calls:
        call = _qualify(call, spec, ctx)
        yield Callsite(caller, call.name, call.form, call.receiver, call.qualifier, ctx.path, line)


def run(spec: Spec, root: Node, ctx: Context, content: str, lines: int) -> FileExtract:
    """Walk ``root`` with ``spec`` and gather the file's records."""
    module, scope = (None, Scope("", None, ctx.path))
    if spec.file_scope is not None:
        module, scope = spec.file_scope(root, ctx)
    if module is not None:
        ctx.symbols.append(module)
    errors = walk(root, scope, spec, ctx)
    return FileExtract(
        path=ctx.path,
        language=ctx.language,
        content_hash=content,
        lines=lines,
        symbols=tuple(ctx.symbols),
        callsites=tuple(callsites(spec, ctx)),
        imports=tuple(ctx.imports),
        bases=tuple(ctx.bases),
        parse_errors=errors,
    )


def expression(node: Node, ctx: Context) -> str:
    """A receiver or callee as written, on one short line."""
    return one_line(ctx.text(node), MAX_EXPR)


def computed_call(function: Node, ctx: Context, lambdas: Collection[str]) -> Call:
    """A call of something that is not a name: of a function literal written in place (its
    node type in ``lambdas``, parentheses looked through), else of a computed value."""
    inner = function
    while inner.type == "parenthesized_expression" and inner.named_child_count:
        inner = inner.named_children[0]
    if inner.type in lambdas:
        return Call("<lambda>", "lambda")
    return Call(expression(function, ctx), "indirect")
