"""The naming conventions the resolver assumes, one small function each so they can be adjusted
where the extractor names things differently (docs/code.md, "Resolution").

Nothing here builds a symbol's qualified name: the resolver takes ``Symbol.qualified`` and
``Symbol.parent`` as the extractor wrote them. These functions only say which file an import
means (a module's key), which names mean the enclosing object, and how a signature lists its
parameters.
"""

from __future__ import annotations

import posixpath
import re

#: Languages whose names meet across files: one family shares modules, imports and members.
FAMILIES = {
    "python": "python",
    "javascript": "js",
    "typescript": "js",
    "tsx": "js",
    "rust": "rust",
    "java": "java",
    "ruby": "ruby",
    "go": "go",
    "c": "c",
    "cpp": "c",
}
#: Kinds that have members and bases.
CLASS_KINDS = frozenset({"class", "struct", "enum", "interface", "trait"})
#: Kinds a call can land on.
CALLABLE_KINDS = frozenset({"function", "method"}) | CLASS_KINDS
#: Receivers that mean the enclosing class's instance (or the class itself).
SELF_NAMES = {
    "python": frozenset({"self", "cls"}),
    "js": frozenset({"this"}),
    "rust": frozenset({"self", "Self"}),
    "java": frozenset({"this"}),
    "ruby": frozenset({"self"}),
    "go": frozenset(),  # a Go method's receiver is named in its signature
    "c": frozenset({"this"}),
}
#: Receivers that mean the enclosing class's bases.
SUPER_NAMES = frozenset({"super", "super()"})
#: The constructor's name in a class, where the language has one by name.
CONSTRUCTORS = {"python": "__init__", "js": "constructor", "ruby": "initialize"}
#: Languages where a bare ``f()`` inside a method may be a method of the enclosing class.
IMPLICIT_SELF = frozenset({"java", "ruby", "c"})
#: Languages where a class's members may be written in other files than the class.
MEMBERS_ACROSS_FILES = frozenset({"go", "rust", "ruby", "c"})
#: Python's and JavaScript's source suffixes, in the order an import tries them.
PY_SUFFIXES = (".py", ".pyi")
JS_SUFFIXES = (".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")
#: Go's standard library's top-level packages: an import path starting with one is external.
GO_STDLIB = frozenset(
    [
        "archive",
        "bufio",
        "builtin",
        "bytes",
        "cmp",
        "compress",
        "container",
        "context",
        "crypto",
        "database",
        "debug",
        "embed",
        "encoding",
        "errors",
        "expvar",
        "flag",
        "fmt",
        "go",
        "hash",
        "html",
        "image",
        "index",
        "io",
        "iter",
        "log",
        "maps",
        "math",
        "mime",
        "net",
        "os",
        "path",
        "plugin",
        "reflect",
        "regexp",
        "runtime",
        "slices",
        "sort",
        "strconv",
        "strings",
        "sync",
        "syscall",
        "testing",
        "text",
        "time",
        "unicode",
        "unique",
        "unsafe",
    ]
)
_GO_MAJOR = re.compile(r"v\d+$")
_SEGMENTS = re.compile(r"::|\.|->")


def family(language: str) -> str:
    """The family a language's names live in (TypeScript imports JavaScript; C++ includes C)."""
    return FAMILIES.get(language, language)


def segments(path: str) -> list[str]:
    """A written path's parts: ``a.b``, ``a::b`` and ``a->b`` are ``[a, b]``."""
    return [s.strip() for s in _SEGMENTS.split(path) if s.strip()]


def file_dir(path: str) -> str:
    """The folder of a repository path, ``""`` at the root."""
    return posixpath.dirname(path)


