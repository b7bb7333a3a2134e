"""The records of code intelligence, shared by the extractor, the store and the resolver.

Names: a symbol's ``qualified`` name joins its parents' names and its own with ``.``
(``pkg.module.Class.method`` in Python, ``Class.method`` in a language whose file gives no
module name); a file's own module symbol, where the language has one, is the first part.
Lines are 1-based and inclusive. ``path`` is relative to the repository root, with ``/``.
"""

from __future__ import annotations

from dataclasses import dataclass

#: The kinds of symbol (seed 001's SymbolEntry kinds).
SYMBOL_KINDS = (
    "function",
    "method",
    "class",
    "struct",
    "enum",
    "interface",
    "trait",
    "module",
)
#: How a call is written: ``f()``, ``obj.f()``, ``pkg::f()`` / ``mod.f()`` on a module,
#: ``new T()`` / ``T{}``, through a variable holding a function, or a call of a lambda.
CALL_FORMS = ("call", "member", "qualified", "new", "indirect", "lambda")
#: The languages the extractor reads, by the names their grammar packages use.
LANGUAGES = ("python", "javascript", "typescript", "tsx", "rust", "java", "ruby", "go", "c", "cpp")


@dataclass(frozen=True, slots=True)
class Symbol:
    """A named definition in a file."""

    name: str
    qualified: str
    kind: str
    signature: str  # the definition's head as written, one line, without its body
    path: str
    start_line: int
    end_line: int
    parent: str | None  # the enclosing symbol's qualified name
    language: str
    doc: str = ""  # its docstring or leading comment, trimmed
    body_hash: str = ""  # BLAKE2b of the definition's text, hex: changes when its code does


@dataclass(frozen=True, slots=True)
class Callsite:
    """One call in a file, as written: what the resolver turns into an edge or keeps open."""

    caller: str  # the qualified name of the enclosing symbol, or the file's module
    name: str  # the called name: ``f`` in ``f()``, ``obj.f()`` and ``pkg::f()``
    form: str  # one of CALL_FORMS
    receiver: str | None  # ``obj`` in ``obj.f()``, ``self``/``this`` included
    qualifier: str | None  # ``pkg`` in ``pkg::f()`` or ``pkg.f()`` on an imported module
    path: str
    line: int


@dataclass(frozen=True, slots=True)
class Import:
    """One imported name: ``from a.b import c as d`` is module ``a.b``, name ``c``, alias ``d``;
    ``import a.b`` is module ``a.b`` with no name."""

    module: str
    name: str | None
    alias: str | None
    path: str
    line: int


@dataclass(frozen=True, slots=True)
class Base:
    """One inheritance (or implementation) edge as written: ``child`` extends ``base``."""

    child: str  # the qualified name of the class, struct or interface
    base: str  # the base's name as written (``a.B``, ``B<T>`` read as ``B``)
    path: str
    line: int


@dataclass(frozen=True, slots=True)
class FileExtract:
    """Everything the extractor found in one file."""

    path: str
    language: str
    content_hash: str  # BLAKE2b of the file's bytes, hex
    lines: int
    symbols: tuple[Symbol, ...] = ()
    callsites: tuple[Callsite, ...] = ()
    imports: tuple[Import, ...] = ()
    bases: tuple[Base, ...] = ()
    #: Syntax errors tree-sitter recovered from; the file is indexed as far as it parsed.
    parse_errors: int = 0
    #: Why nothing was extracted (unknown language, not text), or "".
    skipped: str = ""
