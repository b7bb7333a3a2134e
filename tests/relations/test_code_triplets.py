"""A repository's resolved edges as the realm's triplets, on both backends, through the
operations: indexed twice gives the same triplets, an edit that removes a call invalidates its
triplet (kept for history), and ``recall_analogy`` and the graph lane walk ``calls`` between
indexed functions."""

from __future__ import annotations

from pathlib import Path

import pytest

from chitta.api import Chitta
from chitta.code.reindex import CACHE
from chitta.code.resolve import resolve
from chitta.code.resolve.triplets import edges_as_triplets
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
                           ablate=("sem", "hdc", "ep", "theme"), record=False)  # fmt: skip
    lanes = {h.memory.id: set(h.lanes) for h in result.hits}
    assert lanes.get(callee) == {"graph"}


def _reindex(chitta: Chitta, *paths: Path) -> dict:
    reply = OPERATIONS["code_reindex"].call(chitta, {"paths": [str(p) for p in paths],
                                                     "realm": "work"})  # fmt: skip
    (repo,) = reply["repos"]
    return repo


def _whole(chitta: Chitta, root: Path) -> set[tuple[str, str, str]]:
    """The triplets a whole resolution of the stored files makes (what code_index keeps)."""
    extracts = chitta.store.code().extracts("work", root.resolve().as_posix())
    return {(t.subject, t.predicate, t.object)
            for t in edges_as_triplets(resolve(extracts), "work", now=1)}  # fmt: skip


@pytest.mark.parametrize("cold", [False, True], ids=["held", "after_a_start"])
def test_a_one_file_re_index_keeps_the_triplets_in_step(
    chitta: Chitta, tmp_path: Path, cold: bool
) -> None:
    root = _write(tmp_path / "repo", SHOP)
    _index(chitta, root)
    cart = root / "shop/cart.py"
    if cold:  # the daemon started again: nothing held, the extracts read from the store
        CACHE.clear()
    # vat no longer calls tax, and calls price: one triplet invalidated, one added.
    cart.write_text(SHOP["shop/cart.py"].replace("return tax(total(items))",
                                                 "return total(items) + price(1)"))  # fmt: skip
    edited = _reindex(chitta, cart)
    assert edited["triplets"]["added"] == 1 and edited["triplets"]["invalidated"] == 1
    assert ("shop.cart.vat", "calls", "shop.prices.tax") in _edges(chitta, current=False)
    assert _edges(chitta) == _whole(chitta, root)
    # A new function elsewhere: its edges added, the rest kept; nothing twice.
    prices = root / "shop/prices.py"
    prices.write_text(SHOP["shop/prices.py"] + "\n\ndef rebate(n):\n    return price(n)\n")
    again = _reindex(chitta, prices)
    assert again["triplets"] == {"added": 2, "kept": again["triplets"]["kept"], "invalidated": 0}
    assert _edges(chitta) == _whole(chitta, root)
    ids = [t.id for t in chitta.store.triplets("work") if t.invalidated_at is None]
    assert len(ids) == len(set(_edges(chitta)))
    # A file removed: its edges go, and the calls to it are open now.
    cart.unlink()
    gone = _reindex(chitta, cart)
    assert gone["removed"] == 1 and gone["triplets"]["invalidated"] >= 3
    assert not {e for e in _edges(chitta) if e[0].startswith("shop.cart")}
    assert _edges(chitta) == _whole(chitta, root)
