"""Kept for old command lines: the store benchmark is now ``chitta bench scale``.

``python benchmarks/bench_store.py [--n 10000] [...]`` runs ``chitta bench scale`` with the same
arguments (src/chitta/bench/scale/; results in benchmarks/results/scale.json and .md).
"""

from __future__ import annotations

import sys

from chitta.cli import main

if __name__ == "__main__":
    main(["bench", "scale", *sys.argv[1:]], prog_name="chitta")
