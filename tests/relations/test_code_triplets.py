"""A repository's resolved edges as the realm's triplets, on both backends, through the
operations: indexed twice gives the same triplets, an edit that removes a call invalidates its
triplet (kept for history), and ``recall_analogy`` and the graph lane walk ``calls`` between
indexed functions."""

from __future__ import annotations

from pathlib import Path

import pytest

from chitta.api import Chitta
from chitta.ops import OPERATIONS

pytest.importorskip("tree_sitter_python", reason="needs the chitta[code] extra")

SHOP = {
    "shop/__init__.py": "",
    "shop/prices.py": (
        "def price(n):\n    return round(n * 2)\n\n\ndef tax(n):\n    return n / 10\n"
    ),
    "shop/cart.py": (
        "from shop.prices import price, tax\n\n\n"
        "def total(items):\n    return sum(price(i) for i in items)\n\n\n"
        "def vat(items):\n    return tax(total(items))\n"
    ),
}


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _index(chitta: Chitta, root: Path) -> dict:
    return OPERATIONS["code_index"].call(chitta, {"path": str(root), "realm": "work"})


def _edges(chitta: Chitta, *, current: bool = True) -> set[tuple[str, str, str]]:
    return {(t.subject, t.predicate, t.object) for t in chitta.store.triplets("work")
            if (t.invalidated_at is None) == current}  # fmt: skip


def test_edges_become_triplets_once_and_go_when_the_call_does(
    chitta: Chitta, tmp_path: Path
) -> None:
    root = _write(tmp_path / "repo", SHOP)
    first = _index(chitta, root)
    edges = _edges(chitta)
    assert ("shop.cart.vat", "calls", "shop.prices.tax") in edges
    assert ("shop.cart.vat", "calls", "shop.cart.total") in edges
    assert ("shop.cart", "contains", "shop.cart.total") in edges
    assert first["triplets"] == {"added": len(edges), "kept": 0, "invalidated": 0}
    ids = {t.id for t in chitta.store.triplets("work")}

    # A second index of unchanged files resolves nothing again; after a touch it resolves
    # and keeps every triplet as it was: none added, none duplicated.
    assert "triplets" not in _index(chitta, root)
    (root / "shop/cart.py").write_text(SHOP["shop/cart.py"] + "\n")
    again = _index(chitta, root)
    assert again["triplets"] == {"added": 0, "kept": len(edges), "invalidated": 0}
    assert {t.id for t in chitta.store.triplets("work")} == ids

    # vat no longer calls tax: that triplet is invalidated, kept for history; a new call is added.
    (root / "shop/cart.py").write_text(SHOP["shop/cart.py"].replace(
        "return tax(total(items))", "return total(items) + price(1)"))  # fmt: skip
    edited = _index(chitta, root)
    assert edited["triplets"] == {"added": 1, "kept": len(edges) - 1, "invalidated": 1}
    assert ("shop.cart.vat", "calls", "shop.prices.tax") in _edges(chitta, current=False)
    assert ("shop.cart.vat", "calls", "shop.prices.tax") not in _edges(chitta)
    assert ("shop.cart.vat", "calls", "shop.prices.price") in _edges(chitta)

    # The call comes back: a new current triplet, the old one stays in history.
    (root / "shop/cart.py").write_text(SHOP["shop/cart.py"])
    _index(chitta, root)
    assert ("shop.cart.vat", "calls", "shop.prices.tax") in _edges(chitta)
    assert ("shop.cart.vat", "calls", "shop.prices.tax") in _edges(chitta, current=False)

    # A removed file takes its edges with it.
    (root / "shop/cart.py").unlink()
    _index(chitta, root)
    assert not {e for e in _edges(chitta) if e[0].startswith("shop.cart")}


def test_recall_analogy_walks_the_call_graph(chitta: Chitta, tmp_path: Path) -> None:
    _index(chitta, _write(tmp_path / "repo", SHOP))
    # total calls price as vat calls ...: what vat calls.
    found = chitta.recall_analogy("shop.cart.total", "shop.prices.price", "shop.cart.vat",
                                  realm="work")  # fmt: skip
    answers = {a.key for a in found.answers}
    assert answers == {"shop.prices.tax", "shop.cart.total"}


BILLING = {
    "billing.py": "from rates import levy\n\n\ndef vat(amount):\n    return levy(amount)\n",
    "rates.py": "def levy(amount):\n    return amount / 5\n",
}


def test_the_graph_lane_follows_a_call_to_memories_of_the_callee(
    chitta: Chitta, tmp_path: Path
) -> None:
    """The question names billing.vat; the memory about what it calls shares no word with it
    and is reached over the ``calls`` triplet alone (the lanes reading vectors left out, so
    that similarity does not find it first)."""
    _index(chitta, _write(tmp_path / "repo", BILLING))
    chitta.remember("billing.vat must round to whole cents", realm="work")
    callee = chitta.remember("We agreed rates.levy reads its percentage from settings",
                             realm="work").id  # fmt: skip
    for i in range(20):  # other memories, so that neither name is common in the realm
        chitta.remember(f"unrelated note number {i} about the garden", realm="work")
    result = chitta.recall("billing.vat", realm="work", strategy="field",
                           ablate=("sem", "hdc", "ep"), record=False)  # fmt: skip
    lanes = {h.memory.id: set(h.lanes) for h in result.hits}
    assert lanes.get(callee) == {"graph"}
