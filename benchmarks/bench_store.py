"""Store benchmark: import throughput, recall latency, size per memory, CLI start to recall.

Run with ``make bench`` or ``.venv/bin/python benchmarks/bench_store.py [--n 10000]
[--queries 200] [--out benchmarks/results/store.json]``. Memory content is LoCoMo's turn
texts (``speaker: text``), repeated with a `` (copy k)`` suffix beyond the 5,880 usable ones;
queries are LoCoMo questions. Writes a results JSON (commit, machine, settings, figures) and,
beside it, the Markdown table that ``docs/benchmarks.md`` quotes.

Every figure is measured on a store built in a fresh temporary ``CHITTA_HOME``:

1. import: ``import_jsonl`` of N memory lines (embedding included; ``import_jsonl`` skips the
   dedup gate) against the embedder alone over the same texts, batch by batch (256, the
   importer's batch), alternating which of the two goes first so drift hits both alike.
2. recall: in-process, one realm of N memories, distinct queries with a fresh embedding
   cache (checked: no cache hits), hybrid / semantic / keyword, limit 10.
3. size: the store file after a WAL checkpoint, per memory, split by table via ``dbstat``.
4. CLI: a new ``chitta recall`` process against that store, and ``import chitta.cli``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shlex
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from chitta import __version__
from chitta.api import Chitta
from chitta.config import EMBED_CACHE_SIZE, MIN_CONTENT_CHARS, EmbedSettings, Settings
from chitta.embed.cache import CachedEmbedder
from chitta.embed.loader import build_embedder
from chitta.transfer import import_jsonl
from chitta.transfer.importer import BATCH

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "locomo10.json"
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "store.json"
REALM = "bench"
LIMIT = 10
VECTOR_BYTES = 384 * 4  # all-MiniLM-L6-v2: 384 float32
CLI_RUNS = 5


def log(message: str) -> None:
    print(f"[bench_store {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# --- data --------------------------------------------------------------------------------------


def load_locomo(path: Path) -> tuple[list[str], list[str]]:
    """LoCoMo's turn texts (``speaker: text``) and its distinct questions, in file order."""
    data = json.loads(path.read_text(encoding="utf-8"))
    turns: list[str] = []
    questions: list[str] = []
    for sample in data:
        conversation = sample["conversation"]
        sessions = [k for k in conversation if k.startswith("session_") and k[8:].isdigit()]
        for key in sorted(sessions, key=lambda k: int(k[8:])):
            for turn in conversation[key]:
                turns.append(f"{turn['speaker']}: {turn['text']}".strip())
        questions.extend(q["question"].strip() for q in sample.get("qa", []) if q.get("question"))
    return turns, list(dict.fromkeys(questions))


def memory_texts(turns: list[str], n: int) -> tuple[list[str], int]:
    """``n`` distinct contents: the turns (too-short ones dropped), then suffixed copies."""
    usable = [t for t in turns if len(t) >= MIN_CONTENT_CHARS]
    seen: set[str] = set()
    out: list[str] = []
    copy = 1
    while len(out) < n:
        for text in usable:
            candidate = text if copy == 1 else f"{text} (copy {copy})"
            extra = 1
            while candidate in seen:  # the few turns LoCoMo repeats verbatim
                extra += 1
                candidate = f"{text} (copy {copy}.{extra})"
            seen.add(candidate)
            out.append(candidate)
            if len(out) == n:
                break
        copy += 1
    return out, len(turns) - len(usable)


def jsonl_line(text: str) -> str:
    return json.dumps({"type": "memory", "kind": "episode", "content": text, "realm": REALM})


# --- helpers -----------------------------------------------------------------------------------


def pct(values: list[float], q: float) -> float:
    return round(float(np.percentile(values, q)), 3)


