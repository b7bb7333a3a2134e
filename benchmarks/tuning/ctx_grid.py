"""Tuning aid: grid.py with the ``ctx`` lane's shape changed for the whole run.

    python benchmarks/tuning/ctx_grid.py SEEDS SPAN OWN [lift=WORDS|lift=none] tune \
        configs.json out.json [--vector-cache DIR]

``lift=`` bounds the length of the neighbours the lane lifts (ContextLane.lift_words;
the lane's default when not given).
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import chitta.recall.lanes as lanes
import chitta.recall.pipeline as pipeline
from chitta.recall.lanes.ctx import ContextLane

seeds, span, own = int(sys.argv.pop(1)), int(sys.argv.pop(1)), float(sys.argv.pop(1))
lift = ContextLane().lift_words
if sys.argv[1].startswith("lift="):
    given = sys.argv.pop(1).removeprefix("lift=")
    lift = None if given == "none" else int(given)
lanes.LANES["ctx"] = ContextLane(seeds=seeds, span=span, own=own, lift_words=lift)
pipeline.LANES = lanes.LANES
runpy.run_path(str(Path(__file__).with_name("grid.py")), run_name="__main__")
