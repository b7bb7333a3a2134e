"""ULIDs: 26 Crockford base32 characters, unique, sorted by creation time."""

from __future__ import annotations

import time

from hypothesis import given
from hypothesis import strategies as st

from chitta.store.ids import is_id, new_id

CROCKFORD = set("0123456789ABCDEFGHJKMNPQRSTVWXYZ")
MAX_MS = 2**48 - 1


def test_ids_are_26_crockford_characters() -> None:
    for _ in range(100):
        i = new_id()
        assert len(i) == 26
        assert set(i) <= CROCKFORD
        assert is_id(i)
        assert is_id(i.lower())


def test_ten_thousand_ids_are_unique() -> None:
    ids = [new_id() for _ in range(10_000)]
    assert len(set(ids)) == 10_000
    same_ms = [new_id(1_700_000_000_000) for _ in range(10_000)]
    assert len(set(same_ms)) == 10_000


def test_time_prefix_encodes_the_millisecond() -> None:
    before = int(time.time() * 1000)
    i = new_id()
    after = int(time.time() * 1000)
    ms = 0
    for c in i[:10]:
        ms = ms * 32 + "0123456789ABCDEFGHJKMNPQRSTVWXYZ".index(c)
    assert before <= ms <= after
    assert new_id(0)[:10] == "0" * 10
    assert new_id(MAX_MS)[:10] == "7ZZZZZZZZZ"


@given(st.lists(st.integers(0, MAX_MS), min_size=2, max_size=50, unique=True))
def test_ids_sort_by_time(times: list[int]) -> None:
    by_id = sorted((new_id(ms), ms) for ms in times)
    assert [ms for _, ms in by_id] == sorted(times)


def test_ids_made_later_sort_later() -> None:
    first = new_id()
    time.sleep(0.002)
    assert new_id() > first


def test_is_id_rejects_other_text() -> None:
    assert not is_id("")
    assert not is_id(new_id()[:-1])
    assert not is_id(new_id() + "0")
    assert not is_id("0" * 25 + "U")  # U is not in Crockford's alphabet
    assert not is_id("0" * 25 + "I")


def test_ids_made_in_one_millisecond_sort_in_the_order_made() -> None:
    ids = [new_id(1_700_000_000_123) for _ in range(1000)]
    assert ids == sorted(ids)
