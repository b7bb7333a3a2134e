"""`chitta bench code` on a real corpus: the call graph read back through the indexer and
the store scores exactly what the pure path (extract, resolve, score) scores; a corpus that
cannot be fetched is a skip with its reason, a drifted one an error; --speed's figures."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from chitta.bench import code, code_run, code_speed
from chitta.code.extract import extract, language_for
from chitta.code.resolve import resolve
from chitta.errors import CorpusDrift, CorpusUnavailable
from chitta.store.backends import open_store

ROOT = Path(__file__).resolve().parents[2]
TRUTH_DIR = ROOT / "benchmarks" / "code"
CACHE = Path(os.environ.get("CHITTA_BENCH_CACHE", Path.home() / ".cache" / "chitta" / "bench-code"))


@pytest.fixture(scope="module")
def python_corpus() -> tuple[code.Truth, Path]:
    truth = code.load("python", TRUTH_DIR)
    try:
        return truth, code.fetch(truth, CACHE)
    except CorpusUnavailable as exc:
        pytest.skip(f"the pinned python corpus cannot be downloaded (PyPI unreachable?): {exc}")
    except CorpusDrift as exc:
        pytest.fail(f"the python corpus drifted from its pinned SHA-256: {exc}")


def _pure_score(truth: code.Truth, root: Path) -> code.Score:
    """extract -> resolve -> align -> score, written out here, with no store in between."""
    paths = [str(f["path"]) for f in truth.files]
    extracts = [extract(p, (root / p).read_bytes(), language_for(p)) for p in paths]
    resolution = resolve(extracts)
    pairs = {(e.subject, e.object) for e in resolution.edges if e.predicate == "calls"}
    first: dict[tuple[str, str], int] = {}
    for e in extracts:
        for s in e.symbols:
            first[(s.path, s.qualified)] = min(s.start_line, first.get((s.path, s.qualified), 1e9))
    names = code.align(truth, [(q, p, int(line)) for (p, q), line in first.items()])
    unresolved = sum(1 for c in resolution.open if c.state == "unresolved")
    return code.score(truth, code.rename(pairs, names), unresolved=unresolved)


def test_the_store_round_trip_loses_nothing(python_corpus, tmp_path: Path) -> None:
    truth, root = python_corpus
    figures = code_run.run_language(truth, root, tmp_path)
    pure = _pure_score(truth, root)
    assert figures["score"] == pure.as_dict()
    assert figures["store_matches_pure"] and figures["callers_match_callees"]
    assert figures["walks_cut"] == 0 and figures["not_indexed"] == {}
    assert figures["index"]["files"] == len(truth.files)
    assert figures["index"]["resolution"]["pending"] == 0
    assert pure.found > 0 and pure.unresolved is not None and pure.unresolved > 0


def test_the_command_writes_its_results(python_corpus, tmp_path: Path) -> None:
    out = tmp_path / "code.json"
    done = subprocess.run(
        [sys.executable, "-m", "chitta", "bench", "code", "--truth", str(TRUTH_DIR),
         "--language", "python", "--cache", str(CACHE), "--out", str(out)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    record = json.loads(out.read_text())
    assert {"benchmark", "command", "commit", "machine", "created_at"} <= record.keys()
    assert record["benchmark"] == "code" and list(record["languages"]) == ["python"]
    python = record["languages"]["python"]
    assert python["store_matches_pure"] and python["score"] == python["pure_all_files"]
    table = out.with_suffix(".md").read_text()
    assert "| python | 229 |" in table and table in done.stdout


def _truth_copy(tmp_path: Path, change) -> Path:
    raw = json.loads((TRUTH_DIR / "python" / "truth.json").read_text())
    change(raw["corpus"])
    (tmp_path / "truth" / "python").mkdir(parents=True)
    (tmp_path / "truth" / "python" / "truth.json").write_text(json.dumps(raw))
    return tmp_path / "truth"


def test_a_corpus_that_cannot_be_fetched_is_skipped_with_its_reason(tmp_path: Path) -> None:
    def elsewhere(corpus: dict) -> None:
        corpus["registry"] = "nowhere"

    notes: list[str] = []
    record = code_run.run(["python"], _truth_copy(tmp_path, elsewhere), tmp_path / "cache",
                          tmp_path / "work", note=notes.append)  # fmt: skip
    assert record["languages"] == {}
    assert "unknown registry 'nowhere'" in record["skipped"]["python"]
    assert notes and notes[0].startswith("skipping python: its pinned corpus cannot be fetched")
    assert "python: skipped" in code_run.markdown(record)


def test_a_drifted_corpus_is_an_error_not_a_skip(python_corpus, tmp_path: Path) -> None:
    truth, root = python_corpus
    cache = tmp_path / "cache"
    shutil.copytree(CACHE / "python" / "tree", cache / "python" / "tree")

    def drifted(corpus: dict) -> None:
        corpus["files"][0]["sha256"] = "0" * 64

    done = subprocess.run(
        [sys.executable, "-m", "chitta", "bench", "code", "--truth",
         str(_truth_copy(tmp_path, drifted)), "--cache", str(cache), "--out",
         str(tmp_path / "code.json")],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "is not the pinned file" in done.stderr
    assert not (tmp_path / "code.json").exists()


def test_speed_figures_on_a_real_folder(python_corpus, tmp_path: Path) -> None:
    truth, root = python_corpus
    folder = code_run.copy_corpus(truth, root, tmp_path / "corpus")
    with open_store(tmp_path / "code.db") as store:
        figures = code_speed.measure(store, folder, queries=20, embed_sample=None)
    index = figures["index"]
    assert index["files"] == len(truth.files) and index["symbols"] == 248
    assert index["lines"] == sum(int(f["lines"]) for f in truth.files)
    assert index["lines_per_s"] > 0 and "embedding" not in figures
    q = figures["queries"]
    assert q["queries"] == 20 and q["linked_queries"] == 20
    for name in ("find_symbol_exact", "find_symbol_prefix", "callers_depth1", "callees_depth3"):
        assert q[name]["p95"] >= q[name]["p50"] > 0
    assert figures["size"]["bytes_per_symbol"] > 0
    table = code_speed.markdown({"speed": {"backends": {"sqlite": figures}}})
    assert "| find_symbol_exact |" in table
