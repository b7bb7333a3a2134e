"""The scale benchmark: its pure parts, and one tiny run of ``chitta bench scale`` end to end."""

from __future__ import annotations

import io
import json
import random
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from chitta.bench import environment, scale
from chitta.bench.score import percentile
from chitta.cli import main
from chitta.errors import BadArgument
from chitta.recall.lanes import LANES

TURNS = [
    f"{speaker}: I went to the {place} on day {i}. It was {mood} at {i}! Again in {i} weeks?"
    for i, (speaker, place, mood) in enumerate(
        (s, p, m)
        for s in ("Ann", "Bob", "Cy")
        for p in ("lake", "museum", "market", "library", "park")
        for m in ("lovely", "crowded", "quiet", "great")
    )
]


def test_sizes_parse_with_suffixes_sorted_and_distinct() -> None:
    assert scale.parse_sizes("100k, 10000,1M,10_000") == [10_000, 100_000, 1_000_000]
    assert scale.parse_sizes("2.5k") == [2_500]
    for bad in ("", "ten", "10", "9M"):
        with pytest.raises(BadArgument):
            scale.parse_sizes(bad)


def test_backends_parse_in_a_fixed_order() -> None:
    from chitta.bench.scale.backends import parse_backends

    assert parse_backends("postgresql, sqlite,sqlite") == ["sqlite", "postgresql"]
    assert parse_backends("PostgreSQL") == ["postgresql"]
    for bad in ("", "mysql", "sqlite,oracle"):
        with pytest.raises(BadArgument, match="--backend"):
            parse_backends(bad)


def test_texts_are_distinct_deterministic_and_prefixes_of_each_other() -> None:
    texts = scale.memory_texts(TURNS, 1000, seed=7)
    assert len(set(texts)) == 1000
    assert texts[: len(TURNS)] == TURNS  # the real turns come first, as they are
    assert texts == scale.memory_texts(TURNS, 1000, seed=7)
    assert scale.memory_texts(TURNS, 400, seed=7) == texts[:400]
    assert scale.memory_texts(TURNS, 1000, seed=8)[len(TURNS) :] != texts[len(TURNS) :]
    speakers = {t.split(": ", 1)[0] for t in TURNS}
    for text in texts[len(TURNS) :]:
        assert text.split(": ", 1)[0] in speakers and len(text) >= 10


def test_a_recombination_joins_the_start_of_one_turn_and_the_end_of_another() -> None:
    a = "Ann: One. Two. Three. Four."
    b = "Bob: Five. Six. Seven."
    for seed in range(20):
        text = scale.recombine(a, b, random.Random(seed))
        assert text.startswith("Ann: One.") and text.endswith("Seven.")
        assert "Four." not in text and "Bob" not in text


def test_too_few_turns_to_recombine_is_a_clear_error() -> None:
    with pytest.raises(BadArgument, match="distinct texts"):
        scale.memory_texts(["Ann: Hello there.", "Bob: Hi to you."], 50)


def test_split_turn_keeps_speaker_and_sentences() -> None:
    assert scale.split_turn("Mel: Hi! How are you? Fine.") == ("Mel", ["Hi!", "How are you?",
                                                                     "Fine."])  # fmt: skip
    assert scale.split_turn("no speaker here") == ("", ["no speaker here"])


