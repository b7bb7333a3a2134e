"""Resolution into a call graph: small multi-file programs per language, written as the
extractor's records (the resolver's real input), and the invariants of the pure function."""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chitta.code.model import Base, Callsite, FileExtract, Import, Symbol
from chitta.code.resolve import Resolution, resolve, resolve_index
from chitta.code.resolve.index import Index
from chitta.code.resolve.names import (
    js_candidates,
    python_module,
    python_relative,
    rust_module,
)
from chitta.code.resolve.params import go_receiver, parameters
from chitta.code.resolve.triplets import MAX_NAME_CHARS, edges_as_triplets
from chitta.relations.names import MAX_ENTITY_CHARS
from chitta.store.ids import is_id


@dataclass
class F:
    """One file's extract, written the way the extractor reports it."""

    path: str
    language: str
    module: str | None = None  # the file's module symbol, where the language has one
    symbols: list[Symbol] = field(default_factory=list)
    calls: list[Callsite] = field(default_factory=list)
    imports: list[Import] = field(default_factory=list)
    bases: list[Base] = field(default_factory=list)
    line: int = 1

    def _next(self) -> int:
        self.line += 1
        return self.line

    def sym(self, qualified: str, kind: str = "function", sig: str = "", parent: object = ...):
        if parent is ...:
            head = qualified.rsplit(".", 1)[0] if "." in qualified else None
            known = {s.qualified for s in self.symbols} | {self.module}
            parent = head if head in known else None
        line = self._next()
        name = qualified.rsplit(".", 1)[-1]
        self.symbols.append(
            Symbol(name, qualified, kind, sig or name, self.path, line, line, parent,
                   self.language)
        )  # fmt: skip
        return self

    def call(self, caller: str, name: str, form: str = "call", receiver=None, qualifier=None):
        self.calls.append(
            Callsite(caller, name, form, receiver, qualifier, self.path, self._next())
        )
        return self

    def imp(self, module: str, name: str | None = None, alias: str | None = None):
        self.imports.append(Import(module, name, alias, self.path, self._next()))
        return self

    def base(self, child: str, base: str):
        self.bases.append(Base(child, base, self.path, self._next()))
        return self

    def build(self) -> FileExtract:
        end = self.line + 1
        symbols = list(self.symbols)
        if self.module:
            name = self.module.rsplit(".", 1)[-1]
            symbols.insert(
                0, Symbol(name, self.module, "module", name, self.path, 1, end, None,
                          self.language),
            )  # fmt: skip
        return FileExtract(
            self.path, self.language, f"hash-{self.path}", end, tuple(symbols),
            tuple(self.calls), tuple(self.imports), tuple(self.bases),
        )  # fmt: skip


def outcome(r: Resolution, caller: str, name: str, receiver: str | None = None) -> tuple:
    """What became of the one callsite ``caller`` -> ``name`` (on ``receiver``)."""
    edges = [
        e
        for e in r.calls
        if e.callsite.caller == caller and e.callsite.name == name
        and (e.callsite.receiver or e.callsite.qualifier) == receiver
    ]  # fmt: skip
    opened = [
        o
        for o in r.open
        if o.callsite.caller == caller and o.callsite.name == name
        and (o.callsite.receiver or o.callsite.qualifier) == receiver
    ]  # fmt: skip
    assert len(edges) + len(opened) == 1, (caller, name, edges, opened)
    if edges:
        return ("edge", edges[0].object)
    return (opened[0].state, opened[0].candidates)


def edge(target: str) -> tuple:
    return ("edge", target)


UNRESOLVED = ("unresolved", ())


def ambiguous(*cands: str) -> tuple:
    return ("ambiguous", tuple(sorted(cands)))


def structural(r: Resolution, predicate: str) -> set[tuple[str, str]]:
    return {(e.subject, e.object) for e in r.of(predicate)}


# -- Python ----------------------------------------------------------------------------------


