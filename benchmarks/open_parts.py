"""A store opened again, as a restarted daemon opens it: the first recall's time and what it
spent building, then the rest of the warm-up, with the process's memory after each (RSS and
its peak, VmHWM, in MiB, as the scale benchmark measures them). The model is loaded first,
so its time and memory are not the store's. For issue 24's "open again and first recall"
beside `chitta bench scale`, whose own figure comes from the worker that has just built
the graph.

    python benchmarks/open_parts.py HOME REALM QUERY

HOME is a data folder (e.g. a scale benchmark's `<workdir>/n100000/home`). Prints JSON.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("home", type=Path)
    parser.add_argument("realm")
    parser.add_argument("query")
    args = parser.parse_args()

    from chitta.api import Chitta
    from chitta.bench.scale.measure import memory_mb, timed
    from chitta.config import Settings

    chitta = Chitta.open(Settings(home=args.home), through_daemon=False)
    try:
        chitta.embedder.embed(["the model is loaded before the store's indexes"])
        out: dict[str, object] = {"model_loaded": memory_mb()}
        took, result = timed(
            lambda: chitta.recall(args.query, realm=args.realm, limit=10, strategy="hybrid")
        )
        out["first_recall_s"] = round(took, 3)
        out["first_recall_parts_ms"] = {k: round(v) for k, v in result.timing_ms.items()}
        out["after_first_recall"] = memory_mb()
        took, out["warm_up_ms"] = timed(chitta.store.warm)
        out["warm_up_s"] = round(took, 3)
        out["after_warm_up"] = memory_mb()
    finally:
        chitta.close()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
