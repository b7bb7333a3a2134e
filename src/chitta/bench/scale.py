"""The scale benchmark (``chitta bench scale --n 10000,100000``): what a store costs as it grows.

For each store size N it builds a store of N memories in a fresh ``CHITTA_HOME`` and measures:

1. **import**: memories/s through ``import_jsonl`` in the importer's batches of 256, embedding
   included, with the embedder alone on the same texts as the comparison (paired batches,
   alternating which goes first; every batch up to 10,000 texts, then every k-th batch so that
   about 10,000 texts are paired). The time spent inside the embedder during the import is
   timed as well, so the import's own cost beyond embedding is known for every batch.
2. **size**: the store file after a WAL checkpoint, per memory, split by table (``dbstat``).
3. **recall**: in a new process, the first recall after opening the store (it builds the
   in-memory vector index), then hybrid / semantic / keyword recall, limit 10, interleaved query
   by query in rotating order, each strategy with its own cold embedding cache (checked: no
   hits), so every query is embedded.
4. **memory (RSS)**: ``VmRSS`` / ``VmHWM`` from ``/proc/self/status`` in the recall process:
   with the model loaded and the store not open, after the first recall (index loaded), after
   the queries, and the peak while opening and loading (the peak is reset after the model
   load where Linux allows it). The import process's figures are recorded the same way.
5. **start-up**: a new ``chitta --home H recall "…" --realm bench --json`` process, wall time
   from spawn to exit and its peak RSS (``wait4``), median of 5 distinct queries.

Build and recall run in a fresh subprocess per N (``python -m chitta.bench.scale PHASE SPEC``),
so each N's memory figures start from the same empty process. Content is LoCoMo's turns
(``memory_text``: ``speaker: text`` plus any image caption), then distinct recombinations of
two turns: sentences from the start of one turn (with its speaker) followed by sentences from
the end of another, drawn with a seeded RNG (:func:`memory_texts`). Queries are distinct LoCoMo
questions, shuffled with the same seed.

From ``SYNTHETIC_FROM`` memories on (200,000), embedding every text would take hours, so the
store's vectors are partly synthetic: the first ``BASE_SET`` (20,000) texts are embedded (or
taken from the vector cache), and every later memory gets a real base vector plus Gaussian noise
(sd ``NOISE_SD`` per dimension), re-normalised (:func:`synthetic_vectors`). Those memories still
have distinct recombined texts (the FTS5 index is real) and are written with ``Store.insert``
directly, so the import figure there measures the store and its indexes, not the embedder.
Queries stay real and are embedded. The results say which N used synthetic vectors.

Vectors the benchmark computes are kept in ``<workdir>/vector-cache-<model>.npz`` keyed by a
hash of each text, so a rerun with the same ``--workdir`` need not embed the base set again;
``--reuse-vectors`` also builds real-text stores from the cache (the import figure then
excludes embedding, and the results say so).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import re
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import numpy as np

from chitta.bench.score import percentile
from chitta.config import MIN_CONTENT_CHARS
from chitta.errors import BadArgument, ChittaError

REALM = "bench"
LIMIT = 10
STRATEGIES = ("hybrid", "semantic", "keyword")
SEED = 0
BATCH = 256  # the importer's batch (chitta.transfer.importer.BATCH)
SYNTHETIC_FROM = 200_000
BASE_SET = 20_000
NOISE_SD = 0.02
PAIRED_TEXTS = 10_000
CLI_RUNS = 5
MIN_N, MAX_N = 100, 5_000_000
MB = 1024 * 1024


class BenchFailed(ChittaError):
    """A benchmark step (a worker process or a ``chitta`` call) did not finish."""

    code = "bench_failed"


# --- sizes ---------------------------------------------------------------------------------------


def parse_sizes(value: str) -> list[int]:
    """``"10000,100k,1M"`` → ``[10000, 100000, 1000000]`` (sorted, distinct)."""
    sizes = set()
    for raw in value.split(","):
        word = raw.strip().replace("_", "").lower()
        if not word:
            continue
        scale = {"k": 1_000, "m": 1_000_000}.get(word[-1], 1)
        digits = word[:-1] if scale > 1 else word
        try:
            n = int(float(digits) * scale) if "." in digits else int(digits) * scale
        except ValueError:
            raise BadArgument(f"--n: {raw.strip()!r} is not a number of memories") from None
        if not MIN_N <= n <= MAX_N:
            raise BadArgument(f"--n: {n:,} is outside {MIN_N:,}–{MAX_N:,}")
        sizes.add(n)
    if not sizes:
        raise BadArgument("--n needs at least one store size, e.g. --n 10000,100000")
    return sorted(sizes)


def is_synthetic(n: int) -> bool:
    return n >= SYNTHETIC_FROM


# --- text ----------------------------------------------------------------------------------------

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def split_turn(text: str) -> tuple[str, list[str]]:
    """``"Mel: Hi. How are you?"`` → ``("Mel", ["Hi.", "How are you?"])``."""
    speaker, sep, body = text.partition(": ")
    if not sep:
        speaker, body = "", text
    return speaker, [s for s in _SENTENCE_END.split(body.strip()) if s]


def base_turns(dataset: Any) -> list[str]:
    """LoCoMo's distinct turn texts (``memory_text``) long enough to store, in file order."""
    texts = (t.memory_text.strip() for c in dataset.conversations for t in c.turns)
    return list(dict.fromkeys(t for t in texts if len(t) >= MIN_CONTENT_CHARS))


