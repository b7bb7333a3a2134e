"""The symbols of every extract, indexed the ways resolution looks them up: by file and
qualified name, by parent, by file's top level, and files by the module keys imports name."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from chitta.code.model import FileExtract, Symbol
from chitta.code.resolve import names as nm


@dataclass(frozen=True, slots=True)
class Module:
    """A module as imports name it: a Python module, a JS/Ruby/C file, a Go or Java package (a
    folder), a Rust module; ``files`` are the indexed files that make it."""

    family: str
    key: str
    files: tuple[str, ...]


Target = Symbol | Module


def _sort_key(s: Symbol) -> tuple:
    return (s.path, s.start_line, s.end_line, s.qualified, s.kind, s.name, s.signature)


class Index:
    """Lookup tables over a set of extracts, built once; every list is in a fixed order, so
    what is found does not depend on the order the extracts came in."""

    def __init__(self, extracts: Sequence[FileExtract]) -> None:
        chosen: dict[str, FileExtract] = {}
        for ex in sorted(extracts, key=lambda e: (e.path, e.content_hash, e.language)):
            if not ex.skipped:
                chosen.setdefault(ex.path, ex)
        self.files = chosen
        self.paths = frozenset(chosen)
        self.at: dict[tuple[str, str], list[Symbol]] = defaultdict(list)
        self.qualified: dict[tuple[str, str], list[Symbol]] = defaultdict(list)
        self.children: dict[tuple[str, str], list[Symbol]] = defaultdict(list)
        self.top: dict[str, dict[str, list[Symbol]]] = defaultdict(lambda: defaultdict(list))
        self.root: dict[str, Symbol] = {}
        self.methods: dict[tuple[str, str], list[Symbol]] = defaultdict(list)
        self.modules: dict[tuple[str, str], list[str]] = defaultdict(list)
        self.keys: dict[str, list[str]] = defaultdict(list)
        self.by_dir: dict[tuple[str, str], list[str]] = defaultdict(list)
        symbols = sorted((s for ex in chosen.values() for s in ex.symbols), key=_sort_key)
        for ex in chosen.values():
            self.root_of(ex)
        for path, ex in chosen.items():
            fam = nm.family(ex.language)
            self.by_dir[(fam, nm.file_dir(path))].append(path)
            for key in self.module_keys(ex):
                self.modules[(fam, key)].append(path)
                self.keys[path].append(key)
        for s in symbols:
            fam = nm.family(s.language)
            self.at[(s.path, s.qualified)].append(s)
            self.qualified[(fam, s.qualified)].append(s)
            if s.parent is not None:
                self.children[(fam, s.parent)].append(s)
            root = self.root.get(s.path)
            if s is not root and (s.parent is None or (root and s.parent == root.qualified)):
                self.top[s.path][s.name].append(s)
        self.top_by_name: dict[tuple[str, str], list[Symbol]] = defaultdict(list)
        for path in sorted(self.top):
            fam = nm.family(chosen[path].language)
            for name, found in sorted(self.top[path].items()):
                self.top_by_name[(fam, name)] += found
        self.bases: dict[tuple[str, str], list] = defaultdict(list)
        for ex in chosen.values():
            for b in ex.bases:
                self.bases[(nm.family(ex.language), b.child)].append(b)
        self.packages = frozenset(
            ".".join(key.split(".")[:i])
            for (fam, key) in list(self.modules)
            if fam == "python"
            for i in range(1, key.count(".") + 1)
        )
        for s in symbols:
            if s.parent is not None and any(p.kind in nm.CLASS_KINDS for p in self.parents(s)):
                self.methods[(nm.family(s.language), s.name)].append(s)

    def root_of(self, ex: FileExtract) -> None:
        """Note the file's own module symbol, where the extractor wrote one: a ``module``
        symbol without a parent that spans the whole file or bears the file's module name."""
        names = {nm.python_module(ex.path), nm.file_dir(ex.path).replace("/", ".")}
        for s in sorted(ex.symbols, key=_sort_key):
            if s.kind != "module" or s.parent is not None:
                continue
            if (s.start_line <= 1 and s.end_line >= ex.lines) or s.qualified in names:
                self.root[ex.path] = s
                return

    def module_keys(self, ex: FileExtract) -> list[str]:
        """The keys an import may name this file by (docs/code.md, "Resolution")."""
        fam = nm.family(ex.language)
        path = ex.path
        if fam == "python":
            keys = {nm.python_module(path)}
            # By its packages only inside one: a bare file is named by its folder's path.
            if nm.posixpath.join(nm.file_dir(path), "__init__.py") in self.paths:
                keys.add(nm.python_package_module(path, self.paths))
            if path in self.root:
                keys.add(self.root[path].qualified)
            return sorted(k for k in keys if k)
        if fam in ("go", "java"):
            return [nm.file_dir(path)]
        if fam == "rust":
            crate, mods = nm.rust_module(path)
            return [rust_key(crate, mods)]
        return [path]

    def parents(self, s: Symbol) -> list[Symbol]:
        """The symbols ``s``'s parent names: in its own file, else (languages whose members
        are written apart from their class) in its family, for Go in its own folder."""
        if s.parent is None:
            return []
        here = self.at.get((s.path, s.parent))
        if here:
            return here[:1]
        fam = nm.family(s.language)
        if fam not in nm.MEMBERS_ACROSS_FILES:
            return []
        found = self.qualified.get((fam, s.parent), [])
        if fam == "go":
            found = [p for p in found if nm.file_dir(p.path) == nm.file_dir(s.path)]
        return found[:1]

    def members(self, owner: Symbol) -> list[Symbol]:
        """The symbols directly inside ``owner``."""
        fam = nm.family(owner.language)
        found = self.children.get((fam, owner.qualified), [])
        if fam not in nm.MEMBERS_ACROSS_FILES:
            return [s for s in found if s.path == owner.path]
        if fam == "go":
            return [s for s in found if nm.file_dir(s.path) == nm.file_dir(owner.path)]
        return list(found)

    def symbol(self, path: str, qualified: str, line: int | None = None) -> Symbol | None:
        """The symbol of a file by qualified name; of overloads, the one around ``line``."""
        found = self.at.get((path, qualified))
        if not found:
            return None
        if line is not None:
            for s in found:
                if s.start_line <= line <= s.end_line:
                    return s
        return found[0]

    def module(self, fam: str, key: str) -> Module | None:
        """The module of a key, if any indexed file makes it."""
        files = self.modules.get((fam, key))
        return Module(fam, key, tuple(files)) if files else None

    def file_module(self, path: str) -> Module:
        """The module a file belongs to (for Go and Java its package's folder)."""
        ex = self.files[path]
        fam = nm.family(ex.language)
        keys = self.keys.get(path) or [path]
        return Module(fam, keys[0], tuple(self.modules.get((fam, keys[0]), [path])))


def rust_key(crate: str, mods: tuple[str, ...]) -> str:
    """A Rust module's key: its crate's folder and its path, ``crate#a::b``."""
    return f"{crate}#{'::'.join(mods)}"
