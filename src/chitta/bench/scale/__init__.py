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

The modules: ``settings`` (fixed settings, store sizes), ``texts`` and ``vectors`` (the
content), ``measure`` (figures inside a process), ``build_phase`` and ``recall_phase`` (the two
worker phases, run by ``worker`` via ``__main__``), ``startup`` (new ``chitta`` processes),
``parent`` (the whole run) and ``report`` (the results files).
"""

from __future__ import annotations

from chitta.bench.scale.build_phase import TimedEmbedder, build
from chitta.bench.scale.events import Events
from chitta.bench.scale.measure import (
    clean_env,
    load_model,
    memory_mb,
    reset_peak,
    store_size,
    timed,
)
from chitta.bench.scale.parent import Progress, run, run_worker
from chitta.bench.scale.recall_phase import recall_figures
from chitta.bench.scale.report import markdown, one_line, write_json, write_outputs
from chitta.bench.scale.settings import (
    BASE_SET,
    BATCH,
    CLI_RUNS,
    LIMIT,
    MAX_N,
    MB,
    MIN_N,
    NOISE_SD,
    PAIRED_TEXTS,
    REALM,
    SEED,
    STRATEGIES,
    SYNTHETIC_FROM,
    BenchFailed,
    is_synthetic,
    parse_sizes,
)
from chitta.bench.scale.startup import chitta_command, cli_figures, reference_starts, spawn
from chitta.bench.scale.texts import (
    base_turns,
    iter_texts,
    memory_texts,
    query_pool,
    recombine,
    split_turn,
)
from chitta.bench.scale.vectors import VectorCache, synthetic_vectors, text_key, unit_rows
from chitta.bench.scale.worker import PHASES, worker_main
from chitta.bench.score import summary_ms

__all__ = [
    "BASE_SET",
    "BATCH",
    "CLI_RUNS",
    "LIMIT",
    "MAX_N",
    "MB",
    "MIN_N",
    "NOISE_SD",
    "PAIRED_TEXTS",
    "PHASES",
    "REALM",
    "SEED",
    "STRATEGIES",
    "SYNTHETIC_FROM",
    "BenchFailed",
    "Events",
    "Progress",
    "TimedEmbedder",
    "VectorCache",
    "base_turns",
    "build",
    "chitta_command",
    "clean_env",
    "cli_figures",
    "is_synthetic",
    "iter_texts",
    "load_model",
    "markdown",
    "memory_mb",
    "memory_texts",
    "one_line",
    "parse_sizes",
    "query_pool",
    "recall_figures",
    "recombine",
    "reference_starts",
    "reset_peak",
    "run",
    "run_worker",
    "spawn",
    "split_turn",
    "store_size",
    "summary_ms",
    "synthetic_vectors",
    "text_key",
    "timed",
    "unit_rows",
    "worker_main",
    "write_json",
    "write_outputs",
]
