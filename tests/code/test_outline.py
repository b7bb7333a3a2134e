"""code_outline (code/outline.py, ops/code.py): PageRank over the resolved calls, the most
called function first, one line a file, within the character budget; on a real git
repository indexed by the real extractor and resolver."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from chitta.code.outline import pagerank
from chitta.ops import OPERATIONS
from chitta.ops.spec import Context

pytest.importorskip("tree_sitter_python")

APP = {
    "app/util.py": (
        "def log(message: str) -> None:\n    print(message)\n\n\ndef _hidden():\n    log('x')\n"
    ),
    "app/orders.py": (
        "from app.util import log\n\n\n"
        "def place(order_id: int) -> bool:\n    log('place')\n    return check(order_id)\n\n\n"
        "def check(order_id: int) -> bool:\n    log('check')\n    return True\n"
    ),
    "app/users.py": (
        "from app.util import log\nfrom app.orders import place\n\n\n"
        "class Account:\n"
        "    def close(self, reason: str) -> None:\n        log(reason)\n        place(1)\n\n"
        "    def open(self) -> None:\n        log('open')\n"
    ),
}


def op(chitta, name: str, **params):
    return OPERATIONS[name].call(chitta, params, Context(home=chitta.store.data_dir))


def test_pagerank_ranks_the_node_everything_points_at_first() -> None:
    ranks = pagerank(4, [(0, 3), (1, 3), (2, 3), (3, 0)])
    assert ranks.argmax() == 3 and np.isclose(ranks.sum(), 1.0)
    assert np.allclose(pagerank(3, []), 1 / 3)  # no edges: all equal
    assert pagerank(0, []).size == 0


def test_the_most_called_function_comes_first_within_the_budget(chitta, git_repo) -> None:
    repo: Path = git_repo(APP)
    op(chitta, "code_index", path=str(repo), realm="work", no_embed=True)
    out = op(chitta, "code_outline", realm="work")
    lines = out["outline"].splitlines()
    assert lines[0].startswith("app/util.py: log(message: str) -> None")
    assert out["chars"] == len(out["outline"]) <= 1500
    assert out["symbols"] == out["of"] == 7  # log, _hidden, place, check, Account + 2 methods
    assert "Account.close(reason: str) -> None" in out["outline"]  # self left out
    assert len(lines) == 3 and all(": " in line for line in lines)  # one line a file
    assert out["outline"].index("_hidden") > out["outline"].index("log(")  # private last


def test_a_small_budget_keeps_the_central_ones_and_holds(chitta, git_repo) -> None:
    op(chitta, "code_index", path=str(git_repo(APP)), realm="work", no_embed=True)
    full = op(chitta, "code_outline", realm="work")["outline"]
    for chars in (100, 150):
        out = op(chitta, "code_outline", realm="work", chars=chars)
        assert len(out["outline"]) <= chars and 0 < out["symbols"] < out["of"]
        assert out["outline"].startswith("app/util.py: log(")
    assert op(chitta, "code_outline", realm="work", chars=100_000)["outline"] == full


def test_an_empty_realm_has_an_empty_outline(chitta) -> None:
    out = op(chitta, "code_outline", realm="nothing")
    assert out["outline"] == "" and out["symbols"] == out["of"] == 0
