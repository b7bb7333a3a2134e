"""`chitta code …` in process (click's runner) on a real store in a temporary home, with no
daemon and through a real daemon, with the same assertions: find, callers and callees over
stored code tables, and the refusals of a bad PATH."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from chitta.cli import main
from chitta.code.model import Callsite, FileExtract, Symbol
from chitta.config import Settings
from chitta.store.backends import open_store
from chitta.store.code import RESOLVED, Resolution

Run = Callable[..., Result]
REPO = "/src/shop"
F = "shop/cart.py"


def _sym(name: str, qualified: str, kind: str, start: int, end: int) -> Symbol:
    return Symbol(name, qualified, kind, f"def {name}(self)", F, start, end,
                  qualified.rpartition(".")[0], "python")  # fmt: skip


TOTAL = _sym("total", "shop.cart.Cart.total", "method", 2, 4)
TAX = _sym("tax", "shop.cart.Cart.tax", "method", 5, 6)
CHECKOUT = _sym("checkout", "shop.cart.checkout", "function", 8, 9)
CALLS = (Callsite("shop.cart.Cart.total", "tax", "member", "self", None, F, 3),
         Callsite("shop.cart.checkout", "total", "member", "cart", None, F, 9),
         Callsite("shop.cart.checkout", "print", "call", None, None, F, 9))  # fmt: skip


def fill(home: Path, *, resolve: bool) -> None:
    """The store of ``home`` holding cart.py's symbols and calls (resolved or not)."""
    extract = FileExtract(F, "python", "h", 10, (TOTAL, TAX, CHECKOUT), CALLS)
    with open_store(Settings(home=home).store_location) as store:
        store.code().replace_file("default", REPO, extract, "c0ffee", 1)
        if resolve:
            store.code().set_resolutions("default", REPO, [
                Resolution(CALLS[0], RESOLVED, (TAX,)),
                Resolution(CALLS[1], RESOLVED, (TOTAL,)),
                Resolution(CALLS[2], "unresolved"),
            ])  # fmt: skip


def runner(home: Path) -> Run:
    env = {k: None for k in os.environ if k.startswith(("CHITTA_", "CC_SOUL_"))}
    env["CHITTA_HOME"] = str(home)
    cli = CliRunner(env=env)

    def call(*args: str, code: int = 0) -> Result:
        result = cli.invoke(main, list(args), catch_exceptions=False)
        assert result.exit_code == code, (args, result.output)
        return result

    return call


@pytest.fixture(params=["in-process", "daemon"])
def served(request, tmp_path: Path, launch) -> Callable[..., Run]:
    """``served(resolve=...)``: a run function over a filled store, with no daemon or through
    a real one (started after the store is filled: it holds the store)."""

    def start(*, resolve: bool = True) -> Run:
        home = tmp_path / "home"
        fill(home, resolve=resolve)
        if request.param == "daemon":
            launch(home)
        return runner(home)

    return start


def _json(run: Run, *args: str) -> dict:
    data = json.loads(run(*args, "--json").stdout)
    assert data.pop("ok") is True
    return data


def test_find_by_name_prefix_kind_and_qualified_name(served) -> None:
    run = served()
    found = _json(run, "code", "find", "Cart.total")["symbols"]
    fields = ("qualified", "kind", "path", "start_line", "repo", "commit")
    assert [tuple(s[f] for f in fields) for s in found] == [
        ("shop.cart.Cart.total", "method", F, 2, REPO, "c0ffee")
    ]
    assert [s["name"] for s in _json(run, "code", "find", "T", "--prefix")["symbols"]] == [
        "tax", "total"]  # fmt: skip
    assert _json(run, "code", "find", "t", "--prefix", "--kind", "function")["symbols"] == []
    out = run("code", "find", "checkout").stdout
    assert out.splitlines()[0].startswith(f"shop.cart.checkout  (function, {F}:8)  sym_")
    assert run("code", "find", "nothing").stderr.strip() == "no symbol matches in realm default"


def test_callers_and_callees_over_resolved_calls(served) -> None:
    run = served()
    callers = _json(run, "code", "callers", "tax", "--depth", "2")
    (root,) = callers["symbols"]
    assert root["symbol"]["qualified"] == "shop.cart.Cart.tax" and not root["cut"]
    assert [(e["depth"], e["symbol"]["qualified"], e["call"]["line"]) for e in root["callers"]] \
        == [(1, "shop.cart.Cart.total", 3), (2, "shop.cart.checkout", 9)]  # fmt: skip
    assert callers["pending_calls"] == 0
    out = run("code", "callees", "shop::cart::checkout").stdout.splitlines()
    assert out[1:] == [f"  shop.cart.Cart.total (method)  at {F}:9"]
    by_id = _json(run, "code", "callees", root["symbol"]["id"])["symbols"][0]
    assert by_id["symbol"]["qualified"] == "shop.cart.Cart.tax" and by_id["callees"] == []


def test_unresolved_calls_are_said_to_be_so(served) -> None:
    run = served(resolve=False)
    result = run("code", "callers", "tax")
    assert "no resolved callers" in result.stdout
    assert "3 calls of realm default are not resolved yet" in result.stderr
    assert _json(run, "code", "callees", "checkout")["pending_calls"] == 3


def test_bad_input_is_refused_by_name(served, tmp_path: Path) -> None:
    run = served()
    missing = run("code", "callers", "nothing", code=3)
    assert "no symbol 'nothing' is indexed in realm 'default'" in missing.stderr
    run("code", "callers", "tax", "--depth", "6", code=2)
    assert "no such folder" in run("code", "index", str(tmp_path / "nowhere"), code=3).stderr
    (tmp_path / "a.py").write_text("x = 1\n")
    assert "is not a folder" in run("code", "index", str(tmp_path / "a.py"), code=2).stderr


NO_EXTRACTOR = importlib.util.find_spec("chitta.code.extract") is None


@pytest.mark.skipif(NO_EXTRACTOR, reason="the extractor (chitta.code.extract) is not here yet")
def test_index_a_git_repository_then_again(served, tmp_path: Path) -> None:
    run = served()
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "m.py").write_text("def f():\n    g()\n\n\ndef g():\n    pass\n")
    (root / "pkg" / "m.min.js").write_text("function x(){}\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    first = _json(run, "code", "index", str(root))
    assert first["git"] and first["indexed"] == 1 and first["skipped"] == {"generated": 1}
    assert [s["qualified"] for s in _json(run, "code", "find", "g")["symbols"]][-1].endswith("g")
    again = _json(run, "code", "index", str(root))
    assert (again["indexed"], again["unchanged"]) == (0, 1)
