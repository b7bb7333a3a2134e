"""Real file systems for the store's failure paths: small tmpfs mounts (a disk that fills),
read-only folders, and the command line run against them."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

CHITTA = [sys.executable, "-m", "chitta"]


def _mount(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["mount", *args], capture_output=True, text=True, timeout=30)


@pytest.fixture
def mounts(tmp_path: Path) -> Iterator[Callable[[str], Path | None]]:
    """``mounts("4m")``: a new tmpfs of that size under ``tmp_path`` (None where this process
    may not mount one), unmounted after the test."""
    mounted: list[Path] = []

    def mount(size: str) -> Path | None:
        where = tmp_path / f"fs{len(mounted)}"
        where.mkdir()
        if os.geteuid() != 0:
            return None
        done = _mount("-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(where))
        if done.returncode != 0:
            return None
        mounted.append(where)
        return where

    yield mount
    for where in reversed(mounted):
        if subprocess.run(["umount", str(where)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(where)], capture_output=True)


@pytest.fixture
def tmpfs(mounts: Callable[[str], Path | None]) -> Callable[[str], Path]:
    """``tmpfs("4m")``: a new tmpfs of that size, unmounted after the test. Skips the test,
    saying why, where this process may not mount one."""

    def mount(size: str) -> Path:
        where = mounts(size)
        if where is None:
            pytest.skip("cannot mount a tmpfs here (it needs root and CAP_SYS_ADMIN); the "
                        "max_page_count cases cover the same error path")  # fmt: skip
        return where

    return mount


@pytest.fixture
def ro_folder(mounts: Callable[[str], Path | None], tmp_path: Path) -> Path:
    """A folder ``read_only`` can make read-only: a tmpfs where this process may mount one
    (root writes through any mode bits), else a plain folder."""
    return mounts("16m") or tmp_path / "fs0"


@pytest.fixture
def read_only() -> Iterator[Callable[[Path], None]]:
    """``read_only(folder)`` makes ``folder`` and what is in it unwritable: a read-only
    remount of a mount point, else mode 0500 on the folder and 0400 on its files — checked,
    and the test skipped saying why when this process can write there all the same."""
    chmodded: list[tuple[Path, int]] = []

    def make(folder: Path) -> None:
        if os.path.ismount(folder):
            done = _mount("-o", "remount,ro", str(folder))
            if done.returncode != 0:
                pytest.skip(f"cannot remount {folder} read-only: {done.stderr.strip()}")
            return
        for path in [*folder.rglob("*"), folder]:
            chmodded.append((path, path.stat().st_mode & 0o7777))
            path.chmod(0o500 if path.is_dir() else 0o400)
        try:
            (folder / ".probe").touch()
        except OSError:
            return
        (folder / ".probe").unlink()
        pytest.skip("this process writes through mode bits (root without a mount to remount)")

    yield make
    for path, mode in reversed(chmodded):
        with contextlib.suppress(OSError):
            path.chmod(mode)


def fill(folder: Path) -> Path:
    """Write a file in ``folder`` until its file system has no space left; the file."""
    filler = folder / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        for size in (1 << 16, 1 << 12, 1):  # big pieces, then the last bytes
            with contextlib.suppress(OSError):
                while os.write(fd, b"\0" * size):
                    pass
    finally:
        os.close(fd)
    return filler


@pytest.fixture
def filler() -> Callable[[Path], Path]:
    """``filler(folder)``: fill ``folder``'s file system up; the file that fills it."""
    return fill


Run = Callable[..., subprocess.CompletedProcess]


@pytest.fixture
def cli() -> Callable[[Path], Run]:
    """``cli(home)(*args, **env)``: the real `chitta` command in ``home``, no daemon."""

    def for_home(home: Path) -> Run:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CHITTA_", "CC_SOUL_"))}
        env["CHITTA_HOME"] = str(home)

        def run(*args: str, **extra: str) -> subprocess.CompletedProcess:
            return subprocess.run([*CHITTA, *args], capture_output=True, text=True,
                                  env={**env, **extra}, timeout=120)  # fmt: skip

        return run

    return for_home


def assert_clean_error(proc: subprocess.CompletedProcess, exit_code: int, *words: str) -> None:
    """A refusal as the CLI should give it: the exit code, one line on stderr, no traceback."""
    assert proc.returncode == exit_code, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    for word in words:
        assert word in lines[0], (word, lines[0])


@pytest.fixture
def clean_error() -> Callable[..., None]:
    """``assert_clean_error`` as a fixture (conftest functions cannot be imported)."""
    return assert_clean_error