def test_synthetic_vectors_are_unit_length_near_their_source_and_deterministic() -> None:
    rng = np.random.default_rng(0)
    base = scale.unit_rows(rng.normal(size=(50, 384)).astype(np.float32))
    vectors, sources = scale.synthetic_vectors(base, 500, np.random.default_rng(1))
    assert vectors.shape == (500, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    cosine = np.sum(vectors * base[sources], axis=1)
    assert cosine.min() > 0.85 and cosine.max() < 0.999  # near, but not a copy
    # nearest base vector of each synthetic one is its source
    assert (np.argmax(vectors @ base.T, axis=1) == sources).all()
    again, again_sources = scale.synthetic_vectors(base, 500, np.random.default_rng(1))
    assert np.array_equal(again, vectors) and np.array_equal(again_sources, sources)


def test_summary_and_percentile() -> None:
    values = [float(v) for v in range(1, 101)]
    s = scale.summary_ms(values)
    assert s == {"p50": 50.5, "p95": 95.05, "mean": 50.5, "min": 1.0, "max": 100.0}
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0
    assert scale.summary_ms([])["p50"] == 0.0


def test_vector_cache_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "cache.npz"
    cache = scale.VectorCache(path)
    assert cache.lookup(["a"]) == (None, [0])
    vectors = scale.unit_rows(np.random.default_rng(0).normal(size=(3, 8)).astype(np.float32))
    cache.add(["one", "two", "three"], vectors)
    cache.save()
    again = scale.VectorCache(path)
    found, missing = again.lookup(["three", "four", "one"])
    assert missing == [1] and len(again) == 3
    assert np.array_equal(found[0], vectors[2]) and np.array_equal(found[2], vectors[0])
    again.add(["four", "one"], vectors[:2])  # "one" is known: kept once
    again.save()
    assert len(scale.VectorCache(path)) == 4


def test_embedding_is_cached_in_steps_so_a_cut_run_keeps_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chitta.bench.scale import build_phase
    from chitta.bench.scale.events import Events
    from chitta.bench.scale.measure import load_model

    _, model = load_model()

    class CutAfterTwoBatches:  # the real model, then the run is cut short
        def __init__(self) -> None:
            self.calls = 0

        def identity(self):  # noqa: ANN202
            return model.identity()

        def embed(self, texts: list[str]):  # noqa: ANN202
            self.calls += 1
            if self.calls > 2:
                raise KeyboardInterrupt
            return model.embed(texts)

    monkeypatch.setattr(build_phase, "BATCH", 4)
    monkeypatch.setattr(build_phase, "CHECKPOINT", 4)
    path = tmp_path / "cache.npz"
    with pytest.raises(KeyboardInterrupt):
        build_phase._real_vectors(TURNS[:12], CutAfterTwoBatches(), scale.VectorCache(path),
                                  Events(io.StringIO()), "cut")  # fmt: skip
    kept = scale.VectorCache(path)
    found, missing = kept.lookup(TURNS[:12])
    assert len(kept) == 8 and missing == [8, 9, 10, 11]
    assert np.allclose(found[:8], model.embed(TURNS[:8]).vectors, atol=1e-5)
    events = Events(io.StringIO())
    _, info = build_phase._real_vectors(TURNS[:12], model, kept, events, "again")
    assert info["from_cache"] == 8 and info["embedded"] == 4
    assert len(scale.VectorCache(path)) == 12


def test_memory_figures_are_read() -> None:
    figures = scale.memory_mb()
    assert 0 < figures["rss"] <= figures["peak"]


def test_a_tiny_run_end_to_end(tmp_path: Path) -> None:
    data = environment.default_locomo()
    if not data.is_file():
        pytest.skip(f"no LoCoMo file at {data}")
    out = tmp_path / "scale.json"
    docs = tmp_path / "benchmarks.md"
    docs.write_text("# Benchmarks\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["bench", "scale", "--n", "300", "--queries", "10",
                                       "--cli-runs", "2", "--out", str(out),
                                       "--append-docs", str(docs)])  # fmt: skip
    assert result.exit_code == 0, result.output
    record = json.loads(out.read_text(encoding="utf-8"))
    assert record["benchmark"] == "scale" and record["complete"] is True
    assert record["settings"]["sizes"] == [300]
    assert record["command"].startswith("chitta bench scale --n 300")
    row = record["figures"]["300"]
    build, recall, cli = row["build"], row["recall"], row["cli"]
    assert build["import"]["mode"] == "embedded" and build["import"]["import_per_s"] > 0
    assert build["import"]["paired"]["texts"] == 300 and build["import"]["paired"]["ratio"] > 0
    assert build["size"]["bytes_per_memory"] > 1536
    assert recall["vectors_in_index"] == 300
    for strategy in scale.STRATEGIES:
        assert recall[strategy]["wall_ms"]["p50"] > 0
        assert recall[strategy]["embed_cache"]["hits"] == 0
    assert recall["rss_mb"]["after_first_recall"]["rss"] > recall["rss_mb"]["start"]["rss"]
    # Then warmed as a daemon warms itself: the doclists the first recall did not read.
    assert "keyword_lists" in recall["warm_up_ms"] and recall["rss_mb"]["after_warm_up"]["rss"]
    # Every lane of the registry timed on its own, beside planning, embedding, exact search.
    lanes = recall["lanes"]
    assert set(lanes["timing_ms"]) == {"plan", "embed", "sem_exact", *LANES}
    assert all(t["p50"] >= 0 for t in lanes["timing_ms"].values())
    assert lanes["sem_uses_hnsw"] is False and lanes["sem_recall_at_10_vs_exact"] == 1.0
    assert recall["reopen"]["first_recall_ms"] > 0
    assert cli["runs"] == 2 and cli["recall_process_ms_median"] > 0
    assert cli["peak_rss_mb_median"] > 50
    table = out.with_suffix(".md").read_text(encoding="utf-8")
    assert "| figure | N = 300 |" in table and "Recall hybrid" in table
    assert "… `kw` lane |" in table and "recall@10 against exact search" in table
    assert table in docs.read_text(encoding="utf-8")


def test_a_tiny_run_on_both_backends_side_by_side(tmp_path: Path, pg_server) -> None:
    """--backend sqlite,postgresql on the user's server (--database-url): a fresh database
    per N, both rows in one record and one table, the HNSW build timed on PostgreSQL."""
    data = environment.default_locomo()
    if not data.is_file():
        pytest.skip(f"no LoCoMo file at {data}")
    out = tmp_path / "scale.json"
    result = CliRunner().invoke(main, ["bench", "scale", "--n", "300", "--queries", "5",
                                       "--cli-runs", "1", "--out", str(out),
                                       "--workdir", str(tmp_path / "work"),
                                       "--backend", "postgresql,sqlite",
                                       "--database-url", pg_server.get_uri()])  # fmt: skip
    assert result.exit_code == 0, result.output
    record = json.loads(out.read_text(encoding="utf-8"))
    assert list(record["figures"]) == ["300", "300-postgresql"]
    assert record["settings"]["backends"] == ["sqlite", "postgresql"]
    server = record["settings"]["postgresql"]
    assert server["started_by_benchmark"] is False and server["pgvector"]
    sqlite, pg = record["figures"]["300"], record["figures"]["300-postgresql"]
    assert (sqlite["backend"], pg["backend"]) == ("sqlite", "postgresql")
    assert sqlite["build"]["hnsw_build"] is None
    built = pg["build"]["hnsw_build"]
    assert built["seconds"] > 0 and built["vectors"] == 300 and built["bytes_after"] > 0
    assert pg["recall"]["vectors_in_index"] == 300
    assert pg["build"]["size"]["per_memory_by_table"]["embeddings"] > 1536
    for strategy in scale.STRATEGIES:
        assert pg["recall"][strategy]["wall_ms"]["p50"] > 0
    assert pg["cli"]["runs"] == 1 and pg["cli"]["recall_process_ms_median"] > 0
    table = out.with_suffix(".md").read_text(encoding="utf-8")
    assert "| figure | N = 300, SQLite | N = 300, PostgreSQL |" in table
    assert "HNSW index build over the full table" in table and "pgvector" in table
