"""Run one worker phase: ``python -m chitta.bench.scale build|recall SPEC.json``."""

from __future__ import annotations

import sys

from chitta.bench.scale.worker import worker_main

if __name__ == "__main__":
    sys.exit(worker_main(sys.argv[1:]))
