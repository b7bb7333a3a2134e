"""The per-N worker process: ``python -m chitta.bench.scale PHASE SPEC.json`` runs one phase."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from chitta.bench.scale.build_phase import build
from chitta.bench.scale.events import Events
from chitta.bench.scale.recall_phase import recall_figures

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