def python_program() -> list[FileExtract]:
    init = F("src/shop/__init__.py", "python", "shop")
    models = (
        F("src/shop/models.py", "python", "shop.models")
        .sym("shop.models.Cart", "class")
        .sym("shop.models.Cart.__init__", "method", "def __init__(self)")
        .sym("shop.models.Cart.add", "method", "def add(self, item)")
        .sym("shop.models.Cart.total", "method", "def total(self)")
        .call("shop.models.Cart.total", "add", "member", receiver="self")
        .sym("shop.models.Order", "class")
        .sym("shop.models.Order.add", "method", "def add(self, item)")
        .sym("shop.models.Order.total", "method", "def total(self)")
        .call("shop.models.Order.total", "add", "member", receiver="self")
        .sym("shop.models.helper", "function", "def helper()")
        .sym("shop.models.fact", "function", "def fact(n)")
        .call("shop.models.fact", "fact")
        .sym("shop.models.Base", "class")
        .sym("shop.models.Base.log", "method", "def log(self)")
        .sym("shop.models.Child", "class")
        .base("shop.models.Child", "Base")
        .sym("shop.models.Child.run", "method", "def run(self)")
        .call("shop.models.Child.run", "log", "member", receiver="self")
        .sym("shop.models.Weird", "class")
        .base("shop.models.Weird", "dict")
        .base("shop.models.Weird", "Base")
        .sym("shop.models.Weird.go", "method", "def go(self)")
        .call("shop.models.Weird.go", "log", "member", receiver="self")
    )
    service = (
        F("src/shop/service.py", "python", "shop.service")
        .imp("shop.models", "Cart")
        .imp("shop.models", "helper", "h")
        .imp("shop.models", None, "m")
        .imp(".models", "Order")
        .imp("json")
        .imp("shop.models", "helper")
        .sym("shop.service.checkout", "function", "def checkout(cart)")
        .call("shop.service.checkout", "add", "member", receiver="cart")
        .call("shop.service.checkout", "Cart")
        .call("shop.service.checkout", "h")
        .call("shop.service.checkout", "helper", "member", receiver="m")
        .call("shop.service.checkout", "Order")
        .call("shop.service.checkout", "dumps", "member", receiver="json")
        .call("shop.service.checkout", "print")
        .call("shop.service.checkout", "total", "member", receiver="cart.items")
        .sym("shop.service.shadowed", "function", "def shadowed(helper, n: int = 1)")
        .call("shop.service.shadowed", "helper")
        .sym("shop.service.outer", "function", "def outer()")
        .sym("shop.service.outer.h", "function", "def h()")
        .call("shop.service.outer", "h")
        .call("shop.service.outer", "helper")
        .sym("shop.service.typed", "function", "def typed(c: Cart, o: 'Order')")
        .call("shop.service.typed", "total", "member", receiver="c")
        .call("shop.service.typed", "total", "member", receiver="o")
        .sym("shop.service.Premium", "class")
        .base("shop.service.Premium", "Cart")
        .sym("shop.service.Premium.add", "method", "def add(self, item)")
        .call("shop.service.Premium.add", "add", "member", receiver="super()")
        .sym("shop.service.Premium.buy", "method", "def buy(self)")
        .call("shop.service.Premium.buy", "total", "member", receiver="self")
        .call("shop.service.Premium.buy", "add", "member", receiver="self")
        .call("shop.service.Premium.buy", "helper", "member", receiver="m")
        .call("shop.service", "checkout")
    )
    later = (
        F("src/shop/later.py", "python", "shop.later")
        .imp("shop.models", "helper")
        .sym("shop.later.helper", "function", "def helper()")
        .sym("shop.later.main", "function", "def main()")
        .call("shop.later.main", "helper")
        .imp("shop", "models")
        .call("shop.later.main", "fact", "member", receiver="models")
        .call("shop.later.main", "Cart", "member", receiver="models")
    )
    return [init.build(), models.build(), service.build(), later.build()]


def test_python_self_calls_resolve_to_their_own_class_and_unknown_receivers_stay_ambiguous():
    r = resolve(python_program())
    assert outcome(r, "shop.models.Cart.total", "add", "self") == edge("shop.models.Cart.add")
    assert outcome(r, "shop.models.Order.total", "add", "self") == edge("shop.models.Order.add")
    assert outcome(r, "shop.service.checkout", "add", "cart") == ambiguous(
        "shop.models.Cart.add", "shop.models.Order.add", "shop.service.Premium.add"
    )
    # An attribute's type is not written either.
    assert outcome(r, "shop.service.checkout", "total", "cart.items")[0] == "ambiguous"


def test_python_imports_aliases_and_modules():
    r = resolve(python_program())
    assert outcome(r, "shop.service.checkout", "h") == edge("shop.models.helper")
    assert outcome(r, "shop.service.checkout", "helper", "m") == edge("shop.models.helper")
    # ``from .models import Order``: relative to the importing file's package.
    assert outcome(r, "shop.service.checkout", "Order") == edge("shop.models.Order")
    assert outcome(r, "shop.later.main", "fact", "models") == edge("shop.models.fact")
    # A class called through its module is constructed too.
    assert outcome(r, "shop.later.main", "Cart", "models") == edge("shop.models.Cart.__init__")


def test_python_constructor_calls_land_on_init_or_the_class():
    r = resolve(python_program())
    assert outcome(r, "shop.service.checkout", "Cart") == edge("shop.models.Cart.__init__")
    assert outcome(r, "shop.service.checkout", "Order") == edge("shop.models.Order")


def test_python_shadowing_parameters_nested_and_later_definitions_hide_imports():
    r = resolve(python_program())
    assert outcome(r, "shop.service.shadowed", "helper") == UNRESOLVED
    assert outcome(r, "shop.service.outer", "h") == edge("shop.service.outer.h")
    # Not shadowed there: the import.
    assert outcome(r, "shop.service.outer", "helper") == edge("shop.models.helper")
    # A module-level def written after the import is what the name means.
    assert outcome(r, "shop.later.main", "helper") == edge("shop.later.helper")


def test_python_inheritance_super_and_typed_parameters():
    r = resolve(python_program())
    assert outcome(r, "shop.models.Child.run", "log", "self") == edge("shop.models.Base.log")
    assert outcome(r, "shop.service.Premium.buy", "total", "self") == edge("shop.models.Cart.total")
    assert outcome(r, "shop.service.Premium.buy", "add", "self") == edge("shop.service.Premium.add")
    assert outcome(r, "shop.service.Premium.add", "add", "super()") == edge("shop.models.Cart.add")
    # A base outside the index comes first: it may define log, so no edge.
    assert outcome(r, "shop.models.Weird.go", "log", "self") == ambiguous("shop.models.Base.log")
    assert outcome(r, "shop.service.typed", "total", "c") == edge("shop.models.Cart.total")
    # A type written as a string is not read: the receiver stays unknown.
    assert outcome(r, "shop.service.typed", "total", "o")[0] == "ambiguous"
    assert ("shop.service.Premium", "shop.models.Cart") in structural(r, "inherits")
    assert ("shop.models.Child", "shop.models.Base") in structural(r, "inherits")
    assert not any(s == "shop.models.Weird" and o != "shop.models.Base"
                   for s, o in structural(r, "inherits"))  # fmt: skip