def python_module(path: str) -> str:
    """A Python file's module by path: ``src/a/b.py`` -> ``a.b``, ``a/__init__.py`` -> ``a``
    (a leading ``src/`` or ``lib/`` is the source root)."""
    stem = path
    for suffix in PY_SUFFIXES:
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    parts = stem.split("/")
    if len(parts) > 1 and parts[0] in ("src", "lib"):
        parts = parts[1:]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def python_package_module(path: str, paths: frozenset[str]) -> str:
    """A Python file's module by its packages: the folders above it that hold an indexed
    ``__init__.py`` (Python's own rule for where a package begins)."""
    folder, name = posixpath.split(path)
    stem = name.rsplit(".", 1)[0]
    parts = [] if stem == "__init__" else [stem]
    while folder and posixpath.join(folder, "__init__.py") in paths:
        folder, part = posixpath.split(folder)
        parts.insert(0, part)
    return ".".join(parts)


def python_relative(module: str, importer: str, is_package: bool) -> str | None:
    """The absolute module of ``from .x import y`` written in module ``importer``; None when
    the dots climb above the top package."""
    dots = len(module) - len(module.lstrip("."))
    if not dots:
        return module
    base = importer.split(".") if importer else []
    up = dots - 1 if is_package else dots
    if up > len(base):
        return None
    base = base[: len(base) - up]
    rest = module[dots:]
    return ".".join([*base, rest] if rest else base)


def js_candidates(spec: str, importer: str) -> list[str] | None:
    """The paths a relative JS/TS import may name, in the order Node and TypeScript try them;
    None for a bare specifier (a package outside the repository)."""
    if not spec.startswith((".", "/")):
        return None
    target = posixpath.normpath(posixpath.join(file_dir(importer), spec)).lstrip("/")
    stems = [target]
    # TypeScript's ESM imports name the emitted file: ``./x.js`` is ``x.ts`` in the source.
    for js in (".js", ".jsx", ".mjs", ".cjs"):
        if target.endswith(js):
            stems.append(target[: -len(js)])
    out = [target]
    for stem in stems:
        out += [stem + s for s in JS_SUFFIXES]
        out += [f"{stem}/index{s}" for s in JS_SUFFIXES]
    return out


def go_package_name(import_path: str) -> str:
    """The name a Go import binds: its last element (``.../v2`` names the one before)."""
    parts = import_path.strip('"').split("/")
    if len(parts) > 1 and _GO_MAJOR.fullmatch(parts[-1]):
        return parts[-2]
    return parts[-1]


def go_is_stdlib(import_path: str) -> bool:
    """Whether a Go import path is the standard library's (its first element has no dot and
    is one of the library's top-level packages)."""
    first = import_path.strip('"').split("/")[0]
    return "." not in first and first in GO_STDLIB


def rust_module(path: str) -> tuple[str, tuple[str, ...]]:
    """A Rust file's crate (the folder holding ``src/``, or the file's folder) and module path:
    ``src/lib.rs`` -> root, ``src/a.rs`` and ``src/a/mod.rs`` -> ``a``, ``src/a/b.rs`` ->
    ``a::b``."""
    parts = path.split("/")
    stem = parts[-1].rsplit(".", 1)[0]
    if "src" in parts[:-1]:
        i = len(parts) - 1 - parts[:-1][::-1].index("src") - 1
        crate, inner = "/".join(parts[: i + 1]), parts[i + 1 : -1]
        if inner[:1] == ["bin"]:  # each binary is a crate of its own
            return path, ()
    else:
        crate, inner = "/".join(parts[:-1]), []
    mods = tuple(inner) if stem in ("lib", "main", "mod") else (*inner, stem)
    return crate, mods


def java_package_dirs(package: list[str]) -> tuple[str, ...]:
    """The folder suffix a Java package's files sit under: ``com.x`` -> ``com/x``."""
    return tuple(package)


def strip_generics(text: str) -> str:
    """A type as written without its arguments and references: ``&mut B<T>`` -> ``B``."""
    out, depth = [], 0
    for ch in text:
        if ch in "<[":
            depth += 1
        elif ch in ">]":
            depth = max(0, depth - 1)
        elif not depth:
            out.append(ch)
    t = "".join(out).strip()
    for prefix in ("&mut ", "&", "*", "mut ", "dyn ", "impl ", "const ", "struct ", "class "):
        while t.startswith(prefix):
            t = t[len(prefix) :].strip()
    return t.rstrip("*&? ").strip()
