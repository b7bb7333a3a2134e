"""The build phase (a worker): a store of N memories, with its import, size and memory figures."""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

from chitta.bench.scale.backends import BUILD_MEMORY
from chitta.bench.scale.events import Events
from chitta.bench.scale.measure import (
    load_model,
    memory_mb,
    reset_peak,
    settings_of,
    store_size,
    timed,
)
from chitta.bench.scale.settings import (
    BASE_SET,
    BATCH,
    CHECKPOINT,
    PAIRED_TEXTS,
    REALM,
    BenchFailed,
    is_synthetic,
)
from chitta.bench.scale.texts import base_turns, memory_texts
from chitta.bench.scale.vectors import VectorCache, synthetic_vectors
from chitta.embed.pieces import pack, pieces_of


class TimedEmbedder:
    """An embedder that adds up the seconds spent in it."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.seconds = 0.0

    def identity(self) -> Any:
        return self.inner.identity()

    def embed(self, texts: list[str]) -> Any:
        start = time.perf_counter()
        try:
            return self.inner.embed(texts)
        finally:
            self.seconds += time.perf_counter() - start

    def stats(self) -> dict[str, int]:
        return self.inner.stats()


def _cache_path(workdir: Path, inner: Any) -> Path:
    ident = inner.identity()
    digest = hashlib.sha256(json.dumps(ident.as_dict(), sort_keys=True).encode()).hexdigest()
    name = re.sub(r"[^\w.-]", "_", ident.name)
    return workdir / f"vector-cache-{name}-{digest[:12]}.npz"


def _jsonl_line(text: str) -> str:
    return json.dumps({"type": "memory", "kind": "episode", "content": text, "realm": REALM})


def _rate_by_tenth(texts: list[str], seconds: list[float]) -> list[float]:
    """Memories/s over each tenth of the batches (fewer parts when there are fewer batches)."""
    tenths = []
    for part in np.array_split(np.arange(len(seconds)), min(10, len(seconds))):
        count = sum(len(texts[i * BATCH : (i + 1) * BATCH]) for i in part)
        tenths.append(round(count / sum(seconds[i] for i in part), 1))
    return tenths


def _import_batch(chitta: Any, lines: list[str]) -> float:
    """Seconds to ``import_jsonl`` one batch of lines, all of which must be imported."""
    from chitta.transfer import import_jsonl

    seconds, report = timed(lambda: import_jsonl(chitta, lines))
    if report.errors or report.memories != len(lines):
        raise BenchFailed(f"import failed: {report.as_dict()}")
    return seconds


def _paired_batch(
    chitta: Any, inner: Any, chunk: list[str], lines: list[str], alone_first: bool
) -> tuple[float, float]:
    """(import s, embedder-alone s) of one batch; the embedder alone goes first or second."""
    if alone_first:
        alone = timed(lambda: inner.embed(chunk))[0]
        seconds = _import_batch(chitta, lines)
    else:
        seconds = _import_batch(chitta, lines)
        alone = timed(lambda: inner.embed(chunk))[0]
    return seconds, alone


def _import_embedded(chitta: Any, inner: Any, texts: list[str], events: Events) -> dict[str, Any]:
    """``import_jsonl`` batch by batch (embedding included); on every k-th batch the embedder
    alone on the same texts, before or after the import in turn."""
    timer = TimedEmbedder(chitta.embedder)
    chitta.embedder = timer
    n = len(texts)
    every = max(1, round(n / PAIRED_TEXTS))
    import_s: list[float] = []
    embed_in_import_s: list[float] = []
    paired: list[tuple[int, float, float]] = []  # (texts, import s, embedder-alone s)
    events.task(f"N={n:,}: import (embedding included)", n)
    for b, start in enumerate(range(0, n, BATCH)):
        chunk = texts[start : start + BATCH]
        lines = [_jsonl_line(t) for t in chunk]
        before = timer.seconds
        if b % every == 0:
            alone_first = (b // every) % 2 == 0
            seconds, alone = _paired_batch(chitta, inner, chunk, lines, alone_first)
            paired.append((len(chunk), seconds, alone))
        else:
            seconds = _import_batch(chitta, lines)
        import_s.append(seconds)
        embed_in_import_s.append(timer.seconds - before)
        events.advance(len(chunk))
    chitta.embedder = timer.inner
    summary = _import_summary(texts, import_s, embed_in_import_s, paired, every)
    summary["importer_cache"] = timer.stats()
    return summary


def _import_summary(
    texts: list[str],
    import_s: list[float],
    embed_in_import_s: list[float],
    paired: list[tuple[int, float, float]],
    every: int,
) -> dict[str, Any]:
    """The embedded import's figures: totals, the paired comparison, the rate by tenth."""
    n = len(texts)
    total, embedded = sum(import_s), sum(embed_in_import_s)
    p_texts = sum(p[0] for p in paired)
    p_import, p_alone = sum(p[1] for p in paired), sum(p[2] for p in paired)
    return {
        "mode": "embedded",
        "memories": n,
        "batch": BATCH,
        "import_s": round(total, 3),
        "import_per_s": round(n / total, 1),
        "embed_in_import_s": round(embedded, 3),
        "embed_in_import_per_s": round(n / embedded, 1),
        "overhead_ms_per_memory": round((total - embedded) * 1000 / n, 4),
        "paired": {
            "every_kth_batch": every,
            "batches": len(paired),
            "texts": p_texts,
            "import_per_s": round(p_texts / p_import, 1),
            "embed_alone_per_s": round(p_texts / p_alone, 1),
            "ratio": round(p_alone / p_import, 3),
            "per_batch_ratio_p50": round(statistics.median(a / i for _, i, a in paired), 3),
        },
        "import_per_s_by_tenth": _rate_by_tenth(texts, import_s),
    }