def summary_ms(values: list[float]) -> dict[str, float]:
    return {
        "p50": pct(values, 50),
        "p95": pct(values, 95),
        "mean": round(statistics.fmean(values), 3),
        "min": round(min(values), 3),
        "max": round(max(values), 3),
    }


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """(seconds, result) of one call."""
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def clean_env() -> dict[str, str]:
    """The environment without CHITTA_* / CC_SOUL_* settings, so only defaults apply."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("CHITTA_", "CC_SOUL_"))}


def open_chitta(home: Path, inner) -> Chitta:
    """The store under ``home`` with a fresh (cold) cache in front of the shared model."""
    return Chitta.open(Settings(home=home), embedder=CachedEmbedder(inner))


# --- 1. import throughput ----------------------------------------------------------------------


def bench_import(chitta: Chitta, inner, texts: list[str]) -> dict[str, Any]:
    """Import batch by batch, each paired with the embedder alone on the same texts."""
    import_s: list[float] = []
    embed_s: list[float] = []
    batches = range(0, len(texts), BATCH)
    for b, start in enumerate(batches):
        chunk = texts[start : start + BATCH]
        lines = [jsonl_line(t) for t in chunk]

        def run_import(lines: list[str] = lines) -> None:
            seconds, report = timed(lambda: import_jsonl(chitta, lines))
            if report.errors or report.memories != len(lines):
                raise SystemExit(f"import failed: {report.as_dict()}")
            import_s.append(seconds)

        def run_embed(chunk: list[str] = chunk) -> None:
            embed_s.append(timed(lambda: inner.embed(chunk))[0])

        first, second = (run_embed, run_import) if b % 2 == 0 else (run_import, run_embed)
        first()
        second()
        if (b + 1) % 8 == 0:
            done = min(start + BATCH, len(texts))
            log(f"import {done}/{len(texts)}: {done / sum(import_s):.1f}/s importer, "
                f"{done / sum(embed_s):.1f}/s embedder alone")  # fmt: skip
    n = len(texts)
    half = len(import_s) // 2
    halves = [
        {
            "import_per_s": round(sum(len(texts[i * BATCH : (i + 1) * BATCH]) for i in r)
                                  / sum(import_s[i] for i in r), 1),
            "embed_per_s": round(sum(len(texts[i * BATCH : (i + 1) * BATCH]) for i in r)
                                 / sum(embed_s[i] for i in r), 1),
        }
        for r in (range(half), range(half, len(import_s)))
    ]  # fmt: skip
    stats = chitta.embedder.stats()
    return {
        "memories": n,
        "batch": BATCH,
        "import_per_s": round(n / sum(import_s), 1),
        "embed_alone_per_s": round(n / sum(embed_s), 1),
        "ratio": round(sum(embed_s) / sum(import_s), 3),
        "per_batch_ratio_p50": round(
            statistics.median(e / i for e, i in zip(embed_s, import_s, strict=True)), 3
        ),
        "import_s": round(sum(import_s), 3),
        "embed_alone_s": round(sum(embed_s), 3),
        "overhead_ms_per_memory": round((sum(import_s) - sum(embed_s)) * 1000 / n, 4),
        "halves": halves,
        "importer_cache": stats,
    }


# --- 2. recall latency -------------------------------------------------------------------------


STRATEGIES = ("hybrid", "semantic", "keyword")


def bench_recall(home: Path, inner, warmup: str, queries: list[str]) -> dict[str, Any]:
    """Open the store anew, time the first recall (index load), then the three strategies.

    The strategies are interleaved query by query, in rotating order, so the machine's noise
    falls on all three alike; each has its own cold cache, so every query is embedded.
    """
    open_s, chitta = timed(lambda: open_chitta(home, inner))
    try:
        first_s, first = timed(
            lambda: chitta.recall(warmup, realm=REALM, limit=LIMIT, strategy="hybrid")
        )
        caches = {s: CachedEmbedder(inner) for s in STRATEGIES}
        walls: dict[str, list[float]] = {s: [] for s in STRATEGIES}
        parts: dict[str, dict[str, list[float]]] = {s: {} for s in STRATEGIES}
        hits = dict.fromkeys(STRATEGIES, 0)
        for i, q in enumerate(queries):
            for strategy in STRATEGIES[i % 3 :] + STRATEGIES[: i % 3]:
                chitta.embedder = caches[strategy]
                seconds, result = timed(
                    lambda q=q, s=strategy: chitta.recall(q, realm=REALM, limit=LIMIT, strategy=s)
                )
                walls[strategy].append(seconds * 1000)
                hits[strategy] += len(result.hits)
                timing = dict(result.timing_ms)
                lanes = sum(v for k, v in timing.items() if k != "total")
                timing["load_hits"] = round(timing["total"] - lanes, 3)  # get_many + filter
                timing["api"] = round(seconds * 1000 - timing["total"], 3)  # validation etc.
                for key, value in timing.items():
                    parts[strategy].setdefault(key, []).append(value)
        out: dict[str, Any] = {
            "open_ms": round(open_s * 1000, 3),
            "first_recall_ms": round(first_s * 1000, 3),
            "first_recall_timing_ms": first.timing_ms,
        }
        for strategy in STRATEGIES:
            cache = caches[strategy]
            if cache.hits:
                raise SystemExit(f"{strategy}: the embedding cache was hit ({cache.stats()})")
            p = parts[strategy]
            out[strategy] = {
                "wall_ms": summary_ms(walls[strategy]),
                "timing_ms_p50": {k: pct(v, 50) for k, v in p.items()},
                "timing_ms_p95": {k: pct(v, 95) for k, v in p.items()},
                "timing_ms_mean": {k: round(statistics.fmean(v), 3) for k, v in p.items()},
                "mean_hits": round(hits[strategy] / len(queries), 2),
                "embed_cache": cache.stats(),
            }
        return out
    finally:
        chitta.close()


# --- 3. size -----------------------------------------------------------------------------------


def bench_size(chitta: Chitta, n: int) -> dict[str, Any]:
    """Bytes per memory after a WAL checkpoint, and each table's share (``dbstat``)."""
    store = chitta.store
    store._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = store.size_bytes()
    tables: dict[str, int] = {}
    for name, nbytes in store._conn.execute(
        "SELECT name, SUM(pgsize) FROM dbstat GROUP BY name"
    ).fetchall():
        group = (
            "fts"
            if name.startswith("memories_fts")
            else "embeddings"
            if name in ("embeddings", "sqlite_autoindex_embeddings_1")
            else "memories"
            if name.startswith(("memories", "sqlite_autoindex_memories"))
            else "other"
        )
        tables[group] = tables.get(group, 0) + int(nbytes)
    return {
        "size_bytes": size,
        "bytes_per_memory": round(size / n, 1),
        "raw_vector_bytes": VECTOR_BYTES,
        "per_memory_by_table": {k: round(v / n, 1) for k, v in sorted(tables.items())},
        "bytes_per_memory_without_embeddings": round((size - tables.get("embeddings", 0)) / n, 1),
        "page_size": store._conn.execute("PRAGMA page_size").fetchone()[0],
    }


