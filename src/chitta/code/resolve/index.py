"""The symbols of every extract, indexed the ways resolution looks them up: by file and
qualified name, by parent, by file's top level, and files by the module keys imports name.

An :class:`Index` is built once over a repository and then kept current file by file
(:meth:`Index.update`, for a re-index of the files an edit touched): each table is a list in
a fixed order, so a changed file's entries are taken out and its new ones put back where a
fresh build would have them. Two things reach across files and are handled apart: a Python
``__init__.py`` that comes or goes renames the modules of its package's files (the index is
then built again), and a class whose members are written in other files (Go, Rust, Ruby, C)
decides which of those files' symbols are methods.
"""

from __future__ import annotations

import posixpath
from bisect import insort
from collections import defaultdict
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from chitta.code.model import Base, FileExtract, Symbol
from chitta.code.resolve import names as nm


@dataclass(frozen=True, slots=True)
class Module:
    """A module as imports name it: a Python module, a JS/Ruby/C file, a Go or Java package (a
    folder), a Rust module; ``files`` are the indexed files that make it."""

    family: str
    key: str
    files: tuple[str, ...]


Target = Symbol | Module


def symbol_key(s: Symbol) -> tuple:
    """The order every list of symbols is kept in (by file first)."""
    return (s.path, s.start_line, s.end_line, s.qualified, s.kind, s.name, s.signature)


