"""The real extractor and resolver through the indexer into the store: calls resolved to one
symbol, a call on an unknown receiver kept ambiguous with its candidates, a library call
kept unresolved, and callers/callees read back as the resolver decided."""

from __future__ import annotations

from pathlib import Path

import pytest

from chitta.code.answers import resolve_answers
from chitta.code.index import index_path
from chitta.store.code import AMBIGUOUS, RESOLVED, UNRESOLVED

pytest.importorskip("tree_sitter_python", reason="needs the chitta[code] extra")

SHOP = {
    "shop/__init__.py": "",
    "shop/prices.py": "def price(n):\n    return round(n * 2)\n",
    "shop/cart.py": (
        "from shop.prices import price\n\n\n"
        "class Cart:\n"
        "    def total(self):\n"
        "        return price(1) + self.tax()\n\n"
        "    def tax(self):\n"
        "        return 0\n\n\n"
        "class Order:\n"
        "    def tax(self):\n"
        "        return 1\n\n\n"
        "def bill(thing):\n"
        "    return thing.tax()\n"
    ),
}


def _qualified(code, ids: list[str | None]) -> list[str]:
    found = code.symbols_by_id([i for i in ids if i])
    return sorted(found[i].symbol.qualified for i in ids if i in found)


def test_calls_are_resolved_kept_open_and_walked(store, git_repo) -> None:
    root: Path = git_repo(SHOP)
    report = index_path(store, "work", root, resolve=resolve_answers)
    assert report.resolved_now
    code = store.code()
    states = {(c.callsite.caller, c.callsite.name): c.state for c in code.callsites("work")}
    assert states[("shop.cart.Cart.total", "price")] == RESOLVED  # through the import
    assert states[("shop.cart.Cart.total", "tax")] == RESOLVED  # self: Cart.tax, not Order.tax
    assert states[("shop.cart.bill", "tax")] == AMBIGUOUS  # receiver of unknown type
    assert states[("shop.prices.price", "round")] == UNRESOLVED  # a builtin: no edge
    ambiguous = next(c for c in code.callsites("work") if c.callsite.caller == "shop.cart.bill")
    assert _qualified(code, list(ambiguous.candidates)) == ["shop.cart.Cart.tax",
                                                             "shop.cart.Order.tax"]  # fmt: skip
    tax = next(s for s in code.find_symbols("work", "Cart.tax"))
    edges, _ = code.callers("work", tax.id)
    assert _qualified(code, [e.caller_id for e in edges]) == ["shop.cart.Cart.total"]
    total = next(s for s in code.find_symbols("work", "Cart.total"))
    edges, _ = code.callees("work", total.id)
    assert _qualified(code, [e.target_id for e in edges]) == ["shop.cart.Cart.tax",
                                                              "shop.prices.price"]  # fmt: skip
