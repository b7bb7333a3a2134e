"""`chitta calibrate` as a user runs it: a real store, a golden file, the stored fit."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from chitta.api import Chitta
from chitta.config import Settings

TOPICS = {
    "staging postgres port": "The staging Postgres listens on port 6543 behind pgbouncer",
    "kafka events retention": "Kafka retention on the events topic is seven days",
    "tabs or spaces for alice": "Alice prefers tabs over spaces in Python code",
    "why sqlite wal": "We chose SQLite WAL over a custom log because crash recovery comes free",
    "deploy on fridays": "Never run deploy.sh on Fridays; use the staging pipeline instead",
    "redis eviction policy": "Redis uses allkeys-lru eviction with a 2 GB cap in production",
    "who owns billing": "The billing service is owned by the payments team in Lisbon",
    "ci runner image": "CI runners use the ubuntu-22.04 image with Python 3.11 preinstalled",
}
OFF_TOPIC = [
    "capital of Mongolia",
    "best sourdough hydration",
    "rules of cricket",
    "how tall is Kilimanjaro",
    "jazz chords for beginners",
    "knitting a scarf",
]


@pytest.fixture(params=["in-process", "daemon"])
def home(request, tmp_path: Path, embedder, launch) -> tuple[Path, dict[str, str]]:
    """A home whose default store holds the topics' memories; their ids by query. Each test
    runs twice: the command opening the store itself, and through a daemon serving it."""
    settings = Settings(home=tmp_path / "home")
    with Chitta.open(settings, embedder=embedder) as chitta:
        ids = {q: chitta.remember(text, realm="infra").id for q, text in TOPICS.items()}
    if request.param == "daemon":
        launch(settings.home)
    return settings.home, ids


def _run(home: Path, *args: str, ok: bool = True) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHITTA_", "CC_SOUL_"))}
    proc = subprocess.run(
        [sys.executable, "-m", "chitta", *args],
        capture_output=True,
        text=True,
        env={**env, "CHITTA_HOME": str(home)},
        timeout=120,
    )
    if ok:
        assert proc.returncode == 0, proc.stderr
    return proc


def _golden(tmp_path: Path, ids: dict[str, str]) -> Path:
    lines = [{"query": q, "gold": [mid], "realm": "infra"} for q, mid in ids.items()]
    lines += [{"query": q, "gold": [], "realm": "infra"} for q in OFF_TOPIC]
    path = tmp_path / "golden.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return path


def test_calibrate_fits_stores_shows_and_resets(home, tmp_path: Path) -> None:
    path, ids = home
    golden = _golden(tmp_path, ids)
    fitted = json.loads(_run(path, "calibrate", str(golden), "--json").stdout)
    fit = fitted["calibration"]
    assert fit["source"] == "golden file golden.jsonl" and fit["pairs"] == 14
    assert fitted["fitted_on"]["unanswerable"] == 6 and fit["a"] > 0
    # Unanswerable queries were given: the threshold sits between the two groups.
    assert 0 < fit["threshold"] < 1
    shown = json.loads(_run(path, "calibrate", "--show", "--json").stdout)
    assert shown["calibration"] == fit
    # What the memory browser draws: the fit's reliability diagram, kept beside it, and its
    # curve (rising with the raw relevance) for three realm sizes.
    bins = fitted["fitted_on"]["reliability"]
    assert shown["reliability"] == bins and sum(b["count"] for b in bins) == 14
    assert all(0 <= b["low"] <= b["predicted"] <= b["high"] <= 1 for b in bins)
    curve = shown["curve"]["1000"]
    assert len(curve) == 21 and curve[0][1] <= curve[-1][1]
    recall = json.loads(
        _run(path, "recall", "staging postgres port", "-r", "infra", "--json").stdout
    )
    assert recall["confidence"]["calibration"] == "golden file golden.jsonl"
    assert recall["confidence"]["band"] == "KNOWN"
    human = _run(path, "calibrate", "--reset").stdout
    assert human.startswith("calibration: default (no fit stored)")
    assert json.loads(_run(path, "calibrate", "--show", "--json").stdout)["reliability"] is None


def test_calibrate_with_a_threshold_keeps_it(home, tmp_path: Path) -> None:
    path, ids = home
    out = _run(path, "calibrate", str(_golden(tmp_path, ids)), "--threshold", "0.42").stdout
    assert "KNOWN when p >= 0.420" in out and "fitted on 14 queries (6 unanswerable)" in out


@pytest.mark.parametrize(
    ("args", "code", "needle"),
    [
        ((), 2, "exactly one of GOLDEN"),
        (("--show", "--reset"), 2, "exactly one of GOLDEN"),
        (("nope.jsonl",), 2, "cannot read the golden file"),
        (("--from-run", "nope.json"), 2, "cannot read the benchmark run"),
        (("--show", "--threshold", "0.3"), 2, "go with a fit"),
        (("nope.jsonl", "--threshold", "2"), 2, "threshold must be at most 1"),
    ],
)
def test_bad_calls_say_what_is_wrong(home, args, code, needle) -> None:
    proc = _run(home[0], "calibrate", *args, ok=False)
    assert proc.returncode == code and needle in proc.stderr


def test_a_bad_golden_line_is_named_and_nothing_is_stored(home, tmp_path: Path) -> None:
    path, ids = home
    golden = tmp_path / "bad.jsonl"
    golden.write_text('{"query": "q", "gold": []}\n{"query": "q2", "gold": "x"}\n')
    proc = _run(path, "calibrate", str(golden), ok=False)
    assert proc.returncode == 2 and "bad.jsonl line 2" in proc.stderr
    assert "default" in _run(path, "calibrate", "--show").stdout
    few = tmp_path / "few.jsonl"
    few.write_text(
        json.dumps(
            {
                "query": "staging postgres port",
                "gold": [ids["staging postgres port"]],
                "realm": "infra",
            }
        )
        + "\n"
    )
    proc = _run(path, "calibrate", str(few), ok=False)
    assert proc.returncode == 2 and "at least 10 pairs" in proc.stderr


def test_display_only_refits_the_percentage_and_keeps_the_band(home, tmp_path: Path) -> None:
    path, ids = home
    golden = _golden(tmp_path, ids)
    default = json.loads(_run(path, "calibrate", "--show", "--json").stdout)["calibration"]
    fit = json.loads(_run(path, "calibrate", str(golden), "--display-only", "--json").stdout)
    fit = fit["calibration"]
    assert (fit["a"], fit["b"], fit["threshold"]) == (
        default["a"], default["b"], default["threshold"],
    )  # fmt: skip
    assert (fit["display_a"], fit["display_b"]) != (1.0, 0.0)
    assert fit["source"] == "percentage refitted on golden file golden.jsonl; band fit: default"
    proc = _run(path, "calibrate", str(golden), "--display-only", "--threshold", "0.3", ok=False)
    assert proc.returncode == 2 and "leave out --threshold" in proc.stderr
