"""The code tables (store/code.py) on both backends: a file's rows replaced whole, symbols
found by name, prefix and qualified name in any case, resolutions recorded and walked as
callers and callees, realms kept apart."""

from __future__ import annotations

from dataclasses import replace

import pytest

from chitta.code.model import Base, Callsite, FileExtract, Import, Symbol
from chitta.store.code import (
    AMBIGUOUS,
    PENDING,
    RESOLVED,
    UNRESOLVED,
    CodeTables,
    Resolution,
)

REPO = "/src/shop"


def sym(name: str, qualified: str, kind: str, path: str, start: int, end: int,
        parent: str | None = None) -> Symbol:  # fmt: skip
    return Symbol(name=name, qualified=qualified, kind=kind, signature=f"def {name}()",
                  path=path, start_line=start, end_line=end, parent=parent, language="python",
                  doc=f"{name}'s doc", body_hash=f"h-{qualified}-{start}")  # fmt: skip


def call(caller: str, name: str, path: str, line: int, **kw: object) -> Callsite:
    fields = {"form": "call", "receiver": None, "qualifier": None} | kw
    return Callsite(caller=caller, name=name, path=path, line=line, **fields)  # type: ignore[arg-type]


CART = "shop/cart.py"
# shop.cart: Cart.total calls price() and self.tax(); checkout() calls Cart.total twice.
CART_SYMBOLS = (
    sym("cart", "shop.cart", "module", CART, 1, 40),
    sym("Cart", "shop.cart.Cart", "class", CART, 3, 20, "shop.cart"),
    sym("total", "shop.cart.Cart.total", "method", CART, 5, 10, "shop.cart.Cart"),
    sym("tax", "shop.cart.Cart.tax", "method", CART, 12, 14, "shop.cart.Cart"),
    sym("checkout", "shop.cart.checkout", "function", CART, 22, 30, "shop.cart"),
)
CART_CALLS = (
    call("shop.cart.Cart.total", "price", CART, 6, form="qualified", qualifier="prices"),
    call("shop.cart.Cart.total", "tax", CART, 7, form="member", receiver="self"),
    call("shop.cart.checkout", "total", CART, 24, form="member", receiver="cart"),
    call("shop.cart.checkout", "total", CART, 25, form="member", receiver="cart"),
    call("shop.cart.checkout", "log", CART, 26),
)
PRICES = "shop/prices.py"
PRICE_SYMBOLS = (
    sym("prices", "shop.prices", "module", PRICES, 1, 9),
    sym("price", "shop.prices.price", "function", PRICES, 2, 4, "shop.prices"),
    sym("Price", "shop.prices.Price", "class", PRICES, 6, 9, "shop.prices"),
)


def cart_file(**kw: object) -> FileExtract:
    fields = {
        "path": CART, "language": "python", "content_hash": "c1", "lines": 40,
        "symbols": CART_SYMBOLS, "callsites": CART_CALLS,
        "imports": (Import("shop", "prices", None, CART, 1),),
        "bases": (Base("shop.cart.Cart", "object", CART, 3),), "parse_errors": 1,
    } | kw  # fmt: skip
    return FileExtract(**fields)  # type: ignore[arg-type]


PRICES_FILE = FileExtract(path=PRICES, language="python", content_hash="p1", lines=9,
                          symbols=PRICE_SYMBOLS)  # fmt: skip


@pytest.fixture
def code(store) -> CodeTables:
    tables = store.code()
    tables.replace_file("work", REPO, cart_file(), "abc123", 1000)
    tables.replace_file("work", REPO, PRICES_FILE, "abc123", 1000)
    return tables


def ids_of(code: CodeTables, *qualified: str) -> list[str]:
    out = []
    for q in qualified:
        found = [s for s in code.find_symbols("work", q) if s.symbol.qualified == q]
        assert len(found) == 1, (q, found)
        out.append(found[0].id)
    return out