class Index:
    """Lookup tables over a set of extracts, built once; every list is in a fixed order, so
    what is found does not depend on the order the extracts came in."""

    def __init__(self, extracts: Sequence[FileExtract]) -> None:
        self._build(extracts)

    def _build(self, extracts: Sequence[FileExtract]) -> None:
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
        symbols = sorted((s for ex in chosen.values() for s in ex.symbols), key=symbol_key)
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
        self.packages = self._packages()
        for s in symbols:
            if self.is_method(s):
                self.methods[(nm.family(s.language), s.name)].append(s)

    def _packages(self) -> frozenset[str]:
        """The Python packages above the indexed modules (``a`` and ``a.b`` of ``a.b.c``)."""
        return frozenset(
            ".".join(key.split(".")[:i])
            for (fam, key) in list(self.modules)
            if fam == "python"
            for i in range(1, key.count(".") + 1)
        )

    def is_method(self, s: Symbol) -> bool:
        """Whether ``s`` is a member of a class (its parent is one)."""
        return s.parent is not None and any(p.kind in nm.CLASS_KINDS for p in self.parents(s))

    # --- kept current ---------------------------------------------------------------------

    def update(self, indexed: Iterable[FileExtract], removed: Collection[str] = ()) -> None:
        """Make this the index a fresh build would give over its extracts with ``indexed`` put
        in (each in place of the file of its path) and the files ``removed`` taken out."""
        new = {ex.path: ex for ex in indexed}
        gone = list(dict.fromkeys(p for p in removed if p not in new and p in self.files))
        gone += [p for p, ex in new.items() if ex.skipped and p in self.files]
        put = {p: ex for p, ex in new.items() if not ex.skipped}
        came = [p for p in put if p not in self.files]
        old = [self.files[p] for p in (*gone, *put) if p in self.files]
        files = {p: ex for p, ex in self.files.items() if p not in gone} | put
        if any(posixpath.basename(p) == "__init__.py" for p in (*gone, *came)) or not all(
            _own(ex) for ex in (*old, *put.values())
        ):  # a package's modules are named anew (or a file's entries name another file)
            self._build(list(files.values()))
            return
        for ex in old:
            self._drop(ex)
        self.files = dict(sorted(files.items()))
        self.paths = frozenset(self.files)
        for ex in put.values():
            self.root_of(ex)
        for ex in put.values():
            self._add(ex)
        self.packages = self._packages()
        self._methods_again(old, list(put.values()))

    def _drop(self, ex: FileExtract) -> None:
        """Take a file's entries out of every table but ``methods`` (done apart)."""
        fam, path = nm.family(ex.language), ex.path
        mine = {id(s) for s in ex.symbols}
        _without(self.by_dir, (fam, nm.file_dir(path)), path)
        for key in self.keys.pop(path, []):
            _without(self.modules, (fam, key), path)
        self.root.pop(path, None)
        for s in ex.symbols:
            sfam = nm.family(s.language)
            _without_ids(self.at, (s.path, s.qualified), mine)
            _without_ids(self.qualified, (sfam, s.qualified), mine)
            if s.parent is not None:
                _without_ids(self.children, (sfam, s.parent), mine)
            top = self.top.get(path)
            if top is not None:
                _without_ids(top, s.name, mine)
                if not top:
                    del self.top[path]
            _without_ids(self.top_by_name, (fam, s.name), mine)
        written = {id(b) for b in ex.bases}
        for b in ex.bases:
            _without_ids(self.bases, (fam, b.child), written)

    def _add(self, ex: FileExtract) -> None:
        """Put a file's entries into every table but ``methods``, where a build puts them
        (its root and the index's paths already noted)."""
        fam, path = nm.family(ex.language), ex.path
        insort(self.by_dir[(fam, nm.file_dir(path))], path)
        for key in self.module_keys(ex):
            insort(self.modules[(fam, key)], path)
            self.keys[path].append(key)
        root = self.root.get(path)
        for s in sorted(ex.symbols, key=symbol_key):
            sfam = nm.family(s.language)
            insort(self.at[(s.path, s.qualified)], s, key=symbol_key)
            insort(self.qualified[(sfam, s.qualified)], s, key=symbol_key)
            if s.parent is not None:
                insort(self.children[(sfam, s.parent)], s, key=symbol_key)
            if s is not root and (s.parent is None or (root and s.parent == root.qualified)):
                insort(self.top[path][s.name], s, key=symbol_key)
                insort(self.top_by_name[(fam, s.name)], s, key=symbol_key)
        for b in ex.bases:
            insort(self.bases[(fam, b.child)], b, key=_base_key)

    def _methods_again(self, old: Sequence[FileExtract], new: Sequence[FileExtract]) -> None:
        """``methods`` for the changed files' symbols, and (where members are written apart
        from their class) for the other files' members of a class name that came or went."""
        changed = {id(s) for ex in old for s in ex.symbols}
        for ex in old:
            for s in ex.symbols:
                _without_ids(self.methods, (nm.family(s.language), s.name), changed)
        mine = {id(s) for ex in new for s in ex.symbols}
        owners = {(nm.family(s.language), s.qualified) for ex in (*old, *new) for s in ex.symbols
                  if nm.family(s.language) in nm.MEMBERS_ACROSS_FILES}  # fmt: skip
        others = {id(s): s for key in sorted(owners) for s in self.children.get(key, ())
                  if id(s) not in mine}  # fmt: skip
        for s in others.values():
            _without_ids(self.methods, (nm.family(s.language), s.name), {id(s)})
        again = [*others.values(), *(s for ex in new for s in ex.symbols)]
        for s in sorted(again, key=symbol_key):
            if self.is_method(s):
                insort(self.methods[(nm.family(s.language), s.name)], s, key=symbol_key)

    def root_of(self, ex: FileExtract) -> None:
        """Note the file's own module symbol, where the extractor wrote one: a ``module``
        symbol without a parent that spans the whole file or bears the file's module name."""
        names = {nm.python_module(ex.path), nm.file_dir(ex.path).replace("/", ".")}
        for s in sorted(ex.symbols, key=symbol_key):
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


def _base_key(b: Base) -> str:
    return b.path


def _own(ex: FileExtract) -> bool:
    """Whether every symbol and base of ``ex`` is of its own path (the update's ordering
    rests on it; an extract that is not is indexed by a build)."""
    return all(s.path == ex.path for s in ex.symbols) and all(b.path == ex.path for b in ex.bases)


def _without(table: dict, key: object, path: str) -> None:
    """``path`` out of the list ``table[key]``; a list left empty goes, as a build has none."""
    found = table.get(key)
    if found is not None:
        found[:] = [p for p in found if p != path]
        if not found:
            del table[key]


def _without_ids(table: dict, key: object, ids: Collection[int]) -> None:
    """The objects of ``ids`` out of the list ``table[key]`` (by identity: equal symbols of
    other files stay); a list left empty goes."""
    found = table.get(key)
    if found is not None:
        found[:] = [x for x in found if id(x) not in ids]
        if not found:
            del table[key]


def rust_key(crate: str, mods: tuple[str, ...]) -> str:
    """A Rust module's key: its crate's folder and its path, ``crate#a::b``."""
    return f"{crate}#{'::'.join(mods)}"