def test_python_recursion_unindexed_libraries_and_module_level_calls():
    r = resolve(python_program())
    assert outcome(r, "shop.models.fact", "fact") == edge("shop.models.fact")
    assert outcome(r, "shop.service.checkout", "dumps", "json") == UNRESOLVED
    assert outcome(r, "shop.service.checkout", "print") == UNRESOLVED
    assert outcome(r, "shop.service", "checkout") == edge("shop.service.checkout")


def test_python_structural_edges():
    r = resolve(python_program())
    contains = structural(r, "contains")
    assert ("shop.models", "shop.models.Cart") in contains
    assert ("shop.models.Cart", "shop.models.Cart.add") in contains
    imports = structural(r, "imports")
    assert ("shop.service", "shop.models.Cart") in imports
    assert ("shop.service", "shop.models") in imports  # ``import shop.models as m``
    assert not any(o == "json" for _, o in imports)


# -- JavaScript / TypeScript ------------------------------------------------------------------


def js_program() -> list[FileExtract]:
    math = (
        F("src/util/math.ts", "typescript")
        .sym("add", "function", "export function add(a: number, b: number)")
        .sym("helper", "function", "function helper()")
        .sym("Vec", "class")
        .sym("Vec.constructor", "method", "constructor(x: number)")
        .sym("Vec.norm", "method", "norm()")
        .sym("Vec.scale", "method", "scale(k: number)")
        .call("Vec.scale", "norm", "member", receiver="this")
        .sym("Point", "class")
        .sym("Point.norm", "method", "norm()")
    )
    index = F("src/util/index.ts", "typescript").imp("./math", "add")
    app = (
        F("src/app.ts", "typescript")
        .imp("./util/math", "add", "plus")
        .imp("./util/math", "*", "M")
        .imp("./util/math", "Vec")
        .imp("./util", "add")
        .imp("react", "default", "React")
        .sym("helper", "function", "function helper()")
        .sym("main", "function", "function main(v)")
        .call("main", "plus")
        .call("main", "add", "member", receiver="M")
        .call("main", "add")
        .call("main", "Vec", "new")
        .call("main", "createElement", "member", receiver="React")
        .call("main", "norm", "member", receiver="v")
        .call("main", "helper")
        .call("main", "log", "member", receiver="console")
        .sym("run", "function", "function run(plus, { add })")
        .call("run", "plus")
    )
    legacy = (
        F("lib/legacy.js", "javascript")
        .imp("../src/util/math.js", None, "m")
        .sym("go", "function", "function go()")
        .call("go", "add", "member", receiver="m")
    )
    return [math.build(), index.build(), app.build(), legacy.build()]


def test_js_relative_named_namespace_and_reexported_imports():
    r = resolve(js_program())
    assert outcome(r, "main", "plus") == edge("add")
    assert outcome(r, "main", "add", "M") == edge("add")
    assert outcome(r, "main", "add") == edge("add")  # through index.ts's re-export
    # ``../src/util/math.js`` from JavaScript names the TypeScript source.
    assert outcome(r, "go", "add", "m") == edge("add")
    e = next(e for e in r.calls if e.callsite.caller == "main" and e.callsite.name == "plus")
    assert e.object_path == "src/util/math.ts"


def test_js_this_new_packages_and_unknown_receivers():
    r = resolve(js_program())
    assert outcome(r, "Vec.scale", "norm", "this") == edge("Vec.norm")
    assert outcome(r, "main", "Vec") == edge("Vec.constructor")
    assert outcome(r, "main", "createElement", "React") == UNRESOLVED
    assert outcome(r, "main", "norm", "v") == ambiguous("Vec.norm", "Point.norm")
    assert outcome(r, "main", "log", "console") == UNRESOLVED
    # The file's own helper, not math.ts's of the same name.
    e = next(e for e in r.calls if e.callsite.caller == "main" and e.callsite.name == "helper")
    assert e.object_path == "src/app.ts"
    assert outcome(r, "run", "plus") == UNRESOLVED  # a parameter hides the import


# -- Go -----------------------------------------------------------------------------------------


def go_program() -> list[FileExtract]:
    store = (
        F("internal/store/store.go", "go")
        .sym("store.Store", "struct", "type Store struct")
        .sym("store.Store.Get", "method", "func (s *Store) Get(k string) string")
        .sym("store.Store.Put", "method", "func (s *Store) Put(k, v string)")
        .call("store.Store.Put", "Get", "member", receiver="s")
        .call("store.Store.Put", "helper")
        .call("store.Store.Put", "Put", "member", receiver="s")
        .sym("store.New", "function", "func New() *Store")
        .call("store.New", "Store", "new")
        .imp("fmt")
    )
    cache = (
        F("internal/store/cache.go", "go")
        .sym("store.Cache", "struct", "type Cache struct")
        .sym("store.helper", "function", "func helper()")
    )
    # A method written in another file than its type.
    cache_get = F("internal/store/cache_get.go", "go").sym(
        "store.Cache.Get", "method", "func (c Cache) Get(k string) string", parent="store.Cache"
    )
    cache_get.call("store.Cache.Get", "helper")
    main = (
        F("cmd/app/main.go", "go")
        .imp("example.com/proj/internal/store")
        .imp("fmt")
        .imp("example.com/proj/internal/store", None, "st")
        .sym("main.main", "function", "func main()")
        .call("main.main", "New", "qualified", qualifier="store")
        .call("main.main", "New", "member", receiver="st")
        .call("main.main", "Println", "qualified", qualifier="fmt")
        .call("main.main", "Get", "member", receiver="x")
        .call("main.main", "Store", "new", qualifier="store")
        .sym("main.use", "function", "func use(s *store.Store, n int)")
        .call("main.use", "Get", "member", receiver="s")
    )
    return [store.build(), cache.build(), cache_get.build(), main.build()]