def resolve_cart(code: CodeTables) -> None:
    """What a resolver would answer for cart.py's calls."""
    price, tax, total = PRICE_SYMBOLS[1], CART_SYMBOLS[3], CART_SYMBOLS[2]
    code.set_resolutions("work", REPO, [
        Resolution(CART_CALLS[0], RESOLVED, (price,)),
        Resolution(CART_CALLS[1], RESOLVED, (tax,)),
        Resolution(CART_CALLS[2], RESOLVED, (total,)),
        Resolution(CART_CALLS[3], RESOLVED, (total,)),
        Resolution(CART_CALLS[4], AMBIGUOUS, (price, tax)),
    ])  # fmt: skip


def test_a_file_is_stored_and_read_back_as_it_was_extracted(code: CodeTables) -> None:
    assert code.files("work", REPO) == {CART: "c1", PRICES: "p1"}
    assert code.repos("work") == [REPO] and code.repos("other") == []
    stored = code.file("work", REPO, CART)
    assert stored is not None and stored.commit == "abc123" and stored.parse_errors == 1
    assert stored.lines == 40 and stored.indexed_at == 1000
    assert code.extracts("work", REPO) == [cart_file(), PRICES_FILE]
    assert code.counts("work") == {"files": 2, "symbols": 8, "callsites": 5, "imports": 1,
                                   "bases": 1}  # fmt: skip
    assert code.counts("other")["symbols"] == 0 and code.counts()["symbols"] == 8
    assert [s.symbol for s in code.symbols_in("work", REPO, CART)] == list(CART_SYMBOLS)


def test_replacing_a_file_replaces_all_its_rows_and_keeps_symbol_ids(code: CodeTables) -> None:
    before = {s.symbol.qualified: s.id for s in code.symbols_in("work", REPO, CART)}
    # tax() moved down two lines and checkout() is gone; Cart.total's body changed.
    moved = (CART_SYMBOLS[0], CART_SYMBOLS[1],
             replace(CART_SYMBOLS[2], body_hash="changed"),
             replace(CART_SYMBOLS[3], start_line=14, end_line=16))  # fmt: skip
    code.replace_file("work", REPO, cart_file(symbols=moved, callsites=CART_CALLS[:2],
                                              content_hash="c2", imports=(), bases=()),
                      "def456", 2000)  # fmt: skip
    after = {s.symbol.qualified: s for s in code.symbols_in("work", REPO, CART)}
    assert set(after) == set(before) - {"shop.cart.checkout"}
    assert all(after[q].id == before[q] for q in after)  # ids do not follow lines
    assert after["shop.cart.Cart.total"].symbol.body_hash == "changed"
    assert after["shop.cart.Cart.tax"].commit == "def456"
    assert code.counts("work") == {"files": 2, "symbols": 7, "callsites": 2, "imports": 0,
                                   "bases": 0}  # fmt: skip
    assert code.files("work", REPO)[CART] == "c2"


def test_removing_a_file_removes_its_rows_only(code: CodeTables) -> None:
    assert code.remove_file("work", REPO, CART) is True
    assert code.remove_file("work", REPO, CART) is False
    assert code.files("work", REPO) == {PRICES: "p1"}
    assert code.counts("work") == {"files": 1, "symbols": 3, "callsites": 0, "imports": 0,
                                   "bases": 0}  # fmt: skip


def test_find_by_name_prefix_kind_and_qualified_name(code: CodeTables) -> None:
    def found(name: str, **kw: object) -> list[str]:
        return [s.symbol.qualified for s in code.find_symbols("work", name, **kw)]

    # Any case, the name's own case first.
    assert found("price") == ["shop.prices.price", "shop.prices.Price"]
    assert found("Price") == ["shop.prices.Price", "shop.prices.price"]
    assert found("price", kinds=("class",)) == ["shop.prices.Price"]
    assert found("t", prefix=True) == ["shop.cart.Cart.tax", "shop.cart.Cart.total"]
    assert found("t", prefix=True, limit=1) == ["shop.cart.Cart.tax"]
    assert found("Cart.total") == ["shop.cart.Cart.total"]
    assert found("shop::cart::Cart::total") == ["shop.cart.Cart.total"]
    assert found("cart.Cart.to", prefix=True) == ["shop.cart.Cart.total"]
    assert found("prices.total") == [] and found("art.total") == []  # whole parts only
    assert found("nothing") == [] and found("  ") == []
    assert code.find_symbols("other", "price") == []
    s = code.find_symbols("work", "checkout")[0]
    assert code.symbols_by_id([s.id, "sym_missing"]) == {s.id: s}
    assert (s.repo, s.realm, s.commit, s.symbol) == (REPO, "work", "abc123", CART_SYMBOLS[4])


