"""Both development sets as chitta stores, for the tuning aids in ``benchmarks/`` (issue 19's
rule: every decision is read on LoCoMo and LongMemEval together).

:func:`loaded_sets` builds one store per set (a realm per conversation, each set's half as
``locomo.load`` selects it) in a temporary folder, and yields them in turn; each store is
closed before the next is built. :func:`bench_embedder` is the default model, behind a
``--vector-cache`` when one is given.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

from chitta.bench import environment, locomo
from chitta.bench.runner import realm_for
from chitta.bench.systems.chitta import ChittaStore
from chitta.bench.turn_vectors import DocumentCache, cache_file
from chitta.config import EmbedSettings
from chitta.embed.base import Embedder
from chitta.embed.loader import build_embedder

#: The development sets by the short name the tuning aids report them under.
SETS: Mapping[str, str] = {"locomo": "locomo10.json", "lme": "longmemeval_s_dev60.json"}


def bench_embedder(vector_cache: Path | None = None) -> Embedder:
    """The default model; with ``vector_cache``, the turns' vectors come from that folder's
    cache (``--vector-cache``) and only what it lacks is embedded."""
    inner = build_embedder(EmbedSettings()).inner
    if vector_cache is None:
        return inner
    return DocumentCache(inner, cache_file(vector_cache, inner.identity()))


def loaded_sets(
    half: str | None,
    embedder: Embedder,
    *,
    folder: Path | None = None,
    sets: Mapping[str, str] = SETS,
) -> Iterator[tuple[str, locomo.Dataset, ChittaStore]]:
    """``(name, data, store)`` for each of ``sets`` (files in ``folder``, by default the
    shared data folder), its ``half`` (``tune``, ``held-out``, or ``None``: all) loaded."""
    folder = environment.default_locomo().parent if folder is None else folder
    with tempfile.TemporaryDirectory() as tmp:
        for name, file in sets.items():
            data = locomo.load(folder / file, select=half)
            store = ChittaStore(Path(tmp) / name, embedder)
            try:
                for conv in data.conversations:
                    store.load(realm_for(conv.sample_id), conv)
                yield name, data, store
            finally:
                store.close()
