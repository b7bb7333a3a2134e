"""The pause a daemon holding a code index would take (docs/benchmarks.md, "The daemon's pause
at 100,000 symbols"): a full cycle collection over the state ``code_index`` leaves held, timed
before and after daemon/memory.py ``settle``.

    PYTHONPATH=src .venv/bin/python benchmarks/code_heap.py /tmp/cbench3-corpus

(the corpus: ``sh benchmarks/code/speed/corpus.sh /tmp/cbench3-corpus``). Prints JSON.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import tempfile
import time
from pathlib import Path

from chitta.code.answers import Resolver
from chitta.code.index import index_path
from chitta.code.reindex import ExtractCache, handing_over
from chitta.daemon import memory
from chitta.store.backends import open_store


def _ms(fn) -> float:
    started = time.perf_counter()
    fn()
    return round((time.perf_counter() - started) * 1000, 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path, help="a repository to index")
    args = parser.parse_args()
    root = args.root.resolve()
    with tempfile.TemporaryDirectory() as tmp, open_store(Path(tmp) / "heap.db") as store:
        cache = ExtractCache()  # held as the daemon's CACHE would be
        primed = handing_over(Resolver(), store.code(), "bench", root.as_posix(), cache)
        report = index_path(store, "bench", root, resolve=primed)
        old = len(gc.get_objects(generation=2))
        before = [_ms(gc.collect) for _ in range(2)]
        started = time.perf_counter()
        settled = memory.settle()
        settle_ms = round((time.perf_counter() - started) * 1000, 2)
        after = [_ms(gc.collect) for _ in range(2)]
        again = _ms(memory.settle)
        print(json.dumps({
            "symbols": report.symbols, "oldest_generation": old, "full_collection_ms": before,
            "settled": settled, "settle_ms": settle_ms,
            "frozen": gc.get_freeze_count(), "full_collection_after_ms": after,
            "settle_again_ms": again, "load_average": [round(x, 2) for x in os.getloadavg()],
        }))  # fmt: skip


if __name__ == "__main__":
    main()
