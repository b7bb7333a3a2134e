"""Symbol vectors and the reads of search and the outline (store/code_vectors.py) on both
backends: vectors stored by model, found missing, gone with their file; every symbol of a
realm; the resolved call pairs; the version that tells a cached search index is stale."""

from __future__ import annotations

import numpy as np

from chitta.code.model import Callsite, FileExtract, Symbol
from chitta.store.code import RESOLVED, Resolution

REPO = "/src/app"


def sym(name: str, start: int, path: str = "app/a.py") -> Symbol:
    return Symbol(name=name, qualified=f"app.a.{name}", kind="function",
                  signature=f"def {name}()", path=path, start_line=start, end_line=start + 1,
                  parent="app.a", language="python", doc=f"{name} doc")  # fmt: skip


CALL = Callsite("app.a.two", "one", "call", None, None, "app/a.py", 5)
A = FileExtract(path="app/a.py", language="python", content_hash="h1", lines=9,
                symbols=(sym("one", 1), sym("two", 4)), callsites=(CALL,))  # fmt: skip
B = FileExtract(path="app/b.py", language="python", content_hash="h2", lines=3,
                symbols=(sym("three", 1, "app/b.py"),))  # fmt: skip


def unit(*values: float) -> np.ndarray:
    v = np.array(values, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_vectors_are_kept_by_model_and_go_with_their_file(store) -> None:
    code = store.code()
    code.replace_files("work", REPO, [A, B], "c1", 1000)
    symbols = code.realm_symbols("work")
    assert [s.symbol.name for s in symbols] == ["one", "two", "three"]
    assert code.unembedded("work", REPO, "m1") == [s.id for s in symbols]
    assert code.set_vectors("m1", [(symbols[0], unit(1, 0, 0)), (symbols[2], unit(0, 1, 0))]) == 2
    ids, matrix = code.vectors("work", "m1")
    assert sorted(ids) == sorted([symbols[0].id, symbols[2].id]) and matrix.shape == (2, 3)
    np.testing.assert_array_equal(matrix[ids.index(symbols[2].id)], unit(0, 1, 0))
    assert code.unembedded("work", REPO, "m1") == [symbols[1].id]
    assert code.vectors("work", "m2")[0] == [] and code.vectors("other", "m1")[0] == []
    before = code.search_version("work")
    code.set_vectors("m1", [(symbols[0], unit(0, 0, 1))])  # replaced, not added
    assert len(code.vectors("work", "m1")[0]) == 2
    code.replace_files("work", REPO, [B], "c2", 2000)  # b.py again: its vector goes
    assert code.search_version("work") != before
    assert code.vectors("work", "m1")[0] == [symbols[0].id]
    code.remove_files("work", REPO, ["app/a.py"])
    assert code.vectors("work", "m1")[0] == []


def test_call_pairs_are_the_resolved_calls_made_by_symbols(store) -> None:
    code = store.code()
    code.replace_files("work", REPO, [A, B], "c1", 1000)
    assert code.call_pairs("work") == []  # pending
    one = A.symbols[0]
    code.set_resolutions("work", REPO, [Resolution(A.callsites[0], RESOLVED, (one,))])
    by_name = {s.symbol.name: s.id for s in code.realm_symbols("work")}
    assert code.call_pairs("work") == [(by_name["two"], by_name["one"])]
    assert code.call_pairs("other") == []
