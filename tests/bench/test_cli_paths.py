"""`chitta bench cli` end to end on a tiny store: real processes, a real daemon."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from chitta.bench import cli_paths
from chitta.bench.environment import default_locomo
from chitta.errors import BadArgument

needs_locomo = pytest.mark.skipif(
    not default_locomo().is_file(), reason="needs ../shared/data/locomo10.json"
)


@needs_locomo
def test_a_tiny_run_measures_every_command_in_both_modes(tmp_path: Path) -> None:
    out = tmp_path / "cli.json"
    argv = [sys.executable, "-m", "chitta", "bench", "cli", "--n", "200", "--runs", "1",
            "--workdir", str(tmp_path / "work"), "--out", str(out)]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=os.environ)
    assert done.returncode == 0, done.stderr
    record = json.loads(out.read_text())
    assert record["benchmark"] == "cli" and record["command"].startswith("chitta bench cli")
    assert record["store"]["memories"] == 200 and record["daemon_start_s"] > 0
    assert record["loadavg_before"] is None or len(record["loadavg_before"]) == 3
    assert set(record["commands"]) == {"baseline", *cli_paths.COMMANDS}
    for figures in record["commands"].values():
        for mode in cli_paths.MODES:
            assert figures[mode]["median_ms"] > 0 and len(figures[mode]["runs_ms"]) == 1
        assert figures["ratio"] > 0
    # The daemon mode really went through the daemon: it served each command once.
    for method in cli_paths.METHODS.values():
        assert record["daemon_methods"][method]["requests"] >= 1
        assert record["daemon_methods"][method]["errors"] == 0
    assert "| `chitta show ID` |" in out.with_suffix(".md").read_text()
    # Only ids and figures: no export or source file with memory text is left behind.
    assert sorted(p.name for p in (tmp_path / "work").iterdir()) == ["home"]
    assert not (tmp_path / "work" / "home" / "chitta.sock").exists()  # the daemon stopped


def test_a_workdir_with_a_store_is_refused(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "default.db").write_bytes(b"")
    with pytest.raises(BadArgument, match="already holds a store"):
        cli_paths.run(tmp_path, default_locomo(), n=200, runs=1)