def test_go_package_qualified_calls_and_same_package_functions():
    r = resolve(go_program())
    assert outcome(r, "main.main", "New", "store") == edge("store.New")
    assert outcome(r, "main.main", "New", "st") == edge("store.New")
    assert outcome(r, "main.main", "Println", "fmt") == UNRESOLVED
    assert outcome(r, "store.Store.Put", "helper") == edge("store.helper")
    assert outcome(r, "store.Cache.Get", "helper") == edge("store.helper")
    assert outcome(r, "store.New", "Store") == edge("store.Store")
    assert outcome(r, "main.main", "Store", "store") == edge("store.Store")


def test_go_receivers_by_the_methods_signature_and_typed_parameters():
    r = resolve(go_program())
    assert outcome(r, "store.Store.Put", "Get", "s") == edge("store.Store.Get")
    assert outcome(r, "store.Store.Put", "Put", "s") == edge("store.Store.Put")  # recursion
    assert outcome(r, "main.use", "Get", "s") == edge("store.Store.Get")
    assert outcome(r, "main.main", "Get", "x") == ambiguous("store.Store.Get", "store.Cache.Get")
    assert ("store.Cache", "store.Cache.Get") in structural(r, "contains")


# -- Rust ---------------------------------------------------------------------------------------


def rust_program() -> list[FileExtract]:
    lib = (
        F("src/lib.rs", "rust")
        .imp("crate::shapes", "Circle")
        .imp("std::mem", "swap")
        .sym("run", "function", "pub fn run()")
        .call("run", "helper", "qualified", qualifier="crate::util")
        .call("run", "new", "qualified", qualifier="shapes::Circle")
        .call("run", "new", "qualified", qualifier="Circle")
        .call("run", "swap")
        .call("run", "new", "qualified", qualifier="Vec")
        .call("run", "area", "member", receiver="s")
    )
    shapes = (
        F("src/shapes.rs", "rust", "shapes")
        .sym("shapes.Shape", "trait", "pub trait Shape")
        .sym("shapes.Shape.describe", "method", "fn describe(&self) -> String")
        .sym("shapes.Circle", "struct", "pub struct Circle")
        .base("shapes.Circle", "Shape")
        .sym("shapes.Circle.new", "function", "pub fn new(r: f64) -> Self")
        .sym("shapes.Circle.area", "method", "pub fn area(&self) -> f64")
        .sym("shapes.Circle.radius", "method", "fn radius(&self) -> f64")
        .sym("shapes.Circle.unit", "function", "pub fn unit() -> Self")
        .call("shapes.Circle.area", "radius", "member", receiver="self")
        .call("shapes.Circle.area", "describe", "member", receiver="self")
        .call("shapes.Circle.unit", "new", "qualified", qualifier="Self")
        .sym("shapes.Square", "struct", "pub struct Square")
        .sym("shapes.Square.area", "method", "pub fn area(&self) -> f64")
        .sym("shapes.Square.grow", "method", "pub fn grow(&mut self, by: &Square)")
        .call("shapes.Square.grow", "area", "member", receiver="by")
    )
    util = (
        F("src/util.rs", "rust", "util")
        .sym("util.helper", "function", "pub fn helper()")
        .sym("util.again", "function", "pub fn again()")
        .call("util.again", "run", "qualified", qualifier="super")
        .call("util.again", "helper", "qualified", qualifier="self")
        .call("util.again", "again")
    )
    return [lib.build(), shapes.build(), util.build()]


def test_rust_crate_super_self_and_use_paths():
    r = resolve(rust_program())
    assert outcome(r, "run", "helper", "crate::util") == edge("util.helper")
    assert outcome(r, "run", "new", "shapes::Circle") == edge("shapes.Circle.new")
    assert outcome(r, "run", "new", "Circle") == edge("shapes.Circle.new")
    assert outcome(r, "util.again", "run", "super") == edge("run")
    assert outcome(r, "util.again", "helper", "self") == edge("util.helper")
    assert outcome(r, "util.again", "again") == edge("util.again")
    assert outcome(r, "run", "swap") == UNRESOLVED
    assert outcome(r, "run", "new", "Vec") == UNRESOLVED


def test_rust_self_Self_traits_and_receivers():
    r = resolve(rust_program())
    assert outcome(r, "shapes.Circle.area", "radius", "self") == edge("shapes.Circle.radius")
    assert outcome(r, "shapes.Circle.area", "describe", "self") == edge("shapes.Shape.describe")
    assert outcome(r, "shapes.Circle.unit", "new", "Self") == edge("shapes.Circle.new")
    assert outcome(r, "shapes.Square.grow", "area", "by") == edge("shapes.Square.area")
    assert outcome(r, "run", "area", "s") == ambiguous("shapes.Circle.area", "shapes.Square.area")
    assert ("shapes.Circle", "shapes.Shape") in structural(r, "inherits")


# -- Java ---------------------------------------------------------------------------------------

JAVA = "src/main/java/com/acme"