# --- 4. process start to first recall ----------------------------------------------------------


def run_process(argv: list[str]) -> tuple[float, str]:
    seconds, proc = timed(
        lambda: subprocess.run(argv, capture_output=True, text=True, env=clean_env(), check=False)
    )
    if proc.returncode != 0:
        raise SystemExit(f"{shlex.join(argv)} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return seconds * 1000, proc.stdout


def bench_cli(home: Path, queries: list[str]) -> dict[str, Any]:
    """Wall time of ``chitta recall`` in a new process, and of importing the CLI."""
    chitta_bin = Path(sys.executable).with_name("chitta")
    walls, inner_ms = [], []
    for q in queries:
        argv = [str(chitta_bin), "--home", str(home), "recall", q, "--realm", REALM, "--json"]
        ms, stdout = run_process(argv)
        result = json.loads(stdout)
        if not result.get("ok") or not result.get("hits"):
            raise SystemExit(f"CLI recall returned no hits: {stdout[:500]}")
        walls.append(ms)
        inner_ms.append(result["timing_ms"]["total"])
    py = sys.executable
    imports = [run_process([py, "-c", "import chitta.cli"])[0] for _ in range(CLI_RUNS)]
    bare = [run_process([py, "-c", "pass"])[0] for _ in range(CLI_RUNS)]
    return {
        "runs": len(walls),
        "recall_process_ms_median": round(statistics.median(walls), 1),
        "recall_process_ms_all": [round(w, 1) for w in walls],
        "recall_in_process_total_ms_median": round(statistics.median(inner_ms), 3),
        "import_chitta_cli_ms_median": round(statistics.median(imports), 1),
        "python_bare_start_ms_median": round(statistics.median(bare), 1),
    }


# --- results -----------------------------------------------------------------------------------


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


def table(results: dict[str, Any]) -> str:
    """The Markdown table of the figures, for docs/benchmarks.md."""
    f, s = results["figures"], results["settings"]
    imp, rec, size, cli = f["import"], f["recall"], f["size"], f["cli"]
    h = rec["hybrid"]
    n = s["n"]
    rows = [
        ("Import throughput, `import_jsonl` (embedding included)",
         f"{imp['import_per_s']} memories/s"),
        ("Embedder alone, same texts, batches of 256", f"{imp['embed_alone_per_s']} texts/s"),
        ("Import / embedder-alone ratio", f"{imp['ratio']}"),
        ("Import overhead beyond embedding", f"{imp['overhead_ms_per_memory']} ms/memory"),
        (f"Recall hybrid, limit 10, N={n}: p50 / p95 / mean",
         f"{h['wall_ms']['p50']} / {h['wall_ms']['p95']} / {h['wall_ms']['mean']} ms"),
        ("… of which query embedding (p50)", f"{h['timing_ms_p50']['embed']} ms"),
        ("Recall semantic-only p50", f"{rec['semantic']['wall_ms']['p50']} ms"),
        ("Recall keyword-only p50", f"{rec['keyword']['wall_ms']['p50']} ms"),
        ("First recall after open (vector index load)", f"{rec['first_recall_ms']} ms"),
        ("Store size per memory (after WAL checkpoint)", f"{size['bytes_per_memory']} B"),
        ("… of which the embeddings table (raw vector 1,536 B)",
         f"{size['per_memory_by_table'].get('embeddings')} B"),
        ("… without the embeddings table", f"{size['bytes_per_memory_without_embeddings']} B"),
        (f"`chitta recall --json` in a new process, N={n} (median of {cli['runs']})",
         f"{cli['recall_process_ms_median']} ms"),
        ("`python -c \"import chitta.cli\"` (median of 5)",
         f"{cli['import_chitta_cli_ms_median']} ms"),
        ("`python -c pass` (interpreter start, median of 5)",
         f"{cli['python_bare_start_ms_median']} ms"),
    ]  # fmt: skip
    lines = ["| figure | value |", "|---|---|"]
    lines += [f"| {name} | {value} |" for name, value in rows]
    return "\n".join(lines) + "\n"


# --- main --------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=10_000, help="memories in the store")
    p.add_argument("--queries", type=int, default=200, help="distinct recall queries")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="results JSON")
    p.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo JSON file")
    return p.parse_args(argv)


