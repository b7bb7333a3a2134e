"""Measuring inside one process: timings and their summary, RSS, the model load, disk per memory."""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Callable
from typing import Any


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """(seconds, result) of one call."""
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def memory_mb() -> dict[str, float]:
    """This process's resident set now (``VmRSS``) and its peak (``VmHWM``), in MiB, and
    what the resident set is made of: ``anon``, the process's own memory (``RssAnon``), and
    ``file``, pages of files it maps (``RssFile``: the model's libraries, and the vectors'
    and graphs' sidecars, which the kernel can take back and read again when memory runs
    short)."""
    found: dict[str, float] = {}
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith(("VmRSS:", "VmHWM:", "RssAnon:", "RssFile:")):
                    found[line.split(":")[0]] = round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    peak = found.get("VmHWM")
    if peak is None:  # ru_maxrss is in KiB on Linux
        peak = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    out = {"rss": found.get("VmRSS", peak), "peak": peak}
    if "RssAnon" in found and "RssFile" in found:
        out.update(anon=found["RssAnon"], file=found["RssFile"])
    return out


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


def settings_of(spec: dict[str, Any]) -> Any:
    """The settings a worker opens its store with: the N's home, and its database when the
    backend is PostgreSQL (``spec["store"]``, a URL), else the home's default SQLite file."""
    from pathlib import Path

    from chitta.config import Settings

    store = spec.get("store")
    return Settings(home=Path(spec["home"]), **({"store": store} if store else {}))


def load_model() -> tuple[float, Any]:
    """(seconds, the raw ONNX embedder), warmed up on a first batch."""
    from chitta.config import EmbedSettings
    from chitta.embed.loader import build_embedder

    seconds, cached = timed(lambda: build_embedder(EmbedSettings()))
    cached.inner.embed(["warm up the onnxruntime session", "a second text of a few words"])
    return seconds, cached.inner


def store_size(store: Any, n: int) -> dict[str, Any]:
    """Bytes per memory with what the store writes ahead settled, and each part's share
    (``Store.disk_usage``: memories, embeddings, keywords, other)."""
    tables = store.disk_usage()
    size = store.size_bytes()
    return {
        "size_bytes": size,
        "bytes_per_memory": round(size / n, 1),
        "raw_vector_bytes": store.model_identity().dim * 4,
        "per_memory_by_table": {k: round(v / n, 1) for k, v in sorted(tables.items())},
        "bytes_per_memory_without_embeddings": round((size - tables.get("embeddings", 0)) / n, 1),
    }