def java_program() -> list[FileExtract]:
    user = (
        F(f"{JAVA}/model/User.java", "java")
        .sym("com.acme.model.User", "class", "public class User")
        .sym("com.acme.model.User.User", "method", "public User(String name)")
        .sym("com.acme.model.User.getName", "method", "public String getName()")
        .sym("com.acme.model.User.display", "method", "public void display()")
        .call("com.acme.model.User.display", "getName")
        .call("com.acme.model.User.display", "getName", "member", receiver="this")
        .call("com.acme.model.User.display", "println", "member", receiver="System.out")
    )
    admin = (
        F(f"{JAVA}/model/Admin.java", "java")
        .sym("com.acme.model.Admin", "class", "public class Admin extends User")
        .base("com.acme.model.Admin", "User")
        .sym("com.acme.model.Admin.promote", "method", "public void promote()")
        .call("com.acme.model.Admin.promote", "getName")
        .call("com.acme.model.Admin.promote", "format", "member", receiver="Helper")
        .call("com.acme.model.Admin.promote", "User", "new")
        .call("com.acme.model.Admin.promote", "getName", "member", receiver="super")
    )
    helper = (
        F(f"{JAVA}/model/Helper.java", "java")
        .sym("com.acme.model.Helper", "class", "final class Helper")
        .sym("com.acme.model.Helper.format", "method", "static String format(String s)")
        .sym("com.acme.model.Helper.getName", "method", "String getName()")
    )
    main = (
        F(f"{JAVA}/app/Main.java", "java")
        .imp("com.acme.model", "User")
        .imp("java.util", "List")
        .sym("com.acme.app.Main", "class", "public class Main")
        .sym("com.acme.app.Main.main", "method", "public static void main(String[] args)")
        .call("com.acme.app.Main.main", "User", "new")
        .call("com.acme.app.Main.main", "Admin", "new")
        .call("com.acme.app.Main.main", "add", "member", receiver="list")
        .sym("com.acme.app.Main.show", "method", "void show(final User u, List<String> xs)")
        .call("com.acme.app.Main.show", "getName", "member", receiver="u")
        .call("com.acme.app.Main.show", "size", "member", receiver="xs")
        .call("com.acme.app.Main.show", "show")
    )
    star = (
        F(f"{JAVA}/app/Tool.java", "java")
        .imp("com.acme.model.*")
        .sym("com.acme.app.Tool", "class", "class Tool")
        .sym("com.acme.app.Tool.run", "method", "void run()")
        .call("com.acme.app.Tool.run", "Admin", "new")
    )
    return [user.build(), admin.build(), helper.build(), main.build(), star.build()]


def test_java_implicit_this_same_package_and_imports():
    r = resolve(java_program())
    assert outcome(r, "com.acme.model.User.display", "getName") == edge(
        "com.acme.model.User.getName"
    )
    assert outcome(r, "com.acme.model.User.display", "getName", "this") == edge(
        "com.acme.model.User.getName"
    )
    # Same package, no import: Helper and User; inherited getName.
    assert outcome(r, "com.acme.model.Admin.promote", "format", "Helper") == edge(
        "com.acme.model.Helper.format"
    )
    assert outcome(r, "com.acme.model.Admin.promote", "getName") == edge(
        "com.acme.model.User.getName"
    )
    assert outcome(r, "com.acme.model.Admin.promote", "getName", "super") == edge(
        "com.acme.model.User.getName"
    )
    assert ("com.acme.model.Admin", "com.acme.model.User") in structural(r, "inherits")
    assert outcome(r, "com.acme.app.Tool.run", "Admin") == edge("com.acme.model.Admin")


def test_java_constructors_typed_parameters_and_outside_classes():
    r = resolve(java_program())
    assert outcome(r, "com.acme.app.Main.main", "User") == edge("com.acme.model.User.User")
    assert outcome(r, "com.acme.model.Admin.promote", "User") == edge("com.acme.model.User.User")
    # Another package, not imported: not visible.
    assert outcome(r, "com.acme.app.Main.main", "Admin") == UNRESOLVED
    assert outcome(r, "com.acme.app.Main.show", "getName", "u") == edge(
        "com.acme.model.User.getName"
    )
    assert outcome(r, "com.acme.app.Main.show", "size", "xs") == UNRESOLVED
    assert outcome(r, "com.acme.model.User.display", "println", "System.out") == UNRESOLVED
    assert outcome(r, "com.acme.app.Main.show", "show") == edge("com.acme.app.Main.show")
    assert ("com.acme.app.Main", "com.acme.app.Main.show") in structural(r, "contains")


# -- Ruby, C ------------------------------------------------------------------------------------


def ruby_program() -> list[FileExtract]:
    cart = (
        F("lib/shop/cart.rb", "ruby")
        .sym("Shop", "module", "module Shop")
        .sym("Shop.Cart", "class", "class Cart")
        .sym("Shop.Cart.initialize", "method", "def initialize(items)")
        .sym("Shop.Cart.add", "method", "def add(item)")
        .sym("Shop.Cart.total", "method", "def total")
        .call("Shop.Cart.total", "add")
        .call("Shop.Cart.total", "add", "member", receiver="self")
        .call("Shop.Cart.total", "puts")
    )
    app = (
        F("app.rb", "ruby")
        .imp("./lib/shop/cart")
        .sym("main", "function", "def main(cart)")
        .call("main", "new", "member", receiver="Shop::Cart")
        .call("main", "add", "member", receiver="cart")
        .call("main", "parse", "member", receiver="JSON")
    )
    return [cart.build(), app.build()]


def test_ruby_implicit_self_constants_and_new():
    r = resolve(ruby_program())
    assert outcome(r, "Shop.Cart.total", "add") == edge("Shop.Cart.add")
    assert outcome(r, "Shop.Cart.total", "add", "self") == edge("Shop.Cart.add")
    assert outcome(r, "Shop.Cart.total", "puts") == UNRESOLVED
    assert outcome(r, "main", "new", "Shop::Cart") == edge("Shop.Cart.initialize")
    assert outcome(r, "main", "add", "cart") == ambiguous("Shop.Cart.add")
    assert outcome(r, "main", "parse", "JSON") == UNRESOLVED


