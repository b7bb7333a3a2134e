"""The keyword rows' sidecar (store/sqlite/keywords_sidecar.py): a big store's keyword rows
are read back rather than read from the store when the change log says the file is the
store's, memories stored since are added, and the result is the rows a read of the store
gives; any other change, a damaged file or another store's is never used; owner-only."""

from __future__ import annotations

import stat
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from chitta.store.records import Memory, Scope
from chitta.store.sqlite import Store, keywords_sidecar
from chitta.store.sqlite.keywords import Rows, RowTable

MakeMemory = Callable[..., Memory]  # the make_memory fixture (tests/conftest.py)
WORDS = ["otter", "river", "stone", "kayak", "heron", "willow", "bridge", "mill"]


@pytest.fixture(autouse=True)
def small_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(keywords_sidecar, "MIN_MEMORIES", 20)


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "store.db"


def fill(store: Store, make_memory: MakeMemory, n: int, seed: int) -> list[Memory]:
    memories = [make_memory(" ".join(WORDS[(seed + i * j) % 8] for j in range(1 + i % 5)),
                            realm="home" if i % 3 else "work", tags=["tagged"] if i % 4 else [])
                for i in range(n)]  # fmt: skip
    store.insert([(m, None) for m in memories])
    return memories


def searched(store: Store) -> list:
    """Every word's ranking in both realms, ids and scores."""
    return [store.keyword_search([w], Scope(realm), 100)
            for w in WORDS for realm in ("work", "home")]  # fmt: skip


def read_from_store(path: Path) -> tuple[Rows, list]:
    """The rows (and rankings) a store gives that never saw a sidecar."""
    copy = path.with_name("fresh.db")
    with Store(path) as store:
        store.backup_to(copy)
    with Store(copy) as store:
        store._keyword_rows_saved = None
        rows = store._rows()
        return rows, searched(store)


def assert_same_rows(got: Rows, expected: Rows) -> None:
    n = max(len(got.realm), len(expected.realm))
    for name in ("realm", "length"):
        a, b = getattr(got, name), getattr(expected, name)
        fill_value = -1 if name == "realm" else 0
        np.testing.assert_array_equal(
            np.pad(a, (0, n - len(a)), constant_values=fill_value),
            np.pad(b, (0, n - len(b)), constant_values=fill_value),
        )
    named = {v: k for k, v in got.codes.items()}
    want = {v: k for k, v in expected.codes.items()}
    for field in ("size", "tokens", "tag_tokens"):
        assert {named[c]: x for c, x in getattr(got, field).items() if x} == {
            want[c]: x for c, x in getattr(expected, field).items() if x
        }


def no_build(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(RowTable, "_build", lambda *a: pytest.fail("read from the store"))


def test_saved_at_close_and_read_back(path: Path, make_memory: MakeMemory,
                                      monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    with Store(path) as store:
        fill(store, make_memory, 60, seed=1)
        searched(store)
    sidecar = keywords_sidecar.sidecar_path(path)
    assert stat.S_IMODE(sidecar.stat().st_mode) == 0o600
    rows, rankings = read_from_store(path)
    no_build(monkeypatch)
    with Store(path) as store:
        assert searched(store) == rankings
        assert_same_rows(store._rows(), rows)


def test_memories_stored_since_are_added(path: Path, make_memory: MakeMemory,
                                         monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    with Store(path) as store:
        fill(store, make_memory, 60, seed=1)
        searched(store)
    saved = keywords_sidecar.sidecar_path(path).read_bytes()
    with Store(path) as store:  # never searched: nothing saved at close
        fill(store, make_memory, 7, seed=2)
    assert keywords_sidecar.sidecar_path(path).read_bytes() == saved
    rows, rankings = read_from_store(path)
    no_build(monkeypatch)
    with Store(path) as store:
        assert searched(store) == rankings
        assert_same_rows(store._rows(), rows)
    # Saved again at close with them.
    assert keywords_sidecar.sidecar_path(path).read_bytes() != saved


@pytest.mark.parametrize("change", ["forget", "edit", "purge"])
def test_any_other_change_reads_the_store(path: Path, make_memory: MakeMemory,
                                          change: str) -> None:  # fmt: skip
    with Store(path) as store:
        memories = fill(store, make_memory, 60, seed=1)
        searched(store)
    with Store(path) as store:
        if change == "forget":
            store.set_deleted(memories[4].id, 1)
        elif change == "edit":
            store._conn.execute("UPDATE memories SET content = 'heron heron' WHERE id = ?",
                                (memories[5].id,))  # fmt: skip
            store._conn.commit()
        else:
            store.purge(memories[6].id)
    path_rows, rankings = read_from_store(path)
    with Store(path) as store:
        assert keywords_sidecar.load(keywords_sidecar.sidecar_path(path), store._conn) is None
        assert searched(store) == rankings
        assert_same_rows(store._rows(), path_rows)


@pytest.mark.parametrize(
    "damage",
    [
        lambda b: b[: len(b) - 3],  # truncated
        lambda b: b"not a sidecar",
        lambda b: b[:-1] + bytes([b[-1] ^ 1]),  # one bit of the arrays
        lambda b: b[:30] + b"\xff" * 10 + b[40:],  # header garbled
        lambda b: b"",
    ],
)
def test_a_damaged_file_is_never_used(path: Path, make_memory: MakeMemory, damage) -> None:
    with Store(path) as store:
        fill(store, make_memory, 60, seed=1)
        searched(store)
    sidecar = keywords_sidecar.sidecar_path(path)
    sidecar.write_bytes(damage(sidecar.read_bytes()))
    rows, rankings = read_from_store(path)
    with Store(path) as store:
        assert keywords_sidecar.load(sidecar, store._conn) is None
        assert searched(store) == rankings
        assert_same_rows(store._rows(), rows)


def test_a_small_store_gets_no_file(path: Path, make_memory: MakeMemory) -> None:
    with Store(path) as store:
        fill(store, make_memory, 10, seed=1)
        searched(store)
    assert not keywords_sidecar.sidecar_path(path).exists()
