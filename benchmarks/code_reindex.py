"""The one-file re-index figure (issue 20, part 5): p50/p95 of re-indexing one edited file of a
real repository, as the daemon does it after an Edit (the repository's extracts held in
memory, code/reindex.py, and its heap settled as the daemon settles it when quiet), and the
first one after a start (extracts read from the store).

    PYTHONPATH=src .venv/bin/python benchmarks/code_reindex.py \
        .venv/lib/python3.11/site-packages/huggingface_hub --edits 200

The package's sources are copied into a temporary git repository and indexed whole (with its
edges as triplets, as ``code_index`` does); then ``--edits`` times a file (chosen at random,
seed 1) gets a new function appended, and that file alone is re-indexed, its calls (and those
elsewhere of its new name) resolved and its edges' triplets kept in step. The results go to
benchmarks/results/code_reindex.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from chitta.code.answers import Resolver
from chitta.code.edges import store_edges
from chitta.code.index import index_path
from chitta.code.reindex import ExtractCache, handing_over, index_files
from chitta.daemon import memory
from chitta.store.backends import open_store


def _repo(source: Path, into: Path) -> Path:
    root = into / "repo"
    shutil.copytree(source, root / source.name, ignore=shutil.ignore_patterns("__pycache__"))
    who = ["-c", "user.email=b@example.com", "-c", "user.name=b"]
    for args in (["init", "-q"], ["add", "-A"], [*who, "commit", "-qm", "copy"]):
        subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)
    return root


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))], 1)


def _by_lines(sizes: list[tuple[int, float]]) -> dict[str, dict[str, float]]:
    """p50/p95 of the held edits by the edited file's length: up to 1,000 lines, and over."""
    out = {}
    for band, keep in (("up_to_1000", lambda n: n <= 1000), ("over_1000", lambda n: n > 1000)):
        ms = [t for n, t in sizes if keep(n)]
        if ms:
            out[band] = {"edits": len(ms), "p50_ms": _pct(ms, 50), "p95_ms": _pct(ms, 95)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="a package's source folder")
    parser.add_argument("--edits", type=int, default=200)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/code_reindex.json"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = _repo(args.source.resolve(), Path(tmp))
        store = open_store(Path(tmp) / "bench.db")
        tables, cache = store.code(), ExtractCache()
        repo = root.resolve().as_posix()

        resolver = Resolver()
        # What the code_index operation does in the daemon (ops/code.py).
        primed = handing_over(resolver, tables, "bench", repo, cache)
        started = time.perf_counter()
        first = index_path(store, "bench", root, resolve=primed)
        store_edges(store, "bench", repo, resolver.last, now=int(time.time() * 1000))
        whole_s = time.perf_counter() - started
        # The daemon's quiet second after the code_index request (daemon/memory.py): with
        # the held state frozen, no full collection walks it during an edit.
        settled = memory.settle()
        files = sorted(p for p in tables.files("bench", repo) if p.endswith(".py"))
        lines = sum((root / p).read_text(errors="replace").count("\n") for p in files)
        rng = random.Random(1)

        sizes: list[tuple[int, float]] = []  # (the edited file's lines, ms) of the held edits

        def edit(n: int, with_cache: ExtractCache) -> float:
            path = root / rng.choice(files)
            path.write_text(path.read_text() + f"\n\ndef _bench_edit_{n}():\n    return len([])\n")
            t = time.perf_counter()
            index_files(store, "bench", root, [str(path)], resolve=True, cache=with_cache)
            ms = (time.perf_counter() - t) * 1000
            if with_cache is cache:
                sizes.append((path.read_text().count("\n"), ms))
            return ms

        # The held edits first: a cold one changes a file the held cache would then read again.
        warm = [edit(i, cache) for i in range(args.edits)]
        cold = [edit(-1 - i, ExtractCache()) for i in range(5)]
        store.close()
    result = {
        "source": str(args.source), "files": len(files), "lines": lines,
        "symbols": first.symbols, "callsites": first.callsites, "whole_index_s": round(whole_s, 2),
        "edits": args.edits, "p50_ms": _pct(warm, 50), "p95_ms": _pct(warm, 95),
        "mean_ms": round(statistics.mean(warm), 1),
        "cold_p50_ms": _pct(cold, 50), "cache_loads": cache.loads, "heap_settled": settled,
        # The time grows with the edited file: the figures by its length.
        "by_lines": _by_lines(sizes),
        "load_average": [round(x, 2) for x in os.getloadavg()], "cpus": os.cpu_count(),
    }  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