def c_program() -> list[FileExtract]:
    header = F("src/util.h", "c").sym("add", "function", "int add(int a, int b)")
    util = (
        F("src/util.c", "c")
        .imp("util.h")
        .sym("add", "function", "int add(int a, int b)")
        .sym("helper", "function", "static int helper(void)")
        .call("add", "helper")
    )
    other = (
        F("src/other.c", "c")
        .sym("helper", "function", "static int helper(void)")
        .sym("twice", "function", "int twice(int x)")
        .call("twice", "helper")
        .call("twice", "add")
    )
    main = (
        F("src/main.c", "c")
        .imp('"util.h"')
        .imp("<stdio.h>")
        .sym("main", "function", "int main(int argc, char **argv)")
        .call("main", "add")
        .call("main", "printf")
        .call("main", "helper")
    )
    cpp = (
        F("src/shape.cpp", "cpp")
        .sym("Shape", "class", "class Shape")
        .sym("Shape.Shape", "method", "Shape(int n)")
        .sym("Shape.area", "method", "double area() const")
        .sym("Shape.scaled", "method", "double scaled(const Shape &other)")
        .call("Shape.scaled", "area")
        .call("Shape.scaled", "area", "member", receiver="this")
        .call("Shape.scaled", "area", "member", receiver="other")
        .call("Shape.scaled", "Shape", "new")
        .call("Shape.scaled", "sort", "qualified", qualifier="std")
        .call("Shape.scaled", "clamp", "qualified", qualifier="geo::util")
        .sym("geo.util.clamp", "function", "int clamp(int x)", parent="geo.util")
    )
    return [header.build(), util.build(), other.build(), main.build(), cpp.build()]


def test_c_includes_same_name_functions_and_static_ones():
    r = resolve(c_program())
    e = next(e for e in r.calls if e.callsite.caller == "main" and e.callsite.name == "add")
    assert (e.object, e.object_path) == ("add", "src/util.c")  # the definition, not the header
    assert outcome(r, "main", "printf") == UNRESOLVED
    assert outcome(r, "main", "helper") == UNRESOLVED  # static in other files
    h = next(e for e in r.calls if e.callsite.caller == "twice" and e.callsite.name == "helper")
    assert h.object_path == "src/other.c"
    assert outcome(r, "twice", "add") == edge("add")


def test_cpp_this_implicit_members_typed_parameters_and_std():
    r = resolve(c_program())
    assert outcome(r, "Shape.scaled", "area") == edge("Shape.area")
    assert outcome(r, "Shape.scaled", "area", "this") == edge("Shape.area")
    assert outcome(r, "Shape.scaled", "area", "other") == edge("Shape.area")
    assert outcome(r, "Shape.scaled", "Shape") == edge("Shape.Shape")
    assert outcome(r, "Shape.scaled", "sort", "std") == UNRESOLVED
    # A namespace the extractor wrote no symbol for: the path spelled out names it.
    assert outcome(r, "Shape.scaled", "clamp", "geo::util") == edge("geo.util.clamp")


# -- invariants ---------------------------------------------------------------------------------

PROGRAMS = (python_program, js_program, go_program, rust_program, java_program, ruby_program,
            c_program)  # fmt: skip


def everything() -> list[FileExtract]:
    return [ex for program in PROGRAMS for ex in program()]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_every_callsite_is_one_edge_or_one_open_call(program):
    extracts = program()
    r = resolve(extracts)
    sites = [c for ex in extracts for c in ex.callsites]
    seen = [e.callsite for e in r.calls] + [o.callsite for o in r.open]
    assert sorted(map(repr, seen)) == sorted(map(repr, sites))
    for o in r.open:
        assert (o.state == "ambiguous") == bool(o.candidates)
        assert o.state != "ambiguous" or len(o.candidates) >= 1


def test_edges_join_indexed_symbols_only():
    extracts = everything()
    r = resolve(extracts)
    known = {(s.path, s.qualified) for ex in extracts for s in ex.symbols}
    for e in r.calls + r.of("inherits"):
        assert (e.subject_path, e.subject) in known or e.predicate == "calls"
        assert (e.object_path, e.object) in known


@settings(max_examples=25, deadline=None)
@given(st.randoms(use_true_random=False))
def test_resolution_does_not_depend_on_the_order_of_extracts(rnd: random.Random):
    extracts = everything()
    shuffled = list(extracts)
    rnd.shuffle(shuffled)
    assert resolve(shuffled) == resolve(extracts)


NAMES = ("f", "g", "A", "B", "run")


@st.composite
def programs(draw) -> list[FileExtract]:
    """Random small programs over a few names: collisions, cycles and dangling names."""
    language = draw(st.sampled_from(("python", "go", "java", "rust", "typescript", "ruby", "c")))
    out = []
    for i in range(draw(st.integers(1, 4))):
        f = F(f"pkg/m{i}.x", language)
        for _ in range(draw(st.integers(0, 5))):
            kind = draw(st.sampled_from(("function", "class", "method")))
            parent = draw(st.sampled_from([None, *[s.qualified for s in f.symbols]]))
            name = draw(st.sampled_from(NAMES))
            qualified = f"{parent}.{name}" if parent else name
            f.sym(qualified, kind, f"def {name}(x)", parent=parent)
        for _ in range(draw(st.integers(0, 3))):
            f.imp(f"pkg.m{draw(st.integers(0, 3))}", draw(st.sampled_from((None, *NAMES))))
        for s in list(f.symbols):
            if s.kind == "class" and draw(st.booleans()):
                f.base(s.qualified, draw(st.sampled_from(NAMES)))
        callers = [s.qualified for s in f.symbols] or ["pkg"]
        for _ in range(draw(st.integers(0, 5))):
            form = draw(st.sampled_from(("call", "member", "qualified", "new")))
            recv = draw(st.sampled_from((None, "self", "this", "x", "A", "pkg.m0", "super")))
            f.call(draw(st.sampled_from(callers)), draw(st.sampled_from(NAMES)), form,
                   receiver=recv if form == "member" else None,
                   qualifier=recv if form == "qualified" else None)  # fmt: skip
        out.append(f.build())
    return out