def command_line() -> str:
    def rel(path: str) -> str:
        p = Path(path).absolute()
        return str(p.relative_to(Path.cwd())) if p.is_relative_to(Path.cwd()) else path

    return shlex.join([rel(sys.executable), rel(sys.argv[0]), *sys.argv[1:]])


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    load_before = loadavg()
    turns, questions = load_locomo(args.data)
    texts, dropped = memory_texts(turns, args.n)
    text_set = set(texts)
    pool = [q for q in questions if q not in text_set]
    random.Random(0).shuffle(pool)
    needed = args.queries + 1 + CLI_RUNS
    if len(pool) < needed:
        raise SystemExit(f"need {needed} distinct questions, {args.data} has {len(pool)}")
    warmup, queries, cli_queries = pool[0], pool[1 : 1 + args.queries], pool[-CLI_RUNS:]

    load_s, base = timed(lambda: build_embedder(EmbedSettings()))
    inner = base.inner
    inner.embed(["warm up the onnxruntime session", *turns[:63]])
    log(f"model loaded in {load_s * 1000:.0f} ms; {len(texts)} memories, {len(queries)} queries")

    figures: dict[str, Any] = {"embedder_load_ms": round(load_s * 1000, 1)}
    with tempfile.TemporaryDirectory(prefix="chitta-bench-") as tmp:
        home = Path(tmp)
        chitta = open_chitta(home, inner)
        try:
            figures["import"] = bench_import(chitta, inner, texts)
            figures["size"] = bench_size(chitta, len(texts))
        finally:
            chitta.close()
        log(f"import: {figures['import']}")
        figures["recall"] = bench_recall(home, inner, warmup, queries)
        log(f"recall hybrid: {figures['recall']['hybrid']['wall_ms']}")
        figures["cli"] = bench_cli(home, cli_queries)
        log(f"cli: {figures['cli']}")

    results = {
        "benchmark": "store",
        "command": command_line(),
        "commit": git_commit(),
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {**machine(), "loadavg_before": load_before, "loadavg_after": loadavg()},
        "settings": {
            "n": len(texts),
            "queries": len(queries),
            "realm": REALM,
            "limit": LIMIT,
            "import_batch": BATCH,
            "embed_settings": "EmbedSettings() defaults (onnx, default model, "
            "onnxruntime threads 0 = its own choice)",
            "embed_cache_capacity": EMBED_CACHE_SIZE,
            "data": str(args.data),
            "locomo_turns": len(turns),
            "locomo_turns_dropped_too_short": dropped,
            "content": "LoCoMo turns as 'speaker: text', ' (copy k)' suffix on repeats",
            "queries_from": "LoCoMo qa questions, distinct, shuffled with seed 0",
        },
        "figures": figures,
        "wall_s": None,
    }
    results["wall_s"] = round(time.perf_counter() - started, 1)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    markdown = table(results)
    args.out.with_suffix(".md").write_text(
        f"Command: `{results['command']}` (commit {results['commit']}, "
        f"{results['created_at']})\n\n{markdown}",
        encoding="utf-8",
    )
    print(markdown)
    log(f"wrote {args.out} and {args.out.with_suffix('.md')} in {results['wall_s']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