# Names a prefix or a dotted name could read wrongly: LIKE's wildcards, one name in several
# cases and kinds, the Kelvin sign (Python lower-cases it to an ASCII k, SQL does not) and
# parents outside ASCII.
ODD = "shop/odd.py"
ODD_SYMBOLS = (
    sym("a_b", "odd.a_b", "function", ODD, 1, 1),
    sym("axb", "odd.axb", "function", ODD, 2, 2),
    sym("a%c", "odd.a%c", "function", ODD, 3, 3),
    sym("abc", "odd.abc", "function", ODD, 4, 4),
    sym("Tot", "odd.m_n.Tot", "class", ODD, 5, 5),
    sym("tot", "odd.mxn.tot", "function", ODD, 6, 6),
    sym("TOT", "odd.m%n.TOT", "function", ODD, 7, 7),
    sym("tot", "odd.m_n.tot", "method", ODD, 8, 8),
    sym("total", "\u212aart.total", "method", ODD, 9, 9),
    sym("total", "Ärger.total", "method", ODD, 10, 10),
)


def test_find_reads_wildcards_case_kinds_and_limits_literally(code: CodeTables) -> None:
    odd = FileExtract(path=ODD, language="python", content_hash="o1", lines=10,
                      symbols=ODD_SYMBOLS)  # fmt: skip
    code.replace_file("work", REPO, odd, None, 1)

    def found(name: str, **kw: object) -> list[str]:
        return [s.symbol.qualified for s in code.find_symbols("work", name, **kw)]

    assert found("a_", prefix=True) == ["odd.a_b"]  # not axb: `_` is no wildcard
    assert found("a%", prefix=True) == ["odd.a%c"]  # nor is `%`
    assert found("A", prefix=True) == ["odd.a%c", "odd.a_b", "odd.abc", "odd.axb"]
    # The name's own case first (by file and line), then every other name by lower case.
    assert found("tot", prefix=True) == ["odd.mxn.tot", "odd.m_n.tot", "odd.m_n.Tot",
                                         "odd.m%n.TOT", "shop.cart.Cart.total",
                                         "\u212aart.total", "Ärger.total"]  # fmt: skip
    assert found("TOT", prefix=True, limit=2) == ["odd.m%n.TOT", "odd.m_n.Tot"]
    assert found("Tot", prefix=True, limit=1) == ["odd.m_n.Tot"]
    assert found("tot", prefix=True, kinds=("class", "method"), limit=3) == [
        "odd.m_n.tot", "odd.m_n.Tot", "shop.cart.Cart.total"]  # fmt: skip
    assert found("tot", limit=0) == [] and found("tot", prefix=True, limit=0) == []
    # Dotted names: the parents are text, whole parts, any case.
    assert found("m_n.tot") == ["odd.m_n.tot", "odd.m_n.Tot"]
    assert found("M_N::TOT") == ["odd.m_n.Tot", "odd.m_n.tot"]
    assert found("m%n.tot") == ["odd.m%n.TOT"] and found("m.tot") == []
    assert found("m_n.tot", kinds=("class",)) == ["odd.m_n.Tot"]
    assert found("odd::m_n::t", prefix=True, limit=1) == ["odd.m_n.Tot"]
    assert found("kart.total") == ["\u212aart.total"] and found("KART.to", prefix=True) == [
        "\u212aart.total"]  # fmt: skip
    assert found("ärger.total") == found("ÄRGER.TOT", prefix=True) == ["Ärger.total"]


