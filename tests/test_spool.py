"""The spool (chitta/spool.py) on real files and a real store's meta table."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from chitta import spool
from chitta.errors import BadArgument
from chitta.store.sqlite import Store


def params(n: int) -> dict:
    return {"content": f"spooled record number {n}", "kind": "episode", "realm": "demo",
            "session": "s1", "event_time": "2026-01-02T03:04:05.000+00:00"}  # fmt: skip


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return spool.spool_path(tmp_path / "home" / "default.db")


def test_records_are_owner_only_lines_in_an_owner_only_folder(path: Path) -> None:
    first = spool.append(path, "remember", params(1))
    second = spool.append(path, "remember", params(2))
    assert path == path.parent.parent / "spool" / "default.jsonl"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["id"] for r in lines] == [first, second] and first != second
    assert lines[0]["op"] == "remember" and lines[0]["params"] == params(1)
    assert spool.waiting(path) == 2


def test_a_loose_folder_is_made_owner_only(path: Path) -> None:
    path.parent.mkdir(parents=True)
    os.chmod(path.parent, 0o755)
    spool.append(path, "remember", params(1))
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_the_spool_is_owner_only_whatever_the_umask_or_its_old_bits(tmp_path: Path, umask0) -> None:
    path = spool.spool_path(tmp_path / "new" / "home" / "default.db")
    spool.append(path, "remember", params(1))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    for folder in (path.parent, path.parent.parent, path.parent.parent.parent):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    path.chmod(0o666)
    spool.append(path, "remember", params(2))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and spool.waiting(path) == 2


def test_only_spoolable_operations_are_kept(path: Path) -> None:
    with pytest.raises(ValueError, match="forget cannot be spooled"):
        spool.append(path, "forget", {"id": "x"})


def test_intake_applies_each_record_once_in_order(path: Path, store: Store) -> None:
    for n in range(3):
        spool.append(path, "remember", params(n))
    applied: list[str] = []
    done = spool.take_in(path, lambda op, p: applied.append(p["content"]), store)
    assert applied == [params(n)["content"] for n in range(3)]
    assert (done.taken, done.corrupt, done.refused, done.files) == (3, 0, 0, 1)
    assert not path.exists() and not spool.claimed(path)
    assert spool.take_in(path, lambda op, p: applied.append(p), store) is None  # nothing left
    assert spool.last_intake(store)["taken"] == 3
    assert spool.status(path, store)["waiting"] == 0


def test_a_corrupt_line_is_skipped_and_counted(path: Path, store: Store) -> None:
    spool.append(path, "remember", params(1))
    with path.open("ab") as fh:
        fh.write(b'{"id": "torn", "op": "remem\n')  # a torn line
        fh.write(b'{"id": "x", "op": "forget", "params": {}}\n')  # not spoolable
        fh.write(b"\n")
    spool.append(path, "remember", params(2))
    applied: list[str] = []
    done = spool.take_in(path, lambda op, p: applied.append(p["content"]), store)
    assert applied == [params(1)["content"], params(2)["content"]]
    assert (done.taken, done.corrupt) == (2, 2)


def test_a_refused_record_is_counted_and_the_rest_is_taken(path: Path, store: Store) -> None:
    for n in range(3):
        spool.append(path, "remember", params(n))

    def apply(op: str, p: dict) -> None:
        if p["content"].endswith("1"):
            raise BadArgument("refused")

    done = spool.take_in(path, apply, store, refused=(BadArgument,))
    assert (done.taken, done.refused, done.complete) == (2, 1, True)


def test_a_failure_stops_the_intake_and_the_next_one_goes_on_from_there(
    path: Path, store: Store
) -> None:
    for n in range(4):
        spool.append(path, "remember", params(n))
    applied: list[str] = []
    failed: list[bool] = []

    def flaky(op: str, p: dict) -> None:
        if p["content"].endswith("2") and not failed:
            failed.append(True)
            raise OSError("disk full")
        applied.append(p["content"])

    first = spool.take_in(path, flaky, store)
    assert (first.taken, first.complete) == (2, False)
    assert spool.waiting(path, store) == 2  # the claimed file keeps the rest
    spool.append(path, "remember", params(9))  # a new spool meanwhile: taken after the rest
    second = spool.take_in(path, flaky, store)
    assert second.complete and second.files == 2
    assert applied == [params(n)["content"] for n in (0, 1, 2, 3, 9)]


def test_intakes_of_two_homes_into_one_store_keep_their_own_places(
    tmp_path: Path, store: Store
) -> None:
    # Two daemons (two homes, one database) take their spools in side by side: one's place
    # in its file must not be the other's.
    mine = spool.spool_path(tmp_path / "a" / "default.db")
    theirs = spool.spool_path(tmp_path / "b" / "default.db")
    for n in range(4):
        spool.append(mine, "remember", params(n))
        spool.append(theirs, "remember", params(10 + n))
    applied: list[str] = []

    def interrupted(op: str, p: dict) -> None:
        if p["content"].endswith("2"):
            raise OSError("killed")  # as a daemon killed mid-intake
        applied.append(p["content"])

    assert spool.take_in(mine, interrupted, store).taken == 2
    assert spool.take_in(theirs, lambda op, p: applied.append(p["content"]), store).complete
    assert spool.waiting(mine, store) == 2
    assert spool.take_in(mine, lambda op, p: applied.append(p["content"]), store).complete
    assert sorted(applied) == sorted(params(n)["content"] for n in [*range(4), *range(10, 14)])
    assert not [k for k in store.meta_items() if k.startswith(f"{spool.PROGRESS_KEY}:")]


def test_a_writer_that_opened_the_claimed_file_appends_to_a_new_spool(path: Path) -> None:
    spool.append(path, "remember", params(1))
    claimed = spool.claim(path)
    assert claimed is not None and not path.exists()
    spool.append(path, "remember", params(2))
    assert len(claimed.read_text().splitlines()) == 1
    assert len(path.read_text().splitlines()) == 1
    assert spool.waiting(path) == 2
