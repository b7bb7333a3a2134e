"""``chitta bench code --speed PATH``: how fast code is indexed and read back.

On each backend asked for, a fresh store: a first index of the repository or folder PATH
through the real indexer with the resolver's answers (:func:`chitta.code.index.index_path`,
:func:`chitta.code.answers.resolve_answers`), then ``find_symbol`` (exact name, qualified
name, prefix) and ``symbol_callers`` / ``symbol_callees`` (depth 1 and 3) timed as the
operations read them (:meth:`CodeTables.find_symbols`, :meth:`CodeTables.callers`,
:meth:`CodeTables.callees`) on symbols sampled from the index, and the store's bytes per
symbol (a fresh store holding only the code, its write-ahead log folded in).

Embeddings: "with embeddings" is the first index plus the real embedder (MiniLM, the store's
default) embedding what the index embeds of each symbol (code/search.py ``embed_text``), in
the index's slices of like lengths (``like_lengths``), measured on a uniform sample of the
symbols and added at that rate.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from chitta.bench.environment import loadavg
from chitta.bench.score import summary_ms
from chitta.store.backends import drop_database, fresh_database, open_store
from chitta.store.base import Store
from chitta.store.code import RESOLVED, StoredSymbol

REALM = "bench"
#: The PostgreSQL database made (and dropped) for the run.
DATABASE = "chitta_code_speed"


def _all_symbols(store: Store, repo: str) -> list[StoredSymbol]:
    tables = store.code()
    return [s for path in sorted(tables.files(REALM, repo))
            for s in tables.symbols_in(REALM, repo, path)]  # fmt: skip


def _timed_ms(fn: Callable[[], Any]) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000


def first_index(store: Store, root: Path) -> dict[str, Any]:
    """A first index of ``root`` into ``store``: its figures, the resolver's share timed."""
    from chitta.code.answers import resolve_answers
    from chitta.code.index import index_path

    resolver = {"seconds": 0.0}

    def resolve(extracts: Sequence[Any]) -> Any:
        started = time.perf_counter()
        out = resolve_answers(extracts)
        resolver["seconds"] += time.perf_counter() - started
        return out

    load = loadavg()
    started = time.perf_counter()
    report = index_path(store, REALM, root, resolve=resolve)
    seconds = time.perf_counter() - started
    lines = sum(e.lines for e in store.code().extracts(REALM, report.repo))
    return {
        "repo": report.repo,
        "files": report.indexed,
        "skipped": report.skipped,
        "lines": lines,
        "symbols": report.symbols,
        "callsites": report.callsites,
        "parse_errors": report.parse_errors,
        "resolution": report.resolution,
        "seconds": round(seconds, 2),
        "resolve_seconds": round(resolver["seconds"], 2),
        "lines_per_s": round(lines / seconds),
        "symbols_per_s": round(report.symbols / seconds),
        "loadavg_before": load,
        "loadavg_after": loadavg(),
    }


def embedding_cost(symbols: Sequence[StoredSymbol], sample: int, seed: int = 7) -> dict[str, Any]:
    """The real embedder's rate on a uniform sample of ``symbols``' texts (all when
    ``sample`` is 0 or more than there are)."""
    from chitta.code.search import EMBED_BATCH, embed_text, like_lengths
    from chitta.config import EmbedSettings
    from chitta.embed.loader import build_embedder

    inner = build_embedder(EmbedSettings()).inner  # not the cache: every text is new
    inner.embed(["warm up the onnxruntime session", "a second text of a few words"])
    chosen = list(symbols)
    if 0 < sample < len(chosen):
        chosen = random.Random(seed).sample(chosen, sample)
    texts = [embed_text(s) for s in chosen]
    load = loadavg()
    started = time.perf_counter()
    for batch in like_lengths(texts):
        inner.embed([texts[i] for i in batch])
    seconds = time.perf_counter() - started
    return {
        "model": inner.identity().name,
        "texts": len(texts),
        "mean_chars": round(sum(map(len, texts)) / max(1, len(texts)), 1),
        "seconds": round(seconds, 2),
        "symbols_per_s": round(len(texts) / seconds, 1),
        "batch": EMBED_BATCH,
        "order": "like lengths",
        "loadavg_before": load,
        "loadavg_after": loadavg(),
    }