def recombine(a: str, b: str, rng: random.Random) -> str:
    """Sentences from the start of turn ``a`` (with its speaker) then from the end of ``b``:
    up to half of each (at least one sentence), so a result is about one turn long."""
    speaker, first = split_turn(a)
    _, second = split_turn(b)
    head = first[: rng.randint(1, max(1, math.ceil(len(first) / 2)))]
    tail = second[rng.randint(len(second) // 2, len(second) - 1) :] if second else []
    body = " ".join(head + tail)
    return f"{speaker}: {body}" if speaker else body


def iter_texts(turns: Sequence[str], seed: int = SEED) -> Iterator[str]:
    """Distinct texts without end: ``turns`` themselves, then recombinations of two of them
    (deterministic for ``seed``; any prefix of the stream is the same for every length)."""
    if len(turns) < 2:
        raise BadArgument("need at least two distinct turns to recombine")
    seen = set(turns)
    yield from turns
    rng = random.Random(seed)
    count = len(turns)
    misses = 0
    while misses < 10_000:
        i, j = rng.randrange(count), rng.randrange(count)
        text = recombine(turns[i], turns[j], rng)
        if i == j or len(text) < MIN_CONTENT_CHARS or text in seen:
            misses += 1
            continue
        misses = 0
        seen.add(text)
        yield text
    raise BadArgument(f"{count} turns give no more than {len(seen):,} distinct texts")


def memory_texts(turns: Sequence[str], n: int, seed: int = SEED) -> list[str]:
    """The first ``n`` texts of :func:`iter_texts`."""
    stream = iter_texts(list(dict.fromkeys(turns)), seed)
    return [next(stream) for _ in range(n)]


def query_pool(dataset: Any, seed: int = SEED) -> list[str]:
    """LoCoMo's distinct questions, shuffled with ``seed``."""
    questions = list(dict.fromkeys(q.question.strip() for q in dataset.questions if q.question))
    random.Random(seed).shuffle(questions)
    return questions


# --- vectors -------------------------------------------------------------------------------------


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.where(norms == 0, 1, norms)).astype(np.float32)


def synthetic_vectors(
    base: np.ndarray, count: int, rng: np.random.Generator, noise_sd: float = NOISE_SD
) -> tuple[np.ndarray, np.ndarray]:
    """``count`` unit vectors, each a random row of ``base`` plus Gaussian noise (``noise_sd``
    per dimension), re-normalised; and the index of each one's source row."""
    sources = rng.integers(0, len(base), size=count)
    noise = rng.normal(0.0, noise_sd, size=(count, base.shape[1])).astype(np.float32)
    return unit_rows(base[sources] + noise), sources


def text_key(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()


class VectorCache:
    """Vectors by text hash in one ``.npz`` file (``keys``: n×16 bytes, ``vectors``: n×dim)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._rows: dict[bytes, int] = {}
        self._vectors = np.zeros((0, 0), dtype=np.float32)
        if path.is_file():
            with np.load(path) as data:
                keys, self._vectors = data["keys"], data["vectors"]
            self._rows = {k.tobytes(): i for i, k in enumerate(keys)}
        self._new_keys: list[bytes] = []
        self._new: list[np.ndarray] = []

    def __len__(self) -> int:
        return len(self._rows) + len(self._new_keys)

    def lookup(self, texts: Sequence[str]) -> tuple[np.ndarray | None, list[int]]:
        """(vectors of ``texts``, rows left zero where missing; positions of the missing)."""
        if not self._rows:
            return None, list(range(len(texts)))
        out = np.zeros((len(texts), self._vectors.shape[1]), dtype=np.float32)
        missing = []
        for i, text in enumerate(texts):
            row = self._rows.get(text_key(text))
            if row is None:
                missing.append(i)
            else:
                out[i] = self._vectors[row]
        return out, missing

    def add(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        known = set(self._rows) | set(self._new_keys)
        for text, vector in zip(texts, vectors, strict=True):
            key = text_key(text)
            if key not in known:
                known.add(key)
                self._new_keys.append(key)
                self._new.append(np.asarray(vector, dtype=np.float32))

    def save(self) -> None:
        if not self._new_keys:
            return
        keys = [*self._rows, *self._new_keys]
        new = np.stack(self._new)
        vectors = np.concatenate([self._vectors, new]) if len(self._rows) else new
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp.npz")
        np.savez(tmp, keys=np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(-1, 16),
                 vectors=vectors)  # fmt: skip
        tmp.replace(self.path)
        self._rows = {k: i for i, k in enumerate(keys)}
        self._vectors, self._new_keys, self._new = vectors, [], []


# --- measuring -----------------------------------------------------------------------------------


def summary_ms(values: Sequence[float]) -> dict[str, float]:
    """p50 / p95 / mean / min / max of millisecond figures, rounded to µs."""
    if not values:
        return {"p50": 0.0, "p95": 0.0, "mean": 0.0, "min": 0.0, "max": 0.0}
    return {
        "p50": round(percentile(values, 50), 3),
        "p95": round(percentile(values, 95), 3),
        "mean": round(statistics.fmean(values), 3),
        "min": round(min(values), 3),
        "max": round(max(values), 3),
    }


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """(seconds, result) of one call."""
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def memory_mb() -> dict[str, float]:
    """This process's resident set now (``VmRSS``) and its peak (``VmHWM``), in MiB."""
    found: dict[str, float] = {}
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith(("VmRSS:", "VmHWM:")):
                    found[line[:5]] = round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    peak = found.get("VmHWM")
    if peak is None:  # ru_maxrss is in KiB on Linux
        peak = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return {"rss": found.get("VmRSS", peak), "peak": peak}


def reset_peak() -> bool:
    """Reset ``VmHWM`` to the current RSS (Linux ≥ 4.0); whether that worked."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def clean_env() -> dict[str, str]:
    """The environment without CHITTA_* / CC_SOUL_* settings, so only defaults apply."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("CHITTA_", "CC_SOUL_"))}


def loadavg() -> list[float] | None:
    from chitta.bench.environment import loadavg as read

    return read()


# --- worker: build a store -----------------------------------------------------------------------


@dataclass
class Events:
    """Progress and the result, one JSON object a line, on the worker's own pipe."""

    out: IO[str]

    def emit(self, **event: Any) -> None:
        self.out.write(json.dumps(event) + "\n")
        self.out.flush()

    def task(self, description: str, total: int) -> None:
        self.emit(event="task", description=description, total=total)

    def advance(self, by: int) -> None:
        self.emit(event="advance", by=by)


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


def _load_model() -> tuple[float, Any]:
    """(seconds, the raw ONNX embedder), warmed up on a first batch."""
    from chitta.config import EmbedSettings
    from chitta.embed.loader import build_embedder

    seconds, cached = timed(lambda: build_embedder(EmbedSettings()))
    cached.inner.embed(["warm up the onnxruntime session", "a second text of a few words"])
    return seconds, cached.inner


def _cache_path(workdir: Path, inner: Any) -> Path:
    ident = inner.identity()
    digest = hashlib.sha256(json.dumps(ident.as_dict(), sort_keys=True).encode()).hexdigest()
    name = re.sub(r"[^\w.-]", "_", ident.name)
    return workdir / f"vector-cache-{name}-{digest[:12]}.npz"


def _jsonl_line(text: str) -> str:
    return json.dumps({"type": "memory", "kind": "episode", "content": text, "realm": REALM})


def _import_embedded(chitta: Any, inner: Any, texts: list[str], events: Events) -> dict[str, Any]:
    """``import_jsonl`` batch by batch (embedding included); on every k-th batch the embedder
    alone on the same texts, before or after the import in turn."""
    from chitta.transfer import import_jsonl

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

        def run_import(lines: list[str] = lines) -> float:
            seconds, report = timed(lambda: import_jsonl(chitta, lines))
            if report.errors or report.memories != len(lines):
                raise BenchFailed(f"import failed: {report.as_dict()}")
            return seconds

        if b % every == 0:
            if (b // every) % 2 == 0:
                alone = timed(lambda chunk=chunk: inner.embed(chunk))[0]
                seconds = run_import()
            else:
                seconds = run_import()
                alone = timed(lambda chunk=chunk: inner.embed(chunk))[0]
            paired.append((len(chunk), seconds, alone))
        else:
            seconds = run_import()
        import_s.append(seconds)
        embed_in_import_s.append(timer.seconds - before)
        events.advance(len(chunk))
    chitta.embedder = timer.inner
    total, embedded = sum(import_s), sum(embed_in_import_s)
    p_texts = sum(p[0] for p in paired)
    p_import, p_alone = sum(p[1] for p in paired), sum(p[2] for p in paired)
    tenths = []
    for part in np.array_split(np.arange(len(import_s)), min(10, len(import_s))):
        count = sum(len(texts[i * BATCH : (i + 1) * BATCH]) for i in part)
        tenths.append(round(count / sum(import_s[i] for i in part), 1))
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
        "import_per_s_by_tenth": tenths,
        "importer_cache": timer.stats(),
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
        for start in range(0, len(todo), BATCH):
            chunk = todo[start : start + BATCH]
            seconds, result = timed(lambda chunk=chunk: inner.embed(chunk))
            embed_s += seconds
            vectors[missing[start : start + len(chunk)]] = result.vectors
            events.advance(len(chunk))
        cache.add(todo, vectors[missing])
        cache.save()
    return vectors, {
        "texts": len(texts),
        "from_cache": len(texts) - len(missing),
        "embedded": len(missing),
        "embed_s": round(embed_s, 3),
        "embed_per_s": round(len(missing) / embed_s, 1) if embed_s else None,
    }


def _insert_given(
    chitta: Any, texts: list[str], real: np.ndarray, seed: int, events: Events, synthetic: bool
) -> dict[str, Any]:
    """``Store.insert`` of (memory, vector) batches; rows past ``real`` get synthetic vectors."""
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

        def write(chunk: list[str] = chunk, vectors: np.ndarray = vectors) -> None:
            now = chitta.clock()
            items = [
                (parse_memory({"type": "memory", "kind": "episode", "content": text,
                               "realm": REALM}, now, None)[0], vector)
                for text, vector in zip(chunk, vectors, strict=True)
            ]  # fmt: skip
            store.insert(items)

        insert_s.append(timed(write)[0])
        events.advance(len(chunk))
    total = sum(insert_s)
    tenths = []
    for part in np.array_split(np.arange(len(insert_s)), min(10, len(insert_s))):
        count = sum(len(texts[i * BATCH : (i + 1) * BATCH]) for i in part)
        tenths.append(round(count / sum(insert_s[i] for i in part), 1))
    return {
        "mode": "synthetic" if synthetic else "cached",
        "memories": n,
        "batch": BATCH,
        "import_s": round(total, 3),
        "import_per_s": round(n / total, 1),
        "real_vectors": min(n, len(real)),
        "synthetic_vectors": max(0, n - len(real)),
        "vector_generation_s": round(make_s, 3),
        "import_per_s_by_tenth": tenths,
    }


def _size(store: Any, n: int) -> dict[str, Any]:
    """Bytes per memory after a WAL checkpoint, and each table's share (``dbstat``)."""
    conn = store._conn
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = store.size_bytes()
    tables: dict[str, int] = {}
    for name, nbytes in conn.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name"):
        if name.startswith("memories_fts"):
            group = "fts"
        elif name in ("embeddings", "sqlite_autoindex_embeddings_1"):
            group = "embeddings"
        elif name.startswith(("memories", "sqlite_autoindex_memories")):
            group = "memories"
        else:
            group = "other"
        tables[group] = tables.get(group, 0) + int(nbytes)
    return {
        "size_bytes": size,
        "bytes_per_memory": round(size / n, 1),
        "raw_vector_bytes": store.model_identity().dim * 4,
        "per_memory_by_table": {k: round(v / n, 1) for k, v in sorted(tables.items())},
        "bytes_per_memory_without_embeddings": round((size - tables.get("embeddings", 0)) / n, 1),
        "page_size": conn.execute("PRAGMA page_size").fetchone()[0],
    }


def build(spec: dict[str, Any], events: Events) -> dict[str, Any]:
    """Build the store of ``spec["n"]`` memories; the import, size and memory figures."""
    from chitta.api import Chitta
    from chitta.bench import locomo
    from chitta.config import Settings
    from chitta.embed.cache import CachedEmbedder

    n, seed, home = spec["n"], spec["seed"], Path(spec["home"])
    rss: dict[str, Any] = {"start": memory_mb()}
    t0 = time.perf_counter()
    turns = base_turns(locomo.load(Path(spec["data"])))
    texts = memory_texts(turns, n, seed)
    text_s = time.perf_counter() - t0
    load_s, inner = _load_model()
    rss["model_loaded"] = memory_mb()
    cache = VectorCache(_cache_path(Path(spec["workdir"]), inner))
    synthetic = is_synthetic(n)
    vectors_info = None
    with Chitta.open(Settings(home=home), embedder=CachedEmbedder(inner)) as chitta:
        if synthetic or spec["reuse_vectors"]:
            count = min(n, BASE_SET) if synthetic else n
            real, vectors_info = _real_vectors(texts[:count], inner, cache, events,
                                               f"N={n:,}")  # fmt: skip
            rss["before_import"] = memory_mb()
            rss["peak_reset"] = reset_peak()
            imported = _insert_given(chitta, texts, real, seed, events, synthetic)
            del real
        else:
            rss["before_import"] = memory_mb()
            rss["peak_reset"] = reset_peak()
            imported = _import_embedded(chitta, inner, texts, events)
        rss["after_import"] = memory_mb()
        size = _size(chitta.store, n)
        if imported["mode"] == "embedded":  # keep what was embedded for a rerun
            rows = chitta.store._conn.execute(
                "SELECT m.content, e.vector FROM memories m JOIN embeddings e ON e.memory_id = m.id"
            )
            for batch in iter(lambda: rows.fetchmany(10_000), []):
                found = np.stack([np.frombuffer(r[1], dtype=np.float32) for r in batch])
                cache.add([r[0] for r in batch], found)
            cache.save()
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
        "rss_mb": rss,
        "vector_cache": {"path": str(cache.path), "entries": len(cache)},
    }


# --- worker: recall ------------------------------------------------------------------------------


def recall_figures(spec: dict[str, Any], events: Events) -> dict[str, Any]:
    """Open the store anew, time the first recall (index load), then the three strategies.

    The strategies are interleaved query by query, in rotating order, so the machine's noise
    falls on all three alike; each has its own cold cache, so every query is embedded.
    """
    from chitta.api import Chitta
    from chitta.config import Settings
    from chitta.embed.cache import CachedEmbedder

    rss: dict[str, Any] = {"start": memory_mb()}
    _, inner = _load_model()
    rss["model_loaded"] = memory_mb()
    rss["peak_reset"] = reset_peak()
    queries: list[str] = spec["queries"]
    events.task(f"N={spec['n']:,}: recall ({len(queries)} queries × 3 strategies)",
                1 + len(queries))  # fmt: skip
    open_s, chitta = timed(
        lambda: Chitta.open(Settings(home=Path(spec["home"])), embedder=CachedEmbedder(inner))
    )
    try:
        first_s, first = timed(
            lambda: chitta.recall(spec["warmup"], realm=REALM, limit=LIMIT, strategy="hybrid")
        )
        rss["after_first_recall"] = memory_mb()
        events.advance(1)
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
            events.advance(1)
        rss["after_queries"] = memory_mb()
        out: dict[str, Any] = {
            "queries": len(queries),
            "open_ms": round(open_s * 1000, 3),
            "first_recall_ms": round(first_s * 1000, 3),
            "first_recall_timing_ms": first.timing_ms,
            "vectors_in_index": len(chitta.store.vector_index()),
        }
        for strategy in STRATEGIES:
            cache = caches[strategy]
            if cache.hits:
                raise BenchFailed(f"{strategy}: the embedding cache was hit ({cache.stats()})")
            p = parts[strategy]
            out[strategy] = {
                "wall_ms": summary_ms(walls[strategy]),
                "timing_ms_p50": {k: round(percentile(v, 50), 3) for k, v in p.items()},
                "timing_ms_p95": {k: round(percentile(v, 95), 3) for k, v in p.items()},
                "mean_hits": round(hits[strategy] / max(1, len(queries)), 2),
                "embed_cache": cache.stats(),
            }
    finally:
        chitta.close()
    dim = inner.identity().dim
    rss["vector_matrix_mb"] = round(out["vectors_in_index"] * dim * 4 / MB, 1)
    rss["index_delta"] = round(rss["after_first_recall"]["rss"] - rss["model_loaded"]["rss"], 1)
    out["rss_mb"] = rss
    return out


PHASES: dict[str, Callable[[dict[str, Any], Events], dict[str, Any]]] = {
    "build": build,
    "recall": recall_figures,
}


def worker_main(argv: Sequence[str]) -> int:
    """``python -m chitta.bench.scale PHASE SPEC.json``: events on stdout, logs on stderr."""
    phase, spec_path = argv
    # Events get their own copy of stdout; anything else printing to fd 1 goes to the log.
    events = Events(os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8"))
    os.dup2(2, 1)
    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    started = time.perf_counter()
    result = PHASES[phase](spec, events)
    result["wall_s"] = round(time.perf_counter() - started, 1)
    events.emit(event="result", data=result)
    return 0


# --- the parent: one worker per phase and N, the CLI runs, the results files ---------------------


class Progress:
    """A rich progress display fed by worker events (or nothing, when quiet)."""

    def __init__(self, console: Any) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.progress import Progress as RichProgress

        self.bar = RichProgress(
            "{task.description}", BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            TimeRemainingColumn(), console=console, transient=False,
        )  # fmt: skip
        self.current: Any = None

    def __enter__(self) -> Progress:
        self.bar.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.__exit__(*exc)

    def task(self, description: str, total: int) -> None:
        self.current = self.bar.add_task(description, total=total)

    def advance(self, by: int = 1) -> None:
        if self.current is not None:
            self.bar.advance(self.current, by)

    def note(self, message: str) -> None:
        self.bar.console.print(message, markup=False, highlight=False)


def run_worker(phase: str, spec: dict[str, Any], folder: Path, progress: Progress) -> dict:
    """Run one phase in a new Python process, relaying its progress; its result."""
    spec_path = folder / f"{phase}.spec.json"
    spec_path.write_text(json.dumps(spec), encoding="utf-8")
    log_path = folder / f"{phase}.log"
    argv = [sys.executable, "-m", "chitta.bench.scale", phase, str(spec_path)]
    result = None
    with log_path.open("w", encoding="utf-8") as log:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=log, text=True,
                                env=clean_env())  # fmt: skip
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                event = json.loads(line)
                if event["event"] == "task":
                    progress.task(event["description"], event["total"])
                elif event["event"] == "advance":
                    progress.advance(event["by"])
                elif event["event"] == "result":
                    result = event["data"]
            code = proc.wait()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    if code != 0 or result is None:
        tail = log_path.read_text(encoding="utf-8", errors="replace")[-3000:]
        raise BenchFailed(f"the {phase} step for N={spec['n']:,} failed (exit {code}); "
                          f"{log_path}:\n{tail}")  # fmt: skip
    return result


def spawn(argv: list[str]) -> tuple[float, str, float]:
    """Run ``argv``: (wall ms from spawn to exit, stdout, its peak RSS in MiB via wait4)."""
    with tempfile.TemporaryFile("w+", encoding="utf-8") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, text=True,
                                env=clean_env())  # fmt: skip
        assert proc.stdout is not None
        stdout = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = (time.perf_counter() - start) * 1000
        proc.returncode = os.waitstatus_to_exitcode(status)
        proc.stdout.close()
        if proc.returncode != 0:
            err.seek(0)
            raise BenchFailed(f"{shlex.join(argv)} failed ({proc.returncode}): "
                              f"{err.read()[-2000:]}")  # fmt: skip
    return wall, stdout, usage.ru_maxrss / 1024


def chitta_command() -> list[str]:
    """The ``chitta`` script beside this interpreter, or ``python -m chitta``."""
    script = Path(sys.executable).with_name("chitta")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "chitta"]