def _real_vectors(
    texts: list[str], inner: Any, cache: VectorCache, events: Events, label: str
) -> tuple[np.ndarray, dict[str, Any]]:
    """Vectors of ``texts``: from the cache where it has them, the rest embedded (and cached)."""
    vectors, missing = cache.lookup(texts)
    if vectors is None:
        vectors = np.zeros((len(texts), inner.identity().dim), dtype=np.float32)
    embed_s = 0.0
    if missing:
        events.task(f"{label}: embedding {len(missing):,} texts (not cached)", len(missing))
        todo = [texts[i] for i in missing]
        saved = 0
        for start in range(0, len(todo), BATCH):
            chunk = todo[start : start + BATCH]
            seconds, result = timed(lambda chunk=chunk: inner.embed(chunk))
            embed_s += seconds
            vectors[missing[start : start + len(chunk)]] = result.vectors
            events.advance(len(chunk))
            done = start + len(chunk)
            if done - saved >= CHECKPOINT or done == len(todo):
                # an hour's embedding is kept in steps: a run cut short loses one step at most
                cache.add(todo[saved:done], vectors[missing[saved:done]])
                cache.save()
                saved = done
    return vectors, {
        "texts": len(texts),
        "from_cache": len(texts) - len(missing),
        "embedded": len(missing),
        "embed_s": round(embed_s, 3),
        "embed_per_s": round(len(missing) / embed_s, 1) if embed_s else None,
    }


def _real_pieces(
    texts: list[str], inner: Any, cache: VectorCache, events: Events, label: str
) -> tuple[list[bytes | None], dict[str, Any]]:
    """The pieces' vectors of ``texts`` (their sentences', embed/pieces.py), as a store that
    embedded them holds them (packed): from the cache where it has them, the rest embedded
    (and cached); ``None`` for a text without pieces."""
    split = [pieces_of(t) for t in texts]
    flat = list(dict.fromkeys(p for pieces in split for p in pieces))
    vectors, info = _real_vectors(flat, inner, cache, events, f"{label} pieces")
    row = {p: i for i, p in enumerate(flat)}
    return [pack(vectors[[row[p] for p in pieces]]) if pieces else None for pieces in split], info


def _insert_given(
    chitta: Any,
    texts: list[str],
    real: np.ndarray,
    pieces: list[bytes | None],
    seed: int,
    events: Events,
    synthetic: bool,
) -> dict[str, Any]:
    """``Store.insert`` of (memory, vector) batches, with the ``pieces`` of the first rows;
    rows past ``real`` get synthetic vectors (and no pieces)."""
    from chitta.transfer.codec import parse_memory

    n = len(texts)
    store = chitta.store
    insert_s: list[float] = []
    make_s = 0.0
    events.task(f"N={n:,}: insert (vectors given{', synthetic' if synthetic else ''})", n)
    for b, start in enumerate(range(0, n, BATCH)):
        chunk = texts[start : start + BATCH]
        t = time.perf_counter()
        if start + len(chunk) <= len(real):
            vectors = real[start : start + len(chunk)]
        else:
            rng = np.random.default_rng([seed, b])
            keep = max(0, len(real) - start)
            fake, _ = synthetic_vectors(real, len(chunk) - keep, rng)
            vectors = np.concatenate([real[start : start + keep], fake])
        make_s += time.perf_counter() - t

        def write(
            chunk: list[str] = chunk, vectors: np.ndarray = vectors, start: int = start
        ) -> None:
            now = chitta.clock()
            items = [
                (parse_memory({"type": "memory", "kind": "episode", "content": text,
                               "realm": REALM}, now, None)[0], vector)
                for text, vector in zip(chunk, vectors, strict=True)
            ]  # fmt: skip
            store.insert(items)
            given = {m.id: pieces[start + i] for i, (m, _) in enumerate(items)
                     if start + i < len(pieces) and pieces[start + i] is not None}  # fmt: skip
            store.set_pieces(given)

        insert_s.append(timed(write)[0])
        events.advance(len(chunk))
    total = sum(insert_s)
    return {
        "mode": "synthetic" if synthetic else "cached",
        "memories": n,
        "batch": BATCH,
        "import_s": round(total, 3),
        "import_per_s": round(n / total, 1),
        "real_vectors": min(n, len(real)),
        "synthetic_vectors": max(0, n - len(real)),
        "vector_generation_s": round(make_s, 3),
        "import_per_s_by_tenth": _rate_by_tenth(texts, insert_s),
    }


