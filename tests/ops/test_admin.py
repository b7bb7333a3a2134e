"""The whole-store operations' files: exports and backups owner-only whatever the umask and
whole or not at all (a full disk is a clear ``write_failed``); imports never rewrite a byte."""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import pytest

from chitta.api import Chitta
from chitta.errors import ChittaError
from chitta.ops import OPERATIONS
from chitta.ops.spec import Context

SECRET = "The staging database password is hunter2, rotate it monthly"


def _call(chitta: Chitta, op: str, **params: object) -> dict:
    return OPERATIONS[op].call(chitta, params, Context(home=chitta.store.data_dir))


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def _leftovers(folder: Path, keep: set[str]) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name not in keep)


# --- exports ---------------------------------------------------------------------------------


def test_an_export_is_owner_only_under_umask_000(chitta: Chitta, tmp_path: Path, umask0) -> None:
    chitta.remember(SECRET)
    tmp_path.chmod(0o755)
    out = tmp_path / "made" / "by" / "chitta" / "dump.jsonl"
    _call(chitta, "export_memories", path=str(out))
    assert SECRET in out.read_text(encoding="utf-8")
    assert _mode(out) == 0o600
    for folder in (out.parent, out.parent.parent, out.parent.parent.parent):
        assert _mode(folder) == 0o700, folder  # made by chitta: owner-only too
    assert _mode(tmp_path) == 0o755  # a folder that was there is left as it was


def test_an_export_over_a_world_readable_file_is_owner_only(
    chitta: Chitta, tmp_path: Path, umask0
) -> None:
    chitta.remember(SECRET)
    out = tmp_path / "dump.jsonl"
    out.write_text("old\n")
    out.chmod(0o666)
    _call(chitta, "export_memories", path=str(out))
    assert _mode(out) == 0o600 and SECRET in out.read_text(encoding="utf-8")


def test_an_export_on_a_full_disk_is_write_failed_and_leaves_no_part(
    chitta: Chitta, tmpfs, filler
) -> None:
    disk = tmpfs("64k")
    chitta.remember(SECRET)
    old = disk / "dump.jsonl"
    old.write_text("the previous export\n")
    filler(disk)
    for target in (old, disk / "new.jsonl"):
        with pytest.raises(ChittaError) as caught:
            _call(chitta, "export_memories", path=str(target))
        assert caught.value.code == "write_failed" and caught.value.exit_code == 4
        assert str(target) in str(caught.value) and "No space left" in str(caught.value)
    assert old.read_text() == "the previous export\n"  # kept whole, not half replaced
    assert _leftovers(disk, {"dump.jsonl", "filler"}) == []  # no temporary file


def test_an_export_to_a_full_device_is_write_failed_and_the_device_stays(
    chitta: Chitta, full_device: Path
) -> None:
    chitta.remember(SECRET)
    with pytest.raises(ChittaError) as caught:
        _call(chitta, "export_memories", path=str(full_device))
    assert caught.value.code == "write_failed" and str(full_device) in str(caught.value)
    assert full_device.is_char_device()  # written to, never replaced by a regular file


def test_an_export_to_a_pipe_goes_through_the_pipe(chitta: Chitta, tmp_path: Path) -> None:
    chitta.remember(SECRET)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    try:
        _call(chitta, "export_memories", path=str(fifo))
    finally:
        if reader.is_alive():  # unblock the reader whatever happened
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(10)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert SECRET in got[0].decode("utf-8")


def test_an_export_through_a_symlink_writes_the_file_it_names(
    chitta: Chitta, tmp_path: Path
) -> None:
    chitta.remember(SECRET)
    real = tmp_path / "real.jsonl"
    real.write_text("old\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    _call(chitta, "export_memories", path=str(link))
    assert link.is_symlink() and SECRET in real.read_text(encoding="utf-8")
    assert _mode(real) == 0o600


# --- backups ---------------------------------------------------------------------------------


def test_a_backup_is_owner_only_under_umask_000(chitta: Chitta, tmp_path: Path, umask0) -> None:
    chitta.remember(SECRET)
    new = tmp_path / "backups" / "monday.db"
    _call(chitta, "backup", path=str(new))
    assert _mode(new) == 0o600 and _mode(new.parent) == 0o700
    old = tmp_path / "old.db"
    old.write_bytes(b"")
    old.chmod(0o666)
    _call(chitta, "backup", path=str(old))
    assert _mode(old) == 0o600 and old.stat().st_size > 0
    assert _leftovers(tmp_path, {"old.db", "backups", "home"}) == []


def test_a_backup_on_a_full_disk_is_write_failed_and_keeps_the_old_backup(
    chitta: Chitta, tmpfs, filler
) -> None:
    disk = tmpfs("64k")
    chitta.remember(SECRET)
    old = disk / "snap.db"
    old.write_bytes(b"the previous backup")
    filler(disk)
    with pytest.raises(ChittaError) as caught:
        _call(chitta, "backup", path=str(old))
    assert caught.value.code == "write_failed" and str(old) in str(caught.value)
    assert old.read_bytes() == b"the previous backup"
    assert _leftovers(disk, {"snap.db", "filler"}) == []


# --- imports ---------------------------------------------------------------------------------


def _good(text: str) -> bytes:
    return json.dumps({"kind": "wisdom", "content": text}, ensure_ascii=False).encode() + b"\n"


def test_a_line_that_is_not_utf8_is_a_bad_line_never_rewritten(
    chitta: Chitta, tmp_path: Path
) -> None:
    latin1 = json.dumps({"kind": "wisdom", "content": "Le café de la gare ouvre à sept heures"},
                        ensure_ascii=False).encode("latin-1") + b"\n"  # fmt: skip
    broken = _good("A memory cut inside a character: caf").replace(b"caf", b"caf\xc3")
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(_good("Backups run every night at two") + latin1 + broken
                     + _good("Ünïcödé that is valid UTF-8 still lands"))  # fmt: skip
    report = _call(chitta, "import_memories", path=str(path))
    assert report["imported"]["memories"] == 2
    assert [e["line"] for e in report["errors"]] == [2, 3]
    assert all("not valid UTF-8" in e["error"] for e in report["errors"]), report["errors"]
    contents = [m.content for m in chitta.store.iter_memories()]
    assert not any("\ufffd" in c for c in contents)
    assert "Ünïcödé that is valid UTF-8 still lands" in contents


def test_a_bom_and_crlf_line_ends_still_import(chitta: Chitta, tmp_path: Path) -> None:
    path = tmp_path / "windows.jsonl"
    lines = [_good("Written on Windows, the first line"), _good("and the second line")]
    path.write_bytes(b"\xef\xbb\xbf" + b"".join(line.replace(b"\n", b"\r\n") for line in lines))
    report = _call(chitta, "import_memories", path=str(path))
    assert report["bad_lines"] == 0 and report["imported"]["memories"] == 2, report
    contents = {m.content for m in chitta.store.iter_memories()}
    assert contents == {"Written on Windows, the first line", "and the second line"}