def cli_figures(home: Path, queries: list[str], n: int, progress: Progress) -> dict[str, Any]:
    """``chitta recall --json`` in a new process, once per query: wall time and peak RSS."""
    walls, inner_ms, peaks = [], [], []
    progress.task(f"N={n:,}: new `chitta recall` processes", len(queries))
    for q in queries:
        argv = [*chitta_command(), "--home", str(home), "recall", q, "--realm", REALM, "--json"]
        ms, stdout, peak = spawn(argv)
        result = json.loads(stdout)
        if not result.get("ok") or not result.get("hits"):
            raise BenchFailed(f"CLI recall returned no hits: {stdout[:500]}")
        walls.append(ms)
        peaks.append(peak)
        inner_ms.append(result["timing_ms"]["total"])
        progress.advance()
    return {
        "runs": len(walls),
        "recall_process_ms_median": round(statistics.median(walls), 1),
        "recall_process_ms_all": [round(w, 1) for w in walls],
        "recall_in_process_total_ms_median": round(statistics.median(inner_ms), 3),
        "peak_rss_mb_median": round(statistics.median(peaks), 1),
        "peak_rss_mb_all": [round(p, 1) for p in peaks],
    }


def reference_starts(runs: int) -> dict[str, float]:
    """Start-up of a bare interpreter and of importing chitta's CLI, for comparison."""
    py = sys.executable
    imports = [spawn([py, "-c", "import chitta.cli"])[0] for _ in range(runs)]
    bare = [spawn([py, "-c", "pass"])[0] for _ in range(runs)]
    return {
        "import_chitta_cli_ms_median": round(statistics.median(imports), 1),
        "python_bare_start_ms_median": round(statistics.median(bare), 1),
    }