@settings(max_examples=80, deadline=None)
@given(programs(), st.randoms(use_true_random=False))
def test_random_programs_resolve_deterministically_one_outcome_per_callsite(extracts, rnd):
    r = resolve(extracts)
    shuffled = list(extracts)
    rnd.shuffle(shuffled)
    assert resolve(shuffled) == r
    sites = sorted(repr(c) for ex in extracts for c in ex.callsites)
    assert sorted(repr(x.callsite) for x in (*r.calls, *r.open)) == sites
    known = {(s.path, s.qualified) for ex in extracts for s in ex.symbols}
    assert all((e.object_path, e.object) in known for e in r.calls)


# -- conventions and conversions ----------------------------------------------------------------


def test_naming_conventions():
    assert python_module("src/a/b.py") == "a.b"
    assert python_module("a/__init__.py") == "a"
    assert python_relative(".models", "shop.service", False) == "shop.models"
    assert python_relative("..x", "a.b.c", False) == "a.x"
    assert python_relative(".", "a", True) == "a"
    assert rust_module("src/lib.rs") == ("src", ())
    assert rust_module("src/a/mod.rs") == ("src", ("a",))
    assert rust_module("crates/k/src/a/b.rs") == ("crates/k/src", ("a", "b"))
    assert "src/x.ts" in (js_candidates("./x.js", "src/app.ts") or [])
    assert js_candidates("react", "src/app.ts") is None


def test_signatures_give_parameters_and_their_types():
    assert parameters("def f(self, a: Cart, *args, b=1, **kw)", "python") == (
        ("self", None), ("a", "Cart"), ("args", None), ("b", None), ("kw", None),
    )  # fmt: skip
    assert parameters("func (s *S) Run(a, b int, st *store.Store)", "go") == (
        ("a", "int"), ("b", "int"), ("st", "store.Store"),
    )  # fmt: skip
    assert go_receiver("func (s *S) Run()") == ("s", "S")
    assert parameters("void f(final Map<K, V> m, int n)", "java") == (("m", "Map"), ("n", None))
    assert parameters("fn f(&mut self, by: &Square)", "rust") == (("by", "Square"),)
    assert parameters("function f({ a, b }, c?: Foo)", "typescript") == (("c", "Foo"),)
    assert parameters("def f(a: Optional[Cart], b: Cart | None, c: int | str)", "python") == (
        ("a", "Cart"), ("b", "Cart"), ("c", None),
    )  # fmt: skip


def test_edges_as_triplets_one_per_distinct_edge_with_qualified_names():
    r = resolve(python_program())
    triplets = edges_as_triplets(r, "proj", now=1_000)
    keys = [(t.subject, t.predicate, t.object) for t in triplets]
    assert len(keys) == len(set(keys))
    assert ("shop.models.Cart.total", "calls", "shop.models.Cart.add") in keys
    assert ("shop.models.Cart", "contains", "shop.models.Cart.add") in keys
    assert ("shop.service.Premium", "inherits", "shop.models.Cart") in keys
    assert ("shop.service", "imports", "shop.models.Cart") in keys
    assert {t.predicate for t in triplets} == {"calls", "contains", "imports", "inherits"}
    assert all(t.realm == "proj" and t.valid_from == 1_000 and t.invalidated_at is None
               for t in triplets)  # fmt: skip
    assert all(is_id(t.id) for t in triplets)
    assert len({t.id for t in triplets}) == len(triplets)
    assert MAX_NAME_CHARS == MAX_ENTITY_CHARS


# -- more import forms --------------------------------------------------------------------------