def _cache_stored_vectors(store: Any, cache: VectorCache) -> None:
    """Add every stored (content, vector) to the vector cache and save it, for a rerun."""
    memories = store.iter_memories(include_deleted=True, batch=10_000)
    for batch in iter(lambda: list(itertools.islice(memories, 10_000)), []):
        vectors = store.vectors_for([m.id for m in batch])
        kept = [m for m in batch if m.id in vectors]
        if kept:
            cache.add([m.content for m in kept], np.stack([vectors[m.id] for m in kept]))
    cache.save()


def _hnsw_build(store: Any, n: int, events: Events) -> dict[str, Any]:
    """The seconds to build the store's HNSW index again over every vector (``REINDEX``, as
    ``CREATE INDEX`` on the full table), with :data:`BUILD_MEMORY` for the build. The method
    is the PostgreSQL store's own (store/postgres/store.py), not the protocol's: a SQLite
    store builds its graphs in process on the first search (the first-recall figure)."""
    rebuild = store.rebuild_vector_index
    events.task(f"N={n:,}: HNSW index build (REINDEX)", 1)
    seconds, info = timed(lambda: rebuild(BUILD_MEMORY))
    events.advance(1)
    return {**info, "seconds": round(seconds, 3), "vectors": store.vector_count()}


def build(spec: dict[str, Any], events: Events) -> dict[str, Any]:
    """Build the store of ``spec["n"]`` memories; the import, size and memory figures."""
    from chitta.api import Chitta
    from chitta.bench import locomo
    from chitta.embed.cache import CachedEmbedder

    n, seed = spec["n"], spec["seed"]
    rss: dict[str, Any] = {"start": memory_mb()}
    t0 = time.perf_counter()
    turns = base_turns(locomo.load(Path(spec["data"])))
    texts = memory_texts(turns, n, seed)
    text_s = time.perf_counter() - t0
    load_s, inner = load_model()
    rss["model_loaded"] = memory_mb()
    cache = VectorCache(_cache_path(Path(spec["workdir"]), inner))
    synthetic = is_synthetic(n)
    vectors_info = None
    hnsw = None
    with Chitta.open(settings_of(spec), embedder=CachedEmbedder(inner),
                     through_daemon=False) as chitta:  # fmt: skip
        if synthetic or spec["reuse_vectors"]:
            count = min(n, BASE_SET) if synthetic else n
            real, vectors_info = _real_vectors(texts[:count], inner, cache, events,
                                               f"N={n:,}")  # fmt: skip
            pieces, vectors_info["pieces"] = _real_pieces(texts[:count], inner, cache, events,
                                                          f"N={n:,}")  # fmt: skip
            rss["before_import"] = memory_mb()
            rss["peak_reset"] = reset_peak()
            imported = _insert_given(chitta, texts, real, pieces, seed, events, synthetic)
            del real, pieces
        else:
            rss["before_import"] = memory_mb()
            rss["peak_reset"] = reset_peak()
            imported = _import_embedded(chitta, inner, texts, events)
        rss["after_import"] = memory_mb()
        size = store_size(chitta.store, n)
        if imported["mode"] == "embedded":  # keep what was embedded for a rerun
            _cache_stored_vectors(chitta.store, cache)
        if spec.get("backend") == "postgresql":
            hnsw = _hnsw_build(chitta.store, n, events)
    lengths = [len(t) for t in texts]
    return {
        "n": n,
        "content": {
            "locomo_turns": min(n, len(turns)),
            "recombined": max(0, n - len(turns)),
            "mean_chars": round(statistics.fmean(lengths), 1),
            "text_generation_s": round(text_s, 3),
        },
        "synthetic_vectors": synthetic,
        "embedder_load_ms": round(load_s * 1000, 1),
        "real_vectors": vectors_info,
        "import": imported,
        "size": size,
        "hnsw_build": hnsw,
        "rss_mb": rss,
        "vector_cache": {"path": str(cache.path), "entries": len(cache)},
    }