def run(
    *,
    sizes: list[int],
    queries: int,
    data: Path | None,
    workdir: Path | None,
    reuse_vectors: bool,
    cli_runs: int,
    command: str,
    console: Any,
    checkpoint: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Every phase for every size; the results record (also given to ``checkpoint`` after
    each size, marked incomplete, so a long run that fails late keeps what it measured)."""
    from chitta.bench import environment, locomo

    if not 1 <= queries <= 1000:
        raise BadArgument(f"--queries must be between 1 and 1000, got {queries}")
    if not 1 <= cli_runs <= 50:
        raise BadArgument(f"--cli-runs must be between 1 and 50, got {cli_runs}")
    path = (data or environment.default_locomo()).resolve()
    dataset = locomo.load(path)
    turns = base_turns(dataset)
    pool = query_pool(dataset, SEED)
    needed = queries + 1 + cli_runs
    if len(pool) < needed:
        raise BadArgument(f"need {needed} distinct questions, {path} has {len(pool)}")
    warmup, recall_qs, cli_qs = pool[0], pool[1 : 1 + queries], pool[-cli_runs:]
    started = time.perf_counter()
    load_before = loadavg()
    figures: dict[str, Any] = {}

    def record(complete: bool) -> dict[str, Any]:
        return {
            "complete": complete,
            "benchmark": "scale",
            "command": command,
            "commit": environment.git_commit(),
            "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "machine": {
                **environment.machine(),
                "loadavg_before": load_before,
                "loadavg_after": loadavg(),
            },
            "wall_s": round(time.perf_counter() - started, 1),
            "settings": {
                "sizes": sizes,
                "queries": len(recall_qs),
                "cli_runs": cli_runs,
                "realm": REALM,
                "limit": LIMIT,
                "import_batch": BATCH,
                "seed": SEED,
                "data": str(path),
                "locomo_turns_distinct": len(turns),
                "content": "LoCoMo turns (memory_text: 'speaker: text' plus any image caption), "
                "then distinct recombinations: up to half the sentences of one turn (with its "
                "speaker) followed by up to half of another's, seeded RNG",
                "queries_from": "LoCoMo qa questions, distinct, shuffled with the seed",
                "synthetic_from": SYNTHETIC_FROM,
                "synthetic": f"N >= {SYNTHETIC_FROM:,}: the first {BASE_SET:,} texts embedded; "
                f"later memories get a random one of those vectors + N(0, {NOISE_SD}²) per "
                "dimension, re-normalised, and are written with Store.insert (no embedding)",
                "paired_texts": PAIRED_TEXTS,
                "reuse_vectors": reuse_vectors,
                "embed_settings": "EmbedSettings() defaults (CHITTA_* variables ignored)",
                "workdir": str(workdir) if workdir else None,
            },
            "reference": reference,
            "figures": figures,
        }

    with tempfile.TemporaryDirectory(prefix="chitta-scale-") as tmp, Progress(console) as progress:
        base = (workdir or Path(tmp)).resolve()
        base.mkdir(parents=True, exist_ok=True)
        reference = reference_starts(cli_runs)
        for n in sizes:
            folder = base / f"n{n}"
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            home = folder / "home"
            spec = {"n": n, "home": str(home), "data": str(path), "seed": SEED,
                    "workdir": str(base), "reuse_vectors": reuse_vectors,
                    "warmup": warmup, "queries": recall_qs}  # fmt: skip
            row: dict[str, Any] = {"loadavg_before": loadavg()}
            t = time.perf_counter()
            row["build"] = run_worker("build", spec, folder, progress)
            row["recall"] = run_worker("recall", spec, folder, progress)
            row["cli"] = cli_figures(home, cli_qs, n, progress)
            row["wall_s"] = round(time.perf_counter() - t, 1)
            row["loadavg_after"] = loadavg()
            figures[str(n)] = row
            progress.note(one_line(row))
            if checkpoint is not None:
                checkpoint(record(complete=False))
            if workdir is None:
                shutil.rmtree(folder, ignore_errors=True)
    return record(complete=True)


def one_line(row: dict[str, Any]) -> str:
    b, r = row["build"], row["recall"]
    loaded = r["rss_mb"]["after_first_recall"]["rss"]
    return (f"N={b['n']:,}: import {b['import']['import_per_s']:,}/s ({b['import']['mode']}), "
            f"hybrid p50 {r['hybrid']['wall_ms']['p50']} ms, first recall "
            f"{r['first_recall_ms']:.0f} ms, RSS after load {loaded} MiB, "
            f"{b['size']['bytes_per_memory']:,} B/memory, new process "
            f"{row['cli']['recall_process_ms_median']} ms")  # fmt: skip


# --- the Markdown table --------------------------------------------------------------------------


def _num(value: float | None, digits: int = 1) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def _rows(rows: list[dict[str, Any]]) -> list[tuple[str, list[str]]]:
    def col(fn: Callable[[dict[str, Any]], str]) -> list[str]:
        return [fn(r) for r in rows]

    def imp(r: dict[str, Any]) -> dict[str, Any]:
        return r["build"]["import"]

    def embedded(fn: Callable[[dict[str, Any]], str]) -> Callable[[dict[str, Any]], str]:
        return lambda r: fn(imp(r)) if imp(r)["mode"] == "embedded" else "—"

    def mark(r: dict[str, Any]) -> str:
        return {"embedded": "", "synthetic": " †", "cached": " ‡"}[imp(r)["mode"]]

    def strat(name: str) -> Callable[[dict[str, Any]], str]:
        def cell(r: dict[str, Any]) -> str:
            w = r["recall"][name]["wall_ms"]
            return f"{_num(w['p50'])} / {_num(w['p95'])}"

        return cell

    def p50(name: str, part: str) -> Callable[[dict[str, Any]], str]:
        return lambda r: _num(r["recall"][name]["timing_ms_p50"].get(part))

    def rss(key: str) -> Callable[[dict[str, Any]], str]:
        return lambda r: _num(r["recall"]["rss_mb"][key]["rss"], 0)

    runs = rows[0]["cli"]["runs"] if rows else CLI_RUNS
    return [
        ("Content", col(lambda r: "LoCoMo + recombined" + (
            ", synthetic vectors †" if imp(r)["mode"] == "synthetic" else ""))),
        ("Import, memories/s (embedding included, except † ‡)",
         col(lambda r: _num(imp(r)["import_per_s"]) + mark(r))),
        ("Embedder alone, same texts, texts/s (paired batches)",
         col(embedded(lambda i: _num(i["paired"]["embed_alone_per_s"])))),
        ("Import ÷ embedder alone, time ratio (paired batches; 1.0 = free import)",
         col(embedded(lambda i: f"{i['paired']['ratio']:.3f}"))),
        ("Import cost beyond embedding, ms/memory",
         col(embedded(lambda i: _num(i["overhead_ms_per_memory"], 3)))),
        ("Import wall time, s", col(lambda r: _num(imp(r)["import_s"]))),
        ("Recall hybrid, p50 / p95 ms", col(strat("hybrid"))),
        ("… of which query embedding, p50 ms", col(p50("hybrid", "embed"))),
        ("… `sem` lane (exact vector search), p50 ms", col(p50("hybrid", "sem"))),
        ("… `kw` lane (FTS5 BM25), p50 ms", col(p50("hybrid", "kw"))),
        ("Recall semantic, p50 / p95 ms", col(strat("semantic"))),
        ("Recall keyword, p50 / p95 ms", col(strat("keyword"))),
        ("First recall after open (builds the vector index), ms",
         col(lambda r: _num(r["recall"]["first_recall_ms"], 0))),
        ("RSS, model loaded, store not open, MiB", col(rss("model_loaded"))),
        ("RSS after the first recall (index loaded), MiB", col(rss("after_first_recall"))),
        ("… increase over the model alone / raw vector matrix, MiB",
         col(lambda r: f"{_num(r['recall']['rss_mb']['index_delta'], 0)} / "
                       f"{_num(r['recall']['rss_mb']['vector_matrix_mb'], 0)}")),
        ("Peak RSS while opening and loading (VmHWM), MiB",
         col(lambda r: _num(r["recall"]["rss_mb"]["after_first_recall"]["peak"], 0))),
        ("Peak RSS of the import process, MiB",
         col(lambda r: _num(r["build"]["rss_mb"]["after_import"]["peak"], 0))),
        ("Disk per memory (after WAL checkpoint), B",
         col(lambda r: _num(r["build"]["size"]["bytes_per_memory"], 0))),
        ("… of which the embeddings table, B",
         col(lambda r: _num(r["build"]["size"]["per_memory_by_table"].get("embeddings"), 0))),
        (f"`chitta recall --json`, new process, spawn to exit (median of {runs}), ms",
         col(lambda r: _num(r["cli"]["recall_process_ms_median"], 0))),
        ("… its peak RSS (median), MiB", col(lambda r: _num(r["cli"]["peak_rss_mb_median"], 0))),
        ("Whole N (build, recall, new processes), s", col(lambda r: _num(r["wall_s"], 0))),
    ]  # fmt: skip


def markdown(record: dict[str, Any]) -> str:
    """The results as Markdown: a command line, a table with a column per N, footnotes."""
    rows = list(record["figures"].values())
    machine = record["machine"]
    ref = record["reference"]
    commit = (record["commit"] or "unknown")[:12]
    lines = [
        f"Command: `{record['command']}` (commit `{commit}`, {record['created_at']}; "
        f"{record['wall_s']:,.0f} s in all; {machine.get('cores')} cores; load average "
        f"{_load(machine['loadavg_before'])} before, {_load(machine['loadavg_after'])} after)",
        "",
        "| figure | " + " | ".join(f"N = {r['build']['n']:,}" for r in rows) + " |",
        "|---|" + "---|" * len(rows),
    ]
    lines += [f"| {name} | " + " | ".join(cells) + " |" for name, cells in _rows(rows)]
    lines.append("")
    lines.append(f"For comparison: `python -c pass` {ref['python_bare_start_ms_median']} ms, "
                 f"`python -c \"import chitta.cli\"` {ref['import_chitta_cli_ms_median']} ms "
                 "(medians).")  # fmt: skip
    modes = {r["build"]["import"]["mode"] for r in rows}
    if "synthetic" in modes:
        lines.append("")
        lines.append(
            f"† Synthetic vectors: the first {BASE_SET:,} memories have embedded texts; every "
            f"later one has a distinct recombined text and a vector made from a random one of "
            f"those {BASE_SET:,} real vectors plus Gaussian noise (sd {NOISE_SD} per dimension), "
            "re-normalised. They are written with `Store.insert` (no embedding), so the import "
            "figure is the rate of the store's SQLite, FTS5 and embeddings writes alone."
        )
    if "cached" in modes:
        lines.append("")
        lines.append("‡ `--reuse-vectors`: vectors taken from the vector cache and written with "
                     "`Store.insert`; the import figure excludes embedding.")  # fmt: skip
    return "\n".join(lines) + "\n"


def _load(values: list[float] | None) -> str:
    return "?" if not values else f"{values[0]:.2f}"


def write_json(record: dict[str, Any], out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


def write_outputs(record: dict[str, Any], out: Path, append_docs: Path | None) -> str:
    """The results JSON at ``out``, the Markdown beside it (and appended to ``append_docs``)."""
    write_json(record, out)
    table = markdown(record)
    out.with_suffix(".md").write_text(table, encoding="utf-8")
    if append_docs is not None:
        with append_docs.open("a", encoding="utf-8") as fh:
            fh.write("\n" + table)
    return table


if __name__ == "__main__":
    sys.exit(worker_main(sys.argv[1:]))
