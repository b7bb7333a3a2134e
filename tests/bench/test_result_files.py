"""Benchmark results are owner-only files (they may quote a store's memories), written whole,
in folders made 0700, whatever the umask and whatever file was there."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from chitta.bench.report import write_questions
from chitta.bench.scale.report import write_json
from chitta.cli.bench import write_results


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_results_files_are_owner_only(tmp_path: Path, umask0) -> None:
    out = tmp_path / "results" / "run.json"
    out.parent.mkdir()
    out.parent.chmod(0o755)
    for old in (out, out.with_suffix(".md"), out.with_suffix(".questions.jsonl")):
        old.write_text("an older run")
        old.chmod(0o666)
    write_results({"figures": [1]}, out, "| a |\n", None)
    write_questions({}, out.with_suffix(".questions.jsonl"))
    assert json.loads(out.read_text()) == {"figures": [1]}
    for written in (out, out.with_suffix(".md"), out.with_suffix(".questions.jsonl")):
        assert _mode(written) == 0o600, written
    assert _mode(out.parent) == 0o755  # there already: left alone
    fresh = tmp_path / "made" / "scale.json"
    write_json({"rows": []}, fresh)
    assert (_mode(fresh), _mode(fresh.parent)) == (0o600, 0o700)
