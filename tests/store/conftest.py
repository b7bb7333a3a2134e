"""Real file systems for the store's failure paths: small tmpfs mounts (a disk that fills),
read-only folders, and the command line run against them."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

CHITTA = [sys.executable, "-m", "chitta"]


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