def query_figures(store: Store, symbols: Sequence[StoredSymbol], queries: int,
                  seed: int = 11) -> dict[str, Any]:  # fmt: skip
    """p50/p95 of find_symbol and callers/callees on ``queries`` symbols sampled uniformly,
    and callers/callees again on symbols with at least one resolved call in or out."""
    tables = store.code()
    rng = random.Random(seed)
    sample = rng.sample(list(symbols), min(queries, len(symbols)))
    resolved = tables.callsites(REALM, states=(RESOLVED,))
    linked = {c.caller_id for c in resolved} | {c.target_id for c in resolved}
    with_calls = [s for s in symbols if s.id in linked]
    called = rng.sample(with_calls, min(queries, len(with_calls)))
    load = loadavg()

    def prefix_of(name: str) -> str:
        return name[: max(3, len(name) // 2)]

    def find(word: str, prefix: bool = False) -> Callable[[], Any]:
        return lambda: tables.find_symbols(REALM, word, prefix=prefix, limit=20)

    def walk(fn: Callable[..., Any], sid: str, depth: int) -> Callable[[], Any]:
        return lambda: fn(REALM, sid, depth, 50)

    figures = {
        "find_symbol_exact": [_timed_ms(find(s.symbol.name)) for s in sample],
        "find_symbol_qualified": [_timed_ms(find(s.symbol.qualified)) for s in sample],
        "find_symbol_prefix": [_timed_ms(find(prefix_of(s.symbol.name), True)) for s in sample],
    }
    for depth in (1, 3):
        for name, fn in (("callers", tables.callers), ("callees", tables.callees)):
            figures[f"{name}_depth{depth}"] = [_timed_ms(walk(fn, s.id, depth)) for s in sample]
            figures[f"{name}_depth{depth}_linked"] = [
                _timed_ms(walk(fn, s.id, depth)) for s in called
            ]
    out: dict[str, Any] = {k: summary_ms(v) for k, v in figures.items()}
    out["queries"] = len(sample)
    out["linked_queries"] = len(called)
    out["loadavg_before"] = load
    out["loadavg_after"] = loadavg()
    return out


def size_figures(store: Store, symbols: int) -> dict[str, Any]:
    """The store's bytes (a fresh store: only the code) per symbol."""
    store.disk_usage()  # on SQLite: folds the write-ahead log into the file first
    size = store.size_bytes()
    return {"size_bytes": size, "bytes_per_symbol": round(size / max(1, symbols), 1)}


def measure(store: Store, root: Path, *, queries: int, embed_sample: int | None) -> dict[str, Any]:
    """Every figure on one fresh store; ``embed_sample`` None: no embedding cost."""
    index = first_index(store, root)
    symbols = _all_symbols(store, index["repo"])
    out: dict[str, Any] = {"index": index}
    if embed_sample is not None:
        cost = embedding_cost(symbols, embed_sample)
        seconds = index["seconds"] + len(symbols) / cost["symbols_per_s"]
        out["embedding"] = cost
        out["index_with_embeddings"] = {
            "seconds": round(seconds, 1),
            "lines_per_s": round(index["lines"] / seconds),
            "symbols_per_s": round(index["symbols"] / seconds),
        }
    out["queries"] = query_figures(store, symbols, queries)
    out["size"] = size_figures(store, len(symbols))
    return out


def run(root: Path, work: Path, *, backends: Sequence[str], database_url: str | None,
        queries: int, embed_sample: int) -> dict[str, Any]:  # fmt: skip
    """The figures per backend (the embedding cost once, on the first)."""
    out: dict[str, Any] = {"path": str(root), "backends": {}}
    for n, backend in enumerate(backends):
        sample = embed_sample if n == 0 and embed_sample >= 0 else None
        if backend == "sqlite":
            with open_store(work / "code.db") as store:
                out["backends"][backend] = measure(store, root, queries=queries,
                                                   embed_sample=sample)  # fmt: skip
            continue
        from chitta.bench.scale.backends import postgres_server

        with postgres_server(database_url, work) as server:
            url = fresh_database(server.url, DATABASE)
            try:
                with open_store(url, home=work) as store:
                    figures = measure(store, root, queries=queries, embed_sample=sample)
                figures["server"] = server.describe()
                out["backends"][backend] = figures
            finally:
                drop_database(server.url, DATABASE)
    return out


def markdown(record: dict[str, Any]) -> str:
    """The speed table: index rates, the query latencies, the size per symbol, with load."""
    rows = ["### Speed (`chitta bench code --speed`)", ""]
    for backend, f in record["speed"]["backends"].items():
        i, q, z = f["index"], f["queries"], f["size"]
        rows.append(
            f"**{backend}**: first index of {i['files']:,} files, {i['lines']:,} lines, "
            f"{i['symbols']:,} symbols, {i['callsites']:,} callsites in {i['seconds']} s "
            f"(resolver {i['resolve_seconds']} s): **{i['lines_per_s']:,} lines/s, "
            f"{i['symbols_per_s']:,} symbols/s** (load {_load(i)}). "
            f"Store: {z['bytes_per_symbol']:,} bytes per symbol ({z['size_bytes']:,} bytes)."
        )
        if "embedding" in f:
            e, w = f["embedding"], f["index_with_embeddings"]
            rows.append(
                f"With embeddings (the embedder on {e['texts']:,} sampled symbol texts, "
                f"{e['symbols_per_s']} symbols/s, load {_load(e)}, added for every symbol): "
                f"**{w['lines_per_s']:,} lines/s, {w['symbols_per_s']:,} symbols/s** "
                f"({w['seconds']} s)."
            )
        rows += ["", f"| {backend}: ms ({q['queries']} sampled symbols; linked: "
                 f"{q['linked_queries']} with a resolved call; load {_load(q)}) | p50 | p95 |",
                 "|---|---|---|"]  # fmt: skip
        for name, s in q.items():
            if isinstance(s, dict) and "p50" in s:
                rows.append(f"| {name} | {s['p50']:.3f} | {s['p95']:.3f} |")
        rows.append("")
    return "\n".join(rows) + "\n"


def _load(f: dict[str, Any]) -> str:
    before, after = f.get("loadavg_before") or [], f.get("loadavg_after") or []
    return f"{before[0] if before else '?'} → {after[0] if after else '?'}"
