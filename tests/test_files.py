"""Files chitta writes with user data: owner-only whatever the umask and whatever was there,
whole or not at all, and a device or a pipe written in place, never replaced."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from chitta import files
from chitta.errors import WriteFailed


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_the_folders_it_makes_are_0700_and_the_ones_there_are_left(tmp_path: Path, umask0) -> None:
    tmp_path.chmod(0o755)
    deep = tmp_path / "a" / "b" / "c"
    assert files.private_dir(deep) == deep
    assert [_mode(p) for p in (deep, deep.parent, deep.parent.parent)] == [0o700] * 3
    assert _mode(tmp_path) == 0o755
    files.private_dir(deep)  # again: nothing to do
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    files.private_dir(shared / "mine")
    assert _mode(shared) == 0o777 and _mode(shared / "mine") == 0o700


def test_a_written_file_is_0600_new_or_over_a_wider_one(tmp_path: Path, umask0) -> None:
    new = tmp_path / "new.txt"
    files.write_text_private(new, "secret")
    assert new.read_text() == "secret" and _mode(new) == 0o600
    old = tmp_path / "old.txt"
    old.write_text("before")
    old.chmod(0o666)
    files.write_text_private(old, "after")
    assert old.read_text() == "after" and _mode(old) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.txt", "old.txt"]


def test_a_write_that_fails_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    old = tmp_path / "export.jsonl"
    old.write_text("the whole old export\n")

    def half(fh) -> None:
        fh.write("the first half of a new one")
        raise OSError(28, "No space left on device")

    with pytest.raises(WriteFailed, match=r"export\.jsonl: the disk is full \(No space left"):
        files.write_private(old, half)
    assert old.read_text() == "the whole old export\n"
    assert [p.name for p in tmp_path.iterdir()] == ["export.jsonl"]
    with pytest.raises(WriteFailed, match="no file was left"):
        files.write_private(tmp_path / "new.jsonl", half)
    assert not (tmp_path / "new.jsonl").exists()


def test_a_full_file_system_is_write_failed_and_nothing_is_left(tmpfs, filler) -> None:
    disk = tmpfs("64k")
    old = disk / "report.html"
    old.write_text("<p>old</p>")
    filler(disk)
    for target in (old, disk / "new.html"):
        with pytest.raises(WriteFailed, match="No space left on device") as caught:
            files.write_text_private(target, "<p>new</p>" * 1000)
        assert caught.value.code == "write_failed" and str(target) in str(caught.value)
    assert old.read_text() == "<p>old</p>"
    assert sorted(p.name for p in disk.iterdir()) == ["filler", "report.html"]


def test_a_device_is_written_in_place_never_replaced(full_device: Path) -> None:
    with pytest.raises(WriteFailed, match="No space left on device"):
        files.write_text_private(full_device, "x" * 100_000)
    assert full_device.is_char_device()
    with pytest.raises(OSError, match="not a regular file"), files.replacing(full_device):
        pass  # a whole-file copy (a backup) refuses a device rather than replace it
    assert full_device.is_char_device()


def test_a_symlink_is_followed_to_the_file_it_names(tmp_path: Path) -> None:
    real = tmp_path / "real.txt"
    real.write_text("old")
    real.chmod(0o644)
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    files.write_text_private(link, "new")
    assert link.is_symlink() and real.read_text() == "new" and _mode(real) == 0o600


def test_an_opened_file_is_tightened_and_a_log_appended(tmp_path: Path, umask0) -> None:
    log = tmp_path / "x.log"
    log.write_text("one\n")
    log.chmod(0o666)
    with files.open_text(log, append=True) as fh:
        fh.write("two\n")
    assert log.read_text() == "one\ntwo\n" and _mode(log) == 0o600
    with files.open_text(tmp_path / "fresh.jsonl") as fh:
        fh.write("{}\n")
    assert _mode(tmp_path / "fresh.jsonl") == 0o600


def test_tighten_narrows_a_wide_file_and_leaves_the_rest(tmp_path: Path) -> None:
    wide, narrow = tmp_path / "wide.db", tmp_path / "narrow.db"
    wide.write_bytes(b"")
    wide.chmod(0o644)
    narrow.write_bytes(b"")
    narrow.chmod(0o400)
    files.tighten(wide)
    files.tighten(narrow)
    files.tighten(tmp_path / "missing.db")
    assert (_mode(wide), _mode(narrow)) == (0o600, 0o400)


def test_dev_stdout_sent_to_a_file_is_written_through_not_replaced(tmp_path: Path) -> None:
    import subprocess
    import sys

    out = tmp_path / "out.txt"
    code = "from chitta import files; files.write_text_private('/dev/stdout', 'the report')"
    with out.open("w") as fh:
        subprocess.run([sys.executable, "-c", code], stdout=fh, check=True, timeout=60)
        assert os.fstat(fh.fileno()).st_nlink == 1  # the shell's file, not an unlinked one
    assert out.read_text() == "the report" and _mode(out) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]  # no temporary beside it