def test_callsites_start_pending_and_take_the_resolvers_answers(code: CodeTables) -> None:
    assert code.resolution_counts("work") == {PENDING: 5, RESOLVED: 0, UNRESOLVED: 0,
                                              AMBIGUOUS: 0}  # fmt: skip
    calls = code.callsites("work", REPO)
    total, checkout = ids_of(code, "shop.cart.Cart.total", "shop.cart.checkout")
    assert [c.caller_id for c in calls] == [total, total, checkout, checkout, checkout]
    resolve_cart(code)
    assert code.resolution_counts("work") == {PENDING: 0, RESOLVED: 4, UNRESOLVED: 0,
                                              AMBIGUOUS: 1}  # fmt: skip
    (ambiguous,) = code.callsites("work", states=(AMBIGUOUS,))
    price, tax = ids_of(code, "shop.prices.price", "shop.cart.Cart.tax")
    assert ambiguous.target_id is None and ambiguous.candidates == (price, tax)
    # A target the tables do not hold is dropped: a resolved call with none left is not one.
    ghost = replace(PRICE_SYMBOLS[1], path="gone.py")
    code.set_resolutions("work", REPO, [Resolution(CART_CALLS[0], RESOLVED, (ghost,))])
    assert code.callsites("work", REPO)[0].state == UNRESOLVED
    # Re-indexing the file sets its calls pending again.
    code.replace_file("work", REPO, cart_file(content_hash="c3"), None, 3000)
    assert code.resolution_counts("work", REPO)[PENDING] == 5


def test_callers_and_callees_walk_resolved_calls_breadth_first(code: CodeTables) -> None:
    resolve_cart(code)
    price, total, checkout = ids_of(code, "shop.prices.price", "shop.cart.Cart.total",
                                    "shop.cart.checkout")  # fmt: skip
    edges, cut = code.callers("work", price)
    assert not cut and [(e.caller_id, e.line, e.depth) for e in edges] == [(total, 6, 1)]
    edges, cut = code.callers("work", price, depth=2)
    assert [(e.caller_id, e.line, e.depth) for e in edges] == [
        (total, 6, 1), (checkout, 24, 2), (checkout, 25, 2)]  # fmt: skip
    edges, cut = code.callers("work", price, depth=2, limit=2)
    assert cut and len(edges) == 2
    edges, _ = code.callees("work", checkout, depth=3)
    assert [(e.target_id, e.depth) for e in edges] == [
        (total, 1),
        (total, 1),
        (price, 2),
        (ids_of(code, "shop.cart.Cart.tax")[0], 2),
    ]
    assert code.callees("work", checkout, depth=99)[0] == edges  # depth is bounded, not refused
    assert code.callers("other", price) == ([], False)
    assert code.callers("work", "sym_missing") == ([], False)


def test_realms_are_kept_apart(code: CodeTables) -> None:
    code.replace_file("home", REPO, PRICES_FILE, None, 5)
    mine = code.find_symbols("home", "price", kinds=("function",))
    theirs = code.find_symbols("work", "price", kinds=("function",))
    assert mine[0].id != theirs[0].id and mine[0].symbol == theirs[0].symbol
    assert code.files("home", REPO) == {PRICES: "p1"}
    code.remove_file("home", REPO, PRICES)
    assert code.files("work", REPO) == {CART: "c1", PRICES: "p1"}


def test_refreshing_statistics_analyzes_postgresql_and_leaves_sqlite_alone(
    code, store, backend
) -> None:
    code.refresh_statistics()
    if backend == "postgresql":
        rows = code._rows(
            "SELECT relname FROM pg_stat_user_tables WHERE last_analyze IS NOT NULL "
            "AND last_vacuum IS NOT NULL"
        )
        assert {r[0] for r in rows} >= {"code_files", "code_symbols", "code_callsites"}
    else:  # no sqlite_stat1: every plan stays the schema's
        assert code._rows("SELECT name FROM sqlite_master WHERE name = 'sqlite_stat1'") == []
    found = code.find_symbols("work", "total")
    assert [s.symbol.qualified for s in found] == ["shop.cart.Cart.total"]