def test_more_import_forms_across_languages():
    files = [
        # Python: a namespace package (no __init__.py), ``import a.b``, a star import.
        F("tools/gen/emit.py", "python", "tools.gen.emit").sym("tools.gen.emit.write").build(),
        F("tools/run.py", "python", "tools.run")
        .imp("tools.gen.emit")
        .imp("tools.gen.emit", "*")
        .sym("tools.run.main")
        .call("tools.run.main", "write", "member", receiver="tools.gen.emit")
        .call("tools.run.main", "write")
        .build(),
        # JS: a default import, matched by name.
        F("web/Button.jsx", "javascript").sym("Button", "function").build(),
        F("web/page.jsx", "javascript")
        .imp("./Button", "default", "Button")
        .sym("Page", "function")
        .call("Page", "Button")
        .build(),
        # Go: a dot import; an embedded struct's promoted method.
        F("lib/log/log.go", "go")
        .sym("log.Logger", "struct", "type Logger struct")
        .sym("log.Logger.Info", "method", "func (l *Logger) Info(m string)")
        .sym("log.Printf", "function", "func Printf(f string)")
        .build(),
        F("svc/svc.go", "go")
        .imp("example.com/x/lib/log", None, ".")
        .sym("svc.Service", "struct", "type Service struct")
        .base("svc.Service", "Logger")
        .sym("svc.Service.Run", "method", "func (s *Service) Run()")
        .call("svc.Service.Run", "Printf")
        .call("svc.Service.Run", "Info", "member", receiver="s")
        .build(),
        # Java: a static import.
        F("src/com/x/U.java", "java")
        .sym("com.x.U", "class", "class U")
        .sym("com.x.U.f", "method", "static void f()")
        .build(),
        F("src/com/y/V.java", "java")
        .imp("com.x.U", "f")
        .sym("com.y.V", "class", "class V")
        .sym("com.y.V.g", "method", "void g()")
        .call("com.y.V.g", "f")
        .build(),
        # Ruby: a class reopened in another file; C++: a method defined out of line.
        F("lib/a.rb", "ruby").sym("Cart", "class").sym("Cart.add", "method", "def add").build(),
        F("lib/b.rb", "ruby")
        .sym("Cart", "class")
        .sym("Cart.sum", "method", "def sum")
        .call("Cart.sum", "add")
        .build(),
        F("src/w.h", "cpp").sym("W", "class").sym("W.go", "method", "void go()").build(),
        F("src/w.cpp", "cpp")
        .sym("W.run", "method", "void W::run()", parent="W")
        .call("W.run", "go")
        .build(),
    ]
    r = resolve(files)
    assert outcome(r, "tools.run.main", "write", "tools.gen.emit") == edge("tools.gen.emit.write")
    assert outcome(r, "tools.run.main", "write") == edge("tools.gen.emit.write")
    assert outcome(r, "Page", "Button") == edge("Button")
    assert outcome(r, "svc.Service.Run", "Printf") == edge("log.Printf")
    assert outcome(r, "svc.Service.Run", "Info", "s") == edge("log.Logger.Info")
    assert outcome(r, "com.y.V.g", "f") == edge("com.x.U.f")
    assert outcome(r, "Cart.sum", "add") == edge("Cart.add")
    assert outcome(r, "W.run", "go") == edge("W.go")


def test_resolving_some_files_against_all_gives_their_part_of_the_whole():
    extracts = everything()
    whole = resolve(extracts)
    some = {"src/shop/service.py", "src/app.ts", "cmd/app/main.go"}
    part = resolve(extracts, paths=some)
    assert part.edges == tuple(e for e in whole.edges if e.path in some)
    assert part.open == tuple(o for o in whole.open if o.callsite.path in some)
    assert part.calls


# -- the index kept current file by file (Index.update) -----------------------------------------

TABLES = ("files", "paths", "at", "qualified", "children", "top", "root", "methods", "modules",
          "keys", "by_dir", "top_by_name", "bases", "packages")  # fmt: skip


def tables(ix: Index) -> dict:
    """Every lookup table of an index as plain values (empty entries dropped, as lookups
    read them: ``get`` finds nothing either way)."""

    def plain(x):
        if isinstance(x, dict):
            kept = {k: plain(v) for k, v in x.items()}
            return {k: v for k, v in kept.items() if v not in ({}, [])}
        return list(x) if isinstance(x, list) else x

    return {name: plain(getattr(ix, name)) for name in TABLES}


def updated(before: list[FileExtract], put: list[FileExtract], removed: list[str]) -> Index:
    ix = Index(before)
    ix.update(put, removed)
    return ix


def fresh(before: list[FileExtract], put: list[FileExtract], removed: list[str]) -> Index:
    files = {ex.path: ex for ex in before if ex.path not in removed} | {ex.path: ex for ex in put}
    return Index(list(files.values()))


def test_an_updated_index_is_the_index_built_afresh_for_each_file_gone_and_back():
    extracts = everything()
    for ex in extracts:
        others = [e for e in extracts if e.path != ex.path]
        gone = updated(extracts, [], [ex.path])
        assert tables(gone) == tables(Index(others)), ex.path
        gone.update([ex])
        assert tables(gone) == tables(Index(extracts)), ex.path
        assert resolve_index(gone) == resolve(extracts)


def test_an_init_py_that_comes_renames_its_package_and_the_index_follows():
    # By path the module is code.shop.cart; inside the package shop, shop.cart as well.
    pkg = F("code/shop/cart.py", "python").sym("total").build()
    init = F("code/shop/__init__.py", "python").build()
    ix = updated([pkg], [init], [])
    assert tables(ix) == tables(Index([pkg, init]))
    assert ix.keys["code/shop/cart.py"] == ["code.shop.cart", "shop.cart"]
    ix.update([], ["code/shop/__init__.py"])
    assert tables(ix) == tables(Index([pkg]))


@st.composite
def edits(draw) -> tuple[list[FileExtract], list[FileExtract], list[str]]:
    """A program, and an edit of it: some files replaced by others of the same path (or new
    ones), some removed."""
    before, after = draw(programs()), draw(programs())
    language = before[0].language  # the edit's files in the program's language
    after = [replace(ex, language=language,
                     symbols=tuple(replace(s, language=language) for s in ex.symbols))
             for ex in after]  # fmt: skip
    put = [ex for ex in after if draw(st.booleans())]
    removed = [ex.path for ex in before if draw(st.booleans()) and ex.path not in
               {p.path for p in put}]  # fmt: skip
    return before, put, removed


@settings(max_examples=120, deadline=None)
@given(edits())
def test_an_updated_index_answers_as_one_built_afresh(edit):
    before, put, removed = edit
    ix, new = updated(before, put, removed), fresh(before, put, removed)
    assert tables(ix) == tables(new)
    assert resolve_index(ix) == resolve_index(new)
