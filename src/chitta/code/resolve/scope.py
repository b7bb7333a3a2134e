"""What a name means where it is written: the enclosing scopes, the file's imports, the
package, and the members of modules and classes (with their bases).

A lookup answers with a status and the targets found: ``found`` (one or more targets),
``param`` (a parameter of an enclosing function holds it, type unknown), ``external`` (bound
by an import of something outside the index), ``none`` (not bound here at all).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from chitta.code.model import Base, Import, Symbol
from chitta.code.resolve import names as nm
from chitta.code.resolve.index import Index, Module, Target, rust_key
from chitta.code.resolve.params import go_receiver, parameters

FOUND, PARAM, EXTERNAL, NONE = "found", "param", "external", "none"
#: How deep re-exports and ``use`` chains are followed.
MAX_DEPTH = 6
_FUNCTION_KINDS = frozenset({"function", "method"})


@dataclass(frozen=True, slots=True)
class Found:
    """A lookup's answer; ``type`` is a parameter's written type, where it has one."""

    status: str
    targets: tuple[Target, ...] = ()
    type: str | None = None

    @staticmethod
    def of(targets: list[Target] | tuple[Target, ...]) -> Found:
        unique = tuple(dict.fromkeys(targets))
        return Found(FOUND, unique) if unique else Found(NONE)


@dataclass(frozen=True, slots=True)
class Binding:
    """A name an import binds in a file: to a module, a module's member, every member of a
    module (``star``), the file's default export, or (``include``) a file whose top level it
    makes visible."""

    name: str
    kind: str  # module | member | star | default | include
    spec: tuple[str, ...]
    line: int
    path: str


@dataclass(frozen=True, slots=True)
class Ctx:
    """Where a name is looked up: a file and the enclosing symbols, innermost first."""

    path: str
    chain: tuple[Symbol, ...]


class Scopes:
    """Name lookup over an index; answers are memoised, so each is computed once."""

    def __init__(self, index: Index) -> None:
        self.ix = index
        self._bindings: dict[str, dict[str, list[Binding]]] = {}
        self._bases: dict[Symbol, tuple[tuple[Base, Symbol | None], ...]] = {}
        self._active: set[tuple] = set()
        self._cuts = 0  # lookups a cycle or the depth bound cut short: their answers not kept
        self._members: dict[tuple[Module, str], Found] = {}
        self._params: dict[Symbol, tuple[tuple[str, str | None], ...]] = {}
        self._modules: dict[tuple[str, str, str], Found] = {}
        self._files: dict[tuple[str, str], Found] = {}
        self._packages: dict[tuple[str, ...], Found] = {}

    # -- contexts ----------------------------------------------------------------------

    def chain(self, sym: Symbol | None) -> tuple[Symbol, ...]:
        """``sym`` and the symbols around it, innermost first, short of the file's module."""
        out: list[Symbol] = []
        root = self.ix.root.get(sym.path) if sym else None
        while sym is not None and sym is not root and sym not in out and len(out) < 64:
            out.append(sym)
            parents = self.ix.parents(sym)
            sym = parents[0] if parents else None
        return tuple(out)

    def enclosing_class(self, ctx: Ctx) -> Symbol | None:
        """The innermost class-like symbol around a context."""
        return next((s for s in ctx.chain if s.kind in nm.CLASS_KINDS), None)

    # -- imports -----------------------------------------------------------------------

    def bindings(self, path: str) -> dict[str, list[Binding]]:
        """The names a file's imports bind, each with its bindings in line order."""
        if path not in self._bindings:
            out: dict[str, list[Binding]] = {}
            ex = self.ix.files[path]
            fam = nm.family(ex.language)
            for imp in sorted(ex.imports, key=lambda i: (i.line, i.module, i.name or "")):
                for b in self._bind(fam, imp, path):
                    out.setdefault(b.name, []).append(b)
            self._bindings[path] = out
        return self._bindings[path]

    def _bind(self, fam: str, imp: Import, path: str) -> list[Binding]:
        line, mod, name, alias = imp.line, imp.module, imp.name, imp.alias
        if fam == "python":
            absolute = self._python_absolute(mod, path)
            if absolute is None:
                return []
            if name is None:
                if alias:
                    return [Binding(alias, "module", (absolute,), line, path)]
                first = absolute.split(".")[0]
                return [Binding(first, "module", (first,), line, path)]
            if name == "*":
                return [Binding("*", "star", (absolute,), line, path)]
            return [Binding(alias or name, "member", (absolute, name), line, path)]
        if fam == "js":
            if name in (None, "*"):
                if alias:
                    return [Binding(alias, "module", (mod,), line, path)]
                return [Binding("*", "star", (mod,), line, path)] if name == "*" else []
            if name == "default":
                return [Binding(alias or name, "default", (mod,), line, path)] if alias else []
            return [Binding(alias or name, "member", (mod, name), line, path)]
        if fam == "go":
            if alias == "_":
                return []
            if alias == ".":
                return [Binding("*", "star", (mod,), line, path)]
            return [Binding(alias or nm.go_package_name(mod), "module", (mod,), line, path)]
        if fam in ("rust", "java"):
            full = nm.segments(mod)
            if name and name not in ("*", "self"):
                full += nm.segments(name)
            if name == "*" or mod.endswith("*"):
                return [Binding("*", "star", tuple(s for s in full if s != "*"), line, path)]
            if not full:
                return []
            return [Binding(alias or full[-1], "path", tuple(full), line, path)]
        # Ruby's require and C's include: the file's top level becomes visible.
        return [Binding("", "include", (mod.strip("<>\"'"),), line, path)]

    def _python_absolute(self, module: str, path: str) -> str | None:
        if not module.startswith("."):
            return module
        keys = self.ix.keys.get(path) or [nm.python_module(path)]
        # The package-based key names where the file really sits, when it is in a package.
        importer = max(keys, key=lambda k: (k.count("."), k)) if keys else ""
        return nm.python_relative(module, importer, path.endswith("/__init__.py"))

    def module_of(self, fam: str, spec: str, importer: str) -> Found:
        """The indexed module an import names, or ``external``."""
        # Python's, Go's and bare specifiers do not depend on the importing file's folder.
        key = (fam, spec, importer if spec.startswith(".") or fam in ("ruby", "c") else "")
        if key not in self._modules:
            self._modules[key] = self._module_of(fam, spec, importer)
        return self._modules[key]

    def _module_of(self, fam: str, spec: str, importer: str) -> Found:
        ix = self.ix
        if fam == "python":
            found = ix.module("python", spec)
            if found is None and "/" in importer:
                # A script's own folder is on sys.path: ``import helpers`` beside it.
                folder = nm.file_dir(importer)
                if posixpath.join(folder, "__init__.py") not in ix.paths:
                    rel = posixpath.join(folder, *spec.split("."))
                    for candidate in (rel + ".py", rel + "/__init__.py"):
                        if candidate in ix.paths:
                            found = Module("python", spec, (candidate,))
                            break
            if found is None and spec in ix.packages:
                found = Module("python", spec, ())  # a namespace package: no __init__.py
            return Found.of([found]) if found else Found(EXTERNAL)
        if fam == "js":
            for candidate in nm.js_candidates(spec, importer) or ():
                if candidate in ix.paths:
                    return Found.of([ix.file_module(candidate)])
            return Found(EXTERNAL)
        if fam == "go":
            return self._go_package(spec)
        if fam in ("ruby", "c"):
            return self._included(fam, spec, importer)
        return Found(EXTERNAL)

    def _go_package(self, spec: str) -> Found:
        spec = spec.strip('"')
        if nm.go_is_stdlib(spec):
            return Found(EXTERNAL)
        best: list[str] = []
        for fam, folder in self.ix.by_dir:
            if fam != "go" or not folder:
                continue
            if spec == folder or spec.endswith("/" + folder):
                if not best or len(folder) > len(best[0]):
                    best = [folder]
                elif len(folder) == len(best[0]):
                    best.append(folder)
        mods = [m for f in sorted(best) if (m := self.ix.module("go", f))]
        return Found.of(mods) if mods else Found(EXTERNAL)

    def _included(self, fam: str, spec: str, importer: str) -> Found:
        suffixes = (".rb",) if fam == "ruby" else ("",)
        rel = posixpath.normpath(posixpath.join(nm.file_dir(importer), spec)).lstrip("/")
        for s in suffixes:
            if rel + s in self.ix.paths:
                return Found.of([self.ix.file_module(rel + s)])
        tail = spec.lstrip("./")
        hits = sorted(
            p
            for p in self.ix.paths
            if nm.family(self.ix.files[p].language) == fam
            and any(p == tail + s or p.endswith("/" + tail + s) for s in suffixes)
        )
        return Found.of([self.ix.file_module(p) for p in hits]) if hits else Found(EXTERNAL)

    def resolve_binding(self, b: Binding, depth: int = 0) -> Found:
        """What an import's binding names: something indexed, or ``external``."""
        found = self._resolve_binding(b, depth)
        return found if found.status == FOUND else Found(EXTERNAL)

    def _resolve_binding(self, b: Binding, depth: int) -> Found:
        fam = nm.family(self.ix.files[b.path].language)
        if b.kind == "path":
            if fam == "java":
                return self.java_path(list(b.spec))
            return self.path(Ctx(b.path, ()), list(b.spec), depth + 1)
        if b.kind == "star" and fam in ("rust", "java"):
            if fam == "java":
                return self.java_package(list(b.spec))
            return self.path(Ctx(b.path, ()), list(b.spec), depth + 1)
        mod = self.module_of(fam, b.spec[0], b.path)
        if b.kind in ("module", "star", "include") or mod.status != FOUND:
            return mod
        name = b.spec[1] if b.kind == "member" else b.name
        got = [t for m in mod.targets for t in self.member(m, name, depth + 1).targets]
        return Found.of(got) if got else Found(EXTERNAL)

    # -- names -------------------------------------------------------------------------

    def lookup(self, ctx: Ctx, name: str, depth: int = 0) -> Found:
        """What a bare name means in a context: the innermost binding wins."""
        fam = nm.family(self.ix.files[ctx.path].language)
        for sym in ctx.chain:
            if sym.kind in _FUNCTION_KINDS:
                for pname, ptype in self.params(sym):
                    if pname == name:
                        return Found(PARAM, type=ptype)
                nested = [s for s in self.ix.members(sym) if s.name == name]
                if nested:
                    return Found.of(nested)
            elif sym.kind in nm.CLASS_KINDS:
                # Java, Ruby and C++ read a bare name in a method as a member of its class.
                # A constructor named as its class is not what the class's name means there.
                if (fam in nm.IMPLICIT_SELF or sym is ctx.chain[0]) and name != sym.name:
                    found = self.member(sym, name, depth + 1)
                    if found.status == FOUND:
                        return found
            elif sym.kind == "module":
                inner = [s for s in self.ix.members(sym) if s.name == name]
                if inner:
                    return Found.of(inner)
        return self.file_lookup(ctx.path, name, depth)

    def params(self, sym: Symbol) -> tuple[tuple[str, str | None], ...]:
        """A function's parameters; a Go method's receiver counts as one."""
        if sym not in self._params:
            got = parameters(sym.signature, sym.language)
            if nm.family(sym.language) == "go" and (recv := go_receiver(sym.signature)):
                got = (recv, *got)
            self._params[sym] = got
        return self._params[sym]

    def file_lookup(self, path: str, name: str, depth: int = 0) -> Found:
        """A name at a file's top level: its own definitions, then its imports, then what
        the language makes visible without an import."""
        if (path, name) in self._files:
            return self._files[(path, name)]
        key = ("file", path, name)
        if key in self._active or depth > MAX_DEPTH:
            self._cuts += 1
            return Found(NONE)
        cuts = self._cuts
        self._active.add(key)
        try:
            found = self._file_lookup(path, name, depth)
        finally:
            self._active.discard(key)
        if cuts == self._cuts:
            # Only an answer no cycle or depth bound cut short is kept.
            self._files[(path, name)] = found
        return found

    def _file_lookup(self, path: str, name: str, depth: int) -> Found:
        ex = self.ix.files[path]
        fam = nm.family(ex.language)
        own = self.ix.top.get(path, {}).get(name, [])
        bound = self.bindings(path).get(name, [])
        # Python: the binding written last is the one a call at run time sees.
        if (
            own
            and bound
            and fam == "python"
            and max(b.line for b in bound) > max(s.start_line for s in own)
        ):
            own = []
        if own:
            return Found.of(own)
        if bound:
            return self.resolve_binding(bound[-1], depth)
        found = self._package_lookup(path, fam, name, depth)
        if found.status != NONE:
            return found
        for star in self.bindings(path).get("*", []):
            mod = self.resolve_binding(star, depth)
            got = [t for m in mod.targets for t in self.member(m, name, depth + 1).targets]
            if got:
                return Found.of(got)
        return self._global_lookup(path, fam, name, depth)

    def _package_lookup(self, path: str, fam: str, name: str, depth: int) -> Found:
        ix = self.ix
        if fam == "go":
            folder = nm.file_dir(path)
            test = path.endswith("_test.go")
            got = [
                s
                for p in ix.by_dir.get(("go", folder), [])
                if p != path and (test or not p.endswith("_test.go"))
                for s in ix.top.get(p, {}).get(name, [])
            ]
            return Found.of(got)
        if fam == "java":
            got = [
                s
                for p in ix.by_dir.get(("java", nm.file_dir(path)), [])
                if p != path
                for s in ix.top.get(p, {}).get(name, [])
                if s.kind in nm.CLASS_KINDS
            ]
            return Found.of(got)
        if fam == "rust":
            crate, mods = nm.rust_module(path)
            sub = ix.module("rust", rust_key(crate, (*mods, name)))
            return Found.of([sub]) if sub else Found(NONE)
        if fam in ("ruby", "c"):
            got = []
            for inc in self._includes(path, depth):
                got += ix.top.get(inc, {}).get(name, [])
            return Found.of(got)
        return Found(NONE)

    def _includes(self, path: str, depth: int) -> list[str]:
        """The files a Ruby or C file requires or includes, and theirs, a few levels down."""
        seen, todo = [path], [path]
        for _ in range(3):
            nxt = []
            for p in todo:
                for b in self.bindings(p).get("", []):
                    for m in self.resolve_binding(b, depth + 1).targets:
                        for f in m.files if isinstance(m, Module) else ():
                            if f not in seen:
                                seen.append(f)
                                nxt.append(f)
            todo = nxt
        return seen[1:]

    def _global_lookup(self, path: str, fam: str, name: str, depth: int) -> Found:
        """C's one namespace of functions and Ruby's global constants: every file's top
        level, when no nearer scope had the name."""
        if fam == "c" or (fam == "ruby" and name[:1].isupper()):
            got = [
                s
                for s in self.ix.top_by_name.get((fam, name), [])
                if s.path != path and "static " not in s.signature.split("(")[0]
            ]
            return Found.of(got)
        return Found(NONE)

    # -- members -----------------------------------------------------------------------

    def member(self, target: Target, name: str, depth: int = 0) -> Found:
        """A member of a module (its top level, submodules and re-exports) or of a class
        (its own members, then its bases')."""
        if depth > MAX_DEPTH:
            self._cuts += 1
            return Found(NONE)
        if isinstance(target, Module):
            key = (target, name)
            if key in self._members:
                return self._members[key]
            cuts = self._cuts
            found = self._module_member(target, name, depth)
            if cuts == self._cuts:
                self._members[key] = found
            return found
        if target.kind in nm.CLASS_KINDS:
            found, _ = self.class_member(target, name)
            return Found.of(found)
        return Found.of([s for s in self.ix.members(target) if s.name == name])

    def _module_member(self, mod: Module, name: str, depth: int) -> Found:
        ix = self.ix
        got: list[Target] = [s for p in mod.files for s in ix.top.get(p, {}).get(name, [])]
        if mod.family == "python":
            key = f"{mod.key}.{name}" if mod.key else name
            sub = ix.module("python", key)
            if sub is None and key in ix.packages:
                sub = Module("python", key, ())
        elif mod.family == "rust":
            crate, _, mods = mod.key.partition("#")
            sub = ix.module("rust", rust_key(crate, (*filter(None, mods.split("::")), name)))
        elif mod.family == "java":
            sub = ix.module("java", posixpath.join(mod.key, name))
        else:
            sub = None
        if sub:
            got.append(sub)
        if not got and mod.family in ("python", "js", "rust"):
            # Re-exports: a name an ``__init__.py``, an index.ts or a ``pub use`` imports.
            for p in mod.files:
                found = self.file_lookup(p, name, depth + 1)
                if found.status == FOUND:
                    got += found.targets
        return Found.of(got)

    def bases(self, cls: Symbol) -> tuple[tuple[Base, Symbol | None], ...]:
        """A class's bases in the order written, each with the one indexed class it names
        (None: outside the index, or not one class)."""
        if cls in self._bases:
            return self._bases[cls]
        self._bases[cls] = ()  # a cycle of bases ends here
        fam = nm.family(cls.language)
        written = [
            b
            for b in self.ix.bases.get((fam, cls.qualified), [])
            if b.path == cls.path
            or (
                fam in nm.MEMBERS_ACROSS_FILES
                and (fam != "go" or nm.file_dir(b.path) == nm.file_dir(cls.path))
            )
        ]
        written.sort(key=lambda b: (b.path != cls.path, b.path, b.line))
        ctx = Ctx(cls.path, self.chain(cls)[1:])
        out: list[tuple[Base, Symbol | None]] = []
        for b in written:
            text = nm.strip_generics(b.base)
            found = (
                self.java_path(nm.segments(text))
                if fam == "java" and "." in text
                else self.path(ctx, nm.segments(text))
            )
            classes = {
                t
                for t in found.targets
                if isinstance(t, Symbol) and t.kind in nm.CLASS_KINDS and t != cls
            }
            out.append((b, next(iter(classes)) if len(classes) == 1 else None))
        self._bases[cls] = tuple(out)
        return self._bases[cls]

    def class_member(
        self, cls: Symbol, name: str, skip_own: bool = False, seen: frozenset = frozenset()
    ) -> tuple[list[Symbol], bool]:
        """A class's member by name, searched in the class and then its bases depth first in
        the order written (Python's MRO for single chains, and every other language's rule);
        the flag says a base outside the index came first, so it may hide what was found."""
        if cls in seen:
            return [], False
        if not skip_own:
            own = [s for s in self.ix.members(cls) if s.name == name]
            if own:
                return own, False
        blocked = False
        for _, base in self.bases(cls):
            if base is None:
                blocked = True
                continue
            found, inner = self.class_member(base, name, False, seen | {cls})
            if found:
                return found, blocked or inner
            blocked = blocked or inner
        return [], blocked

    # -- paths -------------------------------------------------------------------------

    def path(self, ctx: Ctx, segs: list[str], depth: int = 0) -> Found:
        """What a written path (``a.b.C``, ``crate::a::f``, ``Self``) names in a context."""
        if not segs or depth > MAX_DEPTH:
            self._cuts += bool(segs)
            return Found(NONE)
        fam = nm.family(self.ix.files[ctx.path].language)
        first, rest = segs[0], segs[1:]
        found = self._path_start(ctx, fam, first, depth) if fam == "rust" else None
        if found is None:
            found = self.lookup(ctx, first, depth)
        for seg in rest:
            if found.status != FOUND:
                return found
            got = [t for t in found.targets for t in self.member(t, seg, depth + 1).targets]
            found = Found.of(got)
        return found

    def _path_start(self, ctx: Ctx, fam: str, first: str, depth: int) -> Found | None:
        """Rust's path roots: ``crate``, ``self``, ``super`` and ``Self``."""
        crate, mods = nm.rust_module(ctx.path)
        if first == "crate":
            return self._rust_module(crate, ())
        if first == "self":
            return self._rust_module(crate, mods)
        if first == "super":
            return self._rust_module(crate, mods[:-1]) if mods else Found(NONE)
        if first == "Self":
            cls = self.enclosing_class(ctx)
            return Found.of([cls]) if cls else Found(NONE)
        return None

    def _rust_module(self, crate: str, mods: tuple[str, ...]) -> Found:
        mod = self.ix.module("rust", rust_key(crate, mods))
        return Found.of([mod]) if mod else Found(EXTERNAL)

    def java_package(self, package: list[str]) -> Found:
        """The folders whose path ends with a Java package's parts."""
        want = tuple(package)
        if want not in self._packages:
            self._packages[want] = self._java_package(want)
        return self._packages[want]

    def _java_package(self, want: tuple[str, ...]) -> Found:
        mods = [
            m
            for fam, folder in sorted(self.ix.by_dir)
            if fam == "java" and tuple(folder.split("/"))[-len(want) :] == want
            if (m := self.ix.module("java", folder))
        ]
        return Found.of(mods) if mods else Found(EXTERNAL)

    def java_path(self, parts: list[str]) -> Found:
        """A Java import's full name: the longest package prefix with a folder, then its
        top-level class, then nested members."""
        for k in range(len(parts) - 1, 0, -1):
            pkg = self.java_package(parts[:k])
            if pkg.status != FOUND:
                continue
            found = Found.of([t for m in pkg.targets for t in self.member(m, parts[k]).targets])
            for seg in parts[k + 1 :]:
                found = Found.of([t for t in found.targets for t in self.member(t, seg).targets])
            if found.status == FOUND:
                return found
        return Found(EXTERNAL)
