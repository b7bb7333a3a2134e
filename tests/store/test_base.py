"""The Store protocol (store/base.py) and the stores that implement it."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from chitta.store import base
from chitta.store.backends import open_store
from chitta.store.sqlite import SQLiteStore


def protocol_members() -> list[str]:
    """Every method and attribute the protocol names (its own, not Protocol's machinery)."""
    methods = [
        name
        for name, value in vars(base.Store).items()
        if callable(value) and (not name.startswith("_") or name in ("__enter__", "__exit__"))
    ]
    return sorted({*methods, *base.Store.__annotations__})


def test_the_sqlite_store_is_a_store(tmp_path: Path) -> None:
    with open_store(tmp_path / "store.db") as store:
        assert isinstance(store, SQLiteStore) and isinstance(store, base.Store)
        assert store.location == str(tmp_path / "store.db")
        assert store.data_dir == tmp_path


@pytest.mark.parametrize("name", protocol_members())
def test_every_protocol_member_is_there_with_a_compatible_signature(
    name: str, store: base.Store
) -> None:
    """Each backend's store has every member of the protocol; its methods take every
    parameter the protocol's take, by the same name, kind and default, and ask for none more."""
    assert hasattr(store, name), name
    wanted = getattr(base.Store, name, None)
    if not callable(wanted):  # an attribute: set on the instance, or a property
        return
    given = inspect.signature(getattr(type(store), name)).parameters
    for param in inspect.signature(wanted).parameters.values():
        assert param.name in given, f"{name} lacks {param.name}"
        assert given[param.name].kind == param.kind, f"{name}: {param.name} is another kind"
        if param.default is not inspect.Parameter.empty:
            assert given[param.name].default == param.default, f"{name}: {param.name} default"
    variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    extra = [
        p
        for p in given.values()
        if p.name not in inspect.signature(wanted).parameters
        and p.default is inspect.Parameter.empty
        and p.kind not in variadic
    ]
    assert not extra, f"{name} asks for {extra}"


def test_the_protocol_names_only_chittas_types() -> None:
    """No backend's types in the contract: the annotations name chitta's records, numpy and
    the standard library."""
    text = inspect.getsource(base)
    assert "sqlite3" not in text.split('"""', 2)[2]
    assert "psycopg" not in text.split('"""', 2)[2]


def test_update_many_keeps_the_counts_right_for_a_memory_given_twice(store, make_memory) -> None:
    from dataclasses import replace as changed

    from chitta.store.records import Scope

    m = make_memory("the heron stood in the reeds", realm="w")
    store.insert([(m, None)])
    stats = store.term_stats()  # the word counts are kept from here on
    first = changed(m, content="the egret stood in the reeds")
    second = changed(m, content="the crane stood in the reeds")
    assert store.update_many([first, second]) == 2
    stats = store.term_stats()
    assert [stats.df("w", w) for w in ("heron", "egret", "crane")] == [0, 0, 1]
    assert stats.size("w") == 1
    assert [i for i, _ in store.keyword_search(["crane"], Scope("w"), 5)] == [m.id]
