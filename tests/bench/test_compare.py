"""The paired comparison: counts, and a significance test that separates signal from noise."""

import json
from pathlib import Path

import pytest

from chitta.bench.compare import compare, load_questions, sign_flip_p
from chitta.errors import BadArgument


def test_sign_flip_p_values() -> None:
    assert sign_flip_p([0.0, 0.0]) == 1.0
    assert sign_flip_p([0.5] * 30) < 0.001  # every question better: clearly significant
    assert sign_flip_p([0.5, -0.5] * 15) > 0.5  # as many better as worse: nothing


def _write(path: Path, system: str, values: list[float]) -> Path:
    with path.open("w") as fh:
        for i, v in enumerate(values):
            row = {"system": system, "conversation": "c", "question": i,
                   "category": 1 + i % 5, "metrics": {"recall@10": v}}  # fmt: skip
            fh.write(json.dumps(row) + "\n")
    return path


def test_compare_counts_wins_losses_ties(tmp_path: Path) -> None:
    a = load_questions(_write(tmp_path / "a.jsonl", "x", [0.0, 0.5, 1.0, 1.0]))
    b = load_questions(_write(tmp_path / "b.jsonl", "x", [1.0, 0.5, 0.0, 1.0]))
    c = compare(a, b, "x", "x")
    assert (c.n, c.wins, c.losses, c.ties) == (4, 1, 1, 2)
    assert c.mean_a == c.mean_b == pytest.approx(0.625)
    only_one = compare(a, b, "x", "x", categories={1})
    assert only_one.n == 1 and only_one.wins == 1


def test_compare_errors(tmp_path: Path) -> None:
    with pytest.raises(BadArgument, match="no per-question file"):
        load_questions(tmp_path / "none.jsonl")
    (tmp_path / "bad.jsonl").write_text('{"x": 1}\n')
    with pytest.raises(BadArgument, match="not a per-question"):
        load_questions(tmp_path / "bad.jsonl")
    a = load_questions(_write(tmp_path / "a.jsonl", "x", [1.0]))
    with pytest.raises(BadArgument, match="no questions in common"):
        compare(a, a, "x", "y")
