"""Where a benchmark ran: the commit, the machine, its load. Written into every results file."""

from __future__ import annotations

import os
import platform
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np

from chitta import __version__

#: The checkout chitta runs from (src/chitta/bench/ → the repository root).
ROOT = Path(__file__).resolve().parents[3]


def default_locomo() -> Path:
    """``../shared/data/locomo10.json`` beside the checkout (or the working directory)."""
    for base in (Path.cwd(), ROOT):
        candidate = base.parent / "shared" / "data" / "locomo10.json"
        if candidate.is_file():
            return candidate
    return ROOT.parent / "shared" / "data" / "locomo10.json"


def default_longmemeval() -> Path:
    """``../shared/data/longmemeval_s_dev60.json``, beside :func:`default_locomo`'s file."""
    return default_locomo().with_name("longmemeval_s_dev60.json")


def git_commit() -> str | None:
    """HEAD's commit, read from ``.git`` (what ``git rev-parse HEAD`` prints), if any."""
    git = ROOT / ".git"
    try:
        if git.is_file():  # a worktree: "gitdir: <path>"
            git = (ROOT / git.read_text().split(":", 1)[1].strip()).resolve()
        head = (git / "HEAD").read_text().strip()
        if not head.startswith("ref: "):
            return head
        ref = head[5:]
        common = git / "commondir"
        base = (git / common.read_text().strip()).resolve() if common.exists() else git
        for root in (git, base):
            if (root / ref).is_file():
                return (root / ref).read_text().strip()
        packed = base / "packed-refs"
        if packed.is_file():
            for line in packed.read_text().splitlines():
                if line.endswith(" " + ref):
                    return line.split()[0]
    except OSError:
        return None
    return None


def machine() -> dict[str, Any]:
    model = None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import onnxruntime
    import tokenizers

    return {
        "cpu_model": model or platform.processor() or None,
        "cores": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "onnxruntime": onnxruntime.__version__,
        "numpy": np.__version__,
        "tokenizers": tokenizers.__version__,
        "sqlite": sqlite3.sqlite_version,
        "chitta": __version__,
    }


def loadavg() -> list[float] | None:
    try:
        return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
    except OSError:
        return None
